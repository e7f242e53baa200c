"""The ``command`` executor: run a command line in the sandbox.

A :class:`~.protocol.CommandJob` (argv, files written into a fresh private
working directory, extra read-only paths, environment, limits) runs in the same
sandbox as Python samples (:mod:`.sandbox`: no network, a uid of its own, the
project, data, state folder and home hidden, rlimits, capped output, an empty
environment plus the job's) and comes back as a :class:`~.protocol.CommandResult`.
Whatever the command does (a loop, a fork bomb, a flood, a crash, forged
records) is in the result; only a sandbox or toolchain that cannot start raises
:class:`~pytest_specbench.errors.InfrastructureError`.

Environments (:meth:`CommandExecutor.prepare`): ``Environment(kind="venv",
key=..., spec={"python": ..., "requirements": [...], "project": PATH})`` is
built once under ``STATE/envs/venv-KEY`` (a file lock makes xdist workers and
concurrent runs wait for one build), reused by later runs without calling pip,
and bound read-only into the sandbox for the jobs that use it, while the rest
of the state folder stays hidden.  The jvm and lean executors build on this
class (their own limits and environments, the same sandbox).
"""
from __future__ import annotations

import base64
import dataclasses
import json
import os
import shutil
import signal
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from ..errors import InfrastructureError
from .environments import prepare_interpreter, prepare_venv
from .protocol import CommandJob, CommandResult, Environment, Prepared
from .enter import enter_job
from .sandbox import SandboxClient

EXECUTOR_VERSION = "1"


@dataclass(frozen=True)
class CommandLimits:
    """Default limits of one command job (a job's own values win).

    Sized for a toolchain, not a function call: a JVM reserves gigabytes of
    address space at start (heap, code cache, compressed class space, a stack
    per thread) and starts a few dozen threads, which count against the
    per-uid process limit; Lean's server and lake are similar.
    """

    cpu_seconds: float = 60.0
    wall_seconds: float = 120.0
    memory_mb: int = 16384  # address space per process
    processes: int = 512  # processes + threads of the job's uid
    output_bytes: int = 1 << 20  # per stream (stdout, stderr) and per collected file
    file_bytes: int = 256 << 20  # largest file the job may write
    result_bytes: int = 64 << 20  # records on fd 3
    tmp_mb: int = 1024  # the sandbox's private /tmp (holds job directories)


