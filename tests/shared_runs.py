"""A whole pytest run in a subprocess that several tests of a module can share.

``pytester`` is function-scoped, so each test that asserts on a plugin run used to
start its own; where several tests assert on the same (or a compatible) run, a
module-scoped fixture makes it once with :func:`run_pytest` and each test asserts
on its :class:`pytest.RunResult` and report.  The child sees what
``pytester.runpytest_subprocess`` gives it: the folder as its working directory and
``HOME``, no outer ``PYTEST_ADDOPTS``, no colours, a ``--basetemp`` of its own, the
folder on ``PYTHONPATH`` and stdin closed.
"""
from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest


# What an outer xdist worker sets: an inner run is a controller of its own, as under pytester.
OUTER_RUN_VARIABLES = ("PYTEST_ADDOPTS", "TOX_ENV_DIR", "PYTEST_CURRENT_TEST")
# Pytest plugins of our dependencies that no whole run the tests start uses (none has a
# hypothesis or an anyio test), loaded by every pytest process such a run starts (its
# controller and each xdist worker): hypothesis' imports all of hypothesis in the run's
# terminal summary (~0.2 CPU s per run), anyio's imports anyio at start (~0.09 CPU s per
# process).  Users' runs keep them (tests/conftest.py's pytester).
UNUSED_PLUGINS = ("-p", "no:hypothesispytest", "-p", "no:anyio")


