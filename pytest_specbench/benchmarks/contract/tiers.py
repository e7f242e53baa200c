"""ContractEval's tiers of evidence about a model-written precondition (issue
#47, docs/tiers.md): where the prompt asks for contract asserts (the ``cs`` and
``eas`` conditions, ContractEval §4.2), the answer's precondition is judged on
its own, apart from the function's body:

* ``pre_corpus``: **RI** on the task's contract-violating tests (CVTs,
  ContractEval §3.2), **AV** on its valid test inputs (HumanEval+/MBPP+
  ``base_input`` and ``plus_input``);
* ``pre_pbt``: **AV** on inputs Hypothesis draws from the signature's type hints,
  filtered by the task's contract; **RI** on inputs that break exactly one of its
  asserts (:mod:`pytest_specbench.pyspec.pbt_keeper`, in the job's keeper);
* ``pre_z3``: AV ⇔ UNSAT(Pref ∧ ¬P) and RI ⇔ UNSAT(P ∧ ¬Pref) at a bound, Pref
  the task's reference contract (:mod:`pytest_specbench.pyspec.tiers.z3_tier`).

The precondition P of an answer: the leading ``assert`` statements of its entry
point (after a docstring), as the reference's contract block stands
(``reference_with_contracts``).  In the sandbox P runs as the answer's
sanitized module with the entry point's body cut to those asserts, called with
the case's inputs by position (the answer's own parameter names): a spec child
of the Python-spec service (:mod:`pytest_specbench.pyspec.blocks`), never this
process.  A case is rejected as ``--contract-rejection`` says (AssertionError;
or also a ValueError/TypeError).  Every refutation of pbt and z3 is replayed in
a fresh job (:func:`pytest_specbench.pyspec.tiers.replay.replay`); the corpus
tier's outcomes are the sandbox's own.
"""
from __future__ import annotations

import ast
import random
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from ...pyspec.blocks import check_blocks
from ...pyspec.search import contract_alphabet, parameter_trees, run_search, verdicts_of
from ...pyspec.tiers.replay import TierServices, TierSettings, TierTask, rejects, replay
from ...pyspec.tiers.verdict import Relation, Status, TierVerdict, bounds
from ..base import CheckResult
from ..tier_options import DEFAULT_TIER_SECONDS, DEFAULT_Z3_BOUND
from .sanitize import quiet_parse


def entry_parameters(row: Mapping[str, Any]) -> list[str] | None:
    from .contract import entry_parameters as of_reference  # late: contract.py imports this module

    return of_reference(row)

TIER_CHECKS = {"corpus": "pre_corpus", "pbt": "pre_pbt", "z3": "pre_z3"}  # tier -> its check
RELATIONS = ("AV", "RI")
SEARCH_SECONDS = 40.0  # the keeper's budget for the whole search (both relations)
CASE_SECONDS = 0.2  # per case in a spec child
CORPUS_BATCH = 8  # cases per spec child in the corpus tier (in a random order)
KILL = {"assert": "assertion", "assert-or-raise": "assert-or-raise"}  # --contract-rejection -> the tiers' rule


DEFAULT = ("corpus",)  # the family's own default: pre_pbt costs a search job per sample (opt-in)


def checks(selected: Sequence[str] | None, condition: str | None) -> tuple[str, ...]:
    """The tier checks of a run: none under the ``standard`` prompt (it asks for no
    precondition), else one per selected tier this family has (``--spec-tiers``
    unset, None: :data:`DEFAULT`)."""
    if (condition or "standard") == "standard":
        return ()
    return tuple(TIER_CHECKS[t] for t in (selected or DEFAULT) if t in TIER_CHECKS)


def unbuilt(selected: Sequence[str] | None, condition: str | None) -> tuple[str, ...]:
    missing = [t for t in (selected or ()) if t not in TIER_CHECKS]
    if not missing or (condition or "standard") == "standard":
        return ()
    return (f"--spec-tiers: no {', '.join(missing)} tier for contract's preconditions here (it has: "
            f"{', '.join(TIER_CHECKS)}); nothing runs for it",)


class NoPrecondition(Exception):
    """The answer has no entry point to read a precondition from (one line)."""


@dataclass(frozen=True)
class ModelPrecondition:
    block: str  # what a spec child runs: the module, the entry point cut to its asserts, the call
    asserts: str  # the leading asserts alone (z3 reads these)
    params: tuple[str, ...]  # the entry point's own parameter names


CALL = "__specbench_precondition"


