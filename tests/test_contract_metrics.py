"""ContractEval's CSR and Appendix J figures (contract/metrics.py) on hand-checked verdicts."""
from __future__ import annotations

import pytest

from pytest_specbench.benchmarks.contract.metrics import contract_satisfaction


def sample(rejected, total, functional):
    """A sample's verdicts: ``functional`` is True (all tests pass), or (passed, of) tests."""
    if functional is True:
        f = {"passed": True, "base_passed": True, "inputs": 10}
    else:
        f = {"passed": False, "base_passed": False, "inputs": functional[1], "inputs_passed": functional[0]}
    return {"checks": {"functional": f, "contract": {"passed": rejected == total, "rejected": rejected,
                                                      "total": total}}}


# One sample per task, as the paper's programs (Appendix J: f_i, c_i of the program for task i).
RESULTS = {
    "A": [sample(4, 4, True)],        # f = 1,   c = 1
    "B": [sample(1, 2, True)],        # f = 1,   c = 1/2
    "C": [sample(0, 3, True)],        # f = 1,   c = 0
    "D": [sample(5, 5, (3, 4))],      # f = 3/4, c = 1
    "E": [sample(1, 4, (1, 4))],      # f = 1/4, c = 1/4
}


def test_appendix_j_mean_and_probability_given_f_1():
    m = contract_satisfaction(RESULTS)
    # E[c | f = 1] over A, B, C: (1 + 1/2 + 0) / 3 (Table 11's CSR); Pr(c = 1 | f = 1): 1 of 3
    assert m["csr_conditional"] == pytest.approx(1.5 / 3)
    assert m["csr_perfect_conditional"] == pytest.approx(1 / 3)
    assert m["csr"] == pytest.approx((1 + 0.5 + 0 + 1 + 0.25) / 5)


def test_appendix_j_threshold_curve():
    curve = contract_satisfaction(RESULTS)["csr_by_threshold"]
    assert sorted(curve) == ["0.00", "0.25", "0.50", "0.75", "1.00"]
    assert curve["0.00"] == curve["0.25"] == {"csr": pytest.approx(2.75 / 5), "csr_perfect": pytest.approx(2 / 5),
                                               "samples": 5}
    # t = 0.5 and 0.75: A, B, C, D (f = 3/4 >= t)
    assert curve["0.50"] == curve["0.75"] == {"csr": pytest.approx(2.5 / 4), "csr_perfect": pytest.approx(2 / 4),
                                               "samples": 4}
    assert curve["1.00"] == {"csr": pytest.approx(1.5 / 3), "csr_perfect": pytest.approx(1 / 3), "samples": 3}


def test_without_the_pass_rate_of_failing_samples_only_t_1_is_reported():
    # A failing functional verdict without inputs_passed (no --specbench-details): f < 1 is all we know.
    results = dict(RESULTS, F=[{"checks": {"functional": {"passed": False, "inputs": 9, "failed_input": 0},
                                           "contract": {"passed": True, "rejected": 2, "total": 2}}}])
    m = contract_satisfaction(results)
    assert sorted(m["csr_by_threshold"]) == ["1.00"]
    assert m["csr_perfect_conditional"] == pytest.approx(1 / 3)


def test_conditional_figures_average_per_task_as_csr_does():
    # Two samples of one task with f = 1 (c = 1 and c = 0), one of another (c = 1):
    # per task Pr(c = 1) = 1/2 and 1, then the mean over tasks.
    results = {"A": [sample(2, 2, True), sample(0, 2, True)], "B": [sample(3, 3, True)]}
    m = contract_satisfaction(results)
    assert m["csr_perfect_conditional"] == pytest.approx(0.75)
    assert m["csr_conditional"] == pytest.approx(0.75)
