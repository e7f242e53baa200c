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
    done = subprocess.run([sys.executable, "-m", "pytest", f"--basetemp={basetemp}", *map(str, args)],
                          cwd=folder, env=environment, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          errors="replace", timeout=timeout)
    try:
        ret: int | pytest.ExitCode = pytest.ExitCode(done.returncode)
    except ValueError:
        ret = done.returncode
    return pytest.RunResult(ret, done.stdout.splitlines(), done.stderr.splitlines(), time.monotonic() - start)


@pytest.fixture(scope="session")
def postcond_real_state(tmp_path_factory) -> Path:
    """One state folder per test process for PostcondBench's real slice (imported by the
    modules that run it): the keon/algorithms venv is built once, not once per test."""
    return tmp_path_factory.mktemp("postcond-real-state")
