"""Shared fixtures for pytest-specbench's own tests."""
from __future__ import annotations

import os
import sys
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
# The pbt tier's Hypothesis tables (pyspec/blocks.py, hypothesis_unicode_files) are made once
# per machine in the user's cache folder; the pytest runs of the tests have a HOME of their own
# (tests/shared_runs.py), so they are told where it is rather than each making them again.
from pytest_specbench.pyspec.blocks import tables_folder  # noqa: E402

os.environ["SPECBENCH_HYPOTHESIS_TABLES"] = str(tables_folder())

# Some machines (this project's CI among them) set PYTHONDONTWRITEBYTECODE=1.  Then
# every Python the suite starts (xdist workers, the ~80 pytest runs of whole
# sessions, the perf and CLI subprocesses) compiles the package, and pytest
# rewrites the assertions of its plugins, from source again: a pytest start costs
# ~3.5 CPU s instead of ~1.2, about twice the suite's CPU.  Users' machines keep
# Python's default (write the cache), so the suite does too, from here on.  The
# sandboxes set their own environment and are not affected (PostcondBench's runs
# of a repository's tests keep PYTHONDONTWRITEBYTECODE=1 on purpose: they must not
# write into the checkout).
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
sys.dont_write_bytecode = False


@pytest.hookimpl(trylast=True)  # after the tmp_path plugin's own configure
def pytest_configure(config):
    """One store of the JVM's trusted build products for the whole suite run (its session
    folder; execution/jvm_store.py): every test's state folder, xdist worker and nested
    pytest run (they inherit the environment) takes the warm javac's, the JML runtime's
    and the JUnit runner's classes, the jars and the AppCDS archives from it instead of
    building them again.  Tests of the store itself give their executors their own.
    ``SPECBENCH_JVM_STORE=off`` is kept (each state folder its own: for measuring)."""
    store = os.environ.get("SPECBENCH_JVM_STORE")
    if getattr(config, "workerinput", None) is not None or store == "off":
        return
    if store and store == os.environ.get("SPECBENCH_TESTS_JVM_STORE"):
        return  # a pytest run a test started in the checkout (it loads this file too): the suite's store
    store = str(config._tmp_path_factory.getbasetemp() / "jvm-store")
    os.environ["SPECBENCH_JVM_STORE"] = os.environ["SPECBENCH_TESTS_JVM_STORE"] = store


# Fixtures that make a test a whole pytest run (pytester's runs, the runs shared by a module
# or the session) or that build a real project's venv: a test using one is ``slow``.
WHOLE_RUN_FIXTURES = frozenset({"pytester", "module_runs", "postcond_real_state",
                                "postcond_bundled_state"})


@pytest.hookimpl(tryfirst=True)  # before pytest's own `-m` deselection reads the markers
def pytest_collection_modifyitems(config, items):
    _long_modules_first(items)
    _mark_slow(items)
    # The real-model tests (tests/realmodel/, README "Models and roles") need a C++ build and
    # a model file: opt in with SPECBENCH_REAL_MODEL=1; otherwise one skip line says how.
    if os.environ.get("SPECBENCH_REAL_MODEL") == "1":
        return
    skip = pytest.mark.skip(reason="real model: run `sh tests/realmodel/install.sh` once, then "
                                   "SPECBENCH_REAL_MODEL=1 pytest -m realmodel (README, Models and roles)")
    for item in items:
        if item.get_closest_marker("realmodel") is not None:
            item.add_marker(skip)


def _mark_slow(items) -> None:
    """``slow`` on every test that needs real data (``realdata``) or runs pytest
    (:data:`WHOLE_RUN_FIXTURES`), besides those marked in their files (JVM runs, batched
    sandbox jobs, costly plugin runs).  ``pytest -m "not slow" -n 2`` is then the fast
    lane of an edit loop (README, "Real data in this repository's tests"); ``pytest -n 2``
    (``.ci/run``) runs everything.  Decided from what a test uses, so a new test that
    starts a pytest run is slow without being told; ``python -m
    pytest_specbench.perf.suite -- -n 2 -q -m "not slow"`` shows what the lane costs."""
    slow = pytest.mark.slow
    for item in items:
        if item.get_closest_marker("slow") is not None:
            continue
        if item.get_closest_marker("realdata") is not None \
                or WHOLE_RUN_FIXTURES.intersection(getattr(item, "fixturenames", ())):
            item.add_marker(slow)


