"""What the search tiers (pbt, z3, CrossHair) share: the task as plain data,
the services a tier may use, and the one concrete replay that turns a
*candidate* counterexample into a refutation.

A candidate comes from a solver model (z3), from a process that ran the spec
(CrossHair) or from the pbt keeper's search (a claim, with the outcome its
sealed child gave): none of them is evidence.  :func:`replay` runs the reference
implementation on the candidate's inputs (the family's sandboxed runner) and
the spec on the resulting case in the spec service
(:func:`pytest_specbench.pyspec.blocks.check_blocks`: a seccomp-confined child,
docs/nl2postcond.md), all candidates of a check in one job each; only what
that shows is a counterexample (issue #47: "a SAT model is replayed
concretely before it counts as a refutation").
"""
from __future__ import annotations

import ast
import json
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

from ...execution import wire
from ..blocks import check_blocks
from .verdict import Relation

REPLAY_SECONDS = 30.0  # per replay job


@dataclass(frozen=True)
class TierTask:
    """A task as the tiers see it (plain data; the family builds it)."""

    task_id: str
    entry_point: str
    parameters: tuple[str, ...]
    signature: str  # source holding ``def entry_point(...)`` with its type hints
    preamble: str = ""  # what a spec sees besides the inputs and return_value (benchmark text)
    precondition: str = ""  # the task's validity asserts over the inputs ("" when none)
    program: str = ""  # the reference implementation's source (defines entry_point)
    # Type hints (source text) for what the def leaves unhinted, by parameter name and "return":
    # what the family observed (e.g. the types of the test inputs and of the reference's outputs).
    observed_types: Mapping[str, str] = field(default_factory=dict)

    @staticmethod
    def from_mapping(data: Mapping[str, Any]) -> "TierTask":
        return TierTask(str(data["task_id"]), str(data["entry_point"]), tuple(data["parameters"]),
                        str(data["signature"]), str(data.get("preamble", "")), str(data.get("precondition", "")),
                        str(data.get("program", "")))


def type_hints(task: TierTask) -> tuple[dict[str, str | None], str | None]:
    """Per parameter, and for the return value, a type hint's source text: the
    entry point's own, else the observed one, else None."""
    observed = dict(task.observed_types)
    for node in ast.walk(ast.parse(task.signature)):
        if isinstance(node, ast.FunctionDef) and node.name == task.entry_point:
            own = {a.arg: ast.unparse(a.annotation) for a in (*node.args.posonlyargs, *node.args.args)
                   if a.annotation is not None}
            returns = ast.unparse(node.returns) if node.returns is not None else observed.get("return")
            return {p: own.get(p) or observed.get(p) for p in task.parameters}, returns
    return {p: observed.get(p) for p in task.parameters}, observed.get("return")


@dataclass(frozen=True)
class TierServices:
    """What a tier may use: the ``command`` executor (the spec service's jobs);
    ``run_reference(calls)``, the family's sandboxed run of the reference
    implementation: per argument tuple, ``(arguments after the call, result)``,
    or None when it raised or timed out; and ``same_output(args, output,
    expected)``, the family's oracle (does ``output`` count as the reference's
    ``expected`` on ``args``?), by default equality of value and type."""

    spec_executor: Any
    run_reference: Callable[[Sequence[tuple]], Sequence[tuple[tuple, Any] | None]]
    same_output: Callable[[tuple, Any, Any], bool] | None = None


@dataclass(frozen=True)
class TierSettings:
    max_bound: int = 3  # z3: container and string lengths 1..max_bound
    seconds: float = 20.0  # per check: z3's solver budget, CrossHair's search
    kill: str = "assertion"  # a wrong output is rejected by AssertionError (assertion) or any exception (any)
    candidates: int = 3  # candidates replayed per relation


@dataclass
class Candidate:
    relation: Relation
    inputs: dict  # by parameter name, before the call
    return_value: Any = None  # RW: the wrong output proposed; AC: unused (the reference's output is replayed)
    source: str = ""  # which search proposed it
    # The pbt tier's claim: the outcome a sealed spec child gave on this very case in the search.
    # The replay must agree with it, or the spec's outcome is no function of the values.
    claimed: Mapping[str, Any] | None = None


@dataclass
class Replayed:
    confirmed: list = field(default_factory=list)  # (Candidate, counterexample dict)
    unconfirmed: list = field(default_factory=list)  # (Candidate, why)


ACCEPTING = (Relation.AC, Relation.AV)  # a relation whose case the spec must let through
PRECONDITION = (Relation.AV, Relation.RI)  # relations of a precondition (cases of inputs only)


def rejects(kind: str, exc: str, kill: str) -> bool:
    """Does a spec's outcome reject its case?  ``assertion``: an AssertionError
    only (a crash, a time-out lets the case through); ``any``: any exception;
    ``assert-or-raise``: also a ValueError or TypeError (ContractEval's
    ``--contract-rejection``; by the exception's name: the child that ran the
    spec reports it, and it speaks for its own case only)."""
    if kind == "violated":
        return True
    if kind != "raised":
        return False
    return kill == "any" or (kill == "assert-or-raise" and exc in ("ValueError", "TypeError"))


def same_value(args: tuple, a: Any, b: Any) -> bool:
    """Equal and of the same types (the default oracle)."""
    return wire.dumps(a) == wire.dumps(b)


def plain(value: Any) -> Any:
    """Plain JSON data, exact (wire's tags for tuples, dicts with other keys, ...)."""
    return json.loads(wire.dumps(value))


