"""What a run's start-up pays before its first item (docs/timing.md, session 20).

Cheap: one fresh interpreter per test, so the modules a step imports are seen."""
from __future__ import annotations

import json
import subprocess
import sys

_DESCRIBE_THEN_COMPARE = r"""
import hashlib, json, sys
from pytest_specbench.execution.environments import describe_here
mine = describe_here(None)
import importlib.metadata as md
seen = sorted({((d.metadata["Name"] or "").lower().replace("_", "-"), d.version) for d in md.distributions()})
print(json.dumps({"mine": mine, "by_email": hashlib.sha256(json.dumps(seen).encode()).hexdigest()[:16],
                  "count": len(seen)}))
"""


def test_describing_the_environment_hashes_what_the_whole_metadata_parse_reads():
    """The environment's hash (the run key, the manifest, each worker's first zygote) reads
    each distribution's Name and Version with the email package's HeaderParser, not the
    whole parse ``Distribution.metadata`` makes (every long description, twice: ~0.05
    CPU s of each ~0.09 s describe); the hash must stay the one the whole parse gives, or
    every result key of a user's earlier runs would change."""
    out = subprocess.run([sys.executable, "-c", _DESCRIBE_THEN_COMPARE], capture_output=True, text=True, check=True)
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["mine"]["distributions"] == got["by_email"]
    assert got["mine"]["distribution_count"] == got["count"] > 0


_PROBE = """
import json, os, sys
def pytest_unconfigure(config):
    with open(os.environ["STARTUP_PROBE_OUT"], "w") as fh:
        json.dump({"imported": "hypothesis" in sys.modules,
                   "registered": config.pluginmanager.get_plugin("hypothesispytest") is not None}, fh)
"""


def _hypothesis_installed() -> None:
    import importlib.util

    if importlib.util.find_spec("_hypothesis_pytestplugin") is None:
        import pytest

        pytest.skip("hypothesis is not installed: pip install hypothesis")


def test_a_run_that_also_collects_a_test_of_the_users_keeps_hypothesis_s_plugin(tmp_path):
    """Hypothesis's pytest plugin imports ``hypothesis`` in its terminal summary (every
    process: the controller and each xdist worker), ~0.2 CPU s each after the last item;
    a run whose items are all specbench items drops the plugin at collection (its
    controller and its worker: the ``-n 1`` run of the next test).  A run that also
    collects a test of the user's keeps it.  (``--collect-only``: collection and the
    terminal summary run, no item does.)  Until #45, session 23, a ``--collect-only`` run
    of specbench items alone was made here too: the next test's run shows it in both the
    worker (the same hook as a ``-n 0`` run's) and the controller (xdist's own)."""
    _hypothesis_installed()
    (tmp_path / "startup_probe.py").write_text(_PROBE)
    (tmp_path / "test_users_own.py").write_text("def test_users_own():\n    pass\n")
    out = tmp_path / "seen.json"
    env = {**__import__("os").environ, "PYTHONPATH": str(tmp_path), "STARTUP_PROBE_OUT": str(out)}
    env.pop("PYTEST_ADDOPTS", None)
    env.pop("PYTEST_XDIST_WORKER", None)
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:anyio", "-p", "startup_probe",
                           "--collect-only", "--specbench=evalplus", "--model=reference",
                           f"--specbench-dir={tmp_path / 'state'}", "test_users_own.py"],
                          cwd=tmp_path, env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert json.loads(out.read_text())["registered"]


_FIRST_ITEM_PROBE = """
import json, os, sys
import pytest

def _zygotes():
    found = []
    with open(f"/proc/{os.getpid()}/task/{os.getpid()}/children") as fh:
        for pid in fh.read().split():
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as cmd:
                    if b"execution._zygote" in cmd.read():
                        found.append(int(pid))
            except OSError:
                pass
    return found

@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    from pytest_specbench.execution import limits
    with open(os.environ["STARTUP_PROBE_OUT"], "w") as fh:
        json.dump({"worker": hasattr(item.config, "workerinput"), "zygotes": len(_zygotes()),
                   "calibrated": limits._calibration is not None, "anyio": "anyio" in sys.modules}, fh)
    pytest.skip("probe: seen before its check ran")

def pytest_unconfigure(config):
    worker = getattr(config, "workerinput", {}).get("workerid", "controller")
    with open(os.environ["STARTUP_PROBE_OUT"] + "." + worker, "w") as fh:
        json.dump({"imported": "hypothesis" in sys.modules,
                   "registered": config.pluginmanager.get_plugin("hypothesispytest") is not None}, fh)
"""