def precondition_of(code: str, entry_point: str, task_params: Sequence[str]) -> ModelPrecondition:
    """The answer's precondition (module docstring); parses, never runs."""
    try:
        tree = quiet_parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        raise NoPrecondition(f"the answer does not parse ({type(exc).__name__})") from None
    fn = next((n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
               and n.name == entry_point), None)
    if fn is None:
        raise NoPrecondition(f"the answer defines no {entry_point}")
    body = list(fn.body)
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
            and isinstance(body[0].value.value, str):
        body = body[1:]
    leading = []
    for stmt in body:
        if not isinstance(stmt, ast.Assert):
            break
        leading.append(stmt)
    args = fn.args
    params = tuple(a.arg for a in (*args.posonlyargs, *args.args))
    # The entry point as a plain function of its parameters that runs the asserts only: no
    # decorator, no annotation (they would run at definition), its defaults kept.
    for a in (*args.posonlyargs, *args.args, *args.kwonlyargs):
        a.annotation = None
    for a in (args.vararg, args.kwarg):
        if a is not None:
            a.annotation = None
    cut = ast.FunctionDef(name=CALL, args=args, body=[*leading, ast.Return(ast.Constant(None))], decorator_list=[],
                          returns=None)
    others = [n for n in tree.body if n is not fn]
    call = ast.Expr(ast.Call(ast.Name(CALL, ast.Load()), [ast.Name(p, ast.Load()) for p in task_params], []))
    module = ast.fix_missing_locations(ast.Module(body=[*others, cut, call], type_ignores=[]))
    try:
        block = ast.unparse(module)
        asserts = "\n".join(ast.unparse(a) for a in leading)
    except (ValueError, RecursionError, MemoryError) as exc:
        raise NoPrecondition(f"the answer's precondition could not be read ({type(exc).__name__})") from None
    return ModelPrecondition(block, asserts, params)


def task_parameters(row: Mapping[str, Any]) -> list[str]:
    """The entry point's parameter names in the reference (the names cases carry; an
    MBPP prompt has no ``def``)."""
    return entry_parameters(row) or []


def preamble(row: Mapping[str, Any]) -> str:
    """What a precondition sees besides its module: the reference's imports (benchmark text)."""
    return "\n".join(ast.unparse(n) for n in quiet_parse(row["reference_with_contracts"]).body
                     if isinstance(n, (ast.Import, ast.ImportFrom)))


def tier_task(row: Mapping[str, Any]) -> TierTask:
    return TierTask(str(row["task_id"]), str(row["entry_point"]), tuple(task_parameters(row)),
                    row["reference_with_contracts"], preamble(row), str(row.get("contract") or ""))


def _no_reference(calls):  # AV/RI replays run no reference implementation
    raise AssertionError("a precondition's replay runs no reference implementation")


def services(ctx: Any) -> TierServices:
    return TierServices(ctx.executor("command"), _no_reference)


def run_tier(check: str, row: Mapping[str, Any], evalplus_task: Mapping[str, Any], code: str,
             ctx: Any) -> CheckResult:
    names = task_parameters(row)
    try:
        pre = precondition_of(code, row["entry_point"], names)
    except NoPrecondition as exc:
        return CheckResult(False, {"no_precondition": str(exc)}, f"no precondition: {exc}")
    kill = KILL.get(ctx.option("contract_rejection") or "assert", "assertion")
    if check == "pre_corpus":
        verdicts = corpus_verdicts(ctx, row, evalplus_task, pre, names, kill)
    elif check == "pre_pbt":
        examples = int(ctx.option("spec_pbt_examples") or 100)
        verdicts = pbt_verdicts(ctx, row, evalplus_task, pre, names, kill, examples)
    else:
        from ...pyspec.tiers import z3_tier

        settings = TierSettings(max_bound=ctx.option("spec_z3_bound") or DEFAULT_Z3_BOUND,
                                seconds=ctx.option("spec_tier_seconds") or DEFAULT_TIER_SECONDS, kill=kill)
        verdicts = z3_tier.check(services(ctx), tier_task(row), pre.block, row.get("contract") or "", settings,
                                 precondition=z3_tier.Precondition(pre.asserts, pre.params))
    return result_of(verdicts, pre)


