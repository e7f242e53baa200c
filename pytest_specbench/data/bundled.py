"""Where a family's bundled sample suite is.

The suites live in the repository's top-level ``benchmarks/`` folder and are
installed as the package ``pytest_specbench.suites`` (``package-dir`` and
``package-data`` in ``pyproject.toml``): a wheel carries them, and an editable
install maps the package onto the checkout's folder.  Either way they are found
through :mod:`importlib.resources`, so nothing depends on where a source file
sits relative to the checkout.
"""
from __future__ import annotations

from importlib import resources
from pathlib import Path

from ..errors import DataError

PACKAGE = "pytest_specbench.suites"


def suites_root() -> Path:
    """The folder holding every family's bundled suite."""
    try:
        root = resources.files(PACKAGE)
    except ModuleNotFoundError:
        raise DataError(PACKAGE, None, "bundled suites not installed (a build without package data?); "
                                       "reinstall pytest-specbench or pass --specbench-data=DIR") from None
    # Installed from a wheel or editable, the suites are plain files; a zipped
    # install would give a Traversable that is not a folder on disk.
    path = Path(str(root))
    if not path.is_dir():
        raise DataError(path, None, "bundled suites are not a folder on disk (zipped install?); "
                                    "pass --specbench-data=DIR")
    return path


def bundled_suite(family: str) -> Path:
    """``benchmarks/<family>/`` of the installed package (one-line ``DataError`` when absent)."""
    here = suites_root() / family
    if not here.is_dir():
        raise DataError(here, None, f"bundled {family} suite not found in the installed package; "
                                    "pass --specbench-data=DIR")
    return here
