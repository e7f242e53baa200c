"""Benchmark adapters, one folder per family, all behind :class:`.base.Benchmark`.

A family folder ``pytest_specbench/benchmarks/<family>/`` declares its adapters
in its ``__init__.py`` as ``ADAPTERS = {"name": "module:attribute"}``; they are
found here by listing the folders and imported only when asked for.  Other
packages add theirs under the ``specbench.benchmarks`` entry-point group.  No
file outside a family's folder names it.
"""
from __future__ import annotations

import importlib
import importlib.util
import pkgutil
from functools import lru_cache
from importlib.metadata import entry_points

from ..errors import OptionError
from .base import Benchmark

# Transitional: adapters not yet in a family folder (``name -> "module:attribute"``).
BUILTIN: dict[str, str] = {}


@lru_cache(maxsize=1)
def family_packages() -> tuple[str, ...]:
    """The family folders (subpackages) of this package."""
    return tuple(f"{__name__}.{m.name}" for m in pkgutil.iter_modules(__path__) if m.ispkg)


def _registry() -> dict[str, str]:
    found = dict(BUILTIN)
    for package in family_packages():
        try:
            adapters = getattr(importlib.import_module(package), "ADAPTERS", {})
        except Exception:  # noqa: BLE001 - one broken family must not hide the others (nor break --help)
            continue
        for name, target in adapters.items():
            found.setdefault(name, target)
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


def family_cli_modules() -> list[str]:
    """Family folders that ship a ``cli.py`` (``register(subparsers)`` adds ``specbench <family> ...``)."""
    found = []
    for package in family_packages():
        spec = importlib.util.find_spec(f"{package}.cli")
        if spec is not None:
            found.append(f"{package}.cli")
    return found
