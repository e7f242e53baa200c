"""Per-process services that checks use: the sandbox executor and cache folders."""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ..execution.python import PythonExecutor
from .options import Settings


class Services:
    """The :class:`~pytest_specbench.benchmarks.base.CheckContext` of one pytest process."""

    def __init__(self, settings: Settings, hide: list[str]):
        self.settings = settings
        self._hide = hide
        self._python: PythonExecutor | None = None

    def python_executor(self) -> PythonExecutor:
        if self._python is None:
            self._python = PythonExecutor(self.settings.limits, hide=self._hide,
                                          isolate=self.settings.sandbox == "process")
        return self._python

    def isolation(self) -> dict[str, Any]:
        return self._python.isolation if self._python else {}

    def cache_dir(self, *parts: str) -> Path:
        path = self.settings.state_dir.joinpath("cache", *parts)
        path.mkdir(parents=True, exist_ok=True)
        # Sandboxed code runs as another user: keep caches (expected outputs!) unreadable to it.
        os.chmod(self.settings.state_dir, 0o700)
        return path

    def close(self) -> None:
        if self._python is not None:
            self._python.close()
