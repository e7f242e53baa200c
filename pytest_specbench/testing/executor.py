"""The executor contract, shipped: one list of probes for every executor.

As Inspect AI's sandbox ``self_check`` runs one list of checks over each
sandbox provider, :func:`check_executor` runs the same probes through an
executor (``execution/protocol.py``): a *driver* says how to write a probe in
that executor's language and how to read its result (:class:`CommandDriver`,
:class:`PythonDriver`, :class:`JvmDriver`, :class:`LeanDriver` for the
registered kinds, :data:`DRIVERS`); the assertions are the same for all:

* a job's CPU, wall-clock, memory and output limits are enforced, and a job
  stopped by one is a result, not an exception;
* no network (a listening socket on 127.0.0.1 is out of reach; needs root);
* the project (any hidden path) and ``$HOME`` are out of reach;
* what a job writes (its working directory, ``/tmp``) is gone for the next job;
* a crash (a signal) is a result, and the executor runs the next job;
* a setup fault (an environment it cannot build) is ``InfrastructureError``.

A new executor brings a driver (``kind``, ``skip_reason(ex)``, ``setup(ex,
folder)``, ``run(ex, probe, arg) -> Outcome``, ``broken_environment(folder)``)
and calls ``check_executor(Subject.hiding(folder, make))`` from a test, where
``make(hidden_paths)`` builds the executor hiding those paths
(``tests/test_executor_conformance.py`` does it for every registered kind, one
test per clause).  The Lean driver has never run on this project's machines
(Lean is not installable there): its probes go through a shell started by
``#eval`` (``IO.Process.output``), the way a hostile Lean file would.
"""
from __future__ import annotations

import os
import re
import socket
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from ..errors import InfrastructureError
from ..execution.protocol import CommandJob, Environment

ROOT = os.geteuid() == 0
OUTPUT_CAP = 1 << 16  # bytes of a stream the probes' jobs may keep
FLOOD = 8 << 20  # bytes a flooding probe writes (far over the cap)
HOME = os.path.realpath(os.path.expanduser("~"))


@dataclass
class Outcome:
    """A probe's result in the driver-independent terms the contract speaks."""

    text: str  # what the probe printed or returned
    stopped: bool = False  # a CPU or wall limit ended it
    signal: int | None = None  # the signal that ended it
    output_len: int = 0  # bytes of output the executor kept
    truncated: bool = False  # the executor said it cut the output


# ------------------------------------------------------------------ drivers
# Probes: echo, spin (CPU), sleep (wall), alloc (4 GiB), flood (FLOOD bytes to
# stdout), net PORT, read PATH, write NAME (in its working directory and /tmp),
# look NAME (which of those it sees), crash (a segfault).

SHELL = {
    "echo": "echo hello",
    "spin": "while :; do :; done",
    "sleep": "sleep 3600",
    "alloc": "/usr/bin/python3 -c 'x = bytearray(4 << 30); print(\"ALLOCATED\")'",
    "flood": f"head -c {FLOOD} /dev/zero | tr '\\0' x; echo",
    "net": "/usr/bin/python3 -c 'import socket, sys\ntry:\n socket.create_connection((\"127.0.0.1\", int(sys.argv[1])),"
           " timeout=2); print(\"OPEN\")\nexcept OSError as e: print(\"DENIED\", type(e).__name__)' {arg}",
    "read": "cat {arg} 2>/dev/null && echo READ || echo DENIED",
    "write": "echo x > {arg}; echo x > /tmp/{arg}; for p in {arg} /tmp/{arg}; do [ -e $p ] && echo SEEN $p; done;"
             " echo wrote",
    "look": "for p in {arg} /tmp/{arg}; do [ -e $p ] && echo SEEN $p; done; echo looked",
    "crash": "kill -SEGV $$",
}


class CommandDriver:
    kind = "command"

    def skip_reason(self, ex):
        return ex.available()

    def setup(self, ex, tmp):
        pass

    def job(self, probe, arg=""):
        # The sleeper's wall limit is short (it is stopped the same way at any length); the CPU
        # limit is whole seconds (RLIMIT_CPU), 1 s at least.
        limits = {"cpu_seconds": 1.0, "wall_seconds": 0.5 if probe == "sleep" else 20.0, "memory_mb": 1024,
                  "output_bytes": OUTPUT_CAP}
        return CommandJob(argv=("sh", "-c", SHELL[probe].format(arg=arg)), **limits)

    def run(self, ex, probe, arg=""):
        return self.read(ex.run(None, self.job(probe, arg)))

    @staticmethod
    def read(result):
        return Outcome(text=result.stdout + result.stderr, stopped=result.timed_out, signal=result.signal,
                       output_len=max(len(result.stdout), len(result.stderr)), truncated=result.output_truncated)

    def broken_environment(self, tmp):
        return Environment(kind="interpreter", key="missing", spec={"python": str(tmp / "no-such-python")})


