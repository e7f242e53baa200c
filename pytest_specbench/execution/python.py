"""Run untrusted Python functions on inputs, in a sandbox, and read back plain data.

One :class:`PythonExecutor` per pytest process drives one sandbox zygote
(:mod:`.sandbox`) that forks an isolated child per job, which runs the calls
(:mod:`.python_child`).  The harness sends
inputs once per task, code once per job, and receives one record per call as
it happens, so a check can stop a sample at its first wrong answer
(``on_outcome`` returns False) without the child ever seeing what is right.
"""
from __future__ import annotations

import json
import os
import pickle
import re
import sys
import time
from collections import OrderedDict
from dataclasses import asdict, dataclass, field, replace
from math import inf
from typing import Any, Callable, Sequence

from ..errors import InfrastructureError
from . import wire
from .limits import Limits
from .environments import prepare_interpreter, prepare_venv
from .protocol import Environment, Prepared
from .python_child import PRELOAD
from .sandbox import SandboxClient, Watch

# Part of the result cache's key: bump it when the same sample could get another
# verdict.  2: samples are compiled without inheriting the harness's __future__ flags.
# 3: a call over its CPU limit by less than the borderline margin is measured again
# (least CPU time of several runs decides); outputs are digested only where asked per call.
# 4: samples run with a fixed hash seed (PYTHONHASHSEED=0: set order of strings is the same in
# every run); large lists of strings may be judged by their value hash.
# 5: a sample cannot fork; its time is bounded from outside its process; malformed records, numpy
# duck types and calls over their limit by the outside clock are failures (issue #50).
EXECUTOR_VERSION = 5
# The sandbox's Python runs with this hash seed: a value hash (wire.value_hash) computed in one
# child, run or host is compared with one computed in another (docs/execution.md).
HASH_SEED = "0"
_OK_RECORD = re.compile(rb'\[(\d{1,10}),"ok",')

Call = tuple[tuple, dict]  # (args, kwargs)


_UNDECODED = object()


@dataclass(slots=True)  # one per call, ~500 a job: slots make each cheaper to build and read
class CallOutcome:
    """What one call did, as the child reported it (plain data only).

    A returned value arrives as its :mod:`.wire` encoding (``encoded``) and is
    decoded only when ``value`` is read: a check that can judge the bytes (say,
    by comparing a digest with the canonical output's) never pays for decoding
    a large output.  Bytes that do not decode raise ``ValueError`` there.
    """

    index: int
    status: str  # "ok" | "raise" | "timeout"
    encoded: bytes | None = None  # the returned value, wire-encoded (status "ok")
    # ... or, for a long string when the job asked for that: its blake2b-128 digest
    # (of the UTF-8 bytes), length and first 100 characters, and no value.
    str_digest: str | None = None
    # ... or, for a large output when the job asked for that: the blake2b-128 digest
    # of its encoding (the bytes ``encoded`` would hold) and their length; prefix in str_prefix.
    encoded_digest: str | None = None
    encoded_len: int = 0
    # ... or, for a list or tuple when the job asked for that: its value hash (wire.value_hash;
    # "" for a list or tuple outside that domain) and its number of strings; prefix in str_prefix.
    value_hash: str | None = None
    hash_leaves: int = 0
    str_len: int = 0
    str_prefix: str = ""
    exc_type: str = ""
    assertion: bool = False  # raised an AssertionError (or subclass)
    value_or_type_error: bool = False  # a ``raise`` statement raised ValueError/TypeError (or subclass)
    message: str = ""
    cpu: float = 0.0
    # Ended over its CPU limit but within the job's margin (see PythonExecutor.run):
    # a borderline call, to be measured again before a verdict on time.
    over_limit: bool = False
    # A timeout stopped by the call's wall-time bound (not its CPU timer), as the
    # child reported it: the machine was loaded or the sample slept.
    wall_stop: bool = False
    _value: Any = field(default=_UNDECODED, repr=False, compare=False)

    @property
    def value(self) -> Any:
        if self._value is _UNDECODED:
            if self.str_digest is not None:
                raise ValueError(f"only the digest of a {self.str_len}-character string was sent")
            if self.encoded_digest is not None:
                raise ValueError(f"only the digest of a {self.encoded_len}-byte output was sent")
            if self.value_hash is not None:
                raise ValueError(f"only the value hash of an output of {self.hash_leaves} strings was sent")
            try:
                self._value = None if self.encoded is None else wire.loads(self.encoded)
            except (RecursionError, TypeError, MemoryError) as exc:
                raise ValueError(f"unreadable output: {type(exc).__name__}") from None
        return self._value


