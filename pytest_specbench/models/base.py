"""The model interface: what ``--model=SPEC`` resolves to.

A model answers :class:`GenerationRequest`s.  Generation is split in two so
that paid models can generate everything once, up front, in the controller
(``generate``), while items, possibly on xdist workers, only read answers
(``completion``).  Replayed and reference models do nothing in ``generate``.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Protocol, Sequence

from ..types import Prompt, Task


@dataclass(frozen=True)
class GenerationRequest:
    benchmark: str
    task: Task
    sample_index: int
    prompt: Prompt
    reference: Callable[[], str]  # the benchmark's own solution, computed on demand


@dataclass
class Completion:
    text: str
    meta: dict[str, Any] = field(default_factory=dict)


class SampleMissing(LookupError):
    """The model has no answer for this (task, sample index)."""


class Model(Protocol):
    spec: str  # as given on the command line, for the report

    def sample_indices(self, benchmark: str, task_id: str, requested: int | None) -> Sequence[int]:
        """Which sample indices exist for a task (``requested`` = --specbench-samples or None)."""

    def generate(self, requests: Sequence[GenerationRequest], progress: Callable[[int, int], None] | None = None) -> None:
        """Make every request answerable by ``completion`` (may call an API)."""

    def completion(self, request: GenerationRequest) -> Completion:
        """The answer for one request; raises :class:`SampleMissing`."""

    def manifest(self) -> dict[str, Any]:
        """Provenance for the report (spec, endpoint, parameters, counts)."""
