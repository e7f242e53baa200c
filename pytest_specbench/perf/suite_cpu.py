"""A pytest plugin that records the CPU seconds of each test, its children included.

    pytest -p pytest_specbench.perf.suite_cpu -n 2 ...        (SPECBENCH_SUITE_CPU_DIR=DIR)

For each test, the user + sys CPU of the process running it (the controller or an xdist
worker) and of all its descendants, from the start of its setup to the end of its teardown:
the difference of :func:`cpu_seconds` (own + reaped children, ``RUSAGE_CHILDREN`` + the live
descendants, ``/proc/PID/stat``) at both ends; and each process's CPU outside tests (start,
collection, the end of the session).  A descendant that lives across tests (a session's or a
module's executor: Python zygotes, JVMs, the warm javac, search parents) is charged to each
test what it spent during that test; before session 21 only ``RUSAGE_CHILDREN`` was read, so
all it spent over many tests landed on the test during which it was reaped (25.6 CPU s on a
worker's last test of a busy run, test_units.py's ``test_wire_round_trip...[value6]``).  Only the measured run records:
its controller (the first pytest process that loads the plugin, ``$SPECBENCH_SUITE_CPU_ROOT``
then names it) and its xdist workers.  A pytest run that a test starts (a documented
command, a perf script) inherits the plugin through ``PYTEST_ADDOPTS``; its cost is already
the test's (a waited-for child), so it records nothing (its items and its start were counted
twice: about 10 CPU s of a busy run of the suite, a "specbench" row of 46 items and 6.6 s
"outside tests").  It writes ONE line instead (:class:`NestedRun`): the test that started it
(``$SPECBENCH_SUITE_CPU_TEST``, set around each measured test), its arguments, its new pytest
processes (its controller and xdist workers) and its CPU, children included -- a line that says
where a test's CPU went, never added to the totals.  So does a run made in a measured process
(``pytester.runpytest_inprocess``, ``parseconfigure``), marked ``in_process``.  The tests' own runs drop
``PYTEST_ADDOPTS`` (tests/shared_runs.py, ``pytester``), so the measured run also names the
plugin in ``PYTEST_PLUGINS``, which they keep.  Each process appends one JSON
line per test to its file in ``$SPECBENCH_SUITE_CPU_DIR`` (an interrupted run keeps what it
measured) and a last line at the session's end; ``python -m
pytest_specbench.perf.suite`` runs the suite with this plugin and prints the table.

Why CPU and not wall: on a shared machine the wall time of a test says how loaded the
machine was; its CPU seconds mostly say what the test costs (the suite's budget, issue #45:
two cores with one busy process per core beside it give the suite about half the CPU).
The figures of a process add up: the per-test differences and "outside tests" telescope to
the value at the session's end.  What the reading cannot see: a descendant whose parent
died before it (re-parented to init: it leaves the tree, so its CPU so far is taken back
from the test during which its parent died; sandbox jobs and executors are waited for), and
whatever a descendant spends after the session's last reading.  The resolution is the
kernel's clock tick (10 ms) per live descendant.
"""
from __future__ import annotations

import atexit
import json
import os
import resource
import time
from pathlib import Path

import pytest

DIR_VARIABLE = "SPECBENCH_SUITE_CPU_DIR"
ROOT_VARIABLE = "SPECBENCH_SUITE_CPU_ROOT"  # the pid of the measured run's controller
XDIST_VARIABLE = "SPECBENCH_SUITE_CPU_XDIST"  # the measured controller's pid, when it starts xdist workers
TEST_VARIABLE = "SPECBENCH_SUITE_CPU_TEST"  # the measured test running now (for the runs it starts)
NESTED_VARIABLE = "SPECBENCH_SUITE_CPU_NESTED"  # the pid of the nested run that records (its own runs don't)
PLUGIN = __name__
# Whether this process already records (the measured controller or worker): a pytest run made
# in the same process (pytester's in-process runs) is part of the test that makes it.
_recording_here = False


