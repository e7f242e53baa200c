"""nl2postcond's tiers of evidence (issue #47; docs/tiers.md): ``corpus`` is the
family's own ``correct`` and ``complete`` checks (the benchmark's test inputs
and the buggy programs' recorded outputs), ``pbt`` searches beyond them with
Hypothesis (:mod:`pytest_specbench.pyspec.search`).  Each tier is a check of
its own, selected with ``--spec-tiers``; an item is F when a relation is
REFUTED, its one line the shrunk counterexample.

The ``pbt`` check: valid inputs from the signature's type hints (HumanEval+'s;
a parameter without a hint gets the types of the task's test inputs), filtered
by EvalPlus's ``contract`` asserts; AC on the reference's outputs, RW on
perturbations of them that EvalPlus's oracle does not accept.  A refutation
counts only after the harness replays it in fresh jobs (the one replay of every
tier, :func:`pytest_specbench.pyspec.tiers.replay.replay`): the reference's
output recomputed on the counterexample's input (the ``python`` executor), the
perturbed output checked wrong by EvalPlus's oracle, and the postcondition's
outcome on it recomputed in the spec service.  A
claim whose case the replay does not confirm is UNKNOWN, never a refutation;
a postcondition that answers the confirmed case differently in the replay is
refuted for that (its outcome is no function of the values), unless the
search's answer was a time-out (the machine's: UNKNOWN).
"""
from __future__ import annotations

from typing import Any, Mapping, Sequence

from ...metrics.reducers import Declared, Mean
from ...pyspec.search import contract_alphabet, parameter_trees, run_search, verdicts_of
from ...pyspec.tiers.replay import replay
from ...pyspec.tiers.verdict import Status, TierVerdict, bounds
from ..base import CheckResult, Task
from ..contract.evalplus_data import canonical_program
from ..tier_options import DEFAULT_TIERS
from . import tier_checks
from .answers import AnswerError, postcondition_text
from .tasks import parameters, preamble

CORPUS_CHECKS = ("correct", "complete")
TIER_CHECKS = {"pbt": ("pbt",), "crosshair": ("crosshair",), "z3": ("z3",)}  # each tier's checks (crosshair, z3: tier_checks.py)
RELATIONS = ("AC", "RW")
SEARCH_SECONDS = 40.0  # the keeper's budget for the whole search (both relations)
CASE_SECONDS = 0.2  # per case in a spec child (upstream's floor per input)
CALL_SECONDS = 1.0  # per reference call in the search


def checks(selected: Sequence[str] | None) -> tuple[str, ...]:
    """The checks of the selected tiers, in tier order (``corpus`` first: later
    tiers may read it)."""
    chosen = tuple(selected) if selected else DEFAULT_TIERS
    out: list[str] = []
    for tier in chosen:
        out += CORPUS_CHECKS if tier == "corpus" else TIER_CHECKS.get(tier, ())
    return tuple(dict.fromkeys(out))


def unbuilt(selected: Sequence[str] | None) -> tuple[str, ...]:
    """One warning naming the selected tiers this family has no check for."""
    missing = [t for t in (selected or ()) if t != "corpus" and t not in TIER_CHECKS]
    return (f"--spec-tiers: no {', '.join(missing)} tier for nl2postcond here (it has: corpus, "
            f"{', '.join(TIER_CHECKS)}); nothing runs for it",) if missing else ()


def search_config(task: Mapping[str, Any], examples: int, seconds: float = SEARCH_SECONDS) -> dict[str, Any]:
    """What the keeper needs (plain data): the reference, parameters and their
    type trees, the validity contract, the oracle, the budget."""
    names = parameters(task)
    trees = parameter_trees(task["prompt"], task["entry_point"], [list(i) for i in task.get("base_input") or ()])
    atol = float(task.get("atol") or 0)
    oracle: dict[str, Any] = {"atol": atol}
    if task["task_id"].startswith("HumanEval") and task["entry_point"] == "find_zero":
        oracle = {"kind": "poly_root", "function": "poly", "atol": atol}  # EvalPlus's special oracle
    return {"program": canonical_program(dict(task)), "entry_point": task["entry_point"], "params": names,
            "types": {n: trees.get(n, "any") for n in names}, "contract": task.get("contract") or "",
            "alphabet": contract_alphabet(task.get("contract") or ""),
            "oracle": oracle, "examples": int(examples), "seconds": float(seconds), "call_seconds": CALL_SECONDS,
            "relations": list(RELATIONS)}


