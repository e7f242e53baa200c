"""The jvm executor: install hint, compile cache by content, javac diagnostics, a job's limits."""
from __future__ import annotations

import shutil

import pytest

from pytest_specbench.errors import InfrastructureError
from pytest_specbench.execution import make_executor
from pytest_specbench.execution.jvm import JavaJob, JvmExecutor
from pytest_specbench.execution.protocol import Environment

needs_jdk = pytest.mark.skipif(not (shutil.which("javac") and shutil.which("java")),
                               reason="javac/java not found: apt-get install openjdk-17-jdk-headless")


def test_missing_toolchain_gives_one_line_install_hint(tmp_path):
    ex = JvmExecutor(tmp_path)
    ex.javac = None
    assert ex.available() == "javac not found: apt-get install openjdk-17-jdk-headless"
    with pytest.raises(InfrastructureError):
        ex.compile({"A.java": "class A {}"})


def test_make_executor_knows_jvm(tmp_path):
    class S:
        state_dir = tmp_path
        sandbox = "process"
        limits = None

    ex = make_executor("jvm", S(), [])
    assert ex.kind == "jvm" and ex.version


@pytest.fixture(scope="module")
def isolated(tmp_path_factory):
    """One sandboxed executor (its warm javac a job of the command executor) for the tests
    below: each started its own, and a warm javac's start is most of what compiling one
    class costs.  Each test compiles sources of its own (content keys of its own), so what
    one compiles is never another's cache hit; the warm javac test kills the server and
    the next compile starts a fresh one, as it would in a test of its own."""
    if not (shutil.which("javac") and shutil.which("java")):
        pytest.skip("javac/java not found: apt-get install openjdk-17-jdk-headless")
    base = tmp_path_factory.mktemp("isolated")
    ex = JvmExecutor(base / "jvm", isolate=True, state_dir=base)
    yield ex
    ex.close()
    assert not ex._server


@needs_jdk
def test_compile_is_cached_by_content_and_reports_javac_errors(isolated):
    ex = isolated
    a = ex.compile({"A.java": "public class A { public static void main(String[] x) { System.out.print(7); } }"})
    b = ex.compile({"A.java": "public class A { public static void main(String[] x) { System.out.print(7); } }"})
    assert a.ok and b.ok and b.cached and a.classes == b.classes
    bad = ex.compile({"B.java": "public class B { int f() { return y; } }"})
    assert not bad.ok and "B.java:1: error: cannot find symbol" in bad.diagnostics
    # trusted sources go to a javac job of their own (never the warm javac): its errors, named
    # as the caller named the file, are the harness's (E)
    with pytest.raises(InfrastructureError, match=r"javac failed for bad: B\.java:1: error"):
        ex.prepare(Environment("classpath", "bad", {"sources": {"B.java": "class B { x }"}}))
    res = ex.run(None, JavaJob(main="A", classpath=(a.classes,), wall_seconds=60))
    assert res.exit_code == 0 and res.stdout == "7"


def _server_pid(ex: JvmExecutor) -> int:
    """The process of the executor's warm javac (found by its FIFO on the command line)."""
    import os

    fifo = str(ex._server._fifo_dir / "requests")
    for pid in (p for p in os.listdir("/proc") if p.isdigit()):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as fh:
                argv = fh.read().split(b"\0")
        except OSError:
            continue
        if fifo.encode() in argv and any(b"CompileServer" in a for a in argv) and argv[0].endswith(b"java"):
            return int(pid)
    raise AssertionError("no javac server process")


@needs_jdk
def test_warm_javac_runs_in_the_sandbox_and_comes_back_after_it_dies(isolated):
    import os
    import signal
    import time

    ex = isolated
    first = ex.compile({"Aw.java": "public class Aw { class In {} }"})
    assert first.ok and {p.name for p in first.classes.glob("*.class")} == {"Aw.class", "Aw$In.class"}
    assert ex._server is not None and ex._server._live is not None  # a job of the command executor
    pid = _server_pid(ex)
    # confined: another network namespace and (as root) a uid of its own
    assert os.readlink(f"/proc/{pid}/ns/net") != os.readlink("/proc/self/ns/net")
    if os.geteuid() == 0:
        with open(f"/proc/{pid}/status") as fh:
            uid = next(int(line.split()[1]) for line in fh if line.startswith("Uid:"))
        assert uid != 0
    bad = ex.compile({"Bw.java": "public class Bw { int f() { return x; } }"})
    assert not bad.ok and bad.diagnostics.startswith("Bw.java:1: error: cannot find symbol")
    # A class folder of the store it was not started with (a project, a runner built later) is
    # seen through the store's folder, bound whole and read-only: no new server for it.
    [entry] = {p.parents[2] for p in (ex.store.root / "classes").glob("*/specbench/jvm/CompileServer.class")}
    uses = ex.compile({"Uw.java": "public class Uw { specbench.jvm.CompileServer s; }"}, (entry,))
    assert uses.ok, uses.diagnostics
    assert _server_pid(ex) == pid and entry not in ex._server.roots
    os.kill(pid, signal.SIGKILL)
    time.sleep(0.2)
    again = ex.compile({"Cw.java": "public class Cw {}"})
    assert again.ok and (again.classes / "Cw.class").is_file()
    assert _server_pid(ex) != pid  # a fresh server answered
    # (the fixture's teardown asserts that closing the executor stops its server)


