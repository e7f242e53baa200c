"""Bounded slices of the real upstream data (skipped when ../shared/datasets is absent).

The full runs (all 475 ContractEval tasks, all samples) are in the closing notes
and `pytest_specbench/perf/`; these keep CI within minutes.
"""
from __future__ import annotations

import json

import pytest

pytestmark = pytest.mark.realdata

# Tasks picked for what they exercise: floats with atol and auxiliary solver keys in
# CVT inputs (HumanEval/2), find_zero (32), tuple inputs and the set-equality oracle
# (Mbpp/2), lists of tuples (Mbpp/63).
SLICE = "HumanEval/2[ or HumanEval/32[ or Mbpp/2[ or Mbpp/63["


def test_reference_passes_every_check_on_a_real_slice(pytester, shared_data):
    result = pytester.runpytest_inprocess(
        "--specbench=contract", f"--specbench-data={shared_data}", "--model=reference",
        "-k", SLICE, "--specbench-report=r.json", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=6)  # Mbpp/2 is not in the ContractEval set
    metrics = json.loads((pytester.path / "r.json").read_text())["benchmarks"]["contract"]["metrics"]
    assert metrics["pass@1"] == 1.0 and metrics["csr"] == 1.0 and metrics["csr_cvt"] == 1.0


def test_real_chatgpt_samples_get_evalplus_verdicts(pytester, shared_data):
    samples = shared_data / "samples" / "humaneval-chatgpt-temp0.0.jsonl"
    result = pytester.runpytest_inprocess(
        "--specbench=evalplus", f"--specbench-data={shared_data}", f"--model=replay:{samples}",
        "-k", "HumanEval/0[ or HumanEval/1[ or HumanEval/10[ or HumanEval/32[", "--specbench-report=r.json",
        "-p", "no:cacheprovider")
    tasks = json.loads((pytester.path / "r.json").read_text())["benchmarks"]["evalplus"]["tasks"]
    verdicts = {t: v["samples"][0]["checks"]["functional"]["passed"] for t, v in tasks.items()}
    # EvalPlus 0.3.1 on the same raw samples: HumanEval/0 and /1 pass base+extra, /10 and
    # /32 fail (this sample's root is wrong; EvalPlus would fail /32 for any sample).
    assert verdicts == {"HumanEval/0": True, "HumanEval/1": True, "HumanEval/10": False, "HumanEval/32": False}
    assert result.ret == 1


def test_appendix_j_curve_from_every_input_of_real_samples(pytester, shared_data):
    """ContractEval Appendix J: with --specbench-details a failing sample's functional pass rate f
    is known (inputs_passed), so the curve has its thresholds below 1; HumanEval/0 passes (f = 1),
    HumanEval/32 fails on some inputs only (0 < f < 1)."""
    samples = shared_data / "samples" / "humaneval-chatgpt-temp0.0.jsonl"
    pytester.runpytest_inprocess(
        "--specbench=contract", f"--specbench-data={shared_data}", f"--model=replay:{samples}",
        "--specbench-details", "-k", "HumanEval/0[ or HumanEval/32[", "--specbench-report=r.json",
        "-p", "no:cacheprovider")
    bench = json.loads((pytester.path / "r.json").read_text())["benchmarks"]["contract"]
    f32 = bench["tasks"]["HumanEval/32"]["samples"][0]["checks"]["functional"]
    assert 0 < f32["inputs_passed"] < f32["inputs"], f32
    curve = bench["metrics"]["csr_by_threshold"]
    assert curve["0.00"]["samples"] == 2 and curve["1.00"]["samples"] == 1


def test_four_shards_of_a_real_contracteval_slice_merge_to_the_report_of_one_run(pytester, shared_data, monkeypatch,
                                                                                 capfd):
    """Each shard runs whole tasks of its own (the split is by predicted cost over the
    selected tasks), and their journals merge into the one run's report."""
    from test_shards import comparable

    from pytest_specbench.cli import main as specbench_main

    monkeypatch.setenv("SPECBENCH_DIR", str(pytester.path / "state"))
    tasks = "HumanEval/0,HumanEval/2,HumanEval/32,Mbpp/63,Mbpp/4,HumanEval/12"
    base = ["-p", "no:cacheprovider", "--specbench=contract", f"--specbench-data={shared_data}", "--model=reference",
            f"--specbench-tasks={tasks}"]
    journals, ran = [], []
    for index in range(4):
        result = pytester.runpytest_inprocess(*base, f"--specbench-shard={index}/4")
        journals.append(next(line.split("run journal ")[1] for line in result.outlines if "run journal " in line))
        ran.append(result.parseoutcomes().get("passed", 0))
    assert sum(ran) == 12 and sum(1 for n in ran if n) >= 3  # 6 tasks x 2 checks, spread over the shards
    # The merge writes the HTML report too (for the bundled shards of every family in
    # test_shards.py it would be 13 plots: ~2 CPU s of matplotlib, here ContractEval's 2).
    assert specbench_main(["merge", "--report", "merged.json", "--html", "merged.html", *journals]) == 0
    assert pytester.runpytest_inprocess(*base, "--specbench-report=one.json").ret == 0
    merged = json.loads((pytester.path / "merged.json").read_text())
    one = json.loads((pytester.path / "one.json").read_text())
    assert len(one["benchmarks"]["contract"]["tasks"]) == 6
    assert comparable(merged) == comparable(one)
    page = (pytester.path / "merged.html").read_text()
    assert "<html" in page[:500].lower() and "<svg" in page
    # The merge's own run key is checked against the shards': other limits here are one line.
    capfd.readouterr()
    assert specbench_main(["merge", "--report", "other.json", "--pytest-args=--specbench-call-cpu=3", *journals]) \
        == pytest.ExitCode.USAGE_ERROR
    refusal = [line for line in capfd.readouterr().err.splitlines() if "specbench" in line]
    assert refusal == ["ERROR: specbench: merge: the journals are not of this run: its sandbox limits differ: "
                       "call_cpu was 1.0, now 3.0"], refusal
    assert not (pytester.path / "other.json").exists()
