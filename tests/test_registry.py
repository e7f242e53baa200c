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


# ------------------------------------------------------------------ lazy start-up
def test_each_family_folder_s_options_module_declares_exactly_its_adapters_options():
    """The options every pytest start lists come from the folder's OPTIONS module, not
    the adapters: both must be the very same declarations, or a flag would be listed
    (or validated) differently from what its adapter reads."""
    import importlib

    folders = 0
    for package in benchmarks.family_packages():
        family = importlib.import_module(package)
        target = getattr(family, "OPTIONS", None)
        if target is None:
            continue
        folders += 1
        declared = list(benchmarks._resolve(target))
        from_adapters = {}
        for name in family.ADAPTERS:
            for opt in benchmarks.get_benchmark(name).options:
                from_adapters.setdefault(opt.name, opt)
        assert [o.name for o in declared] == list(dict.fromkeys(o.name for o in declared)), package
        assert {o.name: o for o in declared} == from_adapters, package
        assert all(from_adapters[o.name] is o for o in declared), f"{package}: declared twice, not shared"
    assert folders == 6  # contract, postcond, speceval, verina, cife, nl2postcond


def test_an_options_module_that_fails_to_import_is_one_warning_naming_the_family(tmp_path, monkeypatch):
    package = tmp_path / "specbench_badopts_family"
    package.mkdir()
    (package / "__init__.py").write_text('ADAPTERS = {}\nOPTIONS = "specbench_badopts_family.options:OPTIONS"\n')
    (package / "options.py").write_text("raise ImportError('needs frobnicate>=3')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    real = benchmarks.family_packages()
    monkeypatch.setattr(benchmarks, "family_packages", lambda: real + ("specbench_badopts_family",))
    monkeypatch.setattr(benchmarks, "LOAD_FAILURES", {})
    try:
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            names = {o.name for o in benchmarks.declared_options()}
    finally:
        for name in ("specbench_badopts_family", "specbench_badopts_family.options"):
            sys.modules.pop(name, None)
    assert "contract_condition" in names and "postcond_setting" in names  # the others are still there
    messages = [str(w.message) for w in seen if issubclass(w.category, benchmarks.FamilyLoadWarning)]
    assert messages == ["specbench: family specbench_badopts_family failed to load and is left out "
                        "(ImportError: needs frobnicate>=3)"]


# What a pytest start must not import unless the run selects it: the families'
# adapters and machinery, and the heavy libraries behind them.
FAMILY_MACHINERY = ("pytest_specbench.benchmarks.contract.contract", "pytest_specbench.benchmarks.contract.evalplus",
                    "pytest_specbench.benchmarks.contract.contract_cvt", "pytest_specbench.benchmarks.postcond.adapter",
                    "pytest_specbench.benchmarks.speceval.adapter", "pytest_specbench.benchmarks.verina.adapter",
                    "pytest_specbench.benchmarks.cife.adapter", "pytest_specbench.benchmarks.cife.rules",
                    "pytest_specbench.jml", "pytest_specbench.execution.jvm", "pytest_specbench.execution.lean")
HEAVY = ("z3", "icontract", "openai", "httpx", "tree_sitter", "matplotlib", "numpy", "hypothesis", "coverage")

_STARTS = r'''
import json, sys
import pytest
seen = {}
for label, args in json.loads(sys.argv[1]):
    pytest.main(["-q", "-p", "no:cacheprovider", "-p", "no:hypothesispytest", *args])
    seen[label] = sorted(sys.modules)
print("MODULES=" + json.dumps(seen))
'''


def test_pytest_start_imports_only_what_the_run_selects(tmp_path):
    """``pytest --help``, a run without --specbench and a ContractEval run import no
    other family's adapter, no JML service, no z3/icontract/openai/...: every pytest
    process (each xdist worker, each run of another plugin's tests) would pay for them.
    One subprocess runs the three starts in turn (cumulative: each start's modules
    include the earlier ones'); hypothesis' own pytest plugin is disabled there, as it
    imports hypothesis at the end of every run whatever the plugins."""
    import json
    import subprocess

    starts = [("help", ["--help"]), ("plain", [str(tmp_path)]),
              ("contract", ["--specbench=contract", "--model=reference", "-k", "no_such_item",
                            f"--specbench-dir={tmp_path / 'state'}", str(tmp_path)])]
    done = subprocess.run([sys.executable, "-c", _STARTS, json.dumps(starts)], cwd=tmp_path, capture_output=True,
                          text=True, timeout=300)
    line = next((l for l in done.stdout.splitlines() if l.startswith("MODULES=")), None)
    assert line, done.stdout[-2000:] + done.stderr[-2000:]
    seen = {label: set(mods) for label, mods in json.loads(line[len("MODULES="):]).items()}

    def loaded(label, prefixes):
        return sorted(m for m in seen[label] if any(m == p or m.startswith(p + ".") for p in prefixes))

    assert "pytest_specbench.plugin" in seen["help"]  # the plugin was loaded at all
    assert loaded("help", FAMILY_MACHINERY + HEAVY) == []
    assert loaded("plain", FAMILY_MACHINERY + HEAVY + ("pytest_specbench.plugin.session",)) == []
    assert "pytest_specbench.benchmarks.contract.contract" in seen["contract"]  # the selected family is
    others = tuple(m for m in FAMILY_MACHINERY if not m.startswith("pytest_specbench.benchmarks.contract."))
    assert loaded("contract", others + HEAVY) == []
