"""The JVM runs in the command executor's sandbox: a Java program (no JML
runner, no security manager) cannot read what its uid may not, and a thread
bomb is stopped while the next job still runs.  The contract every executor
shares (limits, no network, project and home hidden, a crash is a result) is
checked for the JVM in ``tests/test_executor_conformance.py``."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from pytest_specbench.execution.jvm import JavaJob, JvmExecutor

pytestmark = pytest.mark.skipif(not (shutil.which("javac") and shutil.which("java")),
                                reason="javac/java not found: apt-get install openjdk-17-jdk-headless")

PROJECT = Path(__file__).resolve().parents[1]

PROBE = """public class P {
    public static void main(String[] a) throws Exception {
        switch (a[0]) {
            case "read": {
                try { System.out.println("READ " + new String(java.nio.file.Files.readAllBytes(java.nio.file.Paths.get(a[1]))).length()); }
                catch (Exception e) { System.out.println("DENIED " + e.getClass().getSimpleName()); }
                break;
            }
            case "threads": {
                int n = 0;
                try { while (true) { Thread t = new Thread(() -> { try { Thread.sleep(100000); } catch (Exception e) {} }); t.setDaemon(true); t.start(); n++; } }
                catch (Throwable e) { System.out.println("STOPPED " + n + " " + e.getClass().getSimpleName()); System.exit(3); }
            }
            default: System.out.println("OK " + a[0]);
        }
    }
}"""


@pytest.fixture(scope="module")
def jvm(tmp_path_factory):
    ex = JvmExecutor(tmp_path_factory.mktemp("jvm"), hide=[str(PROJECT)], isolate=True)
    if ex._command_executor() is None or ex._command_executor().available():
        pytest.skip("no sandbox here")
    res = ex.compile({"P.java": PROBE})
    assert res.ok, res.diagnostics
    yield ex, res.classes
    ex.close()


def run(jvm, *args, **kw):
    ex, classes = jvm
    return ex.run(None, JavaJob(main="P", args=args, classpath=(classes,), **kw))


def test_system_secrets_are_out_of_reach_and_a_thread_bomb_is_stopped(jvm):
    assert run(jvm, "read", "/etc/shadow").stdout.startswith("DENIED")
    r = run(jvm, "threads", wall_seconds=30, cpu_seconds=20)
    assert "OK" not in r.stdout and (r.exit_code != 0 or r.signal)
    assert run(jvm, "again").stdout.strip() == "OK again"
