"""A run's session in the test's process, its items evaluated without pytest's run loop.

``configured_session(pytester, *args)`` is the real :class:`SpecbenchRun` of a pytest run
with ``args`` (``pytester.parseconfigure``: options, settings, plan, journal, ledger,
store of earlier runs, engine), unconfigured at the test's end.  ``evaluate_all`` does
for each runnable item what the run does with it in one process: the session's engine
gives its verdict (the ledger's, or the check's) and the ledger records it as it records
the item's report (journal line, store entry, program alias, report).  Used where a test
asserts what the ledger and the engine decide (result keys, dedupe: issue #45) and a
whole pytest run would only add its start-up.
"""
from __future__ import annotations

from collections import Counter
from typing import Any

from pytest_specbench.engine.ledger import CACHED


def configured_session(pytester, *args: str):
    config = pytester.parseconfigure(*args)
    session = config.pluginmanager.getplugin("specbench-run")
    if session.journal is not None:  # (no session end closes it: left open, a later run would count a ResourceWarning)
        config.add_cleanup(session.journal.close)
    return session


def counted_checks(monkeypatch, adapter) -> Counter:
    """How many times each check of ``adapter`` executes from now on (``run_check``
    wrapped; a verdict the ledger gives is no call), until the test's end."""
    calls: Counter = Counter()
    real_check = type(adapter).run_check

    def counted(self, check, task, sample, ctx):
        calls[check] += 1
        return real_check(self, check, task, sample, ctx)

    monkeypatch.setattr(type(adapter), "run_check", counted)
    return calls


def evaluate_all(session) -> dict[str, tuple[dict[str, Any], str]]:
    """``{node id: (verdict, how it was reached)}`` of every runnable item, in plan order;
    how: ``evaluated``, ``copy`` or ``cached`` (or None: an item without a program key)."""
    reached = {}
    for spec, completion in session.plan.runnable():
        completion.meta.setdefault("sample_index", spec.sample)
        evaluation = session.engine.evaluate(spec, completion)
        how = CACHED if evaluation.from_result_cache else evaluation.reached
        outcome = {"benchmark": spec.benchmark, "task_id": spec.task.task_id, "sample": spec.sample,
                   "check": spec.check, **evaluation.verdict}
        session.ledger.record(spec, outcome, how)
        reached[spec.nodeid] = (evaluation.verdict, how)
    return reached