@dataclass(frozen=True)
class CallsJob:
    """One job of the ``python`` executor: calls of ``entry_point`` (defined by
    ``code``) on ``calls()[i]`` for each ``i`` in ``indices``.

    ``calls_key`` names the input set so the zygote loads it once (``calls`` is
    called only when it is not loaded yet).  ``call_cpu`` gives per-call
    CPU-second limits (default: the executor's limit for all).

    With ``str_digest_over``, a result that is a ``str`` longer than that comes
    back as its digest only (``CallOutcome.str_digest``): for checks that
    compare strings by equality, it spares encoding, sending and decoding
    outputs of hundreds of megabytes.  With ``encoded_digest_over``, a list or
    tuple result whose encoding is longer than that, and whose equality is
    decided by its encoding (nests of lists, tuples, str, int, None, bytes),
    comes back as the digest of that encoding (``CallOutcome.encoded_digest``),
    computed in the child as the encoding is produced: neither side holds it
    whole.  A sample cannot use this to pass: it never sees the digest it would
    have to match.  A list gives ``encoded_digest_over`` per call (``None``:
    never digest that call's output), for a check that can judge by digest on
    some inputs only.  With ``value_hash_over`` (per call like
    ``encoded_digest_over``), a list or tuple result of non-empty strings or of
    numbers, or of tuples (or lists) of them, with at least that many comes back as its
    value hash (``CallOutcome.value_hash``, :func:`.wire.value_hash`): C speed,
    no encoding.  0 says the expected output is known by its value hash: a list
    or tuple outside that domain, which cannot equal it, comes back as
    ``value_hash == ""`` rather than whole.

    With ``margin`` > 1, a call may run to ``margin`` times its CPU limit
    before it is stopped: one that ends over its limit but within that comes
    back with ``over_limit`` set (and its outcome as usual), for the caller
    to measure again (:meth:`PythonExecutor.remeasure`) rather than decide on
    one noisy figure; a call stopped at the margin is a ``timeout`` at once.
    ``wall_factor`` replaces the limits' own for this job (re-measurements
    allow more wall time: they measure CPU time, on a machine that may be loaded).
    """

    code: str
    entry_point: str
    calls_key: str
    calls: Callable[[], Sequence[Call]]
    indices: Sequence[int]
    call_cpu: Sequence[float] | None = None
    str_digest_over: int | None = None
    encoded_digest_over: int | Sequence[int | None] | None = None
    value_hash_over: int | Sequence[int | None] | None = None
    margin: float = 1.0
    wall_factor: float | None = None


@dataclass
class JobResult:
    outcomes: dict[int, CallOutcome] = field(default_factory=dict)
    load_error: str | None = None  # the code did not compile/run or lacks the entry point
    finished: bool = False  # the child reported every call it was given
    exit_code: int | None = None
    signal: int | None = None
    killed: str | None = None  # why the zygote killed it, if it did
    output: str = ""  # captured stdout/stderr, capped
    wall: float = 0.0
    pid: int | None = None  # the child's pid (= its process group), for leak checks
    cpu: float | None = None  # CPU seconds of the whole child, as the zygote counted them (rusage)
    protocol_error: str | None = None  # records no honest child writes (forged by the sample)
    # The last call the zygote stopped by its own clock (a time-out; the calls after it ran in a fresh child).
    stopped_outside: int | None = None

    def failure_reason(self) -> str:
        """Why calls are missing, for messages."""
        if self.load_error:
            return self.load_error
        if self.protocol_error:
            return self.protocol_error
        if self.killed:
            return self.killed
        if self.signal:
            return f"child killed by signal {self.signal}"
        if self.exit_code not in (None, 0):
            return f"child exited with status {self.exit_code}"
        return "child stopped early" if not self.finished else ""


