#!/usr/bin/env python3
"""Run-to-run spread of the CPU time of one call, quiet and under a competing load.

    python -m pytest_specbench.perf.spread [--runs 20] [--work 0.3] [--load]

One pure-Python call (a nested loop sized to take about ``--work`` CPU seconds)
runs ``--runs`` times, each in a fresh sandboxed child, through
:class:`PythonExecutor`, exactly as a sample's call is timed.  Prints min,
median and max CPU seconds and max/min (the spread), with the load average.
``--load`` first starts one busy process per core (a competing load; they are
stopped at the end).  The borderline margin of
:data:`pytest_specbench.execution.limits.BORDERLINE_MARGIN` is chosen from
these figures (docs/timing.md).
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys

from pytest_specbench.execution.limits import Limits, machine_speed
from pytest_specbench.execution.python import CallsJob, PythonExecutor

SAMPLE = '''
def spin(n):
    total = 0
    for i in range(n):
        for j in range(100):
            total += (i ^ j) & 7
    return total
'''


def busy_load(cores: int) -> list:
    """One busy process per core (stopped by :func:`stop_load`)."""
    import multiprocessing

    procs = [multiprocessing.Process(target=_spin_forever, daemon=True) for _ in range(cores)]
    for p in procs:
        p.start()
    return procs


def _spin_forever() -> None:
    x = 0
    while True:
        x = (x + 1) & 0xFFFF


def stop_load(procs: list) -> None:
    for p in procs:
        p.terminate()
        p.join()


def measure(runs: int, work: float) -> list[float]:
    """CPU seconds of the same call in ``runs`` fresh children."""
    # Size the call from this process's speed: ~``work`` CPU seconds.
    n = max(1, int(work / (machine_speed() / 200_000) / 100))
    ex = PythonExecutor(Limits(call_cpu=work * 10, startup_cpu=5.0, memory_mb=1024, tmp_mb=16))
    times = []
    try:
        for _ in range(runs):
            result = ex.run(None, CallsJob(SAMPLE, "spin", "spread", lambda: [((n,), {})], [0]))
            outcome = result.outcomes.get(0)
            if outcome is None or outcome.status != "ok":
                raise SystemExit(f"the call did not finish: {result.failure_reason()}")
            times.append(outcome.cpu)
    finally:
        ex.close()
    return times


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--work", type=float, default=0.3, help="CPU seconds per call (about)")
    ap.add_argument("--load", action="store_true", help="one busy process per core while measuring")
    args = ap.parse_args(argv)
    procs = busy_load(os.cpu_count() or 1) if args.load else []
    try:
        before = os.getloadavg()[0]
        times = measure(args.runs, args.work)
        after = os.getloadavg()[0]
    finally:
        stop_load(procs)
    lo, hi = min(times), max(times)
    print(f"{'loaded' if args.load else 'as found'}: {args.runs} runs, load average {before:.1f}->{after:.1f}, "
          f"{os.cpu_count()} cores")
    print(f"  cpu s: min {lo:.3f}  median {statistics.median(times):.3f}  max {hi:.3f}  "
          f"max/min {hi / lo:.2f}  median/min {statistics.median(times) / lo:.2f}")
    print("  all: " + " ".join(f"{t:.3f}" for t in times))
    return 0


if __name__ == "__main__":
    sys.exit(main())
