"""The pytest nodes: one item per (task, sample, check)."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

import pytest

from ..types import CheckSkipped
from ..engine.plan import ItemSpec, RunPlan
from ..engine.verdicts import VerdictEngine
from ..errors import InfrastructureError, RepeatableError, SpecbenchError
from ..models.base import SampleMissing
from . import wire_safe

PROPERTY = "specbench"  # key of the user property that carries an item's result to the controller
# How the verdict was reached (evaluated, copy, cached), for the controller's dedupe count only:
# kept out of the outcome, so the journal and the report are the same with dedupe on or off.
DEDUPE_PROPERTY = "specbench_dedupe"
# Set when the verdict came from the result cache (an identical earlier run): counted by the
# controller, which says in one line when a whole run was served that way.
CACHED_PROPERTY = "specbench_cached"
# A repeatable harness error (``RepeatableError``), on the setup report: the controller's
# ledger keeps it for the item's copies and the next run, which raise it again.
REPEATABLE_PROPERTY = "specbench_repeatable"
_OWN_PROPERTIES = (PROPERTY, DEDUPE_PROPERTY, CACHED_PROPERTY, REPEATABLE_PROPERTY)


class SpecbenchFailure(AssertionError):
    """A check the sample did not pass (reported as F with a one-line message)."""


class BenchmarkNode(pytest.Collector):
    """Parent of one benchmark's items (``-k contract`` selects them all)."""

    def collect(self):  # items are built by the session, not discovered
        return []


class SpecbenchItem(pytest.Item):
    """One (task, sample, check): its :class:`~..engine.plan.ItemSpec`, the run's
    :class:`~..engine.plan.RunPlan` (skip reason, the model's answer) and the
    process's :class:`~..engine.verdicts.VerdictEngine` (the verdict)."""

    def __init__(self, *, spec: ItemSpec, plan: RunPlan, verdicts: VerdictEngine,
                 isolation: Callable[[], dict[str, Any]], **kwargs):
        super().__init__(**kwargs)
        self.spec, self.plan, self.verdicts, self.isolation = spec, plan, verdicts, isolation
        self.adapter, self.task, self.sample, self.check = spec.adapter, spec.task, spec.sample, spec.check
        self.outcome: dict[str, Any] | None = None
        self.reached: str | None = None  # evaluated | copy | cached, for items with a program key
        self.from_result_cache = False  # the verdict was read from the result cache
        self.setup_error: BaseException | None = None  # what setup raised (its report: _repr_failure_py)

    def reportinfo(self):
        return self.task.source, max(self.task.line - 1, 0), f"{self.task.task_id} sample {self.sample} {self.check}"

    def setup(self) -> None:
        # The work happens here so that harness trouble is an error (E), not a failure (F).
        finished = self.verdicts.resumed(self.spec)  # a resumed run's journal: neither skipped nor run again
        try:
            self.outcome = finished if finished is not None else self._evaluate()
        except BaseException as exc:
            self.setup_error = exc
            raise

    def _evaluate(self) -> dict[str, Any]:
        skip = self.plan.skip_reason(self.spec)
        if skip:
            pytest.skip(skip)
        try:
            completion = self.plan.completion(self.spec)
        except SampleMissing as exc:
            raise InfrastructureError(str(exc)) from None
        completion.meta.setdefault("sample_index", self.sample)
        try:
            evaluation = self.verdicts.evaluate(self.spec, completion)
        except CheckSkipped as exc:  # decided on the sample: e.g. no judge for this question
            pytest.skip(" ".join(str(exc).split()))
        except RepeatableError as exc:
            self.user_properties.append((REPEATABLE_PROPERTY, {"repeatable_error": str(exc),
                                                               "error_type": type(exc).__name__}))
            raise
        self.reached, self.from_result_cache = evaluation.reached, evaluation.from_result_cache
        return {"benchmark": self.adapter.name, "task_id": self.task.task_id, "sample": self.sample,
                "check": self.check, **evaluation.verdict, "isolation": self.isolation()}

    def runtest(self) -> None:
        # Carried by the call report only (not setup's and teardown's as well):
        # under xdist every copy crosses to the controller.  Printable whatever
        # the sample wrote (a lone surrogate would stop the terminal reporter).
        self.outcome = wire_safe(self.outcome)
        self.user_properties.append((PROPERTY, self.outcome))
        if self.reached is not None:
            self.user_properties.append((DEDUPE_PROPERTY, self.reached))
        if self.from_result_cache:
            self.user_properties.append((CACHED_PROPERTY, True))
        if not self.outcome["passed"]:
            raise SpecbenchFailure(self.outcome["message"] or f"{self.check} check failed")

    def teardown(self) -> None:
        self.user_properties[:] = [p for p in self.user_properties if p[0] not in _OWN_PROPERTIES]

    def repr_failure(self, excinfo, style=None):
        # The reason only: the section header and the short summary's node id already
        # name the item, and a reason after a repeated id was cut off at the terminal's width.
        line = one_line(excinfo.value)
        if line is not None and (isinstance(excinfo.value, SpecbenchFailure)
                                 or self.config.getoption("tbstyle", "auto") == "auto"):
            return wire_safe(line)
        return super().repr_failure(excinfo, style)

    def _repr_failure_py(self, excinfo, style=None):
        # pytest formats an error raised in setup here (pytest/reports.py), before
        # one_line_setup_error replaces it with its one line: ~40 ms an E (each frame's file is
        # parsed again), for nothing.  The same line at once; everything else as pytest makes it.
        line = one_line(excinfo.value) if excinfo.value is self.setup_error else None
        if line is not None and style == "auto" and self.config.getoption("tbstyle", "auto") == "auto":
            return wire_safe(line)
        return super()._repr_failure_py(excinfo, style)

    def _traceback_filter(self, excinfo):
        # A harness bug's traceback starts at this item's own code, not in pytest's and
        # pluggy's frames (about 650 lines of them for an error raised in setup).
        traceback = excinfo.traceback
        cut = traceback.cut(path=Path(__file__))
        return (cut if len(cut) else traceback).filter(excinfo)


def one_line(exc: BaseException) -> str | None:
    """The one-line message of a failure (F) or harness error (E), or None for
    anything else (a harness bug keeps its traceback)."""
    if isinstance(exc, SpecbenchFailure):
        return " ".join(str(exc).split()) or "check failed"
    if isinstance(exc, (InfrastructureError, SpecbenchError)):
        return f"{type(exc).__name__}: {' '.join(str(exc).split())}"
    return None


def one_line_setup_error(item: pytest.Item, call: pytest.CallInfo, report: pytest.TestReport) -> None:
    """``pytest_runtest_makereport``: an E raised in ``setup`` (where every check runs)
    is one line like an F.  pytest formats setup errors without ``repr_failure``;
    ``--tb=short/long/native`` asks for the traceback and gets it."""
    if not isinstance(item, SpecbenchItem) or call.when != "setup" or call.excinfo is None or not report.failed:
        return
    if item.config.getoption("tbstyle", "auto") != "auto":
        return
    line = one_line(call.excinfo.value)
    if line is not None:
        report.longrepr = wire_safe(line)
