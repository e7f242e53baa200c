"""CIFE through pytest itself (pytester): the bundled suite, item names, -k by category, replayed answers.

The runs are in this process (``runpytest_inprocess``): what a run in a Python of its own
adds (the judge's cache and the journal across processes) is tests/test_cife_e2e.py's."""
from __future__ import annotations

import json

from pytest_specbench.benchmarks.cife.adapter import ADAPTER


def _metrics(pytester):
    return json.loads((pytester.path / "r.json").read_text())["benchmarks"]["cife"]["metrics"]


def test_reference_on_the_bundled_suite_scores_100_percent_offline(pytester):
    result = pytester.runpytest_inprocess("--specbench=cife", "--model=reference", "--specbench-report=r.json",
                                           "-p", "no:cacheprovider")
    result.assert_outcomes(passed=55)  # 43 constraints + 12 correctness items
    m = _metrics(pytester)
    assert m["csr"] == m["ssr"] == m["c2a"] == m["completely_correct"] == 1.0
    assert m["rule_decided"] >= 30 and m["rule_judge_agreement"] == 1.0


def test_k_selects_a_category(pytester):
    result = pytester.runpytest_inprocess("--specbench=cife", "--model=reference", "-k", "error-handling",
                                           "--collect-only", "-q", "-p", "no:cacheprovider")
    ids = [line for line in result.outlines if "::adherence[" in line]
    want = sum(c.category == "Error Handling and Robustness"
               for t in ADAPTER.load(None, None).tasks for c in t.data["_constraints"])
    assert len(ids) == want == 6 and all("error-handling-and-robustness]" in i for i in ids)


def test_another_answer_is_not_judged_by_the_recorded_judgments(pytester):
    # b01's answer without the docstring and with the statistics module: the shipped judgments
    # were recorded for the reference answer, so they do not answer for this one (issue #43):
    # its constraints a rule decides get the rule's verdict, the others and its correctness
    # are skipped with the usage line; the other tasks are judged as before (two of them here:
    # the reference on all 12 is the first test's).
    bad = ("```python\nimport statistics\n\ndef mean_of(values):\n    if not values:\n        raise ValueError('empty')\n"
           "    return statistics.mean(values)\n```\n")
    lines = [{"task_id": t.task_id, "solution": bad if t.task_id == "b01" else t.data["reference_answer"]}
             for t in ADAPTER.load(None, None).tasks]
    (pytester.path / "answers.jsonl").write_text("".join(json.dumps(l) + "\n" for l in lines))
    result = pytester.runpytest_inprocess("--specbench=cife", "--model=replay:answers.jsonl", "-rs",
                                           "--specbench-report=r.json", "-p", "no:cacheprovider",
                                           "--specbench-tasks=b01,b02,b03")
    # b01: 4 constraints, all decided by rules (name, ValueError: pass; docstring, statistics: fail),
    # its correctness skipped; the 10 items of b02 and b03 pass
    result.assert_outcomes(passed=12, failed=2, skipped=1)
    assert "no judge for this answer" in result.stdout.str() and "--judge-model=openai:NAME" in result.stdout.str()
    report = json.loads((pytester.path / "r.json").read_text())["benchmarks"]["cife"]
    m = report["metrics"]
    assert m["csr"] == 1.0 and m["samples_scored"] == 2 and m["samples_without_judge"] == 1
    assert m["hybrid_csr"] == 2 / 3  # the rules failed b01
    checks = report["tasks"]["b01"]["samples"][0]["checks"]
    assert {d["outcome"] for d in checks.values()} == {"rule-decided"}
    assert "judge:" in result.stdout.str() and "recorded" not in report.get("metrics_error", "")
