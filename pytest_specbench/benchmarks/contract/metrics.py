"""Contract satisfaction metrics of ContractEval (Lim et al., arXiv:2510.12047).

* ``csr`` (§3.4, Contract Satisfaction Rate): for each task with at least one
  contract-violating test (CVT), the share of its CVTs a sample rejects,
  averaged over the task's samples, then over tasks.
* ``csr_cvt``: the same share pooled over all CVTs of all tasks and samples
  (every CVT weighs the same, so tasks with many CVTs weigh more).
* ``csr_conditional`` (Appendix J): ``csr`` over functionally correct samples
  only; tasks with no functionally correct sample are left out.
* ``contract_pass@1``: the share of samples that reject *every* CVT of their
  task, averaged over tasks (the ``contract`` item's own pass rate).
"""
from __future__ import annotations

from typing import Any, Mapping, Sequence


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def contract_satisfaction(results: Mapping[str, Sequence[Mapping[str, Any]]]) -> dict[str, Any]:
    per_task, per_task_conditional, all_passed = [], [], []
    rejected_total = cvt_total = 0
    for samples in results.values():
        rates, conditional, passed = [], [], []
        for sample in samples:
            contract = sample["checks"].get("contract")
            if not contract or not contract.get("total"):
                continue
            rate = contract["rejected"] / contract["total"]
            rates.append(rate)
            passed.append(1.0 if contract.get("passed") else 0.0)
            rejected_total += contract["rejected"]
            cvt_total += contract["total"]
            if sample["checks"].get("functional", {}).get("passed"):
                conditional.append(rate)
        if rates:
            per_task.append(_mean(rates))
            all_passed.append(_mean(passed))
        if conditional:
            per_task_conditional.append(_mean(conditional))
    metrics = {
        "csr": _mean(per_task),
        "csr_cvt": rejected_total / cvt_total if cvt_total else None,
        "csr_conditional": _mean(per_task_conditional),
        "contract_pass@1": _mean(all_passed),
        "cvt_tasks": len(per_task),
        "cvts_run": cvt_total,
    }
    return {k: v for k, v in metrics.items() if v is not None}
