"""Benchmark adapters, one folder per family, all behind :class:`.base.Benchmark`.

A family folder ``pytest_specbench/benchmarks/<family>/`` declares its adapters
in its ``__init__.py`` as ``ADAPTERS = {"name": "module:attribute"}``; they are
found here by listing the folders and imported only when asked for.  Other
packages add theirs under the ``specbench.benchmarks`` entry-point group.  No
file outside a family's folder names it.

A folder also declares the data folders its adapters read (``DATA``, see
:func:`data_folders`) and names its declared options (the union over its adapters) as
``OPTIONS = "module:attribute"``, a module that imports nothing but
:mod:`.base`: every pytest start (``pytest --help``, a run of another family,
a run without ``--specbench``) lists every family's options from those alone,
and imports an adapter, with its machinery (the JML translator, z3, the Lean
runner...), only for a run that selects it.  Adapters of a folder without
``OPTIONS`` and entry-point adapters are imported for their ``options``.
"""
from __future__ import annotations

import importlib
import importlib.util
import os
import pkgutil
import sys
import warnings
from functools import lru_cache
from importlib.metadata import entry_points
from typing import Any

from ..errors import OptionError
from .base import Benchmark, Option

# Transitional: adapters not yet in a family folder (``name -> "module:attribute"``).
BUILTIN: dict[str, str] = {}

# Families (folders or entry points) that failed to import, with the one-line
# reason: a broken family must not hide the others, nor vanish silently.
LOAD_FAILURES: dict[str, str] = {}


class FamilyLoadWarning(UserWarning):
    """A benchmark family could not be imported; it is left out of the run."""


def _record_failure(where: str, exc: BaseException) -> None:
    reason = f"{type(exc).__name__}: {exc}".splitlines()[0] if str(exc) else type(exc).__name__
    if where not in LOAD_FAILURES:
        LOAD_FAILURES[where] = reason
        warnings.warn(f"specbench: family {where} failed to load and is left out ({reason})",
                      FamilyLoadWarning, stacklevel=3)


@lru_cache(maxsize=1)
def family_packages() -> tuple[str, ...]:
    """The family folders (subpackages) of this package."""
    return tuple(f"{__name__}.{m.name}" for m in pkgutil.iter_modules(__path__) if m.ispkg)


def _registry() -> dict[str, str]:
    found = dict(BUILTIN)
    for package in family_packages():
        try:
            adapters = getattr(importlib.import_module(package), "ADAPTERS", {})
        except Exception as exc:  # noqa: BLE001 - one broken family must not hide the others (nor break --help)
            _record_failure(package.rpartition(".")[2], exc)
            continue
        for name, target in adapters.items():
            found.setdefault(name, target)
    for name, value in _entry_point_adapters():
        found.setdefault(name, value)
    return found


# The entry-point adapters, by what importlib.metadata's discovery reads: sys.path and each
# folder's mtime (a distribution installed or removed there changes it).
_ENTRY_POINTS: dict[tuple, tuple[tuple[str, str], ...]] = {}


def _entry_point_adapters() -> tuple[tuple[str, str], ...]:
    """``(name, "module:attribute")`` of the ``specbench.benchmarks`` entry points.  Read once
    while the interpreter's path is unchanged: ``entry_points`` opens every distribution's
    ``entry_points.txt`` at each call (~4-5 ms with this project's ~60 distributions), and a
    run asked four times (option parsing, settings, each selected benchmark; each xdist
    worker as often), the tests' in-process runs each again (#45, session 21)."""
    state = []
    for folder in sys.path:
        try:
            state.append((folder, os.stat(folder or ".").st_mtime_ns))
        except OSError:
            state.append((folder, None))
    key = tuple(state)
    found = _ENTRY_POINTS.get(key)
    if found is None:
        found = tuple((ep.name, ep.value) for ep in entry_points(group="specbench.benchmarks"))
        _ENTRY_POINTS.clear()  # the last path state only (a path restored by a test is read again)
        _ENTRY_POINTS[key] = found
    return found


def known_benchmarks() -> list[str]:
    return sorted(_registry())


def get_benchmark(name: str) -> Benchmark:
    target = _registry().get(name)
    if target is None:
        broken = "".join(f"; family {where} failed to load ({why})" for where, why in LOAD_FAILURES.items())
        raise OptionError("--specbench", f"unknown benchmark {name!r}; known: {', '.join(known_benchmarks())}{broken}")
    module, _, attr = target.partition(":")
    try:
        return getattr(importlib.import_module(module), attr)
    except Exception as exc:  # noqa: BLE001 - one line naming the family, not an import traceback
        _record_failure(name, exc)
        raise OptionError("--specbench", f"benchmark {name!r} failed to load: {LOAD_FAILURES[name]}") from None


def data_folders(name: str) -> tuple[str, ...]:
    """The data folders (``specbench data download``'s names) benchmark ``name`` reads
    from a data root: its family folder's ``DATA = {"name": ("folder", ...)}``, or an
    entry-point adapter's ``data_folders`` attribute; () for a family that reads none
    (its own data, its bundled suite).  Raises KeyError for an unknown benchmark."""
    for package in family_packages():
        try:
            declared = getattr(importlib.import_module(package), "DATA", {})
        except Exception:  # noqa: BLE001 - a broken family is reported where it is loaded
            continue
        if name in declared:
            return tuple(declared[name])
    if name not in _registry():
        raise KeyError(name)
    return tuple(getattr(get_benchmark(name), "data_folders", ()) or ())


def _resolve(target: str) -> Any:
    module, _, attr = target.partition(":")
    return getattr(importlib.import_module(module), attr)


def declared_options() -> list[Option]:
    """Every registered adapter's declared options (for ``pytest_addoption``: the
    flags, their help and ini keys), in registry order, possibly repeated (two
    adapters of a family may share one).  A family folder's ``OPTIONS`` module
    stands for all its adapters, which stay unimported; a family or adapter that
    fails to import is one :class:`FamilyLoadWarning` and left out."""
    found: list[Option] = []
    covered: set[str] = set()  # adapters whose options came from their folder's OPTIONS module
    for package in family_packages():
        try:
            family = importlib.import_module(package)
            target = getattr(family, "OPTIONS", None)
            if target is None:
                continue
            found += list(_resolve(target))
        except Exception as exc:  # noqa: BLE001 - one broken family must not hide the others (nor break --help)
            _record_failure(package.rpartition(".")[2], exc)
            continue
        covered.update(getattr(family, "ADAPTERS", {}))
    for name in known_benchmarks():
        if name in covered:
            continue
        try:
            found += list(getattr(get_benchmark(name), "options", ()) or ())
        except Exception as exc:  # noqa: BLE001 - a broken third-party adapter must not break pytest --help
            _record_failure(name, exc)
    return found


def all_benchmarks() -> list[Benchmark]:
    """Every registered adapter, imported (each with its machinery: prefer
    :func:`declared_options` for what every start needs); one that fails to
    import is skipped."""
    adapters = []
    for name in known_benchmarks():
        try:
            adapters.append(get_benchmark(name))
        except Exception as exc:  # noqa: BLE001 - a broken third-party adapter must not break pytest --help
            _record_failure(name, exc)
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