def test_a_worker_starts_its_declared_sandbox_and_calibration_before_its_first_item_without_anyio_or_hypothesis(tmp_path):
    """evalplus declares ``executors = ("python",)``: an xdist worker launches the python
    zygote at its configure (it starts beside the collection) and takes
    ``machine_speed()``'s calibration once its collection is sent, so neither is paid
    inside its first item; and a run of specbench items alone starts its workers without
    anyio's pytest plugin (docs/timing.md, session 21).  Seen in the worker at the first
    item's setup, which the probe then skips (no check runs).  The same run, of specbench
    items alone, never imports ``hypothesis`` for Hypothesis's pytest plugin, which its
    controller and its worker drop at collection (read at each one's unconfigure, after
    the terminal summary that imported it; without Hypothesis installed, trivially so)."""
    (tmp_path / "first_item_probe.py").write_text(_FIRST_ITEM_PROBE)
    out = tmp_path / "seen.json"
    env = {**__import__("os").environ, "PYTHONPATH": str(tmp_path), "STARTUP_PROBE_OUT": str(out)}
    env.pop("PYTEST_ADDOPTS", None)
    env.pop("PYTEST_XDIST_WORKER", None)
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "first_item_probe",
                           "-n", "1", "--specbench=evalplus", "--model=reference", "--specbench-tasks=HumanEval-S/0",
                           f"--specbench-dir={tmp_path / 'state'}"],
                          cwd=tmp_path, env=env, capture_output=True, text=True)
    assert out.exists(), proc.stdout[-2000:] + proc.stderr[-2000:]
    assert json.loads(out.read_text()) == {"worker": True, "zygotes": 1, "calibrated": True, "anyio": False}
    for process in ("controller", "gw0"):
        seen = tmp_path / f"seen.json.{process}"
        assert seen.exists(), proc.stdout[-2000:] + proc.stderr[-2000:]
        assert json.loads(seen.read_text()) == {"imported": False, "registered": False}, process


def test_only_an_xdist_worker_starts_the_declared_sandboxes_early():
    """Pure logic of ``plugin.startup``: the declared kinds (a tuple or a callable of the
    settings; an adapter without ``executors`` adds none) are launched in an xdist worker,
    never in an xdist controller (it runs no item), a ``-n 0`` run (it may evaluate
    nothing: every verdict cached) nor under ``--collect-only``; a kind whose executor
    cannot be made is left to its first use."""
    from types import SimpleNamespace

    from pytest_specbench.plugin.startup import declared_executors, start_early

    class Services:
        def __init__(self):
            self.launched = []

        def executor(self, kind):
            if kind == "lean":
                raise RuntimeError("no lean here")
            return SimpleNamespace(start_early=lambda: self.launched.append(kind))

    adapters = [SimpleNamespace(executors=("python",)), SimpleNamespace(),
                SimpleNamespace(executors=lambda settings: ("python", settings.extra))]
    assert declared_executors(adapters, SimpleNamespace(extra="jvm")) == ("python", "jvm")

    def launched(option, worker=False, extra="jvm"):
        config = SimpleNamespace(option=SimpleNamespace(**option), pluginmanager=SimpleNamespace(register=lambda *a: None))
        if worker:
            config.workerinput = {}
        services = Services()
        start_early(config, services, adapters, SimpleNamespace(extra=extra))
        return services.launched

    assert launched({"collectonly": False, "dist": "load", "tx": ["popen"] * 2}) == []  # the xdist controller
    assert launched({"collectonly": False, "dist": "no", "tx": []}, worker=True) == ["python", "jvm"]
    assert launched({"collectonly": False, "dist": "no", "tx": []}) == []  # -n 0: at first use, as before
    assert launched({"collectonly": True, "dist": "no", "tx": []}, worker=True) == []
    assert launched({"collectonly": False, "dist": "no", "tx": []}, worker=True, extra="lean") == ["python"]


def test_workers_start_without_anyio_only_in_a_run_of_specbench_items_alone(monkeypatch):
    """Pure logic of ``plugin.startup.workers_without_anyio``: plain local workers of a run
    that collects no test of the user's get ``-p no:anyio`` through their environment
    (the user's own PYTEST_ADDOPTS kept before it); named test paths, remote specs, a
    worker's own config or a PYTEST_ADDOPTS naming anyio leave them as they are."""
    from types import SimpleNamespace

    import pytest

    from pytest_specbench.plugin.startup import workers_without_anyio

    def specs(tx, source=pytest.Config.ArgsSource.INVOCATION_DIR, worker=False, addopts=None):
        if addopts is None:
            monkeypatch.delenv("PYTEST_ADDOPTS", raising=False)
        else:
            monkeypatch.setenv("PYTEST_ADDOPTS", addopts)
        config = SimpleNamespace(option=SimpleNamespace(tx=list(tx)), args_source=source,
                                 pluginmanager=SimpleNamespace(has_plugin=lambda name: name == "anyio"))
        if worker:
            config.workerinput = {}
        workers_without_anyio(config)
        return config.option.tx

    assert specs(["popen"] * 2) == ["popen//env:PYTEST_ADDOPTS=-p no:anyio"] * 2
    assert specs(["popen"], addopts="-x") == ["popen//env:PYTEST_ADDOPTS=-x -p no:anyio"]
    assert specs(["popen"] * 2, source=pytest.Config.ArgsSource.ARGS) == ["popen"] * 2  # the user's tests too
    assert specs(["popen", "ssh=host//python=python3"]) == ["popen", "ssh=host//python=python3"]
    assert specs(["popen"], worker=True) == ["popen"]
    assert specs(["popen"], addopts="-p anyio") == ["popen"]
    assert specs([]) == []


def test_an_early_start_that_fails_is_said_by_the_first_job_as_before(tmp_path):
    """A zygote whose launch fails at ``start_early`` (here: no such interpreter) costs the
    run nothing there; the first job's ``ensure_started`` tries again and raises the
    harness's one-line error (an E of that item), as a start at first use always did."""
    import pytest

    from pytest_specbench.errors import InfrastructureError
    from pytest_specbench.execution.limits import Limits
    from pytest_specbench.execution.python import PythonExecutor

    ex = PythonExecutor(Limits(), python=str(tmp_path / "no-such-python"))
    ex.start_early()
    assert ex._proc is None
    with pytest.raises(InfrastructureError, match="sandbox could not start"):
        ex.ensure_started()