_TICK = os.sysconf("SC_CLK_TCK")


def _reaped_children() -> float:
    below = resource.getrusage(resource.RUSAGE_CHILDREN)
    return below.ru_utime + below.ru_stime


def live_descendants_cpu(root: int | None = None) -> float:
    """CPU seconds of the processes now under ``root`` (default: this process), at any depth:
    each one's user + sys and what its own waited-for children spent (``/proc/PID/stat``
    utime, stime, cutime, cstime; a zombie still shows its own).  One pass over ``/proc``
    (about 1.5 ms with ~120 processes: this kernel has no ``/proc/PID/task/TID/children``)."""
    root = os.getpid() if root is None else root
    parent_of: dict[int, int] = {}
    ticks: dict[int, int] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as stat:
                data = stat.read()
        except OSError:  # ended meanwhile
            continue
        fields = data[data.rindex(b")") + 2:].split()  # after "(comm)", which may hold spaces
        pid = int(name)
        parent_of[pid] = int(fields[1])
        ticks[pid] = sum(int(value) for value in fields[11:15])
    below: dict[int, bool] = {root: True}

    def under(pid: int) -> bool:
        chain = []
        while pid not in below:
            chain.append(pid)
            pid = parent_of.get(pid, 0)
            if pid <= 1:  # init or gone: not ours
                below.update(dict.fromkeys(chain, False))
                return False
        verdict = below[pid]
        below.update(dict.fromkeys(chain, verdict))
        return verdict

    return sum(ticks[pid] for pid in ticks if pid != root and under(pid)) / _TICK


