"""SpecEval's metrics: Table 1 per task and perturbation category (§3.2),
the perturbation impact of Table 2 (§3.3.2) and PCS (§3.4.2).

Input: per (program, task, category) the list of samples' details, as the
checks wrote them.  With several samples per task, accuracies average over all
samples; program-set metrics (Jaccard distance, average variance, PCS) are
computed per sample index and averaged over the indices.
"""
from __future__ import annotations

from collections import defaultdict
from collections import abc
from typing import Any, Iterable, Mapping, Sequence

from ...metrics.exact_mean import mean  # statistics.mean's values, without its fractions where exact

TASK_ORDER = ("judgement", "selection", "infilling", "generation")


def accuracy(flags: Sequence[bool]) -> float | None:
    """Accuracy (§3.2.1-§3.2.3): share of tasks answered correctly (0..1; the
    report prints percentages as Table 1 does)."""
    return sum(flags) / len(flags) if flags else None


def judged_right(details: Mapping[str, Any]) -> bool:
    """A Judgement answer scored against the candidate's label as built (§3.2.1: a mutant is
    incorrect): a dropped mutant (not refuted by our tests) answered "correct" is wrong.
    §3.2.1 averages over every candidate, and §4.1 gave a false spec the tests did not refute
    more tests, not removal: ``judgement_acc_all`` is that denominator; ``judgement_acc``
    leaves dropped mutants out, since our tests cannot add cases and an unrefuted mutant may be
    a correct specification."""
    if details.get("dropped"):
        return details.get("answer") is not None and details.get("answer") == details.get("label")
    return bool(details.get("passed"))


def jaccard_distance(original: set[str], perturbed: set[str]) -> float | None:
    """J = 1 - |P ∩ P'| / |P ∪ P'| over the programs handled (§3.3.2); None when
    neither version of any program was handled."""
    union = original | perturbed
    if not union:
        return None
    return 1.0 - len(original & perturbed) / len(union)


def average_variance(pairs: Iterable[tuple[float, float]]) -> float | None:
    """v_m = mean |m(P') - m(P)| over pairs where either is non-zero (§3.3.2)."""
    diffs = [abs(b - a) for a, b in pairs if a > 0 or b > 0]
    return mean(diffs) if diffs else None


def pcs(results: Sequence[bool]) -> float:
    """PCS(P) for R(P) = [r1..r4] (§3.4.2): 1 for four tasks in a row, 0.5 for
    three, 0.25 for two, else 0."""
    best = run = 0
    for r in results:
        run = run + 1 if r else 0
        best = max(best, run)
    return {4: 1.0, 3: 0.5, 2: 0.25}.get(best, 0.0)


def success(task: str, details: Mapping[str, Any]) -> bool:
    """A task handled for PCS and Jaccard: the right answer, or for
    Generation Precision(P) > 0 (§3.4.2's softened criterion)."""
    if task == "generation":
        return (details.get("precision") or 0.0) > 0
    return bool(details.get("passed"))


