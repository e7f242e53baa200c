"""The ``jvm`` executor: javac and java for checks of Java code.

- ``compile(sources, classpath)`` compiles once per content (a hash of the
  sources, the classpath's keys and the JDK version names the class folder in
  the state folder's cache; a concurrent compile of the same content waits on a
  file lock), returning javac's diagnostics when it fails: for untrusted code
  that is a verdict, not an error.  ``prepare(Environment("classpath", ...))``
  is the same for trusted code and raises on failure.
- ``run(prepared, JavaJob)`` starts one JVM on a classpath, with flags tuned
  for many short calls in a small sandbox (C1 only, serial GC, class-data
  sharing, small heap and metaspace) and the job's limits, and returns a
  :class:`~.protocol.CommandResult`.  It goes through the ``command``
  executor's sandbox when that exists; until then (and with
  ``--specbench-sandbox=none``) through a plain child process with rlimits, a
  new session and an empty environment (fit for trusted code and tests only).

Families put their own in-JVM harness on the classpath (the JML checker's
runner: ``benchmarks/speceval/jml/java``) and read the records it writes.
"""
from __future__ import annotations

import hashlib
import os
import resource
import shutil
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

from ..errors import InfrastructureError
from .protocol import CommandJob, CommandResult, Environment, Prepared

# Flags for a JVM that runs many small calls: start-up is the cost (C1 only and
# CDS cut it), memory is scarce in the sandbox (small heap, metaspace, code cache).
JVM_FLAGS = (
    "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xshare:auto", "-Xms16m", "-Xmx256m", "-Xss4m",
    "-XX:CompressedClassSpaceSize=64m", "-XX:MaxMetaspaceSize=128m", "-XX:ReservedCodeCacheSize=32m",
    "-XX:-UsePerfData", "-Djava.security.manager=allow", "-Dfile.encoding=UTF-8",
)
# glibc reserves 64 MiB of address space per thread arena: too much under an address-space limit.
JVM_ENV = {"MALLOC_ARENA_MAX": "2"}
JAVAC_FLAGS = ("-proc:none", "-nowarn", "-encoding", "UTF-8", "-Xmaxerrs", "20", "-J-XX:TieredStopAtLevel=1",
               "-J-XX:+UseSerialGC", "-J-Xshare:auto")
INSTALL_HINT = "apt-get install openjdk-17-jdk-headless"


@dataclass(frozen=True)
class CompileResult:
    ok: bool
    classes: Path | None  # the folder of .class files (ok only)
    diagnostics: str = ""  # javac's output (errors: "File.java:LINE: error: ...")
    key: str = ""
    cached: bool = False


@dataclass(frozen=True)
class JavaJob:
    """One JVM: ``java -cp CLASSPATH MAIN ARGS`` in a fresh working directory holding ``files``."""

    main: str
    args: tuple[str, ...] = ()
    classpath: tuple[Path, ...] = ()
    files: Mapping[str, bytes] = field(default_factory=dict)  # written into the fresh working directory
    readonly: tuple[Path, ...] = ()  # further paths the JVM may read (not on its class path)
    wall_seconds: float = 60.0
    cpu_seconds: float | None = None
    memory_mb: int | None = None  # address space; a JVM reserves far more than it uses
    output_bytes: int | None = None
    flags: tuple[str, ...] = ()


