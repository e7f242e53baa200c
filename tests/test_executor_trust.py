"""The Python executor against a sample that attacks the harness's own state (issue #50).

One test per class of the blind round: residue of an earlier job, the check's
phase read through harness frames and through ``gc``, CPU the sample's own
clock does not count (a forked helper, rewritten timers), crafted records,
hangs and floods in code the harness runs on the sample's objects, IPC
objects that outlive the job, and a numpy duck type.  Each fails on the code
before #50 but one guard (threads still start and their CPU counts).  Cheap:
small limits, several hostile cases per job where one job can hold them.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import os
import time

import pytest

from pytest_specbench.execution.limits import Limits
from pytest_specbench.execution.python import CallsJob, JobResult
from pytest_specbench.execution.wire import Opaque, dumps, loads

LIMITS = Limits(call_cpu=0.3, startup_cpu=0.5, memory_mb=512, processes=16, tmp_mb=16)
HANG_GUARD = 60.0  # not a speed check: a hang guard (each job here ends in about a second of CPU)
ROOT = os.geteuid() == 0


@pytest.fixture(scope="module")
def executor(python_executor):
    return python_executor


# The limit of a call that must time out (the job's own: the executor's stays LIMITS.call_cpu):
# it stops at a third of the CPU it burnt at 0.3 s (session 21).
BURN = 0.1


def run(executor, code: str, calls=(((), {}),), key: str = "", entry: str = "f",
        call_cpu: float | None = None) -> JobResult:
    calls = list(calls)
    key = key or f"trust:{os.environ.get('PYTEST_CURRENT_TEST', '')}:{code}:{calls!r}"  # one input set per test
    t0 = time.monotonic()
    result = executor.run(None, CallsJob(code, entry, key, lambda: calls, range(len(calls)),
                                         call_cpu=None if call_cpu is None else [call_cpu] * len(calls)))
    assert time.monotonic() - t0 < HANG_GUARD
    assert executor._proc.poll() is None, "the sample killed the zygote"
    return result


# ----------------------------------------------------------------- residue

def test_no_residue_of_the_previous_job_in_the_record_area(executor):
    run(executor, "def f():\n    return 'SECRET-OF-THE-LAST-JOB'\n")
    # Every mapping the process can name, read whole: the previous job's records were
    # behind a cleared header in the reused area before #50.
    code = ("import gc, mmap\ndef f():\n"
            "    areas = [o for o in gc.get_objects() if isinstance(o, mmap.mmap)]\n"
            "    return [bool(areas), any(b''.join([b'SECRET-OF-', b'THE-LAST-JOB']) in a[:] for a in areas)]\n")
    assert run(executor, code).outcomes[0].value == [True, False]


# ------------------------------------------------------------ phase detection

# Everything reachable from the sample's frames and from gc, searched for a marker.
FIND = """
import gc, sys
def strings(obj, depth=0, seen=None):
    seen = set() if seen is None else seen
    if id(obj) in seen or depth > 6:
        return
    seen.add(id(obj))
    if isinstance(obj, (str, bytes)):
        yield obj if isinstance(obj, str) else obj.decode('latin-1')
    elif isinstance(obj, dict):
        for k, v in list(obj.items()):
            yield from strings(k, depth + 1, seen)
            yield from strings(v, depth + 1, seen)
    elif isinstance(obj, (list, tuple, set, frozenset)):
        for v in list(obj):
            yield from strings(v, depth + 1, seen)
    elif hasattr(obj, '__dict__') and not isinstance(obj, type(sys)):
        yield from strings(vars(obj), depth + 1, seen)
def found(marker, where):
    return any(marker in s for s in where)