class PythonExecutor(SandboxClient):
    """Client of one sandbox zygote running the Python call runner
    (:mod:`.python_child`).  Not thread-safe; one per process."""

    kind = "python"
    version = str(EXECUTOR_VERSION)
    MAX_LOADED = 16  # task input sets kept in the zygote

    def __init__(self, limits: Limits, hide: Sequence[str] = (), isolate: bool = True, python: str | None = None,
                 state_dir: Any = None):
        super().__init__(limits, hide=hide, isolate=isolate, python=python)
        self.state_dir = state_dir
        # calls_key -> the opaque handle the zygote knows the input set by: a key names its
        # check (":cvts"), and nothing naming the check may reach the sample's process.
        self._loaded: OrderedDict[str, int] = OrderedDict()
        self._handles = 0
        self._described_as: tuple | None = None  # (_described_key of the running zygote)

    def _on_start(self) -> None:
        self._loaded.clear()

    def _zygote_env(self) -> dict[str, str]:
        return {"PYTHONHASHSEED": HASH_SEED}

    def _zygote_cfg(self) -> dict:
        cfg = {**super()._zygote_cfg(), "preload": PRELOAD}
        if self.python == sys.executable:
            cfg["sys_path"], cfg["expose"] = sample_path(cfg["hide"])
        self._described_as = _described_key(self.python, cfg.get("sys_path"))
        cfg["describe"] = self._described_as not in _DESCRIBED
        return cfg

    def _handshake(self) -> None:
        super()._handshake()
        key = self._described_as
        if "environment" in self.isolation:
            if key is not None:
                _DESCRIBED[key] = json.dumps(self.isolation["environment"])
        elif key in _DESCRIBED:
            self.isolation["environment"] = json.loads(_DESCRIBED[key])

    # ------------------------------------------------------ Executor protocol
    def available(self) -> str | None:
        return None

    def prepare(self, env: Environment) -> Prepared:
        """``interpreter`` (an existing interpreter or venv) or ``venv`` (built
        under the state folder, as for the command executor)."""
        if env.kind == "interpreter":
            return prepare_interpreter(env)
        if env.kind == "venv" and self.state_dir is not None:
            return prepare_venv(self.state_dir, env)[0]
        raise InfrastructureError(f"the python executor cannot prepare a {env.kind!r} environment")

    def use(self, prepared: Prepared) -> None:
        """Run samples with ``prepared``'s interpreter from now on."""
        python = prepared.executables["python"]
        if python != self.python:
            self.close()
            self.python = python

    # ------------------------------------------------------------------ run
    def run(self, prepared: Prepared | None, job: CallsJob,
            on_outcome: Callable[[CallOutcome], bool] | None = None) -> JobResult:
        """Run ``job.entry_point`` from ``job.code`` on ``job.calls()[i]`` for each
        ``i`` in ``job.indices`` (fields: :class:`CallsJob`); with ``prepared``, in
        that environment's interpreter from now on (:meth:`use`).

        ``on_outcome`` sees each call's outcome as it arrives; returning False stops
        the child.  Raises :class:`InfrastructureError` only when the sandbox
        itself fails; anything the sample does ends up in the :class:`JobResult`.
        """
        if prepared is not None:
            self.use(prepared)
        self.ensure_started()
        lim = self.limits if job.wall_factor is None else replace(self.limits, wall_factor=job.wall_factor)
        indices = list(job.indices)
        call_cpu = list(job.call_cpu) if job.call_cpu is not None else [lim.call_cpu] * len(indices)
        margin = max(float(job.margin), 1.0)
        encoded_over, hash_over = job.encoded_digest_over, job.value_hash_over
        if isinstance(encoded_over, (list, tuple)):
            encoded_over = list(encoded_over)
        if isinstance(hash_over, (list, tuple)):
            hash_over = list(hash_over)
        job_wall = (lim.startup_cpu * lim.wall_factor + sum(c * margin * lim.wall_factor + 0.5 for c in call_cpu)
                    + 2.0)
        try:
            if job.calls_key not in self._loaded:
                # Sent pickled, as raw bytes the zygote stores without reading (a sealed memfd
                # only this set's jobs' children read, after their fork).
                body = pickle.dumps(list(job.calls()), protocol=pickle.HIGHEST_PROTOCOL)
                self._handles += 1
                self._send({"op": "load", "key": self._handles, "size": len(body)}, body)
                self._loaded[job.calls_key] = self._handles
                while len(self._loaded) > self.MAX_LOADED:
                    _, old = self._loaded.popitem(last=False)
                    self._send({"op": "drop", "key": old})
            else:
                self._loaded.move_to_end(job.calls_key)
            limit_of = dict(zip(indices, call_cpu))
            # With a margin, an outcome says it ran over its limit before on_outcome sees it
            # (marked in _collect: a wrapper per record cost a call each, ~500 a job).
            over_of = limit_of if margin > 1.0 else None
            result, start = None, 0
            while True:
                # A call the zygote stopped by its own clock killed the child: it is a time-out,
                # and the calls after it run in a fresh child, as they would after a time-out the
                # child's own timer caught (a C-level operation, say encoding a huge output,
                # does not yield to that timer).
                rest = slice(start, None)
                self._send({"op": "run", "key": self._loaded[job.calls_key], "code": job.code,
                            "entry_point": job.entry_point, "indices": indices[rest], "call_cpu": call_cpu[rest],
                            "str_digest_over": job.str_digest_over,
                            "encoded_digest_over": encoded_over[rest] if isinstance(encoded_over, list) else encoded_over,
                            "value_hash_over": hash_over[rest] if isinstance(hash_over, list) else hash_over,
                            "record_area": True, "margin": margin, "limits": {**asdict(lim), "job_wall": job_wall}})
                part = self._collect(on_outcome, indices[rest], deadline=time.monotonic() + job_wall + 30,
                                     limit_of={i: c * margin for i, c in limit_of.items()}, over_of=over_of)
                result = part if result is None else _merged(result, part)
                if part.stopped_outside is None:
                    return result
                start += len(part.outcomes)
                if start >= len(indices):
                    return result
        except (OSError, EOFError, TimeoutError, pickle.PicklingError) as exc:
            self.close()
            raise InfrastructureError(f"sandbox failed: {exc}") from None
        except BaseException:
            # Anything else (an on_outcome that raised, an interrupt) left this
            # job's frames unread: the next job would read them as its own.
            # Start afresh rather than misattribute them.
            self.close()
            raise

    def remeasure(self, job: CallsJob, index: int, cpu_limit: float, accept: Callable[[CallOutcome], bool],
                  runs: int, every_run: bool = False, before: Sequence[int] = (),
                  before_cpu: Sequence[float] = ()) -> list[float | None]:
        """CPU seconds of call ``index`` of ``job`` measured again, each time in a fresh
        child (up to ``runs`` times, stopping at the first run within
        ``cpu_limit``): the figures of a borderline call, whose least decides
        (as :func:`~.limits.machine_speed` takes the least of five).  A run
        counts only when ``accept`` (the check's oracle) takes its outcome, so
        a sample cannot buy a fast figure with a wrong answer; a run that does
        not count (a wrong answer, a timeout, no answer) is ``None``.  Each run
        may go to ``job.margin`` times the limit (``job.indices`` and
        ``job.call_cpu`` are replaced by the calls below).
        ``every_run`` makes all ``runs`` (to know the spread, not just a verdict).
        ``before`` (with their limits ``before_cpu``) are the calls the child makes
        first, as in the run being checked: a sample may keep state from one call
        to the next (a memo), so call ``index`` alone may cost more than it did
        in sequence; only its own figure is taken."""
        seen: list[float | None] = []
        indices = list(before) + [index]
        position = {i: k for k, i in enumerate(job.indices)}

        def each(per_call):  # given per call of job.indices: keep each call's own
            return [per_call[position[i]] for i in indices] if isinstance(per_call, (list, tuple)) else per_call

        again = replace(job, indices=indices, call_cpu=list(before_cpu) + [cpu_limit],
                        encoded_digest_over=each(job.encoded_digest_over), value_hash_over=each(job.value_hash_over))
        for _ in range(runs):
            result = self.run(None, again)
            outcome = result.outcomes.get(index)
            if outcome is None or outcome.status == "timeout":
                seen.append(None)  # stopped at the margin (or its wall time): no figure within it
            else:
                try:
                    seen.append(outcome.cpu if accept(outcome) else None)
                except Exception:  # noqa: BLE001 - an oracle that cannot judge the output rejects it
                    seen.append(None)
            if not every_run and seen[-1] is not None and seen[-1] <= cpu_limit:
                break
        return seen

    def _collect(self, on_outcome, indices: list[int], deadline: float,
                 limit_of: dict[int, float] | None = None, over_of: dict[int, float] | None = None) -> JobResult:
        """Read the job's frames: the child's records (``D``), the zygote's
        outside figures (``T``: a lower bound of a call's CPU) and the end
        (``X``).  Every record is validated with caps on every field; one that
        no honest child writes is a protocol error (the sample's failure, one
        line), never an error of the harness.  ``limit_of``: each call's CPU
        limit times the margin, against which the larger of the child's claim
        and the zygote's bound is checked; ``over_of``: each call's limit (a
        job with a margin), over which a call that was not stopped is marked
        ``over_limit`` before ``on_outcome`` sees it."""
        result, chunks, stopping = JobResult(), [], False
        pending = iter(indices)  # the child answers calls in this order, once each
        expected = next(pending, None)
        position = 0  # of ``expected`` in ``indices``
        ready = setup_error = None
        defined = False
        bounds: dict[int, float] = {}  # position -> CPU seconds at least (the zygote's clock)
        limit_of = limit_of or {}

        def forged(why: str) -> None:
            nonlocal stopping
            result.protocol_error = why
            result.outcomes.clear()  # every answer of a forging child is suspect
            stopping = True
            self._send({"op": "kill"})

        while True:
            kind, payload = self._recv_frame(timeout=max(deadline - time.monotonic(), 0.1))
            if kind == b"D":
                # Records can be many megabytes: keep chunks until a newline arrives
                # instead of re-scanning a growing buffer (quadratic).
                if b"\n" not in payload:
                    chunks.append(payload)
                    continue
                chunks.append(payload)
                joined = b"".join(chunks)
                # Lines are views of ``joined``, not copies: a record of 100 MB
                # is then held once, plus the value's own bytes when kept.
                view, start = memoryview(joined), 0
                cut = joined.rfind(b"\n") + 1
                chunks = [joined[cut:]] if cut < len(joined) else []
                lines = []
                while start < cut:
                    end = joined.find(b"\n", start, cut)
                    lines.append(view[start:end])
                    start = end + 1
                for line in lines:
                    if ready is None:  # the first record is the sandbox's own, before sample code ran
                        ready = bytes(line[:64]).strip() == b'["ready"]'
                        if not ready:
                            setup_error = bytes(line[:300]).decode("utf-8", "replace")
                        continue
                    if stopping:
                        continue
                    try:
                        outcome = self._parse_record(line, result)
                    except _Malformed as exc:
                        forged(f"the sample wrote a malformed result record ({exc}): {_show(line)}")
                        continue
                    if outcome is None:
                        continue
                    if outcome is _DEFINED:
                        if defined or result.outcomes or result.load_error:
                            forged(f"the sample wrote a forged result record: {_show(line)}")
                        defined = True
                        continue
                    if outcome is _DONE:
                        if expected is not None or not defined:
                            forged(f"the sample wrote a forged end record with "
                                   f"{len(indices) - position} calls unanswered")
                        else:
                            result.finished = True
                        continue
                    if outcome.index != expected or not defined:
                        # Only sample code writes a record out of turn (say, an
                        # AssertionError claimed for every call at import time).
                        forged(f"the sample wrote a forged result record for call #{outcome.index}")
                        continue
                    bound = bounds.get(position)
                    if bound:  # most calls are shorter than the zygote's look: no outside figure
                        self._outside_figure(outcome, bound, limit_of.get(outcome.index))
                    if over_of is not None and outcome.status != "timeout" \
                            and outcome.cpu > over_of.get(outcome.index, inf):
                        outcome.over_limit = True
                    expected = next(pending, None)
                    position += 1
                    result.outcomes[outcome.index] = outcome
                    if on_outcome is not None and not on_outcome(outcome):
                        stopping = True
                        self._send({"op": "kill"})
            elif kind == b"T":
                info = json.loads(payload)
                bounds[info["at"]] = float(info["cpu"])
            elif kind == b"X":
                info = json.loads(payload)
                result.exit_code, result.signal = info["exit_code"], info["signal"]
                result.killed = None if stopping else info["killed"]
                result.output, result.wall, result.pid = info["outputs"][0], info["wall"], info.get("pid")
                result.cpu = info.get("cpu")
                if not ready:  # no sample code ran: the sandbox failed, not the sample
                    raise InfrastructureError("sandbox child could not be set up: "
                                              + (setup_error or result.failure_reason() or "no record"))
                over = info.get("over")
                if over and not stopping and not result.protocol_error:
                    self._over_outside(result, over, indices, expected, position, on_outcome)
                return result
            elif kind == b"E":
                raise InfrastructureError(json.loads(payload).get("error", "sandbox error"))

    @staticmethod
    def _outside_figure(outcome: CallOutcome, bound: float, limit: float | None) -> None:
        """The call's CPU: the larger of the child's claim and the zygote's lower
        bound, less the watch's allowance (the sample may rewrite the child's
        clock); over the call's limit times the margin, whatever the child
        said, it is a time-out."""
        bound = Watch.granted(bound) if bound else 0.0
        if bound > outcome.cpu:
            outcome.cpu = bound
            if limit is not None and bound > limit and outcome.status != "timeout":
                outcome.status, outcome.encoded, outcome._value = "timeout", None, _UNDECODED

    @staticmethod
    def _over_outside(result: JobResult, over: dict, indices: list[int], expected: int | None, position: int,
                      on_outcome) -> None:
        """The zygote killed the child for time it measured: the call in progress
        is a time-out (or the definition took too long)."""
        what = "wall" if over.get("what") == "wall" else "CPU"
        if over.get("at", 0) < 0:
            if not result.load_error and not result.outcomes:
                result.load_error = f"defining the sample used more {what} time than its limit (measured outside it)"
        elif over.get("at") == position and expected is not None:
            outcome = CallOutcome(expected, "timeout", cpu=float(over.get("cpu") or 0.0), wall_stop=what == "wall")
            result.outcomes[expected] = outcome
            if on_outcome is None or on_outcome(outcome):  # the check wants the calls after it
                result.stopped_outside = expected

    @staticmethod
    def _parse_record(line: memoryview, result: JobResult):
        """One record: a :class:`CallOutcome`, ``_DEFINED`` or ``_DONE``, or None
        (a load error, kept in ``result``).  Raises :class:`_Malformed` for
        anything else, with every field checked against its cap."""
        if len(line) > _MAX_SMALL_RECORD and not _OK_RECORD.match(line):
            raise _Malformed(f"{len(line)} bytes")
        ok = _OK_RECORD.match(line)
        if ok:
            # ``[i,"ok",<value>,<cpu>]``: the value is kept encoded (decoded on demand),
            # copied once out of the line (the cpu figure is in its last bytes).
            tail_at = max(ok.end(), len(line) - 64)
            tail = bytes(line[tail_at:]).rstrip()
            comma = tail.rfind(b",")
            if comma < 0 or not tail.endswith(b"]") or tail_at + comma <= ok.end():
                raise _Malformed("no CPU figure")
            return CallOutcome(_index(int(ok.group(1))), "ok", encoded=bytes(line[ok.end():tail_at + comma]),
                               cpu=_seconds(tail[comma + 1:-1]))
        try:
            rec = wire.loads(bytes(line))
        except (ValueError, RecursionError, MemoryError):
            raise _Malformed("not a record") from None
        if not isinstance(rec, list) or not rec:
            raise _Malformed("not a list")
        if rec == ["defined"]:
            return _DEFINED
        if rec == ["done"]:
            return _DONE
        if len(rec) == 3 and rec[0] == "load" and type(rec[2]) is str:
            result.load_error = result.load_error or rec[2][:_MAX_MESSAGE]
            return None
        if len(rec) != 4 or type(rec[0]) is not int:
            raise _Malformed("not a call record")
        index, status, body, cpu = _index(rec[0]), rec[1], rec[2], _seconds(rec[3])
        if status == "ok":
            return CallOutcome(index, "ok", encoded=wire.dumps(body).encode(), cpu=cpu, _value=body)
        if status == "timeout" and body in (None, "wall"):
            return CallOutcome(index, "timeout", cpu=cpu, wall_stop=body == "wall")
        if status in ("okdigest", "okhash", "okstr") and type(body) is list and len(body) == 3:
            digest, n, prefix = body
            if (type(digest) is str and len(digest) <= 64 or digest is None and status == "okhash") \
                    and type(n) is int and 0 <= n < 1 << 63 and type(prefix) is str and len(prefix) <= 1000:
                if status == "okdigest":
                    return CallOutcome(index, "ok", encoded_digest=digest, encoded_len=n, str_prefix=prefix, cpu=cpu)
                if status == "okhash":
                    return CallOutcome(index, "ok", value_hash=digest or "", hash_leaves=n, str_prefix=prefix, cpu=cpu)
                return CallOutcome(index, "ok", str_digest=digest, str_len=n, str_prefix=prefix, cpu=cpu)
        if status == "raise" and type(body) is list and len(body) == 4:
            name, assertion, value_or_type, message = body
            if (type(name) is str and len(name) <= _MAX_NAME and type(assertion) is bool
                    and type(value_or_type) is bool and type(message) is str and len(message) <= _MAX_MESSAGE):
                return CallOutcome(index, "raise", exc_type=name, assertion=assertion,
                                   value_or_type_error=value_or_type, message=message, cpu=cpu)
        raise _Malformed(f"a {str(status)[:20]!r} record out of its form")


