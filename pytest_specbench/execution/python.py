"""Run untrusted Python functions on inputs, in a sandbox, and read back plain data.

One :class:`PythonExecutor` per pytest process drives one zygote process
(:mod:`._zygote`) that forks an isolated child per job.  The harness sends
inputs once per task, code once per job, and receives one record per call as
it happens, so a check can stop a sample at its first wrong answer
(``on_outcome`` returns False) without the child ever seeing what is right.
"""
from __future__ import annotations

import json
import os
import pickle
import re
import select
import struct
import subprocess
import sys
import time
from collections import OrderedDict
from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Sequence

from ..errors import InfrastructureError
from . import wire
from .limits import Limits

# Part of the result cache's key: bump it when the same sample could get another
# verdict.  2: samples are compiled without inheriting the harness's __future__ flags.
EXECUTOR_VERSION = 2
_LEN = struct.Struct(">I")
_OK_RECORD = re.compile(rb'\[(\d+),"ok",')
_FRAME = struct.Struct(">BI")

Call = tuple[tuple, dict]  # (args, kwargs)


_UNDECODED = object()


@dataclass
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
    str_len: int = 0
    str_prefix: str = ""
    exc_type: str = ""
    assertion: bool = False  # raised an AssertionError (or subclass)
    value_or_type_error: bool = False  # a ``raise`` statement raised ValueError/TypeError (or subclass)
    message: str = ""
    cpu: float = 0.0
    _value: Any = field(default=_UNDECODED, repr=False, compare=False)

    @property
    def value(self) -> Any:
        if self._value is _UNDECODED:
            if self.str_digest is not None:
                raise ValueError(f"only the digest of a {self.str_len}-character string was sent")
            try:
                self._value = None if self.encoded is None else wire.loads(self.encoded)
            except (RecursionError, TypeError) as exc:
                raise ValueError(f"unreadable output: {exc}") from None
        return self._value


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
    protocol_error: str | None = None  # records no honest child writes (forged by the sample)

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


