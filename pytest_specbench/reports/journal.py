"""The run journal: one JSON line per finished item, appended as it finishes.

Nothing is lost if the run dies: every result already reported is on disk
(flushed and fsynced line by line).
"""
from __future__ import annotations

import json
import os
import time
import uuid
from pathlib import Path
from typing import Any

from ..errors import InfrastructureError


class Journal:
    def __init__(self, path: Path):
        self.path = path
        self._fh = None

    @classmethod
    def create(cls, runs_dir: Path) -> "Journal":
        run_id = time.strftime("%Y%m%d-%H%M%S") + "-" + uuid.uuid4().hex[:6]
        return cls(runs_dir / run_id / "journal.jsonl")

    def append(self, nodeid: str, outcome: dict[str, Any]) -> None:
        try:
            if self._fh is None:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                self._fh = open(self.path, "a", encoding="utf-8")
            self._fh.write(json.dumps({"nodeid": nodeid, **outcome}) + "\n")
            self._fh.flush()
            os.fsync(self._fh.fileno())
        except OSError as exc:
            raise InfrastructureError(f"cannot write the run journal {self.path}: {exc}") from None
