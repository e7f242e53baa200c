"""Metrics of PostcondBench (Appendix D.3; Table 2; Figure 3).

Corr@k / Comp@k: the probability that at least one of k sets drawn from the n
generated ones is correct / complete, with the unbiased estimator
1 - C(n-c, k) / C(n, k) averaged over methods.  Δ@k = Corr@k - Comp@k (eq. 1),
ρ@k = Comp@k / Corr@k (eq. 2).  Per-method gap (Figure 3): corr_rate - comp_rate
over methods with at least one correct set.
"""
from __future__ import annotations

import statistics
from math import comb
from typing import Any, Mapping, Sequence

from .dependency import dependency_level, is_standalone, is_standalone_java  # noqa: F401 (Table 3's labels)

KS = (1, 3, 5)


def at_k(n: int, c: int, k: int) -> float | None:
    if n < k:
        return None
    if n - c < k:
        return 1.0
    return 1.0 - comb(n - c, k) / comb(n, k)


LANGUAGES = {"python": "Python", "java": "Java"}


# ---------------------------------------------------------------- the metrics, declared
def method_rows(samples: Sequence[Mapping[str, Any]]) -> list[tuple[bool, bool]] | None:
    """A method's ``[(correct, complete)]`` per sample that ran a check (None: none did)."""
    rows = []
    for s in samples:
        checks = s.get("checks", {})
        if "correct" not in checks and "complete" not in checks:
            continue
        corr = bool(checks.get("correct", {}).get("verdict") == "passed") if "correct" in checks \
            else bool(checks["complete"].get("correct"))
        comp = bool(checks.get("complete", {}).get("complete"))
        rows.append((corr, corr and comp))
    return rows or None


def _corr_at(k: int):
    return lambda rows: at_k(len(rows), sum(c for c, _ in rows), k)


def _comp_at(k: int):
    return lambda rows: at_k(len(rows), sum(c and m for c, m in rows), k)


def _gap(rows: Sequence[tuple[bool, bool]]) -> float | None:
    if not any(c for c, _ in rows):
        return None
    return sum(c for c, _ in rows) / len(rows) - sum(c and m for c, m in rows) / len(rows)


def _median(gaps: list[float]) -> float | None:
    """Figure 3's median gap (for an even count the mean of the two middle values)."""
    return statistics.median(gaps) if gaps else None


def declared(dependency_group, language, ks: Sequence[int] = KS):
    """PostcondBench's metrics as reducers over methods (:mod:`pytest_specbench.metrics.reducers`):

    * Appendix D.3: ``Corr@k`` / ``Comp@k``, the mean over methods (with at
      least k sets) of the unbiased estimator; ``Delta@k`` (eq. 1) and
      ``rho@k`` (eq. 2) from them;
    * Figure 3: the per-method gap ``gap_by_method`` and its median ``gap_median``;
    * Table 3 / §5.4: ``Corr@1``/``Comp@1`` grouped by dependency (``Dep``/``Solo``,
      ``dependency_group(task_id, task)``), with the methods per group;
    * Table 2: ``Corr@1``/``Comp@1`` grouped by language (``language(task_id, task)``),
      for the languages present.
    """
    from ...metrics.reducers import Count, Declared, Derived, Grouped, Mean, PerItem, Summary

    per_k = []
    for k in ks:
        per_k += [Mean(f"Corr@{k}", _corr_at(k)), Mean(f"Comp@{k}", _comp_at(k)),
                  Derived(f"Delta@{k}", (f"Corr@{k}", f"Comp@{k}"), lambda corr, comp: corr - comp),
                  Derived(f"rho@{k}", (f"Corr@{k}", f"Comp@{k}"), lambda corr, comp: comp / corr if corr else None)]
    at_1 = (Mean("Corr@1", _corr_at(1)), Mean("Comp@1", _comp_at(1)), Count("methods"))
    return Declared(item=method_rows, reducers=(
        *per_k,
        Count("methods"),
        Summary("gap_median", _gap, _median),
        Grouped(at_1, dependency_group, {"Dep": "Dep", "Solo": "Solo"}, keep_empty=True),
        Grouped(at_1, language, LANGUAGES),
        PerItem("gap_by_method", _gap),  # a per-item breakdown in the reports
    ))
