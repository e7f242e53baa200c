"""Per-process services that checks use: the sandbox executor and cache folders."""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from ..execution import make_executor
from ..execution.python import PythonExecutor
from .options import Settings


class Services:
    """The :class:`~pytest_specbench.benchmarks.base.CheckContext` of one pytest process."""

    def __init__(self, settings: Settings, hide: list[str]):
        self.settings = settings
        self._hide = hide
        self._executors: dict[str, Any] = {}  # kind -> executor, started on first use

    def executor(self, kind: str) -> Any:
        """The sandboxed executor for ``kind`` (python, command, jvm, lean), one
        per process, closed with the services."""
        if kind not in self._executors:
            self._executors[kind] = make_executor(kind, self.settings, self._hide)
        return self._executors[kind]

    def option(self, name: str):
        """The validated value of a declared adapter option (``CheckContext.option``)."""
        return self.settings.option(name)

    def python_executor(self) -> PythonExecutor:
        return self.executor("python")

    def isolation(self) -> dict[str, Any]:
        python = self._executors.get("python")
        return python.isolation if python else {}

    def cache_dir(self, *parts: str) -> Path:
        path = self.settings.state_dir.joinpath("cache", *parts)
        path.mkdir(parents=True, exist_ok=True)
        # Sandboxed code runs as another user: keep caches (expected outputs!) unreadable to it.
        os.chmod(self.settings.state_dir, 0o700)
        return path

    def close(self) -> None:
        executors, self._executors = self._executors, {}
        for ex in executors.values():
            ex.close()


class ResultCache:
    """Check results of earlier runs, by a key over everything that decides them.

    A second run of the same samples on the same data with the same limits and
    options reads its verdicts here instead of executing anything.  Files are
    written atomically; two processes writing the same key write the same text.
    """

    def __init__(self, folder: Path | None):
        self.folder = folder  # None: off

    def get(self, key: str) -> dict[str, Any] | None:
        if self.folder is None:
            return None
        try:
            return json.loads((self.folder / key[:2] / key).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None

    def has(self, key: str) -> bool:
        return self.folder is not None and (self.folder / key[:2] / key).exists()

    def put(self, key: str, result: dict[str, Any]) -> None:
        if self.folder is None:
            return
        path = self.folder / key[:2] / key
        tmp = path.with_name(f"{key}.{os.getpid()}.tmp")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp.write_text(json.dumps(result), encoding="utf-8")
            os.replace(tmp, path)
        except OSError:
            self.folder = None  # a cache that cannot be written only costs speed: stop trying
