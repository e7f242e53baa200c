"""The ``lean`` executor: Lean 4 files checked by ``lean --json`` inside a built
Lean project (e.g. ``leanprover/lean4:v4.18.0`` with Mathlib, Plausible and
Batteries), in the same sandbox as every other sample (a Lean file can run
arbitrary IO through ``#eval``).

Finding Lean: the Lean project a file is checked in comes with the job
(``LeanJob.project``: the family that writes the file names the project it
needs, from its own option); ``lake`` from ``PATH`` or elan's
``~/.elan/bin``.  :meth:`LeanExecutor.prepare` asks the project once per run
(``lake env printenv LEAN_PATH``, ``lake env which lean``: the user's own
project, trusted) for the search path and the toolchain's ``lean``; each job
then runs ``lean --json FILE`` through the ``command`` executor with the
project and the toolchain visible read-only.

Limits independent of machine load: elaboration is bounded per check command by
``set_option maxHeartbeats`` (Lean's deterministic work counter, written into
the file by the family's assembly); the process as a whole by CPU seconds (not
wall time) scaled by the number of commands in the file, and memory.

Results are cached by content: the key is the file's bytes, the toolchain and
the project's manifest, so a file already checked is never re-run.

Never executed on this project's machines (Lean is not installable there); the
tests cover discovery, the install hint and job construction only
(``tests/test_executor_conformance.py`` holds the probes a real Lean would run).
"""
from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from ..errors import InfrastructureError
from .protocol import CommandJob, CommandResult, Environment, Prepared

INSTALL_HINT = "Lean 4 not found: install elan (https://github.com/leanprover/elan)"

VERSION = "1"


@dataclass(frozen=True)
class LeanJob:
    """One Lean file to check in the built Lean project ``project`` (a folder
    with a lakefile); ``commands`` (how many check commands it holds) scales
    the CPU limit."""

    text: str
    project: str = ""
    commands: int = 1
    cpu_seconds_per_command: float = 20.0
    base_cpu_seconds: float = 120.0  # importing Mathlib
    memory_mb: int = 16384  # address space: Lean maps Mathlib's .olean files (several GB)

    @property
    def digest(self) -> str:
        return hashlib.sha256(self.text.encode("utf-8")).hexdigest()


def find_lake() -> str | None:
    found = shutil.which("lake")
    if found:
        return found
    elan = Path.home() / ".elan" / "bin" / "lake"
    return str(elan) if elan.is_file() and os.access(elan, os.X_OK) else None


def project_problem(project: Path | None, packages: Sequence[str] = ()) -> str | None:
    """None when ``project`` is a Lean project with ``packages`` built in it (e.g.
    ``("mathlib",)``); else what is wrong, in words that name no option (the
    family that asked for the project adds its own)."""
    if project is None:
        return "no Lean project given"
    if not any((project / f).is_file() for f in ("lakefile.lean", "lakefile.toml")):
        return f"{project}: no lakefile.lean or lakefile.toml there"
    for package in packages:
        if not (project / ".lake" / "packages" / package).is_dir():
            return f"{project}: {package} is not built there (run 'lake exe cache get && lake build' in it)"
    return None


def project_environment(project: str | Path) -> Environment:
    """The ``lean-project`` environment of a project folder; its key changes with
    the folder, its toolchain and its manifest (the package versions)."""
    path = Path(project).expanduser().resolve()
    key_parts = [str(path)]
    for name in ("lean-toolchain", "lake-manifest.json"):
        file = path / name
        key_parts.append(file.read_text(encoding="utf-8") if file.is_file() else "")
    key = hashlib.sha256("\0".join(key_parts).encode()).hexdigest()[:16]
    return Environment(kind="lean-project", key=key, spec={"project": str(path)})


