"""The run's exit status is decided in one function (plugin/exit_status.py)."""
import pytest

from pytest_specbench.plugin.exit_status import decide

OK, FAILED, NONE = pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED, pytest.ExitCode.NO_TESTS_COLLECTED


@pytest.mark.parametrize("status,failures,errors,max_errors,gate,expected", [
    (OK, 0, 0, 0, None, OK),
    (FAILED, 3, 0, 0, None, FAILED),                       # model failures fail the run
    (FAILED, 0, 2, 0, None, FAILED),                       # errors beyond the tolerance
    (OK, 0, 2, 1, None, FAILED),                           # ... even if pytest saw none as failed
    (FAILED, 0, 2, 2, None, OK),                           # tolerated errors and nothing else failed
    (FAILED, 1, 2, 2, None, FAILED),                       # tolerated errors, but a real failure
    (FAILED, 5, 0, 0, {"passed": True, "errors": 0}, OK),  # the gate has the last word
    (OK, 0, 0, 0, {"passed": False, "errors": 0}, FAILED),
    (OK, 0, 3, 0, {"passed": True, "errors": 3}, FAILED),  # the gate counted errors
    (NONE, 0, 0, 0, {"passed": True, "errors": 0}, OK),
    (pytest.ExitCode.INTERRUPTED, 0, 0, 0, {"passed": True, "errors": 0}, pytest.ExitCode.INTERRUPTED),
    (pytest.ExitCode.USAGE_ERROR, 0, 5, 0, None, pytest.ExitCode.USAGE_ERROR),
])
def test_decide(status, failures, errors, max_errors, gate, expected):
    assert decide(status, failures=failures, harness_errors=errors, max_errors=max_errors, gate=gate) == expected


@pytest.mark.parametrize("status,errors,evaluated,expected", [
    (OK, 0, 0, NONE),       # every item skipped, or no task: "no tests ran" (issue 26)
    (OK, 0, None, OK),      # --collect-only: not counted
    (OK, 0, 3, OK),
    (FAILED, 2, 0, FAILED),  # errors are not "nothing"
    (pytest.ExitCode.USAGE_ERROR, 0, 0, pytest.ExitCode.USAGE_ERROR),
])
def test_a_run_that_evaluated_nothing_is_no_tests_ran(status, errors, evaluated, expected):
    assert decide(status, failures=0, harness_errors=errors, max_errors=0, evaluated=evaluated) == expected
