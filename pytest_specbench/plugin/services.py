"""Per-process services that checks use: sandboxed executors, model roles,
cache folders.  A check sees them through its
:class:`~pytest_specbench.engine.context.CheckContext` (``Services.context``)."""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Mapping

from ..engine.context import CheckContext
from ..errors import OptionError

from ..execution import make_executor
from ..execution.python import PythonExecutor
from .options import Settings


class Services:
    """The executors, model roles and cache folders of one pytest process."""

    def __init__(self, settings: Settings, hide: list[str]):
        self.settings = settings
        self._hide = hide
        self._executors: dict[str, Any] = {}  # kind -> executor, started on first use
        self._borrowed: set[str] = set()  # kinds whose executor is the caller's to close
        self._roles: dict[str, Any] = {}  # role -> RoleModel, loaded on first use
        # Role specs the adapters propose when the user gives none (CIFE's bundled
        # suite: its recorded judgments), filled in by the session.
        self.role_defaults: dict[str, str] = {}
        # xdist worker: role -> proxy that asks the controller (plugin/remote.py).
        self.remote_roles: dict[str, Any] = {}

    def executor(self, kind: str) -> Any:
        """The sandboxed executor for ``kind`` (python, command, jvm, lean), one
        per process, closed with the services."""
        if kind not in self._executors:
            self._executors[kind] = make_executor(kind, self.settings, self._hide)
        return self._executors[kind]

    def borrow_executors(self, executors: Mapping[str, Any]) -> None:
        """Use these executors by kind, made and closed by the caller (:meth:`close` leaves
        them open): ``pytest_specbench.testing.check_family`` in a test suite that keeps one
        jvm executor per process."""
        self._executors.update(executors)
        self._borrowed.update(executors)

    def model(self, role: str) -> Any:
        """The model in ``role`` (``judge``: ``--judge-model``, else the adapter's
        default), loaded once per process (``CheckContext.model``)."""
        if role in self.remote_roles:
            return self.remote_roles[role]
        if role not in self._roles:
            from ..models.roles import load_role, role_option

            option = role_option(role)
            given = str(self.settings.option(option.lstrip("-").replace("-", "_")) or "").strip()
            spec = given or self.role_defaults.get(role, "")
            if not spec:
                raise OptionError(option, f"this benchmark needs a {role} model: {option}=openai:NAME "
                                          f"(with {option}-base-url=URL for a local server) or {option}=replay:FILE.jsonl")
            self._roles[role] = load_role(role, spec, self.settings)
            if not given:  # what the summary says next to the spec (plugin/session.py)
                self._roles[role].note = f"no {option} given: the benchmark's default"
        return self._roles[role]

    def loaded_roles(self) -> dict[str, Any]:
        return dict(self._roles)

    def role_manifests(self) -> dict[str, Any]:
        return {role: model.manifest() for role, model in self._roles.items()}

    def role_counters(self) -> dict[str, Any]:
        """What each role was asked in this process, as plain data (an xdist worker
        sends it to the controller at its end, like its outcomes)."""
        return {role: model.counters() for role, model in self._roles.items()
                if callable(getattr(model, "counters", None))}

    def add_role_counters(self, counters: dict[str, Any]) -> None:
        """Add a worker's :meth:`role_counters` to this process's roles (the controller)."""
        for role, values in (counters or {}).items():
            model = self._roles.get(role)
            if model is not None and callable(getattr(model, "add_counters", None)):
                model.add_counters(values)

    def context(self) -> CheckContext:
        """The process's check context (``skip_reason``, ``dispatch_cost``; the
        verdict engine narrows it to one item for ``run_check``)."""
        return CheckContext(self.settings, self)

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
        for kind, ex in executors.items():
            if kind not in self._borrowed:
                ex.close()
