"""Print JML-checker throughput through the sandboxed jvm executor (figures, not a test).
Usage: python -m pytest_specbench.benchmarks.speceval.tools.jvm_rate [calls]"""
import sys, tempfile, time
from pathlib import Path
from pytest_specbench.jml import JmlChecker, driver_from_calls
from pytest_specbench.execution.jvm import JvmExecutor

SRC = """public class R {
    //@ ensures \\result >= a && \\result >= b;
    public static int max(int a, int b) { return a > b ? a : b; }
}"""
n = int(sys.argv[1]) if len(sys.argv) > 1 else 200
with tempfile.TemporaryDirectory() as d:
    for isolate in (True, False):
        ex = JvmExecutor(Path(d) / "jvm", isolate=isolate)
        chk = JmlChecker(ex, call_seconds=2.0)
        calls = [f"R.max({i}, {n - i})" for i in range(n)]
        chk.check(SRC, driver_from_calls(calls[:2]))  # warm: compile + cache
        t = time.monotonic(); rep = chk.check(SRC, driver_from_calls(calls)); dt = time.monotonic() - t
        t = time.monotonic(); chk.check(SRC, driver_from_calls(calls[:1])); one = time.monotonic() - t
        print(f"{'sandbox' if isolate else 'plain  '}: {n} calls in one check {dt:.2f} s ({n/dt:.0f} calls/s, "
              f"verdict {rep.verdict}); one-call check {one:.2f} s ({1/one:.2f} checks/s)")
        ex.close()
