"""Declared adapter options and a result key that cannot go stale (issue 19).

The result key is the run key's verdict part (``engine/ledger.py``, ``RunKey``; the
session's ``_verdict_part``): whatever decides a verdict besides the sample.  Tested in
this process (issue #45): each run is the real session of a configured pytest run
(``tests/session_items.py``), whose items' verdicts are asked of the session's ledger the
way the controller asks before an item runs (``_known_of``) and evaluated by the
session's engine.  Whole runs that read the
store end to end stay in test_distributed.py (a re-run on a host with a fresh disk) and
test_generation_cache.py.
"""
from __future__ import annotations


import pytest

from pytest_specbench.benchmarks.base import CheckResult
from pytest_specbench.benchmarks.contract.contract import ADAPTER as CONTRACT
from pytest_specbench.engine.ledger import CACHED
from session_items import configured_session, counted_checks, evaluate_all

BASE_ARGS = ("--specbench=contract", "--model=reference", "-p", "no:cacheprovider", "--specbench-checks=contract")


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


@pytest.fixture
def runs(pytester, monkeypatch):
    """``run(*args)``: the session of a run over one state folder (its store of earlier
    runs' verdicts); the checks the adapter executes are counted in ``calls``."""
    state = pytester.path / "state"
    calls = counted_checks(monkeypatch, CONTRACT)

    def run(*args):
        return configured_session(pytester, *BASE_ARGS, f"--specbench-dir={state}", *args)

    run.calls = calls
    return run


def test_an_identical_run_reads_every_verdict_and_a_changed_version_option_or_limit_reads_none(runs, monkeypatch):
    first = evaluate_all(runs())
    assert len(first) == 11 and runs.calls == {"contract": 11}
    assert all(verdict["passed"] for verdict, _ in first.values())
    # The identical run: every verdict from the store of the first, no check executed.
    again = evaluate_all(runs())
    assert {n: how for n, (_, how) in again.items()} == {n: CACHED for n in first}
    assert {n: v for n, (v, _) in again.items()} == {n: v for n, (v, _) in first.items()}
    assert runs.calls == {"contract": 11}
    # Any option or limit change misses the store: the ledger knows no item of the run.
    for change in ("--contract-rejection=assert-or-raise", "--specbench-call-cpu=3", "--specbench-details"):
        session = runs(change)
        assert [n for n in first if session._known_of(n) is not None] == [], change
    # The check edited to always fail and its adapter's version bumped (what base.py asks of
    # an adapter whose verdicts can change): no stored verdict may be served, each item runs.
    monkeypatch.setattr(CONTRACT, "version", f"{CONTRACT.version}-edited-and-bumped")
    monkeypatch.setattr(type(CONTRACT), "run_check",
                        lambda self, check, task, sample, ctx: CheckResult(False, {}, "edited check"))
    edited = runs()
    assert [n for n in first if edited._known_of(n) is not None] == []
    assert {n: (v["passed"], v["message"], how) for n, (v, how) in evaluate_all(edited).items()} \
        == {n: (False, "edited check", "evaluated") for n in first}