PYTHON_PROBE = """
import os, signal, socket, sys, time

def f(probe, arg):
    if probe == "echo":
        return "hello"
    if probe == "spin":
        while True:
            pass
    if probe == "sleep":
        time.sleep(3600)
    if probe == "alloc":
        x = bytearray(4 << 30)
        return "ALLOCATED"
    if probe == "flood":
        chunk = "x" * 65536
        for _ in range(%d // 65536):
            sys.stdout.write(chunk)
        sys.stdout.flush()
        return "flooded"
    if probe == "net":
        try:
            socket.create_connection(("127.0.0.1", int(arg)), timeout=2)
            return "OPEN"
        except OSError as exc:
            return "DENIED " + type(exc).__name__
    if probe == "read":
        try:
            with open(arg) as fh:
                return fh.read() + " READ"
        except OSError as exc:
            return "DENIED " + type(exc).__name__
    if probe in ("write", "look"):
        if probe == "write":
            for folder in (".", "/tmp"):
                with open(os.path.join(folder, arg), "w") as fh:
                    fh.write("x")
        seen = " ".join("SEEN " + p for p in (arg, "/tmp/" + arg) if os.path.exists(p))
        return seen + (" wrote" if probe == "write" else " looked")
    if probe == "crash":
        os.kill(os.getpid(), signal.SIGSEGV)
""" % FLOOD


class PythonDriver:
    kind = "python"

    def skip_reason(self, ex):
        return ex.available()

    def setup(self, ex, tmp):
        pass

    def run(self, ex, probe, arg=""):
        from pytest_specbench.execution.python import CallsJob

        calls = [((probe, str(arg)), {})]
        result = ex.run(None, CallsJob(PYTHON_PROBE, "f", f"conformance:{probe}:{arg}", lambda: calls, [0]))
        outcome = result.outcomes.get(0)
        if outcome is None:
            text = result.failure_reason()
        elif outcome.status == "ok":
            text = str(outcome.value)
        else:
            text = f"{outcome.status} {outcome.exc_type}"
        return Outcome(text=text, stopped=outcome is not None and outcome.status == "timeout", signal=result.signal,
                       output_len=len(result.output), truncated=False)

    def broken_environment(self, tmp):
        return Environment(kind="interpreter", key="missing", spec={"python": str(tmp / "no-such-python")})


JAVA_PROBE = """import java.nio.file.*;
public class Probe {
    public static void main(String[] a) throws Exception {
        String arg = a.length > 1 ? a[1] : "";
        switch (a[0]) {
            case "echo": System.out.println("hello"); break;
            case "spin": while (true) { }
            case "sleep": Thread.sleep(3_600_000L); break;
            case "alloc": { byte[][] keep = new byte[64][];
                            for (int i = 0; i < 64; i++) keep[i] = new byte[64 << 20];
                            System.out.println("ALLOCATED " + keep.length); break; }
            case "flood": { StringBuilder b = new StringBuilder(); for (int i = 0; i < 65536; i++) b.append('x');
                            String s = b.toString(); for (int i = 0; i < %d / 65536; i++) System.out.print(s);
                            System.out.flush(); break; }
            case "net": try (java.net.Socket s = new java.net.Socket()) {
                            s.connect(new java.net.InetSocketAddress("127.0.0.1", Integer.parseInt(arg)), 2000);
                            System.out.println("OPEN");
                        } catch (Exception e) { System.out.println("DENIED " + e.getClass().getSimpleName()); }
                        break;
            case "read": try { System.out.println(Files.readString(Paths.get(arg)) + " READ"); }
                         catch (Exception e) { System.out.println("DENIED " + e.getClass().getSimpleName()); }
                         break;
            case "write": Files.writeString(Paths.get(arg), "x"); Files.writeString(Paths.get("/tmp", arg), "x");
            case "look": for (Path p : new Path[] {Paths.get(arg), Paths.get("/tmp", arg)})
                             if (Files.exists(p)) System.out.println("SEEN " + p);
                         System.out.println(a[0].equals("write") ? "wrote" : "looked"); break;
            case "crash": { java.lang.reflect.Field f = sun.misc.Unsafe.class.getDeclaredField("theUnsafe");
                            f.setAccessible(true);
                            ((sun.misc.Unsafe) f.get(null)).putAddress(0L, 0L); break; }
            default: System.out.println("unknown probe " + a[0]);
        }
    }
}""" % FLOOD