class JvmExecutor:
    kind = "jvm"
    version = "1"

    def __init__(self, cache_dir: Path, hide: Sequence[str] = (), isolate: bool = True,
                 memory_mb: int = 4096, output_bytes: int = 1 << 20, state_dir: Path | None = None):
        self.cache_dir = Path(cache_dir)
        self.state_dir = state_dir
        self.hide = list(hide)
        self.isolate = isolate
        self.memory_mb = memory_mb
        self.output_bytes = output_bytes
        self.javac = shutil.which("javac")
        self.java = shutil.which("java")
        self._jdk: str | None = None
        self._server: subprocess.Popen | None = None
        self._command = None
        self._server_broken: str | None = None

    # ------------------------------------------------------------ toolchain
    def available(self) -> str | None:
        if not self.javac or not self.java:
            missing = "javac" if not self.javac else "java"
            return f"{missing} not found: {INSTALL_HINT}"
        return None

    def jdk_version(self) -> str:
        if self._jdk is None:
            try:
                out = subprocess.run([self.java, "-version"], capture_output=True, text=True, timeout=60)
                self._jdk = (out.stderr or out.stdout).splitlines()[0].strip()
            except (OSError, subprocess.SubprocessError, IndexError) as exc:
                raise InfrastructureError(f"java -version failed: {exc}") from None
        return self._jdk

    # -------------------------------------------------------------- compile
    def compile(self, sources: Mapping[str, str], classpath: Sequence[Path] = (),
                timeout: float = 120.0, use_server: bool = True) -> CompileResult:
        """Compile ``sources`` (relative path -> text) against ``classpath``; cached by content."""
        if self.available():
            raise InfrastructureError(self.available())
        h = hashlib.sha256(self.jdk_version().encode())
        h.update(" ".join(JAVAC_FLAGS).encode())
        for p in classpath:
            h.update(b"\0cp\0" + str(p).encode())
        for name in sorted(sources):
            h.update(b"\0" + name.encode() + b"\0" + sources[name].encode("utf-8"))
        key = h.hexdigest()[:32]
        out = self.cache_dir / "classes" / key
        done = out / ".ok"
        fail = out.with_suffix(".failed")
        if done.exists():
            return CompileResult(True, out, "", key, cached=True)
        if fail.exists():
            return CompileResult(False, None, fail.read_text(errors="replace"), key, cached=True)
        (self.cache_dir / "classes").mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=self.cache_dir / "classes", prefix="tmp-") as tmp:
            srcdir = Path(tmp) / "src"
            outdir = Path(tmp) / "out"
            outdir.mkdir()
            files = []
            for name, text in sources.items():
                if Path(name).is_absolute() or ".." in Path(name).parts:
                    raise InfrastructureError(f"bad source path {name!r}")
                f = srcdir / name
                f.parent.mkdir(parents=True, exist_ok=True)
                f.write_text(text, encoding="utf-8")
                files.append(str(f))
            cp = os.pathsep.join(str(p) for p in classpath)
            args = [*JAVAC_FLAGS, "-d", str(outdir)] + (["-cp", cp] if cp else []) + files
            # javac only parses and type-checks (no annotation processing): no sample code runs.
            served = self._serve(args, Path(tmp), timeout) if use_server else None
            if served is not None:
                rc, diag = served
            else:
                try:
                    r = subprocess.run([self.javac, *args], capture_output=True, text=True, timeout=timeout,
                                       cwd=srcdir, env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"),
                                                        "LANG": "C.UTF-8"})
                except subprocess.TimeoutExpired:
                    return CompileResult(False, None, f"javac timed out after {timeout:.0f} s", key)
                rc, diag = r.returncode, r.stdout + r.stderr
            diag = diag.replace(str(srcdir) + os.sep, "")
            if rc != 0:
                fail.write_text(diag)
                return CompileResult(False, None, diag, key)
            (outdir / ".ok").write_text("")
            try:
                os.rename(outdir, out)
            except OSError:
                if not done.exists():
                    raise
        return CompileResult(True, out, diag, key)

    # A warm javac (CompileServer) saves a JVM start per compilation; javac's own
    # command line is the fallback when the server cannot start or stops answering.
    def _serve(self, args: list[str], tmp: Path, timeout: float) -> tuple[int, str] | None:
        server = self._server_proc()
        if server is None:
            return None
        argfile = tmp / "javac.args"
        argfile.write_text("\n".join(a for a in args if not a.startswith("-J")) + "\n", encoding="utf-8")
        try:
            server.stdin.write((str(argfile) + "\n").encode())
            server.stdin.flush()
            head = self._read_line(server, timeout)
            rc, n = (int(x) for x in head.split())
            diag = self._read_n(server, n, timeout)
            return rc, diag.decode("utf-8", "replace")
        except (OSError, ValueError, TimeoutError) as exc:
            self._stop_server()
            self._server_broken = f"javac server failed: {exc}"
            return None

    def _server_proc(self):
        if self._server is not None and self._server.poll() is None:
            return self._server
        if self._server_broken:
            return None
        src = Path(__file__).with_name("java") / "specbench" / "jvm" / "CompileServer.java"
        res = self.compile({"specbench/jvm/CompileServer.java": src.read_text()}, use_server=False)
        if not res.ok:
            self._server_broken = "javac server did not compile"
            return None
        try:
            self._server = subprocess.Popen(
                [self.java, "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xshare:auto", "-Xmx512m",
                 "-XX:-UsePerfData", "-cp", str(res.classes), "specbench.jvm.CompileServer"],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd="/",
                env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C.UTF-8"}, start_new_session=True)
        except OSError as exc:
            self._server_broken = str(exc)
            return None
        return self._server

    @staticmethod
    def _read_line(proc, timeout: float) -> str:
        import select

        fd = proc.stdout.fileno()
        buf = b""
        deadline = time.monotonic() + timeout
        while not buf.endswith(b"\n"):
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                raise TimeoutError("no answer")
            chunk = os.read(fd, 1)
            if not chunk:
                raise OSError("server exited")
            buf += chunk
        return buf.decode()

    @staticmethod
    def _read_n(proc, n: int, timeout: float) -> bytes:
        import select

        fd = proc.stdout.fileno()
        buf = b""
        deadline = time.monotonic() + timeout
        while len(buf) < n:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                raise TimeoutError("no answer")
            chunk = os.read(fd, n - len(buf))
            if not chunk:
                raise OSError("server exited")
            buf += chunk
        return buf

    def _stop_server(self) -> None:
        proc, self._server = self._server, None
        if proc is None:
            return
        try:
            proc.stdin.close()
            proc.wait(timeout=5)
        except (OSError, subprocess.TimeoutExpired):
            proc.kill()
            proc.wait()
        try:
            proc.stdout.close()
        except OSError:
            pass

    def prepare(self, env: Environment) -> Prepared:
        if env.kind != "classpath":
            raise InfrastructureError(f"the jvm executor builds 'classpath' environments, not {env.kind!r}")
        sources = env.spec.get("sources", {})
        classpath = tuple(Path(p) for p in env.spec.get("classpath", ()))
        res = self.compile(sources, classpath)
        if not res.ok:
            last = [ln for ln in res.diagnostics.splitlines() if "error" in ln][:1] or res.diagnostics.splitlines()[-1:]
            raise InfrastructureError(f"javac failed for {env.key}: {last[0] if last else '?'}")
        return Prepared(env, readonly=classpath + (res.classes,),
                        info={"classes": str(res.classes), "jdk": self.jdk_version()})

    # ------------------------------------------------------------------ run
    def argv(self, job: JavaJob) -> list[str]:
        cp = os.pathsep.join(str(p) for p in job.classpath)
        return [self.java, *JVM_FLAGS, *job.flags, "-cp", cp, job.main, *job.args]

    def run(self, prepared: Prepared | None, job: JavaJob) -> CommandResult:
        if self.available():
            raise InfrastructureError(self.available())
        classpath = tuple(job.classpath) + (prepared.readonly if prepared else ())
        job = JavaJob(**{**job.__dict__, "classpath": classpath})
        command = self._command_executor()
        if command is not None:
            cjob = CommandJob(argv=tuple(self.argv(job)), readonly=classpath + tuple(job.readonly),
                              wall_seconds=job.wall_seconds,
                              env=dict(JVM_ENV),
                              cpu_seconds=job.cpu_seconds, memory_mb=job.memory_mb or self.memory_mb,
                              output_bytes=job.output_bytes or self.output_bytes,
                              files=dict(job.files))
            return command.run(None, cjob)
        return self._run_local(job)

    def _command_executor(self):
        """The sandboxed ``command`` executor (issue 12), or None while this
        version has none (then, and with ``isolate=False``, a plain child)."""
        if not self.isolate:
            return None
        if self._command is None:
            try:
                from .command import CommandExecutor  # type: ignore[import-not-found]
            except ImportError:
                return None
            self._command = CommandExecutor(hide=self.hide, isolate=True, state_dir=self.state_dir)
        return self._command

    def _run_local(self, job: JavaJob) -> CommandResult:
        mem = (job.memory_mb or self.memory_mb) << 20
        cpu = job.cpu_seconds

        def limits():  # runs in the child before exec
            os.setsid()
            resource.setrlimit(resource.RLIMIT_AS, (mem, mem))
            if cpu:
                resource.setrlimit(resource.RLIMIT_CPU, (int(cpu) + 1, int(cpu) + 2))
            resource.setrlimit(resource.RLIMIT_CORE, (0, 0))

        cap = job.output_bytes or self.output_bytes
        t0 = time.monotonic()
        with tempfile.TemporaryDirectory(prefix="specbench-jvm-") as work:
            env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "HOME": work, "TMPDIR": work, **JVM_ENV}
            for name, data in job.files.items():
                Path(work, name).write_bytes(data)
            try:
                proc = subprocess.Popen(self.argv(job), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE, cwd=work, env=env, preexec_fn=limits)
            except OSError as exc:
                raise InfrastructureError(f"java could not start: {exc}") from None
            timed_out = False
            try:
                out, err = proc.communicate(b"", timeout=job.wall_seconds)
            except subprocess.TimeoutExpired:
                timed_out = True
                try:
                    os.killpg(proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                out, err = proc.communicate()
            ru = resource.getrusage(resource.RUSAGE_CHILDREN)
        code = proc.returncode
        truncated = len(out) > cap or len(err) > cap
        return CommandResult(
            exit_code=code if code is not None and code >= 0 else None,
            signal=-code if code is not None and code < 0 else None,
            timed_out=timed_out or (code == -signal.SIGXCPU),
            killed="wall-clock limit" if timed_out else None,
            stdout=out[:cap].decode("utf-8", "replace"), stderr=err[:cap].decode("utf-8", "replace"),
            output_truncated=truncated, cpu=ru.ru_utime + ru.ru_stime, wall=time.monotonic() - t0)

    def close(self) -> None:
        self._stop_server()
        if self._command is not None:
            self._command.close()
            self._command = None

    def __del__(self):
        try:
            self._stop_server()
        except Exception:
            pass


def make(settings: Any, hide: Sequence[str]) -> JvmExecutor:
    """The ``jvm`` executor of :func:`pytest_specbench.execution.make_executor`."""
    state = Path(getattr(settings, "state_dir", None) or Path(tempfile.gettempdir()) / "specbench-state")
    limits = getattr(settings, "limits", None)
    return JvmExecutor(state / "jvm", hide=hide, isolate=getattr(settings, "sandbox", "process") == "process",
                       state_dir=state,
                       memory_mb=max(getattr(limits, "memory_mb", 4096), 4096),
                       output_bytes=getattr(limits, "output_bytes", 1 << 20) * 16)
