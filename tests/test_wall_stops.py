"""A call stopped by its wall-time bound is measured again before the job goes on
(issue #48; #33's rule, docs/timing.md "How a verdict on time is reached").

Under load every time-out met its wall bound before its CPU timer; each such call was
provisionally borderline and the job went on to the next input, which was stopped by
its wall bound too, and so on: W4-HumanEval's four failing samples that time out took
127 of the run's 163 CPU s at load 12.  A wall stop is cheap to make on demand: a sample
that sleeps.  The wall factor is 1 (a 0.6 s bound on a 0.05 s limit with the margin)
and a re-measurement allows ten times that (1.5 s).
"""
from __future__ import annotations

from pytest_specbench.benchmarks.contract import evalplus
from pytest_specbench.execution.limits import Limits
from pytest_specbench.models.base import Completion
from fakes import FakeSettings, fake_context

LIMIT = 0.05
LIMITS = Limits(call_cpu=LIMIT, startup_cpu=2.0, memory_mb=1024, tmp_mb=16, wall_factor=1.0)

# Base inputs #0-#1 quick; plus inputs #0-#5 sleep k seconds first.
TASK = {"task_id": "HumanEval/9934", "entry_point": "f", "atol": 0, "prompt": "def f(x, k):\n",
        "canonical_solution": "    return x + 1\n", "base_input": [[1, 0], [2, 0]],
        "plus_input": [[3, 5], [4, 5], [5, 5], [6, 5], [7, 5], [8, 5]]}
SLEEPER = "import time\ndef f(x, k):\n    time.sleep(k)\n    return x + 1\n"


class Counted:
    """The executor, counting the calls each run of a sample's checked calls answered (not
    a re-measurement, not the reference's run that builds the expected outputs)."""

    def __init__(self, real):
        self.real, self.answered = real, []

    def run(self, prepared, job, on_outcome=None):
        result = self.real.run(prepared, job, on_outcome)
        if "sleep" in job.code:
            self.answered.append(len(result.outcomes))
        return result

    def remeasure(self, *args, **kwargs):
        return self.real.remeasure(*args, **kwargs)


def check(code, task, executor, tmp_path):
    ctx = fake_context(FakeSettings(limits=LIMITS), cache=tmp_path, executors={"python": executor})
    return evalplus.functional_check(task, "w" * 64, Completion(code, {"trusted_reference": True}), ctx)


def test_the_job_stops_at_a_wall_stop_that_fails_its_second_run(python_executor, tmp_path):
    counted = Counted(python_executor)
    result = check(SLEEPER, TASK, counted, tmp_path)
    assert not result.passed and result.details["failed_input"] == 2
    (entry,) = result.details["borderline"]
    assert entry["wall"] is True and entry["passed"] is False and entry["cpu"] == [None, None]
    assert result.message.startswith("plus input #0: over its 0.05 s CPU limit (no run of 2 finished with a right "
                                      "output within its wall-time bound")
    # The first child answered the two base inputs and the one stopped: before, it went
    # on through all six sleeping inputs, each stopped by its wall bound in turn.
    assert counted.answered == [3]


def test_a_wall_stop_within_its_limit_the_second_time_lets_the_job_go_on(python_executor, tmp_path):
    # Plus input #1 sleeps 0.9 s: over its 0.6 s wall bound, inside the 1.5 s of its
    # second run, whose CPU figure is within the limit.  The job goes on in a fresh child
    # (the calls before #1 made again, not judged) and judges the inputs after it.  In
    # ContractEval's details mode (every input judged): the EvalPlus mode takes the same
    # path here, and its stop at a failing second run is the test above.
    task = dict(TASK, plus_input=[[3, 0], [4, 0.9], [5, 0], [6, 0]])
    wrong_last = SLEEPER.replace("return x + 1", "return x + 1 if x != 6 else 0")
    counted = Counted(python_executor)
    ctx = fake_context(FakeSettings(limits=LIMITS, details=True), cache=tmp_path, executors={"python": counted})
    result = evalplus.functional_check(task, "v" * 64, Completion(wrong_last, {"trusted_reference": True}), ctx)
    assert not result.passed and result.details["failed_input"] == 5, result.message
    assert result.message == "plus input #3: expected 7, got 0"
    (entry,) = result.details["borderline"]
    assert entry["input"] == 3 and entry["wall"] is True and entry["passed"] is True
    assert counted.answered == [4, 6]  # stopped at #1 (index 3); then all six again, #2 and #3 judged
    assert result.details["failed_inputs"] == [5] and result.details["inputs_passed"] == 5
    assert result.details["base_passed"] is True


