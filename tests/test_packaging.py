"""The package finds its bundled suites the same way installed or editable
(``pytest_specbench.suites`` through importlib.resources), lists every
subpackage for the wheel, and takes its folders from the environment as the
README says (``SPECBENCH_DIR``, ``SPECBENCH_DATA``)."""
from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from pytest_specbench.data import bundled, fetch
from pytest_specbench.errors import DataError

CHECKOUT = Path(__file__).resolve().parent.parent
FAMILIES = ("cife", "contract", "postcond", "speceval", "verina")

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    tomllib = None


def test_every_family_suite_is_found_through_the_package():
    for family in FAMILIES:
        assert bundled.bundled_suite(family) == (CHECKOUT / "benchmarks" / family).resolve()


def test_a_missing_suite_is_one_line():
    with pytest.raises(DataError, match="bundled nosuch suite not found in the installed package"):
        bundled.bundled_suite("nosuch")


def test_no_source_file_finds_data_by_counting_parent_folders():
    offenders = [f"{p.relative_to(CHECKOUT)}:{n}" for p in (CHECKOUT / "pytest_specbench").rglob("*.py")
                 for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
                 if re.search(r"__file__\)?[\w.()]*\.parents\[", line)]
    assert offenders == []


def test_no_family_tool_is_left_in_the_suites():
    scripts = [p.relative_to(CHECKOUT).as_posix() for p in (CHECKOUT / "benchmarks").rglob("*.py")
               if "/lib/" not in p.as_posix() and p.name != "__init__.py"]
    assert scripts == []


@pytest.mark.skipif(tomllib is None, reason="tomllib needs Python 3.11")
def test_pyproject_lists_every_subpackage_and_maps_the_suites():
    config = tomllib.loads((CHECKOUT / "pyproject.toml").read_text())["tool"]["setuptools"]
    found = sorted(".".join(p.parent.relative_to(CHECKOUT).parts) for p in (CHECKOUT / "pytest_specbench").rglob("__init__.py"))
    assert sorted(set(config["packages"]) - {"pytest_specbench.suites"}) == found
    assert config["package-dir"] == {"pytest_specbench.suites": "benchmarks"}


def _settings(pytester, *args):
    from pytest_specbench.plugin.options import Settings

    return Settings.from_config(pytester.parseconfig("--model=reference", *args))


def test_specbench_dir_from_the_environment(pytester, monkeypatch, tmp_path):
    monkeypatch.setenv("SPECBENCH_DIR", str(tmp_path / "state-env"))
    assert _settings(pytester, "--specbench=contract").state_dir == tmp_path / "state-env"
    assert _settings(pytester, "--specbench=contract", f"--specbench-dir={tmp_path / 'opt'}").state_dir == tmp_path / "opt"
    monkeypatch.delenv("SPECBENCH_DIR")
    assert _settings(pytester, "--specbench=contract").state_dir == pytester.path / ".specbench"


def test_the_data_root_defaults_to_the_download_cache_only_when_it_holds_the_data(pytester, monkeypatch, tmp_path):
    root = tmp_path / "cache"
    monkeypatch.setenv("SPECBENCH_DATA", str(root))
    assert _settings(pytester, "--specbench=contract").data_root is None  # empty cache: the bundled suites
    for folder in ("contracteval", "evalplus"):  # as `specbench data download contract` leaves them
        (root / folder).mkdir(parents=True)
        (root / folder / fetch.MARKER).write_text(fetch._digest(folder))
    s = _settings(pytester, "--specbench=contract")
    assert s.data_root == root and s.data_origin == "SPECBENCH_DATA"
    assert _settings(pytester, "--specbench=contract", "--specbench-data=bundled").data_root is None
    s = _settings(pytester, "--specbench=contract,cife")  # cife/ was not downloaded: cife alone falls back
    assert s.data_root == root and list(s.data_bundled) == ["cife"] and "no verified cife/" in s.data_bundled["cife"]
    (root / "evalplus" / fetch.MARKER).write_text("a registry of another version")
    assert _settings(pytester, "--specbench=contract").data_root is None
