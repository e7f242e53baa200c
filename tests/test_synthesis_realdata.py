"""Real-data checks (marked ``realdata``; skipped when ../shared/datasets is absent).

The whole synthesis takes minutes: it only runs with SPECBENCH_FULL_SYNTHESIS=1.
"""
from __future__ import annotations

import ast
import json
import os
from pathlib import Path

import pytest

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "datasets"
REBUILT = DATA / "contracteval" / "contracteval_rebuilt.jsonl"

pytestmark = [pytest.mark.realdata,
              pytest.mark.skipif(not REBUILT.is_file(), reason="shared ContractEval data not present")]


def _rows():
    return [json.loads(line) for line in REBUILT.read_text().splitlines() if line.strip()]


def test_upstream_set_metrics_are_computable():
    from pytest_specbench.metrics.cvt import set_metrics

    _, agg = set_metrics(_rows(), "upstream")
    assert agg["tasks"] == 475 and agg["tasks_with_cvt"] == 463


def test_translation_coverage_on_a_sample():
    from pytest_specbench.synthesis.pipeline import function_params
    from pytest_specbench.synthesis.translate import translate_contract

    rows = _rows()[::10]
    total = ok = 0
    for r in rows:
        model = translate_contract(r["contract"], function_params(r["reference_with_contracts"], r["entry_point"]),
                                   list(r["contracts"]))
        total += len(model.asserts)
        ok += sum(a.supported for a in model.asserts)
    assert ok / total >= 0.95


@pytest.mark.slow
@pytest.mark.skipif(os.environ.get("SPECBENCH_FULL_SYNTHESIS") != "1", reason="set SPECBENCH_FULL_SYNTHESIS=1")
def test_full_synthesis(tmp_path):
    from pytest_specbench.cli import main

    out = tmp_path / "contracteval" / "contracteval_rebuilt.jsonl"
    assert main(["contract", "synthesize", "--data-root", str(DATA), "--out", str(out), "--quiet"]) == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(rows) == 475
