"""The run's exit status, decided in one place.

pytest sets a status from the items; the plugin adjusts it once, after every
other ``pytest_sessionfinish`` implementation has run (the ``ExitStatus``
wrapper registered by the run), from three inputs: the CI gate's verdict (when
a threshold or a baseline was given, it has the last word), the harness errors
against ``--specbench-max-errors``, and whether anything else failed.
"""
from __future__ import annotations

from typing import Any, Callable

import pytest

# Interruptions, usage errors and internal errors always stand.
_ADJUSTABLE = (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED, pytest.ExitCode.NO_TESTS_COLLECTED)


def decide(status: int, *, failures: int, harness_errors: int, max_errors: int,
           gate: dict[str, Any] | None = None, evaluated: int | None = None) -> int:
    """The exit status of a finished run.

    * ``evaluated`` (items with a verdict or an error; None: not counted, as in
      ``--collect-only``): a run that would pass with 0 of them evaluated
      nothing (every item skipped, no task in the data) and exits 5, pytest's
      "no tests ran", not 0.
    * ``gate`` (the verdict of an active gate): 0 when it is met and it counted
      no errors, else 1.
    * Otherwise harness errors (E) beyond ``max_errors`` fail a run that would
      pass; within it, a run whose only failures were those errors passes.
    """
    if status not in _ADJUSTABLE:
        return status
    if evaluated == 0 and not harness_errors and status == pytest.ExitCode.OK:
        return pytest.ExitCode.NO_TESTS_COLLECTED
    if gate is not None:
        met = bool(gate.get("passed")) and not gate.get("errors")
        return pytest.ExitCode.OK if met else pytest.ExitCode.TESTS_FAILED
    if harness_errors > max_errors:
        return pytest.ExitCode.TESTS_FAILED if status == pytest.ExitCode.OK else status
    if harness_errors and not failures and status == pytest.ExitCode.TESTS_FAILED:
        return pytest.ExitCode.OK
    return status


class ExitStatus:
    """Wraps ``pytest_sessionfinish``: ``before`` runs first (the gate makes its
    verdict, so the JSON report and the JUnit XML carry it), ``decide`` after all
    other implementations, so this is the only place the status changes."""

    def __init__(self, before: Callable[[], None], inputs: Callable[[], dict[str, Any]]):
        self.before = before
        self.inputs = inputs

    @pytest.hookimpl(wrapper=True)
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int):
        self.before()
        result = yield
        session.exitstatus = decide(session.exitstatus, **self.inputs())
        return result
