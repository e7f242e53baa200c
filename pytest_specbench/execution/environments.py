"""Environments jobs run in: an existing interpreter or venv, and venvs built
once under the state folder.  Shared by the ``python`` executor (samples run by
``--specbench-sample-python``) and the ``command`` executor (a repository's
tests in its own venv), so both see an interpreter the same way: a
:class:`~.protocol.Prepared` whose paths the sandbox binds read-only.

What an environment holds is recorded as a hash of its installed
distributions and their versions (:data:`DESCRIBE`), for the report's manifest
and the result key: installing or upgrading a package changes it.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Sequence

from ..errors import InfrastructureError, OptionError
from .protocol import Environment, Prepared

# Run by an interpreter to describe itself (also inside the zygote, on the
# sample's own sys.path).  Stdlib only.  Each distribution's Name and Version
# are read by the email package's HeaderParser, the parser
# ``Distribution.metadata`` uses, stopped at the header block: the whole
# parse read every long description, twice (``d.version`` parses the
# metadata again), ~0.1 CPU s a describe, in the controller's run key and in
# each worker's first zygote (docs/timing.md, session 20).  The same parser on
# the same text gives the same values: neither the hash nor any result key changes.
DESCRIBE = """
import email.parser, hashlib, json, sys
def describe(path=None):
    import importlib.metadata as md
    seen = set()
    for d in md.distributions(**({"path": path} if path is not None else {})):
        headers = email.parser.HeaderParser().parsestr(d.read_text("METADATA") or d.read_text("PKG-INFO")
                                                       or d.read_text("") or "")
        seen.add(((headers["Name"] or "").lower().replace("_", "-"), headers["Version"]))
    seen = sorted(seen)
    return {"executable": sys.executable, "version": sys.version.split()[0], "prefix": sys.prefix,
            "base_prefix": sys.base_prefix,
            "distributions": hashlib.sha256(json.dumps(seen).encode()).hexdigest()[:16],
            "distribution_count": len(seen)}
"""


def describe_here(path: Sequence[str] | None = None) -> dict:
    """:data:`DESCRIBE` in this process (the zygote calls it on the sample path)."""
    scope: dict = {}
    exec(DESCRIBE, scope)  # noqa: S102 - our own constant
    return scope["describe"](list(path) if path is not None else None)


def resolve_python(spec: str, base: Path | None = None) -> str:
    """An interpreter from ``--specbench-sample-python``: an executable, a venv
    folder (its ``bin/python``) or a command name on PATH."""
    path = Path(spec).expanduser()
    if not path.is_absolute() and ("/" in spec or (base and (base / path).exists())):
        path = (base or Path.cwd()) / path
    if path.is_dir():
        path = path / "bin" / "python"
    elif not path.exists() and "/" not in spec:
        found = shutil.which(spec)
        path = Path(found) if found else path
    if not path.exists():
        raise OptionError("--specbench-sample-python", f"no Python interpreter at {spec}")
    return str(path.absolute())  # not resolved: a venv's python is a symlink that must stay one


def probe(python: str) -> dict:
    """Describe ``python`` by running it (trusted: the user named it)."""
    try:
        proc = subprocess.run([python, "-s", "-c", DESCRIBE + "\nprint(json.dumps(describe()))"],
                              capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise InfrastructureError(f"cannot run the interpreter {python}: {exc}") from None
    if proc.returncode != 0:
        lines = proc.stderr.strip().splitlines() or [f"exit status {proc.returncode}"]
        raise InfrastructureError(f"cannot run the interpreter {python}: {lines[-1]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _readonly(info: dict, extra: Sequence[Path] = ()) -> tuple[Path, ...]:
    paths = {Path(os.path.realpath(p)) for p in (info["prefix"], info["base_prefix"])} | set(extra)
    return tuple(sorted(paths))


def prepare_interpreter(env: Environment) -> Prepared:
    """``Environment(kind="interpreter", key=..., spec={"python": PATH})``: an
    existing interpreter or venv, used as it is."""
    python = str(env.spec["python"])
    info = probe(python)
    return Prepared(env, readonly=_readonly(info), executables={"python": python}, info=info)


def _safe_key(key: str) -> str:
    safe = re.sub(r"[^A-Za-z0-9._-]", "_", key)[:80]
    return safe if safe == key else f"{safe}-{hashlib.sha256(key.encode()).hexdigest()[:12]}"


def prepare_venv(state_dir: Path, env: Environment) -> tuple[Prepared, bool]:
    """``Environment(kind="venv", key=..., spec={"python": ..., "requirements":
    [...], "project": PATH})``: built once under ``STATE/envs/venv-KEY`` (a file
    lock makes xdist workers and concurrent runs wait for one build) and reused
    without calling pip.  Returns the environment and whether this call built it.
    A failed build raises InfrastructureError with pip's last line.  The venv has
    no pip of its own when the harness's pip can install into it (``--python``)."""
    from filelock import FileLock

    python = str(env.spec.get("python") or sys.executable)
    requirements = [str(r) for r in env.spec.get("requirements", ())]
    project = env.spec.get("project")
    root = Path(state_dir) / "envs"
    root.mkdir(parents=True, exist_ok=True)
    target = root / f"venv-{_safe_key(env.key)}"
    marker = target / ".specbench-built.json"
    built = False
    with FileLock(str(root / f"venv-{_safe_key(env.key)}.lock")):
        if not marker.exists():
            _build_venv(target, python, requirements, project, marker)
            built = True
    info = json.loads(marker.read_text())
    vpy = str(target / "bin" / "python")
    executables = {"python": vpy}
    if (target / "bin" / "pip").exists():  # built by its own pip (no harness pip with --python)
        executables["pip"] = str(target / "bin" / "pip")
    return Prepared(env, readonly=_readonly(info, [target.resolve()]), executables=executables, info=info), built


