"""The executor interface: one sandboxed runner per toolchain.

Shaped like pytest-xdist's ``scheduler/protocol.py``: this one Protocol file,
one file per implementation (``python.py``: calls of a Python function;
``command.py``: a command line, e.g. a venv's pytest; ``jvm.py``: javac/java;
``lean.py``: lake/lean).  Every implementation runs what it is given in the same
sandbox (:mod:`.sandbox`: namespaces, a uid of its own, rlimits, output caps, an
empty environment, the project, data, caches and home hidden) and follows one
rule: whatever the job's code causes is reported in the result (the adapter
turns it into F with a reason); only faults of the harness or the machine raise
:class:`~pytest_specbench.errors.InfrastructureError` (E).

Checks reach executors through ``ctx.executor(kind)``.  ``available()`` is what
an adapter's ``skip_reason`` returns when the toolchain is missing.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Protocol


@dataclass(frozen=True)
class Environment:
    """What a job runs in, built once and reused across jobs, runs and xdist
    workers (under a file lock, in the state folder): a venv, a classpath, a
    Lean project.  ``key`` must change whenever what is built would (a hash of
    its inputs); ``spec`` is executor-specific, e.g. for ``command``:
    ``{"venv": {"python": "/usr/bin/python3", "requirements": ["icontract", "pytest"],
    "project": "/path/to/checkout"}}``.
    """

    kind: str  # "venv" | "classpath" | "lean-project" | "interpreter" | ...
    key: str
    spec: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Prepared:
    """A built :class:`Environment`: the paths a job may see (read-only) and what
    the job's command line may use (``executables``: name -> absolute path, e.g.
    ``{"python": ".../venv/bin/python"}``)."""

    env: Environment
    readonly: tuple[Path, ...] = ()
    executables: Mapping[str, str] = field(default_factory=dict)
    info: Mapping[str, Any] = field(default_factory=dict)  # for the report's manifest


@dataclass(frozen=True)
class WarmStart:
    """How a command job may start from a warm image instead of a fresh interpreter
    (:mod:`.warm`; issue #45): the same code, already imported.

    A job of the executor's own interpreter running a script is two processes joined by
    a socket: ``main`` (``"module:function"``, called as ``f(argv, helper_fd, helper_pid)``;
    it alone gets the result channel, fd 3) and ``helper`` (``f(argv, fd)``), made from a
    lighter image that has only ``base`` imported.  ``base`` and ``top`` name modules of
    the job's own files (``NAME.py``), imported from those bytes; ``base_preload``/``top_preload``
    installed modules, ``top_optional`` installed modules the interpreter may lack.

    ``main=None`` (and no ``helper``): a job ``PYTHON [-s] [-E] -m MODULE ARGS`` of any
    interpreter at an absolute path (a repository's venv too) is one process, cloned from
    an image of that interpreter with ``top_preload``/``top_optional`` imported, and set up
    as the interpreter would start it (its path with ``$PYTHONPATH``,
    ``$PYTHONDONTWRITEBYTECODE``, a fresh ``__main__``; a job the image cannot stand for --
    a namesake of an imported module in its folder or on its ``$PYTHONPATH``, another
    ``PYTHON*`` variable -- execs its argv instead, in that process).

    The job's argv, files, limits and uid are the job's as for an exec; a sandbox that cannot
    warm-start it (no uid of its own, another interpreter for a script) runs ``argv`` as usual."""

    main: str | None
    helper: str | None = None
    base: tuple[str, ...] = ()
    base_preload: tuple[str, ...] = ()
    top: tuple[str, ...] = ()
    top_preload: tuple[str, ...] = ()
    top_optional: tuple[str, ...] = ()


@dataclass(frozen=True)
class CommandJob:
    """One sandboxed process.  ``files`` are written into the job's fresh, private
    working directory (relative path -> content) before it starts; ``collect``
    names files read back from it afterwards (capped at ``output_bytes`` each).
    Limits left ``None`` take the executor's defaults (which differ per
    toolchain: a JVM needs more address space than a Python call)."""

    argv: tuple[str, ...]
    files: Mapping[str, bytes] = field(default_factory=dict)
    readonly: tuple[Path, ...] = ()  # extra paths made visible read-only
    env: Mapping[str, str] = field(default_factory=dict)
    collect: tuple[str, ...] = ()
    cpu_seconds: float | None = None
    wall_seconds: float | None = None
    memory_mb: int | None = None
    processes: int | None = None
    output_bytes: int | None = None
    # absolute path -> a file of ``files``: bound read-only over that path for the
    # job's lifetime (where the sandbox hides paths; else ignored), e.g. a
    # checkout's file shown as the job's own version of it.
    overlay: Mapping[str, str] = field(default_factory=dict)
    warm: WarmStart | None = None  # may start from a warm image (:class:`WarmStart`)


@dataclass
class CommandResult:
    """What a command job did.  ``records`` are the JSON values written, one per
    line, to the result channel (fd 3 in the job) by the harness's own runner
    inside the sandbox; the job's code can write there too, so a family reads
    only records it could not be fooled by (see its docs)."""

    exit_code: int | None
    signal: int | None = None
    timed_out: bool = False  # the CPU or wall limit ended it
    killed: str | None = None  # which limit or rule ended it, in words
    stdout: str = ""
    stderr: str = ""
    output_truncated: bool = False
    files: dict[str, bytes] = field(default_factory=dict)
    records: list[Any] = field(default_factory=list)
    cpu: float = 0.0
    wall: float = 0.0


class Executor(Protocol):
    kind: str  # "python" | "command" | "jvm" | "lean"
    version: str  # enters the result key: bump when the same job could get another result

    def available(self) -> str | None:
        """None when usable; otherwise one line saying what is missing and how
        to install it (e.g. "javac not found: apt-get install openjdk-17-jdk-headless")."""

    def prepare(self, env: Environment) -> Prepared:
        """Build ``env`` once (locked; reused when its key is already built).  A
        build failure raises InfrastructureError with the tool's last line."""

    def run(self, prepared: Prepared | None, job: Any) -> Any:
        """Run one job in the sandbox: ``CommandJob`` -> ``CommandResult`` for the
        command-line executors (``JavaJob`` for ``jvm``, ``LeanJob`` for ``lean``),
        ``CallsJob`` -> ``JobResult`` for ``python``.  A job carries everything
        that shapes its run (limits, digests, the Lean project): an executor
        reads no benchmark's options."""

    def close(self) -> None: ...
