"""What the search tiers (z3, CrossHair) share: the task as plain data, the
services a tier may use, and the concrete replay that turns a *candidate*
counterexample into a refutation.

A candidate comes from a solver model (z3) or from a process that ran the spec
(CrossHair): neither is evidence.  :func:`replay` runs the reference
implementation on the candidate's inputs (the family's sandboxed runner) and
the spec on the resulting case in the spec service
(:func:`pytest_specbench.pyspec.blocks.check_blocks`: a seccomp-confined child,
docs/nl2postcond.md), all candidates of a check in one job each; only what
that shows is a counterexample (issue #47: "a SAT model is replayed
concretely before it counts as a refutation").
"""
from __future__ import annotations

import ast
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


def observed_type(values: Sequence[Any]) -> str | None:
    """A type hint that every one of ``values`` has (bool, int, float, str, a list
    of such), or None (mixed, empty, or another kind)."""
    values = list(values)
    if not values:
        return None
    kinds = {type(v) for v in values}
    if kinds == {bool} or kinds == {int} or kinds == {str}:
        return kinds.pop().__name__
    if kinds == {float} or kinds == {int, float}:
        return "float"
    if kinds == {list}:
        inner = observed_type([x for v in values for x in v])
        return f"List[{inner}]" if inner else "list"
    return None


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


@dataclass
class Replayed:
    confirmed: list = field(default_factory=list)  # (Candidate, counterexample dict)
    unconfirmed: list = field(default_factory=list)  # (Candidate, why)


def same_value(args: tuple, a: Any, b: Any) -> bool:
    """Equal and of the same types (the default oracle)."""
    return wire.dumps(a) == wire.dumps(b)


def replay(services: TierServices, task: TierTask, spec: str, candidates: Sequence[Candidate],
           kill: str) -> Replayed:
    """Each candidate replayed concretely (module docstring): AC is refuted when
    the spec does not hold on the reference's own output; RW when the spec lets
    an output through that the family's oracle does not accept as the
    reference's (:class:`TierServices`)."""
    out = Replayed()
    if not candidates:
        return out
    calls = [tuple(c.inputs[p] for p in task.parameters) for c in candidates]
    observed = list(services.run_reference(calls))
    same = services.same_output or same_value
    valid = [True] * len(candidates)
    if task.precondition:
        pre = check_blocks(services.spec_executor, task.preamble, _dedented(task.precondition),
                           [{"inputs": dict(c.inputs), "return_value": None} for c in candidates],
                           timeout=REPLAY_SECONDS)
        valid = [o.kind == "holds" for o in pre]
    cases, owners = [], []
    for i, (cand, obs) in enumerate(zip(candidates, observed)):
        if not valid[i]:
            out.unconfirmed.append((cand, "the input breaks the task's precondition"))
        elif obs is None:
            out.unconfirmed.append((cand, "the reference raised or timed out on this input"))
        elif cand.relation is Relation.RW and same(calls[i], cand.return_value, obs[1]):
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
        if cand.relation is Relation.AC:
            if outcome.kind != "holds":
                out.confirmed.append((cand, {"inputs": cand.inputs, "return_value": reference_output,
                                             "why": f"the reference's output; the spec {what}"}))
            else:
                out.unconfirmed.append((cand, "the spec holds on the reference's output"))
        else:
            lets_through = outcome.kind == "holds" or (kill == "assertion" and outcome.kind == "raised")
            if lets_through:
                out.confirmed.append((cand, {"inputs": cand.inputs, "return_value": case["return_value"],
                                             "why": f"a wrong output (the reference returns {reference_output!r}) "
                                                    f"that the spec accepts"
                                                    + ("" if outcome.kind == "holds" else f" ({what})")}))
            else:
                out.unconfirmed.append((cand, f"the spec rejects this output ({what})"))
    return out


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
