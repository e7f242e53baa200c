"""The ``command`` executor: jobs in the sandbox, hostile commands, venv preparation.

Each hostile command gets a result (never an exception), in bounded time, and
leaves the executor healthy (the next job runs) and no process behind.  The
contract every executor shares (CPU, wall, memory and output limits, no
network, project/state/home hidden, a crash is a result) is checked once for
all of them in ``tests/test_executor_conformance.py``; this file keeps what is
the command executor's own.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from pytest_specbench.errors import InfrastructureError
from pytest_specbench.execution import make_executor
from pytest_specbench.execution.command import CommandExecutor, CommandLimits
from pytest_specbench.execution.protocol import CommandJob, CommandResult, Environment

ROOT = os.geteuid() == 0
needs_root = pytest.mark.skipif(not ROOT, reason="needs root: a uid of its own per sandbox")
SMALL = CommandLimits(cpu_seconds=1.0, wall_seconds=3.0, memory_mb=1024, processes=32, output_bytes=4096,
                      tmp_mb=64)
TIME_BOUND = 60.0  # a hang guard, not a speed check (the machine may be loaded)


@pytest.fixture(scope="module")
def layout(tmp_path_factory):
    base = tmp_path_factory.mktemp("cmd")
    project, state = base / "project", base / "project" / ".specbench"
    state.mkdir(parents=True)
    (project / "secret.txt").write_text("project secret")
    (state / "cache.txt").write_text("state secret")
    return SimpleNamespace(project=project, state=state)


@pytest.fixture(scope="module")
def executor(layout):
    ex = CommandExecutor(SMALL, hide=[str(layout.project), str(layout.state)], state_dir=layout.state)
    ex.ensure_started()
    yield ex
    ex.close()


def _uid_processes(uid) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/status") as fh:
                    if int(next(ln for ln in fh if ln.startswith("Uid:")).split()[1]) == uid:
                        found.append(int(entry))
            except (OSError, StopIteration):
                continue
    return found


def run(executor, argv, **kw) -> CommandResult:
    t0 = time.monotonic()
    result = executor.run(kw.pop("prepared", None), CommandJob(argv=tuple(argv), **kw))
    assert time.monotonic() - t0 < TIME_BOUND
    uid = executor.isolation.get("uid")
    if uid is not None:
        assert not _uid_processes(uid), "processes left behind"
    healthy = executor.run(None, CommandJob(argv=("sh", "-c", "echo alive")))
    assert healthy.exit_code == 0 and healthy.stdout == "alive\n"
    return result


def sh(executor, script, **kw) -> CommandResult:
    return run(executor, ["sh", "-c", script], **kw)


# ------------------------------------------------------------------ basics

def test_streams_records_files_and_exit_code(executor):
    result = sh(executor, "cat in.txt; echo oops >&2; echo '{\"n\": 1}' >&3; printf made > out.txt; exit 3",
                files={"in.txt": b"hello\n"}, collect=("out.txt", "missing.txt"))
    assert (result.exit_code, result.signal, result.timed_out) == (3, None, False)
    assert result.stdout == "hello\n" and result.stderr == "oops\n"
    assert result.records == [{"n": 1}]
    assert result.files == {"out.txt": b"made"}


def test_empty_environment_plus_the_jobs(executor, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-specbench-command-secret")
    ex = CommandExecutor(SMALL)  # started with the secret in our environment
    try:
        result = ex.run(None, CommandJob(argv=("sh", "-c", "env; cat /proc/$PPID/environ 2>/dev/null"),
                                         env={"MINE": "1"}))
        assert "MINE=1" in result.stdout
        assert "sk-specbench" not in result.stdout + result.stderr
    finally:
        ex.close()


def test_missing_command_is_an_infrastructure_error_and_the_executor_survives(executor):
    with pytest.raises(InfrastructureError, match="no-such-tool-xyz"):
        executor.run(None, CommandJob(argv=("no-such-tool-xyz",)))
    assert executor.run(None, CommandJob(argv=("true",))).exit_code == 0


@pytest.mark.skipif(shutil.which("java") is None, reason="java not installed: apt-get install openjdk-17-jdk-headless")
def test_default_limits_let_a_jvm_start():
    ex = CommandExecutor()  # the executor's own defaults, not the small test limits
    try:
        result = ex.run(None, CommandJob(argv=("java", "-Xmx256m", "-version")))
        assert result.exit_code == 0, result.stderr
        assert "version" in result.stderr
    finally:
        ex.close()


def test_make_executor_builds_the_command_executor(tmp_path):
    settings = SimpleNamespace(sandbox="process", state_dir=tmp_path, limits=None)
    ex = make_executor("command", settings, [str(tmp_path)])
    try:
        assert ex.kind == "command" and ex.available() is None and ex.version
        assert ex.run(None, CommandJob(argv=("true",))).exit_code == 0
    finally:
        ex.close()


# ------------------------------------------------------------------ faults

@needs_root
def test_fork_bomb_is_contained(executor):
    # (it is stopped by its wall limit, then it and all it forked are killed: run() checks none is left)
    result = sh(executor, "b() { b | b & }; b; sleep 5", wall_seconds=1.0)
    assert result.exit_code != 0 or result.timed_out


def test_record_flood_is_cut_off():
    ex = CommandExecutor(CommandLimits(**{**SMALL.__dict__, "result_bytes": 1 << 20}))
    try:
        result = ex.run(None, CommandJob(argv=("sh", "-c", "yes '[1]' >&3"), wall_seconds=3.0))
        assert result.killed == "result data over the limit"
    finally:
        ex.close()


def test_forged_and_garbled_records_are_only_data(executor):
    result = sh(executor, "printf '[\"done\"]\\n{not json\\n\\377\\376\\n[1,\\n' >&3; exit 0")
    assert result.records == [["done"]]  # valid JSON lines kept as claims; garbage dropped
    assert result.exit_code == 0


def test_exit_codes(executor):
    assert sh(executor, "exit 42").exit_code == 42  # signals: tests/test_executor_conformance.py


def test_child_left_running_is_killed(executor):
    result = sh(executor, "(setsid sleep 3600 &) ; sleep 3600 & echo started")
    assert result.exit_code == 0 and result.stdout == "started\n"


@needs_root
def test_cannot_write_outside_its_directory(executor, layout):
    home = os.path.realpath(os.path.expanduser("~"))
    targets = [layout.project / "pwned", layout.state / "pwned", Path(home) / "pwned", Path("/usr/pwned")]
    script = "; ".join(f"echo x > {t} 2>/dev/null && echo wrote {t}" for t in targets) + "; echo done"
    result = sh(executor, script)
    assert result.stdout == "done\n"
    assert not any(t.exists() for t in targets)


def test_job_readonly_paths_are_visible_read_only_for_that_job_only(executor, layout):
    shared = layout.project / "data"
    shared.mkdir(exist_ok=True)
    (shared / "input.txt").write_text("visible\n")
    result = sh(executor, f"cat {shared}/input.txt; echo x > {shared}/new 2>/dev/null || echo read-only",
                readonly=(shared,))
    assert result.stdout == "visible\nread-only\n"
    assert not (shared / "new").exists()
    after = sh(executor, f"cat {shared}/input.txt 2>/dev/null || echo hidden")
    assert after.stdout == "hidden\n"


# ------------------------------------------------------------------ venvs

def test_venv_is_built_once_and_used_read_only(layout, tmp_path):
    hide = [str(layout.project), str(layout.state)]
    env = Environment(kind="venv", key="plain-1", spec={"python": sys.executable, "requirements": []})
    first = CommandExecutor(SMALL, hide=hide, state_dir=layout.state)
    try:
        prepared = first.prepare(env)
        assert first.builds == 1
        assert prepared.info["version"] and prepared.info["distributions"]
        python = prepared.executables["python"]
        result = first.run(prepared, CommandJob(argv=(
            "python", "-c", "import sys, os; print(sys.prefix); open(os.path.join(sys.prefix, 'x'), 'w')"),
            wall_seconds=10.0, cpu_seconds=5.0))
        assert result.stdout.strip() == str(Path(python).parent.parent), result.stderr
        assert "Read-only file system" in result.stderr or "Permission denied" in result.stderr
        hidden = first.run(prepared, CommandJob(argv=("sh", "-c", f"cat {layout.state}/cache.txt || echo hidden")))
        assert "secret" not in hidden.stdout and "hidden" in hidden.stdout
    finally:
        first.close()
    second = CommandExecutor(SMALL, hide=hide, state_dir=layout.state)  # a later run or another worker
    try:
        again = second.prepare(env)
        assert second.builds == 0 and again.info == prepared.info  # no venv, no pip call
    finally:
        second.close()


def test_failed_venv_build_names_pips_last_line(layout):
    ex = CommandExecutor(SMALL, state_dir=layout.state)
    env = Environment(kind="venv", key="broken-1", spec={"requirements": [str(layout.project / "no-such-pkg")]})
    with pytest.raises(InfrastructureError, match=r"pip install failed: .*no-such-pkg"):
        ex.prepare(env)
    assert not (layout.state / "envs" / "venv-broken-1").exists()


def _wheel(folder: Path, name: str) -> Path:
    """A minimal pure-Python wheel of the package ``name`` (pip installs it without an index)."""
    import base64
    import hashlib
    import zipfile

    files = {f"{name}/__init__.py": "MARK = 'from the venv'\n",
             f"{name}-0.1.dist-info/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1\n",
             f"{name}-0.1.dist-info/WHEEL": "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"}
    record = [f"{path},sha256={base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b'=').decode()},"
              f"{len(text.encode())}" for path, text in files.items()]
    files[f"{name}-0.1.dist-info/RECORD"] = "\n".join(record + [f"{name}-0.1.dist-info/RECORD,,"]) + "\n"
    wheel = folder / f"{name}-0.1-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as zf:
        for path, text in files.items():
            zf.writestr(path, text)
    return wheel


def test_a_venv_gets_its_requirements_from_the_harness_pip_and_no_pip_of_its_own(layout, tmp_path):
    """The harness's pip installs into the venv (``--python``) instead of a pip that
    ensurepip would unpack into every venv: the requirement is in the venv's own
    site-packages, not the harness's, and the venv has no pip (when the harness's pip
    is 22.3 or newer; older ones build the venv with its own pip, as before)."""
    from pytest_specbench.execution.environments import _harness_pip

    wheel = _wheel(tmp_path, "specbench_venv_probe")
    env = Environment(kind="venv", key="harness-pip-1", spec={"python": sys.executable, "requirements": [str(wheel)]})
    ex = CommandExecutor(SMALL, hide=[str(layout.project), str(layout.state)], state_dir=layout.state)
    try:
        prepared = ex.prepare(env)
        assert ex.builds == 1
        venv = Path(prepared.executables["python"]).parent.parent
        where = subprocess.run([prepared.executables["python"], "-c",
                                "import specbench_venv_probe as m, importlib.util as u; "
                                "print(m.__file__); print(u.find_spec('pip') is None)"],
                               capture_output=True, text=True, check=True).stdout.split()
        assert Path(where[0]).is_relative_to(venv), where
        if _harness_pip() is not None:
            assert where[1] == "True" and "pip" not in prepared.executables  # no pip of its own
        harness = subprocess.run([sys.executable, "-c", "import specbench_venv_probe"], capture_output=True)
        assert harness.returncode != 0  # installed into the venv only
        result = ex.run(prepared, CommandJob(argv=("python", "-c", "import specbench_venv_probe as m; print(m.MARK)"),
                                            wall_seconds=10.0, cpu_seconds=5.0))
        assert result.stdout.strip() == "from the venv", result.stderr
    finally:
        ex.close()


def test_services_give_one_executor_per_kind_and_close_them_all(tmp_path):
    from pytest_specbench.execution.limits import Limits
    from pytest_specbench.plugin.services import Services

    settings = SimpleNamespace(sandbox="process", state_dir=tmp_path, limits=Limits(), sample_python="")
    services = Services(settings, [str(tmp_path)])
    command, python = services.executor("command"), services.executor("python")
    assert services.executor("command") is command and services.python_executor() is python
    assert command.run(None, CommandJob(argv=("true",))).exit_code == 0
    python.ensure_started()
    procs = [command._proc, python._proc]
    services.close()
    assert all(p.poll() is not None for p in procs)
    with pytest.raises(InfrastructureError, match="unknown executor kind"):
        services.executor("cobol")


@needs_root
def test_interpreter_below_a_folder_closed_to_other_users_still_runs(tmp_path):
    # CI keeps its venv in `mktemp -d` (mode 0700) inside the checkout; a job runs
    # under a uid of its own, which cannot walk through that folder unless the
    # sandbox covers it and binds the interpreter's installation back below.
    checkout = Path(__file__).resolve().parents[1]
    closed = Path(tempfile.mkdtemp(prefix=".closed-test-", dir=checkout))
    try:
        assert closed.stat().st_mode & 0o777 == 0o700
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(closed / "venv")], check=True)
        python = str(closed / "venv" / "bin" / "python")
        ex = CommandExecutor(SMALL, hide=[str(tmp_path)])
        ex.python = python  # the zygote itself runs from the closed folder, as CI's does
        try:
            ex.ensure_started()
            assert ex.isolation.get("uid") is not None
            result = ex.run(None, CommandJob(argv=(python, "-c", "import sys; print(sys.prefix)")))
            assert result.exit_code == 0, result
            assert result.stdout.strip() == str(closed / "venv")
        finally:
            ex.close()
    finally:
        shutil.rmtree(closed, ignore_errors=True)


@needs_root
def test_a_hidden_tmp_is_still_a_private_writable_tmp(tmp_path):
    # A run whose rootdir is /tmp (a remote host's xdist worker started there) hides /tmp
    # itself: the job must still get a fresh /tmp it can write (javac's warm server keeps
    # its work folder there; it failed to start, and every compilation started a JVM of
    # its own), and what was in the real /tmp stays hidden.
    secret = tmp_path / "secret.txt"  # under the real /tmp (pytest's basetemp)
    secret.write_text("tmp secret")
    ex = CommandExecutor(SMALL, hide=["/tmp"])
    try:
        ex.ensure_started()
        assert ex.isolation.get("filesystem")
        result = ex.run(None, CommandJob(argv=("sh", "-c", f"mkdir /tmp/work && echo x > /tmp/work/f && cat /tmp/work/f;"
                                                           f" cat {secret} 2>/dev/null || echo hidden")))
        assert result.stdout == "x\nhidden\n", result
        # emptied after the job, as every private /tmp is (but for the sandbox's own job folders)
        again = ex.run(None, CommandJob(argv=("sh", "-c", "ls -A /tmp")))
        assert again.exit_code == 0 and "work" not in again.stdout.split(), again
    finally:
        ex.close()
