"""CIFE metrics (paper §4.4, "Evaluation Metrics") and our additions (rule agreement, hybrid CSR).

Input: the report's ``{task_id: [{"index", "checks": {check: details}}]}``.  Every
CIFE item, whatever its outcome, fills the same typed record (:class:`Adherence`,
:class:`Correctness`; the adapter writes them with :func:`adherence_details` and
:func:`correctness_details`), and the metrics read only those records
(:func:`samples_of`), never optional keys of a details dict.  Outcome kinds:

* ``judged``: the judge's verdict (adherence) or label (correctness);
* ``refused``: the answer spoke to the judge (``--cife-injection=refuse``): every
  constraint not satisfied, the label none of the three (the sample's fault);
* ``rule-decided``: no judge answered this question (the bundled suite without
  ``--judge-model``, a question the recorded judgments were not made for) and a rule
  decided the constraint: it counts in the ``rule_*``/``hybrid_*`` metrics, not in
  the judge's;
* errored (E, the harness's fault): no record (the report leaves errored items out);
  a record that does not read as one of the above is counted the same way
  (``records_unreadable``).

The denominator (``--cife-n``, one per report, issue #49): ``all`` (default, the
paper's §4.4: "N is the total number of tasks") counts every sample the judge was
asked about; a sample with an errored item counts its missing verdicts as not
satisfied and a missing label as not *Completely Correct*.  ``scored`` (the
plugin's earlier rule, kept as the variant) counts only samples whose adherence
vector and label are both complete.  Every judge metric of one report (CSR, SSR,
C2A, the three labels, the breakdowns) uses the same samples.  With several samples
per task a task's value is the mean over its samples; every metric is then a mean
over tasks (the paper's ``1/N sum_i`` with one sample per task).
"""
from __future__ import annotations

import re
from collections import abc, defaultdict  # abc's isinstance: typing's is ~10x slower a check, per resample
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Iterable, Mapping, Sequence

from ...metrics.exact_mean import mean  # statistics.mean's values, without its fractions where exact

COMPLETELY = "Completely Correct"
LABELS = (COMPLETELY, "Partially Correct", "Wrong")
JUDGED, REFUSED, RULE_DECIDED = "judged", "refused", "rule-decided"
DENOMINATORS = ("all", "scored")
_ADHERENCE_CHECK = re.compile(r"adherence\[(\d+)(?:-[\w-]*)?\]$")


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
    return kappa_of_counts(len(pairs), sum(a == b for a, b in pairs), sum(a for a, _ in pairs),
                           sum(b for _, b in pairs))


def kappa_of_counts(n: float, agree: float, first: float, second: float) -> float:
    """:func:`cohen_kappa` of ``n`` pairs of which ``agree`` agree, ``first`` and ``second``
    the first and the second rater's True counts (the bootstrap draws these totals)."""
    if not n:
        return float("nan")
    observed = agree / n
    pa, pb = first / n, second / n
    expected = pa * pb + (1 - pa) * (1 - pb)
    if expected >= 1.0:  # both raters constant and equal: kappa is undefined
        return float("nan")
    return (observed - expected) / (1 - expected)


# --- the typed records -------------------------------------------------------------------------

@dataclass(frozen=True)
class TaskInfo:
    """What the breakdowns group by (paper Fig. 7, Fig. 22)."""

    source_dataset: str = "?"
    difficulty: str = "?"
    n_constraints: int = 0

    def as_details(self) -> dict[str, Any]:
        return {"source_dataset": self.source_dataset, "difficulty": self.difficulty,
                "n_constraints": self.n_constraints}

    @classmethod
    def read(cls, raw: Any) -> "TaskInfo | None":
        if not isinstance(raw, abc.Mapping):
            return None
        n = raw.get("n_constraints")
        if not isinstance(n, int) or isinstance(n, bool) or n < 0:
            return None
        return cls(str(raw.get("source_dataset", "?")), str(raw.get("difficulty", "?")), n)


