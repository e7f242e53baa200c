"""Per-process services that checks use: sandboxed executors, model roles,
cache folders, and (per item) the results of other checks on the same sample."""
from __future__ import annotations

import json
import os
from collections import OrderedDict
from pathlib import Path
from typing import Any

from ..benchmarks.base import CheckResult
from ..errors import OptionError

from ..execution import make_executor
from ..execution.python import PythonExecutor
from .options import Settings


class Services:
    """The :class:`~pytest_specbench.benchmarks.base.CheckContext` of one pytest process."""

    def __init__(self, settings: Settings, hide: list[str]):
        self.settings = settings
        self._hide = hide
        self._executors: dict[str, Any] = {}  # kind -> executor, started on first use
        self._roles: dict[str, Any] = {}  # role -> RoleModel, loaded on first use
        # Role specs the adapters propose when the user gives none (CIFE's bundled
        # suite: its recorded judgments), filled in by the session.
        self.role_defaults: dict[str, str] = {}
        # xdist worker: role -> proxy that asks the controller (plugin/remote.py).
        self.remote_roles: dict[str, Any] = {}

    # False: a check or a skip is being decided here and may prepare what it needs
    # (ground truths, expected outputs, checkouts, venvs).  See :class:`PlanningContext`.
    planning = False

    def planning_context(self) -> "PlanningContext":
        """These services as the xdist controller's planning sees them (``planning`` True)."""
        return PlanningContext(self)

    def executor(self, kind: str) -> Any:
        """The sandboxed executor for ``kind`` (python, command, jvm, lean), one
        per process, closed with the services."""
        if kind not in self._executors:
            self._executors[kind] = make_executor(kind, self.settings, self._hide)
        return self._executors[kind]

    def model(self, role: str) -> Any:
        """The model in ``role`` (``judge``: ``--judge-model``, else the adapter's
        default), loaded once per process (``CheckContext.model``)."""
        if role in self.remote_roles:
            return self.remote_roles[role]
        if role not in self._roles:
            from ..models.roles import load_role, role_option

            option = role_option(role)
            spec = str(self.settings.option(option.lstrip("-").replace("-", "_")) or "").strip()
            spec = spec or self.role_defaults.get(role, "")
            if not spec:
                raise OptionError(option, f"this benchmark needs a {role} model: {option}=openai:NAME "
                                          f"(with {option}-base-url=URL for a local server) or {option}=replay:FILE.jsonl")
            self._roles[role] = load_role(role, spec, self.settings)
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


class PlanningContext:
    """The context ``skip_reason`` gets while the xdist controller plans a run
    (dispatch costs, dedupe groups, which answers to generate for a model that
    answers locally): ``planning`` is True, and an adapter then answers from what
    is cached only, never preparing anything (a ground truth, a checkout): an
    item whose skip is not known yet is taken to run, and its worker decides.
    So a first run prepares what it selects, on the workers, in parallel (#28),
    not everything, one after another, in the controller before dispatch."""

    planning = True

    def __init__(self, services: Services):
        self._services = services

    def __getattr__(self, name: str) -> Any:  # executor, option, cache_dir, settings, ...
        return getattr(self._services, name)


class ItemContext:
    """The :class:`~pytest_specbench.benchmarks.base.CheckContext` of one item: the
    process's :class:`Services` plus :meth:`result_of` for its (task, sample)."""

    _memo: "OrderedDict[str, CheckResult]" = OrderedDict()  # per process: last results computed on demand
    _MEMO_SIZE = 256

    def __init__(self, run: Any, adapter: Any, task: Any, sample: int, completion: Any, check: str):
        self._run, self._adapter, self._task, self._sample = run, adapter, task, sample
        self._completion, self._check = completion, check
        self._asking: tuple[str, ...] = (check,)

    def __getattr__(self, name: str) -> Any:  # executor, model, option, cache_dir, settings, ...
        return getattr(self._run.services, name)

    def result_of(self, check: str) -> CheckResult | None:
        """The result of ``check`` on this item's sample: from this process, the
        journal of a resumed run, or the result cache; otherwise computed now
        (once: it then lands in the result cache, where its own item finds it).
        None when ``check`` is not a check of this task."""
        run, adapter, task = self._run, self._adapter, self._task
        if check in self._asking:
            raise RuntimeError(f"{adapter.name}: check {check!r} reads its own result (result_of cycle)")
        if check not in adapter.checks_for(task):
            return None
        key = run.result_key(adapter.name, check, task.task_id, self._completion)
        if key in self._memo:
            return self._memo[key]
        verdict = run.journal_result(run.item_nodeid(adapter.name, task.task_id, self._sample, check))
        if not (isinstance(verdict, dict) and isinstance(verdict.get("passed"), bool)):
            verdict = run.result_cache.get(key)
        if not (isinstance(verdict, dict) and isinstance(verdict.get("passed"), bool)):
            inner = ItemContext(run, adapter, task, self._sample, self._completion, check)
            inner._asking = self._asking + (check,)
            result = adapter.run_check(check, task, self._completion, inner)
            verdict = {"passed": bool(result.passed), "details": result.details, "message": result.message}
            run.result_cache.put(key, verdict)
        result = CheckResult(verdict["passed"], dict(verdict.get("details") or {}), verdict.get("message") or "")
        self._memo[key] = result
        while len(self._memo) > self._MEMO_SIZE:
            self._memo.popitem(last=False)
        return result


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
