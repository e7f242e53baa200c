"""The Python call runner: what a sandboxed child does for the ``python`` executor.

Forked by the zygote (:mod:`.sandbox`) for each job: it defines the sample's
code and calls its entry point on each input, under per-call CPU and wall
timers, and writes one JSON line per call on fd 3:
``[i, "ok", value, cpu_s]`` (value in the :mod:`.wire` codec),
``[i, "okstr", [digest, length, prefix], cpu_s]`` (a long string),
``[i, "okdigest", [digest, length, prefix], cpu_s]`` (a large output's encoding),
``[i, "okhash", [digest, strings, prefix], cpu_s]`` (a large list of strings or of
tuples of strings, by :func:`.wire.value_hash`; digest null: a list or tuple outside its domain),
``[i, "raise", [type, is_assertion, is_explicit_value_or_type_error, message], cpu_s]``,
``[i, "timeout", null, cpu_s]``, ``["load", "error", message]`` and finally
``["done"]``; before any of them, ``["ready"]`` once the sandbox is set up (or
``["load", "setup", message]`` if that failed), and ``["defined"]`` once the
sample's code has run (the zygote's outside clock starts the calls' budget
there: :class:`.sandbox.Watch`).  Sample code can write to fd 3 and into the
record area too, so the harness trusts only what a sample could have said
anyway: one record per call, in call order, each field within its cap.

What this process holds (issue #50): the sample, this job's inputs (read from
the zygote's sealed memfd after the fork) and this job's settings; never the
input set's key (it names the check), another job's inputs or records (the
record area is fresh per job), or anything the verdict trusts: the time the
verdict uses is the zygote's outside clock, and the records are data the
harness validates.  The sample cannot fork (:func:`forbid_fork`), so the
kernel's count for this process is the job's.  Whatever this code reads of a
sample's objects (an exception's message, its type's name) it reads under a
timer, with caps, or through the builtin types' own slots.
"""
from __future__ import annotations

import ctypes
import dis
import json
import mmap
import os
import pickle
import platform
import resource
import signal
import sys
import time

from pytest_specbench.execution import wire
from pytest_specbench.execution.records import WAKE_CPU_SECONDS, Writer
from pytest_specbench.execution.enter import base_env, enter_child
from pytest_specbench.execution.sandbox import _libc

# Modules most samples import: loading them once in the zygote makes every fork cheaper.
PRELOAD = ("math", "re", "collections", "itertools", "functools", "heapq", "bisect", "string",
           "typing", "hashlib", "statistics", "fractions", "decimal", "random", "operator",
           "copy", "datetime", "json", "cmath", "array", "textwrap", "unicodedata")


_RAISE_VARARGS = dis.opmap["RAISE_VARARGS"]


_TRACEBACK = BaseException.__dict__["__traceback__"].__get__  # the slot, not a subclass's property
_TYPE_NAME = type.__dict__["__name__"].__get__  # the C name, not a metaclass's property
_IS_SUBTYPE = type.__subclasscheck__  # (base, cls): the real MRO, no __class__, no hook of the sample's
_MAX_NAME, _MAX_MESSAGE = 200, 200  # the harness refuses a name over 200 characters


def _raised_by_statement(exc: BaseException) -> bool:
    """Was ``exc`` raised by a ``raise`` statement (not by an operation that failed)?"""
    tb = _TRACEBACK(exc)
    if tb is None:
        return False
    while tb.tb_next is not None:
        tb = tb.tb_next
    code = tb.tb_frame.f_code.co_code
    return 0 <= tb.tb_lasti < len(code) and code[tb.tb_lasti] == _RAISE_VARARGS


class _CallTimeout(BaseException):
    """Raised in the child by the per-call timers."""


# ------------------------------------------------------------------ no fork

# (audit arch, fork/vfork syscall numbers, clone, clone3, seccomp) by machine; see forbid_fork.
_SYSCALLS = {"x86_64": (0xC000003E, (57, 58), 56, 435, 317), "aarch64": (0xC00000B7, (), 220, 435, 277)}
_CLONE_THREAD = 0x00010000


class _SockFilter(ctypes.Structure):
    _fields_ = [("code", ctypes.c_ushort), ("jt", ctypes.c_ubyte), ("jf", ctypes.c_ubyte), ("k", ctypes.c_uint)]


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(_SockFilter))]


