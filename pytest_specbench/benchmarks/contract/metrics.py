"""Contract satisfaction metrics of ContractEval (Lim et al., arXiv:2510.12047).

* ``csr`` (§3.4, Contract Satisfaction Rate): for each task with at least one
  contract-violating test (CVT), the share of its CVTs a sample rejects,
  averaged over the task's samples, then over tasks.  What counts as a
  rejection is the ``--contract-rejection`` rule (docs/contract.md says why the
  default is upstream's ``AssertionError``).
* ``csr_cvt``: the same share pooled over all CVTs of all tasks and samples
  (every CVT weighs the same, so tasks with many CVTs weigh more).
* ``contract_pass@1``: the share of samples that reject *every* CVT of their
  task, averaged over tasks (the ``contract`` item's own pass rate).

Appendix J conditions contract satisfaction ``c`` (a sample's CSR) on the
functional pass rate ``f`` (the share of its well-formed tests it passes) and
reports, over ``S_t = {i : f_i >= t}``, (i) ``E[c | f >= t]`` and (ii)
``Pr(c = 1 | f >= t)``:

* ``csr_conditional``: ``E[c | f = 1]``, the "CSR" column of Table 11;
* ``csr_perfect_conditional``: ``Pr(c = 1 | f = 1)``, the share of functionally
  correct samples that reject every CVT.  The paper is not consistent here: §5
  calls the 51-59% range of fully correct programs their "mean CSR", Appendix J
  calls the same range ``Pr(c = 1 | f = 1)``; both are reported.
* ``csr_by_threshold``: ``{t: {"csr": E[c | f >= t], "csr_perfect":
  Pr(c = 1 | f >= t), "samples": |S_t|}}`` for ``t`` in :data:`THRESHOLDS`
  (Figure 10's curve).  A failing sample's ``f`` is known only when the
  functional check ran every input (``--specbench-details``, which records
  ``inputs_passed``); without it only ``t = 1`` is reported.

Conditional figures are averaged as ``csr`` is: per task over its samples in
``S_t``, then over the tasks that have one (with one sample per task, as in the
paper, this is the mean over programs of ``S_t``).
"""
from __future__ import annotations

from typing import Any, Mapping, Sequence

THRESHOLDS = (0.0, 0.25, 0.5, 0.75, 1.0)


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def functional_rate(functional: Mapping[str, Any] | None) -> float | None:
    """``f`` of Appendix J: the share of well-formed tests passed (None: not known)."""
    if not functional:
        return None
    if functional.get("passed"):
        return 1.0
    if functional.get("no_code"):
        return 0.0
    if "inputs_passed" in functional and functional.get("inputs"):
        return functional["inputs_passed"] / functional["inputs"]
    return None


def contract_satisfaction(results: Mapping[str, Sequence[Mapping[str, Any]]]) -> dict[str, Any]:
    per_task, all_passed = [], []
    rejected_total = cvt_total = 0
    # threshold -> per task: [mean c over S_t, share of c = 1 over S_t, |S_t|]
    by_threshold: dict[float, list[tuple[float, float, int]]] = {t: [] for t in THRESHOLDS}
    f_unknown = False
    for samples in results.values():
        rates, passed, pairs = [], [], []
        for sample in samples:
            contract = sample["checks"].get("contract")
            if not contract or not contract.get("total"):
                continue
            rate = contract["rejected"] / contract["total"]
            rates.append(rate)
            passed.append(1.0 if contract.get("passed") else 0.0)
            rejected_total += contract["rejected"]
            cvt_total += contract["total"]
            if "functional" in sample["checks"]:
                f = functional_rate(sample["checks"]["functional"])
                f_unknown |= f is None
                pairs.append((f, rate))
        if rates:
            per_task.append(_mean(rates))
            all_passed.append(_mean(passed))
        for t in THRESHOLDS:
            # f None is a failed sample (f < 1) whose rate was not measured
            chosen = [c for f, c in pairs if f is not None and f >= t]
            if chosen:
                by_threshold[t].append((_mean(chosen), _mean([1.0 if c == 1 else 0.0 for c in chosen]), len(chosen)))
    curve = {f"{t:.2f}": {"csr": _mean([m for m, _, _ in rows]), "csr_perfect": _mean([p for _, p, _ in rows]),
                          "samples": sum(n for _, _, n in rows)}
             for t, rows in by_threshold.items() if rows and (t == 1.0 or not f_unknown)}
    at_one = curve.get("1.00", {})
    metrics = {
        "csr": _mean(per_task),
        "csr_cvt": rejected_total / cvt_total if cvt_total else None,
        "csr_conditional": at_one.get("csr"),
        "csr_perfect_conditional": at_one.get("csr_perfect"),
        "csr_by_threshold": curve or None,
        "contract_pass@1": _mean(all_passed),
        "cvt_tasks": len(per_task),
        "cvts_run": cvt_total,
    }
    return {k: v for k, v in metrics.items() if v is not None}
