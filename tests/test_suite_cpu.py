"""The suite's CPU plugin (pytest_specbench.perf.suite_cpu) records the measured run only:
a pytest run that one of its tests starts inherits the plugin (``PYTEST_ADDOPTS``) and its
folder, but its cost is already that test's, so it must record nothing (its items and its
start were counted twice: a "specbench" row and part of "outside tests")."""
from __future__ import annotations

import os
from types import SimpleNamespace

from pytest_specbench.perf import suite_cpu


class Plugins:
    def __init__(self):
        self.registered = []

    def register(self, plugin, name):
        self.registered.append(plugin)


def configured(monkeypatch, tmp_path, workerinput=None, parent=None):
    config = SimpleNamespace(pluginmanager=Plugins())
    if workerinput is not None:
        config.workerinput = workerinput
    if parent is not None:
        monkeypatch.setattr(os, "getppid", lambda: parent)
    suite_cpu.pytest_configure(config)
    return [p.path.name.split("-")[0] for p in config.pluginmanager.registered]


def test_only_the_measured_controller_and_its_own_workers_record(monkeypatch, tmp_path):
    monkeypatch.setenv(suite_cpu.DIR_VARIABLE, str(tmp_path))
    monkeypatch.delenv(suite_cpu.ROOT_VARIABLE, raising=False)
    assert configured(monkeypatch, tmp_path) == ["controller"]  # the first controller: the root
    assert os.environ[suite_cpu.ROOT_VARIABLE] == str(os.getpid())
    assert configured(monkeypatch, tmp_path, {"workerid": "gw0"}, parent=os.getpid()) == ["gw0"]
    # a run a test started: its controller, and its workers (children of that controller)
    assert configured(monkeypatch, tmp_path) == []
    assert configured(monkeypatch, tmp_path, {"workerid": "gw1"}, parent=os.getpid() + 1) == []
    monkeypatch.delenv(suite_cpu.DIR_VARIABLE)
    monkeypatch.delenv(suite_cpu.ROOT_VARIABLE)
    assert configured(monkeypatch, tmp_path) == []  # no folder: nothing measured