def _long_modules_first(items) -> None:
    """Modules with long tests (marked ``slow`` or ``realdata``) first, the most such tests
    first, each module's items kept together and in order (module fixtures are set up once).

    Why: ``pytest -n 2`` hands tests out in collection order, so a long test collected last
    keeps one worker busy while the other has nothing left: the suite's tail.  Started first,
    the long tests overlap with the many short ones.  (xdist's ``worksteal`` mode, tried for
    the tail in session 19, did not show a gain on a real busy-core run: docs/timing.md,
    "Session 19: the quiet figures".)"""
    def module_of(item):
        return getattr(item, "module", None)

    weight: dict = {}
    first_seen: dict = {}
    for position, item in enumerate(items):
        long_test = item.get_closest_marker("slow") is not None or item.get_closest_marker("realdata") is not None
        weight[module_of(item)] = weight.get(module_of(item), 0) + long_test
        first_seen.setdefault(module_of(item), position)
    items.sort(key=lambda item: (-weight[module_of(item)], first_seen[module_of(item)]))


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
def command():
    """One sandboxed ``command`` executor per test module (its own zygote)."""
    from pytest_specbench.execution.command import CommandExecutor

    ex = CommandExecutor()
    yield ex
    ex.close()


@pytest.fixture(scope="module")
def module_runs(request, tmp_path_factory):
    """Whole pytest runs made once for the tests of a module (``tests/module_runs.py``):
    under xdist, once for the session, by the first worker that needs each."""
    from module_runs import PytestRuns
    from shared_runs import session_folder

    name = request.module.__name__.rpartition(".")[2]
    return PytestRuns(session_folder(request.config, tmp_path_factory, f"module-runs-{name}"))


@pytest.fixture(scope="module")
def made_once(request, tmp_path_factory):
    """``made_once(name, make)``: ``make()``'s plain-data result, made once for the session
    (under xdist, by the first worker that needs it; ``tests/module_runs.py``): for a module
    fixture whose tests the workers share, so that its jobs run once, not once per worker."""
    from module_runs import made_once as once
    from shared_runs import session_folder

    name = request.module.__name__.rpartition(".")[2]
    folder = session_folder(request.config, tmp_path_factory, f"made-once-{name}")
    return lambda name, make: once(folder, name, make)


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


from shared_runs import UNUSED_PLUGINS  # noqa: E402


@pytest.fixture
def pytester(pytester, monkeypatch, tmp_path_factory):
    """pytester, except that an in-process run no longer forgets the installed modules it imported.

    pytester restores ``sys.modules`` after ``runpytest_inprocess``: a module the run imported
    for the first time (the plugin's lazily imported parts, httpcore, numpy) is dropped, and the
    next import makes a second copy whose classes differ from those the first copy's users hold
    ("'openai:judge' cannot answer questions", an httpcore ConnectError no longer caught,
    numpy refusing to load twice), depending on which tests shared the worker before.  Only
    modules loaded from the test's own temporary files (its conftest, test files) are forgotten."""
    import sys

    from _pytest.pytester import SysModulesSnapshot

    temporary = str(tmp_path_factory.getbasetemp())

    def installed(name: str) -> bool:
        path = getattr(sys.modules.get(name), "__file__", None) or ""
        return not path.startswith(temporary)

    monkeypatch.setattr(type(pytester), "_Pytester__take_sys_modules_snapshot",
                        lambda self: SysModulesSnapshot(preserve=installed))
    pytester._sys_modules_snapshot = SysModulesSnapshot(preserve=installed)  # restored at the test's end
    # A subprocess run leaves out the pytest plugins of our dependencies that none of its
    # tests uses (shared_runs.UNUSED_PLUGINS: hypothesis' and anyio's, ~0.1-0.3 CPU s per
    # process).  Users' runs keep them (tests/test_registry.py, the in-process runs and the
    # wheel test run with them).
    monkeypatch.setattr(pytester, "_getpytestargs", lambda: (sys.executable, "-mpytest", *UNUSED_PLUGINS))
    return pytester