def _merged(first: JobResult, then: JobResult) -> JobResult:
    """One result of a job whose child was stopped by the outside clock (``first``)
    and of the child that ran the calls after (``then``)."""
    if then.protocol_error:
        then.outcomes.clear()  # a forging child: none of the job's answers stand
        return then
    first.outcomes.update(then.outcomes)
    first.load_error = first.load_error or then.load_error
    first.finished, first.exit_code, first.signal, first.killed = then.finished, then.exit_code, then.signal, then.killed
    first.output = (first.output + then.output)[:1 << 20]
    first.wall += then.wall
    first.cpu = None if first.cpu is None or then.cpu is None else first.cpu + then.cpu
    first.pid = then.pid
    first.stopped_outside = first.stopped_outside if then.stopped_outside is None else then.stopped_outside
    return first


class _Malformed(ValueError):
    """A record no honest child writes."""


_DEFINED, _DONE = object(), object()
_MAX_NAME, _MAX_MESSAGE = 200, 4096  # an exception's type name and message, as the child caps them
_MAX_SMALL_RECORD = 64 << 10  # any record but a returned value (``ok``) is small


def _index(value: int) -> int:
    if not 0 <= value < 1 << 31:
        raise _Malformed("call index out of range")
    return value


def _seconds(value) -> float:
    try:
        figure = float(value)
    except (TypeError, ValueError, OverflowError):
        raise _Malformed("CPU figure not a number") from None
    if not 0.0 <= figure < 1e7:  # NaN fails too
        raise _Malformed("CPU figure out of range")
    return figure


