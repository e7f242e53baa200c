#!/usr/bin/env python3
"""Are verdicts reproducible?  The same replay run, several times, compared item by item.

    python -m pytest_specbench.perf.repeat --samples FILE [--runs 5] [--load] [--data DIR] [--work DIR] [-k EXPR]

Runs ``pytest --specbench=evalplus --model=replay:FILE -n 2`` ``--runs`` times
(result cache off, so every sample really runs; the expected outputs are built
once by a warm-up run first) and prints, per run, its wall time, pass count and
borderline items (details ``borderline``), then the number of items whose
verdict changed between runs.  ``--load`` keeps one busy process per core
running meanwhile (a competing load).  Issue #33's "done when": 0 changed.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

from pytest_specbench.perf.spread import busy_load, stop_load

REPO = Path.cwd()  # run from the checkout (or any folder): the package is found as installed


def run_once(args: list[str], report: Path, state: Path) -> tuple[float, dict]:
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--specbench-report={report}",
                           f"--specbench-dir={state}", *args], cwd=REPO, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if not report.exists():
        sys.exit(f"repeat.py: no report from pytest (exit {proc.returncode}): {proc.stdout[-500:]}{proc.stderr[-500:]}")
    return wall, json.loads(report.read_text())


def verdicts(report: dict) -> dict[tuple[str, int], tuple[bool | None, bool]]:
    """(task, sample) -> (passed, borderline) of the functional check."""
    out = {}
    for task_id, task in report["benchmarks"]["evalplus"]["tasks"].items():
        for i, s in enumerate(task["samples"]):
            check = s["checks"].get("functional", {})
            out[(task_id, s.get("index", i))] = (check.get("passed"), bool(check.get("borderline")))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--samples", type=Path, required=True)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--load", action="store_true", help="one busy process per core during the runs")
    ap.add_argument("--data", type=Path, default=REPO.parent / "shared" / "datasets")
    ap.add_argument("--work", type=Path, default=Path("/tmp/specbench-repeat"))
    ap.add_argument("--no-warm-up", action="store_true", help="the expected outputs are in WORK/state already")
    ap.add_argument("-k", dest="keyword", default="", help="pytest -k expression (default: all tasks of the file)")
    args = ap.parse_args(argv)
    args.work.mkdir(parents=True, exist_ok=True)
    state = args.work / "state"
    base = ["--specbench=evalplus", f"--specbench-data={args.data.resolve()}", f"--model=replay:{args.samples.resolve()}",
            "--specbench-checks=functional", "-n", "2", "--specbench-result-cache=off"]
    if args.keyword:
        base += ["-k", args.keyword]
    if not args.no_warm_up:
        wall, _ = run_once(base, args.work / "warm.json", state)  # builds the expected outputs
        print(f"warm-up (expected outputs): {wall:.0f} s", flush=True)
    procs = busy_load(os.cpu_count() or 1) if args.load else []
    seen: list[dict] = []
    try:
        for n in range(args.runs):
            wall, report = run_once(base, args.work / f"run{n}.json", state)
            v = verdicts(report)
            seen.append(v)
            border = sorted(f"{t}#{i}" for (t, i), (_, b) in v.items() if b)
            print(f"run {n + 1}: {wall:.0f} s, load {os.getloadavg()[0]:.1f}, {sum(1 for p, _ in v.values() if p)}"
                  f"/{len(v)} passed, borderline: {', '.join(border) or 'none'}", flush=True)
    finally:
        stop_load(procs)
    items = set().union(*seen)
    changed = sorted(k for k in items if len({run.get(k, (None,))[0] for run in seen}) > 1)
    print(f"{'loaded (one busy process per core) + ' if args.load else ''}as found: {args.runs} runs, {len(items)} items, "
          f"verdict changed for {len(changed)}: {', '.join(f'{t}#{i}' for t, i in changed) or 'none'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
