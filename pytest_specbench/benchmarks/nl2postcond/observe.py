"""Observations of a program on a task's test inputs: for each input, the
arguments *after* the call and the value returned (upstream's wrapper binds the
postcondition to the parameters after the call, so a postcondition sees what
the function did to its inputs).

The reference's observations are the cases of test-set correctness; a buggy
program's are where the corpus's bad outputs come from (:mod:`.corpus`).  Every
program runs in the sandbox's Python executor (benchmark code or not); what
comes back is plain data (:mod:`pytest_specbench.execution.wire`).
"""
from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

from ...errors import InfrastructureError, RepeatableError, lasting_failure
from ...execution import wire
from ...execution.limits import Limits
from ...execution.python import CallsJob
from ..contract.evalplus import functional_calls
from ..contract.evalplus_data import canonical_program

OBSERVER = "__specbench_observe"
# How deep a program may recurse: the frames its entry point may have above it (its own
# recursion, its helpers) before RecursionError, as upstream's run gave them.  Upstream ran its
# candidates in EvalPlus 0.1.5 (its Dockerfile): Python's default limit of 1000 frames, of which
# ``python -m evalplus.evaluate`` (its process pool, ``untrusted_check``'s process,
# ``unsafe_execute``) holds 29 below the entry point: a probe that recursed until
# RecursionError, put in a HumanEval/60 sample, reached 970 there (measured on EvalPlus 0.1.5
# under Python 3.11, session 30).  The sandbox's own limit (3000) would let HumanEval/60's
# recursive ``sum_to_n`` programs return on its inputs 990-1005, where upstream's raised: 16
# bad outputs upstream never had.  The observer sets the limit before each call from a probe of
# the frames left where it calls the entry point, so the sandbox's frames below do not count.
CALL_DEPTH = 970
# The reference may be slow on HumanEval+'s large inputs: its calls get this many
# times the per-call CPU limit (as the ContractEval family's canonical runs do).
REFERENCE_CPU_FACTOR = 20
FORMAT = "2"  # 2: each case with the reference's CPU seconds


def observed_program(code: str, entry_point: str, str_digest_over: int | None = None,
                     whole_calls: Sequence[int] = ()) -> str:
    """``code`` with an entry point that returns ``[arguments after the call, result]``.
    ``random`` is seeded once, when the program is loaded (its job runs its calls in one
    process, in input order): 10 of upstream's 49,200 programs draw random numbers
    (HumanEval/14's program 204 drops a prefix when ``random.random() < 0.5``), and a forked
    child's ``random`` is seeded afresh from the OS, so their outputs, and the corpus's bytes,
    would differ from build to build.  Seeded once, the calls draw in sequence as an unseeded
    run's do (upstream's); seeded before each call (sessions 17-28), every call drew the same
    numbers, a draw no unseeded run makes: HumanEval/101's program 255 then gave the task
    21,365 pairs where unseeded draws give 21,597-21,616 (upstream's sheet: 21,603).

    With ``str_digest_over``, a result that is a ``str`` longer than that comes back as
    ``[arguments after the call, None, [digest, length]]`` (:func:`.wire.string_digest`'s
    digest, computed here in the child): HumanEval/15's candidates return strings of up to
    6.9 MB on 21 of its inputs (147 MB a program), which the corpus build compares with the
    reference's and, for a program it keeps, fetches whole again (:func:`LongStr`).  The
    program runs in this process and could forge the digest: that is no more than returning
    another output, which it can anyway (its observations are its own).

    ``whole_calls``: the job's calls (0 for its first, 1 for its second, ...) whose long ``str``
    result comes back whole all the same: the corpus build's second run, which replays the first
    run's calls up to the last output it fetches (:func:`.corpus.store_long_outputs`).  The count
    lives in the program's module, which the program could change: that too only changes its own
    outputs, and each fetched one must have the first run's digest and length."""
    # The builtins module's own names: the program's module may bind str, type, len or list.
    imports = (f"random as {OBSERVER}_random, builtins as {OBSERVER}_b, itertools as {OBSERVER}_itertools, "
               f"sys as {OBSERVER}_sys")
    if str_digest_over is not None:
        imports += f", hashlib as {OBSERVER}_hashlib"
    count = fetch = ""
    if str_digest_over is not None and whole_calls:
        count = (f"    n = {OBSERVER}_calls[0]\n"
                 f"    {OBSERVER}_calls[0] = n + 1\n")
        fetch = " and n not in {" + ", ".join(str(int(n)) for n in sorted(set(whole_calls))) + "}"
    text = (f"{code}\n\n\nimport {imports}\n"
            f"from pytest_specbench.execution.wire import Iterated as {OBSERVER}_Iterated\n\n\n"
            + _ITERATED.replace("OBSERVER", OBSERVER) + "\n\n"
            + _DEPTH.replace("OBSERVER", OBSERVER) + "\n\n"
            + f"{OBSERVER}_random.seed(0)\n\n\n"
            + (f"{OBSERVER}_calls = [0]\n\n\n" if count else "")
            + f"def {OBSERVER}(*args):\n" + count
            + f"    {OBSERVER}_sys.setrecursionlimit({OBSERVER}_limit())\n"
            + f"    result = {entry_point}(*args)\n"
            f"    if {OBSERVER}_b.type(result) in {OBSERVER}_iterators:\n"
            f"        result = {OBSERVER}_iterated(result)\n")
    if str_digest_over is not None:
        text += (f"    if {OBSERVER}_b.type(result) is {OBSERVER}_b.str and {OBSERVER}_b.len(result) > {int(str_digest_over)}{fetch}:\n"
                 f"        digest = {OBSERVER}_hashlib.blake2b(result.encode('utf-8', 'surrogatepass'), digest_size=16)\n"
                 f"        return [{OBSERVER}_b.list(args), None, [digest.hexdigest(), {OBSERVER}_b.len(result)]]\n")
    return text + "    return [list(args), result]\n"