@dataclass(frozen=True)
class Adherence:
    """One adherence item's outcome: every kind fills every field."""

    kind: str                 # judged | refused | rule-decided
    constraint: int           # 0-based position (the check name says it too)
    category: str
    judge: bool | None        # judged: the judge's verdict; refused: False; rule-decided: None
    rule: bool | None         # a rule's verdict where one decides (None: no rule decides)
    info: TaskInfo
    upstream_vector: tuple[bool, ...] | None = None  # --cife-parse=upstream: the positional vector

    def __post_init__(self) -> None:
        if self.kind not in (JUDGED, REFUSED, RULE_DECIDED):
            raise ValueError(f"unknown adherence outcome {self.kind!r}")
        if (self.kind == RULE_DECIDED) != (self.judge is None) or (self.kind == REFUSED and self.judge):
            raise ValueError(f"a {self.kind} outcome with judge verdict {self.judge!r}")


@dataclass(frozen=True)
class Correctness:
    """The correctness item's outcome."""

    kind: str                 # judged | refused
    label: str | None         # judged: one of LABELS (None: upstream's reading found none); refused: None
    info: TaskInfo

    def __post_init__(self) -> None:
        if self.kind not in (JUDGED, REFUSED) or (self.label is not None and self.label not in LABELS):
            raise ValueError(f"unknown correctness outcome {self.kind!r} / {self.label!r}")


def adherence_details(record: Adherence) -> dict[str, Any]:
    """The record as an item's details (JSON); :func:`read_adherence` reads it back."""
    return {"outcome": record.kind, "constraint": record.constraint, "category": record.category,
            "judge": record.judge, "rule_verdict": record.rule, "task": record.info.as_details(),
            **({"upstream_vector": list(record.upstream_vector)} if record.upstream_vector is not None else {})}


def correctness_details(record: Correctness) -> dict[str, Any]:
    return {"outcome": record.kind, "label": record.label, "task": record.info.as_details()}


def _opt_bool(value: Any) -> bool | None:
    if value is None or isinstance(value, bool):
        return value
    raise ValueError("not a boolean")


def read_adherence(check: str, details: Any) -> Adherence | None:
    """The record of an adherence item (its position from the check name), or None
    when the details do not hold one (counted as an errored item)."""
    m = _ADHERENCE_CHECK.match(check)
    info = TaskInfo.read(details.get("task")) if isinstance(details, abc.Mapping) else None
    if m is None or info is None:
        return None
    try:
        vector = details.get("upstream_vector")
        if vector is not None and not (isinstance(vector, list) and all(isinstance(v, bool) for v in vector)):
            return None
        return Adherence(str(details.get("outcome")), int(m.group(1)), str(details.get("category", "?")),
                         _opt_bool(details.get("judge")), _opt_bool(details.get("rule_verdict")), info,
                         tuple(vector) if vector is not None else None)
    except (ValueError, TypeError):
        return None


def read_correctness(details: Any) -> Correctness | None:
    info = TaskInfo.read(details.get("task")) if isinstance(details, abc.Mapping) else None
    label = details.get("label") if info is not None else None
    if info is None or not (label is None or isinstance(label, str)):
        return None
    try:
        return Correctness(str(details.get("outcome")), label, info)
    except ValueError:
        return None


def _task_info(task: Any) -> TaskInfo:
    """A task's :class:`TaskInfo` from its data (``Task.data``), or an empty one."""
    data = getattr(task, "data", None)
    if not isinstance(data, abc.Mapping):
        return TaskInfo()
    constraints = data.get("_constraints") or ()
    return TaskInfo(str(data.get("source_dataset", "")), str(data.get("instruction_difficulty", "")), len(constraints))


