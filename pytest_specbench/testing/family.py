"""The family contract, shipped: what every family promises the plugin, checked in-process.

:func:`check_family` takes an adapter (a family folder's, or one from another
package's ``specbench.benchmarks`` entry point) and checks, on its bundled suite
and through the plugin's real services (sandboxed executors, cache folders, the
family's default roles):

* a version is set (it enters the result key) and ``name`` is the registered one;
* the bundled suite loads and has tasks;
* the reference answer of every check passes (a check the family skips here, such
  as VERINA's without Lean, is left out, counted, and its reason is one line);
* each check's details survive the journal's JSON round trip unchanged;
* ``metric_names`` is a subset of what ``aggregate`` returns on those results.

It runs a bounded spread of tasks (every kind of task first: ``spread`` at most;
None: every task).  Call it from a test::

    from pytest_specbench.testing import check_family

    def test_my_family_conforms(tmp_path):
        check_family(my_adapter, "--my-option=x", state_dir=tmp_path / "state")
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping

SAMPLES = 5  # samples per task given to aggregate: enough for every k a family reports on its own


@dataclass
class FamilyCheck:
    """What :func:`check_family` ran: checks passed by the reference, and skip reasons."""

    ran: int
    skipped: list[str] = field(default_factory=list)
    metrics: dict[str, Any] = field(default_factory=dict)


def family_settings(name: str, *args: str, state_dir: Path | None = None) -> Any:
    """The plugin's :class:`~pytest_specbench.plugin.options.Settings` of a reference run of
    ``name`` with pass@1 only and these extra pytest arguments (a family's own options)."""
    import pytest

    from ..plugin.options import Settings

    argv = [f"--specbench={name}", "--model=reference", "--specbench-k=1",
            *([f"--specbench-dir={state_dir}"] if state_dir else []), *args]
    return Settings.from_config(pytest.Config.fromdictargs({}, argv))


class _Item:
    """One (task, sample): the real :class:`CheckContext` of the process's real
    services, with ``result_of`` computed on demand, once, as the plugin does."""

    def __init__(self, services: Any, adapter: Any, task: Any, completion: Any):
        self._adapter, self._task, self._completion = adapter, task, completion
        self.results: dict = {}
        self.context = services.context().for_item(self.result_of)

    def result_of(self, check: str) -> Any:
        if check not in self._adapter.checks_for(self._task):
            return None
        if check not in self.results:
            self.results[check] = self._adapter.run_check(check, self._task, self._completion, self.context)
        return self.results[check]


def spread_of(tasks: list, adapter: Any, spread: int | None, kind_of: Callable[[Any], Any] | None = None,
              order: Callable[[Any], Any] | None = None) -> list:
    """Every kind of task of the family first (its checks, and ``kind_of``), then an even
    spread, ``spread`` tasks at most (None: every task).  ``order``: a sort key over the
    tasks, so that the first of each kind is the one it ranks first (e.g. the cheapest)."""
    if spread is None or len(tasks) <= spread:
        return list(tasks)
    if order is not None:
        tasks = sorted(tasks, key=order)
    chosen, kinds = [], set()
    kind_of = kind_of or (lambda task: None)
    for t in tasks:
        kind = (tuple(adapter.checks_for(t)), kind_of(t))
        if kind not in kinds:
            kinds.add(kind)
            chosen.append(t)
    step = max(1, len(tasks) // spread)
    for t in tasks[::step]:
        if len(chosen) >= spread:
            break
        if t not in chosen:
            chosen.append(t)
    return chosen


def _json_round_trip(value: Any) -> Any:
    return json.loads(json.dumps(value, allow_nan=True))


def same_json(a: Any, b: Any) -> bool:
    """``a`` equals ``b`` read back from JSON (NaN equals NaN; a tuple its list)."""
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same_json(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, list):
        return len(a) == len(b) and all(same_json(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and a == b


def check_family(adapter: Any, *args: str, state_dir: Path | None = None, spread: int | None = 16,
                 kind_of: Callable[[Any], Any] | None = None,
                 also: Callable[[Any, str, Any], None] | None = None,
                 known_absent: Iterable[str] = (), order: Callable[[Any], Any] | None = None,
                 executors: Mapping[str, Any] | None = None) -> FamilyCheck:
    """Check ``adapter`` against the family contract (module docstring); AssertionError
    names what is broken.  ``args``: the family's options for an offline reference run;
    ``kind_of`` and ``order``: what else makes a task a kind of its own for the spread, and
    which task of a kind it takes first (:func:`spread_of`);
    ``also(task, check, result)``: the family's own extra assertions on each result;
    ``known_absent``: metric names ``aggregate`` may not return on the bundled suite
    (exact: one that is returned is an error, so a fixed gap must leave the list);
    ``executors``: executors by kind (``"jvm"``...) that the caller made and closes, used
    instead of new ones (a test suite's one jvm executor per process: its warm javac
    starts once, not once per family checked)."""
    from ..models.base import Completion
    from ..plugin.services import Services

    name = getattr(adapter, "name", None)
    assert isinstance(getattr(adapter, "version", None), str) and adapter.version.strip(), \
        f"{name}: no version (it enters the result key)"
    settings = family_settings(name, *args, state_dir=state_dir)
    taskset = adapter.load(settings.data_root, settings)
    assert taskset.tasks, f"{name}: the bundled suite has no tasks"
    services = Services(settings, [])
    services.borrow_executors(executors or {})
    defaults = getattr(adapter, "default_roles", None)
    if callable(defaults):
        services.role_defaults.update(defaults(taskset))
    results, ran, skipped = {}, 0, []
    try:
        for task in spread_of(list(taskset.tasks), adapter, spread, kind_of, order):
            checks = {}
            item = None
            for check in adapter.checks_for(task):
                completion = Completion(adapter.reference(task, check))
                if item is None or item._completion.text != completion.text:
                    item = _Item(services, adapter, task, completion)
                why = adapter.skip_reason(check, task, item.context)
                if why:
                    assert "\n" not in why, (name, task.task_id, check, why)
                    skipped.append(why)
                    continue
                result = item.result_of(check)
                assert result.passed, f"{name} {task.task_id} {check}: the reference fails: {result.message}"
                assert same_json(result.details, _json_round_trip(result.details)), \
                    f"{name} {task.task_id} {check}: details change through JSON: {result.details!r}"
                if also is not None:
                    also(task, check, result)
                checks[check] = result.details
                ran += 1
            if checks:  # the reference answers alike every time: SAMPLES equal samples
                results[task.task_id] = [{"index": i, "checks": checks} for i in range(SAMPLES)]
    finally:
        services.close()
    if not ran:
        return FamilyCheck(0, skipped)
    metrics = adapter.aggregate(results, {t.task_id: t for t in taskset.tasks}, settings)
    names = set(adapter.metric_names(settings))
    assert names, f"{name}: metric_names is empty"
    missing = names - set(metrics)
    assert missing == set(known_absent), f"{name}: metric_names not returned by aggregate: {sorted(missing)}"
    return FamilyCheck(ran, skipped, dict(metrics))
