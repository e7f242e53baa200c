"""CIFE metrics (paper §5) and our additions (rule agreement, hybrid CSR).

Input: one record per (task, sample) with the details of each adherence item
(``constraint``, ``category``, ``judge`` verdict, ``rule`` verdict or None) and
of the ``correctness`` item.  A sample enters CSR/SSR only when every one of its
constraints has a verdict (an errored adherence item, E, removes the sample:
strict adherence cannot be computed from part of the vector).  With several
samples per task a task's value is the mean over its samples; every metric is
then a mean over tasks (the paper's ``1/N sum_i`` with one sample per task).
"""
from __future__ import annotations

from collections import defaultdict
from functools import lru_cache
from statistics import mean
from typing import Any, Iterable, Mapping, Sequence

COMPLETELY = "Completely Correct"


def _task_mean(values: Mapping[str, list[float]]) -> float:
    per_task = [_sample_mean(v) for v in values.values() if v]
    return mean(per_task) if per_task else float("nan")


def _sample_mean(values: list[float]) -> Any:
    """``statistics.mean(values)``, remembered: the bootstrap (reports/stats.py) aggregates
    1,000 resamples of the same tasks, whose sample lists are the same every time, and
    mean's exact arithmetic (fractions) was most of a CIFE run's time.  Keyed by the values
    and their types (mean of bools may be a bool, of ints an int: the same as before)."""
    return _mean_of(tuple(map(type, values)), tuple(values))


@lru_cache(maxsize=100_000)
def _mean_of(types: tuple, values: tuple) -> Any:
    return mean(values)


def cohen_kappa(pairs: Sequence[tuple[bool, bool]]) -> float:
    """Cohen's kappa of two binary raters (the statistic of the paper's Appendix D, Table 2)."""
    n = len(pairs)
    if not n:
        return float("nan")
    observed = sum(a == b for a, b in pairs) / n
    pa, pb = sum(a for a, _ in pairs) / n, sum(b for _, b in pairs) / n
    expected = pa * pb + (1 - pa) * (1 - pb)
    if expected >= 1.0:  # both raters constant and equal: kappa is undefined
        return float("nan")
    return (observed - expected) / (1 - expected)


def samples_of(results: Mapping[str, Sequence[Mapping[str, Any]]]) -> Iterable[tuple[str, dict[str, Any]]]:
    """``(task_id, sample record)``: constraints (index -> details), correctness details, task info."""
    for task_id, samples in results.items():
        for sample in samples:
            constraints: dict[int, Mapping[str, Any]] = {}
            correctness = None
            info: Mapping[str, Any] = {}
            for check, details in sample.get("checks", {}).items():
                if not isinstance(details, Mapping):
                    continue
                if check.startswith("adherence"):
                    constraints[int(details["constraint"])] = details
                    info = details.get("task", info)
                elif check == "correctness":
                    correctness = details
                    info = details.get("task", info) or info
            yield task_id, {"constraints": constraints, "correctness": correctness, "info": info}


