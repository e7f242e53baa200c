"""CIFE's N (issue #49 point 5): one denominator per report.

Paper §4.4: CSR, SSR and C2A are ``1/N sum_i`` with "N the total number of tasks".
By default (``--cife-n=all``) every sample the judge was asked about counts, and a
verdict lost to a harness error (an unreadable judge answer: E) counts as not
satisfied; ``--cife-n=scored`` (the variant) counts only samples with every verdict
and the label, for every metric alike.  The verdicts below are written out by hand
as the report's details (what the adapter writes), and the expected figures worked
out by hand.
"""
from __future__ import annotations

import pytest

from pytest_specbench.benchmarks.cife.adapter import ADAPTER
from fakes import FakeSettings


def _task(n):
    return {"source_dataset": "S", "difficulty": "easy", "n_constraints": n}


def _adh(i, judge, n, outcome="judged"):
    return {"outcome": outcome, "constraint": i, "category": "C", "judge": judge, "rule_verdict": None,
            "task": _task(n), "passed": bool(judge)}


def _label(label, n, outcome="judged"):
    return {"outcome": outcome, "label": label, "task": _task(n), "passed": label == "Completely Correct"}


# T1: 2 constraints, both satisfied, Completely Correct
# T2: 3 constraints, the second not satisfied, Partially Correct
# T3: 2 constraints, the adherence answer unreadable (both items E: absent), Completely Correct
T1 = {"adherence[0]": _adh(0, True, 2), "adherence[1]": _adh(1, True, 2), "correctness": _label("Completely Correct", 2)}
T2 = {"adherence[0]": _adh(0, True, 3), "adherence[1]": _adh(1, False, 3), "adherence[2]": _adh(2, True, 3),
      "correctness": _label("Partially Correct", 3)}
T3 = {"correctness": _label("Completely Correct", 2)}
# T4: 4 constraints, the answer refused (spoke to the judge): every item F, no label
T4 = {**{f"adherence[{i}]": _adh(i, False, 4, "refused") for i in range(4)}, "correctness": _label(None, 4, "refused")}


def _results(*samples):
    return {f"T{i}": [{"index": 0, "checks": checks}] for i, checks in enumerate(samples, 1)}


def _metrics(results, n):
    return ADAPTER.aggregate(results, None, FakeSettings(options={"cife_n": n}))


def test_the_papers_n_counts_every_task():
    # by hand, N = 3: CSR = 1/3 (T1); SSR = (1 + 2/3 + 0)/3 = 5/9; C2A = 1/3; Completely Correct = 2/3 (T1, T3)
    m = _metrics(_results(T1, T2, T3), "all")
    assert (m["csr"], m["ssr"], m["c2a"], m["completely_correct"]) == pytest.approx((1 / 3, 5 / 9, 1 / 3, 2 / 3))
    assert m["samples_scored"] == 3 and m["samples_incomplete"] == 1
    # ... the default
    default = ADAPTER.aggregate(_results(T1, T2, T3), None, FakeSettings())
    assert {k: v for k, v in default.items() if v == v} == {k: v for k, v in m.items() if v == v}  # NaN != NaN


def test_the_scored_variant_uses_one_n_for_every_metric():
    # by hand, N = 2 (T3 has no adherence verdict): CSR = 1/2, SSR = (1 + 2/3)/2 = 5/6, C2A = 1/2,
    # Completely Correct = 1/2 (before: 2/3, over N = 3, in the same report)
    m = _metrics(_results(T1, T2, T3), "scored")
    assert (m["csr"], m["ssr"], m["c2a"], m["completely_correct"]) == pytest.approx((1 / 2, 5 / 6, 1 / 2, 1 / 2))
    assert m["samples_scored"] == 2


def test_a_refused_answer_counts_as_nothing_satisfied_under_both():
    # by hand, N = 4: CSR = 1/4, SSR = (1 + 2/3)/4 = 5/12, C2A = 1/4, Completely Correct = 2/4
    m = _metrics(_results(T1, T2, T3, T4), "all")
    assert (m["csr"], m["ssr"], m["c2a"], m["completely_correct"]) == pytest.approx((1 / 4, 5 / 12, 1 / 4, 1 / 2))
    assert m["samples_refused"] == 1
    # scored, N = 3 (T4 is complete: the answer's own fault): 1/3, 5/9, 1/3, 1/3
    m = _metrics(_results(T1, T2, T3, T4), "scored")
    assert (m["csr"], m["ssr"], m["c2a"], m["completely_correct"]) == pytest.approx((1 / 3, 5 / 9, 1 / 3, 1 / 3))


def test_the_option_is_declared_and_checked():
    from pytest_specbench.benchmarks.cife.metrics import compute

    option = next(o for o in ADAPTER.options if o.name == "cife_n")
    assert option.default == "all" and option.choices == ("all", "scored") and option.flag == "--cife-n"
    with pytest.raises(ValueError):
        compute({}, "half")


def test_a_sample_whose_items_all_errored_counts_under_its_own_task():
    # T5: every item E (its sample is in the results with no record); the task says it has 2 constraints
    from pytest_specbench.benchmarks.base import Task

    results = {**_results(T1), "T5": [{"index": 0, "checks": {}}]}
    tasks = {"T5": Task("T5", {"_constraints": (object(), object()), "source_dataset": "S",
                               "instruction_difficulty": "easy"}, None)}
    m = ADAPTER.aggregate(results, tasks, FakeSettings())
    assert m["samples_scored"] == 2 and m["csr"] == 0.5 and m["csr_by_count/2"] == 0.5
    assert not any(k.endswith("/0") for k in m)
    m = ADAPTER.aggregate(results, {}, FakeSettings())  # no task data (a baseline report): no breakdown for it
    assert m["samples_scored"] == 2 and m["csr"] == 0.5 and m["csr_by_count/2"] == 1.0