def _fork_filter() -> _SockFprog | None:
    """The seccomp program of :func:`forbid_fork`, built once when the zygote
    imports this module (building it costs more than a fork), or None on a
    machine without a known syscall table."""
    table = _SYSCALLS.get(platform.machine())
    if table is None:
        return None
    arch, forks, clone, clone3, _ = table
    ld, jeq, jset, jge, ret = 0x20, 0x15, 0x45, 0x35, 0x06
    allow, eperm, enosys = 0x7FFF0000, 0x00050000 | 1, 0x00050000 | 38
    prog = [(ld, 0, 0, 4)]  # seccomp_data.arch
    prog += [(jeq, 1, 0, arch), (ret, 0, 0, eperm)]  # another ABI (int 0x80 on x86_64): refused
    prog += [(ld, 0, 0, 0)]  # seccomp_data.nr
    prog += [(jge, 0, 1, 0x40000000), (ret, 0, 0, eperm)]  # x32 numbering
    for nr in forks:
        prog += [(jeq, 0, 1, nr), (ret, 0, 0, eperm)]
    prog += [(jeq, 0, 1, clone3), (ret, 0, 0, enosys)]
    prog += [(jeq, 1, 0, clone), (ret, 0, 0, allow)]
    prog += [(ld, 0, 0, 16)]  # clone's flags: the low word of args[0]
    prog += [(jset, 0, 1, _CLONE_THREAD), (ret, 0, 0, allow), (ret, 0, 0, eperm)]
    filters = (_SockFilter * len(prog))(*[_SockFilter(*ins) for ins in prog])
    fprog = _SockFprog(len(prog), filters)
    fprog._keep = filters  # the program points into it
    return fprog


_FORK_FILTER = _fork_filter()


def forbid_fork() -> bool:
    """Make ``fork``, ``vfork`` and a ``clone`` that is not a thread fail with
    EPERM for this process and its threads (a seccomp filter: no code of the
    sample's can lift it; it needs no_new_privs, set by ``enter_child``).
    EvalPlus's guard disables ``os.fork`` too; here it is the kernel's rule,
    so the process CPU clock the zygote reads is all the job's CPU (issue
    #50: 4 CPU s done in a forked helper went uncounted).  Threads stay
    allowed (their CPU is the process's).  ``clone3`` answers ENOSYS (its
    flags are in memory a filter cannot read), so the C library starts
    threads with ``clone``.  Returns False on a machine without a known
    syscall table (the fork is then not forbidden)."""
    if _FORK_FILTER is None:
        return False
    # SECCOMP_FILTER_FLAG_SPEC_ALLOW: where the kernel disables speculative store bypass for
    # every seccomp'd process (spec_store_bypass "prctl and seccomp"), the sample would run
    # slower than the reference's figures were taken at; keep the machine's own setting.
    seccomp_set_mode_filter, spec_allow = 1, 4
    nr = _SYSCALLS[platform.machine()][4]
    if _libc.syscall(nr, seccomp_set_mode_filter, spec_allow, ctypes.byref(_FORK_FILTER)) == 0:
        return True
    pr_set_seccomp, seccomp_mode_filter = 22, 2  # a kernel without the flag (before 4.17)
    if _libc.prctl(pr_set_seccomp, seccomp_mode_filter, ctypes.byref(_FORK_FILTER), 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "seccomp filter refused")
    return True


def _read_inputs(fd: int) -> list:
    """This job's input set, from the zygote's sealed memfd (read before the sample runs)."""
    size = os.fstat(fd).st_size
    with mmap.mmap(fd, size, prot=mmap.PROT_READ) as view:
        return pickle.loads(view)


