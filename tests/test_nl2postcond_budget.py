"""Whose time ran out in a postcondition's evaluation job (#46, #48's rule): the
answer's (its CPU limits: F) or the harness's (the wall clock the machine's
load eats: E, never cached).  No test here times anything: each forces one
limit and asserts the verdict's kind."""
from __future__ import annotations

import platform

import pytest

from pytest_specbench.errors import InfrastructureError, RepeatableError
from pytest_specbench.execution.command import CommandExecutor
from pytest_specbench.pyspec import blocks
from pytest_specbench.pyspec.blocks import BlockOutcome, available, check_blocks, read_blocks

pytestmark = pytest.mark.skipif(available() is not None, reason=str(available()))
FUTEX = {"x86_64": 202, "aarch64": 98}.get(platform.machine())


@pytest.fixture(scope="module")
def command_executor():
    ex = CommandExecutor()
    yield ex
    ex.close()


def test_the_harness_budget_running_out_is_an_infrastructure_error_never_the_samples(command_executor, monkeypatch):
    """HumanEval/15 r9 failed (F) when a loaded machine ate the job's wall clock.  Here the
    wall clock is forced tiny and the CPU budget left large: whatever the answer does (it
    spins), the cases it did not reach are the harness's, E, and not a lasting failure."""
    monkeypatch.setattr(blocks, "WALL_FACTOR", 0.0)
    monkeypatch.setattr(blocks, "WALL_SECONDS", 1.0)
    # (on a loaded machine the keeper may not even have started within the second: E too)
    with pytest.raises(InfrastructureError, match="ran out of its own time|keeper did not start") as err:
        check_blocks(command_executor, "", "while True: pass", [{"inputs": {}, "return_value": 1}],
                     case_seconds=5.0, timeout=30.0)
    assert not isinstance(err.value, RepeatableError)  # the result cache keeps only RepeatableError (#48)


def test_an_answer_that_spends_the_cpu_budget_fails_and_gets_no_more(command_executor):
    """The answer's own time stays F: its child meets the CPU left of the job's budget
    (1 s here, though 5 s per case were allowed), and no later batch starts."""
    cases = [{"inputs": {"k": k}, "return_value": 1} for k in range(3)]
    got = check_blocks(command_executor, "", "while True: pass", cases, case_seconds=5.0, timeout=1.0,
                       batches=[[0], [1], [2]])
    assert [o.kind for o in got] == ["raised"] * 3, got
    assert got[0].line == "timeout" and all("spent the evaluation's 1 CPU seconds" in o.line for o in got[1:]), got


def test_missing_cases_are_the_machines_only_when_the_cpu_budget_was_not_spent():
    records = [{"event": "start", "nonce": "n"}, {"case": 0, "kind": "holds", "nonce": "n"}]
    assert read_blocks(records, "n", 2, timed_out=True, cpu_spent=True)[1].kind == "raised"
    assert read_blocks(records, "n", 2, timed_out=True, cpu_spent=False)[1].kind == "budget"
    assert read_blocks(records, "n", 2, timed_out=False, cpu_spent=False)[1] == \
        BlockOutcome("raised", "", "the evaluation ended early")


@pytest.mark.skipif(FUTEX is None, reason="futex's system call number is known here for x86_64 and aarch64 only")
def test_an_answer_cannot_sleep_to_pass_its_slowness_off_as_the_machines(command_executor):
    """A child that could wait without spending CPU (a futex wait, a blocking write to its
    full answer pipe) would reach its wall deadline with its CPU limit unspent, which the
    harness counts as the machine's load (E).  Both ways are closed: the wait is denied
    (EPERM at once), the full pipe refuses the write (EAGAIN), and the case is F."""
    block = (
        "import ctypes, os\n"
        "if mode == 'futex':\n"
        "    libc = ctypes.CDLL(None, use_errno=True)\n"
        "    word, two_seconds = ctypes.c_int(0), (ctypes.c_long * 2)(2, 0)\n"
        "    got = libc.syscall(nr, ctypes.byref(word), 0, 0, two_seconds, 0, 0)  # FUTEX_WAIT\n"
        "    assert got == -1 and ctypes.get_errno() == 1, (got, ctypes.get_errno())  # EPERM, not ETIMEDOUT\n"
        "else:\n"
        "    while True:\n"
        "        os.write(9, b'x' * 65536)\n"
    )
    cases = [{"inputs": {"mode": "futex", "nr": FUTEX}, "return_value": 1},
             {"inputs": {"mode": "pipe", "nr": FUTEX}, "return_value": 1}]
    futex, pipe = check_blocks(command_executor, "", block, cases, case_seconds=1.0, timeout=30.0,
                               batches=[[0], [1]])
    assert (futex.kind, futex.line) == ("holds", ""), futex
    # its 1 MB of bytes filled the pipe: no answer line could follow, an F, not the machine's E
    assert (pipe.kind, pipe.line) == ("raised", "the spec process ended without an answer"), pipe


