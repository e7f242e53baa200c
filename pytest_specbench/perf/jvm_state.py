"""CPU of a fresh state folder's first JVM job, with and without the shared store (issues 45, 48).

    python -m pytest_specbench.perf.jvm_state [--rounds 3] [--work /tmp/specbench-jvm-state]

A fresh state folder's first JML check (SpecEval's dynamic validation: translate, javac of
the program, one JVM of the JML runner) in a process of its own, sandboxed as the plugin
runs it, each round on a new state folder, three ways (interleaved):

- ``own``: ``SPECBENCH_JVM_STORE=off``, the state folder builds its own trusted products
  (the warm javac's classes by a javac job, the warm javac's start, the JML runtime's javac;
  what every fresh state folder paid before the store);
- ``warm``: the store an earlier state folder filled (``--work``/store, made before the rounds);
- ``junit``: ``warm``, plus PostcondBench's Java toolchain (the JUnit runner) prepared first.

CPU is user + sys of the process and all its children (its sandboxes' zygotes, their jobs and
the warm javac included: all are waited for before it exits), by ``getrusage`` in this script.
With ``SPECBENCH_JVM_LOG`` the builds each round did are counted from the executor's own log.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

PROGRAM = ("public class Hx {\n    //@ requires x > 0;\n    //@ ensures \\result == x + 1;\n"
           "    public static int f(int x) {\n        return x + 1;\n    }\n}\n")


def first_job(state: Path, junit: bool) -> str:
    """In the measured child: a fresh executor on ``state``, one check; its verdict."""
    from pytest_specbench.execution.jvm import JvmExecutor
    from pytest_specbench.jml.checker import JmlChecker
    from pytest_specbench.jml.inputs import driver_from_calls

    jvm = JvmExecutor(state / "jvm", state_dir=state)
    try:
        if junit:
            from pytest_specbench.jml import junit_missing, junit_toolchain

            if not junit_missing():
                junit_toolchain(jvm)
        report = JmlChecker(jvm).check(PROGRAM, driver_from_calls(["Hx.f(1)", "Hx.f(2)"]))
        return report.verdict
    finally:
        jvm.close()


def measure(work: Path, way: str, n: int) -> tuple[float, str, dict[str, int]]:
    state = work / f"{way}-{n}"
    log = work / f"{way}-{n}.log"
    env = {**os.environ, "SPECBENCH_JVM_LOG": str(log),
           "SPECBENCH_JVM_STORE": "off" if way == "own" else str(work / "store")}
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run([sys.executable, "-m", "pytest_specbench.perf.jvm_state", "--child", str(state),
                           *(["--junit"] if way == "junit" else [])], env=env, capture_output=True, text=True)
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        sys.exit(f"jvm_state: the {way} round failed: {done.stderr[-500:]}")
    builds: dict[str, int] = {}
    for line in (log.read_text().splitlines() if log.exists() else ()):
        event = json.loads(line)
        name = event["event"] + ("-trusted" if event.get("trusted") else "")
        builds[name] = builds.get(name, 0) + 1
    return (r1.ru_utime + r1.ru_stime) - (r0.ru_utime + r0.ru_stime), done.stdout.strip(), builds


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--work", type=Path, default=None)
    ap.add_argument("--ways", default="own,warm,junit", help="which of own, warm, junit (comma-separated)")
    ap.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--junit", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        print(first_job(args.child, args.junit))
        return
    work = args.work or Path(tempfile.mkdtemp(prefix="specbench-jvm-state-"))
    work.mkdir(parents=True, exist_ok=True)
    cpu, fill, builds = measure(work, "fill", 0)
    print(f"filling the store (a first state folder, nothing built): {cpu:.2f} CPU s, {fill}, builds {builds}")
    figures: dict[str, list[float]] = {way: [] for way in args.ways.split(",")}
    for n in range(1, args.rounds + 1):
        for way in figures:
            cpu, verdict, builds = measure(work, way, n)
            figures[way].append(cpu)
            print(f"round {n} {way:5}: {cpu:5.2f} CPU s  {verdict}  builds {builds}", flush=True)
    for way, values in figures.items():
        print(f"{way:5}: median {statistics.median(values):.2f} CPU s (least {min(values):.2f}) over {len(values)}")
    print(f"load average after: {os.getloadavg()[0]:.1f}; work folder {work}")


if __name__ == "__main__":
    main()