def run_pytest(folder: Path, *args: str, env: dict[str, str] | None = None,
               timeout: float | None = None) -> pytest.RunResult:
    """``python -m pytest ARGS`` in ``folder``, as ``pytester.runpytest_subprocess`` runs it
    (``env`` adds to or overrides the environment)."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    environment = {**os.environ, "HOME": str(folder), "USERPROFILE": str(folder), "PY_COLORS": "0",
                   "PYTHONPATH": os.pathsep.join(filter(None, [str(folder), os.environ.get("PYTHONPATH", "")])),
                   **(env or {})}
    for name in OUTER_RUN_VARIABLES:
        environment.pop(name, None)
    basetemp = tempfile.mkdtemp(prefix="runpytest-", dir=folder)  # unique: xdist workers may share the folder
    start = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "pytest", *UNUSED_PLUGINS, f"--basetemp={basetemp}", *map(str, args)],
                          cwd=folder, env=environment, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          errors="replace", timeout=timeout)
    try:
        ret: int | pytest.ExitCode = pytest.ExitCode(done.returncode)
    except ValueError:
        ret = done.returncode
    return pytest.RunResult(ret, done.stdout.splitlines(), done.stderr.splitlines(), time.monotonic() - start)


def session_folder(config: pytest.Config, tmp_path_factory: pytest.TempPathFactory, name: str) -> Path:
    """A folder for the whole test session: under xdist one for every worker (beside their
    base temporary folders, in the session's own ``pytest-N``), else one of this process."""
    if getattr(config, "workerinput", None) is None:
        return tmp_path_factory.mktemp(name)
    path = tmp_path_factory.getbasetemp().parent / name
    path.mkdir(exist_ok=True)
    return path


@pytest.fixture(scope="session")
def postcond_real_state(request, tmp_path_factory) -> Path:
    """One state folder for the session for PostcondBench's real slice (imported by the
    modules that run it): the keon/algorithms venv is built once, by whichever test and
    xdist worker needs it first (``prepare_venv`` builds it under a file lock; the other
    worker waits and reuses it), not once per test or per worker."""
    return session_folder(request.config, tmp_path_factory, "postcond-real-state")


def prebuild_postcond_java(state: Path) -> None:
    """What every run of a bundled PostcondBench Java task compiles before its first
    check, built into ``state`` as the plugin's ``jvm`` executor lays it out under
    ``--specbench-dir=state`` (``state/jvm``): the warm javac, the JML runtime, the JUnit
    runner and the javalib project.  Trusted code, compiled once per content and cached
    by content, so a run or test that uses ``state`` finds them done; a program's own
    compile (a spec injected into a file, a mutant) and every JVM run stay the run's."""
    from pytest_specbench.benchmarks.postcond.adapter import BUNDLED
    from pytest_specbench.benchmarks.postcond.java.execute import project_classes
    from pytest_specbench.execution.jvm import JvmExecutor
    from pytest_specbench.jml import junit_missing, junit_toolchain

    jvm = JvmExecutor(state / "jvm", state_dir=state)
    if jvm.available() or junit_missing():
        return  # the Java items skip with one line; nothing to build
    try:
        project_classes(jvm, BUNDLED.parent / "javalib", junit_toolchain(jvm))
    finally:
        jvm.close()


_BUNDLED_STATE = pytest.StashKey[Path]()


def bundled_state_folder(config: pytest.Config, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The session's folder of :func:`postcond_bundled_state` and of the process's jvm
    executor (:func:`session_jvm`), made once per process (``session_folder`` makes a new
    one at each call without xdist)."""
    if _BUNDLED_STATE not in config.stash:
        config.stash[_BUNDLED_STATE] = session_folder(config, tmp_path_factory, "postcond-bundled-state")
    return config.stash[_BUNDLED_STATE]


@pytest.fixture(scope="session")
def postcond_bundled_state(request, tmp_path_factory) -> Path:
    """One ``--specbench-dir`` for the session's runs of PostcondBench's bundled suite
    (imported by the modules that run it), its Java toolchain and project prebuilt by
    the first xdist worker that needs it (a file lock: the other waits and reuses it).
    Results are not cached there: the runs that use it pass
    ``--specbench-result-cache=off``, so every verdict is evaluated again."""
    from filelock import FileLock

    state = bundled_state_folder(request.config, tmp_path_factory)
    done = state / ".prebuilt"
    with FileLock(str(state) + ".lock"):
        if not done.exists():
            prebuild_postcond_java(state)
            done.write_text("")
    return state


# The one jvm executor of this process for the bundled state (see :func:`bundled_jvm`).
_BUNDLED_JVM: list = []


def _process_jvm(state: Path):
    from pytest_specbench.execution.jvm import JvmExecutor

    if not _BUNDLED_JVM:
        _BUNDLED_JVM.append(JvmExecutor(state / "jvm", state_dir=state))
    return _BUNDLED_JVM[0]


def _close_process_jvm(executor) -> None:
    if _BUNDLED_JVM and _BUNDLED_JVM[0] is executor:
        _BUNDLED_JVM.clear()
        executor.close()


@pytest.fixture(scope="session")
def bundled_jvm(postcond_bundled_state):
    """One ``jvm`` executor for the session's tests of the JML service and PostcondBench's Java
    side (imported by the modules that use it), on ``postcond_bundled_state``'s class cache,
    as a plugin process has one: its warm javac starts and warms up once per process (about
    1 CPU s a start: docs/timing.md, "Session 19"), not once per module.  Every spec, fill,
    answer, mutant and test program is still compiled by the test that checks it and run in
    JVMs of its own.  Each module that imports this fixture has a session fixture of its own
    (pytest keys fixtures by the module that defines them): the first makes the executor and
    the others take it; it is closed at the session's end, at the last test's teardown (where
    the per-test CPU plugin counts its JVMs: perf/suite_cpu.py)."""
    executor = _process_jvm(postcond_bundled_state)
    yield executor
    _close_process_jvm(executor)


@pytest.fixture(scope="session")
def session_jvm(request, tmp_path_factory):
    """The same executor as :func:`bundled_jvm` for tests that need no PostcondBench project
    built (the JML checker's own tests, SpecEval's in-process checks): a test using it does
    not wait for that build, nor is it ``slow`` for it (tests/conftest.py); whichever of the
    two fixtures comes first makes the executor, in the same folder."""
    executor = _process_jvm(bundled_state_folder(request.config, tmp_path_factory))
    yield executor
    _close_process_jvm(executor)