class JvmDriver:
    kind = "jvm"
    classes = None

    def skip_reason(self, ex):
        return ex.available()

    def setup(self, ex, tmp):
        compiled = ex.compile({"Probe.java": JAVA_PROBE})
        assert compiled.ok, compiled.diagnostics
        self.classes = compiled.classes

    def run(self, ex, probe, arg=""):
        from pytest_specbench.execution.jvm import JavaJob

        # 2.5 s of CPU for the JVM's own start; the spinner and the sleeper are stopped the same
        # way by smaller limits (RLIMIT_CPU of 1 s, 1.5 s of wall), started or not.
        limits = {"cpu_seconds": 0.5 if probe == "spin" else 2.5, "wall_seconds": 1.5 if probe == "sleep" else 30.0,
                  "output_bytes": OUTPUT_CAP}
        if probe == "alloc":  # a heap as large as asked: the sandbox's address-space limit must stop it
            limits.update(memory_mb=1024, flags=("-Xmx6g",))
        job = JavaJob(main="Probe", args=(probe, str(arg)), classpath=(self.classes,), **limits)
        return CommandDriver.read(ex.run(None, job))

    def broken_environment(self, tmp):
        return Environment(kind="classpath", key="broken", spec={"sources": {"B.java": "class B { x }"}})


LEAN_NATIVE = {  # probes that must stop Lean itself, not a child of it
    "spin": "partial def spin (n : Nat) : Nat := spin (n + 1)\n#eval spin 0\n",
    "sleep": "#eval IO.sleep 3600000\n",
}


class LeanDriver:
    """The limits' probes are Lean's own (:data:`LEAN_NATIVE`); the others are the
    shell probes of :class:`CommandDriver`, started by ``#eval`` (the allocation
    asks for more than Lean's 16 GiB address space, which Mathlib needs)."""

    kind = "lean"
    project = os.environ.get("SPECBENCH_LEAN_PROJECT", "")

    def skip_reason(self, ex):
        from pytest_specbench.execution.lean import project_problem

        return ex.available() or project_problem(Path(self.project) if self.project else None, ("mathlib",))

    def setup(self, ex, tmp):
        pass

    def run(self, ex, probe, arg=""):
        from pytest_specbench.execution.lean import LeanJob

        script = SHELL[probe].format(arg=arg).replace("4 << 30", "64 << 30")
        script = script.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
        text = LEAN_NATIVE.get(probe) or (
            "def main : IO Unit := do\n"
            f"  let out ← IO.Process.output {{ cmd := \"sh\", args := #[\"-c\", \"{script}\"] }}\n"
            "  IO.print out.stdout\n  IO.print out.stderr\n#eval main\n")
        if probe == "crash":  # the shell kills Lean, its parent
            text = text.replace("kill -SEGV $$", "kill -SEGV $PPID")
        self.jobs = getattr(self, "jobs", 0) + 1  # a comment of its own: the executor caches files by content
        job = LeanJob(f"{text}-- job {self.jobs}\n", project=self.project, base_cpu_seconds=3.0,
                      cpu_seconds_per_command=1.0)
        return CommandDriver.read(ex.run(None, job))

    def broken_environment(self, tmp):
        return Environment(kind="lean-project", key="broken", spec={"project": str(tmp)})


DRIVERS = {d.kind: d for d in (CommandDriver(), PythonDriver(), JvmDriver(), LeanDriver())}


# ------------------------------------------------------------------ the subject
@dataclass
class Subject:
    """An executor under test, its driver, and the paths it must hide (each with a secret)."""

    driver: Any
    executor: Any
    project: Path  # hidden: holds secret.txt
    state: Path  # hidden: holds cache.txt
    base: Path  # a scratch folder for the driver

    @classmethod
    def hiding(cls, base: Path, driver: Any, make: Callable[[list[str]], Any]) -> "Subject":
        """A project and a state folder with a secret each under ``base``, and the executor
        ``make(hidden)`` builds hiding them."""
        project, state = base / "project", base / "state"
        project.mkdir(parents=True, exist_ok=True)
        state.mkdir(parents=True, exist_ok=True)
        (project / "secret.txt").write_text("project secret")
        (state / "cache.txt").write_text("state secret")
        return cls(driver, make([str(project), str(state)]), project, state, base)


