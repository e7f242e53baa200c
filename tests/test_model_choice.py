"""Which model a run evaluates when ``--model`` is not given (issue #44, point 1), and
a model that always raises (point 6).

A run never picks a model the user did not name: without ``--model`` it takes the last
run's, from pytest's cache, and prints one line naming it; with no last run it is one
usage line naming ``--model=reference``.  So a FAILED id copied from a run, and
``--lf``, run against the model that failed.  The runs keep pytest's cache provider
(it holds the last model) and are made in this process: the choice is made at start.
"""
from __future__ import annotations

import json

import pytest

ONE_TASK = ("--specbench=contract", "--specbench-tasks=HumanEval-S/0")
FAILED_ID = "specbench::contract::HumanEval-S/0::0::functional"
QUIET = ("-p", "no:randomly", "-p", "no:hypothesispytest", "-p", "no:anyio")

WRONG_ANSWER = '''
def generate(prompt):
    return "def clamped_mean(values, low, high):\\n    return 0\\n"
'''


def _run(pytester, *args):
    return pytester.runpytest_inprocess(*QUIET, f"--specbench-dir={pytester.path / 'state'}", *args)


def test_without_model_and_without_a_last_run_is_one_usage_line(pytester):
    result = _run(pytester, *ONE_TASK)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    errors = [line for line in result.stderr.lines if line.strip()]
    assert len(errors) == 1 and "--model: not given" in errors[0] and "--model=reference" in errors[0], errors
    assert not (pytester.path / "state" / "runs").exists()  # nothing ran, no run folder


def test_a_copied_failed_id_and_lf_rerun_against_the_last_run_s_model(pytester):
    pytester.makepyfile(wrongmod=WRONG_ANSWER)
    pytester.syspathinsert()
    first = _run(pytester, *ONE_TASK, "--model=python:wrongmod:generate", "--specbench-checks=functional")
    first.assert_outcomes(failed=1)
    assert "--model not given" not in first.stdout.str()

    # The README's way to re-run one failure: the id alone.  Before #44 it ran the
    # `reference` model and reported "1 passed".
    again = _run(pytester, FAILED_ID, "--specbench-report=again.json")
    out = again.stdout.str()
    assert "specbench: --model not given: using python:wrongmod:generate, the last run's model" in out, out[-2000:]
    again.assert_outcomes(failed=1)
    assert json.loads((pytester.path / "again.json").read_text())["manifest"]["model"]["spec"] == \
        "python:wrongmod:generate"

    # --lf too.  That xdist workers evaluate with the model the controller took from the last
    # run is asserted on the one xdist run of ContractEval (tests/test_dedupe.py::
    # test_under_xdist_the_report_is_the_serial_one_and_no_program_is_evaluated_twice; #45,
    # session 21: this run had a worker of its own).
    lf = _run(pytester, "--lf", "--specbench=contract")
    assert "using python:wrongmod:generate" in lf.stdout.str()
    lf.assert_outcomes(failed=1)

    # A run that names a model makes it the last one.
    _run(pytester, *ONE_TASK, "--model=reference", "--specbench-checks=functional").assert_outcomes(passed=1)
    _run(pytester, FAILED_ID).assert_outcomes(passed=1)


def test_the_last_run_s_endpoint_comes_with_it_and_credentials_are_never_written_down(pytester):
    url = "http://127.0.0.1:9/v1"
    _run(pytester, *ONE_TASK, "--model=openai:stub", f"--model-base-url={url}", "--model-temperature=0.3",
         "--collect-only", "-q")
    again = _run(pytester, *ONE_TASK, "--collect-only", "-q")
    assert f"using openai:stub at {url}, the last run's model" in again.stdout.str(), again.stdout.str()[-1500:]

    secret = "http://user:hunter2@127.0.0.1:9/v1?api-key=topsecret"
    _run(pytester, *ONE_TASK, "--model=openai:stub", f"--model-base-url={secret}", "--collect-only", "-q")
    stored = "".join(p.read_text(errors="replace") for p in (pytester.path / ".pytest_cache").rglob("*") if p.is_file())
    assert "hunter2" not in stored and "topsecret" not in stored
    refused = _run(pytester, *ONE_TASK, "--collect-only", "-q")
    assert refused.ret == pytest.ExitCode.USAGE_ERROR
    assert "had credentials in its --model-base-url" in refused.stderr.str() and "hunter2" not in refused.stderr.str()


ALWAYS_RAISES = '''
import os

def generate(prompt):
    with open(os.path.join(os.path.dirname(__file__), "calls.txt"), "a") as f:
        f.write("x")
    raise RuntimeError("quota exceeded for this key")
'''

FIRST_ANSWERS_THEN_RAISES = '''
import os

def generate(prompt):
    path = os.path.join(os.path.dirname(__file__), "calls2.txt")
    with open(path, "a") as f:
        f.write("x")
    if os.path.getsize(path) == 1:
        return "def clamped_mean(values, low, high):\\n    return 0\\n"
    raise RuntimeError("quota exceeded for this key")
'''


def test_a_model_that_always_raises_stops_generation_with_one_line(pytester):
    from pytest_specbench.models.cache import GIVE_UP_AFTER

    pytester.makepyfile(raising=ALWAYS_RAISES, halfway=FIRST_ANSWERS_THEN_RAISES)
    pytester.syspathinsert()
    result = _run(pytester, "--specbench=contract", "--model=python:raising:generate", "--model-concurrency=1")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    errors = [line for line in result.stderr.lines if line.strip()]
    assert len(errors) == 1, errors
    assert (f"failed {GIVE_UP_AFTER} requests in a row with the same error and answered none" in errors[0]
            and "RuntimeError: quota exceeded for this key" in errors[0]), errors
    calls = len((pytester.path / "calls.txt").read_text())
    assert calls == GIVE_UP_AFTER  # one at a time (--model-concurrency=1): not one more request
    assert f"{12 - GIVE_UP_AFTER} of 12 requests never sent, 24 items not run" in errors[0], errors

    # A model that answered once is not stopped: its failures are the E of their items.
    some = _run(pytester, "--specbench=contract", "--model=python:halfway:generate", "--model-concurrency=1",
                "--specbench-checks=functional")
    assert len((pytester.path / "calls2.txt").read_text()) == 12
    some.assert_outcomes(failed=1, errors=11)