@dataclass
class Sample:
    """One (task, sample): its records by constraint position, its correctness record."""

    task_id: str
    constraints: dict[int, Adherence] = field(default_factory=dict)
    correctness: Correctness | None = None
    unreadable: int = 0  # items whose details held no record (counted as errored)
    fallback: TaskInfo | None = None  # what the task says, for a sample without any record

    @property
    def info(self) -> TaskInfo:
        for r in (self.correctness, *self.constraints.values()):
            if r is not None:
                return r.info
        return self.fallback or TaskInfo()

    @property
    def n(self) -> int:
        return self.info.n_constraints

    @property
    def judge_asked(self) -> bool:
        """Whether a judge (or the refusal standing for it) was meant to decide this sample:
        a sample whose items were all decided by rules alone (no judge for its questions)
        or all skipped is not in the judge metrics' N.  A sample whose items all errored
        (no record at all) is: the judge was asked, the harness failed."""
        kinds = {r.kind for r in self.constraints.values()} | ({self.correctness.kind} if self.correctness else set())
        return not kinds or bool(kinds & {JUDGED, REFUSED})

    def vector(self) -> list[bool | None]:
        """The judge's adherence vector (refused: False; errored or rule-only: None)."""
        out: list[bool | None] = []
        for i in range(self.n):
            r = self.constraints.get(i)
            out.append(None if r is None else r.judge)
        return out

    def label(self) -> str | None:
        return self.correctness.label if self.correctness is not None else None

    def complete(self) -> bool:
        return self.n > 0 and None not in self.vector() and self.correctness is not None


def samples_of(results: Mapping[str, Sequence[Mapping[str, Any]]]) -> Iterable[Sample]:
    """Every (task, sample) of the results as a :class:`Sample`; never raises on what
    an item's details hold (an unreadable record is an errored item)."""
    for task_id, samples in results.items():
        for raw in samples if isinstance(samples, abc.Sequence) else ():
            sample = Sample(str(task_id))
            checks = raw.get("checks") if isinstance(raw, abc.Mapping) else None
            for check, details in (checks.items() if isinstance(checks, abc.Mapping) else ()):
                if str(check).startswith("adherence"):
                    record = read_adherence(str(check), details)
                    if record is None:
                        sample.unreadable += 1
                    else:
                        sample.constraints[record.constraint] = record
                elif check == "correctness":
                    record_c = read_correctness(details)
                    if record_c is None:
                        sample.unreadable += 1
                    else:
                        sample.correctness = record_c
            yield sample