def _harness_pip() -> list[str] | None:
    """``python -m pip`` of the interpreter running the harness, when its pip can
    install into another interpreter (``--python``, pip 22.3+); else None."""
    try:
        from importlib.metadata import PackageNotFoundError, version

        parts = version("pip").split(".")
        if (int(parts[0]), int(re.match(r"\d+", parts[1]).group())) < (22, 3):
            return None
    except (PackageNotFoundError, ValueError, AttributeError, IndexError):
        return None
    return [sys.executable, "-m", "pip"]


def _build_venv(target: Path, python: str, requirements: list[str], project, marker: Path) -> None:
    shutil.rmtree(target, ignore_errors=True)  # a half-built one from a killed run

    def step(argv: list[str], what: str) -> str:
        try:
            proc = subprocess.run(argv, capture_output=True, text=True)
        except OSError as exc:
            shutil.rmtree(target, ignore_errors=True)
            raise InfrastructureError(f"building venv {target.name}: {what} failed: {exc}") from None
        if proc.returncode != 0:
            shutil.rmtree(target, ignore_errors=True)
            lines = [ln for ln in (proc.stderr + proc.stdout).splitlines()
                     if ln.strip() and not ln.startswith("WARNING: Location")]
            last = lines[-1].strip() if lines else f"exit status {proc.returncode}"
            raise InfrastructureError(f"building venv {target.name}: {what} failed: {last}")
        return proc.stdout

    vpy = str(target / "bin" / "python")
    packages = requirements + ([str(project)] if project else [])
    pip = _harness_pip()
    if pip is not None:
        # The venv gets no pip of its own (ensurepip unpacks and byte-compiles pip
        # into every venv: ~7 of the ~12 CPU seconds of a build here): the
        # harness's pip installs into it with --python, resolving and installing
        # for the venv's interpreter, into the venv's site-packages only.
        step([python, "-m", "venv", "--without-pip", str(target)], f"{python} -m venv")
        if packages:
            step([*pip, "--python", vpy, "install", "-q", "--disable-pip-version-check", *packages], "pip install")
    else:  # no pip here, or one older than --python (22.3): the venv's own pip
        step([python, "-m", "venv", str(target)], f"{python} -m venv")
        if packages:
            step([vpy, "-m", "pip", "install", "-q", "--disable-pip-version-check", *packages], "pip install")
    info = probe(vpy)
    info.update(requirements=requirements, project=str(project) if project else None, built=time.time())
    tmp = marker.with_suffix(".tmp")
    tmp.write_text(json.dumps(info))
    os.replace(tmp, marker)