# An iterator or dict view a program returns is iterated here, in its own process and within its
# call's limits, and comes back as its items (wire.Iterated): upstream's postcondition ran on the
# object itself (HumanEval/22's programs returning filter(...) where a list is due: 956 bad
# outputs), which a placeholder cannot stand for.  Up to ITERATED_ITEMS items; an iterator with
# more, or one that raises while it is read, comes back as before (an opaque value).
ITERATED_ITEMS = 10_000
_ITERATED = f"""
OBSERVER_iterators = frozenset(OBSERVER_b.type(x) for x in (
    iter([]), reversed([]), iter(()), iter(range(0)), iter(''), iter(set()), iter({{}}), iter({{}}.values()),
    iter({{}}.items()), {{}}.keys(), {{}}.values(), {{}}.items(), filter(None, ()), map(abs, ()), zip(),
    enumerate(()), (i for i in ())))


def OBSERVER_iterated(result):
    kind = OBSERVER_b.type(result).__name__
    try:
        items = OBSERVER_b.list(OBSERVER_itertools.islice(result, {ITERATED_ITEMS + 1}))
    except Exception:
        return result
    if OBSERVER_b.len(items) > {ITERATED_ITEMS}:
        return result
    return OBSERVER_Iterated(kind, items)
"""


# The recursion limit that leaves the entry point CALL_DEPTH frames above its own: worked out once
# per program by a probe that starts a frame above where the observer calls the entry point (the
# sandbox's frames below, and the C calls the interpreter counts with them, are whatever they
# are), then set before each call.
_DEPTH = f"""
OBSERVER_limits = []


def OBSERVER_probe(k):
    try:
        return OBSERVER_probe(1 + k)  # written so: the tests' fake executors tell programs apart by their text
    except RecursionError:
        return k


def OBSERVER_limit():
    if not OBSERVER_limits:
        OBSERVER_sys.setrecursionlimit(3000)
        OBSERVER_limits.append(3000 - OBSERVER_probe(1) + {CALL_DEPTH})  # the probe starts a frame above
    return OBSERVER_limits[0]
"""


