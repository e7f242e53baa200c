"""VERINA on the real upstream data (``../shared/datasets/verina``; skipped when absent).

Nothing here runs Lean: these are the loader's counts, byte-for-byte reassembly
of every ``task.lean`` and the Lean rendering of every test value.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from pytest_specbench.benchmarks.verina.loader import load_tasks, reassemble
from pytest_specbench.benchmarks.verina.values import render

pytestmark = pytest.mark.realdata

ROOT = Path(__file__).resolve().parents[1] / ".." / "shared" / "datasets" / "verina"
# /work/wt/<branch> checkouts sit one level deeper than /work/main.
CANDIDATES = [ROOT, Path(__file__).resolve().parents[3] / "shared" / "datasets" / "verina"]


@pytest.fixture(scope="module")
def tasks():
    for root in CANDIDATES:
        if root.is_dir():
            return load_tasks(root)
    pytest.skip("VERINA data not found at ../shared/datasets/verina")


def test_counts_match_the_issue(tasks):
    assert len(tasks) == 189
    assert sum(len(t.tests) for t in tasks) == 1114
    assert sum(len(x["unexpected"]) for t in tasks for x in t.tests) == 2392
    assert sum(len(t.reject_inputs) for t in tasks) == 123
    assert sum(t.has_proof for t in tasks) == 46
    assert sum(not t.reject_inputs for t in tasks) == 112
    assert [t.task_id for t in tasks if t.fewshot] == ["verina_basic_15", "verina_basic_44"]


def test_every_task_lean_reassembles_byte_for_byte(tasks):
    for t in tasks:
        assert reassemble(t.template).encode("utf-8") == (t.folder / "task.lean").read_bytes(), t.task_id


def test_every_test_value_renders_as_lean(tasks):
    rendered = 0
    for t in tasks:
        types = {p["param_name"]: p["param_type"] for p in t.signature["parameters"]}
        for row in t.tests + t.reject_inputs:
            for name, value in row["input"].items():
                assert render(types[name], value).strip()
                rendered += 1
            for value in ([row["expected"]] + row["unexpected"]) if "expected" in row else []:
                assert render(t.signature["return_type"], value).strip()
                rendered += 1
    assert rendered > 5000
