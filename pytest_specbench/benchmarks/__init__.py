"""Benchmark adapters, one module each, all behind :class:`.base.Benchmark`.

Built-in adapters are listed in :data:`BUILTIN` as ``name -> "module:attribute"``
and imported only when asked for; other packages add theirs under the
``specbench.benchmarks`` entry-point group.
"""
from __future__ import annotations

import importlib
from importlib.metadata import entry_points

from ..errors import OptionError
from .base import Benchmark

BUILTIN = {
    "contract": "pytest_specbench.benchmarks.contract:ADAPTER",
    "contract-cvt": "pytest_specbench.benchmarks.contract_cvt:ADAPTER",
    "evalplus": "pytest_specbench.benchmarks.evalplus:ADAPTER",
    "postcond": "pytest_specbench.benchmarks.postcond.adapter:ADAPTER",
}


def _registry() -> dict[str, str]:
    found = dict(BUILTIN)
    for ep in entry_points(group="specbench.benchmarks"):
        found.setdefault(ep.name, ep.value)
    return found


def known_benchmarks() -> list[str]:
    return sorted(_registry())


def get_benchmark(name: str) -> Benchmark:
    target = _registry().get(name)
    if target is None:
        raise OptionError("--specbench", f"unknown benchmark {name!r}; known: {', '.join(known_benchmarks())}")
    module, _, attr = target.partition(":")
    return getattr(importlib.import_module(module), attr)


def all_benchmarks() -> list[Benchmark]:
    """Every registered adapter (for options); one that fails to import is skipped."""
    adapters = []
    for name in known_benchmarks():
        try:
            adapters.append(get_benchmark(name))
        except Exception:  # noqa: BLE001 - a broken third-party adapter must not break pytest --help
            continue
    return adapters