@needs_jdk
def test_javac_without_the_warm_server_and_without_the_sandbox(tmp_path, isolated, monkeypatch):
    compiled = {True: [], False: []}  # the sources each javac job of either executor got
    for isolate in (True, False):
        ex = isolated if isolate else JvmExecutor(tmp_path / "jvmFalse", isolate=False, state_dir=tmp_path)
        javac_once = ex._javac_once
        monkeypatch.setattr(ex, "_javac_once",
                            lambda sources, *rest, javac_once=javac_once, isolate=isolate:
                            compiled[isolate].append(sorted(sources)) or javac_once(sources, *rest))
        try:
            served = ex.compile({f"F{isolate}.java": f"public class F{isolate} {{}}"})
            assert served.ok and ex._server is not None and (ex._server._live is not None) == isolate
            # A javac job after the warm javac's start: its JVM starts from that server's class-data
            # archive (javac's classes), and javac still sees only the class path it is given.
            shared = ex.javac_shared_starts
            once = ex.compile({f"D{isolate}.java": f"public class D{isolate} {{ class In {{}} }}"}, use_server=False)
            assert once.ok and {p.name for p in once.classes.glob("*.class")} == {f"D{isolate}.class",
                                                                                  f"D{isolate}$In.class"}
            assert not once.cached  # sources that are not trusted: each executor's own javac, never a copy
            assert ex.javac_shared_starts == shared + 1
            if not isolate:  # (the sandboxed javac job's errors: test_compile_is_cached_by_content_...'s prepare)
                bad = ex.compile({f"E{isolate}.java": f"public class E{isolate} {{ specbench.jvm.CompileServer s; "
                                                      f"int f() {{ return y; }} }}"}, use_server=False)
                assert bad.diagnostics.startswith(f"E{isolate}.java:1: error: package specbench.jvm does not exist"), \
                    bad.diagnostics
                assert "cannot find symbol" in bad.diagnostics and ex.javac_shared_starts == shared + 2
        finally:
            if not isolate:
                ex.close()
        assert [f"D{isolate}.java"] in compiled[isolate] and ([f"E{isolate}.java"] in compiled[isolate]) != isolate
    # The warm javac's own classes (trusted) came from the store the executors share, not compiled again
    # (by the second executor; the first compiled them if this test is the store's first).
    from pytest_specbench.execution.class_sharing import harness_sources

    assert "specbench/jvm/CompileServer.java" in harness_sources() and sorted(harness_sources()) not in compiled[False]
    assert list((isolated.store.root / "classes").glob("*/specbench/jvm/CompileServer.class"))
    assert not list((tmp_path / "jvmFalse").rglob("CompileServer.class"))  # nothing in the state folder


def test_a_javac_job_starts_from_the_warm_javacs_archive_made_first(tmp_path, monkeypatch):
    """The JVM of a javac job: from the warm javac's archive, its classes and the archive made
    first when the store has none (as the server's first start makes them; javac itself is
    test_javac_without_the_warm_server_and_without_the_sandbox's); the server's own classes
    are compiled by a plain javac (the archive is made from them), as is every javac job when
    class-data sharing is off."""
    from pytest_specbench.execution import class_sharing
    from pytest_specbench.execution.class_sharing import Shared, harness_sources
    from pytest_specbench.execution.jvm import JAVAC_MAIN, JAVAC_MODULES, SERVER_FLAGS, CompileResult

    ex = JvmExecutor(tmp_path / "jvm", isolate=False, class_sharing=True)
    archive, jar = tmp_path / "archive.jsa", tmp_path / "server.jar"
    calls = []
    monkeypatch.setattr(ex, "compile", lambda sources, **kw: calls.append(("compile", sorted(sources), kw))
                        or CompileResult(True, tmp_path / "classes", "", "k"))
    monkeypatch.setattr(ex.sharing, "share", lambda classpath, flags, modules=(), build_after=None: calls.append(
        ("share", tuple(classpath), tuple(flags), tuple(modules), build_after))
        or Shared((jar,), (f"-XX:SharedArchiveFile={archive}", *class_sharing.RUN_FLAGS), (archive, jar), archive))
    start, shared = ex._javac_start({"A.java": "class A {}"})
    assert calls == [("compile", sorted(harness_sources()), {"use_server": False, "trusted": True}),
                     ("share", (tmp_path / "classes",), SERVER_FLAGS, JAVAC_MODULES, 1)]
    assert shared.archive == archive and start[0] == ex.java and start[-3:] == ("-cp", str(jar), JAVAC_MAIN)
    assert f"-XX:SharedArchiveFile={archive}" in start and start[-4] == "-Xlog:disable"
    assert not any("warning" in flag for flag in start)  # javac's output is a verdict: no JVM message in it
    calls.clear()
    assert ex._javac_start(harness_sources()) == ((ex.javac,), None) and calls == []
    ex.sharing.enabled = False
    assert ex._javac_start({"A.java": "class A {}"}) == ((ex.javac,), None) and calls == []


def test_a_runtime_class_folder_that_javac_cannot_find_is_a_harness_error(tmp_path):
    # With a relative state folder the runtime's classes came back as a relative path, every
    # check then failed to compile in the sandbox's own folder, and the checker reported the
    # specifications as undecided; it must be the harness's error (E), not the answer's.
    from types import SimpleNamespace

    from pytest_specbench.errors import InfrastructureError
    from pytest_specbench.jml import runners

    class Prepared:
        def __init__(self, classes):
            self.classes = classes

        def prepare(self, env):
            return SimpleNamespace(info={"classes": self.classes})

    for bad in ("st/cache/jml-runtime", str(tmp_path / "missing")):
        with pytest.raises(InfrastructureError, match="JML runtime"):
            runners.runtime_classes(Prepared(bad))
    assert runners.runtime_classes(Prepared(str(tmp_path))) == tmp_path
