"""Print javac's cost per compilation through the jvm executor (figures, not a test):
the warm server as a sandboxed job, one sandboxed javac per compilation, and both unsandboxed.
Usage: python -m pytest_specbench.benchmarks.speceval.tools.javac_rate [compilations]"""
import sys, tempfile, time
from pathlib import Path
from pytest_specbench.execution.jvm import JvmExecutor

n = int(sys.argv[1]) if len(sys.argv) > 1 else 20


def source(i: int) -> str:  # distinct content each time: the class cache must not answer
    return f"public class P{i} {{ static int f(int x) {{ if (x > {i}) return x - {i}; return {i} - x; }} }}"


with tempfile.TemporaryDirectory() as d:
    for isolate in (True, False):
        for server in (True, False):
            ex = JvmExecutor(Path(d) / f"jvm-{isolate}-{server}", isolate=isolate, state_dir=Path(d))
            t = time.monotonic()
            ex.compile({"W.java": "public class W {}"}, use_server=server)  # start-up (server, sandbox)
            start = time.monotonic() - t
            t = time.monotonic()
            for i in range(n):
                assert ex.compile({f"P{i}.java": source(i)}, use_server=server).ok
            dt = (time.monotonic() - t) / n
            print(f"{'sandbox' if isolate else 'plain  '} {'warm server' if server else 'javac each '}: "
                  f"first compilation {start:.2f} s, then {dt * 1000:.0f} ms per compilation ({n} compilations)")
            ex.close()