class CommandExecutor(SandboxClient):
    """Runs :class:`CommandJob` s in one sandbox zygote.  One per process."""

    kind = "command"
    version = EXECUTOR_VERSION
    defaults = CommandLimits()

    def __init__(self, limits: CommandLimits | None = None, hide: Sequence[str] = (), isolate: bool = True,
                 state_dir: Path | str | None = None, warm: bool | None = None):
        limits = limits or self.defaults
        super().__init__(limits, hide=hide, isolate=isolate)
        self.state_dir = Path(state_dir) if state_dir else None
        # Jobs that say how (``CommandJob.warm``) start from a warm image (:mod:`.warm`):
        # where the sandbox gives jobs a uid of their own, else they are exec'd as always.
        # Default: on, unless $SPECBENCH_WARM_STARTS is 0 (every job exec'd, as before #45's).
        self.warm = os.environ.get("SPECBENCH_WARM_STARTS", "1") != "0" if warm is None else warm
        self.builds = 0  # environments this process built (not reused)
        self._prepared: dict[tuple[str, str], Prepared] = {}

    # ------------------------------------------------------------ protocol
    def available(self) -> str | None:
        if not sys.platform.startswith("linux"):
            return "the command executor's sandbox needs Linux"
        return None

    def prepare(self, env: Environment) -> Prepared:
        cached = self._prepared.get((env.kind, env.key))
        if cached is not None:
            return cached
        if env.kind == "venv":
            if self.state_dir is None:
                raise InfrastructureError("no state folder to build environments in")
            prepared, built = prepare_venv(self.state_dir, env)
            self.builds += built
        elif env.kind == "interpreter":
            prepared = prepare_interpreter(env)
        elif env.kind == "paths":
            # Already built by the caller: just paths to see read-only.
            paths = tuple(Path(p) for p in env.spec.get("readonly", ()))
            prepared = Prepared(env, readonly=paths, executables=dict(env.spec.get("executables", {})))
        else:
            raise InfrastructureError(f"the {self.kind} executor cannot prepare a {env.kind!r} environment")
        self._prepared[(env.kind, env.key)] = prepared
        return prepared

    def run(self, prepared: Prepared | None, job: CommandJob) -> CommandResult:
        msg, limits = self._message(prepared, job)
        try:
            self._send(msg)
            return self._collect(limits, deadline=time.monotonic() + limits["job_wall"] + 30)
        except (OSError, EOFError, TimeoutError) as exc:
            self.close()
            raise InfrastructureError(f"sandbox failed: {exc}") from None

    def spawn(self, prepared: Prepared | None, job: CommandJob) -> "LiveJob":
        """Start a long-lived job (a warm compiler) and return at once: its
        records are read as they come (:meth:`LiveJob.record`).  The job holds
        this executor's zygote until it ends, so give it an executor of its own."""
        msg, limits = self._message(prepared, job)
        try:
            self._send(msg)
        except OSError as exc:
            self.close()
            raise InfrastructureError(f"sandbox failed: {exc}") from None
        return LiveJob(self, limits)

    def _message(self, prepared: Prepared | None, job: CommandJob) -> tuple[dict, dict]:
        self.ensure_started()
        lim = self.limits
        cpu = job.cpu_seconds or lim.cpu_seconds
        wall = job.wall_seconds or lim.wall_seconds
        limits = {"cpu_seconds": cpu, "memory_mb": job.memory_mb or lim.memory_mb,
                  "processes": job.processes or lim.processes,
                  "output_bytes": job.output_bytes or lim.output_bytes, "file_bytes": lim.file_bytes,
                  "result_bytes": lim.result_bytes, "job_wall": wall}
        path = "/usr/local/bin:/usr/bin:/bin"
        python = (prepared.executables.get("python") if prepared else None)
        if python:  # a venv's scripts (pytest, pip) come first, as when it is activated
            path = f"{os.path.dirname(python)}:{path}"
        env = {"PATH": path, "LANG": "C.UTF-8", **job.env}
        msg = {"op": "run", "runner": "command", "argv": [str(a) for a in job.argv], "env": env,
               "files": {str(k): bytes(v) for k, v in job.files.items()}, "collect": list(job.collect),
               "readonly": [os.path.realpath(p) for p in job.readonly],
               "keep_readonly": [os.path.realpath(p) for p in (prepared.readonly if prepared else ())],
               "overlay": {os.path.realpath(k): str(v) for k, v in getattr(job, "overlay", {}).items()},
               "split_output": True, "limits": limits}
        warm = getattr(job, "warm", None)
        if warm is not None and self.warm:
            msg["warm"] = dataclasses.asdict(warm)
        return msg, limits

    def _collect(self, limits: dict, deadline: float) -> CommandResult:
        chunks: list[bytes] = []
        while True:
            kind, payload = self._recv_frame(timeout=max(deadline - time.monotonic(), 0.1))
            if kind == b"D":
                chunks.append(payload)
            else:
                result = self._control_frame(kind, payload, b"".join(chunks), limits)
                if result is not None:
                    return result

    def _control_frame(self, kind: bytes, payload: bytes, output: bytes, limits: dict) -> CommandResult | None:
        """An error frame raises; the exit frame is the job's result (None: neither)."""
        if kind == b"E":
            raise InfrastructureError(json.loads(payload).get("error", "sandbox error"))
        if kind == b"X":
            info = json.loads(payload)
            if info.get("setup_error"):
                raise InfrastructureError(f"command could not start: {info['setup_error']}")
            return self._result(info, output, limits)
        return None

    @staticmethod
    def _result(info: dict, records: bytes, limits: dict) -> CommandResult:
        sig, cpu, killed = info["signal"], float(info.get("cpu") or 0.0), info["killed"]
        timed_out = False
        if killed == "job time budget exceeded":
            killed, timed_out = f"wall-clock limit ({limits['job_wall']:g} s)", True
        elif sig == signal.SIGXCPU or (sig == signal.SIGKILL and cpu >= 0.8 * limits["cpu_seconds"]):
            # (the children's CPU time the zygote reads lags the kernel's own count a little)
            killed, timed_out = f"CPU limit ({limits['cpu_seconds']:g} s)", True
        parsed = []
        for line in records.split(b"\n"):
            if line.strip():
                try:
                    parsed.append(json.loads(line))
                except ValueError:
                    continue  # garbage on the channel proves nothing
        out, err = (info["outputs"] + ["", ""])[:2]
        return CommandResult(
            exit_code=info["exit_code"], signal=sig, timed_out=timed_out, killed=killed,
            stdout=out, stderr=err, output_truncated=bool(info.get("dropped")),
            files={k: base64.b64decode(v) for k, v in info.get("files", {}).items()},
            records=parsed, cpu=cpu, wall=float(info["wall"]))


