"""``--model=reference``: answers with the benchmark's own solution."""
from __future__ import annotations

from typing import Any, Sequence

from .base import Completion, GenerationRequest


class ReferenceModel:
    spec = "reference"
    answers_locally = True  # no network call: the controller may ask it before any item runs

    def sample_indices(self, benchmark: str, task_id: str, requested: int | None) -> Sequence[int]:
        return range(requested or 1)

    def generate(self, requests, progress=None) -> None:
        return None

    def completion(self, request: GenerationRequest) -> Completion:
        # The benchmark's own code runs as written: sanitizing it could drop what it needs.
        return Completion(request.reference(), {"trusted_reference": True})

    def manifest(self) -> dict[str, Any]:
        return {"spec": self.spec}
