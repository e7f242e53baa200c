"""The ``jvm`` executor: javac and java for checks of Java code.

- ``compile(sources, classpath)`` compiles once per content (a hash of the
  sources, the classpath's keys and the JDK version names the class folder in
  the state folder's cache; a concurrent compile of the same content waits on a
  file lock), returning javac's diagnostics when it fails: for untrusted code
  that is a verdict, not an error.  ``prepare(Environment("classpath", ...))``
  is the same for trusted code and raises on failure; trusted classes
  (``compile(trusted=True)``) go to the store that state folders share
  (:mod:`.jvm_store`), a sample's stay in its state folder.
- ``run(prepared, JavaJob)`` starts one JVM on a classpath, with flags tuned
  for many short calls in a small sandbox (C1 only, serial GC, class-data
  sharing, small heap and metaspace) and the job's limits, and returns a
  :class:`~.protocol.CommandResult`.  It goes through the ``command``
  executor's sandbox when that exists; until then (and with
  ``--specbench-sandbox=none``) through a plain child process with rlimits, a
  new session and an empty environment (fit for trusted code and tests only).

Families put their own in-JVM harness on the classpath (e.g. a JML checker's
runner) and read the records it writes.
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
from . import jvm_store
from . import class_sharing
from .class_sharing import ClassSharing, Shared, Training, harness_sources
from .protocol import CommandJob, CommandResult, Environment, Prepared

_SERVER_STARTS = 3  # failed starts or answers of the warm javac before compiling without it
_JDK_VERSIONS: dict[tuple, str] = {}  # (java's real path, inode, mtime, size) -> `java -version`, per process
# The warm javac's JVM: C1 only, small code cache and class space (it runs under an address-space limit).
SERVER_FLAGS = ("-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xshare:auto", "-Xmx512m", "-XX:-UsePerfData",
                "-XX:ReservedCodeCacheSize=64m", "-XX:CompressedClassSpaceSize=128m", "-Dfile.encoding=UTF-8")

# Flags for a JVM that runs many small calls: start-up is the cost (C1 only and
# CDS cut it), memory is scarce in the sandbox (small heap, metaspace, code cache).
# A method is compiled after 2,000 calls instead of 200 (Tier3*: C1's thresholds when
# it is the only compiler): most of what a short JVM compiled was its own start-up
# code, run a few hundred times and never again (~100 ms of C1 in a ~200 ms runner
# JVM).  Loops are compiled as before (the back-edge threshold is the default's), so a
# long call runs at the same speed after its first ~2,000 calls of a method: the CPU
# and wall limits keep their meaning (docs/timing.md, "Session 19").
JVM_FLAGS = (
    "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xshare:auto", "-Xms16m", "-Xmx256m", "-Xss4m",
    "-XX:CompressedClassSpaceSize=64m", "-XX:MaxMetaspaceSize=128m", "-XX:ReservedCodeCacheSize=32m",
    "-XX:Tier3InvocationThreshold=2000", "-XX:Tier3MinInvocationThreshold=1000", "-XX:Tier3CompileThreshold=20000",
    "-XX:-UsePerfData", "-Djava.security.manager=allow", "-Dfile.encoding=UTF-8",
)
# glibc reserves 64 MiB of address space per thread arena: too much under an address-space limit.
JVM_ENV = {"MALLOC_ARENA_MAX": "2"}
# javac's own classes: the modules the warm javac's class-data archive holds besides its class
# path's, and the main class a javac job's JVM runs when it starts from that archive.
JAVAC_MODULES = ("jdk.compiler",)
JAVAC_MAIN = "com.sun.tools.javac.Main"
# -XDstringConcat=inline: string concatenation compiled to StringBuilder calls, not to
# invokedynamic, whose bootstrap (StringConcatFactory, method handles spun at run time)
# each short JVM paid again (~10% of a runner JVM's CPU).  The same result, operands evaluated
# and converted left to right as JLS 15.18.1 says (javac's indy strategy converted them late
# until JDK-8273914, backported to 17u).
JAVAC_FLAGS = ("-proc:none", "-nowarn", "-encoding", "UTF-8", "-Xmaxerrs", "20", "-XDstringConcat=inline",
               "-J-XX:TieredStopAtLevel=1", "-J-XX:+UseSerialGC", "-J-Xshare:auto")
INSTALL_HINT = "apt-get install openjdk-17-jdk-headless"
# javac's exit status for errors in the sources (javac's Main.Result.ERROR; 2-4 are
# command-line, system and abnormal ends, e.g. an OutOfMemoryError).
JAVAC_ERRORS = 1


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
    # What trains this kind of job's class-data-sharing archive (trusted: the harness's own main
    # and program, never the job's; class_sharing.Training); None: the class path's classes only.
    training: Training | None = None


class JvmExecutor:
    kind = "jvm"
    version = "1"

    def __init__(self, cache_dir: Path, hide: Sequence[str] = (), isolate: bool = True,
                 memory_mb: int = 4096, output_bytes: int = 1 << 20, state_dir: Path | None = None,
                 class_sharing: bool | None = None, store: Path | bool = True):
        self.cache_dir = Path(cache_dir)
        # The trusted build products (compile(trusted=True), jars, archives): the shared store
        # (jvm_store.py; store=True: $SPECBENCH_JVM_STORE or the user's cache; a path; False:
        # this state folder's own, also when the shared one cannot be used).
        self.store = jvm_store.for_state(self.cache_dir, store)
        self.hide = [*hide, str(self.store.root)]  # its jobs see the store's entries only as bound read-only
        self.state_dir = state_dir
        self.isolate = isolate
        self.memory_mb = memory_mb
        self.output_bytes = output_bytes
        self.javac = shutil.which("javac")
        self.java = shutil.which("java")
        self._jdk: str | None = None
        self._jdk_full = ""
        # AppCDS archives, in the store (class_sharing.py, issue 48)
        self.sharing = ClassSharing(self, self.store, enabled=class_sharing)
        self._server: _JavacServer | None = None
        self._server_failures = 0
        self._command = None
        self._server_broken: str | None = None
        self._found: set[str] = set()  # trusted keys this executor found in the store
        self._javac_cpu: float | None = None  # the last javac job's CPU (None: the warm javac's; the log)
        self.starts = self.shared_starts = 0  # JVM jobs run, and of those with an archive (perf, tests)
        self.javac_starts = self.javac_shared_starts = 0  # javac jobs, and of those from the warm javac's archive

    # ------------------------------------------------------------ toolchain
    def available(self) -> str | None:
        if not self.javac or not self.java:
            missing = "javac" if not self.javac else "java"
            return f"{missing} not found: {INSTALL_HINT}"
        return None

    def jdk_version(self, full: bool = False) -> str:
        """``java -version``'s first line (the compile cache's key), or all of it (``full``:
        the class-data-sharing archives' key, which names the build too)."""
        if self._jdk is None:
            try:
                real = os.path.realpath(self.java)
                st = os.stat(real)
                binary = (real, st.st_ino, st.st_mtime_ns, st.st_size)
                if binary not in _JDK_VERSIONS:  # a JVM start: once per process and java binary
                    out = subprocess.run([self.java, "-version"], capture_output=True, text=True, timeout=60)
                    _JDK_VERSIONS[binary] = (out.stderr or out.stdout).strip()
                self._jdk_full = _JDK_VERSIONS[binary]
                self._jdk = self._jdk_full.splitlines()[0].strip()
            except (OSError, subprocess.SubprocessError, IndexError) as exc:
                raise InfrastructureError(f"java -version failed: {exc}") from None
        return (self._jdk_full or self._jdk) if full else self._jdk

    # -------------------------------------------------------------- compile
    def compile(self, sources: Mapping[str, str], classpath: Sequence[Path] = (),
                timeout: float = 120.0, use_server: bool = True, trusted: bool = False) -> CompileResult:
        """Compile ``sources`` (relative path -> text) against ``classpath``; cached by content.

        javac runs in the sandbox (no network, project and home hidden, limits)
        unless the executor is not isolated: kept warm as a long-lived job
        (:class:`_JavacServer`), else one javac job per compilation.  It only
        parses and type-checks (``-proc:none``): no processor or sample code runs."""
        if self.available():
            raise InfrastructureError(self.available())
        h = hashlib.sha256(self.jdk_version().encode())
        h.update(" ".join(JAVAC_FLAGS).encode())
        for p in classpath:
            h.update(b"\0cp\0" + str(p).encode())
        for name in sorted(sources):
            h.update(b"\0" + name.encode() + b"\0" + sources[name].encode("utf-8"))
        key = h.hexdigest()[:32]
        if trusted:
            entry = self.store.get("classes", key)
            if entry is not None:
                if key not in self._found:  # (the log: a state folder that found it built)
                    self._found.add(key)
                    jvm_store.log("store-hit", key=key, state=str(self.cache_dir))
                return CompileResult(True, entry, "", key, cached=True)
            from filelock import FileLock

            # one javac of the same trusted sources for every process that shares the store
            with FileLock(str(self.store.path("classes", f"{key}.lock"))):
                entry = self.store.get("classes", key)
                if entry is not None:
                    return CompileResult(True, entry, "", key, cached=True)
                return self._compile(sources, classpath, timeout, use_server, trusted, key)
        out = self.cache_dir / "classes" / key
        if (out / ".ok").exists():
            return CompileResult(True, out, "", key, cached=True)
        return self._compile(sources, classpath, timeout, use_server, trusted, key)

    def _compile(self, sources: Mapping[str, str], classpath: Sequence[Path], timeout: float, use_server: bool,
                 trusted: bool, key: str) -> CompileResult:
        out = self.cache_dir / "classes" / key
        done = out / ".ok"
        fail = out.with_suffix(".failed")
        if fail.exists():
            return CompileResult(False, None, fail.read_text(errors="replace"), key, cached=True)
        for name in sources:
            if Path(name).is_absolute() or ".." in Path(name).parts:
                raise InfrastructureError(f"bad source path {name!r}")
        (self.cache_dir / "classes").mkdir(parents=True, exist_ok=True)
        classpath = tuple(Path(p) for p in classpath)
        started, self._javac_cpu, starts = time.monotonic(), None, self.javac_shared_starts
        # Trusted classes (shared by every state folder through the store) come from a javac
        # job of their own, never from the warm javac, which also compiles samples' sources.
        answer = self._serve(sources, classpath, timeout) if use_server and not trusted else None
        how = "server" if answer is not None else "once"
        if answer is None:
            answer = self._javac_once(sources, classpath, timeout)
        jvm_store.log("javac", trusted=trusted, how=how, key=key, state=str(self.cache_dir),
                      wall=round(time.monotonic() - started, 3), cpu=self._javac_cpu,
                      archive=self.javac_shared_starts > starts)
        if answer is None:
            return CompileResult(False, None, f"javac timed out after {timeout:.0f} s", key)
        rc, diag, classes = answer
        if rc != 0:
            if rc == JAVAC_ERRORS:
                # Errors in the sources: the same sources fail the same way next time.  Any
                # other end (killed, out of memory, javac's own crash) may be the machine's:
                # never remembered, the next compilation tries again (#48).
                tmp = fail.with_name(f"{fail.name}.{os.getpid()}.tmp")
                tmp.write_text(diag)
                os.replace(tmp, fail)
            return CompileResult(False, None, diag, key)
        if trusted:
            for rel in classes:
                if Path(rel).is_absolute() or ".." in Path(rel).parts:
                    raise InfrastructureError(f"javac answered with a class outside its folder: {rel!r}")
            return CompileResult(True, self.store.put("classes", key, classes), diag, key)
        with tempfile.TemporaryDirectory(dir=self.cache_dir / "classes", prefix="tmp-") as tmp:
            outdir = Path(tmp) / "out"
            outdir.mkdir()
            for rel, data in classes.items():
                target = (outdir / rel).resolve()
                if not str(target).startswith(str(outdir.resolve()) + os.sep):
                    raise InfrastructureError(f"javac answered with a class outside its folder: {rel!r}")
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(data)
            (outdir / ".ok").write_text("")
            try:
                os.rename(outdir, out)
            except OSError:
                if not done.exists():
                    raise
        return CompileResult(True, out, diag, key)

    def _javac_once(self, sources: Mapping[str, str], classpath: tuple[Path, ...],
                    timeout: float) -> tuple[int, str, dict[str, bytes]] | None:
        """One javac process: a job of the sandbox (its classes come back as a
        tar file), or a plain child when the executor is not isolated.  None on timeout."""
        cp = os.pathsep.join(str(p) for p in classpath)
        names = sorted(sources)
        start, shared = self._javac_start(sources)
        self.javac_starts += 1
        self.javac_shared_starts += shared is not None
        if shared is None:
            # (its own JVM under the sandbox's address-space limit: a bounded heap)
            args = ["-J-Xmx512m", *JAVAC_FLAGS, "-d", "out"] + (["-cp", cp] if cp else [])
        else:
            # Started by `java`, javac would take the JVM's class path (the archive's jars) for
            # its own when given none: it is given the one the `javac` launcher gives it then
            # (no CLASSPATH in the job's environment: the working folder).
            args = [*(f for f in JAVAC_FLAGS if not f.startswith("-J")), "-d", "out", "-cp", cp or "."]
        args += [f"src/{n}" for n in names]
        command = self._command_executor()
        if command is not None:
            script = 'mkdir out && "$0" "$@" && tar -C out -cf out.tar .'
            job = CommandJob(argv=("/bin/sh", "-c", script, *start, *args),
                             readonly=classpath + (shared.readonly if shared else ()),
                             files={f"src/{n}": sources[n].encode("utf-8") for n in names},
                             env=dict(JVM_ENV), collect=("out.tar",), wall_seconds=timeout, cpu_seconds=timeout,
                             memory_mb=self.memory_mb, output_bytes=self.output_bytes)
            r = command.run(None, job)
            self._javac_cpu = round(r.cpu, 3)
            if r.timed_out:
                return None
            diag = _strip_src(r.stdout + r.stderr)
            if r.exit_code != 0:  # (a shell killed by a signal has no exit code: not javac's verdict)
                return (r.exit_code if r.exit_code is not None else -1), diag, {}
            return 0, diag, _untar(r.files.get("out.tar", b""))
        with tempfile.TemporaryDirectory(prefix="specbench-javac-") as tmp:
            for n in names:
                f = Path(tmp) / "src" / n
                f.parent.mkdir(parents=True, exist_ok=True)
                f.write_text(sources[n], encoding="utf-8")
            (Path(tmp) / "out").mkdir()
            ru = resource.getrusage(resource.RUSAGE_CHILDREN)
            try:
                r = subprocess.run([*start, *args], capture_output=True, text=True, timeout=timeout, cwd=tmp,
                                   env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C.UTF-8"})
            except subprocess.TimeoutExpired:
                return None
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            self._javac_cpu = round(after.ru_utime + after.ru_stime - ru.ru_utime - ru.ru_stime, 3)
            classes = {str(p.relative_to(Path(tmp) / "out")): p.read_bytes()
                       for p in (Path(tmp) / "out").rglob("*") if p.is_file()}
            return r.returncode, _strip_src(r.stdout + r.stderr), classes if r.returncode == 0 else {}

    def _javac_start(self, sources: Mapping[str, str]) -> tuple[tuple[str, ...], Shared | None]:
        """How a javac job's JVM starts: from the warm javac's class-data archive (javac's own
        classes, ``jdk.compiler``), with the server's JVM flags and class path (the archive's
        key: a trusted training run, no job's code; bound read-only into the job as the server
        has it); else as ``javac`` starts.  The archive and the server's classes are made first
        when the store has none, as the server's first start makes them (one javac job and one
        training run per store; every family that compiles trusted classes compiles a sample
        next, through the server): the javac jobs of a fresh store -- a family's runtime, the
        JUnit runner, a Java project -- then start from it too (~0.6 of a trusted job's ~1.5
        CPU s).  A trusted compile is still a fresh javac of its own, never the warm one."""
        javac = (self.javac,)
        harness = harness_sources()
        if not self.sharing.enabled or dict(sources) == harness:
            return javac, None  # (the server's classes: what the archive is made from)
        res = self.compile(harness, use_server=False, trusted=True)
        if not res.ok:
            return javac, None
        shared = self.sharing.share((res.classes,), SERVER_FLAGS, modules=JAVAC_MODULES, build_after=1)
        if shared.archive is None:
            return javac, None
        # (its warnings off: a refused archive is a plain start, and javac's output is a verdict)
        flags = tuple(f for f in shared.flags if f not in class_sharing.RUN_FLAGS) + ("-Xshare:auto", "-Xlog:disable")
        return (self.java, *SERVER_FLAGS, *flags, "-cp", os.pathsep.join(map(str, shared.classpath)),
                JAVAC_MAIN), shared

    # A warm javac saves a JVM start per compilation.  It is restarted when it
    # dies or stops answering (a CPU limit, a hung compilation); after
    # _SERVER_STARTS failed starts, javac runs once per compilation instead.
    def _serve(self, sources: Mapping[str, str], classpath: tuple[Path, ...],
               timeout: float) -> tuple[int, str, dict[str, bytes]] | None:
        for _ in range(2):
            server = self._server_for(classpath)
            if server is None:
                return None
            try:
                answer = server.compile(sources, classpath, timeout)
                self._server_failures = 0  # only failures in a row give up on the server
                return answer
            except (OSError, EOFError, ValueError, TimeoutError, InfrastructureError) as exc:
                self._stop_server()
                self._server_failures += 1
                self._server_broken = f"javac server failed: {exc}" if self._server_failures >= _SERVER_STARTS else None
        return None

    def _server_for(self, classpath: tuple[Path, ...]) -> "_JavacServer | None":
        server = self._server
        if server is not None and server.alive() and server.sees(classpath):
            return server
        roots = set(classpath) | (server.roots if server is not None else set())
        self._stop_server()
        if self._server_broken:
            return None
        res = self.compile(harness_sources(), use_server=False, trusted=True)  # (with ClassWarmup: one javac)
        if not res.ok:
            self._server_broken = "javac server did not compile"
            return None
        try:
            started = time.monotonic()
            self._server = _JavacServer.start(self, res.classes, roots)
            jvm_store.log("javac-server", state=str(self.cache_dir), wall=round(time.monotonic() - started, 3))
        except (OSError, InfrastructureError) as exc:
            self._server_failures += 1
            if self._server_failures >= _SERVER_STARTS:
                self._server_broken = str(exc)
            return None
        return self._server

    def _stop_server(self) -> None:
        server, self._server = self._server, None
        if server is not None:
            server.stop()

    def prepare(self, env: Environment) -> Prepared:
        if env.kind != "classpath":
            raise InfrastructureError(f"the jvm executor builds 'classpath' environments, not {env.kind!r}")
        sources = env.spec.get("sources", {})
        classpath = tuple(Path(p) for p in env.spec.get("classpath", ()))
        res = self.compile(sources, classpath, trusted=True)  # prepare() is for trusted code
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
        # The class path's classes from an AppCDS archive when there is one (its jars
        # for the folders, the archive bound read-only like them); else a plain start.
        shared = self.sharing.share(classpath, JVM_FLAGS + tuple(job.flags), training=job.training)
        job = JavaJob(**{**job.__dict__, "classpath": shared.classpath, "flags": shared.flags + tuple(job.flags)})
        self.starts += 1
        self.shared_starts += shared.archive is not None
        command = self._command_executor()
        if command is not None:
            cjob = CommandJob(argv=tuple(self.argv(job)),
                              readonly=classpath + shared.classpath + shared.readonly + tuple(job.readonly),
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
            self._command = CommandExecutor(hide=self.hide, isolate=True, state_dir=self.state_dir, warm=False)
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


class _JavacServer:
    """The warm javac (``specbench.jvm.CompileServer``): requests go in through a
    FIFO, answers (diagnostics and class files) come back as JSON lines.  In the
    sandbox it is a long-lived job of a ``command`` executor of its own (the job
    holds that executor's zygote): no network, project and home hidden, its own
    uid, address-space, CPU and output limits, the class-path folders bound
    read-only; it reads the FIFO (bound read-only) and answers on its record
    channel.  Not isolated: a plain child on pipes."""

    def __init__(self, roots: set[Path]):
        self.roots = set(roots)  # the class-path folders bound into its sandbox
        self.store_classes: Path | None = None  # the store's class folder, bound whole (its entries are seen)
        self._seq = 0
        self._wfd: int | None = None
        self._fifo_dir: Path | None = None
        self._live = None  # LiveJob (sandbox)
        self._proc: subprocess.Popen | None = None  # plain child
        self._buf = b""

    @classmethod
    def start(cls, jvm: "JvmExecutor", classes: Path, roots: set[Path]) -> "_JavacServer":
        server = cls(roots)
        # javac's own classes (jdk.compiler) are most of its start: archived with the server's,
        # at its first start (a run starts it once per worker; the store keeps the archive).
        shared = jvm.sharing.share((classes,), SERVER_FLAGS, modules=JAVAC_MODULES, build_after=1)
        cp = os.pathsep.join(str(p) for p in shared.classpath)
        main = (jvm.java, *SERVER_FLAGS, *shared.flags, "-cp", cp, "specbench.jvm.CompileServer")
        if jvm._command_executor() is None:
            server._proc = subprocess.Popen(
                [*main, "-", "-"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                cwd=tempfile.gettempdir(), start_new_session=True,
                env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C.UTF-8", **JVM_ENV})
            server._wfd = server._proc.stdin.fileno()
            return server
        from .command import CommandExecutor

        # The store's class folder is bound whole (read-only; 0711, jvm_store.JvmStore.ready): a
        # trusted class folder made after this start (a PostcondBench project, the JUnit runner)
        # is on it already, so a compile against it needs no new server (a start is ~1 CPU s, a
        # Java project or family more in a run was one more each).  It holds trusted classes only.
        # (Only when others may pass through it: a uid of the job's own would find no entry
        # there, and a sample's compile would fail for it.)
        store_classes = jvm.store.root / "classes"
        if store_classes.is_dir() and store_classes.stat().st_mode & 0o001:
            server.store_classes = store_classes
        server._fifo_dir = Path(tempfile.mkdtemp(prefix="javac-", dir=jvm.cache_dir))
        os.chmod(server._fifo_dir, 0o755)
        fifo = server._fifo_dir / "requests"
        os.mkfifo(fifo, 0o644)
        server._wfd = os.open(fifo, os.O_RDWR)  # never blocks, and the reader sees no EOF while we live
        own = CommandExecutor(hide=jvm.hide, isolate=True, state_dir=jvm.state_dir, warm=False)
        # stdout onto the record channel (fd 3, inherited: a uid of its own cannot reopen it by path)
        job = CommandJob(argv=("/bin/sh", "-c", 'exec "$@" >&3', "sh", *main, str(fifo), "-"),
                         # (the store's folder first: bound after one of its entries, it would be the
                         # mount point made for that entry, not the store's)
                         readonly=(*([server.store_classes] if server.store_classes else []), classes,
                                   *shared.readonly, server._fifo_dir,
                                   *sorted(r for r in roots if Path(r).parent != server.store_classes)),
                         env=dict(JVM_ENV),
                         cpu_seconds=3600.0, wall_seconds=7 * 86400.0, memory_mb=jvm.memory_mb, output_bytes=1 << 16)
        try:
            server._live = own.spawn(None, job)
        except BaseException:
            server.stop()
            own.close()
            raise
        return server

    def alive(self) -> bool:
        if self._proc is not None:
            return self._proc.poll() is None
        return self._live is not None and self._live.result is None

    def sees(self, classpath: Sequence[Path]) -> bool:
        """Whether a compile against ``classpath`` can run in this server: a plain child sees
        every path; a sandboxed one its bound folders and every entry of the store's classes."""
        if self._proc is not None:
            return True
        return all(Path(p) in self.roots or (self.store_classes is not None and Path(p).parent == self.store_classes)
                   for p in classpath)

    def compile(self, sources: Mapping[str, str], classpath: Sequence[Path],
                timeout: float) -> tuple[int, str, dict[str, bytes]]:
        import base64
        import json

        self._seq += 1
        ident = str(self._seq)
        flags = [f for f in JAVAC_FLAGS if not f.startswith("-J")]
        head = f"{ident} {len(flags)} {len(classpath)} {len(sources)}\n" + "".join(f + "\n" for f in flags) + \
            "".join(f"{p}\n" for p in classpath)
        data = bytearray(head.encode("utf-8"))
        for name in sorted(sources):
            text = sources[name].encode("utf-8")
            data += f"{len(text)} {name}\n".encode("utf-8") + text
        view = memoryview(bytes(data))
        while view:
            view = view[os.write(self._wfd, view):]
        deadline = time.monotonic() + timeout
        while True:
            answer = self._next(deadline)
            if answer.get("id") == ident:
                break
        classes = {str(k): base64.b64decode(v) for k, v in (answer.get("classes") or {}).items()}
        return int(answer["rc"]), str(answer.get("diag", "")), classes

    def _next(self, deadline: float) -> dict:
        import json
        import select

        if self._live is not None:
            return self._live.record(max(deadline - time.monotonic(), 0.01))
        fd = self._proc.stdout.fileno()
        while b"\n" not in self._buf:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                raise TimeoutError("the javac server did not answer in time")
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                raise EOFError("the javac server exited")
            self._buf += chunk
        line, self._buf = self._buf.split(b"\n", 1)
        value = json.loads(line)
        if not isinstance(value, dict):
            raise ValueError("the javac server answered garbage")
        return value

    def stop(self) -> None:
        if self._live is not None:
            self._live.stop()
            self._live = None
        if self._proc is not None:
            proc, self._proc = self._proc, None
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
            self._wfd = None
        if self._wfd is not None:
            try:
                os.close(self._wfd)
            except OSError:
                pass
            self._wfd = None
        if self._fifo_dir is not None:
            shutil.rmtree(self._fifo_dir, ignore_errors=True)
            self._fifo_dir = None


def _strip_src(diag: str) -> str:
    """javac's messages name files as the caller did (``A.java:3: error``), not ``src/A.java``."""
    import re

    return re.sub(r"(?m)^src/", "", diag)


def _untar(data: bytes) -> dict[str, bytes]:
    """The class files of a tar file a sandboxed javac wrote (regular files only)."""
    import io
    import tarfile

    out = {}
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        for member in tar.getmembers():
            name = os.path.normpath(member.name)
            if member.isfile() and not name.startswith(("..", "/")):
                out[name] = tar.extractfile(member).read()
    return out


def make(settings: Any, hide: Sequence[str]) -> JvmExecutor:
    """The ``jvm`` executor of :func:`pytest_specbench.execution.make_executor`."""
    state = Path(getattr(settings, "state_dir", None) or Path(tempfile.gettempdir()) / "specbench-state")
    limits = getattr(settings, "limits", None)
    return JvmExecutor(state / "jvm", hide=hide, isolate=getattr(settings, "sandbox", "process") == "process",
                       state_dir=state,
                       memory_mb=max(getattr(limits, "memory_mb", 4096), 4096),
                       output_bytes=getattr(limits, "output_bytes", 1 << 20) * 16)
