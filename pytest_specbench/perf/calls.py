#!/usr/bin/env python3
"""Per-call cost of the sandboxed Python executor against an in-process loop.

    python -m pytest_specbench.perf.calls [--calls 1000] [--jobs 40] [--profile]

One sample (a small pure function, like most HumanEval answers) runs on
``--calls`` inputs, ``--jobs`` times, through :class:`PythonExecutor` (a fork per
job, the per-call timers, one record per call through the record area and the
zygote) and in this process with the floor's per-call timer only.  Prints the
median job time of each and the difference per call: the overhead the
executor adds on top of the sample's own work.  ``--profile`` also runs the
child loop's pieces one by one in this process (encoding a record, the
timers, the clock) so a change can be aimed at what costs.
"""
from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import sys
import time

from pytest_specbench.execution import wire
from pytest_specbench.execution.limits import Limits
from pytest_specbench.execution.python import CallsJob, PythonExecutor

SAMPLE = '''
def has_close_elements(numbers, threshold):
    for i, a in enumerate(numbers):
        for j, b in enumerate(numbers):
            if i != j and abs(a - b) < threshold:
                return True
    return False
'''


def inputs(n: int) -> list:
    return [(([float(i), float(i) + 2.5, float(i) + 5.1], 1.0 + (i % 3)), {}) for i in range(n)]


def in_process(calls: list, jobs: int) -> list[float]:
    ns: dict = {}
    exec(compile(SAMPLE, "<sample>", "exec", dont_inherit=True), ns)  # noqa: S102 - our own fixed sample
    fn = ns["has_close_elements"]
    signal.signal(signal.SIGPROF, lambda *_: None)
    times = []
    for _ in range(jobs):
        t0 = time.perf_counter()
        for args, kwargs in calls:
            signal.setitimer(signal.ITIMER_PROF, 1.0)
            try:
                fn(*args, **kwargs)
            finally:
                signal.setitimer(signal.ITIMER_PROF, 0)
        times.append(time.perf_counter() - t0)
    return times


def _cpu_of(pid: int) -> float:
    """CPU seconds (user + system) of one process so far, from /proc."""
    with open(f"/proc/{pid}/stat", "rb") as fh:
        fields = fh.read().rsplit(b")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def sandboxed(calls: list, jobs: int) -> tuple[list[float], int, dict[str, float]]:
    """Wall time per job, calls answered, and CPU seconds per job by process
    (harness, zygote, child): CPU moves far less than wall time on a loaded machine."""
    ex = PythonExecutor(Limits())
    try:
        ex.ensure_started()
        indices = list(range(len(calls)))
        job = CallsJob(SAMPLE, "has_close_elements", "perf-calls", lambda: calls, indices)
        ex.run(None, job)  # loads the inputs
        times, answered, child = [], 0, 0.0
        harness0, zygote0 = time.process_time(), _cpu_of(ex._proc.pid)
        for _ in range(jobs):
            t0 = time.perf_counter()
            result = ex.run(None, job)
            times.append(time.perf_counter() - t0)
            answered = len(result.outcomes)
            child += result.cpu or 0.0
        cpu = {"harness": (time.process_time() - harness0) / jobs, "zygote": (_cpu_of(ex._proc.pid) - zygote0) / jobs,
               "child": child / jobs}
        return times, answered, cpu
    finally:
        ex.close()


def pieces(calls: list) -> None:
    """The child loop's parts, each timed alone over the same calls (µs per call)."""
    n = len(calls)

    def per_call(fn) -> float:
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        return (time.perf_counter() - t0) / n * 1e6

    signal.signal(signal.SIGPROF, lambda *_: None)
    signal.signal(signal.SIGALRM, lambda *_: None)
    record = [17, "ok", True, 1.2e-05]
    print(f"  setitimer x4 (arm + disarm both timers) {per_call(lambda: [signal.setitimer(signal.ITIMER_PROF, 1.0, 0.05), signal.setitimer(signal.ITIMER_REAL, 3.5, 0.05), signal.setitimer(signal.ITIMER_PROF, 0), signal.setitimer(signal.ITIMER_REAL, 0)]):7.2f} µs")
    print(f"  setitimer x2 (arm both, no disarm)      {per_call(lambda: [signal.setitimer(signal.ITIMER_PROF, 1.0, 0.05), signal.setitimer(signal.ITIMER_REAL, 3.5, 0.05)]):7.2f} µs")
    signal.setitimer(signal.ITIMER_PROF, 0)
    signal.setitimer(signal.ITIMER_REAL, 0)
    print(f"  process_time x2                         {per_call(lambda: (time.process_time(), time.process_time())):7.2f} µs")
    def record_bytes():
        return ("[17,\"ok\"," + wire.dumps(True) + "," + repr(1.2e-05) + "]\n").encode()

    print(f"  wire.dumps(value) + record bytes        {per_call(record_bytes):7.2f} µs")
    print(f"  json.dumps(record)                      {per_call(lambda: json.dumps(record).encode()):7.2f} µs")
    r, w = os.pipe()
    line = b'[17,"ok",true,1.2e-05]\n'
    print(f"  os.write of one record to a pipe        {per_call(lambda: (os.write(w, line), os.read(r, 64))) / 2:7.2f} µs (half a write+read pair)")
    os.close(r)
    os.close(w)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--calls", type=int, default=1000)
    ap.add_argument("--jobs", type=int, default=40)
    ap.add_argument("--profile", action="store_true")
    args = ap.parse_args()
    calls = inputs(args.calls)
    floor = statistics.median(in_process(calls, args.jobs))
    times, answered, cpu = sandboxed(calls, args.jobs)
    if answered != args.calls:
        sys.exit(f"calls.py: the executor answered {answered} of {args.calls} calls")
    ours = statistics.median(times)
    print(f"{args.calls} calls x {args.jobs} jobs; load {os.getloadavg()[0]:.2f}")
    print(f"  in process (floor's loop)  {floor * 1e3:8.2f} ms per job  {floor / args.calls * 1e6:6.2f} µs per call")
    print(f"  sandboxed executor         {ours * 1e3:8.2f} ms per job  {ours / args.calls * 1e6:6.2f} µs per call")
    print(f"  overhead                   {(ours - floor) * 1e3:8.2f} ms per job  {(ours - floor) / args.calls * 1e6:6.2f} µs per call"
          " (fork, setup and exit included)")
    print(f"  CPU per job                {sum(cpu.values()) * 1e3:8.2f} ms: harness {cpu['harness'] * 1e3:.2f}, "
          f"zygote {cpu['zygote'] * 1e3:.2f} (10 ms ticks: a mean over the jobs), child {cpu['child'] * 1e3:.2f}")
    if args.profile:
        print("pieces of the child's loop, each alone:")
        pieces(calls)


if __name__ == "__main__":
    main()