def compute(entries: Mapping[tuple[str, str, str], Sequence[Mapping[str, Any]]],
            categories: Sequence[str], tasks: Sequence[str]) -> dict[str, Any]:
    """``entries[(program, task, category)]`` = the samples' details (each with
    ``index``).  Returns flat metrics named ``<metric>/<category>``.

    The entries are grouped once by (task, category), and per sample index: the
    report's bootstrap calls this once per resample (1,000 on SpecEval's whole set),
    and scanning every entry for each metric made it ~60 CPU s of a run's end."""
    out: dict[str, Any] = {}
    every: dict[tuple[str, str], list[Mapping[str, Any]]] = defaultdict(list)
    kept: dict[tuple[str, str], list[Mapping[str, Any]]] = defaultdict(list)
    by_index: dict[int, dict[tuple[str, str], dict[str, Mapping[str, Any]]]] = defaultdict(lambda: defaultdict(dict))
    for (p, t, c), samples in entries.items():
        for d in samples:
            every[(t, c)].append(d)
            if d.get("dropped"):
                continue
            kept[(t, c)].append(d)
            by_index[d["index"]][(t, c)][p] = d

    def count_per_index(task: str, cat: str, flag: str) -> float | None:
        return _per_index_mean(by_index, lambda m: sum(1 for d in m[(task, cat)].values() if d.get(flag)))

    for cat in categories:
        for task in ("judgement", "selection", "infilling"):
            if task not in tasks:
                continue
            ds = kept[(task, cat)]
            out[f"{task}_acc/{cat}"] = accuracy([bool(d.get("passed")) for d in ds])
            if task == "infilling":
                out[f"infilling_pass/{cat}"] = count_per_index(task, cat, "passed")
        if "judgement" in tasks:
            out[f"judgement_acc_all/{cat}"] = accuracy([judged_right(d) for d in every[("judgement", cat)]])
            ds = kept[("judgement", cat)]
            labels = [d.get("label") for d in ds if d.get("label") is not None]
            out[f"judgement_label_correct/{cat}"] = accuracy([bool(x) for x in labels])
            out[f"judgement_dropped/{cat}"] = sum(1 for d in every[("judgement", cat)] if d.get("dropped"))
            out[f"judgement_unchecked/{cat}"] = sum(1 for d in ds if d.get("validation") == "unchecked")
        if "generation" in tasks:
            ds = kept[("generation", cat)]
            prec = [d.get("precision") or 0.0 for d in ds]
            rec = [d.get("recall") or 0.0 for d in ds]
            out[f"generation_avg_precision/{cat}"] = mean(prec) if prec else None
            out[f"generation_avg_recall/{cat}"] = mean(rec) if rec else None
            out[f"generation_pass/{cat}"] = count_per_index("generation", cat, "all_hold")
        if all(t in tasks for t in TASK_ORDER):
            out[f"pcs/{cat}"] = _per_index_mean(by_index, lambda m: _pcs_mean(m, cat))
        if cat != "original":
            for task in ("judgement", "selection", "infilling"):
                if task in tasks:
                    out[f"jaccard_{task}/{cat}"] = _per_index_mean(by_index, lambda m: _jaccard(m, task, cat))
            if "generation" in tasks:
                for metric in ("precision", "recall"):
                    out[f"variance_{metric}/{cat}"] = _per_index_mean(
                        by_index, lambda m: _variance(m, metric, cat))
    return out


def pcs_by_program(entries, category: str) -> dict[str, float]:
    """PCS(P) per program for one category (sample 0), for the report."""
    m = {k: ds[0] for k, ds in entries.items() if ds and not ds[0].get("dropped")}
    programs = {p for (p, t, c) in m if c == category}
    out = {}
    for p in sorted(programs):
        if all((p, t, category) in m for t in TASK_ORDER):
            out[p] = pcs([success(t, m[(p, t, category)]) for t in TASK_ORDER])
    return out


def test_strength(entries) -> dict[str, Any]:
    """Beyond the paper: the strength of each program's tests, which SpecEval
    reports as their branch coverage (95.5% on average, §4.1).  Per program
    (from any item's ``program_tests``: the calls in the ground truth's domain),
    ``test_branch_coverage_by_program``; their mean over the programs that have
    branches, ``test_branch_coverage_mean``; and ``weak_test_programs``, the
    programs whose tests are flagged weak (few calls or low coverage)."""
    per_program: dict[str, Mapping[str, Any]] = {}
    for (p, t, c), ds in sorted(entries.items()):
        for d in ds:
            if isinstance(d.get("program_tests"), abc.Mapping):  # typing's Mapping: ~10x slower a check
                per_program.setdefault(p, d["program_tests"])
    if not per_program:
        return {}
    coverage = {p: v["branch_coverage"] for p, v in sorted(per_program.items())
                if v.get("branch_coverage") is not None}
    return {"test_branch_coverage_mean": mean(coverage.values()) if coverage else None,
            "test_branch_coverage_by_program": coverage,
            "weak_test_programs": sum(bool(v.get("weak_tests")) for v in per_program.values())}


def _pcs_mean(m, cat):
    """``m[(task, category)][program]`` = one sample index's details."""
    programs = set().union(*(m[(t, cat)] for t in TASK_ORDER)) if m else set()
    scores = [pcs([success(t, m[(t, cat)][p]) for t in TASK_ORDER]) for p in programs
              if all(p in m[(t, cat)] for t in TASK_ORDER)]
    return mean(scores) if scores else None


def _jaccard(m, task, cat):
    perturbed, original = m[(task, cat)], m[(task, "original")]
    programs = perturbed.keys() & original.keys()
    if not programs:
        return None
    orig = {p for p in programs if success(task, original[p])}
    pert = {p for p in programs if success(task, perturbed[p])}
    return jaccard_distance(orig, pert)


def _variance(m, metric, cat):
    original = m[("generation", "original")]
    pairs = [((original[p].get(metric) or 0.0), (d.get(metric) or 0.0))
             for p, d in m[("generation", cat)].items() if p in original]
    return average_variance(pairs)


def _per_index_mean(by_index, fn):
    vals = [v for v in (fn(m) for m in by_index.values()) if v is not None]
    return mean(vals) if vals else None
