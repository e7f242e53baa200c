"""pass@k, the unbiased estimator of Chen et al. 2021 ("Evaluating Large Language
Models Trained on Code", §2.1): for a task with n samples of which c pass,
pass@k = 1 - C(n-c, k) / C(n, k), averaged over tasks.
"""
from __future__ import annotations

from typing import Mapping, Sequence


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k for one task (numerically stable product form)."""
    if n - c < k:
        return 1.0
    result = 1.0
    for i in range(n - c + 1, n + 1):
        result *= 1.0 - k / i
    return 1.0 - result


def pass_at_k_table(counts: Mapping[str, tuple[int, int]], ks: Sequence[int]) -> dict[str, float]:
    """``{"pass@k": mean over tasks}`` for each k that every task has samples for.

    As in EvalPlus, a k larger than the smallest per-task sample count is left
    out rather than estimated from too few samples.
    """
    if not counts:
        return {}
    smallest = min(n for n, _ in counts.values())
    return {f"pass@{k}": sum(pass_at_k(n, c, k) for n, c in counts.values()) / len(counts)
            for k in ks if k <= smallest}