def pbt_check(task: Task, sample: Any, ctx: Any) -> CheckResult:
    try:
        block = postcondition_text(sample.text)
    except AnswerError as exc:
        return CheckResult(False, {"parse_error": str(exc)}, f"no postcondition: {exc}")
    examples = int(ctx.option("spec_pbt_examples") or 100)
    verdicts = search_and_replay(ctx, task.data, block, examples)
    return result_of(verdicts, examples)


def search_and_replay(ctx: Any, task: Mapping[str, Any], block: str, examples: int,
                      seconds: float = SEARCH_SECONDS) -> list[TierVerdict]:
    """The pbt tier's verdict per relation: the keeper's search, then every claimed
    refutation replayed in fresh jobs (:func:`pytest_specbench.pyspec.tiers.replay.replay`:
    the reference's output recomputed on the claim's input, a shown output judged
    by EvalPlus's oracle, the postcondition run on the case again)."""
    kill = ctx.option("nl2postcond_kill") or "any"
    found = run_search(ctx.executor("command"), preamble(task), block,
                       {**search_config(task, examples, seconds), "kill": kill}, CASE_SECONDS, seconds + 30.0)
    return verdicts_of("pbt", found, RELATIONS, parameters(task),
                       lambda claims: replay(tier_checks.services(task, ctx), tier_checks.tier_task(task), block,
                                             claims, kill))


def result_of(verdicts: Sequence[TierVerdict], examples: int) -> CheckResult:
    details = {"tiers": [v.as_dict() for v in verdicts], "examples": examples}
    refuted = [v for v in verdicts if v.status is Status.REFUTED]
    if refuted:
        return CheckResult(False, details, refuted[0].line())
    return CheckResult(True, details)


# ------------------------------------------------------------------ metrics

def _corpus_statuses(checks: Mapping[str, Any]) -> dict[str, Status]:
    """The corpus tier's status per relation, from the family's own checks: AC is
    test-set correctness (its test inputs), RW is completeness (the corpus's bad
    outputs; UNKNOWN where it was not judged: not correct, or no corpus)."""
    out: dict[str, Status] = {}
    correct = checks.get("correct")
    if correct is not None and not correct.get("error"):
        out["AC"] = Status.PASSED if correct.get("test_set_correct", correct.get("passed")) else Status.REFUTED
    complete = checks.get("complete")
    if complete is not None and not complete.get("error"):
        if complete.get("applicable"):
            out["RW"] = Status.PASSED if complete.get("complete") else Status.REFUTED
        else:
            out["RW"] = Status.UNKNOWN
    return out


def statuses(checks: Mapping[str, Any], tier: str) -> dict[str, Status]:
    """One sample's status per relation in ``tier`` (absent: the tier did not run)."""
    if tier == "corpus":
        return _corpus_statuses(checks)
    found = checks.get(tier)
    if found is None or found.get("error"):
        return {}
    return {d["relation"]: Status(d["status"]) for d in found.get("tiers", ()) if d.get("tier") == tier}


def _bound(tier: str, rel: str, upper: bool):
    def score(item: list[Mapping[str, Any]]) -> float | None:
        found = [statuses(s, tier).get(rel) for s in item]
        found = [s for s in found if s is not None]
        return bounds(found)[1 if upper else 0] if found else None
    return score


def reducers(tiers: Sequence[str]) -> tuple[Mean, ...]:
    """Per tier and relation, the lower (UNKNOWN fails) and upper (UNKNOWN holds)
    share of samples the relation holds for, averaged per task, then over tasks:
    ``pbt:RW_lower`` ..."""
    return tuple(Mean(f"{tier}:{rel}_{side}", _bound(tier, rel, side == "upper"))
                 for tier in tiers if tier == "corpus" or tier in TIER_CHECKS
                 for rel in RELATIONS for side in ("lower", "upper"))


def declared(base: Declared, tiers: Sequence[str] | None) -> Declared:
    """The family's metrics (``base``: they read samples with a ``correct``
    result) and the tiers' bounds (any sample with a tier's result)."""
    def item(samples: Sequence[Mapping[str, Any]]):
        checks = [s["checks"] for s in samples]
        return checks or None

    def only_corpus(score):
        def wrapped(item):
            kept = [c for c in item if "correct" in c]
            return score(kept) if kept else None
        return wrapped

    kept = tuple(Mean(r.name, only_corpus(r.score), r.every) if isinstance(r, Mean) else r for r in base.reducers)
    return Declared(item=item, reducers=(*kept, *reducers(tuple(tiers) if tiers else DEFAULT_TIERS)))
