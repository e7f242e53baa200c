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
import time
from pathlib import Path

import pytest


def run_pytest(folder: Path, *args: str, timeout: float | None = None) -> pytest.RunResult:
    """``python -m pytest ARGS`` in ``folder``, as ``pytester.runpytest_subprocess`` runs it."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTEST_ADDOPTS", "TOX_ENV_DIR")}
    env.update(HOME=str(folder), USERPROFILE=str(folder), PY_COLORS="0",
               PYTHONPATH=os.pathsep.join(filter(None, [str(folder), env.get("PYTHONPATH", "")])))
    basetemp = folder / f"basetemp-{len(list(folder.glob('basetemp-*')))}"
    start = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "pytest", f"--basetemp={basetemp}", *map(str, args)],
                          cwd=folder, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          timeout=timeout)
    return pytest.RunResult(proc.returncode, proc.stdout.splitlines(), proc.stderr.splitlines(),
                            time.monotonic() - start)


@pytest.fixture(scope="session")
def postcond_real_state(tmp_path_factory) -> Path:
    """One state folder per test process for PostcondBench's real slice (imported by the
    modules that run it): the keon/algorithms venv is built once, not once per test."""
    return tmp_path_factory.mktemp("postcond-real-state")
