"""One run = one sandboxed pytest process on the task's cover tests, with one
program (the original method or a mutant) instrumented with one postcondition set.

The job sees the repository checkout read-only; the injected file is a private
copy in the job's working directory that the runner plugin substitutes for the
module at import (:mod:`.sandbox_runner`).  That copy carries the harness's
guard where the answer's decorators go; the answer's text travels as data in
the config and is compiled only in a spec child (:mod:`pytest_specbench.pyspec`).  ``-p no:cacheprovider`` and
``PYTHONDONTWRITEBYTECODE`` keep the run from writing into the checkout.
"""
from __future__ import annotations

import hashlib
import json
import secrets
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from ... import pyspec
from ...errors import InfrastructureError
from ...execution.protocol import CommandJob, Environment, WarmStart
from . import source, verdict
from .options import DEFAULT_TIMEOUT  # upstream: 30 s per run

RUNNER = Path(__file__).with_name("sandbox_runner.py")

# How a run starts warm (execution/warm.py, issue #45): ``python -m pytest`` cloned from an image of
# the job's interpreter (the harness's, or the repository's venv) that imported pytest, the plugins
# every pytest run imports (pytest 9's list; a version without one of them skips it) and icontract,
# which the runner plugin imports.  Never the runner plugin (pytest rewrites its asserts at import),
# a plugin of the venv's entry points (likewise), the checkout's modules or the answer's text.
WARM = WarmStart(main=None, top_preload=("pytest",), top_optional=(
    *(f"_pytest.{name}" for name in (
        "mark", "main", "runner", "fixtures", "helpconfig", "python", "terminal", "debugging", "unittest", "capture",
        "skipping", "legacypath", "tmpdir", "monkeypatch", "recwarn", "pastebin", "assertion", "junitxml", "doctest",
        "cacheprovider", "setuponly", "setupplan", "stepwise", "unraisableexception", "threadexception", "warnings",
        "logging", "reports", "faulthandler", "subtests", "python_path", "freeze_support")),
    "icontract", "icontract.errors"))


def requirements_of(env_config: str) -> list[str]:
    """Package names from a task's Poetry ``env_config`` (dependencies and dev
    group, ``python`` left out), plus icontract and pytest."""
    names: list[str] = []
    try:
        cfg = tomllib.loads(env_config or "")
    except tomllib.TOMLDecodeError:
        cfg = {}
    poetry = cfg.get("tool", {}).get("poetry", {})
    groups = [poetry.get("dependencies", {})] + [g.get("dependencies", {}) for g in poetry.get("group", {}).values()]
    for deps in groups:
        names += [n for n in deps if n.lower() != "python"]
    for need in ("icontract", "pytest"):
        if need not in names:
            names.append(need)
    return names


def environment_for(task_data: dict, checkout: Path) -> Environment:
    """Bundled tasks (``repo.env == "harness"``) run with the harness's own
    interpreter (icontract and pytest are its dependencies: no build, no network);
    others get one venv per (repository, commit, env_config)."""
    repo = task_data["repo"]
    if repo.get("env") == "harness":
        return Environment(kind="interpreter", key="postcond-harness", spec={"python": sys.executable})
    key_src = json.dumps([repo.get("github_path"), repo.get("commit"), repo.get("env_config", "")])
    key = "postcond-" + hashlib.sha256(key_src.encode()).hexdigest()[:16]
    return Environment(kind="venv", key=key, spec={"python": sys.executable,
                                                   "requirements": requirements_of(repo.get("env_config", ""))})


@dataclass(frozen=True)
class Program:
    """What one run executes: the file text with the method (original or mutant)."""

    file_text: str
    label: str  # "original" or "mutant 3"


def tests_to_run(task_data: dict) -> list[str]:
    failing = set(task_data["repo"].get("failed_tests") or ())
    return [t for t in task_data["cover_tests"] if t not in failing]


