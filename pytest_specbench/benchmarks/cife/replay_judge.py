"""A ``replay:`` judge from a JSON-lines file of recorded judgments.

One object per line: ``task_id``, ``sample_index`` (default 0), ``purpose``
(``adherence`` | ``correctness``), ``attempt`` (default 0), ``answer`` (the
judge's raw text).  This is the bundled suite's default judge (its recorded
judgments ship in ``benchmarks/cife/judgments.jsonl``), so ``pytest
--specbench=cife --model=reference`` runs offline.  It satisfies
:class:`~pytest_specbench.benchmarks.base.RoleModel`; the plugin's own
``--judge-model=replay:PATH`` reads the same format.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from ...data.jsonl import file_digest, read_jsonl
from ...errors import DataError
from ...models.base import SampleMissing
from ..base import RoleRequest


class ReplayJudge:
    role = "judge"

    def __init__(self, path: Path):
        self.path = Path(path)
        self.spec = f"replay:{self.path}"
        self.answers: dict[tuple[str, int, str, int], str] = {}
        for line, obj in read_jsonl(self.path, ("task_id", "purpose", "answer")):
            key = (str(obj["task_id"]), int(obj.get("sample_index", 0)), str(obj["purpose"]), int(obj.get("attempt", 0)))
            if not isinstance(obj["answer"], str):
                raise DataError(self.path, line, "'answer' must be a string")
            self.answers[key] = obj["answer"]
        self.digest = file_digest(self.path)

    def ask(self, request: RoleRequest) -> str:
        key = (request.task.task_id, request.sample_index, request.purpose, request.attempt)
        try:
            return self.answers[key]
        except KeyError:
            raise SampleMissing(f"{self.path.name} has no answer for {key}") from None

    def manifest(self) -> dict[str, Any]:
        return {"role": self.role, "spec": self.spec, "sha256": self.digest, "answers": len(self.answers)}