def run_child(job: dict, zygote, jobdir: str, pipes: dict) -> None:
    """Runs in the forked child; never returns."""
    exit_ = os._exit  # bound before sample code can touch os
    # Nothing naming the input set stays here: the zygote's handle for it goes, and its
    # memfd is read now and closed (with every other fd) by enter_child.
    job.pop("key", None)
    calls = _read_inputs(pipes["inputs"]) if pipes.get("inputs") is not None else job["calls"]
    # Records go to the shared record area (see .records): it survives this
    # process, so the answers given before a crash reach the harness.
    records = Writer(pipes["area"], 3)  # enter_child puts the result pipe on fd 3
    send, wake = records.write, records.wake
    try:
        lim = job["limits"]
        # A call may run to ``margin`` times its limit: the harness measures a
        # call that ends between the two again (see PythonExecutor.run).
        margin = float(job.get("margin") or 1.0)
        cpu_total = int(sum(job["call_cpu"]) * margin + lim["startup_cpu"]) + 1
        mem = lim["memory_mb"] << 20
        out = pipes["outputs"][0]
        enter_child(jobdir, zygote.uid, {1: out, 2: out, 3: pipes["result"]}, base_env(jobdir),
                    {resource.RLIMIT_CPU: cpu_total, resource.RLIMIT_AS: mem,
                     resource.RLIMIT_FSIZE: lim["file_bytes"]}, lim["processes"])
        forbid_fork()
        sys.setrecursionlimit(max(sys.getrecursionlimit(), 3000))
        if job.get("value_hash_over") is not None and sys.flags.hash_randomization:
            # Value hashes are compared across processes, runs and hosts (wire.value_hash).
            raise RuntimeError("the sandbox's Python runs without a fixed hash seed (PYTHONHASHSEED)")
    except BaseException as exc:  # noqa: BLE001
        send((json.dumps(["load", "setup", f"sandbox setup failed: {exc!r}"]) + "\n").encode())
        exit_(121)
    # Written before any sample code runs, so the harness can tell a sandbox that
    # failed to set up (its error) from a sample forging that record (its failure).
    send(b'["ready"]\n')

    # Everything below may meet hostile code: keep our own references.
    real_assertion, real_value, real_type = AssertionError, ValueError, TypeError
    isinstance_, type_, zip_ = isinstance, type, zip  # a sample may replace builtins
    dumps, process_time, setitimer = wire.dumps, time.process_time, signal.setitimer
    itimer_prof, itimer_real, jdumps = signal.ITIMER_PROF, signal.ITIMER_REAL, json.dumps
    def emit(record) -> None:
        send((jdumps(record) + "\n").encode())

    # The timers raise only while armed, so a signal that arrives just as a call
    # ends cannot escape into the harness's own code; they repeat (every 50 ms)
    # so that a sample swallowing one timeout gets another.
    # stopped_by: the signal that first stopped the armed call, so the harness can
    # tell a wall stop (SIGALRM: a loaded machine, a sleeper; measured again) from
    # a CPU stop (SIGPROF; decided at once).  The CPU timer fires at its tick, up to
    # a few ms before process_time() reaches the limit, so the CPU figure alone
    # cannot tell them apart (docs/timing.md).
    armed, stopped_by, sigalrm = [False], [0], signal.SIGALRM

    def on_timer(signum, frame):
        if armed[0]:
            if not stopped_by[0]:
                stopped_by[0] = signum
            raise _CallTimeout()

    def arm(cpu: float, wall: float) -> None:
        armed[0] = True
        stopped_by[0] = 0
        setitimer(itimer_prof, cpu, 0.05)
        setitimer(itimer_real, wall, 0.05)

    def disarm() -> None:
        armed[0] = False
        setitimer(itimer_prof, 0)
        setitimer(itimer_real, 0)

    signal.signal(signal.SIGPROF, on_timer)
    signal.signal(signal.SIGALRM, on_timer)
    str_ = str

    def describe(exc: BaseException, flags: bool = False) -> tuple:
        """(type name, message[, is an assertion, is a stated ValueError/TypeError]) of
        the sample's exception, read under a short timer (a ``__str__`` or
        ``__name__`` of the sample's may loop: issue #50) and capped; the name
        and the kinds come from the type's C slots, never from sample code."""
        cls = type_(exc)
        name = _TYPE_NAME(cls)[:_MAX_NAME]
        assertion = _IS_SUBTYPE(real_assertion, cls)
        stated = (_IS_SUBTYPE(real_value, cls) or _IS_SUBTYPE(real_type, cls)) and _raised_by_statement(exc)
        message = ""
        try:
            try:
                arm(0.2, 0.5)
                text = str_(exc)  # an exact str or a subclass (str() refuses anything else)
                message = str_.__getitem__(text, slice(0, _MAX_MESSAGE))  # the slot: an exact str
            finally:
                armed[0] = False
        except BaseException:  # noqa: BLE001 - a looping, sleeping or raising __str__: no message
            message = ""
        return (name, message, assertion, stated) if flags else (name, message)
    namespace = {"__name__": "__sample__", "__builtins__": __builtins__}
    try:
        try:
            # The wall bound scales as the calls' do (--specbench-wall-factor): a loaded machine
            # that needs a larger factor for the calls needs it for the definition too.
            arm(lim["startup_cpu"], lim["startup_cpu"] * lim["wall_factor"])
            # dont_inherit: this module's own ``from __future__ import annotations``
            # must not leak into the sample (its annotations would go unevaluated,
            # and ``-> List[str]`` without the import would pass where Python fails).
            exec(compile(job["code"], "<sample>", "exec", dont_inherit=True), namespace)  # noqa: S102 - the sandboxed child
        finally:
            disarm()
        fn = namespace.get(job["entry_point"])
        if not callable(fn):
            emit(["load", "error", f"entry point {job['entry_point']!r} not defined"])
            exit_(0)
    except _CallTimeout:
        emit(["load", "error", f"defining the sample took over {lim['startup_cpu']} s"])
        exit_(0)
    except BaseException as exc:  # noqa: BLE001
        name, message = describe(exc)
        emit(["load", "error", f"{name}: {message}"])
        exit_(0)
    send(b'["defined"]\n')

    # A long string result may be sent as its digest (see PythonExecutor.run).
    digest_over = job.get("str_digest_over")
    str_, string_digest = str, wire.string_digest
    # A large exact output may be sent as the digest of its encoding (see PythonExecutor.run).
    digest_bytes, encode_capped = job.get("encoded_digest_over"), wire.encode_capped
    # ... per call when the job gives a list (only where the expected output is digest-comparable).
    digest_each = digest_bytes if type(digest_bytes) is list else [digest_bytes] * len(job["indices"])
    list_, tuple_, len_ = list, tuple, len
    # A list or tuple of strings (or of tuples of strings) may be sent as its value hash (see PythonExecutor.run):
    # per call, at least how many strings (0: the expected output is known by its value hash).
    hash_over, value_hash = job.get("value_hash_over"), wire.value_hash
    hash_each = hash_over if type(hash_over) is list else [hash_over] * len(job["indices"])
    # The zygote is woken at most once per millisecond of our CPU time: it
    # forwards the records, so a check that sees a wrong answer stops us
    # within about a millisecond of work (and a call that hangs does not hold
    # back the answers before it: the zygote also looks every 20 ms).
    wake_every, woken, pending = WAKE_CPU_SECONDS, -1.0, False
    for i, cpu_limit, digest_bytes, hash_over in zip_(job["indices"], job["call_cpu"], digest_each, hash_each):
        cpu_limit = cpu_limit * margin
        t0 = process_time()
        if pending and t0 - woken >= wake_every:
            wake()
            woken = t0
            t0 = process_time()
        pending = True
        args, kwargs = calls[i]
        encoded = unserializable = None
        try:
            try:
                arm(cpu_limit, cpu_limit * lim["wall_factor"] + 0.5)
                out = fn(*args, **kwargs)
                try:
                    # For the canonical output (hash_over > 0), not a flat list of floats: EvalPlus
                    # compares those with a tolerance (is_floats), which a hash cannot.
                    hashed = None if hash_over is None else value_hash(out, hash_over, not hash_over)
                    if hashed is False and hash_over:
                        hashed = None  # outside the domain: sent as usual, for the canonical output
                    if hashed is not None:
                        # False: cannot equal an expected output of the domain; said in a few bytes.
                        encoded = jdumps(list(hashed) if hashed is not False else [None, 0, ""])
                        status = "okhash"
                    elif digest_over is not None and type_(out) is str_ and len(out) > digest_over:
                        encoded = jdumps([string_digest(out), len(out), out[:100]])
                        status = "okstr"
                    elif digest_bytes is not None and (type_(out) is list_ or type_(out) is tuple_) and len_(out) > 4096:
                        encoded, big = encode_capped(out, digest_bytes)
                        status = "ok"
                        if big is not None:
                            encoded, status = jdumps(list(big)), "okdigest"
                    else:
                        encoded = dumps(out)  # still timed: a hostile __repr__ may loop
                        status = "ok"
                except _CallTimeout:
                    raise
                except BaseException as exc:  # noqa: BLE001 - cycles, hostile __repr__
                    unserializable = _TYPE_NAME(type_(exc))[:_MAX_NAME]
            finally:
                armed[0] = False  # the timers keep running: the next arm() resets them (two syscalls a call saved)
        except _CallTimeout:
            emit([i, "timeout", "wall" if stopped_by[0] == sigalrm else None, process_time() - t0])
            continue
        except BaseException as exc:  # noqa: BLE001
            spent = process_time() - t0
            try:
                name, message, assertion, stated = describe(exc, flags=True)
                info = [name, assertion, stated, message]
            except BaseException:  # noqa: BLE001
                info = ["?", False, False, ""]
            emit([i, "raise", info, spent])
            continue
        spent = process_time() - t0
        if spent > cpu_limit:  # the sample swallowed the timer's exception (cpu_limit includes the margin)
            emit([i, "timeout", None, spent])
        elif unserializable is not None:
            emit([i, "raise", ["UnserializableOutput", False, False, unserializable], spent])
        else:
            send(f'[{i},"{status}",{encoded},{spent!r}]\n'.encode())
    disarm()
    emit(["done"])
    exit_(0)