def corpus_verdicts(ctx: Any, row: Mapping[str, Any], evalplus_task: Mapping[str, Any], pre: ModelPrecondition,
                    names: Sequence[str], kill: str) -> list[TierVerdict]:
    """RI on the CVTs, AV on the valid test inputs: one job, the cases in a random
    order (``SystemRandom``) in children of :data:`CORPUS_BATCH` cases, so that no
    position says which kind a case is."""
    invalid = [{p: cvt["input"][p] for p in names} for cvt in row["cvts"] if all(p in cvt["input"] for p in names)]
    valid = [dict(zip(names, args)) for args in [*evalplus_task.get("base_input", ()),
                                                 *evalplus_task.get("plus_input", ())]]
    cases = [("RI", i) for i in invalid] + [("AV", v) for v in valid]
    random.SystemRandom().shuffle(cases)
    batches = [list(range(k, min(k + CORPUS_BATCH, len(cases)))) for k in range(0, len(cases), CORPUS_BATCH)]
    blocks = [{"inputs": inputs, "return_value": None} for _, inputs in cases]
    outcomes = check_blocks(ctx.executor("command"), preamble(row), pre.block, blocks, CASE_SECONDS,
                            timeout=30.0 + CASE_SECONDS * len(cases), batches=batches)
    # A child that ran out of time leaves the rest of its batch unanswered ("timeout" too): those
    # cases run again, each in a child of its own, so one case's time-out is no other case's verdict.
    again = [i for i, o in enumerate(outcomes) if o.kind == "raised" and not o.exc_type and "timeout" in o.line]
    if again:
        alone = check_blocks(ctx.executor("command"), preamble(row), pre.block, [blocks[i] for i in again],
                             CASE_SECONDS, timeout=30.0 + 3 * CASE_SECONDS * len(again))
        outcomes = list(outcomes)
        for i, o in zip(again, alone):
            outcomes[i] = o
    out = []
    for rel, failed_when in (("AV", lambda o: o.kind != "holds"), ("RI", lambda o: not rejects(o.kind, o.exc_type, kill))):
        mine = [(inputs, o) for (r, inputs), o in zip(cases, outcomes) if r == rel]
        if not mine:
            why = "the task has no contract-violating tests" if rel == "RI" else "the task has no valid test inputs"
            out.append(TierVerdict("corpus", Relation(rel), Status.UNKNOWN, reason=why))
            continue
        failing = [(inputs, o) for inputs, o in mine if failed_when(o)]
        if not failing:
            out.append(TierVerdict("corpus", Relation(rel), Status.PASSED, examples=len(mine)))
            continue
        inputs, o = failing[0]
        what = "violated" if o.kind == "violated" else f"raised {o.exc_type or o.line}".rstrip()
        why = (f"rejects a valid test input ({what}); {len(failing)} of {len(mine)}" if rel == "AV" else
               f"lets a contract-violating test through ({o.kind}); {len(failing)} of {len(mine)}")
        out.append(TierVerdict("corpus", Relation(rel), Status.REFUTED, examples=len(mine),
                               counterexample={"inputs": inputs, "why": why}, reason=why))
    return out


def pbt_verdicts(ctx: Any, row: Mapping[str, Any], evalplus_task: Mapping[str, Any], pre: ModelPrecondition,
                 names: Sequence[str], kill: str, examples: int, seconds: float = SEARCH_SECONDS) -> list[TierVerdict]:
    """The keeper's search for AV and RI, every claimed refutation replayed."""
    contract = row.get("contract") or ""
    trees = parameter_trees(row["reference_with_contracts"], row["entry_point"],
                            [list(i) for i in evalplus_task.get("base_input") or ()])
    config = {"params": list(names), "types": {n: trees.get(n, "any") for n in names}, "contract": contract,
              "alphabet": contract_alphabet(contract), "examples": int(examples), "seconds": float(seconds),
              "call_seconds": 1.0, "relations": list(RELATIONS), "kill": kill}
    found = run_search(ctx.executor("command"), preamble(row), pre.block, config, CASE_SECONDS, seconds + 30.0)
    return verdicts_of("pbt", found, RELATIONS, names,
                       lambda claims: replay(services(ctx), tier_task(row), pre.block, claims, kill))


def result_of(verdicts: Sequence[TierVerdict], pre: ModelPrecondition) -> CheckResult:
    details = {"tiers": [{**v.as_dict(), "line": v.line()} for v in verdicts],
               **{v.relation.value: v.status.value for v in verdicts}, "asserts": pre.asserts.count("\n") + 1
               if pre.asserts else 0}
    refuted = [v for v in verdicts if v.status is Status.REFUTED]
    if refuted:
        line = " ".join("; ".join(v.line() for v in refuted).split())
        return CheckResult(False, details, line if len(line) <= 400 else line[:397] + "...")
    return CheckResult(True, details)


def tier_metrics(results: Mapping[str, Sequence[Mapping[str, Any]]], checks_run: Sequence[str]) -> dict[str, Any]:
    """Per tier check and relation, ``pre_pbt:RI_lower`` (UNKNOWN fails) and
    ``pre_pbt:RI_upper`` (UNKNOWN holds): the share of samples the relation holds
    for, per task, then over tasks (None where no sample has the check)."""
    out: dict[str, Any] = {}
    for check in checks_run:
        for rel in RELATIONS:
            per_task = {0: [], 1: []}
            for samples in results.values():
                found = [d.get(rel) for s in samples for d in [s.get("checks", {}).get(check) or {}]
                         if d.get(rel) and not d.get("error")]
                if found:
                    for side, share in enumerate(bounds(found)):
                        per_task[side].append(share)
            for side, name in ((0, "lower"), (1, "upper")):
                values = per_task[side]
                out[f"{check}:{rel}_{name}"] = sum(values) / len(values) if values else None
    return out
