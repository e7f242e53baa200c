"""Declared adapter options and a result key that cannot go stale (issue 19).

Each run counts the checks that really executed (a conftest wraps the adapter's
``run_check`` and appends to a file), so a cached verdict shows as no call.
"""
from __future__ import annotations

import pytest

CONFTEST = '''
import os
from pytest_specbench.benchmarks.contract.contract import ADAPTER

ADAPTER.version = os.environ.get("SB_VERSION", ADAPTER.version)
_run = type(ADAPTER).run_check

def run_check(self, check, task, sample, ctx):
    with open(os.environ["SB_CALLS"], "a") as f:
        f.write(check + "\\n")
    result = _run(self, check, task, sample, ctx)
    if os.environ.get("SB_ALWAYS_FAIL"):  # "edit the check to always fail"
        result.passed, result.message = False, "edited check"
    return result

type(ADAPTER).run_check = run_check
'''


@pytest.fixture
def project(pytester, monkeypatch):
    pytester.makeconftest(CONFTEST)
    calls = pytester.path / "calls.txt"
    monkeypatch.setenv("SB_CALLS", str(calls))

    def run(*args, **env):
        for k, v in env.items():
            monkeypatch.setenv(k, v)
        calls.write_text("")
        result = pytester.runpytest_subprocess("--specbench=contract", "--model=reference", "-p", "no:cacheprovider",
                                               "--specbench-checks=contract", f"--specbench-dir={pytester.path / 'state'}",
                                               *args)
        return result, len(calls.read_text().split())
    return run


def test_bad_ini_value_of_a_declared_option_is_one_line(pytester):
    pytester.makeini("[pytest]\ncontract_condition = bogus\n")
    result = pytester.runpytest_subprocess("--specbench=contract", "--model=reference", "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--contract-condition (ini key contract_condition): expected one of standard, cs, eas,"
                                 " got 'bogus'*"])
    assert "Traceback" not in result.stderr.str()


def test_declared_options_are_in_help_with_their_ini_keys(pytester):
    result = pytester.runpytest_subprocess("--help")
    out = result.stdout.str()
    assert result.ret == 0
    assert "--contract-condition=CONTRACT_CONDITION" in out and "(one of: standard, cs, eas)" in " ".join(out.split())
    assert "contract_condition (string):" in out


def test_stale_cache_edited_check_with_bumped_version_is_rerun(project):
    result, calls = project()
    result.assert_outcomes(passed=11, skipped=1)
    assert calls == 11
    result, calls = project()  # identical re-run: every verdict from the cache
    result.assert_outcomes(passed=11, skipped=1)
    assert calls == 0
    # The check is edited to always fail and its adapter's version bumped (what base.py
    # asks of an adapter whose verdicts can change): no cached verdict may be served.
    result, calls = project(SB_ALWAYS_FAIL="1", SB_VERSION="edited-and-bumped")
    result.assert_outcomes(failed=11, skipped=1)
    assert calls == 11


@pytest.mark.parametrize("change", [("--contract-rejection=assert-or-raise",), ("--specbench-call-cpu=3",),
                                    ("--specbench-details",)])
def test_any_option_or_limit_change_misses_the_cache(project, change):
    assert project()[1] == 11
    assert project()[1] == 0
    result, calls = project(*change)
    assert calls == 11, change