"""


def test_the_phase_is_not_in_any_harness_frame(executor):
    code = FIND + ("def f(x):\n    frame, seen = sys._getframe(1), []\n"
                   "    while frame is not None:\n        seen.extend(strings(frame.f_locals))\n"
                   "        frame = frame.f_back\n"
                   "    return found(''.join([':', 'cvts']), seen)\n")  # joined at run time: the code (and its folded constants) is the sample's own"
    result = run(executor, code, calls=[((1,), {})], key="trust:HumanEval/0:cvts")
    assert result.outcomes[0].value is False, "the input set's key (the check's phase) reached the sample"


def test_no_other_jobs_inputs_in_the_process(executor):
    run(executor, "def f(x):\n    return x\n", calls=[(("FUNCTIONAL-INPUT-7",), {})], key="trust:gc:functional")
    code = FIND + ("def f(x):\n"
                   "    held = [o for o in gc.get_objects() if isinstance(o, (list, tuple, dict))]\n"
                   "    return [found(''.join(['CONTRACT-', 'INPUT-3']), strings(held)),\n"
                   "            found(''.join(['FUNCTIONAL-', 'INPUT-7']), strings(held))]\n")
    result = run(executor, code, calls=[(("CONTRACT-INPUT-3",), {})], key="trust:gc:cvts")
    # Its own input, yes; the other set's (the zygote's held input sets before #50), no.
    assert result.outcomes[0].value == [True, False]


# ------------------------------------------------------------------ time

def test_a_sample_cannot_fork_work_away_from_its_clock(executor):
    # Before #50 a forked helper did 4 CPU s uncounted; now every way to a second process fails.
    code = ("import os, subprocess, multiprocessing\ndef f():\n    seen = []\n"
            "    for attempt in (os.fork, lambda: subprocess.run(['true']),\n"
            "                    lambda: multiprocessing.get_context('fork').Process(target=int).start()):\n"
            "        try:\n            if attempt() == 0:\n                os._exit(0)\n"
            "            seen.append('started')\n"
            "        except BaseException as exc:\n            seen.append(type(exc).__name__)\n"
            "    return seen\n")
    assert run(executor, code).outcomes[0].value == ["PermissionError"] * 3


def test_threads_still_run_and_their_cpu_counts(executor):
    code = ("import threading\ndef f(spin):\n    out = []\n"
            "    def work():\n        n = 0\n        while spin:\n            n += 1\n        out.append(n)\n"
            "    t = threading.Thread(target=work, daemon=True)\n    t.start()\n    t.join()\n    return len(out)\n")
    result = run(executor, code, calls=[((False,), {}), ((True,), {})])
    assert result.outcomes[0].value == 1  # a thread starts (clone with CLONE_THREAD is allowed)
    assert result.outcomes[1].status == "timeout"  # and its CPU is the call's


def test_a_sample_that_stops_its_timers_and_rewrites_t0_times_out(executor):
    code = ("import ctypes, signal, sys, time\ndef f():\n"
            "    for which, sig in ((signal.ITIMER_PROF, signal.SIGPROF), (signal.ITIMER_REAL, signal.SIGALRM)):\n"
            "        signal.setitimer(which, 0)\n        signal.signal(sig, signal.SIG_IGN)\n"
            "    start = time.process_time()\n    while time.process_time() - start < 1.5:\n        pass\n"
            "    frame = sys._getframe(1)\n"
            "    if 't0' in frame.f_locals:\n"
            "        frame.f_locals['t0'] = time.process_time()\n"
            "        ctypes.pythonapi.PyFrame_LocalsToFast(ctypes.py_object(frame), ctypes.c_int(0))\n"
            "    return 1\n")
    result = run(executor, code, call_cpu=BURN)
    outcome = result.outcomes[0]
    assert outcome.status == "timeout", (outcome, result.failure_reason())
    assert "measured outside" in result.killed


def test_a_call_that_overruns_in_c_code_times_out_and_the_next_call_runs(executor):
    # sum() over a range never yields to the child's own timer; the outside clock stops it,
    # and the calls after it run in a fresh child (before #50: the job's CPU rlimit killed it all).
    code = "def f(k):\n    return sum(range(10 ** 10)) if k == 0 else k\n"
    result = run(executor, code, calls=[((0,), {}), ((7,), {})], call_cpu=BURN)
    assert result.outcomes[0].status == "timeout" and result.stopped_outside == 0, result
    assert result.outcomes[1].value == 7 and result.finished


# --------------------------------------------------------------- records

WRITER = "import gc\nWRITER = [o for o in gc.get_objects() if type(o).__name__ == 'Writer'][0]\n"


@pytest.mark.parametrize("record", [
    b'[' + b'9' * 5000 + b',"ok",1,0.0]',  # int() of 5,000 digits raised in the parser (E)
    b'[0,"raise",["' + b'E' * 300 + b'",false,false,""],0.0]',  # a name over its cap
    b'[0,"ok",1,1e999]',  # an infinite CPU figure
    b'[0,"timeout","whenever",0.1]',
    b'[0,"okhash",["d",-1,""],0.0]',
    b'\xff\xfe not json',
    b'["done"]',  # an end with the call unanswered
], ids=["5000-digit index", "long name", "infinite cpu", "bad timeout", "negative count", "garbage", "early done"])
def test_a_malformed_record_is_the_samples_failure(executor, record):
    line = record + b"\n"
    # Then the child ends: on the code before #50 no honest record came after it to look forged.
    code = WRITER + f"import os\ndef f():\n    WRITER.write({line!r})\n    os._exit(0)\n"
    result = run(executor, code)
    assert not result.outcomes and result.protocol_error, result
    assert "malformed" in result.protocol_error or "forged" in result.protocol_error
    assert "\n" not in result.protocol_error and len(result.protocol_error) < 300


def test_an_undecodable_tagged_value_is_a_value_error(executor):
    # {"c": [1]} made the decoder raise IndexError (E) when the check read the value.
    code = WRITER + "import os\ndef f():\n    WRITER.write(b'[0,\"ok\",{\"c\":[1]},0.0]\\n')\n    os._exit(0)\n"
    outcome = run(executor, code).outcomes[0]
    with pytest.raises(ValueError):
        outcome.value


# ------------------------------------- harness code on the sample's objects

HOSTILE_EXCEPTIONS = """
import time
class LoopingStr(Exception):
    def __str__(self):
        while True:
            pass