def test_the_job_stops_at_a_borderline_call_and_measures_it_at_once(python_executor, tmp_path):
    # Plus input #0 spins 1.3x its CPU limit on every run (within the margin: borderline);
    # the five inputs after it spin 0.5x.  The job went on through them and measured the
    # call at the end (Mbpp/160: 5.5 of its 12.6 CPU s were inputs after its first
    # borderline call, which failed every re-run); now it stops there, measures it at once,
    # and fails there, as before.
    spinner = ("import time\ndef f(x, k):\n    if k:\n        t = time.process_time()\n"
               f"        while time.process_time() - t < {LIMIT} * k:\n            pass\n    return x + 1\n")
    task = dict(TASK, plus_input=[[3, 1.3]] + [[x, 0.5] for x in range(4, 9)])
    counted = Counted(python_executor)
    # wall factor 20: under load a spinning call must not meet its wall bound (the path above)
    ctx = fake_context(FakeSettings(limits=Limits(call_cpu=LIMIT, startup_cpu=2.0, memory_mb=1024, tmp_mb=16,
                                                  wall_factor=20.0)), cache=tmp_path, executors={"python": counted})
    code = spinner.replace("def f", "sleep = None\ndef f")  # "sleep" in the code: Counted counts its runs
    result = evalplus.functional_check(task, "b" * 64, Completion(code, {"trusted_reference": True}), ctx)
    assert not result.passed and result.details["failed_input"] == 2, result.message
    (entry,) = result.details["borderline"]
    assert entry["input"] == 2 and entry["passed"] is False and len(entry["cpu"]) == 5
    assert min(entry["cpu"]) > LIMIT and result.message.startswith("plus input #0: over its 0.05 s CPU limit (least")
    assert counted.answered == [3]  # was [8]: every input after the borderline one


class WithinOnRemeasure(Counted):
    """Every re-measurement reads within the limit (as a call that was borderline only
    because the machine was loaded reads on its second run)."""

    def remeasure(self, job, index, cpu, **kwargs):
        return [cpu * 0.5] * kwargs.get("runs", 1)


def test_only_the_first_borderline_call_within_its_limit_restarts_the_job(python_executor, tmp_path):
    # Plus inputs #0, #2 and #4 spin 1.3x their limit on the first run (borderline); every
    # re-measurement says within.  The job stops at #0, goes on in a fresh child, and the
    # borderline calls after that are measured at its end: one restart, not one per
    # borderline call (each restart makes every call before it again: on a loaded machine,
    # where many calls read borderline, the job's work would grow with the square of its calls).
    spinner = ("import time\ndef f(x, k):\n    if k:\n        t = time.process_time()\n"
               f"        while time.process_time() - t < {LIMIT} * k:\n            pass\n    return x + 1\n")
    task = dict(TASK, plus_input=[[3, 1.3], [4, 0], [5, 1.3], [6, 0], [7, 1.3], [8, 0]])
    counted = WithinOnRemeasure(python_executor)
    ctx = fake_context(FakeSettings(limits=Limits(call_cpu=LIMIT, startup_cpu=2.0, memory_mb=1024, tmp_mb=16,
                                                  wall_factor=20.0)), cache=tmp_path, executors={"python": counted})
    code = spinner.replace("def f", "sleep = None\ndef f")  # "sleep" in the code: Counted counts its runs
    result = evalplus.functional_check(task, "c" * 64, Completion(code, {"trusted_reference": True}), ctx)
    assert result.passed, result.message
    assert [entry["input"] for entry in result.details["borderline"]] == [2, 4, 6]
    assert all(entry["passed"] for entry in result.details["borderline"])
    assert counted.answered == [3, 8]  # stopped at #0 (index 2), then all eight: no stop at #2 or #4
