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
counts only after the harness replays it in fresh jobs: the reference's output
recomputed on the counterexample's input (the ``python`` executor), the
perturbed output checked wrong by :func:`outputs_match` (EvalPlus's oracle),
and the postcondition's outcome on it recomputed (:func:`check_blocks`).  A
claim whose case the replay does not confirm is UNKNOWN, never a refutation;
a postcondition that answers the confirmed case differently in the replay is
refuted for that (its outcome is no function of the values), unless the
search's answer was a time-out (the machine's: UNKNOWN).
"""
from __future__ import annotations

import hashlib
import json
from typing import Any, Mapping, Sequence

from ...execution import wire
from ...metrics.reducers import Declared, Mean
from ...pyspec.blocks import check_blocks
from ...pyspec.search import Found, contract_alphabet, parameter_trees, run_search
from ...pyspec.tiers.verdict import Relation, Status, TierVerdict, bounds
from ..base import CheckResult, Task
from ..contract.evalplus_data import canonical_program, outputs_match
from ..tier_options import DEFAULT_TIERS
from .answers import AnswerError, postcondition_text
from .observe import REFERENCE_CPU_FACTOR, as_case, observe
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
    refutation replayed in fresh jobs."""
    found = run_search(ctx.executor("command"), preamble(task), block, search_config(task, examples, seconds),
                       CASE_SECONDS, seconds + 30.0)
    claims = [f for f in found.values() if f.status == "refuted"]
    replayed = replay(ctx, task, block, claims) if claims else {}
    out = []
    for rel in RELATIONS:
        f = found[rel]
        if f.status == "passed":
            out.append(TierVerdict("pbt", Relation(rel), Status.PASSED, examples=f.tried))
        elif f.status == "unknown":
            out.append(TierVerdict("pbt", Relation(rel), Status.UNKNOWN, examples=f.tried, reason=f.reason))
        else:
            out.append(replayed[rel])
    return out


def replay(ctx: Any, task: Mapping[str, Any], block: str, claims: Sequence[Found]) -> dict[str, TierVerdict]:
    """Each claim checked again from scratch: the reference's output recomputed on
    the claim's input (one ``python`` job), the shown output judged by EvalPlus's
    oracle, the postcondition run on the case (one blocks job, a child per case)."""
    names = parameters(task)
    calls = [(tuple(f.before), {}) for f in claims]
    key = hashlib.sha256(wire.dumps([list(c[0]) for c in calls]).encode()).hexdigest()[:16]
    seen = observe(ctx.python_executor(), canonical_program(dict(task)), task,
                   f"{task['task_id']}:pbt-replay-{key}", calls,
                   ctx.settings.limits.call_cpu * REFERENCE_CPU_FACTOR)
    out: dict[str, TierVerdict] = {}
    cases, slots = [], []
    for f, obs in zip(claims, seen):
        rel = Relation(f.relation)
        if obs.status != "ok":
            out[f.relation] = TierVerdict("pbt", rel, Status.UNKNOWN, examples=f.tried,
                                          reason=f"not confirmed: the reference did not run on the search's "
                                                 f"input in the replay ({obs.status})")
            continue
        shown = obs.result if rel is Relation.AC else f.case["return_value"]
        if rel is Relation.RW and outputs_match(dict(task), list(f.before), shown, obs.result):
            out[f.relation] = TierVerdict("pbt", rel, Status.UNKNOWN, examples=f.tried,
                                          reason="not confirmed: EvalPlus's oracle accepts the perturbed output")
            continue
        cases.append(as_case(names, obs.args_after, shown))
        slots.append((f, obs, shown))
    outcomes = check_blocks(ctx.executor("command"), preamble(task), block, cases) if cases else []
    for (f, obs, shown), outcome in zip(slots, outcomes):
        rel = Relation(f.relation)
        example = {"inputs": {n: _plain(v) for n, v in zip(names, f.before)}, "return_value": _plain(shown)}
        if rel is Relation.AC and outcome.kind != "holds":
            what = "does not hold" if outcome.kind == "violated" else f"raised {outcome.exc_type or ''}".rstrip()
            why = f"{what} on the reference's output" + (f": {outcome.line}" if outcome.line else "")
            out[f.relation] = TierVerdict("pbt", rel, Status.REFUTED, examples=f.tried,
                                          counterexample={**example, "why": why}, reason=why)
        elif rel is Relation.RW and outcome.kind == "holds":
            why = f"accepts a wrong output (the reference gives {_short(obs.result)})"
            out[f.relation] = TierVerdict("pbt", rel, Status.REFUTED, examples=f.tried,
                                          counterexample={**example, "why": why}, reason=why)
        elif _timed_out(f.outcome or {}):  # the search's child ran out of time, the replay's did not: the machine
            out[f.relation] = TierVerdict("pbt", rel, Status.UNKNOWN, examples=f.tried,
                                          reason=f"not confirmed: a time-out in the search, {outcome.kind} in the replay")
        else:
            # The case is confirmed (the reference recomputed, the output judged by the oracle) and
            # the postcondition answered it both ways: it is no function of its values (a spec that
            # reads its pid or the clock), and its failure was observed in a sealed child.
            seen = (f.outcome or {}).get("kind", "?")
            why = (f"{'rejects a correct output' if rel is Relation.AC else 'accepts a wrong output'} in the search "
                   f"({seen}) but not in the replay ({outcome.kind}): its outcome on one case changes between runs")
            out[f.relation] = TierVerdict("pbt", rel, Status.REFUTED, examples=f.tried,
                                          counterexample={**example, "why": why}, reason=why)
    return out


def _timed_out(outcome: Mapping[str, Any]) -> bool:
    return outcome.get("kind") == "raised" and not outcome.get("exc") and "timeout" in str(outcome.get("line", ""))


def _plain(value: Any) -> Any:
    """Plain JSON data, exact (wire's tags for tuples, dicts with other keys, ...)."""
    return json.loads(wire.dumps(value))


def _short(value: Any, limit: int = 80) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[:limit - 3] + "..."


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
