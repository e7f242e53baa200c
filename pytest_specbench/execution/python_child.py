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
``["load", "setup", message]`` if that failed).  Sample code can write to fd 3
too, so the harness trusts only what a sample could have said anyway: one
record per call, in call order.
"""
from __future__ import annotations

import dis
import json
import os
import resource
import signal
import sys
import time

from pytest_specbench.execution import wire
from pytest_specbench.execution.records import WAKE_CPU_SECONDS, Writer
from pytest_specbench.execution.sandbox import base_env, enter_child

# Modules most samples import: loading them once in the zygote makes every fork cheaper.
PRELOAD = ("math", "re", "collections", "itertools", "functools", "heapq", "bisect", "string",
           "typing", "hashlib", "statistics", "fractions", "decimal", "random", "operator",
           "copy", "datetime", "json", "cmath", "array", "textwrap", "unicodedata")


_RAISE_VARARGS = dis.opmap["RAISE_VARARGS"]


def _raised_by_statement(exc: BaseException) -> bool:
    """Was ``exc`` raised by a ``raise`` statement (not by an operation that failed)?"""
    tb = exc.__traceback__
    if tb is None:
        return False
    while tb.tb_next is not None:
        tb = tb.tb_next
    code = tb.tb_frame.f_code.co_code
    return 0 <= tb.tb_lasti < len(code) and code[tb.tb_lasti] == _RAISE_VARARGS


class _CallTimeout(BaseException):
    """Raised in the child by the per-call timers."""


def run_child(job: dict, zygote, jobdir: str, pipes: dict) -> None:
    """Runs in the forked child; never returns."""
    exit_ = os._exit  # bound before sample code can touch os
    calls = zygote.inputs[job["key"]] if job.get("key") else job["calls"]
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
        emit(["load", "error", f"{type_(exc).__name__}: {str(exc)[:300]}"])
        exit_(0)

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
                    unserializable = type_(exc).__name__
            finally:
                armed[0] = False  # the timers keep running: the next arm() resets them (two syscalls a call saved)
        except _CallTimeout:
            emit([i, "timeout", "wall" if stopped_by[0] == sigalrm else None, process_time() - t0])
            continue
        except BaseException as exc:  # noqa: BLE001
            spent = process_time() - t0
            try:
                info = [type_(exc).__name__, isinstance_(exc, real_assertion),
                        isinstance_(exc, (real_value, real_type)) and _raised_by_statement(exc), str(exc)[:200]]
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
