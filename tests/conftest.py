"""Shared fixtures for pytest-specbench's own tests."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

from shared_data import SHARED_DATA  # noqa: E402  (tests/ is on sys.path)

# A run without --specbench-data reads the download cache when it holds the data
# (SPECBENCH_DATA, else the user cache folder): the tests expect the bundled
# suites, so they point it at a folder that never holds any; tests of the cache
# set it themselves.  Same for the state folder's environment default.
import os  # noqa: E402
import tempfile  # noqa: E402

os.environ["SPECBENCH_DATA"] = os.path.join(tempfile.gettempdir(), "specbench-tests-no-data-cache")
os.environ.pop("SPECBENCH_DIR", None)
os.environ.pop("SPECBENCH_DATA_MIRROR", None)
os.environ.pop("SPECBENCH_OFFLINE", None)


def pytest_collection_modifyitems(config, items):
    # The real-model tests (tests/realmodel/, README "Models and roles") need a C++ build and
    # a model file: opt in with SPECBENCH_REAL_MODEL=1; otherwise one skip line says how.
    if os.environ.get("SPECBENCH_REAL_MODEL") == "1":
        return
    skip = pytest.mark.skip(reason="real model: run `sh tests/realmodel/install.sh` once, then "
                                   "SPECBENCH_REAL_MODEL=1 pytest -m realmodel (README, Models and roles)")
    for item in items:
        if item.get_closest_marker("realmodel") is not None:
            item.add_marker(skip)


@pytest.fixture(scope="module")
def python_executor(request):
    """One started sandboxed Python executor per test module, with the module's
    ``LIMITS`` (and ``HIDE``, paths hidden from samples, if it has one)."""
    from pytest_specbench.execution.python import PythonExecutor

    ex = PythonExecutor(request.module.LIMITS, hide=getattr(request.module, "HIDE", ()))
    ex.ensure_started()
    yield ex
    ex.close()


@pytest.fixture(scope="module")
def module_runs(request, tmp_path_factory):
    """Whole pytest runs made once for the tests of a module (``tests/module_runs.py``):
    under xdist, once for the session, by the first worker that needs each."""
    from module_runs import PytestRuns

    name = request.module.__name__.rpartition(".")[2]
    if getattr(request.config, "workerinput", None) is None:
        return PytestRuns(tmp_path_factory.mktemp(name))
    return PytestRuns(tmp_path_factory.getbasetemp().parent / "module-runs" / name)


@pytest.fixture
def shared_data() -> Path:
    """The real upstream data beside the checkout; tests using it skip without it."""
    if not (SHARED_DATA / "contracteval").is_dir():
        pytest.skip(f"real data not found at {SHARED_DATA}")
    return SHARED_DATA


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    # The fault tests record what each hostile sample got and how long it took;
    # show that as a table at the end of the run.
    import sys

    module = next((m for name, m in sys.modules.items() if name.endswith("test_sandbox_faults")), None)
    rows = getattr(module, "OBSERVED", None)
    if not rows:
        return
    terminalreporter.section("sandbox faults: verdict and time")
    width = max(len(r[0]) for r in rows)
    for fault, verdict, seconds in rows:
        terminalreporter.write_line(f"{fault.ljust(width)}  {seconds:6.2f} s  {verdict}")
