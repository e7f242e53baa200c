"""AVC and TS (ContractEval §3.4) on hand-made CVT sets."""
from __future__ import annotations

import pytest

from pytest_specbench.benchmarks.contract.cvt_metrics import aggregate, set_metrics, task_metrics

CONTRACTS = {"assert_0": "...", "assert_1": "...", "assert_2": "..."}


def cvt(intended, fired, full=None):
    c = {"input": {}, "intended_violated": intended, "fired_individually": fired}
    if full is not None:
        c["full_contract"] = full
    return c


CVTS = [
    cvt(["assert_0"], ["assert_0"], "AssertionError"),  # specific
    cvt(["assert_0", "assert_1"], ["assert_0"], "AssertionError"),  # one of two intended fires
    cvt(["assert_1"], ["assert_1", "assert_2"], "AssertionError"),  # an unintended one fires too
    cvt(["assert_2"], [], "TypeError"),  # not rejected by the contract
]


def test_avc_counts_cvts_rejected_with_assertion_error():
    m = task_metrics("T", CVTS, CONTRACTS)
    assert m.avc == pytest.approx(3 / 4)


def test_ts_is_the_papers_mean_jaccard_over_tests_that_fire():
    """ContractEval §3.4: TS = mean over T_neg = {t : |F_t| > 0} of |F_t & V_t| / |F_t | V_t|.
    By hand: CVT 1 is 1/1, CVT 2 1/2 (one of two intended fires), CVT 3 1/2 (an unintended one
    fires too), CVT 4 fires nothing and is not in T_neg: (1 + 1/2 + 1/2) / 3."""
    assert task_metrics("T", CVTS, CONTRACTS).ts == pytest.approx(2 / 3)
    _, agg = set_metrics([{"task_id": "A", "contracts": CONTRACTS, "cvts": CVTS},
                          {"task_id": "B", "contracts": CONTRACTS, "cvts": [cvt(["assert_0"], ["assert_0", "assert_1",
                                                                                                "assert_2"])]}])
    assert agg["ts"] == pytest.approx((1 + 1 / 2 + 1 / 2 + 1 / 3) / 4)  # pooled over the tests of T_neg
    # A set whose inputs fire nothing has no TS (T_neg is empty), not a TS of 0.
    assert task_metrics("T", [cvt(["assert_0"], [])], CONTRACTS).ts is None


def test_ts_modes():
    assert task_metrics("T", CVTS, CONTRACTS, "jaccard").ts == pytest.approx(2 / 3)
    assert task_metrics("T", CVTS, CONTRACTS, "exact").ts == pytest.approx(1 / 4)
    # upstream: pairs (CVT, intended assert): 1 + 1 + 1 + 0 of 1 + 2 + 1 + 1
    assert task_metrics("T", CVTS, CONTRACTS, "upstream").ts == pytest.approx(3 / 5)
    assert task_metrics("T", CVTS, CONTRACTS, "all-intended").ts == pytest.approx(2 / 4)


def test_missing_full_contract_falls_back_on_fired_sets():
    m = task_metrics("T", [cvt(["assert_0"], ["assert_0"]), cvt(["assert_1"], [])], CONTRACTS)
    assert m.avc == pytest.approx(1 / 2)


def test_aggregate_task_and_assert_coverage():
    a = task_metrics("A", CVTS, CONTRACTS)
    b = task_metrics("B", [], {"assert_0": "..."})
    agg = aggregate([a, b])
    assert agg["tasks"] == 2 and agg["tasks_with_cvt"] == 1 and agg["task_coverage"] == 0.5
    assert agg["cvts"] == 4 and agg["avc"] == pytest.approx(3 / 4)
    assert agg["asserts"] == 4 and agg["asserts_covered"] == 3  # B's assert_0 is never fired
    assert b.avc is None and b.ts is None


def test_unknown_assert_names_are_rejected():
    with pytest.raises(ValueError):
        task_metrics("T", [cvt(["assert_9"], [])], CONTRACTS)
    with pytest.raises(ValueError):
        task_metrics("T", CVTS, CONTRACTS, ts_mode="nope")


def test_set_metrics_on_rows():
    rows = [{"task_id": "A", "contracts": CONTRACTS, "cvts": CVTS}, {"task_id": "B", "contracts": {}, "cvts": []}]
    per_task, agg = set_metrics(rows, "upstream")
    assert [t.task_id for t in per_task] == ["A", "B"] and agg["ts"] == pytest.approx(3 / 5)
