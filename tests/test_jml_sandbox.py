"""The JVM runs in the command executor's sandbox: a Java program (no JML
runner, no security manager) cannot see the project or home, cannot reach the
network, is stopped by its limits, and the next job still runs."""
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
            case "net": {
                try (java.net.Socket s = new java.net.Socket()) {
                    s.connect(new java.net.InetSocketAddress("1.1.1.1", 80), 2000); System.out.println("NET OPEN");
                } catch (Exception e) { System.out.println("DENIED " + e.getClass().getSimpleName()); }
                break;
            }
            case "threads": {
                int n = 0;
                try { while (true) { Thread t = new Thread(() -> { try { Thread.sleep(100000); } catch (Exception e) {} }); t.setDaemon(true); t.start(); n++; } }
                catch (Throwable e) { System.out.println("STOPPED " + n + " " + e.getClass().getSimpleName()); System.exit(3); }
            }
            case "loop": while (true) { }
            case "flood": { StringBuilder b = new StringBuilder(); for (int i = 0; i < 1000; i++) b.append("xxxxxxxxxx");
                            for (int i = 0; i < 100000; i++) System.out.print(b); break; }
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


def test_project_home_and_network_are_out_of_reach(jvm):
    assert run(jvm, "hello").stdout.strip() == "OK hello"
    assert run(jvm, "read", str(PROJECT / "pyproject.toml")).stdout.startswith("DENIED")
    home = Path.home() / ".bashrc"
    if home.exists() and not str(home).startswith("/root"):
        assert run(jvm, "read", str(home)).stdout.startswith("DENIED")
    assert run(jvm, "read", "/etc/shadow").stdout.startswith("DENIED")
    assert run(jvm, "net").stdout.startswith("DENIED")


def test_limits_stop_the_jvm_and_the_next_job_runs(jvm):
    r = run(jvm, "loop", wall_seconds=4, cpu_seconds=3)
    assert r.timed_out and r.exit_code != 0
    r = run(jvm, "threads", wall_seconds=30, cpu_seconds=20)
    assert "OK" not in r.stdout and (r.exit_code != 0 or r.signal)
    r = run(jvm, "flood", wall_seconds=30, output_bytes=1 << 16)
    assert r.output_truncated and len(r.stdout) <= 1 << 16
    assert run(jvm, "again").stdout.strip() == "OK again"