def test_a_spec_process_that_under_reports_its_cpu_is_charged_what_it_hid(command_executor):
    """--nl2postcond-time=upstream reads each case's CPU seconds; the spec process writes
    them and runs the answer, so a hostile one can write 0.0.  The zygote's rusage of the
    child is not the child's to write: the CPU the figures do not explain is charged to
    the batch's cases, and the lying case fails upstream's limit as an honest slow one does."""
    from pytest_specbench.benchmarks.nl2postcond.evaluate import over_upstream_time

    # One job, each case a batch (a child) of its own: a liar and an honest block that spend the
    # same CPU, and an honest fast one (three jobs until session 20; 10 million steps each, now 4).
    block = ("n = 0\nwhile n < spin: n += 1\n"
             "if liar:\n    import os\n"
             "    os.write(9, b'{\"kind\": \"holds\", \"exc\": \"\", \"line\": \"\", \"cpu\": 0.0}\\n')\n    os._exit(0)\n"
             "assert return_value >= 0")
    cases = [{"inputs": {"spin": spin, "liar": liar}, "return_value": 1}
             for spin, liar in ((4_000_000, True), (4_000_000, False), (10, False))]
    lied, slow, fast = check_blocks(command_executor, "", block, cases, case_seconds=5.0, timeout=60,
                                    batches=[[0], [1], [2]])
    assert lied.kind == slow.kind == fast.kind == "holds"
    # the liar wrote 0.0; 4 million steps are ~0.2 CPU s, over a 0.1 s reference's limit (0.1 s)
    assert lied.cpu > 0.1 and slow.cpu > 0.1, (lied, slow)
    assert [o.exc_type for o in over_upstream_time([lied, slow], [0.1, 0.1])] == ["TimeLimit", "TimeLimit"]
    assert fast.cpu < 0.05 and over_upstream_time([fast], [0.01]) == [fast]  # an honest batch is charged nothing


def test_a_case_that_spends_its_cpu_limit_fails_alone_and_its_batch_goes_on(command_executor):
    """Each case has a CPU limit of its own (its child's timer), which stops a Python loop and
    big-int arithmetic in C alike (HumanEval/49's ``return_value ** p``); the case is a
    time-out (F), and the cases after it in its batch are evaluated by a fresh child, not
    failed with it (a time-out counts as a kill under ``--nl2postcond-kill=any``)."""
    block = ("if return_value == 1:\n    while True: pass\n"
             "if return_value == 2:\n    big = 3 ** (10 ** 9)\n"
             "assert return_value != 4")
    cases = [{"inputs": {"k": k}, "return_value": k} for k in range(5)]
    got = check_blocks(command_executor, "", block, cases, case_seconds=0.3, timeout=60.0, batches=[[0, 1, 2, 3, 4]],
                       case_timer=True)
    assert [(o.kind, o.line) for o in got] == [("holds", ""), ("raised", "timeout"), ("raised", "timeout"),
                                               ("holds", ""), ("violated", "")], got


def test_once_a_decisive_case_has_not_held_the_rest_is_skipped(command_executor):
    """nl2postcond's reference outputs decide test-set correctness: once one fails (here case 1,
    violated, or case 0, a time-out), the keeper evaluates nothing more (``skipped``, never a
    pass, and no kill: completeness counts correct postconditions only).  A decisive case that
    holds stops nothing."""
    cases = [{"inputs": {"k": k}, "return_value": k} for k in range(4)]
    block = "while return_value == 0 and k < 0: pass\nassert return_value != 1"
    got = check_blocks(command_executor, "", block, cases, batches=[[0], [1], [2, 3]], decisive=[1])
    assert [o.kind for o in got] == ["holds", "violated", "skipped", "skipped"], got
    got = check_blocks(command_executor, "", block, cases, batches=[[0], [1], [2, 3]], decisive=[0, 2])
    assert [o.kind for o in got] == ["holds", "violated", "holds", "holds"], got
    spin = [{"inputs": {"k": -1}, "return_value": 0}] + cases[1:]
    got = check_blocks(command_executor, "", block, spin, case_seconds=0.3, batches=[[0, 2], [1, 3]], decisive=[0],
                       case_timer=True)
    assert [(o.kind, o.line) for o in got] == [("raised", "timeout"), ("skipped", got[1].line),
                                               ("skipped", got[2].line), ("skipped", got[3].line)], got
    assert got[1].line.startswith("not evaluated")


def test_cases_past_a_jobs_size_go_to_several_jobs_with_the_same_outcomes(command_executor, monkeypatch):
    """HumanEval/15's corpus holds 3.4 GB of bad outputs: one job of them filled the harness's
    memory (and would not fit the sandbox's /tmp).  Past ``JOB_CASE_BYTES`` of case text the
    batches go to several jobs in turn, whole batches each; a case's outcome is the same either
    way, and once a decisive case has not held the later jobs do not run (``skipped``)."""
    cases = [{"inputs": {"k": k}, "return_value": "x" * 50 + str(k)} for k in range(6)]
    block = "assert not return_value.endswith(('1', '4'))"
    batches = [[0, 1], [2], [3, 4], [5]]
    one = check_blocks(command_executor, "", block, cases, batches=batches)
    # each case's text is 105 characters: runs of whole batches, a batch over the limit alone and whole
    assert [[len(b) for b in group] for group, _ in blocks.job_groups(cases, batches, limit=320)] == [[2, 1], [2, 1]]
    assert [[len(b) for b in group] for group, _ in blocks.job_groups(cases, batches, limit=150)] == [[2], [1], [2], [1]]
    jobs = []
    real_run = command_executor.run
    monkeypatch.setattr(command_executor, "run", lambda p, job: jobs.append(job) or real_run(p, job))
    monkeypatch.setattr(blocks, "JOB_CASE_BYTES", 320)
    several = check_blocks(command_executor, "", block, cases, batches=batches)
    assert len(jobs) == 2 and [o.kind for o in several] == [o.kind for o in one] == \
        ["holds", "violated", "holds", "holds", "violated", "holds"], several
    jobs.clear()
    stopped = check_blocks(command_executor, "", block, cases, batches=batches, decisive=[1])
    assert len(jobs) == 1, "a later job ran after a decisive case had not held"
    assert [o.kind for o in stopped] == ["holds", "violated"] + ["skipped"] * 4, stopped
