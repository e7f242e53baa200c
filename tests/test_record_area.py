"""The record area (execution/records.py): a child's answers live in memory
shared with its zygote, so the answers given before the child died reach the
harness, in order, whatever killed it; and a child that writes more than the
area holds goes on through the pipe without losing or reordering a record.
"""
from __future__ import annotations

import pytest

from pytest_specbench.execution import records
from pytest_specbench.execution.limits import Limits
from pytest_specbench.execution.python import CallsJob

LIMITS = Limits(call_cpu=0.5, startup_cpu=0.3, memory_mb=1024, processes=16, tmp_mb=16)
# 25 answers before the death: as many as show that every one arrives, in order.  The
# sample that spins past every timer runs until the CPU rlimit, int(N * 0.01 * margin +
# startup_cpu) + 1 s of CPU (margin 2, the borderline re-measure's, python_child.py): 1 s
# here (3 s with 120 calls and a 0.5 s start-up limit, 6 s with 400 calls and 1 s).
N = 30
DIES_AT = 25


@pytest.fixture(scope="module")
def executor(python_executor):
    return python_executor


def run(ex, body: str, n: int = N):
    code = f"def f(x):\n    if x == {DIES_AT}:\n        {body}\n    return x * 2\n"
    calls = [((i,), {}) for i in range(n)]
    # 10 ms of CPU per call: the CPU rlimit (their sum plus the start-up) then comes after seconds, not minutes.
    return ex.run(None, CallsJob(code, "f", f"record-area-{n}", lambda: calls, list(range(n)), call_cpu=[0.01] * n))


DEATHS = {
    "os._exit": "import os; os._exit(0)",
    "SIGKILL": "import os, signal; os.kill(os.getpid(), signal.SIGKILL)",
    "segfault": "import ctypes; ctypes.string_at(0)",
    "CPU rlimit (endless loop past every timer)": (
        "import signal; signal.signal(signal.SIGPROF, signal.SIG_IGN); signal.signal(signal.SIGALRM, signal.SIG_IGN)\n"
        "        while True: pass"),
}


@pytest.mark.parametrize("death", list(DEATHS))
def test_answers_before_a_death_reach_the_harness(executor, death):
    result = run(executor, DEATHS[death])
    if death.startswith("CPU rlimit") and result.finished:
        # On a loaded machine the harness's wall bound on the call can end the spinning child
        # before its 2 s of CPU do (the sample ignores the child's own timers): the call is then a
        # time-out and the calls after it run in a new child. The answers before it must still
        # all have arrived, in order (seen in the busy-core suite run of #45).
        assert result.outcomes[DIES_AT].status == "timeout", result.failure_reason()
        assert [i for i, o in result.outcomes.items() if o.status == "ok"] == [i for i in range(N) if i != DIES_AT]
        before = {i: o for i, o in result.outcomes.items() if i < DIES_AT}
        assert all(o.value == 2 * o.index for o in before.values())
        return
    assert not result.finished
    assert sorted(result.outcomes) == list(range(DIES_AT)), result.failure_reason()
    assert all(o.status == "ok" and o.value == 2 * o.index for o in result.outcomes.values())
    assert result.failure_reason()


def test_a_call_that_sleeps_ends_at_its_wall_timer_and_the_calls_after_it_run(executor):
    result = run(executor, "import time; time.sleep(3600)")
    # The per-call wall timer ends the sleep (a timeout for that call), and the calls after it still run.
    assert result.outcomes[DIES_AT].status == "timeout"
    assert [i for i, o in result.outcomes.items() if o.status == "ok"] == [i for i in range(N) if i != DIES_AT]


def test_early_stop_sees_a_wrong_answer_while_the_child_still_runs(executor):
    # The first answer is wrong and the next call spins until its CPU timer:
    # the harness must see answer 0 (and stop the child) without waiting for it.
    code = "def f(x):\n    if x == 1:\n        while True: pass\n    return -1\n"
    calls = [((i,), {}) for i in range(3)]
    seen = []
    result = executor.run(None, CallsJob(code, "f", "record-area-stop", lambda: calls, [0, 1, 2], call_cpu=[5.0] * 3),
                          on_outcome=lambda o: seen.append(o.index) and False)
    assert seen == [0]
    # Killed on the harness's word, not by the call's 5 CPU s timer.  CPU, not wall: the
    # child's CPU only grows while it runs, so a loaded machine cannot fail this.
    assert result.cpu is not None and result.cpu < 2.5, result.cpu


def test_answers_written_before_a_hanging_call_arrive_without_a_wake_up(executor):
    # Calls 1-5 answer within a millisecond of the wake-up at call 1, so nothing
    # wakes the zygote for them; call 6 spins.  The zygote's poll of the area
    # must still bring answer 3 (wrong), and the check stops the child.
    code = "def f(x):\n    if x == 6:\n        while True: pass\n    return -1\n"
    calls = [((i,), {}) for i in range(8)]
    seen = []
    result = executor.run(None, CallsJob(code, "f", "record-area-poll", lambda: calls, list(range(8)), call_cpu=[5.0] * 8),
                          on_outcome=lambda o: seen.append(o.index) or o.index < 3)
    assert seen == [0, 1, 2, 3]
    assert result.cpu is not None and result.cpu < 2.5, result.cpu  # not the 5 CPU s timer (see above)


def test_more_records_than_the_area_holds_arrive_whole_and_in_order(executor):
    # Each answer is ~64 KiB encoded: the area fills, is sealed, and the rest goes through the pipe.
    n = records.SIZE // (64 << 10) + 40
    code = "def f(x):\n    return str(x) + 'y' * (64 << 10)\n"
    calls = [((i,), {}) for i in range(n)]
    result = executor.run(None, CallsJob(code, "f", "record-area-big", lambda: calls, list(range(n))))
    assert result.finished, result.failure_reason()
    assert sorted(result.outcomes) == list(range(n))
    assert all(o.value == str(o.index) + "y" * (64 << 10) for o in result.outcomes.values())


def test_a_sample_writing_garbage_into_the_area_gets_no_verdict_it_did_not_earn(executor):
    # A sample that finds the mapping and appends forged answers for later calls:
    # an answer out of turn is a protocol error, and every answer is dropped.
    code = ("import gc, mmap\n"
            "def f(x):\n"
            "    if x == 0:\n"
            "        for o in gc.get_objects():\n"
            "            if type(o).__name__ == 'Writer':\n"
            "                o.write(b'[5,\"ok\",10,0.0]\\n')\n"
            "    return -1\n")
    calls = [((i,), {}) for i in range(10)]
    result = executor.run(None, CallsJob(code, "f", "record-area-forge", lambda: calls, list(range(10))))
    assert result.protocol_error and not result.outcomes