@dataclass(frozen=True)
class LongStr:
    """A ``str`` result known by its digest and length only (``observed_program``'s
    ``str_digest_over``): equal to another iff the digests are (blake2b-128)."""

    digest: str
    length: int


def test_inputs(task: Mapping[str, Any], inputs: str) -> list[tuple[tuple, dict]]:
    calls = functional_calls(task)
    return calls[:len(task["base_input"])] if inputs == "base" else calls


@dataclass(frozen=True)
class Observation:
    index: int  # the input's position in base_input + plus_input
    status: str  # "ok" | "raise" | "timeout" (| "good": the corpus build's, a right output dropped)
    args_after: tuple = ()
    result: Any = None
    exc_type: str = ""
    cpu: float = 0.0  # CPU seconds of the call, as the sandbox measured it
    # a time-out the call's wall-clock bound ended, its CPU limit not reached: the machine's
    # load decided it, not the program (the corpus build runs such a program again)
    wall_stop: bool = False


# A call its wall-clock bound stopped having run under this share of that bound slept or blocked
# (HumanEval/129's program 35 waits on an empty ``queue.PriorityQueue`` for ever): no quieter machine
# would end it, so it is the program's time-out, not the machine's load, and is not run again alone.
# A call the load starved still runs: alone on this machine a program gets a core's worth of its bound.
SLEPT_SHARE = 0.01


def load_stop(outcome, cpu_limit: float, wall_factor: float) -> bool:
    """Was this time-out the machine's load (a wall-clock stop of a call that was running),
    rather than the program's own (a CPU stop, or a wall stop of a call that slept)?"""
    return bool(outcome.wall_stop) and outcome.cpu >= SLEPT_SHARE * (cpu_limit * wall_factor + 0.5)


class StopRule:
    """The stop rule's count over a program's calls, in order: ``stop_after`` = (time-outs in a
    row, in all), or None for no rule.  :func:`observe` asks it after each call whether the
    program goes on; the corpus build asks it again over the observations, to say which
    programs it ended (:func:`.corpus.stop_decided`)."""

    def __init__(self, stop_after: Sequence[int] | None):
        self.stop_after, self.in_a_row, self.in_all, self.stopped = stop_after, 0, 0, False

    def go_on(self, timed_out: bool) -> bool:
        self.in_a_row = self.in_a_row + 1 if timed_out else 0
        self.in_all += timed_out
        go_on = self.stop_after is None or (self.in_a_row < self.stop_after[0] and self.in_all < self.stop_after[1])
        self.stopped = self.stopped or not go_on
        return go_on


def observe(executor, code: str, task: Mapping[str, Any], calls_key: str, calls: Sequence[tuple[tuple, dict]],
            cpu: float | Sequence[float], stop_after_timeouts: tuple[int, int] | None = None,
            wall_factor: float | None = None, str_digest_over: int | None = None,
            indices: Sequence[int] | None = None, whole: Sequence[int] = ()) -> list[Observation]:
    """Run ``code``'s entry point on every call in the sandbox; one observation per input.
    ``cpu``: the CPU-second limit of every call, or one limit per call.
    With ``stop_after_timeouts`` = (in a row, in all), a program that times out on
    that many inputs in a row, or on that many in all, is stopped there: the inputs
    after are time-outs too (a program that hangs on HumanEval/11's inputs, or on
    HumanEval/13's large ones, would otherwise take a CPU second per input).
    With ``str_digest_over``, a long ``str`` result is a :class:`LongStr` (:func:`observed_program`).
    ``indices``: only these calls (one observation each, in this order).
    ``whole``: inputs (of ``indices``) whose long ``str`` result comes back whole all the same."""
    indices = range(len(calls)) if indices is None else list(indices)
    limits = [cpu] * len(calls) if isinstance(cpu, (int, float)) else list(cpu)
    fetched = set(whole)
    whole_calls = [n for n, i in enumerate(indices) if i in fetched]
    job = CallsJob(observed_program(code, task["entry_point"], str_digest_over, whole_calls), OBSERVER, calls_key,
                   lambda: calls,
                   indices, call_cpu=[limits[i] for i in indices], wall_factor=wall_factor)
    rule = StopRule(stop_after_timeouts)
    result = executor.run(None, job, lambda outcome: rule.go_on(outcome.status == "timeout"))
    factor = wall_factor if wall_factor is not None else getattr(executor, "limits", Limits).wall_factor
    if result.load_error:
        return [Observation(i, "raise", exc_type="load error") for i in indices]
    out = []
    for i in indices:
        outcome = result.outcomes.get(i)
        if outcome is None:  # after the stop rule, the program's; else its job's wall clock ran out
            out.append(Observation(i, "timeout", wall_stop=not rule.stopped))
        elif outcome.status == "timeout":
            out.append(Observation(i, "timeout", wall_stop=load_stop(outcome, limits[i], factor)))
        elif outcome.status != "ok":
            out.append(Observation(i, "raise", exc_type=outcome.exc_type))
        else:
            try:
                args_after, value, *digested = outcome.value
                if digested:  # [args, None, [digest, length]]: only from str_digest_over
                    (digest, length), = digested
                    value = LongStr(str(digest), int(length))
            except (ValueError, TypeError):
                out.append(Observation(i, "raise", exc_type="unreadable output"))
                continue
            out.append(Observation(i, "ok", tuple(args_after), value, cpu=outcome.cpu))
    return out


