"""A per-process timeline of a pytest run: start-up, collection, each item, the end.

Loaded by the perf scripts' ``--profile DIR`` as a pytest plugin
(``-p pytest_specbench.perf.timeline``; pytest-xdist passes ``-p`` on to its
workers) and active only when ``SPECBENCH_TIMELINE`` names a folder.  Each process
(the controller and every worker) writes ``DIR/<role>-<pid>.jsonl``: one line per
event with the wall clock (``time.time()``), its own CPU (``time.process_time()``)
and the CPU of its descendants from /proc (the sandbox zygote and the sample
children it has reaped, which are too short-lived for a sampling profiler), and
their minor page faults (``flt``):

    {"ev": "start"|"configure"|"collected"|"item"|"finish", "t": ..., "cpu": ..., "kids": ..., ...}

``start`` is the process's own start (``/proc/self/stat``), so the time before the
plugin is imported (the interpreter, pytest's own imports) is counted.  An ``item``
line has ``t0``/``t`` (the item's protocol, ``pytest_runtest_protocol``) and the
CPU figures at both ends.  :func:`analyse` turns the files into the shares of each
worker's wall time: start-up, collection, items (its own CPU, the sandbox's CPU,
waiting), idle between items and at the end.  The plugin measures; it changes
nothing the run does.
"""
from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

ENV = "SPECBENCH_TIMELINE"
_TICK = os.sysconf("SC_CLK_TCK")


def _stat(pid: int | str) -> list[bytes] | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            data = fh.read()
    except OSError:
        return None
    return data[data.rindex(b")") + 2:].split()


def _children(pid: int) -> list[int]:
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as fh:
            return [int(x) for x in fh.read().split()]
    except OSError:
        return []


def descendants(pid: int | None = None) -> tuple[float, float]:
    """``(all, own)`` CPU seconds of the descendants of ``pid``, in one walk of /proc.

    all: its own cutime + cstime (the children it reaped) plus utime + stime + cutime
    + cstime of each live descendant (a reaped child's CPU is in its parent's cutime; a
    live one's is not, so there is no double count).  own: utime + stime of the live
    descendants only (during a run, mostly the sandbox zygote's own work)."""
    return walk(pid)[:2]


def walk(pid: int | None = None) -> tuple[float, float, int]:
    """:func:`descendants`' two figures and the descendants' minor page faults, counted
    the same way (the reaped children's ``cminflt`` plus each live one's ``minflt`` +
    ``cminflt``): a sample that touches new memory pays one a page."""
    pid = pid or os.getpid()
    me = _stat(pid)
    total = int(me[13]) + int(me[14]) if me is not None else 0
    faults = int(me[8]) if me is not None else 0
    own, todo = 0, _children(pid)
    while todo:
        child = todo.pop()
        f = _stat(child)
        if f is not None:
            own += int(f[11]) + int(f[12])
            total += int(f[11]) + int(f[12]) + int(f[13]) + int(f[14])
            faults += int(f[7]) + int(f[8])
            todo += _children(child)
    return total / _TICK, own / _TICK, faults


def descendants_cpu(pid: int | None = None) -> float:
    return descendants(pid)[0]


def descendants_own_cpu(pid: int | None = None) -> float:
    return descendants(pid)[1]


def _own_start() -> float:
    """This process's start, wall clock (``/proc/self/stat`` field 22 and the boot time)."""
    f = _stat("self")
    with open("/proc/stat") as fh:
        btime = next(int(line.split()[1]) for line in fh if line.startswith("btime"))
    return btime + int(f[19]) / _TICK


class Timeline:
    def __init__(self, folder: Path, role: str):
        self.path = folder / f"{role}-{os.getpid()}.jsonl"
        folder.mkdir(parents=True, exist_ok=True)
        self.fh = open(self.path, "a", encoding="utf-8")  # noqa: SIM115 - closed at unconfigure
        self.event("start", t=_own_start(), cpu=0.0, kids=0.0)

    def event(self, ev: str, **fields) -> None:
        kids, own, faults = walk()
        record = {"ev": ev, "t": time.time(), "cpu": time.process_time(), "kids": kids, "own": own, "flt": faults,
                  **fields}
        self.fh.write(json.dumps(record) + "\n")  # flushed at the end: a write per item costs (W1: 800 items)

    @pytest.hookimpl(tryfirst=True)
    def pytest_collection_finish(self, session):
        self.event("collected", items=len(session.items))

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item, nextitem):
        kids0, own0, flt0 = walk()
        t0, cpu0 = time.time(), time.process_time()
        yield
        self.event("item", nodeid=item.nodeid, t0=t0, cpu0=cpu0, kids0=kids0, own0=own0, flt0=flt0)

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, session):
        # tryfirst: before the plugin's own sessionfinish stops the zygote
        self.event("finish")
        self.fh.flush()

    def pytest_unconfigure(self, config):
        self.fh.close()


def process_role(config) -> str:
    """``gwN`` for an xdist worker, else ``controller``.  The config says whether this
    process is a worker; the environment does not (a run started from inside another
    run's worker inherits its PYTEST_XDIST_WORKER)."""
    workerinput = getattr(config, "workerinput", None)
    return workerinput["workerid"] if workerinput else "controller"


def pytest_configure(config):
    folder = os.environ.get(ENV)
    if not folder or config.pluginmanager.has_plugin("specbench-timeline"):
        return
    timeline = Timeline(Path(folder), process_role(config))
    timeline.event("configure")
    config.pluginmanager.register(timeline, "specbench-timeline")


