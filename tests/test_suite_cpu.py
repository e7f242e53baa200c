"""The suite's CPU plugin (pytest_specbench.perf.suite_cpu) records the measured run only:
a pytest run that one of its tests starts inherits the plugin (``PYTEST_PLUGINS``) and its
folder, but its cost is already that test's, so it must not add to the totals (its items and
its start were counted twice: a "specbench" row and part of "outside tests"); it writes one
"nested" line naming the test that started it instead."""
from __future__ import annotations

import atexit
import json
import os
from types import SimpleNamespace

from pytest_specbench.perf import suite, suite_cpu


class Plugins:
    def __init__(self, xdist: bool = True):
        self.registered = []
        self.xdist = xdist

    def hasplugin(self, name):
        return name == "xdist" and self.xdist

    def register(self, plugin, name):
        self.registered.append(plugin)


def configured(monkeypatch, workerinput=None, parent=None, args=(), dist="load"):
    config = SimpleNamespace(pluginmanager=Plugins(), invocation_params=SimpleNamespace(args=args),
                             getvalue={"dist": dist}.get)
    if workerinput is not None:
        config.workerinput = workerinput
    if parent is not None:
        monkeypatch.setattr(os, "getppid", lambda: parent)
    suite_cpu.pytest_configure(config)
    return config.pluginmanager.registered


def names(plugins):
    return [p.path.name.split("-")[0] for p in plugins]


def fresh_process(monkeypatch, tmp_path):
    """This process as a new one: nothing recorded here yet (the measured run's own worker
    may be running this test), the environment given back at the test's end."""
    monkeypatch.setattr(suite_cpu, "_recording_here", False)
    monkeypatch.setenv(suite_cpu.DIR_VARIABLE, str(tmp_path))
    for variable in (suite_cpu.ROOT_VARIABLE, suite_cpu.XDIST_VARIABLE, suite_cpu.NESTED_VARIABLE,
                     suite_cpu.TEST_VARIABLE, "PYTEST_PLUGINS"):
        monkeypatch.delenv(variable, raising=False)


def test_only_the_measured_controller_and_its_own_workers_record(monkeypatch, tmp_path):
    fresh_process(monkeypatch, tmp_path)
    monkeypatch.setattr(atexit, "register", lambda function: None)
    assert names(configured(monkeypatch)) == ["controller"]  # the first controller: the root
    assert os.environ[suite_cpu.ROOT_VARIABLE] == str(os.getpid())
    assert os.environ["PYTEST_PLUGINS"] == suite_cpu.PLUGIN  # the runs its tests start load it
    monkeypatch.setattr(suite_cpu, "_recording_here", False)  # (the worker: another process)
    assert names(configured(monkeypatch, {"workerid": "gw0"}, parent=os.getpid())) == ["gw0"]
    # a run made in the same process (pytester's in-process runs): one line, from its configure
    # to its unconfigure, the runs it starts in its CPU already
    [inside] = configured(monkeypatch, args=("--specbench=contract",))
    assert isinstance(inside, suite_cpu.NestedRun) and inside.in_process
    assert configured(monkeypatch) == []
    inside.pytest_unconfigure(None)
    assert suite_cpu.NESTED_VARIABLE not in os.environ
    [record] = suite.load_nested(tmp_path)
    assert record["in_process"] and record["processes"] == 0 and record["args"] == "--specbench=contract"
    monkeypatch.delenv(suite_cpu.DIR_VARIABLE)
    monkeypatch.setattr(suite_cpu, "_recording_here", False)
    assert configured(monkeypatch) == []  # no folder: nothing measured


def test_a_measured_run_without_xdist_has_no_workers_of_its_own(monkeypatch, tmp_path):
    """Under ``-n 0`` the xdist workers that are the measured process's children are those of
    a run one of its tests made in its process (``runpytest_inprocess(..., "-n", "2")``):
    that run's, not the measured run's (they were a "specbench" row, counted twice)."""
    fresh_process(monkeypatch, tmp_path)
    monkeypatch.setattr(atexit, "register", lambda function: None)
    assert names(configured(monkeypatch, dist="no")) == ["controller"]
    monkeypatch.setattr(suite_cpu, "_recording_here", False)  # (the worker: another process)
    assert configured(monkeypatch, {"workerid": "gw0"}, parent=os.getpid()) == []


