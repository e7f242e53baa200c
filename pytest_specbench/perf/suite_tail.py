#!/usr/bin/env python3
"""The suite's tail under ``-n N``: a recorded run replayed through pytest-xdist's schedulers.

    python -m pytest_specbench.perf.suite_tail RECORDS [--order FILE] [--workers 2] [--dist load worksteal]

``RECORDS`` is the ``records`` folder of a ``perf.suite --out DIR`` run (one line per test with
its wall time, per xdist worker: :mod:`pytest_specbench.perf.suite_cpu`).  The tests, in the
order the suite hands them out (``--order``: the node ids of ``pytest --collect-only -q``, one
a line; without it this checkout's collection is taken, which costs a pytest collection), are
given to xdist's own scheduler classes (``LoadScheduling``, ``WorkStealingScheduling``) with
workers that take each test's recorded wall time, one test after another; the script prints,
per mode, when each worker ends and how long the first to end then sits idle (the tail: the
wall the run could save, up to half of it).  Figures, not a test: the recorded times are those
of one run under one load, and a worker here runs a test as soon as it has it (a real one
waits for the next, for its fixtures' teardown), so read differences between modes, not
absolute times (docs/timing.md, "Session 19").
"""
from __future__ import annotations

import argparse
import heapq
import json
import subprocess
import sys
from pathlib import Path

MODES = {"load": "xdist.scheduler.load:LoadScheduling", "worksteal": "xdist.scheduler.worksteal:WorkStealingScheduling"}


def recorded_walls(records: Path) -> dict[str, float]:
    """``{node id: wall s}`` of every test the run's xdist workers (or its one process) recorded."""
    walls: dict[str, float] = {}
    for path in sorted(records.glob("*.jsonl")):
        if path.name.startswith("nested-"):
            continue
        for line in path.read_text().splitlines():
            row = json.loads(line)
            if "test" in row:
                walls[row["test"]] = float(row["wall"])
    return walls


class ReplayedWorker:
    """What xdist's schedulers see of a worker (the calls they make), and its queue."""

    def __init__(self, name: str):
        self.gateway = type("Gateway", (), {"id": name})()
        self.queue: list[int] = []
        self.shutting_down = False
        self.steal_asked: list[int] | None = None

    def send_runtest_some(self, indices) -> None:
        self.queue.extend(indices)

    def send_runtest_all(self) -> None:  # (xdist's "each" modes; not replayed here)
        raise NotImplementedError

    def send_steal(self, indices) -> None:
        self.steal_asked = list(indices)

    def shutdown(self) -> None:
        self.shutting_down = True


def replay(order: list[str], walls: dict[str, float], workers: int, mode: str) -> list[float]:
    """When each worker ends, the tests of ``order`` taking their recorded wall times."""
    import importlib
    from types import SimpleNamespace

    module, _, name = MODES[mode].partition(":")
    scheduler_class = getattr(importlib.import_module(module), name)
    values = {"tx": ["popen"] * workers, "maxschedchunk": None}  # (what `-n N` gives them)
    config = SimpleNamespace(getvalue=values.get, getoption=lambda key, default=None: values.get(key, default))
    quiet = SimpleNamespace(loadsched=lambda *args: None, workstealsched=lambda *args: None)
    scheduler = scheduler_class(config, quiet)
    nodes = [ReplayedWorker(f"gw{i}") for i in range(workers)]
    for node in nodes:
        scheduler.add_node(node)
        scheduler.add_node_collection(node, order)
    scheduler.schedule()
    clock = [0.0] * workers
    ended: list[float | None] = [None] * workers
    events: list[tuple[float, int]] = []  # (when the running test ends, worker)
    running: list[int | None] = [None] * workers

    def start_idle() -> None:
        for k, node in enumerate(nodes):
            if node.steal_asked is not None:  # answered at once: the tests not started yet go back
                given = [i for i in node.steal_asked if i in node.queue]
                node.queue = [i for i in node.queue if i not in set(given)]
                node.steal_asked = None
                scheduler.remove_pending_tests_from_node(node, given)
        for k, node in enumerate(nodes):
            if running[k] is None and node.queue:
                index = node.queue.pop(0)
                running[k] = index
                heapq.heappush(events, (clock[k] + walls.get(order[index], 0.0), k))
            elif running[k] is None and node.shutting_down and ended[k] is None:
                ended[k] = clock[k]

    start_idle()
    while events:
        when, k = heapq.heappop(events)
        clock[k] = when
        index, running[k] = running[k], None
        if mode == "load":
            scheduler.mark_test_complete(nodes[k], index, walls.get(order[index], 0.0))
        else:
            scheduler.mark_test_complete(nodes[k], index)
        start_idle()
        for j in range(workers):  # a worker with nothing running waits for the clock to catch up
            if running[j] is None and ended[j] is None and not nodes[j].queue:
                clock[j] = max(clock[j], when)
        start_idle()
    return [e if e is not None else c for e, c in zip(ended, clock)]


def collected_order() -> list[str]:
    done = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider"],
                          capture_output=True, text=True, check=False)
    return [line.strip() for line in done.stdout.splitlines() if "::" in line]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m pytest_specbench.perf.suite_tail",
                                 description=__doc__.split("\n\n")[0])
    ap.add_argument("records", type=Path, help="a perf.suite --out run's records folder")
    ap.add_argument("--order", type=Path, help="node ids in the suite's order, one a line (default: collect here)")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--dist", nargs="+", default=sorted(MODES), choices=sorted(MODES))
    args = ap.parse_args(argv)
    walls = recorded_walls(args.records)
    order = ([line.strip() for line in args.order.read_text().splitlines() if "::" in line] if args.order
             else collected_order())
    unknown = sum(1 for test in order if test not in walls)
    print(f"{len(order)} tests in order, {len(walls)} recorded ({unknown} without a record: 0 s), "
          f"{sum(walls.get(t, 0.0) for t in order):.1f} s of recorded wall in all")
    for mode in args.dist:
        ends = replay(order, walls, args.workers, mode)
        print(f"--dist {mode:9s} workers end at " + ", ".join(f"{e:.1f}" for e in ends)
              + f" s; the last {max(ends):.1f} s, the first idle {max(ends) - min(ends):.1f} s at the end")
    return 0


if __name__ == "__main__":
    sys.exit(main())
