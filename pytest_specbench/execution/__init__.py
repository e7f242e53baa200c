"""Sandboxed executors, one per toolchain, behind :mod:`.protocol`.

Kept free of heavy imports: the sandbox zygote imports this package too.

:func:`make_executor` maps a kind to the module that implements it; a module
exposes ``make(settings, hide) -> Executor`` (``hide``: paths the sandbox must
not show, such as the project, the data and the state folder).
"""
from __future__ import annotations

import importlib
from typing import Any, Sequence

from ..errors import InfrastructureError

EXECUTORS = {
    "python": "pytest_specbench.execution.python:make",
    "command": "pytest_specbench.execution.command:make",
    "jvm": "pytest_specbench.execution.jvm:make",
    "lean": "pytest_specbench.execution.lean:make",
}


def make_executor(kind: str, settings: Any, hide: Sequence[str]) -> Any:
    target = EXECUTORS.get(kind)
    if target is None:
        raise InfrastructureError(f"unknown executor kind {kind!r}; known: {', '.join(sorted(EXECUTORS))}")
    module, _, attr = target.partition(":")
    try:
        factory = getattr(importlib.import_module(module), attr)
    except (ImportError, AttributeError) as exc:
        raise InfrastructureError(f"executor {kind!r} is not available in this version: {exc}") from None
    return factory(settings, hide)


def executor_versions(loaded_only: bool = False) -> dict[str, str]:
    """Each executor kind's ``EXECUTOR_VERSION`` (enters the result key: a new
    runner version must not reuse verdicts of the old one).  Read from the
    modules without starting anything; a module that cannot be imported here
    counts as ``"unavailable"``.  ``loaded_only``: only the kinds whose module
    this process imported already (a run that evaluated nothing imports none)."""
    import sys

    versions = {}
    for kind, target in sorted(EXECUTORS.items()):
        if loaded_only and target.partition(":")[0] not in sys.modules:
            continue
        try:
            module = importlib.import_module(target.partition(":")[0])
        except ImportError:
            versions[kind] = "unavailable"
            continue
        versions[kind] = str(getattr(module, "EXECUTOR_VERSION", getattr(module, "VERSION", "unversioned")))
    return versions