def test_a_run_a_test_starts_writes_one_line_that_the_totals_leave_out(monkeypatch, tmp_path):
    fresh_process(monkeypatch, tmp_path)
    monkeypatch.setenv(suite_cpu.ROOT_VARIABLE, str(os.getpid() + 1))  # the measured controller: another process
    monkeypatch.setenv(suite_cpu.TEST_VARIABLE, "tests/test_x.py::test_y")
    at_exit = []
    monkeypatch.setattr(atexit, "register", at_exit.append)
    # the workers of a run a test started: counted by their controller, never on their own
    assert configured(monkeypatch, {"workerid": "gw0"}, parent=os.getpid() + 2) == []
    [run] = configured(monkeypatch, args=("-p", "no:anyio", "--basetemp=/tmp/x", "-n", "2", "-p", "xdist", "--specbench=contract"))
    assert isinstance(run, suite_cpu.NestedRun) and at_exit == [run.write]
    assert configured(monkeypatch) == []  # a run that run starts: already in its CPU
    run.pytest_testnodeready(node=None)
    run.pytest_testnodeready(node=None)
    run.write()
    [line] = (tmp_path / f"nested-{os.getpid()}.jsonl").read_text().splitlines()
    record = json.loads(line)
    assert record["nested"] == "tests/test_x.py::test_y" and record["processes"] == 3 and record["cpu"] > 0
    assert not record["in_process"]
    assert record["args"] == "-n 2 -p xdist --specbench=contract"
    (tmp_path / "gw0-1.jsonl").write_text(json.dumps({"test": "tests/test_x.py::test_y", "cpu": 4.0, "wall": 5.0}) + "\n"
                                          + json.dumps({"process": "gw0", "cpu_total": 5.0, "cpu_outside_tests": 1.0}) + "\n")
    assert suite.load_records(tmp_path) == ({"tests/test_x.py::test_y": (4.0, 5.0)}, 1.0)
    assert suite.load_nested(tmp_path) == [record]


# A grandchild (behind a shell that waits for it) that spends 0.2 CPU s, says so, waits for its
# stdin to close, then spends 0.2 CPU s more and ends.
_BURN = ("import sys, time\n"
         "def burn(until):\n"
         "    while time.process_time() < until: pass\n"
         "burn(0.2); print('spent', flush=True); sys.stdin.read(); burn(0.4)\n")


def test_a_live_descendant_is_charged_when_it_spends_not_when_it_is_reaped():
    """The per-test figure of a session's executor (zygotes, JVMs, the warm javac): its CPU
    goes to the tests during which it is spent.  Before session 21 the plugin read
    ``RUSAGE_CHILDREN`` only, so the first reading was ~0 and the second held all of it
    (the 25.6 CPU s on a worker's last test of a busy run); and the two still add up to what
    the process tree spent (this process's own reading cost included)."""
    import resource
    import subprocess
    import sys

    own_before = resource.getrusage(resource.RUSAGE_SELF)
    start = suite_cpu.cpu_seconds()
    shell = subprocess.Popen(["sh", "-c", f'"{sys.executable}" -c "$0"; true', _BURN],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert shell.stdout.readline() == "spent\n"
    middle = suite_cpu.cpu_seconds()
    shell.stdin.close()
    _, status, usage = os.wait4(shell.pid, 0)
    shell.returncode = os.waitstatus_to_exitcode(status)
    end = suite_cpu.cpu_seconds()
    own_after = resource.getrusage(resource.RUSAGE_SELF)
    first, second = middle - start, end - middle
    assert 0.15 <= first < 0.35, first  # the grandchild's first 0.2 s (its start included), while it lives
    assert 0.15 <= second < 0.3, second  # only what it spent after that reading
    tree = usage.ru_utime + usage.ru_stime + (own_after.ru_utime + own_after.ru_stime
                                              - own_before.ru_utime - own_before.ru_stime)
    assert abs(first + second - tree) < 0.05, (first, second, tree)  # the totals add up
    assert shell.returncode == 0
