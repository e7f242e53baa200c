"""``--model=replay:PATH``: answers from EvalPlus-format sample files.

Two layouts, as EvalPlus writes them:

* JSON lines with ``task_id`` and ``solution`` (the whole program) or
  ``completion`` (text to append to the prompt), optional ``sample_index``
  (otherwise samples are numbered per task in file order); a specification
  family's answer may instead be in ``postcondition`` or ``postcondition_alone``
  (nl2postcond's upstream fields), taken as it is, like ``solution``;
* a directory ``TASK_ID_WITH_UNDERSCORE/N.py`` (``HumanEval_0/3.py``).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

from ..data.jsonl import file_digest, read_jsonl
from ..errors import DataError, OptionError
from .base import Completion, GenerationRequest, SampleMissing


# Where a line's answer is, in this order of preference: the whole answer
# (``solution``), text after the prompt (``completion``), or a specification
# as upstream's files store it (nl2postcond's sheet and preprocessed samples).
ANSWER_FIELDS = ("solution", "completion", "postcondition", "postcondition_alone")


class ReplayModel:
    answers_locally = True  # answers come from a file: the controller may ask before any item runs

    def __init__(self, path: str):
        self.spec = f"replay:{path}"
        self.path = Path(path).expanduser()
        # {task_id: {index: (kind, text)}}; kind is "solution" or "completion"
        self._samples: dict[str, dict[int, tuple[str, str]]] = {}
        if self.path.is_dir():
            self._load_dir()
        elif self.path.is_file():
            self._load_jsonl()
        else:
            raise OptionError("--model", f"replay file or directory not found: {self.path}")
        if not self._samples:
            raise DataError(self.path, None, "no samples in this folder (expected TASK_ID/N.py files)"
                            if self.path.is_dir() else "no samples in this file")

    def _load_jsonl(self) -> None:
        counters: dict[str, int] = {}
        for lineno, obj in read_jsonl(self.path, required=("task_id",)):
            field = next((f for f in ANSWER_FIELDS if f in obj), None)
            if field is None:
                raise DataError(self.path, lineno, "missing field 'solution' or 'completion'"
                                                   " (or 'postcondition' / 'postcondition_alone')")
            kind, text = ("completion" if field == "completion" else "solution"), obj[field]
            if not isinstance(text, str):
                raise DataError(self.path, lineno, f"'{field}' must be a string")
            task_id = str(obj["task_id"])
            index = obj.get("sample_index")
            if index is None:
                index = counters.get(task_id, 0)
            elif not isinstance(index, int) or index < 0:
                raise DataError(self.path, lineno, "'sample_index' must be a non-negative integer")
            counters[task_id] = max(counters.get(task_id, 0), index + 1)
            per_task = self._samples.setdefault(task_id, {})
            if index in per_task:
                raise DataError(self.path, lineno, f"duplicate sample {task_id} #{index}")
            per_task[index] = (kind, text)

    def _load_dir(self) -> None:
        for task_dir in sorted(p for p in self.path.iterdir() if p.is_dir()):
            for f in task_dir.glob("*.py"):
                if f.stem.isdigit():
                    # Directory names replace "/" with "_"; keep them as keys and
                    # match dataset ids through the same transformation.
                    self._samples.setdefault(task_dir.name, {})[int(f.stem)] = ("solution", f.read_text(encoding="utf-8", errors="replace"))
        self._by_dirname = True

    def _key(self, task_id: str) -> str:
        return task_id.replace("/", "_") if getattr(self, "_by_dirname", False) else task_id

    def known_task_ids(self, dataset_ids: Sequence[str]) -> tuple[set[str], set[str]]:
        """``(dataset ids with samples, sample ids the dataset lacks)``."""
        keyed = {self._key(t): t for t in dataset_ids}
        unknown = {k for k in self._samples if k not in keyed}
        return {keyed[k] for k in self._samples if k in keyed}, unknown

    def sample_indices(self, benchmark: str, task_id: str, requested: int | None) -> Sequence[int]:
        indices = sorted(self._samples.get(self._key(task_id), {}))
        return indices[:requested] if requested else indices

    def generate(self, requests, progress=None) -> None:
        return None

    def completion(self, request: GenerationRequest) -> Completion:
        try:
            kind, text = self._samples[self._key(request.task.task_id)][request.sample_index]
        except KeyError:
            raise SampleMissing(f"{self.path} has no sample {request.task.task_id} #{request.sample_index}") from None
        if kind == "completion":
            text = request.prompt.completion_prefix + text
        return Completion(text)

    def manifest(self) -> dict[str, Any]:
        digest = file_digest(self.path) if self.path.is_file() else None
        return {"spec": self.spec, "file_sha256": digest, "tasks": len(self._samples),
                "samples": sum(len(v) for v in self._samples.values())}