class PythonExecutor:
    """Client of one sandbox zygote.  Not thread-safe; one per process."""

    MAX_LOADED = 16  # task input sets kept in the zygote

    def __init__(self, limits: Limits, hide: Sequence[str] = (), isolate: bool = True):
        self.limits = limits
        self.hide = [os.path.realpath(p) for p in hide if p]
        self.isolate = isolate
        self._proc: subprocess.Popen | None = None
        self._loaded: OrderedDict[str, None] = OrderedDict()
        self.isolation: dict[str, Any] = {}

    # -------------------------------------------------------------- process
    def _start(self) -> None:
        home = os.path.expanduser("~")
        expose = sorted({os.path.realpath(p) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix)})
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C.UTF-8"}
        # The zygote imports this package by name; make it importable however we were installed.
        env["PYTHONPATH"] = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        self._proc = subprocess.Popen(
            [sys.executable, "-s", "-m", "pytest_specbench.execution._zygote"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            env=env, cwd="/", close_fds=True, start_new_session=True,
        )
        self._loaded.clear()
        cfg = {"isolate": self.isolate, "hide": sorted(set(self.hide + [os.path.realpath(home)])),
               "expose": expose, "tmp_mb": self.limits.tmp_mb}
        self._send(cfg)
        kind, payload = self._recv_frame(timeout=30)
        if kind != b"R":
            raise InfrastructureError(f"sandbox did not start: {payload[:200]!r}")
        self.isolation = json.loads(payload)

    def ensure_started(self) -> dict[str, Any]:
        if self._proc is None or self._proc.poll() is not None:
            try:
                self._start()
            except (OSError, EOFError) as exc:
                self.close()
                raise InfrastructureError(f"sandbox could not start: {exc}") from None
        return self.isolation

    def close(self) -> None:
        proc, self._proc = self._proc, None
        if proc is None:
            return
        try:
            if proc.poll() is None:
                self._send_to(proc, {"op": "exit"})
                proc.wait(timeout=5)
        except (OSError, subprocess.TimeoutExpired):
            proc.kill()
            proc.wait()
        finally:
            for f in (proc.stdin, proc.stdout):
                try:
                    f.close()
                except OSError:
                    pass

    def _send(self, obj: Any) -> None:
        self._send_to(self._proc, obj)

    @staticmethod
    def _send_to(proc, obj: Any) -> None:
        body = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
        proc.stdin.write(_LEN.pack(len(body)) + body)
        proc.stdin.flush()

    def _read_exact(self, n: int, deadline: float) -> bytes:
        fd = self._proc.stdout.fileno()
        chunks, got = [], 0
        while got < n:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                raise TimeoutError("sandbox zygote stopped answering")
            chunk = os.read(fd, n - got)
            if not chunk:
                raise EOFError("sandbox zygote exited")
            chunks.append(chunk)
            got += len(chunk)
        return b"".join(chunks)

    def _recv_frame(self, timeout: float) -> tuple[bytes, bytes]:
        deadline = time.monotonic() + timeout
        kind, length = _FRAME.unpack(self._read_exact(_FRAME.size, deadline))
        return bytes([kind]), self._read_exact(length, deadline)

    # ------------------------------------------------------------------ run
    def run(self, code: str, entry_point: str, calls_key: str, calls: Callable[[], Sequence[Call]],
            indices: Sequence[int], call_cpu: Sequence[float] | None = None,
            on_outcome: Callable[[CallOutcome], bool] | None = None,
            digest_strings_over: int | None = None) -> JobResult:
        """Run ``entry_point`` from ``code`` on ``calls()[i]`` for each ``i`` in ``indices``.

        ``calls_key`` names the input set so the zygote loads it once.  ``call_cpu``
        gives per-call CPU-second limits (default: the executor's limit for all).
        ``on_outcome`` sees each call's outcome as it arrives; returning False stops
        the child.  With ``digest_strings_over``, a result that is a ``str`` longer
        than that comes back as its digest only (``CallOutcome.str_digest``): for
        checks that compare strings by equality, it spares encoding, sending and
        decoding outputs of hundreds of megabytes.  A sample cannot use this to
        pass: it never sees the digest it would have to match.
        Raises :class:`InfrastructureError` only when the sandbox
        itself fails; anything the sample does ends up in the :class:`JobResult`.
        """
        self.ensure_started()
        lim = self.limits
        call_cpu = list(call_cpu) if call_cpu is not None else [lim.call_cpu] * len(indices)
        job_wall = lim.startup_cpu * lim.wall_factor + sum(c * lim.wall_factor + 0.5 for c in call_cpu) + 2.0
        try:
            if calls_key not in self._loaded:
                self._send({"op": "load", "key": calls_key, "calls": list(calls())})
                self._loaded[calls_key] = None
                while len(self._loaded) > self.MAX_LOADED:
                    old, _ = self._loaded.popitem(last=False)
                    self._send({"op": "drop", "key": old})
            else:
                self._loaded.move_to_end(calls_key)
            self._send({"op": "run", "key": calls_key, "code": code, "entry_point": entry_point,
                        "indices": list(indices), "call_cpu": call_cpu, "digest_strings_over": digest_strings_over,
                        "limits": {**asdict(lim), "job_wall": job_wall}})
            return self._collect(on_outcome, list(indices), deadline=time.monotonic() + job_wall + 30)
        except (OSError, EOFError, TimeoutError, pickle.PicklingError) as exc:
            self.close()
            raise InfrastructureError(f"sandbox failed: {exc}") from None

    def _collect(self, on_outcome, indices: list[int], deadline: float) -> JobResult:
        result, chunks, stopping = JobResult(), [], False
        pending = iter(indices)  # the child answers calls in this order, once each
        expected = next(pending, None)
        ready = setup_error = None
        while True:
            kind, payload = self._recv_frame(timeout=max(deadline - time.monotonic(), 0.1))
            if kind == b"D":
                # Records can be many megabytes: keep chunks until a newline arrives
                # instead of re-scanning a growing buffer (quadratic).
                if b"\n" not in payload:
                    chunks.append(payload)
                    continue
                *lines, rest = b"".join(chunks + [payload]).split(b"\n")
                chunks = [rest] if rest else []
                for line in lines:
                    if ready is None:  # the first record is the sandbox's own, before sample code ran
                        ready = line.strip() == b'["ready"]'
                        if not ready:
                            setup_error = line[:300].decode("utf-8", "replace")
                        continue
                    if stopping:
                        continue
                    outcome = self._parse_record(line, result)
                    if outcome is None:
                        continue
                    if outcome.index != expected:
                        # Only sample code writes a record out of turn (say, an
                        # AssertionError claimed for every call at import time).
                        result.protocol_error = f"the sample wrote a forged result record for call #{outcome.index}"
                        result.outcomes.clear()  # every answer of a forging child is suspect
                        stopping = True
                        self._send({"op": "kill"})
                        continue
                    expected = next(pending, None)
                    result.outcomes[outcome.index] = outcome
                    if on_outcome is not None and not on_outcome(outcome):
                        stopping = True
                        self._send({"op": "kill"})
            elif kind == b"X":
                info = json.loads(payload)
                result.exit_code, result.signal = info["exit_code"], info["signal"]
                result.killed = None if stopping else info["killed"]
                result.output, result.wall, result.pid = info["output"], info["wall"], info.get("pid")
                if not ready:  # no sample code ran: the sandbox failed, not the sample
                    raise InfrastructureError("sandbox child could not be set up: "
                                              + (setup_error or result.failure_reason() or "no record"))
                return result
            elif kind == b"E":
                raise InfrastructureError(json.loads(payload).get("error", "sandbox error"))

    @staticmethod
    def _parse_record(line: bytes, result: JobResult) -> CallOutcome | None:
        ok = _OK_RECORD.match(line)
        if ok:
            # ``[i,"ok",<value>,<cpu>]``: the value is kept encoded (decoded on demand).
            head, _, tail = line.rstrip().rpartition(b",")
            if not tail.endswith(b"]") or len(head) <= ok.end():
                return None
            try:
                cpu = float(tail[:-1])
            except ValueError:
                return None
            return CallOutcome(int(ok.group(1)), "ok", encoded=bytes(head[ok.end():]), cpu=cpu)
        try:
            rec = wire.loads(line)
        except (ValueError, RecursionError, TypeError):
            return None  # garbage on the channel proves nothing; the call stays unanswered
        if not isinstance(rec, list) or not rec:
            return None
        if rec[0] == "done":
            result.finished = True
            return None
        if rec[0] == "load" and len(rec) == 3:
            result.load_error = str(rec[2])
            return None
        if len(rec) != 4 or type(rec[0]) is not int:
            return None
        index, status, body, cpu = rec
        cpu = float(cpu) if isinstance(cpu, (int, float)) else 0.0
        if status == "ok":
            return CallOutcome(index, "ok", encoded=wire.dumps(body).encode(), cpu=cpu, _value=body)
        if status == "timeout":
            return CallOutcome(index, "timeout", cpu=cpu)
        if status == "okstr" and isinstance(body, list) and len(body) == 3:
            digest, n, prefix = body
            if isinstance(digest, str) and type(n) is int and isinstance(prefix, str):
                return CallOutcome(index, "ok", str_digest=digest, str_len=n, str_prefix=prefix, cpu=cpu)
        if status == "raise" and isinstance(body, list) and len(body) == 4:
            return CallOutcome(index, "raise", exc_type=str(body[0]), assertion=body[1] is True,
                               value_or_type_error=body[2] is True, message=str(body[3]), cpu=cpu)
        return None


def make(settings: Any, hide: Sequence[str]) -> PythonExecutor:
    """The ``python`` executor of :func:`pytest_specbench.execution.make_executor`."""
    return PythonExecutor(settings.limits, hide=hide, isolate=settings.sandbox == "process")