def build_job(task_data: dict, checkout: Path, program: Program, decorators: str, mode: str,
              timeout: float, python: str = "python") -> tuple[CommandJob, source.Injected, str]:
    """The job of one run, its injection, and the nonce its genuine records carry."""
    rel = task_data["file"].removeprefix("./")
    injected = source.inject(program.file_text, task_data["name"], task_data["start_line"], task_data["end_line"],
                             decorators, mode)
    specs = {"0": pyspec.guard_spec(injected.decorators_text(), injected.first_line, injected.text)} \
        if injected.injected and injected.decorator_lines else {}
    job, nonce = runner_job(checkout, rel, injected.keeper_text("0"), specs, tests_to_run(task_data),
                            task_data["repo"].get("env") == "harness", timeout, python)
    return job, injected, nonce


def runner_job(checkout: Path, rel: str, keeper_text: str, specs: dict, tests: Sequence[str], harness_env: bool,
               timeout: float, python: str = "python") -> tuple[CommandJob, str]:
    """A sandboxed pytest run of ``tests`` (checkout-relative ids) with the runner
    plugin, the module ``rel`` imported from ``keeper_text`` (guards, no answer
    text) and the guards' ``specs`` (:func:`pytest_specbench.pyspec.guard_spec`,
    keyed by the guards' ids).  The checkout's copy of the target file is
    overlaid with that text (``overlay``), so the original and a mutant look
    alike from inside the job.  Returns the job and its records' nonce."""
    private = "private/" + Path(rel).name
    nonce = secrets.token_hex(16)
    cfg = {"target": str(checkout / rel), "private": private, "nonce": nonce, "specs": specs}
    # -p no:specbench: the harness's own pytest11 plugin must not load inside the job (the project is hidden there).
    argv = (python, "-m", "pytest", "-p", "specbench_postcond_runner", "-p", "no:cacheprovider", "-p", "no:specbench",
            "--tb=short", "-q", "--rootdir", str(checkout), *(str(checkout / t) for t in tests))
    env = {"SPECBENCH_POSTCOND_CONFIG": "postcond-config.json", "PYTHONDONTWRITEBYTECODE": "1",
           "PYTHONPATH": f".:{checkout}"}
    if harness_env:
        # The harness's interpreter carries the harness's pytest plugins (xdist, hypothesis,
        # anyio, ...), not the project's: none is loaded (hypothesis alone took 1-2 s of CPU
        # per run, three quarters of a bundled task's run).  A repository's own venv keeps
        # pytest's plugin autoloading, as upstream runs it.
        env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    job = CommandJob(
        argv=argv,
        files={"specbench_postcond_runner.py": RUNNER.read_bytes(), "postcond-config.json": json.dumps(cfg).encode(),
               private: keeper_text.encode(), **pyspec.job_files()},
        readonly=(checkout,),
        env=env,
        overlay={str(checkout / rel): private},
        wall_seconds=timeout, cpu_seconds=timeout, memory_mb=4096, output_bytes=1 << 20, warm=WARM)
    return job, nonce


def run_program(executor: Any, prepared: Any, task_data: dict, checkout: Path, program: Program, decorators: str,
                mode: str, timeout: float = DEFAULT_TIMEOUT) -> dict[str, Any]:
    python = (getattr(prepared, "executables", None) or {}).get("python", "python")
    job, injected, nonce = build_job(task_data, checkout, program, decorators, mode, timeout, python)
    result = executor.run(prepared, job)
    records = verdict.genuine(result.records, nonce)
    harness = next((r for r in records if r.get("event") == "harness_error"), None)
    if harness is not None:
        raise InfrastructureError(f"postcond runner: {harness.get('text')}")
    out = verdict.decide(records, bool(result.timed_out), injected.first_line, injected.last_line,
                         (result.stdout or "") + (result.stderr or ""))
    if not injected.injected:
        out["reason"] = (out["reason"] + "; " if out["reason"] else "") + "nothing injected (no matching def line)"
    if out["verdict"] == "local_crash" and result.killed:
        out["reason"] = f"{result.killed}; {out['reason']}"
    return out


def mutant_programs(task_data: dict, file_text: str) -> list[Program]:
    return [Program(source.replace_method(file_text, task_data["start_line"], task_data["end_line"], m), f"mutant {i}")
            for i, m in enumerate(task_data.get("mutants") or ())]