def probe(subject: Subject, name: str, arg: Any = "") -> Outcome:
    """Run one probe and then check that the executor still runs the next job."""
    outcome = subject.driver.run(subject.executor, name, arg)
    healthy = subject.driver.run(subject.executor, "echo")
    assert "hello" in healthy.text, f"the job after {name!r} did not run: {healthy.text!r}"
    return outcome


# ------------------------------------------------------------------ the contract
def check_runs(subject: Subject) -> None:
    outcome = subject.driver.run(subject.executor, "echo")
    assert "hello" in outcome.text and not outcome.stopped and outcome.signal is None, outcome


def check_cpu_limit(subject: Subject) -> None:
    assert probe(subject, "spin").stopped, "a busy loop was not stopped by the CPU limit"


def check_wall_limit(subject: Subject) -> None:
    assert probe(subject, "sleep").stopped, "a sleeper was not stopped by the wall-clock limit"


def check_memory_limit(subject: Subject) -> None:
    outcome = probe(subject, "alloc")
    assert "ALLOCATED" not in outcome.text, "a job allocated 4 GiB"
    assert re.search(r"MemoryError|OutOfMemoryError|reserve enough space", outcome.text), outcome.text


def check_output_cap(subject: Subject) -> None:
    outcome = probe(subject, "flood")
    assert 0 < outcome.output_len <= OUTPUT_CAP < FLOOD, outcome


def check_no_network(subject: Subject) -> None:
    """Needs root (a network namespace of its own per sandbox)."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    try:
        outcome = probe(subject, "net", server.getsockname()[1])
    finally:
        server.close()
    assert "DENIED" in outcome.text and "OPEN" not in outcome.text, outcome.text


def check_hidden_paths(subject: Subject) -> None:
    for secret in (subject.project / "secret.txt", subject.state / "cache.txt"):
        outcome = probe(subject, "read", secret)
        assert "secret" not in outcome.text and "READ" not in outcome.text and "DENIED" in outcome.text, \
            (secret, outcome.text)
    home_file = next((Path(HOME) / n for n in (".bashrc", ".profile") if (Path(HOME) / n).is_file()), None)
    if home_file is not None:
        assert "READ" not in probe(subject, "read", home_file).text, home_file


def check_files_are_gone(subject: Subject) -> None:
    wrote = probe(subject, "write", "left-behind.txt")
    assert "wrote" in wrote.text and wrote.text.count("SEEN") == 2, wrote.text  # a job sees its own files
    seen = probe(subject, "look", "left-behind.txt")
    assert "looked" in seen.text and "SEEN" not in seen.text, seen.text


def check_crash_is_a_result(subject: Subject) -> None:
    outcome = probe(subject, "crash")
    assert outcome.signal is not None and "hello" not in outcome.text, outcome


def check_setup_fault(subject: Subject) -> None:
    try:
        subject.executor.prepare(Environment(kind="no-such-kind", key="x"))
    except InfrastructureError:
        pass
    else:
        raise AssertionError("an unknown environment kind was not an InfrastructureError")
    try:
        subject.executor.prepare(subject.driver.broken_environment(subject.base))
    except InfrastructureError:
        pass
    else:
        raise AssertionError("an environment that cannot be built was not an InfrastructureError")
    assert "hello" in subject.driver.run(subject.executor, "echo").text


CONTRACT = (check_runs, check_cpu_limit, check_wall_limit, check_memory_limit, check_output_cap, check_no_network,
            check_hidden_paths, check_files_are_gone, check_crash_is_a_result, check_setup_fault)


def check_executor(subject: Subject, network: bool | None = None) -> str | None:
    """Every clause of the contract, in order (an AssertionError names the first one
    broken).  Returns why it did not run, when the driver says the executor is not
    available here (a missing toolchain), else None.  ``network``: check the network
    clause (default: when running as root, which a network namespace needs)."""
    reason = subject.driver.skip_reason(subject.executor)
    if reason:
        return reason
    subject.driver.setup(subject.executor, subject.base)
    for clause in CONTRACT:
        if clause is check_no_network and not (ROOT if network is None else network):
            continue
        clause(subject)
    return None
