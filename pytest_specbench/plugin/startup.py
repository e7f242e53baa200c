"""The sandboxes a process will need, started while it collects (docs/timing.md, session 21).

An adapter may declare the executor kinds its checks use (``executors``, ``types.py``).
An xdist worker then launches those executors' zygotes at its configure, so that a
zygote's start (its namespaces, mounts and preloads: ~0.2 CPU s, in its own process)
runs beside the collection instead of inside the first item, and, for the ``python``
kind, takes :func:`machine_speed`'s calibration after its collection is sent (the
worker then waits for the controller to schedule: the calibration's ~0.1 CPU s fills
that wait instead of the first item).  Families that declare nothing start each executor at its first
use, as before.
"""
from __future__ import annotations

import os
from typing import Any, Iterable

import pytest


def declared_executors(adapters: Iterable[Any], settings: Any) -> tuple[str, ...]:
    """The executor kinds the adapters declare (``executors``: a tuple, or a callable of
    the settings), in the order first named; an adapter without it adds none."""
    kinds: list[str] = []
    for adapter in adapters:
        declared = getattr(adapter, "executors", ())
        if callable(declared):
            declared = declared(settings)
        kinds += [kind for kind in declared or () if kind not in kinds]
    return tuple(kinds)


class EarlyStart:
    """Registered (as ``specbench-early-start``) in a process that will run items, after
    it launched the declared executors' zygotes."""

    def __init__(self, kinds: tuple[str, ...]):
        self.kinds = kinds

    @pytest.hookimpl(trylast=True)  # after xdist's worker sent its collection to the controller
    def pytest_collection_finish(self, session: pytest.Session) -> None:
        if "python" in self.kinds and session.items:
            from ..execution.limits import machine_speed

            machine_speed()  # once per process; the python checks' limits are in its units


def start_early(config: pytest.Config, services: Any, adapters: Iterable[Any], settings: Any) -> tuple[str, ...]:
    """In an xdist worker (not under ``--collect-only``), launch the zygotes of the
    executors the adapters declare; returns the kinds launched.  A worker starts only
    when some item's verdict is not known (``SpecbenchRun._skip_workers_when_all_cached``).
    A ``-n 0`` run is left to start each executor at its first use: it may hold nothing
    to evaluate (every verdict from the result cache), and with no worker beside it its
    start-up has nothing to overlap but its own collection."""
    if config.option.collectonly or not hasattr(config, "workerinput"):
        return ()
    kinds = declared_executors(adapters, settings)
    for kind in kinds:
        try:
            launch = getattr(services.executor(kind), "start_early", None)
        except Exception:  # noqa: BLE001 - the first item that uses it makes it again and says why (E)
            continue
        if callable(launch):
            launch()
    if kinds:
        config.pluginmanager.register(EarlyStart(kinds), "specbench-early-start")
    return kinds


def workers_without_anyio(config: pytest.Config) -> bool:
    """xdist controller of a run of specbench items alone: its local workers start with
    ``-p no:anyio``, given through each worker's environment (xdist's
    ``--tx popen//env:NAME=VALUE``; ``PYTEST_ADDOPTS`` is read before the entry-point
    plugins are imported, which no hook of a plugin precedes).  anyio's pytest plugin
    (installed with openai's httpx) serves async tests; importing it (anyio and its asyncio
    backend) was ~0.1 CPU s of each worker's start (docs/timing.md, sessions 20-21).  Left
    alone: a run that collects the user's tests too (test paths given), workers that are
    not plain local ``popen`` ones, a ``PYTEST_ADDOPTS`` that already names anyio (or holds
    ``//``, which a spec cannot carry), anyio not loaded here.  Returns whether it changed."""
    option = config.option
    specs = list(getattr(option, "tx", None) or ())
    if hasattr(config, "workerinput") or not specs or any(spec != "popen" for spec in specs):
        return False
    if config.args_source == pytest.Config.ArgsSource.ARGS or not config.pluginmanager.has_plugin("anyio"):
        return False
    addopts = os.environ.get("PYTEST_ADDOPTS", "")
    if "//" in addopts or "anyio" in addopts:
        return False
    option.tx = [f"popen//env:PYTEST_ADDOPTS={(addopts + ' -p no:anyio').strip()}"] * len(specs)
    return True