class LiveJob:
    """A job started with :meth:`CommandExecutor.spawn`, still running: its
    result-channel records one at a time, then its end."""

    def __init__(self, executor: CommandExecutor, limits: dict):
        self.executor, self.limits = executor, limits
        self._pending = b""
        self.result: CommandResult | None = None  # set once the job ended

    def record(self, timeout: float) -> dict:
        """The job's next JSON record (lines that are not JSON objects are
        skipped).  Raises TimeoutError when none comes in time and EOFError
        when the job ended (``result`` says how)."""
        deadline = time.monotonic() + timeout
        while True:
            while b"\n" in self._pending:
                line, self._pending = self._pending.split(b"\n", 1)
                try:
                    value = json.loads(line)
                except ValueError:
                    continue
                if isinstance(value, dict):
                    return value
            if self.result is not None:
                raise EOFError(f"the job ended: {self.result.killed or self.result.exit_code}")
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("no record in time")
            kind, payload = self.executor._recv_frame(timeout=left)
            if kind == b"D":
                self._pending += payload
            else:
                self.result = self.executor._control_frame(kind, payload, b"", self.limits) or self.result

    def stop(self) -> None:
        """End the job (and its zygote: the executor was the job's own)."""
        try:
            if self.result is None:
                self.executor._send({"op": "kill"})
                while self.result is None:
                    try:
                        self.record(timeout=10)
                    except (EOFError, ValueError):
                        break
        except (OSError, TimeoutError, InfrastructureError):
            pass
        finally:
            self.executor.close()


# ------------------------------------------------------------- child side

def run_child(job: dict, zygote: Any, jobdir: str, pipes: dict) -> None:
    """Runs in the forked child (see :mod:`.sandbox`): set up, then exec the
    argv.  A failure before the exec is written to the close-on-exec status
    pipe, so the harness can tell "could not start" (its fault) from anything
    the command did."""
    status_fd = pipes["status"]
    try:
        outs = pipes["outputs"]
        env = enter_job(job, jobdir, zygote.uid, {1: outs[0], 2: outs[1], 3: pipes["result"], 4: status_fd})
        status_fd = 4
        os.set_inheritable(4, False)
        argv = job["argv"]
        exe = argv[0] if "/" in argv[0] else shutil.which(argv[0], path=env.get("PATH", ""))
        if exe is None:
            raise FileNotFoundError(f"{argv[0]}: not found on PATH {env.get('PATH', '')}")
        os.execve(exe, argv, env)
    except BaseException as exc:  # noqa: BLE001
        try:
            os.write(status_fd, f"{type(exc).__name__}: {exc}"[:2000].encode())
        finally:
            os._exit(127)


def make(settings: Any, hide: Sequence[str]) -> CommandExecutor:
    """The ``command`` executor of :func:`pytest_specbench.execution.make_executor`."""
    return CommandExecutor(hide=hide, isolate=settings.sandbox == "process", state_dir=settings.state_dir)