class ReferenceFailure(RepeatableError):
    """The benchmark's own solution raised on a test input (the harness's
    data, not the sample: E with one line); it will again, so the result cache
    keeps it."""


class ReferenceTimeout(InfrastructureError):
    """The benchmark's own solution timed out, ran out of memory or its job was
    lost on a test input: the machine's load may have caused it, so it is not a
    :class:`RepeatableError` (the result cache does not keep it) and the next
    run tries again (#48)."""


def reference_cases(task: Mapping[str, Any], digest: str, inputs: str, ctx) -> list[dict]:
    """The cases of test-set correctness: for each test input, ``{"inputs":
    {param: value after the call}, "return_value": the reference's result}``,
    computed once in the sandbox and cached on disk."""
    from .tasks import parameters

    names = parameters(task)
    return [as_case(names, args_after, result) for args_after, result, _ in _reference_run(task, digest, inputs, ctx)]


def reference_seconds(task: Mapping[str, Any], digest: str, inputs: str, ctx) -> list[float]:
    """The reference's CPU seconds per test input (the same cached run as
    :func:`reference_cases`), for upstream's per-input time rule."""
    return [float(cpu) for _, _, cpu in _reference_run(task, digest, inputs, ctx)]


def _reference_run(task: Mapping[str, Any], digest: str, inputs: str, ctx) -> list:
    from filelock import FileLock

    key = hashlib.sha256(f"{FORMAT}|{digest}|{task['task_id']}|{inputs}".encode()).hexdigest()[:24]
    path = Path(ctx.cache_dir("nl2postcond", "reference")) / f"{key}.json"
    if not path.exists():
        with FileLock(str(path) + ".lock"):
            if not path.exists():
                calls = test_inputs(task, inputs)
                seen = observe(ctx.python_executor(), canonical_program(task), task,
                               f"{task['task_id']}@{digest[:12]}:nl2postcond-{inputs}", calls,
                               ctx.settings.limits.call_cpu * REFERENCE_CPU_FACTOR)
                bad = [o for o in seen if o.status != "ok"]
                if bad:
                    error = ReferenceFailure if all(lasting_failure(o.status, o.exc_type) for o in bad) \
                        else ReferenceTimeout
                    raise error(f"{task['task_id']}: the reference failed on input #{bad[0].index} "
                                           f"({bad[0].status} {bad[0].exc_type})".rstrip())
                tmp = path.with_suffix(f".{os.getpid()}.tmp")
                tmp.write_text(wire.dumps([[list(o.args_after), o.result, o.cpu] for o in seen]))
                os.replace(tmp, path)
    return wire.loads(path.read_text())


def as_case(names: Sequence[str], args_after: Sequence[Any], result: Any) -> dict:
    return {"inputs": dict(zip(names, args_after)), "return_value": result}
