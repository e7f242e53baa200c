"""The family registry: a family that fails to import is named, never silently dropped."""
import sys
import warnings

import pytest

from pytest_specbench import benchmarks
from pytest_specbench.errors import OptionError


@pytest.fixture
def broken_family(tmp_path, monkeypatch):
    package = tmp_path / "specbench_broken_family"
    package.mkdir()
    (package / "__init__.py").write_text("raise ImportError('needs frobnicate>=2')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    real = benchmarks.family_packages()
    monkeypatch.setattr(benchmarks, "family_packages", lambda: real + ("specbench_broken_family",))
    monkeypatch.setattr(benchmarks, "LOAD_FAILURES", {})
    yield "specbench_broken_family"
    sys.modules.pop("specbench_broken_family", None)


def test_a_family_that_fails_to_import_is_one_warning_naming_it(broken_family):
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        names = benchmarks.known_benchmarks()
    assert "contract" in names  # the others are still there
    messages = [str(w.message) for w in seen if issubclass(w.category, benchmarks.FamilyLoadWarning)]
    assert messages == ["specbench: family specbench_broken_family failed to load and is left out "
                        "(ImportError: needs frobnicate>=2)"]


def test_asking_for_an_unknown_benchmark_mentions_the_family_that_failed(broken_family):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(OptionError) as raised:
            benchmarks.get_benchmark("frobnicate")
    assert "unknown benchmark 'frobnicate'" in str(raised.value)
    assert "family specbench_broken_family failed to load (ImportError: needs frobnicate>=2)" in str(raised.value)


def test_an_adapter_whose_module_fails_to_import_is_a_one_line_option_error(monkeypatch):
    monkeypatch.setattr(benchmarks, "LOAD_FAILURES", {})
    monkeypatch.setattr(benchmarks, "_registry", lambda: {"ghost": "specbench_no_such_module_xyz:ADAPTER"})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(OptionError) as raised:
            benchmarks.get_benchmark("ghost")
    assert str(raised.value).count("\n") == 0
    assert "benchmark 'ghost' failed to load: ModuleNotFoundError" in str(raised.value)