def load(folder: Path) -> dict[str, list[dict]]:
    out = {}
    for path in sorted(folder.glob("*.jsonl")):
        with open(path, encoding="utf-8") as fh:
            out[path.stem] = [json.loads(line) for line in fh if line.strip()]
    return out


def analyse(folder: Path) -> dict:
    """Per process: seconds from its start to configure, to collected, to its first
    item; busy in items (own CPU, its sandbox's CPU, the rest: waiting on the child,
    another process or the machine); idle between items; from its last item to the
    end of the slowest worker's last item (imbalance); and to its finish."""
    procs = load(folder)
    ends = [max((e["t"] for e in evs if e["ev"] == "item"), default=None) for evs in procs.values()]
    last_item = max((e for e in ends if e is not None), default=None)
    result = {}
    for name, evs in procs.items():
        first = {}
        for e in evs:
            first.setdefault(e["ev"], e)
        items = [e for e in evs if e["ev"] == "item"]
        start = first["start"]["t"]
        row = {"start_to_configure": first.get("configure", first["start"])["t"] - start,
               "configure_to_collected": (first["collected"]["t"] - first["configure"]["t"])
               if "collected" in first and "configure" in first else None,
               "items": len(items)}
        fin = next((e for e in reversed(evs) if e["ev"] == "finish"), evs[-1])
        row["wall"] = fin["t"] - start
        # Start-up in CPU (a loaded machine's wall says little): the process's own CPU at
        # configure and at collected, and its first item's own and sandbox CPU (the
        # zygote's start, the describer and the calibration are paid there).
        row["cpu_to_configure"] = first["configure"]["cpu"] if "configure" in first else None
        row["cpu_to_collected"] = first["collected"]["cpu"] if "collected" in first else None
        row["cpu_own"] = fin["cpu"]
        row["cpu_kids"] = fin["kids"]
        if "own" in fin:
            row["cpu_kids_own"] = fin["own"]
        if items:
            row["collected_to_first_item"] = items[0]["t0"] - first["collected"]["t"] if "collected" in first else None
            row["busy"] = sum(e["t"] - e["t0"] for e in items)
            row["busy_cpu_own"] = sum(e["cpu"] - e["cpu0"] for e in items)
            row["busy_cpu_kids"] = sum(max(0.0, e["kids"] - e["kids0"]) for e in items)
            if all("own" in e for e in items):  # the live descendants' own CPU: the zygote's, between jobs
                row["busy_cpu_zygote"] = sum(max(0.0, e["own"] - e["own0"]) for e in items)
            row["idle_between"] = sum(b["t0"] - a["t"] for a, b in zip(items, items[1:]))
            row["after_last_item_until_slowest"] = last_item - items[-1]["t"]
            row["last_item_to_finish"] = fin["t"] - items[-1]["t"]
            longest = sorted(items, key=lambda e: e["t"] - e["t0"], reverse=True)[:5]
            row["longest_items"] = [(e["nodeid"], round(e["t"] - e["t0"], 2)) for e in longest]
            row["first_item_cpu_own"] = items[0]["cpu"] - items[0]["cpu0"]
            row["first_item_cpu_kids"] = max(0.0, items[0]["kids"] - items[0]["kids0"])
        result[name] = {k: (round(v, 3) if isinstance(v, float) else v) for k, v in row.items()}
    return result


def format_analysis(result: dict) -> str:
    lines = []
    for name, row in result.items():
        wall = row["wall"] or 1.0
        parts = [f"{name}: wall {row['wall']:.2f} s, own CPU {row['cpu_own']:.2f} s, descendants' CPU {row['cpu_kids']:.2f} s"
                 + (f" (of it, the live descendants' own at the end: {row['cpu_kids_own']:.2f} s)"
                    if row.get("cpu_kids_own") else "")]
        for key in ("start_to_configure", "configure_to_collected", "collected_to_first_item", "busy", "idle_between",
                    "after_last_item_until_slowest", "last_item_to_finish"):
            if row.get(key) is not None:
                parts.append(f"  {key:32s} {row[key]:8.2f} s  {100 * row[key] / wall:5.1f}% of its wall")
        if row.get("cpu_to_configure") is not None:
            parts.append(f"  start-up CPU: {row['cpu_to_configure']:.2f} s to configure"
                         + (f", {row['cpu_to_collected']:.2f} s to collected" if row.get("cpu_to_collected") is not None
                            else "")
                         + (f"; its first item {row['first_item_cpu_own']:.2f} s own, {row['first_item_cpu_kids']:.2f} s "
                            "sandbox (the zygote's start in it)" if row.get("items") else ""))
        if row.get("items"):
            parts.append(f"  items {row['items']}: own CPU {row['busy_cpu_own']:.2f} s, sandbox CPU "
                         f"{row['busy_cpu_kids']:.2f} s"
                         + (f" (the zygote's own, about: {row['busy_cpu_zygote']:.2f} s)" if "busy_cpu_zygote" in row else "")
                         + f", neither (waiting) {max(0.0, row['busy'] - row['busy_cpu_own'] - row['busy_cpu_kids']):.2f} s")
            parts.append("  longest items: " + ", ".join(f"{n} {s} s" for n, s in row["longest_items"]))
        lines.append("\n".join(parts))
    return "\n".join(lines)


if __name__ == "__main__":
    import sys

    print(format_analysis(analyse(Path(sys.argv[1]))))