def compute(results: Mapping[str, Sequence[Mapping[str, Any]]], denominator: str = "all",
            tasks: Mapping[str, Any] | None = None,
            parts: dict[str, dict[str, dict[str, int]]] | None = None) -> dict[str, Any]:
    """The metrics of paper §4.4 and ours over the samples of ``denominator`` (module
    docstring).  ``tasks`` (by id, as ``aggregate`` gets them) tell what a sample whose
    items all errored was about (its constraint count, source, difficulty).  ``parts``,
    when given, gets the per-task counts the pooled metrics are made of (:func:`pooled`)."""

    def part(name: str, task_id: str, value: int) -> None:
        if parts is not None:
            counts = parts.setdefault(name, {})
            counts[task_id] = counts.get(task_id, 0) + value

    if denominator not in DENOMINATORS:
        raise ValueError(f"denominator must be one of {DENOMINATORS}, got {denominator!r}")
    csr: dict[str, list[float]] = defaultdict(list)
    ssr: dict[str, list[float]] = defaultdict(list)
    c2a: dict[str, list[float]] = defaultdict(list)
    labels: dict[str, dict[str, list[float]]] = {l: defaultdict(list) for l in LABELS}
    hybrid_csr: dict[str, list[float]] = defaultdict(list)
    hybrid_ssr: dict[str, list[float]] = defaultdict(list)
    up_csr: dict[str, list[float]] = defaultdict(list)
    up_ssr: dict[str, list[float]] = defaultdict(list)
    cat_micro: dict[str, list[int]] = defaultdict(list)
    cat_macro: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    by: dict[str, dict[str, dict[str, list[float]]]] = {k: defaultdict(lambda: defaultdict(list))
                                                         for k in ("source", "difficulty", "count")}
    pairs: list[tuple[bool, bool]] = []
    rule_decided = judged = records = incomplete = refused = unreadable = without_judge = counted = 0
    no_verdict = no_label = upstream_answers = 0  # --cife-parse=upstream: answers its regex found nothing in
    for s in samples_of(results):
        task_id, info = s.task_id, s.info
        if not info.n_constraints and not s.constraints and s.correctness is None:
            info = s.fallback = _task_info((tasks or {}).get(task_id))  # every item errored: no record
        n = info.n_constraints
        unreadable += s.unreadable
        # rules and judge, constraint by constraint (ours): every record a rule decided
        records += len(s.constraints)
        for r in s.constraints.values():
            if r.rule is not None:
                rule_decided += 1
                if r.judge is not None and r.kind == JUDGED:
                    pairs.append((r.judge, r.rule))
                    for name, value in (("pairs", 1), ("pairs agreeing", r.judge == r.rule),
                                        ("pairs judge true", r.judge), ("pairs rule true", r.rule)):
                        part(name, task_id, int(value))
        if not s.judge_asked:
            without_judge += 1
            rules_only = [s.constraints.get(i) for i in range(n)]
            if n and all(r is not None and r.rule is not None for r in rules_only):
                hybrid_csr[task_id].append(float(all(r.rule for r in rules_only)))  # type: ignore[union-attr]
                hybrid_ssr[task_id].append(sum(bool(r.rule) for r in rules_only) / n)  # type: ignore[union-attr]
            continue
        refused += any(r.kind == REFUSED for r in s.constraints.values()) or (
            s.correctness is not None and s.correctness.kind == REFUSED)
        complete = s.complete()
        incomplete += not complete
        if not complete and denominator == "scored":
            continue
        counted += 1
        vector = s.vector()
        label = s.label()
        upstream = next((r.upstream_vector for r in s.constraints.values() if r.upstream_vector is not None), None)
        if upstream is not None:
            upstream_answers += 1
            no_verdict += not upstream
            no_label += s.correctness is not None and s.correctness.kind == JUDGED and label is None
        for l, store in labels.items():  # a missing or unreadable label counts as none of the three
            store[task_id].append(float(label == l))
        strict = float(n > 0 and all(v is True for v in vector))
        soft = sum(v is True for v in vector) / n if n else 0.0
        csr[task_id].append(strict)
        ssr[task_id].append(soft)
        c2a[task_id].append(float(strict == 1.0 and label == COMPLETELY))
        hybrid = []
        for i in range(n):
            r = s.constraints.get(i)
            if r is None:
                hybrid.append(False)
                continue
            judged += r.kind == JUDGED
            hybrid.append(bool(r.rule) if r.rule is not None else bool(r.judge))
            if r.judge is not None:
                cat_micro[r.category].append(int(r.judge))
                part(f"judged/{r.category}", task_id, 1)
                part(f"satisfied/{r.category}", task_id, int(r.judge))
                cat_macro[r.category][task_id].append(float(r.judge))
        hybrid_csr[task_id].append(float(bool(hybrid) and all(hybrid)))
        hybrid_ssr[task_id].append(sum(hybrid) / n if n else 0.0)
        if upstream is not None:  # IBM/CIFE compute_metrics: all([]) == 1, SSR over the vector's own length
            up_csr[task_id].append(float(all(upstream)))
            up_ssr[task_id].append(sum(upstream) / len(upstream) if upstream else 0.0)
        for key, value in (("source", info.source_dataset), ("difficulty", info.difficulty), ("count", str(n))):
            if not n:  # a sample whose task is not known: in the headline metrics, not in the breakdowns
                break
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
        "rule_decided_share": rule_decided / records if records else float("nan"),
        "rule_judge_agreement": (sum(a == b for a, b in pairs) / len(pairs)) if pairs else float("nan"),
        "rule_judge_kappa": cohen_kappa(pairs),
        "rule_decided": rule_decided,
        "constraints_recorded": records,  # rule_decided_share's denominator (its bootstrap sums both)
        "rule_judge_pairs": len(pairs),  # constraints both a rule and the judge decided
        "constraints_judged": judged,
        "samples_scored": counted,
        "samples_incomplete": incomplete,
        "samples_refused": refused,
        "samples_without_judge": without_judge,
        "records_unreadable": unreadable,
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