def compute(results: Mapping[str, Sequence[Mapping[str, Any]]]) -> dict[str, Any]:
    csr: dict[str, list[float]] = defaultdict(list)
    ssr: dict[str, list[float]] = defaultdict(list)
    c2a: dict[str, list[float]] = defaultdict(list)
    labels: dict[str, dict[str, list[float]]] = {l: defaultdict(list) for l in (COMPLETELY, "Partially Correct", "Wrong")}
    hybrid_csr: dict[str, list[float]] = defaultdict(list)
    hybrid_ssr: dict[str, list[float]] = defaultdict(list)
    up_csr: dict[str, list[float]] = defaultdict(list)
    up_ssr: dict[str, list[float]] = defaultdict(list)
    cat_micro: dict[str, list[int]] = defaultdict(list)
    cat_macro: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    by: dict[str, dict[str, dict[str, list[float]]]] = {k: defaultdict(lambda: defaultdict(list))
                                                         for k in ("source", "difficulty", "count")}
    pairs: list[tuple[bool, bool]] = []
    rule_decided = judged = incomplete = 0
    no_verdict = no_label = upstream_answers = 0  # --cife-parse=upstream: answers its regex found nothing in
    for task_id, s in samples_of(results):
        info, cons = s["info"], s["constraints"]
        n = int(info.get("n_constraints", len(cons)) or len(cons))
        label = (s["correctness"] or {}).get("label")
        vector = next((d.get("upstream_vector") for d in cons.values() if d.get("upstream_vector") is not None), None)
        if vector is not None:
            upstream_answers += 1
            no_verdict += not vector
            no_label += s["correctness"] is not None and label is None
        if s["correctness"] is not None:  # an unreadable label (upstream reading: None) counts as none of the three
            for l, store in labels.items():
                store[task_id].append(float(label == l))
        verdicts = [cons[i].get("judge") for i in range(n) if i in cons]
        if n == 0 or len(verdicts) < n or any(v is None for v in verdicts):  # n == 0: adherence not run
            incomplete += 1
            continue
        strict = float(all(verdicts))
        soft = sum(verdicts) / n
        csr[task_id].append(strict)
        ssr[task_id].append(soft)
        if s["correctness"] is not None:
            c2a[task_id].append(float(strict == 1.0 and label == COMPLETELY))
        hybrid = []
        for i in range(n):
            d = cons[i]
            judged += 1
            rule = d.get("rule_verdict")
            if rule is not None:
                rule_decided += 1
                pairs.append((bool(d["judge"]), bool(rule)))
            hybrid.append(bool(rule) if rule is not None else bool(d["judge"]))
            cat = d.get("category", "?")
            cat_micro[cat].append(int(bool(d["judge"])))
            cat_macro[cat][task_id].append(float(bool(d["judge"])))
        hybrid_csr[task_id].append(float(all(hybrid)))
        hybrid_ssr[task_id].append(sum(hybrid) / n)
        if vector is not None:  # IBM/CIFE compute_metrics: all([]) == 1, SSR over the vector's own length
            up_csr[task_id].append(float(all(vector)))
            up_ssr[task_id].append(sum(vector) / len(vector) if vector else 0.0)
        for key, value in (("source", info.get("source_dataset", "?")), ("difficulty", info.get("difficulty", "?")),
                           ("count", str(n))):
            by[key][str(value)][task_id].append(strict)
            by[key][str(value) + "\0ssr"][task_id].append(soft)
    metrics: dict[str, Any] = {
        "csr": _task_mean(csr),
        "ssr": _task_mean(ssr),
        "c2a": _task_mean(c2a),
        "completely_correct": _task_mean(labels[COMPLETELY]),
        "partially_correct": _task_mean(labels["Partially Correct"]),
        "wrong": _task_mean(labels["Wrong"]),
        "hybrid_csr": _task_mean(hybrid_csr),
        "hybrid_ssr": _task_mean(hybrid_ssr),
        "rule_decided_share": rule_decided / judged if judged else float("nan"),
        "rule_judge_agreement": (sum(a == b for a, b in pairs) / len(pairs)) if pairs else float("nan"),
        "rule_judge_kappa": cohen_kappa(pairs),
        "rule_decided": rule_decided,
        "constraints_judged": judged,
        "samples_scored": sum(len(v) for v in csr.values()),
        "samples_incomplete": incomplete,
    }
    if up_csr:
        metrics["csr_upstream_reading"] = _task_mean(up_csr)
        metrics["ssr_upstream_reading"] = _task_mean(up_ssr)
    if upstream_answers:
        metrics["upstream_answers_without_verdict"] = no_verdict
        metrics["upstream_answers_without_label"] = no_label
    for cat in sorted(cat_micro):
        metrics[f"category_micro/{cat}"] = float(mean(cat_micro[cat]))  # mean() of bools can be an int
        metrics[f"category_macro/{cat}"] = _task_mean(cat_macro[cat])
    for key, groups in by.items():
        # constraint counts in numeric order (2 before 10), difficulties easy-medium-hard, other keys alphabetically
        for value in sorted((k for k in groups if "\0" not in k),
                            key=lambda k: (not k.isdigit(), k.isdigit() and int(k), _DIFFICULTY.get(k, 9), k)):
            metrics[f"csr_by_{key}/{value}"] = _task_mean(groups[value])
            metrics[f"ssr_by_{key}/{value}"] = _task_mean(groups[value + "\0ssr"])
    return metrics