def _show(line: memoryview) -> str:
    """A record's first bytes, on one line."""
    return repr(bytes(line[:60])) + ("..." if len(line) > 60 else "")


def sample_path(hide: Sequence[str]) -> tuple[list[str], list[str]]:
    """What a sample may import by default: this interpreter's installed
    packages (stdlib, site-packages, the user site), never the project, the
    data or anything else hidden that happens to be on ``sys.path`` (pytest's
    rootdir, an editable install's source folder).  Returns the sample's
    ``sys.path`` and the paths to bind back read-only for it."""
    import site
    import sysconfig

    installed = {os.path.realpath(p) for p in site.getsitepackages() + [site.getusersitepackages()]}
    installed |= {os.path.realpath(sysconfig.get_path(k)) for k in ("stdlib", "platstdlib", "purelib", "platlib")}
    prefixes = {os.path.realpath(p) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix)}
    hidden = [os.path.realpath(h) for h in hide]
    path, expose = [], []
    for entry in sys.path:
        if not entry:
            continue
        real = os.path.realpath(entry)
        under_hidden = any(real == h or real.startswith(h.rstrip("/") + "/") for h in hidden)
        if (real in installed or os.path.basename(real) in ("site-packages", "dist-packages")
                or any(real == p or real.startswith(p.rstrip("/") + "/") for p in prefixes)):
            path.append(entry)
            if under_hidden and os.path.isdir(real):
                expose.append(real)
        elif not under_hidden:
            path.append(entry)
    return path, expose


