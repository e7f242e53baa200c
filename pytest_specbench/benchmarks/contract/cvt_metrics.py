"""Quality metrics of contract-violating test (CVT) sets: AVC and TS.

ContractEval (Lim et al., arXiv 2510.12047; §3.4 "Evaluation metrics") judges a
CVT set against the reference program with contracts:

**AVC, Assert Violation Coverage** -- the share of CVTs that the reference
with its contract *rejects*, i.e. that raise ``AssertionError``::

    AVC = |{t in T : P_ref+contract(t) raises AssertionError}| / |T|

**TS, Target Specificity** -- whether a CVT violates the asserts it was built
to violate.  Each CVT ``t`` has an intended set ``V(t)`` (its SMT section) and
the set ``F(t)`` of asserts that raise ``AssertionError`` when run *alone*
(``fired_individually``).  Four readings are offered, selected by ``ts_mode``:

* ``"jaccard"`` (default, the paper's formula, §3.4 "CVT Quality Metrics"):
  the mean, over the tests that fire at least one assert
  (``T_neg = {t : |F(t)| > 0}``), of the Jaccard similarity
  ``|F(t) & V(t)| / |F(t) | V(t)|``.  An input that fires nothing is outside
  ``T_neg``: it lowers AVC, not TS.
* ``"exact"``: ``t`` is target-specific iff ``F(t) == V(t)``;
  ``TS = |{t : F(t) = V(t)}| / |T|`` over *all* CVTs (this module's default
  before the paper's text was read; kept as a stricter variant).
* ``"upstream"``: upstream's implementation (suhanmen/PACT,
  ``code/utils/evaluation_test_case_pass_k_for_grammar.py``,
  ``GrammarRewarder._compute_grammar_metrics``) scores every pair (CVT,
  intended assert) and averages over pairs:
  ``TS = sum_t |V(t) & F(t)| / sum_t |V(t)|``; unintended firings are not
  penalised.
* ``"all-intended"``: per CVT, all intended asserts fire (``V(t) <= F(t)``).

Upstream computes AVC the same way as defined above (per test case, full
contract must raise ``AssertionError``); the paper's AVC counts a test with
``|F(t)| > 0``, which is the same test for a contract of plain asserts.
``F(t)`` is measured one assert at a time, as upstream's labels are; the
paper's "the set of assertions violated when executing t" does not say how.
On the shared rebuilt set (6,121 CVTs) the readings give 78.11% (jaccard),
59.35% (exact) and 74.28% (upstream) from the data's labels.

Also reported: **task coverage** (tasks with at least one CVT; upstream's
rebuilt set: 463 of 475) and **assert coverage** (asserts fired individually by
at least one CVT of their task).

A CVT record is a dict with ``intended_violated`` and ``fired_individually``
(lists of ``assert_k``) and optionally ``full_contract`` (the outcome of the
reference with contracts, e.g. ``"AssertionError"``).  Records of the
``contracteval_rebuilt.jsonl`` schema have no ``full_contract``: every CVT
there was verified to raise ``AssertionError`` (see the data README), so a
missing field counts as rejected when at least one assert fires alone and as
not rejected otherwise; pass ``recheck`` results for exact figures.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Iterable, Mapping, Sequence

TS_MODES = ("jaccard", "exact", "upstream", "all-intended")


@dataclass
class TaskCvtMetrics:
    """AVC/TS figures of one task's CVT set (counts, so aggregates stay exact)."""

    task_id: str
    n_asserts: int
    n_cvts: int
    rejected: int  # CVTs the reference with contracts rejects with AssertionError
    specific: float  # TS numerator: summed Jaccard, specific CVTs, or pairs (ts_mode="upstream")
    ts_denominator: int  # CVTs of T_neg (jaccard), all CVTs, or intended pairs (upstream)
    asserts_covered: list = field(default_factory=list)

    @property
    def avc(self) -> float | None:
        return self.rejected / self.n_cvts if self.n_cvts else None

    @property
    def ts(self) -> float | None:
        return self.specific / self.ts_denominator if self.ts_denominator else None


def _rejected(cvt: Mapping) -> bool:
    outcome = cvt.get("full_contract")
    if outcome is not None:
        return outcome == "AssertionError"
    return bool(cvt.get("fired_individually"))


def task_metrics(task_id: str, cvts: Sequence[Mapping], contracts: Mapping | Sequence,
                 ts_mode: str = "jaccard") -> TaskCvtMetrics:
    """AVC and TS (ContractEval §3.4) of one task's CVTs; ``contracts`` names its asserts."""
    if ts_mode not in TS_MODES:
        raise ValueError(f"ts_mode must be one of {', '.join(TS_MODES)}")
    names = list(contracts)
    known = set(names)
    rejected = specific = denom = 0
    covered: set = set()
    for cvt in cvts:
        intended = set(cvt.get("intended_violated") or ())
        fired = set(cvt.get("fired_individually") or ())
        unknown = (intended | fired) - known
        if unknown:
            raise ValueError(f"{task_id}: CVT names asserts the task does not have: {sorted(unknown)}")
        rejected += _rejected(cvt)
        covered |= fired
        if ts_mode == "jaccard":
            if fired:  # t is in T_neg
                specific += len(fired & intended) / len(fired | intended)
                denom += 1
        elif ts_mode == "upstream":
            specific += len(intended & fired)
            denom += len(intended)
        else:
            ok = fired == intended if ts_mode == "exact" else intended <= fired
            specific += ok and bool(intended)
            denom += 1
    return TaskCvtMetrics(task_id, len(names), len(cvts), rejected, specific, denom,
                          [n for n in names if n in covered])


