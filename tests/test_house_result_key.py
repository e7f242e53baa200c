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


BASE_ARGS = ("--specbench=contract", "--model=reference", "-p", "no:cacheprovider", "--specbench-checks=contract")


@pytest.fixture(scope="module")
def project(module_runs):
    """``run(name, *args, **env)``: the run ``name`` in one state folder shared by the
    module, made once, and how many checks it executed.  Its first two runs, ``first``
    and ``again`` (identical), are made here: every later run changes one thing
    against them, so a verdict it may reuse is one of theirs."""
    module_runs.write_once("conftest.py", CONFTEST)
    state = module_runs.path / "state"

    def run(name, *args, **env):
        calls = module_runs.path / f"calls-{name}.txt"
        result = module_runs.once(name, *BASE_ARGS, f"--specbench-dir={state}", *args,
                                  env={"SB_CALLS": str(calls), **env})
        return result, len(calls.read_text().split()) if calls.exists() else 0

    first, calls = run("first")
    first.assert_outcomes(passed=11, skipped=1)
    assert calls == 11
    again, calls = run("again")  # identical re-run: every verdict from the cache
    again.assert_outcomes(passed=11, skipped=1)
    assert calls == 0
    return run


def test_bad_ini_value_of_a_declared_option_is_one_line(pytester):
    pytester.makeini("[pytest]\ncontract_condition = bogus\n")
    result = pytester.runpytest_inprocess("--specbench=contract", "--model=reference", "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--contract-condition (ini key contract_condition): expected one of standard, cs, eas,"
                                 " got 'bogus'*"])
    assert "Traceback" not in result.stderr.str()


def test_declared_options_are_in_help_with_their_ini_keys(pytester):
    result = pytester.runpytest_inprocess("--help")
    out = result.stdout.str()
    assert result.ret == 0
    assert "--contract-condition=CONTRACT_CONDITION" in out and "(one of: standard, cs, eas)" in " ".join(out.split())
    assert "contract_condition (string):" in out


def test_stale_cache_edited_check_with_bumped_version_is_rerun(project):
    # (the fixture ran it twice: 11 checks, then 0, every verdict from the cache)
    # The check is edited to always fail and its adapter's version bumped (what base.py
    # asks of an adapter whose verdicts can change): no cached verdict may be served.
    result, calls = project("edited", SB_ALWAYS_FAIL="1", SB_VERSION="edited-and-bumped")
    result.assert_outcomes(failed=11, skipped=1)
    assert calls == 11


@pytest.mark.parametrize("change", [("--contract-rejection=assert-or-raise",), ("--specbench-call-cpu=3",),
                                    ("--specbench-details",)])
def test_any_option_or_limit_change_misses_the_cache(project, change):
    # (against the fixture's two runs: 11 checks, then 0)
    result, calls = project("change" + change[0], *change)
    assert calls == 11, change