def sample_environment(settings: Any, hide: Sequence[str]) -> dict:
    """The interpreter samples run with and a hash of what they can import
    (distributions and versions): for the result key (a package upgrade may
    change a verdict) and the report's manifest."""
    from .environments import describe_here, probe

    python = getattr(settings, "sample_python", "")
    key = (python, tuple(hide))
    if key not in _ENVIRONMENTS:
        _ENVIRONMENTS[key] = probe(python) if python else describe_here(sample_path(hide)[0])
    return _ENVIRONMENTS[key]


_ENVIRONMENTS: dict[tuple, dict] = {}

# What a zygote described of its samples' path (the distributions and versions they can import,
# for the report's manifest: ``sandbox.main``, ``describe``), per interpreter and path while no
# folder of the path changed (an install or removal changes its folder's mtime), as JSON: a
# zygote started again in this process (the next run in it, another executor of the same
# settings) is told not to describe it again: forking a describer that reads every
# distribution's metadata was ~0.1 CPU s of the ~0.27 a zygote's start costs.
_DESCRIBED: dict[tuple, str] = {}


def _described_key(python: str, path: Sequence[str] | None) -> tuple | None:
    """The memo's key for a zygote of ``python`` on ``path``; None (describe each time) when
    the path is the interpreter's own, unknown here."""
    if path is None:
        return None
    stamps = []
    for entry in path:
        try:
            stamps.append(os.stat(entry).st_mtime_ns)
        except OSError:
            stamps.append(None)
    return python, tuple(path), tuple(stamps)


def make(settings: Any, hide: Sequence[str]) -> PythonExecutor:
    """The ``python`` executor of :func:`pytest_specbench.execution.make_executor`:
    samples run with the harness's interpreter, or the one
    ``--specbench-sample-python`` names (prepared like any environment)."""
    ex = PythonExecutor(settings.limits, hide=hide, isolate=settings.sandbox == "process",
                        state_dir=getattr(settings, "state_dir", None))
    python = getattr(settings, "sample_python", "")
    if python:
        ex.use(ex.prepare(Environment(kind="interpreter", key=python, spec={"python": python})))
    return ex