class SleepingStr(Exception):
    def __str__(self):
        time.sleep(3600)
class Meta(type):
    @property
    def __name__(cls):
        while True:
            pass
class LoopingName(Exception, metaclass=Meta):
    pass
class LoopingClass(AssertionError):
    @property
    def __class__(self):
        while True:
            pass
Huge = type('H' * 20_000_000, (Exception,), {})
KINDS = {'str': LoopingStr, 'sleep': SleepingStr, 'name': LoopingName, 'class': LoopingClass, 'huge': Huge}
def f(kind):
    if kind == 'message':
        raise ValueError('m' * 20_000_000)
    raise KINDS[kind]()
"""
KINDS = ["str", "sleep", "name", "class", "huge", "message"]


@pytest.fixture(scope="module")
def hostile_exceptions(executor):
    t0 = time.monotonic()
    result = run(executor, HOSTILE_EXCEPTIONS, calls=[((kind,), {}) for kind in KINDS], key="trust:exceptions")
    return result, time.monotonic() - t0


def test_hangs_in_the_harness_reading_an_exception_are_bounded(hostile_exceptions):
    # Before #50 the first of these ran the child to its whole-job limits; each is now one answer.
    result, _ = hostile_exceptions
    got = {kind: result.outcomes.get(i) for i, kind in enumerate(KINDS)}
    assert all(o is not None and o.status == "raise" for o in got.values()), result.failure_reason()
    assert [got[k].exc_type for k in ("str", "sleep", "name")] == ["LoopingStr", "SleepingStr", "LoopingName"]
    assert got["str"].message == got["sleep"].message == ""
    assert got["class"].assertion  # the real type's MRO, not its looping __class__


def test_floods_through_names_and_messages_are_capped(hostile_exceptions):
    result, _ = hostile_exceptions
    huge, message = result.outcomes[4], result.outcomes[5]
    assert huge.exc_type == "H" * 200 and len(message.message) <= 200
    assert len(result.output) < 1 << 16


# -------------------------------------------------------------------- IPC

IPC = """
import ctypes, ctypes.util, os
libc = ctypes.CDLL(None, use_errno=True)
rt = ctypes.CDLL(ctypes.util.find_library('rt') or None, use_errno=True)
rt.mq_open.restype = ctypes.c_int
def f(make):
    if make:
        shm = libc.shmget(0x5BE50, 4096, 0o1600)  # IPC_CREAT | 0600
        msg = libc.msgget(0x5BE51, 0o1600)
        sem = libc.semget(0x5BE52, 1, 0o1600)
        mq = rt.mq_open(b'/specbench50', os.O_CREAT | os.O_RDWR, 0o600, None)
        return [shm >= 0, msg >= 0, sem >= 0, mq >= 0]
    return [libc.shmget(0x5BE50, 0, 0) >= 0, libc.msgget(0x5BE51, 0) >= 0, libc.semget(0x5BE52, 0, 0) >= 0,
            rt.mq_open(b'/specbench50', os.O_RDONLY, 0, None) >= 0]