def aggregate(tasks: Iterable[TaskCvtMetrics]) -> dict:
    """Set-level figures: micro averages over all CVTs (pairs), plus task and assert coverage."""
    tasks = list(tasks)
    n_cvts = sum(t.n_cvts for t in tasks)
    ts_den = sum(t.ts_denominator for t in tasks)
    n_asserts = sum(t.n_asserts for t in tasks)
    return {
        "tasks": len(tasks),
        "tasks_with_cvt": sum(1 for t in tasks if t.n_cvts),
        "task_coverage": (sum(1 for t in tasks if t.n_cvts) / len(tasks)) if tasks else None,
        "cvts": n_cvts,
        "avc": (sum(t.rejected for t in tasks) / n_cvts) if n_cvts else None,
        "ts": (sum(t.specific for t in tasks) / ts_den) if ts_den else None,
        "asserts": n_asserts,
        "asserts_covered": sum(len(t.asserts_covered) for t in tasks),
        "assert_coverage": (sum(len(t.asserts_covered) for t in tasks) / n_asserts) if n_asserts else None,
    }


def set_metrics(rows: Iterable[Mapping], ts_mode: str = "jaccard", cvt_key: str = "cvts") -> tuple[list, dict]:
    """Per-task metrics and the aggregate for rows of the contracteval_rebuilt schema."""
    per_task = [task_metrics(r["task_id"], r.get(cvt_key) or [], r.get("contracts") or {}, ts_mode) for r in rows]
    return per_task, aggregate(per_task)


def as_dict(m: TaskCvtMetrics) -> dict:
    d = asdict(m)
    d["avc"], d["ts"] = m.avc, m.ts
    return d


# ------------------------------------------------------- generated CVT sets
def generated_cvt_metrics(results: Mapping, check: str = "violations") -> dict:
    """AVC and TS (§3.4) of CVT sets a model wrote (ContractEval §6.2 task).

    ``results`` is ``{task_id: [{"index": i, "checks": {check: details}}]}`` where
    ``details["cvts"]`` lists ``[intended, fired_individually, rejected]`` per
    proposed input (see :mod:`pytest_specbench.benchmarks.contract.contract_cvt`).  Each
    sample's set is scored with :func:`task_metrics` and pooled with
    :func:`aggregate` (micro averages over inputs), once per TS reading:
    ``ts`` is the paper's (``jaccard``: mean Jaccard over the inputs that fire
    an assert), ``ts_exact`` the share of all inputs whose firing set is exactly
    the intended one, ``ts_upstream`` upstream's pair average.
    ``all_rejected``: share of a task's samples whose every input is rejected,
    averaged over tasks.  ``answers_parsed``: share of samples with a usable answer.
    """
    by_mode: dict = {mode: [] for mode in ("jaccard", "exact", "upstream")}
    parsed = answered = 0
    per_task_all = []
    for task_id, samples in results.items():
        flags = []
        for sample in samples:
            details = (sample.get("checks") or {}).get(check)
            if not isinstance(details, Mapping):
                continue
            answered += 1
            if details.get("parsed") is False:
                flags.append(0.0)
                continue
            parsed += 1
            rows = details.get("cvts")
            if not isinstance(rows, list):
                # a result without per-input rows (e.g. a synthetic probe): counts only
                flags.append(1.0 if details.get("passed") else 0.0)
                continue
            flags.append(1.0 if rows and all(r[2] for r in rows) else 0.0)
            names = sorted({n for r in rows for n in list(r[0]) + list(r[1])})
            cvts = [{"intended_violated": r[0], "fired_individually": r[1],
                     "full_contract": "AssertionError" if r[2] else "other"} for r in rows]
            for mode in by_mode:
                by_mode[mode].append(task_metrics(f"{task_id}#{sample.get('index', 0)}", cvts, names, mode))
        if flags:
            per_task_all.append(sum(flags) / len(flags))
    ts = {mode: aggregate(per_sample) for mode, per_sample in by_mode.items()}
    exact = ts["exact"]
    metrics = {
        "avc": exact["avc"],
        "ts": ts["jaccard"]["ts"],
        "ts_exact": exact["ts"],
        "ts_upstream": ts["upstream"]["ts"],
        "all_rejected": sum(per_task_all) / len(per_task_all) if per_task_all else None,
        "answers_parsed": parsed / answered if answered else None,
        "cvts_proposed": exact["cvts"],
        "samples": answered,
    }
    return {k: v for k, v in metrics.items() if v is not None}