class LeanExecutor:
    kind = "lean"
    version = VERSION

    def __init__(self, settings: Any, hide: Sequence[str]) -> None:
        self.settings = settings
        self.hide = tuple(hide)
        self._command = None
        self._prepared: dict[str, Prepared] = {}  # project folder -> its prepared environment

    # ------------------------------------------------------------ discovery
    def available(self) -> str | None:
        return INSTALL_HINT if find_lake() is None else None

    def prepare(self, env: Environment) -> Prepared:
        if env.kind != "lean-project" or not env.spec.get("project"):
            raise InfrastructureError(f"the lean executor prepares 'lean-project' environments with a project "
                                      f"folder, not {env.kind!r}")
        project = Path(env.spec["project"])
        lake = find_lake()
        if lake is None:
            raise InfrastructureError(INSTALL_HINT)

        def ask(*argv: str) -> str:
            try:
                done = subprocess.run([lake, "env", *argv], cwd=project, capture_output=True, text=True,
                                      timeout=600, check=False)
            except (OSError, subprocess.TimeoutExpired) as exc:
                raise InfrastructureError(f"lake env {' '.join(argv)} in {project}: {exc}") from None
            if done.returncode != 0:
                last = (done.stderr.strip().splitlines() or ["(no output)"])[-1]
                raise InfrastructureError(f"lake env {' '.join(argv)} in {project} failed: {last}")
            return done.stdout.strip()

        lean_path = ask("printenv", "LEAN_PATH")
        lean = ask("which", "lean")
        toolchain = Path(lean).resolve().parent.parent
        readonly = (project, toolchain)
        return Prepared(env=env, readonly=readonly, executables={"lean": lean},
                        info={"project": str(project), "toolchain": str(toolchain), "LEAN_PATH": lean_path,
                              "lean_version": ask("lean", "--version")})

    # ------------------------------------------------------------ running
    def command_job(self, prepared: Prepared, job: LeanJob) -> CommandJob:
        cpu = job.base_cpu_seconds + job.cpu_seconds_per_command * max(1, job.commands)
        return CommandJob(
            argv=(prepared.executables["lean"], "--json", "check.lean"),
            files={"check.lean": job.text.encode("utf-8")},
            readonly=tuple(prepared.readonly),
            env={"LEAN_PATH": str(prepared.info.get("LEAN_PATH", "")), "LAKE_NO_CACHE": "1"},
            cpu_seconds=cpu, wall_seconds=cpu * 4, memory_mb=job.memory_mb, processes=64,
            output_bytes=8 << 20)

    def _cache_path(self, prepared: Prepared, job: LeanJob) -> Path:
        root = Path(getattr(self.settings, "state_dir", None) or Path.home() / ".cache" / "specbench")
        key = hashlib.sha256(f"{VERSION}\0{prepared.env.key}\0{job.digest}\0{job.commands}".encode()).hexdigest()
        folder = root / "lean-cache" / key[:2]
        folder.mkdir(parents=True, exist_ok=True)
        return folder / f"{key}.json"

    def run(self, prepared: Prepared | None, job: LeanJob) -> CommandResult:
        if prepared is None:
            # The project comes with the job: prepared once per project and run.
            problem = self.available() or project_problem(Path(job.project) if job.project else None)
            if problem:
                raise InfrastructureError(problem)
            prepared = self._prepared.get(job.project)
            if prepared is None:
                prepared = self._prepared[job.project] = self.prepare(project_environment(job.project))
        path = self._cache_path(prepared, job)
        with open(path.with_suffix(".lock"), "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # one worker checks a file; the others read its result
            if path.is_file():
                try:
                    return CommandResult(**json.loads(path.read_text(encoding="utf-8")))
                except (ValueError, TypeError):
                    pass  # a damaged cache entry (disk full, older format): check the file again
            # The command executor keeps the project and toolchain visible (read-only) for this job.
            result = self._command_executor().run(prepared, self.command_job(prepared, job))
            if result.timed_out or result.killed or result.signal is not None:
                return result  # the machine's load may have caused it: not remembered, checked again (#48)
            record = {k: getattr(result, k) for k in ("exit_code", "signal", "timed_out", "killed", "stdout",
                                                       "stderr", "output_truncated", "cpu", "wall")}
            tmp = path.with_suffix(f".{os.getpid()}.tmp")
            tmp.write_text(json.dumps(record), encoding="utf-8")
            os.replace(tmp, path)  # atomic: an interrupted run leaves no half-written verdict
            return result

    def _command_executor(self) -> Any:
        if self._command is None:
            from . import make_executor
            self._command = make_executor("command", self.settings, self.hide)
        return self._command

    def close(self) -> None:
        if self._command is not None:
            self._command.close()


def make(settings: Any, hide: Sequence[str]) -> LeanExecutor:
    return LeanExecutor(settings, hide)