def replay(services: TierServices, task: TierTask, spec: str, candidates: Sequence[Candidate],
           kill: str) -> Replayed:
    """Each candidate replayed concretely (module docstring), the one replay of
    every tier: AC is refuted when the spec does not hold on the reference's own
    output; RW when the spec lets through an output that the family's oracle
    does not accept as the reference's (:class:`TierServices`); AV when the spec
    (a precondition) does not hold on an input the task's validity asserts
    admit; RI when it lets through an input they reject (AssertionError).  A
    candidate with a ``claimed`` outcome (pbt) that the replay answers the other
    way is refuted for that, unless the claim was a time-out (the machine's)."""
    out = Replayed()
    if not candidates:
        return out
    post = [c for c in candidates if c.relation not in PRECONDITION]
    calls = [tuple(c.inputs[p] for p in task.parameters) for c in post]
    observed = dict(zip(map(id, post), services.run_reference(calls))) if post else {}
    same = services.same_output or same_value
    valid = {id(c): "holds" for c in candidates}
    if task.precondition:
        pre = check_blocks(services.spec_executor, task.preamble, _dedented(task.precondition),
                           [{"inputs": dict(c.inputs), "return_value": None} for c in candidates],
                           timeout=REPLAY_SECONDS)
        valid = {id(c): o.kind for c, o in zip(candidates, pre)}
    cases, owners = [], []
    for cand in candidates:
        inputs = tuple(cand.inputs[p] for p in task.parameters)
        if cand.relation is Relation.RI:
            if valid[id(cand)] != "violated":
                out.unconfirmed.append((cand, "the task's precondition does not reject this input"))
                continue
            cases.append({"inputs": dict(cand.inputs), "return_value": None})
            owners.append((cand, None))
            continue
        if valid[id(cand)] != "holds":
            out.unconfirmed.append((cand, "the input breaks the task's precondition"))
            continue
        if cand.relation is Relation.AV:
            cases.append({"inputs": dict(cand.inputs), "return_value": None})
            owners.append((cand, None))
            continue
        obs = observed[id(cand)]
        if obs is None:
            out.unconfirmed.append((cand, "the reference raised or timed out on this input"))
        elif cand.relation is Relation.RW and same(inputs, cand.return_value, obs[1]):
            out.unconfirmed.append((cand, "the proposed wrong output is the reference's"))
        else:
            args_after, result = obs
            value = result if cand.relation is Relation.AC else cand.return_value
            cases.append({"inputs": dict(zip(task.parameters, args_after)), "return_value": value})
            owners.append((cand, result))
    outcomes = check_blocks(services.spec_executor, task.preamble, spec, cases, timeout=REPLAY_SECONDS) \
        if cases else []
    for (cand, reference_output), case, outcome in zip(owners, cases, outcomes):
        what = "violated" if outcome.kind == "violated" else f"raised {outcome.exc_type}".rstrip()
        accepting = cand.relation in ACCEPTING
        failed = outcome.kind != "holds" if accepting else not rejects(outcome.kind, outcome.exc_type, kill)
        example = {"inputs": {n: plain(v) for n, v in cand.inputs.items()},
                   "return_value": plain(case["return_value"])}
        if cand.relation is Relation.AC:
            why = f"the reference's output; the spec {what}"
        elif cand.relation is Relation.RW:
            why = (f"a wrong output (the reference returns {_short(reference_output)}) that the spec accepts"
                   + ("" if outcome.kind == "holds" else f" ({what})"))
        elif cand.relation is Relation.AV:
            why = f"a valid input; the precondition {what}"
        else:
            why = "an invalid input that the precondition accepts" + ("" if outcome.kind == "holds" else f" ({what})")
        if cand.relation in PRECONDITION:
            example.pop("return_value")
        if failed:
            out.confirmed.append((cand, {**example, "why": why}))
            continue
        claim = cand.claimed
        if claim is None:
            out.unconfirmed.append((cand, {Relation.AC: "the spec holds on the reference's output",
                                           Relation.RW: f"the spec rejects this output ({what})",
                                           Relation.AV: "the precondition holds on this valid input",
                                           Relation.RI: f"the precondition rejects this input ({what})"}[cand.relation]))
        elif _timed_out(claim):  # the search's child ran out of time, the replay's did not: the machine
            out.unconfirmed.append((cand, f"a time-out in the search, {outcome.kind} in the replay"))
        else:
            # The case is confirmed (the reference recomputed, the output judged by the oracle) and
            # the spec answered it both ways: it is no function of its values (a spec that reads
            # its pid or the clock), and its failure was observed in a sealed child.
            why = (f"{'rejects' if accepting else 'lets through'} this case in the search ({claim.get('kind', '?')}) "
                   f"but not in the replay ({outcome.kind}): its outcome on one case changes between runs")
            out.confirmed.append((cand, {**example, "why": why}))
    return out


def _timed_out(outcome: Mapping[str, Any]) -> bool:
    return outcome.get("kind") == "raised" and not outcome.get("exc") and "timeout" in str(outcome.get("line", ""))


def _short(value: Any, limit: int = 80) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _dedented(block: str) -> str:
    """A precondition block as EvalPlus gives it (indented ``assert`` lines)."""
    import textwrap

    return textwrap.dedent(block.strip("\n"))


def preamble_names(preamble: str) -> set[str]:
    """Names the preamble binds (imports, defs, classes, assignments): a spec
    sees these, not the builtins of the same name."""
    names: set[str] = set()
    for node in ast.parse(preamble).body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        else:
            names.update(n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store))
    return names
