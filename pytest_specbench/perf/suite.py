#!/usr/bin/env python3
"""The test suite's own cost: wall and CPU of a run, per test file, optionally under load.

    python -m pytest_specbench.perf.suite [--busy] [--fresh-clone] [--out DIR] [-- PYTEST_ARGS]
    python -m pytest_specbench.perf.suite --table DIR [--before DIR]

Run it from the checkout (the current folder is the checkout whose suite runs).

Runs the suite (default ``pytest -n 2 -q``, as ``.ci/run`` does; arguments after ``--``
replace ``-n 2 -q``, e.g. ``-- -n 2 -q tests/test_gate.py``) with the plugin
:mod:`pytest_specbench.perf.suite_cpu`, then prints the wall time, pytest's own "in N s",
the CPU (user + sys of the run and all its children) and the load average before and after,
and a table of CPU seconds per test file (and the most costly tests), then the whole pytest
runs the tests made, in a Python of their own or in the test's process (one line each from
the plugin: test, arguments, processes, CPU), per test file.

``--fresh-clone`` measures what issue #45's "done when" asks: a ``git clone`` of this
checkout's HEAD in a temporary folder, then its ``.ci/run`` (a fresh venv, the install, the
suite); the real data and the repository mirrors the tests find beside this checkout are
passed on (``SPECBENCH_SHARED_DATA``, ``SPECBENCH_POSTCOND_REPOS``).  ``--busy`` starts one
busy process per core beside the run first (``perf/spread.py``'s competing load) and stops
them at the end.  The target: at most 5 minutes of tests on two cores with ``--busy``.
``--clone-dir DIR`` makes the clone there instead of the temporary folder: the remote-worker
tests of ``tests/test_distributed.py`` give each "host" a private ``/tmp`` and skip in a
checkout under ``/tmp``, so a figure meant to include them needs a clone elsewhere.

``--table DIR`` prints the table of an earlier run's records (``--out``); ``--before DIR``
adds the records of another run as a "before" column.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from .spread import busy_load, stop_load
from .suite_cpu import DIR_VARIABLE, ROOT_VARIABLE

CHECKOUT = Path.cwd()  # run from the checkout, as the other perf scripts
PLUGIN = "pytest_specbench.perf.suite_cpu"


def beside_checkout(variable: str, relative: str) -> str | None:
    """Where the tests of this checkout find ``relative`` (as ``tests/shared_data.py`` looks)."""
    if os.environ.get(variable):
        return os.environ[variable]
    for base in (CHECKOUT.parent, CHECKOUT.parent.parent):
        if (base / relative).is_dir():
            return str(base / relative)
    return None


def run_measured(command: list[str], cwd: Path, env: dict[str, str], log: Path) -> tuple[int, float, float]:
    """Run ``command``; its exit status, wall seconds and CPU seconds (user + sys, children included)."""
    start = time.monotonic()
    with log.open("w") as out:
        proc = subprocess.Popen(command, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL)
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
    return proc.returncode, time.monotonic() - start, usage.ru_utime + usage.ru_stime


def load_records(folder: Path) -> tuple[dict[str, tuple[float, float]], float]:
    """Per test node id (cpu, wall), and the CPU the processes spent outside tests."""
    tests: dict[str, tuple[float, float]] = {}
    outside = 0.0
    for path in sorted(folder.glob("*.jsonl")):
        for line in path.read_text().splitlines():
            record = json.loads(line)
            if "test" in record:
                tests[record["test"]] = (record["cpu"], record["wall"])
            elif "cpu_outside_tests" in record:
                outside += record["cpu_outside_tests"]
    return tests, outside


def load_nested(folder: Path) -> list[dict]:
    """The whole pytest runs the tests started (suite_cpu's "nested" lines; their CPU is
    already their tests')."""
    return [json.loads(line) for path in sorted(folder.glob("nested-*.jsonl"))
            for line in path.read_text().splitlines()]


def print_nested(runs: list[dict], top: int) -> None:
    """Per test file: the whole pytest runs its tests made, in a Python of their own
    ("sub") and in the test's process ("in"), their new pytest processes (controllers and
    xdist workers) and their CPU; then the costliest runs."""
    if not runs:
        print("\nno whole pytest run made by a test was recorded")
        return
    files: dict[str, list[float]] = {}
    for run in runs:
        row = files.setdefault(run["nested"].split("::")[0], [0, 0, 0, 0.0, 0.0])
        row[0 if run.get("in_process") else 1] += 1
        row[2] += run["processes"]
        row[3 if run.get("in_process") else 4] += run["cpu"]
    inside = [r for r in runs if r.get("in_process")]
    print(f"\nwhole pytest runs made by tests (their CPU is part of their tests' above): "
          f"{len(runs) - len(inside)} in a Python of their own, {sum(r['cpu'] for r in runs if r not in inside):.1f} "
          f"CPU s; {len(inside)} in the test's process, {sum(r['cpu'] for r in inside):.1f} CPU s; "
          f"{sum(r['processes'] for r in runs)} new pytest processes")
    print(f"{'file':50} {'sub':>4} {'in':>4} {'procs':>5} {'sub CPU':>8} {'in CPU':>8}")
    for name, (inner, sub, procs, cpu_in, cpu_sub) in sorted(files.items(), key=lambda kv: -kv[1][3] - kv[1][4]):
        print(f"{name:50} {sub:4d} {inner:4d} {procs:5d} {cpu_sub:8.1f} {cpu_in:8.1f}")
    print(f"\nthe {top} most costly runs (CPU s, new processes, in/sub, test, arguments)")
    for run in sorted(runs, key=lambda r: -r["cpu"])[:top]:
        where = "in " if run.get("in_process") else "sub"
        print(f"{run['cpu']:8.1f} {run['processes']:3d} {where}  {run['nested']}\n              {run['args']}")


def per_file(tests: dict[str, tuple[float, float]]) -> dict[str, list[float]]:
    files: dict[str, list[float]] = {}
    for node, (cpu, wall) in tests.items():
        row = files.setdefault(node.split("::")[0], [0.0, 0.0, 0])
        row[0] += cpu
        row[1] += wall
        row[2] += 1
    return files


def print_table(folder: Path, before: Path | None, top: int) -> None:
    tests, outside = load_records(folder)
    files = per_file(tests)
    old = per_file(load_records(before)[0]) if before else {}
    total = sum(row[0] for row in files.values())
    print(f"\nCPU s per test file (user+sys, children included; {len(tests)} tests, "
          f"{total:.1f} s in tests + {outside:.1f} s outside tests: start, collection, controller)")
    header = f"{'file':50} {'tests':>5} {'CPU s':>8} {'wall s':>8}"
    print(header + (f" {'before':>8}" if before else ""))
    for name, (cpu, wall, count) in sorted(files.items(), key=lambda kv: -kv[1][0]):
        line = f"{name:50} {count:5d} {cpu:8.1f} {wall:8.1f}"
        if before:
            line += f" {old[name][0]:8.1f}" if name in old else f" {'-':>8}"
        print(line)
    print(f"\nthe {top} most costly tests (CPU s, wall s)")
    for node, (cpu, wall) in sorted(tests.items(), key=lambda kv: -kv[1][0])[:top]:
        print(f"{cpu:8.1f} {wall:8.1f}  {node}")
    print_nested(load_nested(folder), top)


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    pytest_args = ["-n", "2", "-q"]
    if "--" in argv:
        cut = argv.index("--")
        argv, pytest_args = argv[:cut], argv[cut + 1:]
    ap = argparse.ArgumentParser(prog="python -m pytest_specbench.perf.suite", description=__doc__.split("\n\n")[0])
    ap.add_argument("--busy", action="store_true", help="one busy process per core beside the run")
    ap.add_argument("--fresh-clone", action="store_true",
                    help="clone HEAD into a temporary folder and run its .ci/run (venv, install, suite)")
    ap.add_argument("--clone-dir", type=Path,
                    help="make the fresh clone in this folder (default: the temporary folder, where the "
                         "private-host tests skip)")
    ap.add_argument("--out", type=Path, help="keep the per-test records and the run's output here")
    ap.add_argument("--table", type=Path, help="only print the table of the records in this folder")
    ap.add_argument("--before", type=Path, help="records of another run, shown as a 'before' column")
    ap.add_argument("--top", type=int, default=25, help="how many of the most costly tests to list")
    args = ap.parse_args(argv)
    if args.table:
        print_table(args.table, args.before, args.top)
        return 0

    out = args.out or Path(tempfile.mkdtemp(prefix="specbench-suite-"))
    out.mkdir(parents=True, exist_ok=True)
    records = out / "records"
    shutil.rmtree(records, ignore_errors=True)
    env = {**os.environ, DIR_VARIABLE: str(records)}
    env.pop(ROOT_VARIABLE, None)  # this run's controller is the root (a run measured from inside a test too)
    for variable, relative in (("SPECBENCH_SHARED_DATA", "shared/datasets"), ("SPECBENCH_POSTCOND_REPOS", ".mirror")):
        found = beside_checkout(variable, relative)
        if found:
            env[variable] = found
    clone = None
    if args.fresh_clone:
        if args.clone_dir:
            args.clone_dir.mkdir(parents=True, exist_ok=True)
        clone = Path(tempfile.mkdtemp(prefix="specbench-clone-", dir=args.clone_dir)) / "pytest-specbench"
        subprocess.run(["git", "clone", "-q", str(CHECKOUT), str(clone)], check=True)
        # .ci/run ends with `pytest -n 2 -q`: the plugin (installed by its `pip install -e`) and
        # any other arguments reach that pytest through PYTEST_ADDOPTS (the suite's inner runs drop it).
        env["PYTEST_ADDOPTS"] = " ".join(["-p", PLUGIN, *[a for a in pytest_args if a not in ("-n", "2", "-q")]])
        command, cwd = ["bash", ".ci/run"], clone
    else:
        command, cwd = [sys.executable, "-m", "pytest", "-p", PLUGIN, *pytest_args], CHECKOUT

    procs = busy_load(os.cpu_count() or 1) if args.busy else []
    try:
        load_before = os.getloadavg()
        status, wall, cpu = run_measured(command, cwd, env, out / "run.log")
        load_after = os.getloadavg()
    finally:
        stop_load(procs)
        if clone is not None:
            shutil.rmtree(clone.parent, ignore_errors=True)

    lines = (out / "run.log").read_text(errors="replace").splitlines()
    summary = next((line for line in reversed(lines) if re.search(r" in [0-9.]+s", line)), "(no pytest summary line)")
    print("\n".join(lines[-15:]))
    print(f"\ncommand: {' '.join(command)}  (in {cwd})")
    print(f"busy processes beside it: {len(procs)}; cores: {os.cpu_count()}")
    print(f"load average before {load_before[0]:.1f} / after {load_after[0]:.1f} (1 min)")
    print(f"exit status {status}; wall {wall:.1f} s; CPU {cpu:.1f} s (user+sys, children included)")
    print(f"pytest: {summary.strip('= ')}")
    if records.is_dir():
        print_table(records, args.before, args.top)
        tests, outside = load_records(records)
        accounted = sum(cpu for cpu, _ in tests.values()) + outside
        # the per-test lines and "outside" of every recording process should add up to the run's
        # CPU (wait4 of its controller); the rest: processes that are neither (.ci/run's install
        # under --fresh-clone, a descendant re-parented to init) or CPU after the last reading
        print(f"\naccounted: {accounted:.1f} CPU s of the run's {cpu:.1f} (tests + outside tests)")
    print(f"\nrecords and output: {out}")
    return status


if __name__ == "__main__":
    sys.exit(main())