def _ratio(numerator: float, denominator: float) -> float:
    return numerator / denominator if denominator else float("nan")


def pooled(results: Mapping[str, Sequence[Mapping[str, Any]]], denominator: str = "all",
           tasks: Mapping[str, Any] | None = None) -> dict[str, tuple[Any, list[dict[str, int]]]]:
    """The metrics of :func:`compute` pooled over constraints rather than averaged over
    tasks, each as ``(reduce, parts)``: the metric is ``reduce`` of the parts' per-task
    counts summed over the tasks (``reports/stats.py``, ``pooled_metrics``: the bootstrap
    draws these sums instead of calling ``compute`` on every resample)."""
    parts: dict[str, dict[str, dict[str, int]]] = {}
    compute(results, denominator, tasks, parts)
    out: dict[str, tuple[Any, list[dict[str, int]]]] = {}
    for name in parts:
        if name.startswith("judged/"):
            cat = name.split("/", 1)[1]
            out[f"category_micro/{cat}"] = (_ratio, [parts[f"satisfied/{cat}"], parts[name]])
    if "pairs" in parts:
        counts = [parts[k] for k in ("pairs", "pairs agreeing", "pairs judge true", "pairs rule true")]
        out["rule_judge_agreement"] = (_ratio, [counts[1], counts[0]])
        out["rule_judge_kappa"] = (kappa_of_counts, counts)
    return out


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
    """One line when samples had no judge for their questions (issue #43), and one when
    upstream's reading scored answers in which it found no verdict: its CSR counts such
    an answer as fully satisfied (``all([]) == 1``), so a judge that answers nothing
    usable scores 100% (issue #32).  The scoring stays upstream's."""
    lines = []
    without = metrics.get("samples_without_judge") or 0
    if without:
        lines.append(f"{without} sample(s) had no judge for their questions (the recorded judgments answer only the "
                     f"answers they were recorded for): their judged items were skipped and they are not in the "
                     f"judge's metrics; give --judge-model=openai:NAME or --judge-model=replay:FILE.jsonl")
    none, labels = metrics.get("upstream_answers_without_verdict") or 0, metrics.get("upstream_answers_without_label") or 0
    if none or labels:
        lines.append(f"--cife-parse=upstream: {none} judge adherence answer(s) had no verdict (scored as all "
                     f"constraints satisfied, as upstream does) and {labels} correctness answer(s) had no label; "
                     f"--cife-parse=strict retries them or reports E")
    return lines


def metric_notes(metrics: Mapping[str, Any]) -> dict[str, str]:
    """What the report says next to a metric that reads n/a (and as its tooltip)."""
    notes = {"rule_judge_kappa": "Cohen's kappa, rules vs judge on the rule-decided constraints (Appendix D)"}
    if not metrics.get("samples_scored"):
        why = ("no sample was judged: no judge answered these answers' questions (--judge-model)"
               if metrics.get("samples_without_judge") else "no sample was judged")
        for name in ("csr", "ssr", "c2a", "completely_correct", "partially_correct", "wrong"):
            notes[name] = why
    kappa = metrics.get("rule_judge_kappa")
    if kappa is None or kappa != kappa:  # NaN: undefined
        pairs = metrics.get("rule_judge_pairs", metrics.get("rule_decided"))
        if not metrics.get("rule_decided"):
            notes["rule_judge_kappa"] += ": undefined here, no constraint was decided by a rule"
        elif not pairs:
            notes["rule_judge_kappa"] += ": undefined here, no constraint was decided by both a rule and the judge"
        else:
            notes["rule_judge_kappa"] += (f": undefined here, both gave one same verdict on all "
                                          f"{pairs} (kappa is 0/0; see rule_judge_agreement)")
    return notes
