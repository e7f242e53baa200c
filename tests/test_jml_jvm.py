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


@needs_jdk
def test_compile_is_cached_by_content_and_reports_javac_errors(tmp_path):
    ex = JvmExecutor(tmp_path)
    try:
        a = ex.compile({"A.java": "public class A { public static void main(String[] x) { System.out.print(7); } }"})
        b = ex.compile({"A.java": "public class A { public static void main(String[] x) { System.out.print(7); } }"})
        assert a.ok and b.ok and b.cached and a.classes == b.classes
        bad = ex.compile({"B.java": "public class B { int f() { return y; } }"})
        assert not bad.ok and "B.java:1: error: cannot find symbol" in bad.diagnostics
        with pytest.raises(InfrastructureError, match="javac failed"):
            ex.prepare(Environment("classpath", "bad", {"sources": {"B.java": "class B { x }"}}))
        res = ex.run(None, JavaJob(main="A", classpath=(a.classes,), wall_seconds=60))
        assert res.exit_code == 0 and res.stdout == "7"
    finally:
        ex.close()


@needs_jdk
def test_wall_limit_ends_a_jvm(tmp_path):
    ex = JvmExecutor(tmp_path)
    try:
        c = ex.compile({"L.java": "public class L { public static void main(String[] x) { while (true) { } } }"})
        res = ex.run(None, JavaJob(main="L", classpath=(c.classes,), wall_seconds=3))
        assert res.timed_out and res.exit_code is None
    finally:
        ex.close()
