"""Timing verdicts are reproducible (issue #33): a call over its CPU limit by less
than the borderline margin is measured again in fresh children and the least CPU
time decides; far over, it is decided at once; details mark it borderline.

The machine's own noise cannot be ordered on demand, so the constructed sample
injects it: on its input at the limit it spins on its own CPU clock for 0.7x the
limit on most runs and 1.4x on about one run in ten (os.urandom, so each forked
child draws afresh), like a run slowed by a busy sibling hyperthread.  One figure
decides wrongly one time in ten; the least of five almost never.  A busy process
on each core competes meanwhile (wall time, scheduling).  The limit is 50 ms
CPU, so twenty runs cost about a second of CPU.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from pytest_specbench.benchmarks.contract import evalplus
from pytest_specbench.execution.limits import BORDERLINE_MARGIN, REMEASURE_RUNS, Limits
from pytest_specbench.models.base import Completion
from fakes import FakeSettings, fake_context
from pytest_specbench.perf.spread import busy_load, stop_load

LIMIT = 0.05
# wall_factor 20: on a 2-core machine at load 20+ a call gets a tenth of a core, and
# the wall bound (for samples that sleep) would stop busy calls; its path is tested apart.
LIMITS = Limits(call_cpu=LIMIT, startup_cpu=2.0, memory_mb=1024, tmp_mb=16, wall_factor=20.0)

TASK = {"task_id": "HumanEval/9933", "entry_point": "f", "atol": 0, "prompt": "def f(x, k):\n",
        "canonical_solution": "    return x + 1\n",
        "base_input": [[1, 0], [2, 0]], "plus_input": [[3, 1], [4, 0]]}  # plus input #0 is the one at the limit


def spinning(slow: float, fast: float, slow_in_256: int) -> str:
    return f'''import os, time
def f(x, k):
    if k:
        target = {LIMIT} * ({slow} if os.urandom(1)[0] < {slow_in_256} else {fast})
        t = time.process_time()
        while time.process_time() - t < target:
            pass
    return x + 1
'''


NOISY = spinning(1.4, 0.7, 26)  # passes: its least CPU time is 0.7x the limit
OVER = spinning(1.3, 1.3, 256)  # fails, borderline: 1.3x every time
FAR = spinning(3.0, 3.0, 256)  # fails at once: stopped at the margin


@pytest.fixture
def competing_load():
    procs = busy_load(os.cpu_count() or 1)
    yield
    stop_load(procs)


def context(executor, limits, tmp_path):
    return fake_context(FakeSettings(limits=limits), cache=tmp_path, executors={"python": executor})


@pytest.fixture(scope="module")
def state(tmp_path_factory):
    """The module's state folder, as one run has: TASK's reference outputs (three timed runs
    of its canonical solution, under the competing load) are made once, not once per test."""
    return tmp_path_factory.mktemp("timing-state")


@pytest.fixture
def ctx(python_executor, state):
    return context(python_executor, LIMITS, state)


def check(code: str, ctx):
    return evalplus.functional_check(TASK, "t" * 64, Completion(code, {"trusted_reference": True}), ctx)


def test_same_verdict_in_20_runs_under_a_competing_load(competing_load, ctx):
    results = [check(NOISY, ctx) for _ in range(20)]
    assert [r.passed for r in results] == [True] * 20, [r.message for r in results if not r.passed]
    marked = [r.details["borderline"] for r in results if "borderline" in r.details]
    for timing in marked:  # the runs whose first figure was over: measured again until one was within
        (entry,) = timing
        assert entry["input"] == 2 and entry["limit"] == LIMIT and entry["passed"] is True
        assert entry["cpu"][0] > LIMIT and min(t for t in entry["cpu"] if t is not None) <= LIMIT
    # Only the input at the limit is ever borderline, and only on its slow draws.
    assert all(len(t) == 1 for t in marked)


def test_over_within_the_margin_fails_every_time_with_its_figures(competing_load, ctx):
    # Twice (three times until #45, session 22): the sample has no coin (1.3x its limit on
    # every run); each check is already five runs of the call, all within the margin.
    for _ in range(2):
        result = check(OVER, ctx)
        assert not result.passed and result.details["failed_input"] == 2
        (entry,) = result.details["borderline"]
        assert entry["passed"] is False and len(entry["cpu"]) == 1 + REMEASURE_RUNS
        # The first figure is the run being checked; a re-measurement may bring none (None:
        # stopped, or no answer) when the machine is busier than the sample: CI's two cores
        # once gave one such run under this test's load (stop 67).  It cannot turn the verdict.
        first, *again = entry["cpu"]
        assert first is not None and LIMIT < first <= LIMIT * BORDERLINE_MARGIN
        assert all(LIMIT < t <= LIMIT * BORDERLINE_MARGIN for t in again if t is not None)
        assert f"least CPU time of {1 + REMEASURE_RUNS} runs" in result.message
        assert result.message.startswith("plus input #0: over its 0.05 s CPU limit")


def test_far_over_the_limit_is_decided_at_once(competing_load, ctx):
    # Ten times, under load: the CPU timer fires at a scheduler tick, often a few ms before
    # process_time() reaches the margin, and such a stop once passed for a wall stop
    # (measured again: W1's 55 HumanEval/39 samples, docs/timing.md).  The child now
    # says which timer stopped the call.  LIMITS' wall bound (2.5 s for this call)
    # stops a busy call only below a twenty-fifth of a core.
    for _ in range(10):
        result = check(FAR, ctx)
        assert not result.passed and "borderline" not in result.details, result.details
        assert result.message == "plus input #0: over its 0.05 s CPU limit"


# A call stopped by its wall bound, run once more with more wall time and failing it: the
# first test of tests/test_wall_stops.py (the same 0.05 s limit at wall factor 1, the same
# borderline entry and message, and that the job stops there), on that module's executor; the
# copy here started an executor of its own (session 21).


def test_a_fast_figure_must_come_with_a_right_answer(ctx):
    # On its input at the limit, a sample that is slow and right or (half the time)
    # fast and wrong: its fast figures come with wrong answers and never count.
    code = f'''import os, time
def f(x, k):
    if k and os.urandom(1)[0] < 128:
        return -1
    if k:
        t = time.process_time()
        while time.process_time() - t < {LIMIT} * 1.5:
            pass
    return x + 1
'''
    # The coin is the sample's: until some re-measurement has drawn a wrong answer the test
    # has not shown the rule, so it keeps checking (8 checks left that to chance: about one
    # run in a thousand drew only right answers in every re-measurement).  It stops at the
    # first check that has drawn one (at least 8 checks until #45, session 22): a harness that
    # let a fast figure count would have passed that very check, so the checks after it
    # showed nothing more (about half of all checks draw one: ~2 checks, not 8).
    entries = []
    for _ in range(40):
        result = check(code, ctx)
        assert not result.passed
        entries += result.details.get("borderline", [])
        if any(None in entry["cpu"] for entry in entries):
            break
    for entry in entries:
        assert entry["passed"] is False
        assert all(t is None or t > LIMIT for t in entry["cpu"]), entry
    assert any(None in entry["cpu"] for entry in entries), entries


def test_the_report_marks_borderline_items(pytester):
    """Through pytest: the JSON report keeps the mark and the figures seen (a run in this
    process: the calls are timed in the sandbox's processes, whichever Python runs pytest)."""
    data = pytester.path / "data" / "evalplus"
    data.mkdir(parents=True)
    (data / "HumanEvalPlus-timing.jsonl").write_text(json.dumps(TASK) + "\n")
    answers = pytester.path / "answers.jsonl"
    answers.write_text(json.dumps({"task_id": TASK["task_id"], "solution": OVER}) + "\n")
    report = pytester.path / "r.json"
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider", "--specbench=evalplus",
                                          f"--specbench-data={pytester.path / 'data'}", f"--model=replay:{answers}",
                                          f"--specbench-call-cpu={LIMIT}", f"--specbench-report={report}",
                                          f"--specbench-dir={pytester.path / '.sb'}")
    result.stdout.fnmatch_lines(["*over its 0.05 s CPU limit (least CPU time of*"])
    sample = json.loads(report.read_text())["benchmarks"]["evalplus"]["tasks"][TASK["task_id"]]["samples"][0]
    functional = sample["checks"]["functional"]
    assert functional["passed"] is False and functional["borderline"][0]["input"] == 2
    assert len(functional["borderline"][0]["cpu"]) == 1 + REMEASURE_RUNS


@pytest.mark.parametrize("wall_factor,loads", [(20.0, True), (1.0, False)])
def test_the_wall_bound_on_defining_a_sample_scales_with_the_wall_factor(wall_factor, loads):
    # A loaded machine is what --specbench-wall-factor is for; the definition of the
    # sample (its module-level code) was held to 3x its CPU limit whatever the factor.
    # Sleeping 1 s at definition: inside 0.2 s x 20, outside 0.2 s x 1.
    from pytest_specbench.execution.python import CallsJob, PythonExecutor

    limits = Limits(call_cpu=LIMIT, startup_cpu=0.2, memory_mb=1024, tmp_mb=16, wall_factor=wall_factor)
    executor = PythonExecutor(limits)
    try:
        code = "import time\ntime.sleep(1.0)\ndef f(x):\n    return x + 1\n"
        result = executor.run(None, CallsJob(code, "f", f"slow-definition-{wall_factor}", lambda: [((1,), {})], [0]))
    finally:
        executor.close()
    if loads:
        assert result.load_error is None and result.outcomes[0].status == "ok", result.failure_reason()
    else:
        assert result.load_error == "defining the sample took over 0.2 s", result.failure_reason()