"""


def _host_has_ipc() -> list[bool]:
    libc = ctypes.CDLL(None, use_errno=True)
    rt = ctypes.CDLL(ctypes.util.find_library("rt") or None, use_errno=True)
    return [libc.shmget(0x5BE50, 0, 0) >= 0, libc.msgget(0x5BE51, 0) >= 0, libc.semget(0x5BE52, 0, 0) >= 0,
            rt.mq_open(b"/specbench50", os.O_RDONLY, 0, None) >= 0]


def _remove_host_ipc() -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    rt = ctypes.CDLL(ctypes.util.find_library("rt") or None, use_errno=True)
    for get, ctl, key, extra in ((libc.shmget, libc.shmctl, 0x5BE50, ()), (libc.msgget, libc.msgctl, 0x5BE51, ()),
                                 (libc.semget, libc.semctl, 0x5BE52, (0,))):
        ident = get(key, *extra, 0) if extra else get(key, 0, 0)
        if ident >= 0:
            ctl(ident, *extra, 0, None)  # IPC_RMID
    rt.mq_unlink(b"/specbench50")


def test_ipc_objects_do_not_outlive_their_job(executor):
    if not executor.isolation.get("network"):
        pytest.skip("no namespaces on this machine (the IPC namespace comes with them)")
    try:
        made = run(executor, IPC, calls=[((True,), {})], key="trust:ipc:make").outcomes[0].value
        assert made == [True, True, True, True]
        assert run(executor, IPC, calls=[((False,), {})], key="trust:ipc:look").outcomes[0].value == [False] * 4
        assert _host_has_ipc() == [False] * 4
    finally:
        _remove_host_ipc()  # what a failing run left on the host


# ------------------------------------------------------------------ numpy

def test_a_numpy_duck_type_is_not_a_number(executor):
    code = ("class Duck:\n    __module__ = 'numpy'\n    ndim = 0\n    def item(self):\n        return 3\n"
            "def f():\n    return Duck()\n")
    # EvalPlus compares the object itself: it fails; before #50 it counted as 3.
    assert isinstance(run(executor, code).outcomes[0].value, Opaque)


def test_real_numpy_scalars_still_count_as_their_value():
    numpy = pytest.importorskip("numpy")
    subclass = type("Sub", (numpy.int64,), {})
    assert [loads(dumps(v)) for v in (numpy.int64(3), numpy.float32(1.5), numpy.array(2), subclass(4))] == [3, 1.5, 2, 4]
    assert isinstance(loads(dumps(numpy.array([1, 2]))), Opaque)
