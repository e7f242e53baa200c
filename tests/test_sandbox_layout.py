"""What the sandbox shows of a venv that lives inside the project (``.venv``,
the most common layout): its interpreter works, nothing else of the project is
visible, not even names."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from pytest_specbench.execution.command import CommandExecutor
from pytest_specbench.execution.limits import Limits
from pytest_specbench.execution.protocol import CommandJob
from pytest_specbench.execution.python import CallsJob, PythonExecutor

LIMITS = Limits(call_cpu=2.0, startup_cpu=2.0, memory_mb=1024, tmp_mb=16)

PROBE = """
import os, sys
def f(project):
    seen = {"prefix": sys.prefix}
    for what, action in (("list project", lambda: os.listdir(project)),
                         ("read secret", lambda: open(os.path.join(project, "secret.txt")).read()),
                         ("list venv parent", lambda: os.listdir(os.path.dirname(sys.prefix))),
                         ("stat src", lambda: os.stat(os.path.join(project, "src")).st_mode)):
        try:
            seen[what] = action()
        except OSError as exc:
            seen[what] = type(exc).__name__
    return seen
"""


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root: without a uid of its own the sample owns the mounts")
def test_venv_inside_the_project_runs_and_shows_nothing_else(tmp_path):
    project = tmp_path / "project"
    (project / "src").mkdir(parents=True)
    (project / "secret.txt").write_text("do not read")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(project / ".venv")], check=True)
    ex = PythonExecutor(LIMITS, hide=[str(project)], python=str(project / ".venv" / "bin" / "python"))
    try:
        iso = ex.ensure_started()
        assert iso["filesystem"], iso
        result = ex.run(None, CallsJob(PROBE, "f", "layout", lambda: [((str(project),), {})], [0]))
        seen = result.outcomes[0].value
    finally:
        ex.close()
    assert seen["prefix"] == str(project / ".venv")  # the venv's interpreter runs the sample
    assert seen["list project"] in ("PermissionError", [])
    assert seen["list venv parent"] in ("PermissionError", [])
    assert seen["read secret"] in ("FileNotFoundError", "PermissionError")
    assert seen["stat src"] in ("FileNotFoundError", "PermissionError")


def test_venv_in_a_temporary_folder_still_works(tmp_path):
    # CI builds its venv under /tmp, which the sandbox covers with a fresh tmpfs.
    venv = tmp_path / "ci-venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    site = next(venv.glob("lib/python*/site-packages"))
    (site / "specbench_probe_mod.py").write_text("VALUE = 'installed in the venv'\n")
    python = str(venv / "bin" / "python")
    ex = PythonExecutor(LIMITS, hide=[], python=python)
    try:
        ex.ensure_started()
        code = "import sys\ndef f():\n    import specbench_probe_mod\n    return [sys.prefix, specbench_probe_mod.VALUE]\n"
        result = ex.run(None, CallsJob(code, "f", "tmp-venv", lambda: [((), {})], [0]))
        assert result.outcomes[0].value == [str(venv), "installed in the venv"], result.failure_reason()
    finally:
        ex.close()
    command = CommandExecutor(hide=[])
    try:
        done = command.run(None, CommandJob(argv=(python, "-c", "import specbench_probe_mod as m; print(m.VALUE)"),
                                            readonly=(venv,)))
        assert done.stdout == "installed in the venv\n", done.stderr
    finally:
        command.close()