def cpu_seconds(children: bool = True) -> float:
    """User + sys CPU of this process and (``children``) of all its descendants so far: the
    reaped ones (``RUSAGE_CHILDREN``) and the live ones (:func:`live_descendants_cpu`), so a
    long-lived child's CPU counts when it is spent, not when it is reaped."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    spent = own.ru_utime + own.ru_stime
    if children:
        # a child reaped between the two readings would count in both or neither: read again
        for _ in range(3):
            reaped = _reaped_children()
            live = live_descendants_cpu()
            if _reaped_children() == reaped:
                break
        spent += reaped + live
    return spent


class SuiteCpu:
    def __init__(self, folder: Path, worker: str):
        folder.mkdir(parents=True, exist_ok=True)
        self.path = folder / f"{worker}-{os.getpid()}.jsonl"
        self.worker = worker
        self.in_tests = 0.0

    def _write(self, record: dict) -> None:
        with self.path.open("a") as out:
            out.write(json.dumps(record) + "\n")

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item, nextitem):
        cpu, wall = cpu_seconds(), time.monotonic()
        os.environ[TEST_VARIABLE] = item.nodeid  # the runs this test starts say so
        try:
            yield
        finally:
            os.environ.pop(TEST_VARIABLE, None)
        spent = cpu_seconds() - cpu
        self.in_tests += spent
        self._write({"test": item.nodeid, "cpu": round(spent, 3), "wall": round(time.monotonic() - wall, 3)})

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session):
        # An xdist controller's children are its workers, whose own lines count them.
        total = cpu_seconds(children=not session.config.pluginmanager.hasplugin("dsession"))
        self._write({"process": self.worker, "cpu_total": round(total, 3),
                     "cpu_outside_tests": round(total - self.in_tests, 3)})


class NestedRun:
    """A pytest run that a measured test started: one line with what it cost in all.  In
    another process (a subprocess, ``pytester.runpytest_subprocess``) the line is written at
    its controller's exit, after its workers and other children were waited for; in the
    test's own process (``runpytest_inprocess``, ``parseconfigure``) at its unconfigure, the
    CPU since its configure (its xdist workers included once they were waited for)."""

    def __init__(self, folder: Path, config, in_process: bool):
        self.path = folder / f"nested-{os.getpid()}.jsonl"
        self.args = summary(config.invocation_params.args)
        self.test = os.environ.get(TEST_VARIABLE, "(outside tests)")
        self.in_process = in_process
        self.workers = 0
        self.cpu, self.start = (cpu_seconds() if in_process else 0.0), time.monotonic()
        self.outer = os.environ.get(NESTED_VARIABLE)
        os.environ[NESTED_VARIABLE] = str(os.getpid())  # the runs it starts are in its CPU already
        if not in_process:
            atexit.register(self.write)

    @pytest.hookimpl(optionalhook=True)  # (xdist's hook: a run with -p no:xdist has none)
    def pytest_testnodeready(self, node):
        self.workers += 1

    def pytest_unconfigure(self, config):
        if self.in_process:
            self.write()
            if self.outer is None:
                os.environ.pop(NESTED_VARIABLE, None)
            else:
                os.environ[NESTED_VARIABLE] = self.outer

    def write(self) -> None:
        record = {"nested": self.test, "args": self.args, "in_process": self.in_process,
                  "processes": self.workers + (0 if self.in_process else 1),
                  "cpu": round(cpu_seconds() - self.cpu, 3), "wall": round(time.monotonic() - self.start, 3)}
        with self.path.open("a") as out:
            out.write(json.dumps(record) + "\n")


def summary(args, width: int = 160) -> str:
    """A run's arguments without those every test's run adds (its ``--basetemp``, the
    ``-p no:...`` of tests/shared_runs.py), cut to ``width`` characters."""
    kept, given = [], iter(map(str, args))
    for arg in given:
        if arg == "-p":
            name = next(given, "")
            if not name.startswith("no:"):
                kept += [arg, name]
        elif not arg.startswith("--basetemp"):
            kept.append(arg)
    text = " ".join(kept)
    return text if len(text) <= width else text[:width - 3] + "..."


def nested(config) -> str | None:
    """Whether this pytest process is a run that a measured run's process started:
    "subprocess" (the controller of a run in another process) or "in-process" (a run made in
    a measured process); None for the measured run, any xdist worker of a nested run (its
    controller counts it) and a run that a nested run starts (already in that run's CPU)."""
    root = os.environ.get(ROOT_VARIABLE)
    if not root or os.environ.get(NESTED_VARIABLE) or getattr(config, "workerinput", None) is not None:
        return None
    if _recording_here:
        return "in-process"
    return "subprocess" if str(os.getpid()) != root else None


def measured(config) -> bool:
    """Whether this pytest process is the measured run's controller or one of its xdist
    workers (not a run a test started); the first controller names itself the root."""
    root = os.environ.get(ROOT_VARIABLE)
    if getattr(config, "workerinput", None) is not None:
        # xdist starts its workers as the controller's children; a measured run without xdist
        # has none (the workers of a run that one of its tests makes in its process are that
        # run's, already in its line and its test's CPU)
        return root == str(os.getppid()) and os.environ.get(XDIST_VARIABLE) == root
    if root:
        return False
    os.environ[ROOT_VARIABLE] = str(os.getpid())  # before the workers start: they inherit it
    if config.pluginmanager.hasplugin("xdist") and config.getvalue("dist") != "no":
        os.environ[XDIST_VARIABLE] = str(os.getpid())
    return True


def pytest_configure(config):
    global _recording_here
    folder = os.environ.get(DIR_VARIABLE)
    if not folder:
        return
    kind = nested(config)
    if kind:
        config.pluginmanager.register(NestedRun(Path(folder), config, kind == "in-process"), "specbench-suite-cpu-nested")
    elif not _recording_here and measured(config):
        worker = getattr(config, "workerinput", {}).get("workerid", "controller")
        config.pluginmanager.register(SuiteCpu(Path(folder), worker), "specbench-suite-cpu")
        _recording_here = True
        plugins = [p for p in os.environ.get("PYTEST_PLUGINS", "").split(",") if p]
        if PLUGIN not in plugins:  # the runs its tests start load it too (they drop PYTEST_ADDOPTS)
            os.environ["PYTEST_PLUGINS"] = ",".join([*plugins, PLUGIN])
