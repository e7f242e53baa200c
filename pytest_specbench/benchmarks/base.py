"""The one interface every benchmark adapter implements.

An adapter is a module-level object satisfying :class:`Benchmark`.  It loads
tasks, renders prompts, runs one named check of one sample, and turns the
per-task results into the metrics its paper defines.  Everything pytest-shaped
(items, options, reports, xdist) lives in :mod:`pytest_specbench.plugin`; the
adapter never sees it.  Adding a benchmark means adding one module and listing
it in :mod:`pytest_specbench.benchmarks` (or under the ``specbench.benchmarks``
entry-point group from another package).

Two methods are optional, looked up with ``getattr``:

- ``skip_reason(check, task) -> str | None``: why an item is skipped (e.g. a
  task with no contract-violating tests), or None;
- ``dispatch_cost(task, check, ctx) -> float``: the predicted cost of one item,
  in any unit, from what is cached only (never by running anything).  Under
  xdist the costliest items are dispatched first (:mod:`..plugin.scheduling`);
  without it, items go out in collection order.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Protocol, Sequence, runtime_checkable


@dataclass(frozen=True)
class Task:
    """One benchmark task as read from its data file."""

    task_id: str
    data: Mapping[str, Any]
    source: Path  # the file the task came from (for messages and reports)
    line: int = 0


@dataclass(frozen=True)
class Message:
    role: str  # "system" | "user" | "assistant"
    content: str


@dataclass(frozen=True)
class Prompt:
    """What a model is asked, plus what turns its answer into a program."""

    messages: tuple[Message, ...]
    # Prepended to a bare "completion" (EvalPlus ``completion`` = prompt + text).
    completion_prefix: str = ""


@dataclass
class CheckResult:
    """The verdict of one check on one sample; ``details`` must be JSON-able."""

    passed: bool
    details: dict[str, Any] = field(default_factory=dict)
    message: str = ""  # one line shown for a failure


@dataclass(frozen=True)
class TaskSet:
    """Tasks a benchmark loaded, with the files they came from (for hashes)."""

    tasks: tuple[Task, ...]
    files: tuple[Path, ...]
    bundled: bool  # True when the package's own sample suite was used
    warnings: tuple[str, ...] = ()


class CheckContext(Protocol):
    """Shared services a check may use (see :mod:`pytest_specbench.plugin.services`)."""

    settings: Any  # pytest_specbench.plugin.options.Settings

    def python_executor(self) -> Any: ...

    def cache_dir(self, *parts: str) -> Path: ...


@runtime_checkable
class Benchmark(Protocol):
    name: str
    checks: Sequence[str]  # in the order they run for one sample

    def addoption(self, group: Any, addini: Any) -> None:
        """Register benchmark-specific options (may do nothing)."""

    def load(self, data_root: Path | None, settings: Any) -> TaskSet:
        """Read the tasks from ``data_root`` (upstream layout) or the bundled suite."""

    def prompt(self, task: Task, settings: Any) -> Prompt:
        """Render the prompt the model gets for ``task``."""

    def reference(self, task: Task, check: str) -> str:
        """The benchmark's own solution for ``check`` (what ``--model=reference`` answers)."""

    def run_check(self, check: str, task: Task, sample: Any, ctx: CheckContext) -> CheckResult:
        """Run ``check`` on a sample (a :class:`~pytest_specbench.models.base.Completion`);
        untrusted code goes through ``ctx``'s sandboxed executors."""

    def aggregate(self, results: Mapping[str, Sequence[Mapping[str, Any]]], settings: Any) -> dict[str, Any]:
        """Metrics from ``{task_id: [{"index": i, "checks": {check: details}}]}``."""