_DIFFICULTY = {"easy": 0, "medium": 1, "hard": 2}


def _count_key(name: str) -> int:
    return int(name.rsplit("/", 1)[1])


def figures(metrics: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Plots for the HTML report: category bars (micro and macro side by side), CSR by
    constraint count, CSR by difficulty; shares drawn as percentages."""
    out = []
    cats = sorted(k.split("/", 1)[1] for k in metrics if k.startswith("category_micro/"))
    if cats:
        out.append({"title": "CIFE: constraints satisfied by category", "kind": "bar", "percent": True,
                    "x": cats, "series": {"micro (pooled constraints)": [metrics[f"category_micro/{c}"] for c in cats],
                                          "macro (mean over tasks)": [metrics.get(f"category_macro/{c}") for c in cats]},
                    "xlabel": "category", "ylabel": "satisfied"})
    counts = sorted((k for k in metrics if k.startswith("csr_by_count/")), key=_count_key)
    if counts:
        out.append({"title": "CIFE: CSR by number of constraints (paper Fig. 7)", "kind": "bar", "percent": True,
                    "x": [k.split("/", 1)[1] for k in counts], "y": [metrics[k] for k in counts],
                    "xlabel": "constraints per task", "ylabel": "CSR"})
    order = {"easy": 0, "medium": 1, "hard": 2}
    diffs = sorted((k.split("/", 1)[1] for k in metrics if k.startswith("csr_by_difficulty/")), key=lambda d: order.get(d, 9))
    if diffs:
        out.append({"title": "CIFE: CSR by instruction difficulty (paper Fig. 22)", "kind": "bar", "percent": True,
                    "x": diffs, "y": [metrics[f"csr_by_difficulty/{d}"] for d in diffs],
                    "xlabel": "difficulty", "ylabel": "CSR"})
    return out


def warnings(metrics: Mapping[str, Any]) -> list[str]:
    """One line when upstream's reading scored answers in which it found no verdict: its
    CSR counts such an answer as fully satisfied (``all([]) == 1``), so a judge that
    answers nothing usable scores 100% (issue #32).  The scoring stays upstream's."""
    lines = []
    none, labels = metrics.get("upstream_answers_without_verdict") or 0, metrics.get("upstream_answers_without_label") or 0
    if none or labels:
        lines.append(f"--cife-parse=upstream: {none} judge adherence answer(s) had no verdict (scored as all "
                     f"constraints satisfied, as upstream does) and {labels} correctness answer(s) had no label; "
                     f"--cife-parse=strict retries them or reports E")
    return lines


def metric_notes(metrics: Mapping[str, Any]) -> dict[str, str]:
    """What the report says next to a metric that reads n/a (and as its tooltip)."""
    notes = {"rule_judge_kappa": "Cohen's kappa, rules vs judge on the rule-decided constraints (Appendix D)"}
    kappa = metrics.get("rule_judge_kappa")
    if kappa is None or kappa != kappa:  # NaN: undefined
        if not metrics.get("rule_decided"):
            notes["rule_judge_kappa"] += ": undefined here, no constraint was decided by a rule"
        else:
            notes["rule_judge_kappa"] += (f": undefined here, both gave one same verdict on all "
                                          f"{metrics['rule_decided']} (kappa is 0/0; see rule_judge_agreement)")
    return notes
