"""The sample environment: what a sample can import, which interpreter runs it,
and the manifest's record of both."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from types import SimpleNamespace

import pytest

from pytest_specbench.execution.limits import Limits
from pytest_specbench.execution.python import CallsJob, PythonExecutor, make, sample_path

LIMITS = Limits(call_cpu=5.0, startup_cpu=5.0, memory_mb=2048, tmp_mb=16)
PROBE = ("import sys\ndef f():\n    try:\n        import numpy\n        np = numpy.__version__\n"
         "    except ImportError as exc:\n        np = type(exc).__name__\n    return [sys.prefix, np]\n")


def _run(settings, hide):
    ex = make(settings, hide)
    try:
        result = ex.run(None, CallsJob(PROBE, "f", "env", lambda: [((), {})], [0]))
        return ex.isolation, result.outcomes[0].value
    finally:
        ex.close()


def test_samples_import_what_the_harness_has_installed(tmp_path):
    numpy = pytest.importorskip("numpy")
    settings = SimpleNamespace(limits=LIMITS, sandbox="process", state_dir=tmp_path, sample_python="")
    iso, (prefix, np) = _run(settings, [str(tmp_path)])
    assert prefix == sys.prefix and np == numpy.__version__
    assert iso["environment"]["executable"] and len(iso["environment"]["distributions"]) == 16


def test_project_folders_on_sys_path_are_not_importable():
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    path, expose = sample_path([here])
    assert not any(p == here or p.startswith(here + "/tests") for p in path if "site-packages" not in p)
    assert all(os.path.isdir(p) for p in expose)


@pytest.fixture(scope="module")
def bare_venv(tmp_path_factory):
    venv = tmp_path_factory.mktemp("samplevenv") / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    return venv


def test_sample_python_runs_samples_in_another_venv(tmp_path, bare_venv):
    settings = SimpleNamespace(limits=LIMITS, sandbox="process", state_dir=tmp_path,
                               sample_python=str(bare_venv / "bin" / "python"))
    iso, (prefix, np) = _run(settings, [str(tmp_path)])
    assert prefix == str(bare_venv) and np == "ModuleNotFoundError"  # that venv has no numpy
    assert iso["environment"]["prefix"] == str(bare_venv)


def test_sample_python_option_reaches_the_manifest(pytester, bare_venv):
    # In this process (#45): the samples run under the bare venv's Python in the sandbox either way.
    result = pytester.runpytest_inprocess(
        "--specbench=contract", "--model=reference", "-p", "no:cacheprovider", "--specbench-report=r.json",
        f"--specbench-sample-python={bare_venv}", "-k", "HumanEval-S/0")
    result.assert_outcomes(passed=2)
    manifest = json.loads((pytester.path / "r.json").read_text())["manifest"]
    assert manifest["sample_environment"]["prefix"] == str(bare_venv)


def test_bad_sample_python_is_one_line(pytester):
    result = pytester.runpytest_inprocess("--specbench=contract", "--model=reference",
                                          "--specbench-sample-python=/no/such/python")
    assert result.ret != 0
    result.stderr.fnmatch_lines(["*--specbench-sample-python: no Python interpreter at /no/such/python*"])
    assert "Traceback" not in result.stderr.str()


def test_a_zygote_started_again_reuses_the_description_until_a_folder_of_the_path_changes(tmp_path):
    """The description of the samples' path (for the manifest) is made by the first zygote of an
    interpreter and path in this process; a later one is told not to make it again (a forked
    describer reading every distribution's metadata: ~0.1 CPU s a start, paid by every run the
    tests make in their process) and reports the same; an install or removal in a folder of the
    path (its mtime) makes it describe again."""
    from pytest_specbench.execution import python as python_executor

    limits = Limits(call_cpu=1.0, startup_cpu=2.0, memory_mb=512, tmp_mb=16)
    described = []
    for _ in range(2):
        ex = PythonExecutor(limits)
        try:
            described.append((ex._zygote_cfg()["describe"], ex.ensure_started()["environment"]))
        finally:
            ex.close()
    (first_asked, first), (again_asked, again) = described
    assert again_asked is False and again == first and first["distributions"]
    key = python_executor._described_key(sys.executable, [str(tmp_path)])
    assert key == python_executor._described_key(sys.executable, [str(tmp_path)])
    os.utime(tmp_path, ns=(0, 0))  # (what an install into it does to its mtime)
    assert python_executor._described_key(sys.executable, [str(tmp_path)]) != key
    assert python_executor._described_key(sys.executable, None) is None  # another interpreter's own path
