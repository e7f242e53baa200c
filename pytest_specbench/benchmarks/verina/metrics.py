"""VERINA metrics (§4.1, §4.2, Appendix C.5).

Each check's ``details`` carry ``score`` (``pass``/``fail``/``unknown``), ``cases``
(how many test cases the relation was tested on) and ``pass_cases``.  A sample
passes a metric under a bound:

- lower bound (the paper's Pass%): unknown counts as *not* holding;
- upper bound, ``paper``: unknown counts as holding (§4.1: "we plot error bars
  indicating the lower bound (treating unknown as R does not hold) and upper bound
  (treating as R holds)"), i.e. Pass% + Unknown%;
- upper bound, ``upstream`` (upstream's code): unknown counts as holding only
  when the relation also had a passing case (and, being unknown, no failing one).

Composite metrics need every part (§4.1: "aggregated scores that soundness and
completeness hold simultaneously for pre-condition, post-condition, and the complete
specification"): ``precond``, ``postcond``, ``spec``; ``code_spec`` (Code&Spec,
§4.2) and ``all`` (end-to-end in ``code_spec_proof``, §4.2, the proof against the
ground-truth spec).  pass@k is Chen et al.'s unbiased estimator over the n samples
(n = 5 in the paper).
"""
from __future__ import annotations

from typing import Any, Mapping, Sequence

from ...metrics.passk import pass_at_k
from .kinds import SPEC_CHECKS

COMPOSITES = {
    "precond": ("precond_sound", "precond_complete"),
    "postcond": ("postcond_sound", "postcond_complete"),
    "spec": SPEC_CHECKS,
}


def holds(details: Mapping[str, Any] | None, bound: str, upper_rule: str = "paper") -> bool | None:
    """Whether one check passed under ``bound`` (lower | upper); None when it did
    not run (left out)."""
    if not details:
        return None
    score = details.get("score")
    if score == "pass":
        return True
    if score == "unknown" and bound == "upper":
        return upper_rule == "paper" or int(details.get("pass_cases", 0)) > 0
    return False


def metric_parts(checks: Sequence[str]) -> dict[str, tuple[str, ...]]:
    """The metrics of a task kind and the checks each needs."""
    parts: dict[str, tuple[str, ...]] = {c: (c,) for c in checks}
    if set(SPEC_CHECKS) <= set(checks):
        parts.update(COMPOSITES)
    if "code" in checks and set(SPEC_CHECKS) <= set(checks):
        parts["code_spec"] = ("code",) + SPEC_CHECKS
    if len({"code", "proof"} & set(checks)) == 2 or ("proof" in checks and len(checks) > 1):
        parts["all"] = tuple(checks)
    return parts


def aggregate(results: Mapping[str, Sequence[Mapping[str, Any]]], checks: Sequence[str], ks: Sequence[int],
              upper_rule: str = "paper", empty_relation: str = "vacuous") -> dict[str, Any]:
    """``{metric_pass@k: value, metric_pass@k_upper: value, ...}`` plus case counts.

    ``empty_relation``: ``vacuous`` (a relation with no test cases holds, as the
    definition over the test suite says and upstream does) or ``exclude`` (the
    task leaves that metric)."""
    out: dict[str, Any] = {}
    parts = metric_parts(checks)
    has_unknown_side = any(c in SPEC_CHECKS for c in checks)
    for metric, needed in parts.items():
        for bound in ("lower", "upper") if has_unknown_side else ("lower",):
            counts: list[tuple[int, int]] = []
            for rows in results.values():
                n = c = 0
                for row in rows:
                    got = row.get("checks", {})
                    if any(k not in got for k in needed):
                        continue  # errored or skipped: out of the metrics
                    if empty_relation == "exclude" and any(
                            k in SPEC_CHECKS and got[k].get("cases", 1) == 0 for k in needed):
                        continue
                    n += 1
                    c += all(holds(got[k], bound, upper_rule) for k in needed)
                if n:
                    counts.append((n, c))
            if not counts:
                continue
            smallest = min(n for n, _ in counts)
            for k in ks:
                if k <= smallest:
                    suffix = "_upper" if bound == "upper" else ""
                    out[f"{metric}_pass@{k}{suffix}"] = sum(pass_at_k(n, c, k) for n, c in counts) / len(counts)
            out[f"{metric}_tasks"] = len(counts)
    for check in checks:
        if check in SPEC_CHECKS:
            # How many tasks tested each relation on no case at all (112 tasks have no
            # reject inputs: precondition completeness holds vacuously there).
            untested = {tid for tid, rows in results.items() for row in rows
                        if row.get("checks", {}).get(check, {}).get("cases", 1) == 0}
            out[f"{check}_untested_tasks"] = len(untested)
    return out


def names(checks: Sequence[str], ks: Sequence[int]) -> list[str]:
    out = []
    has_unknown_side = any(c in SPEC_CHECKS for c in checks)
    for metric in metric_parts(checks):
        for k in ks:
            out.append(f"{metric}_pass@{k}")
            if has_unknown_side:
                out.append(f"{metric}_pass@{k}_upper")
    return out


def figures(metrics: Mapping[str, Any], checks: Sequence[str], k: int = 1) -> list[dict[str, Any]]:
    """pass@k per metric with the unknown band as error bars (§4.1 figures)."""
    xs, ys, lo, hi = [], [], [], []
    for metric in metric_parts(checks):
        low = metrics.get(f"{metric}_pass@{k}")
        if low is None:
            continue
        up = metrics.get(f"{metric}_pass@{k}_upper", low)
        xs.append(metric)
        ys.append(low)
        lo.append(low)
        hi.append(up)
    if not xs:
        return []
    return [{"title": f"VERINA pass@{k} (error bars: unknown counted as fails / as holds)", "kind": "errorbar",
             "percent": True, "x": xs, "y": ys, "lo": lo, "hi": hi, "xlabel": "metric", "ylabel": f"pass@{k}"}]
