"""Tier 4, ``z3``: a bounded proof of a postcondition Q relative to a reference
specification R (issue #47, tier 4), with the ContractEval family's
assert-to-z3 translator (``benchmarks/contract/synthesis/translate.py``, the
CVT synthesis of ContractEval §3.2) and ``return_value`` one more symbolic input:

* **AC** (Q accepts correct outputs; VERINA's *complete*, nl2postcond's
  *correct*) ⇔ UNSAT(P ∧ R ∧ ¬Q);
* **RW** (Q rejects wrong outputs; VERINA's *sound*, nl2postcond's *complete*)
  ⇔ UNSAT(P ∧ ¬R ∧ Q lets the output through),

P being the task's validity precondition (EvalPlus's contract asserts; none
for the bundled suite).  For a precondition P (:class:`Precondition`, ContractEval's
model-written asserts) against a reference precondition Pref (the task's
contract): **AV** ⇔ UNSAT(Pref ∧ ¬P), **RI** ⇔ UNSAT(P ∧ ¬Pref), over
parameters of any type (:func:`encode_pre`).  The search space at bound k: the entry point's
parameters and ``return_value`` of their type hints, containers and strings of
length 1..k (strings printable ASCII), ints within ±10^6, floats in quarters.
Bounds are iterated k = 1, 2, ... with small values tried first, so the first
counterexample is a small one.

* UNSAT at the largest bound, with a translation that is exact there, is
  PROVED(k).  *Exact* means the translator recorded no place where its
  encoding may differ from CPython (``Translator.inexact``: float rounding,
  unmodelled statements, equality of dicts, long ranges, ...), or every such
  place is unreachable within the bound (UNSAT of its condition).  Anything the
  translator does not translate is UNKNOWN: a PROVED from a loose translation
  would be a forged verdict.
* A SAT model is a *candidate*, replayed concretely (:mod:`.replay`): the
  reference implementation on its inputs, the spec on the case in the spec
  service.  Only a replayed candidate is REFUTED; else UNKNOWN.

No byte of the spec runs here: its text is parsed (``ast.parse``, the parser
the spec process compiles with) and evaluated symbolically.  A spec whose
translation exhausts the translator (deep nesting, recursion) is UNKNOWN.
"""
from __future__ import annotations

import ast
import os
import resource
import select
import time
from dataclasses import dataclass, replace
from typing import Any

import z3

from ...benchmarks.contract.synthesis.adt import (
    ALL_TAGS, BOOL, DICT, FLOAT, INT, LIST, NONE, STR, TUPLE, And, Bounds, Inputs, Not, Or, Unsupported, decode,
    describe,
)
from ...benchmarks.contract.synthesis.translate import TRUE, Poison, Translator, count_asserts
from ...execution import wire
from .replay import Candidate, TierServices, TierSettings, TierTask, _dedented, preamble_names, replay, type_hints
from .verdict import Relation, Status, TierVerdict

TIER = "z3"
POST_RELATIONS = (Relation.AC, Relation.RW)
PRE_RELATIONS = (Relation.AV, Relation.RI)
MAX_INT = 10**6
SMALL_INT = 20


# ---------------------------------------------------------------- type hints
_SCALARS = {"int": {INT}, "float": {FLOAT}, "str": {STR}, "bool": {BOOL}, "None": {NONE}}
_SEQUENCES = {"List": LIST, "list": LIST, "Tuple": TUPLE, "tuple": TUPLE}


def shape_of(annotation: ast.expr | None) -> tuple[frozenset | None, Any]:
    """The ``(tags, elements)`` of a type hint (:meth:`Inputs.fresh`), ``(None,
    None)`` (every type) when there is none or it is not modelled."""
    if annotation is None:
        return None, None
    if isinstance(annotation, ast.Constant) and annotation.value is None:
        return frozenset({NONE}), None
    if isinstance(annotation, ast.Name) and annotation.id in _SCALARS:
        return frozenset(_SCALARS[annotation.id]), None
    if isinstance(annotation, ast.Name) and annotation.id in _SEQUENCES:
        return frozenset({_SEQUENCES[annotation.id]}), (None, None)
    if isinstance(annotation, ast.Subscript) and isinstance(annotation.value, ast.Name):
        head, arg = annotation.value.id, annotation.slice
        args = list(arg.elts) if isinstance(arg, ast.Tuple) else [arg]
        if head in _SEQUENCES:
            if head in ("Tuple", "tuple"):
                shapes = {_key(shape_of(a)) for a in args if not (isinstance(a, ast.Constant) and a.value is ...)}
                elements = shape_of(args[0]) if len(shapes) == 1 else (None, None)
            else:
                elements = shape_of(args[0])
            return frozenset({_SEQUENCES[head]}), elements
        if head in ("Optional", "Union"):
            parts = [shape_of(a) for a in args] + ([(frozenset({NONE}), None)] if head == "Optional" else [])
            if any(t is None for t, _ in parts):
                return None, None
            containers = [p for p in parts if p[1] is not None]
            tags = frozenset().union(*(t for t, _ in parts))
            return tags, (containers[0][1] if len(containers) == 1 else (None, None) if containers else None)
    return None, None


def _key(shape):
    tags, el = shape
    return (tuple(sorted(tags)) if tags is not None else None, _key(el) if el is not None else None)


def _depth(shape) -> int:
    tags, elements = shape
    if tags is None:
        return 1
    if not tags & {LIST, TUPLE, DICT}:
        return 0
    return 1 + _depth(elements if elements is not None else (None, None))


def signature_shapes(task: TierTask) -> tuple[dict[str, tuple], tuple]:
    """Per parameter its shape, and the return value's (:func:`.replay.type_hints`)."""
    params, returns = type_hints(task)

    def shape(text: str | None):
        return shape_of(ast.parse(text, mode="eval").body) if text else (None, None)

    return {p: shape(t) for p, t in params.items()}, shape(returns)


# ---------------------------------------------------------------- translation
@dataclass
class Encoded:
    """One bound's encoding: the search space and each block's conditions."""

    bound: int
    inputs: Inputs
    syms: dict
    rv: Any
    pre: Any  # P holds
    ref_holds: Any  # R holds
    spec_holds: Any  # Q holds
    spec_violated: Any  # Q raises AssertionError first
    inexact: list  # (reason, condition)
    axioms: list
    ref_violated: Any = None  # a reference precondition raises AssertionError first (AV/RI)


class NotTranslated(Exception):
    """A block the translator does not translate (its category and detail)."""


def encode(task: TierTask, spec: str, reference_spec: str, bound: int) -> Encoded:
    shapes, returns = signature_shapes(task)
    depth = max([1, _depth(returns), *(_depth(s) for s in shapes.values())])
    allow_tuples = any(TUPLE in (t or ALL_TAGS) for t, _ in (returns, *shapes.values()))
    bounds = Bounds(slots=(bound,) * depth, max_str=bound, max_int=MAX_INT, small_int=SMALL_INT,
                    small_str=bound, small_len=bound, allow_tuples=allow_tuples)
    inputs = Inputs(bounds)
    syms = {p: inputs.fresh(p, 0, *shapes[p]) for p in task.parameters}
    rv = inputs.fresh("return_value", 0, *returns)
    tr = Translator(inputs, bounds)
    shadowed = {n: Poison("a name the task's preamble binds") for n in preamble_names(task.preamble)}

    def block(source: str, with_return: bool):
        return _translated(tr, source, {**shadowed, **syms, **({"return_value": rv} if with_return else {})})

    pre = block(_dedented(task.precondition), False)[0] if task.precondition else TRUE
    ref_holds, _ = block(reference_spec, True)
    spec_holds, spec_violated = block(spec, True)
    return Encoded(bound, inputs, syms, rv, pre, ref_holds, spec_holds, spec_violated, tr.inexact, tr.axioms)


def _translated(tr: Translator, source: str, env: dict):
    """A block's (holds, violated first by an AssertionError) over the symbols of ``env``."""
    try:
        stmts = ast.parse(source).body
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        raise NotTranslated(f"does not parse: {type(exc).__name__}") from None
    n = count_asserts(stmts)
    if n == 0:
        raise NotTranslated("no assert")
    try:
        models = tr.translate_block(stmts, dict(env), [f"assert_{k}" for k in range(n)], [""] * n)
    except (Unsupported, z3.Z3Exception, ValueError, TypeError, IndexError, AttributeError, KeyError,
            RecursionError) as exc:
        raise NotTranslated(f"{type(exc).__name__}: {exc}") from None
    bad = next((m for m in models if m.error is not None), None)
    if bad is not None:
        raise NotTranslated(str(bad.error))
    holds = And(*[m.satisfied for m in models], tr.tail_ok)
    violated, prefix = [], TRUE
    for m in models:
        violated.append(And(prefix, m.violated))
        prefix = And(prefix, m.satisfied)
    return holds, Or(*violated)


@dataclass(frozen=True)
class Precondition:
    """A model-written precondition as z3 reads it: its ``assert`` lines over its
    own parameter names (``params``, matched to the task's by position)."""

    asserts: str
    params: tuple[str, ...]


def encode_pre(task: TierTask, spec: Precondition, reference_pre: str, bound: int) -> Encoded:
    """The AV/RI encoding at bound k: every parameter of any type (an invalid input
    is often of another type than the hint's: the CVT synthesizer's space, ContractEval
    §3.2), containers of at most k elements two levels deep, strings of at most k."""
    bounds = Bounds(slots=(bound, bound), max_str=bound, max_int=MAX_INT, small_int=SMALL_INT, small_str=bound,
                    small_len=bound, allow_tuples=True)
    inputs = Inputs(bounds)
    syms = {p: inputs.fresh(p, 0) for p in task.parameters}
    tr = Translator(inputs, bounds)
    shadowed = {n: Poison("a name the task's preamble binds") for n in preamble_names(task.preamble)}
    if len(spec.params) != len(task.parameters):
        raise NotTranslated(f"the precondition's function takes {len(spec.params)} parameters, the task's "
                            f"{len(task.parameters)}")
    ref_holds, ref_violated = _translated(tr, _dedented(reference_pre), {**shadowed, **syms})
    mine = {**shadowed, **{m: syms[p] for m, p in zip(spec.params, task.parameters)}}
    spec_holds, spec_violated = _translated(tr, _dedented(spec.asserts), mine) if spec.asserts.strip() \
        else (TRUE, Not(TRUE))
    return Encoded(bound, inputs, syms, None, TRUE, ref_holds, spec_holds, spec_violated, tr.inexact, tr.axioms,
                   ref_violated)


# ---------------------------------------------------------------- the check
@dataclass
class Searched:
    """What the solver found, before any replay: per relation, candidates
    (SAT), a reason it is undecided, or neither (UNSAT and exact up to
    ``bound``: proved)."""

    bound: int
    candidates: dict
    unknown: dict

    def proved(self, relation: Relation) -> bool:
        return relation not in self.candidates and relation not in self.unknown


def search(task: TierTask, spec: Any, reference_spec: str, settings: TierSettings) -> Searched:
    """The solver's side of :func:`check`, in this process (no spec code runs):
    bounds 1..``settings.max_bound`` in turn until each relation has candidates
    or is undecided.  A :class:`Precondition` ``spec`` is searched for AV and RI
    against the reference precondition, a postcondition for AC and RW."""
    relations = PRE_RELATIONS if isinstance(spec, Precondition) else POST_RELATIONS
    encoder = encode_pre if isinstance(spec, Precondition) else encode
    deadline = time.monotonic() + settings.seconds
    open_relations = list(relations)
    found: dict[Relation, list[Candidate]] = {}
    unknown: dict[Relation, str] = {}
    reached = 0
    for bound in range(1, settings.max_bound + 1):
        try:
            enc = encoder(task, spec, reference_spec, bound)
        except NotTranslated as exc:
            return Searched(bound, {}, {r: f"not translated: {exc}" for r in relations})
        except RecursionError:
            return Searched(bound, {}, {r: "too deeply nested to translate" for r in relations})
        loose = _loose_reason(enc, deadline)
        for relation in list(open_relations):
            models = _models(enc, _goal(enc, relation, settings.kill), settings.candidates, deadline)
            if models is None:
                unknown[relation] = f"z3 gave no answer within {settings.seconds:g} s at bound {bound}"
                open_relations.remove(relation)
            elif models:
                found[relation] = [_candidate(enc, relation, m) for m in models]
                unknown.pop(relation, None)
                open_relations.remove(relation)
            elif loose:
                unknown[relation] = f"no counterexample up to bound {bound}, but the translation is not exact: {loose}"
        reached = bound
        if not open_relations:
            break
        if time.monotonic() > deadline:
            for relation in open_relations:
                unknown.setdefault(relation, f"no counterexample up to bound {bound} (time ran out)")
            break
    return Searched(reached, found, unknown)


MEMORY_BYTES = 2 << 30  # the search child's address space
# CPU seconds the search child may spend beyond the solver's budget (``settings.seconds``):
# the translation before the solver starts, the answer after it stops.
CPU_MARGIN_SECONDS = 3


def search_confined(task: TierTask, spec: Any, reference_spec: str, settings: TierSettings) -> Searched:
    """:func:`search` in a forked child with a CPU limit (the budget plus a margin)
    and an address-space limit: no spec code runs there either, but a spec whose
    translation explodes (nested comprehensions over long ranges) costs that
    child its limits, never the harness; it is then UNKNOWN.  The child answers
    in plain data (:mod:`~pytest_specbench.execution.wire`)."""
    cpu = int(settings.seconds) + CPU_MARGIN_SECONDS
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: compute, answer, never return into the caller's stack
        code = 1
        try:
            os.close(read_end)
            resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
            resource.setrlimit(resource.RLIMIT_AS, (MEMORY_BYTES, MEMORY_BYTES))
            found = search(task, spec, reference_spec, settings)
            answer = wire.dumps({"bound": found.bound, "unknown": {r.value: w for r, w in found.unknown.items()},
                                 "candidates": [[c.relation.value, c.inputs, c.return_value]
                                                for cs in found.candidates.values() for c in cs]})
            with os.fdopen(write_end, "w", encoding="utf-8") as out:
                out.write(answer)
            code = 0
        except BaseException:  # noqa: BLE001 - whatever it was, the parent reads no answer
            pass
        os._exit(code)
    os.close(write_end)
    chunks, deadline = [], time.monotonic() + 10 * cpu  # wall: a loaded machine
    with os.fdopen(read_end, "rb") as pipe:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([pipe], [], [], 1.0)
            if ready:
                chunk = os.read(pipe.fileno(), 1 << 20)
                if not chunk:
                    break
                chunks.append(chunk)
        else:
            os.kill(pid, 9)
    _, status = os.waitpid(pid, 0)
    relations = PRE_RELATIONS if isinstance(spec, Precondition) else POST_RELATIONS
    if status != 0 or not chunks:
        why = f"the translation or the solver exceeded its limits ({cpu} CPU s, {MEMORY_BYTES >> 30} GiB)"
        return Searched(0, {}, {r: why for r in relations})
    answer = wire.loads(b"".join(chunks).decode("utf-8"))
    candidates: dict = {}
    for relation, inputs, return_value in answer["candidates"]:
        candidates.setdefault(Relation(relation), []).append(Candidate(Relation(relation), inputs, return_value, TIER))
    return Searched(answer["bound"], candidates, {Relation(r): w for r, w in answer["unknown"].items()})


def check(services: TierServices, task: TierTask, spec: str, reference_spec: str | None,
          settings: TierSettings, precondition: Precondition | None = None) -> list[TierVerdict]:
    """AC and RW of ``spec`` (module docstring); with ``precondition`` (the same
    answer as z3 reads it; ``spec`` is then the block the sandbox runs), AV and
    RI relative to the reference precondition ``reference_spec``.  Never raises
    for the spec's sake."""
    relations = PRE_RELATIONS if precondition is not None else POST_RELATIONS
    if not reference_spec:
        return [TierVerdict(TIER, r, Status.UNKNOWN, reason="no reference specification for this task")
                for r in relations]
    searched = search_confined(task, precondition if precondition is not None else spec, reference_spec, settings)
    if precondition is not None:  # the reference precondition is the task's validity in the replay
        task = replace(task, precondition=reference_spec)
    replayed = replay(services, task, spec, [c for cs in searched.candidates.values() for c in cs], settings.kill)
    out = []
    for relation in relations:
        hit = next((ce for cand, ce in replayed.confirmed if cand.relation is relation), None)
        if hit is not None:
            out.append(TierVerdict(TIER, relation, Status.REFUTED, counterexample=hit, reason=hit["why"]))
        elif relation in searched.candidates:
            why = next((w for cand, w in replayed.unconfirmed if cand.relation is relation), "")
            out.append(TierVerdict(TIER, relation, Status.UNKNOWN, reason=f"z3's candidate did not replay ({why})"))
        elif relation in searched.unknown:
            out.append(TierVerdict(TIER, relation, Status.UNKNOWN, reason=searched.unknown[relation]))
        else:
            types = "values of any type, two levels deep" if precondition is not None \
                else "the hinted (else observed) types"
            out.append(TierVerdict(TIER, relation, Status.PROVED, bound=searched.bound,
                                   reason=f"lengths <= {searched.bound}, |ints| <= {MAX_INT}, floats in quarters, "
                                          f"printable-ASCII strings, {types}"))
    return out


def _goal(enc: Encoded, relation: Relation, kill: str):
    """The counterexample's condition: AC, R accepts and Q does not hold; RW, R
    rejects and Q lets the output through (holds; or, with the ``assertion``
    kill rule, raises something other than AssertionError).  AV: the reference
    precondition holds and P does not (UNSAT(Pref ∧ ¬P)); RI: the reference
    precondition rejects (AssertionError) and P lets the input through
    (UNSAT(P ∧ ¬Pref))."""
    lets_through = enc.spec_holds if kill == "any" else Not(enc.spec_violated)
    if relation is Relation.AC or relation is Relation.AV:
        return And(enc.pre, enc.ref_holds, Not(enc.spec_holds))
    if relation is Relation.RI:
        return And(enc.ref_violated, lets_through)
    return And(enc.pre, Not(enc.ref_holds), lets_through)


def _solver(enc: Encoded, deadline: float) -> z3.Solver:
    s = z3.Solver()
    s.set("timeout", max(1, int((deadline - time.monotonic()) * 1000)))
    s.add(*enc.inputs.domain, *enc.axioms)
    return s


def _loose_reason(enc: Encoded, deadline: float) -> str:
    """Why the translation may differ from CPython within this bound ("" if it cannot)."""
    for reason, where in enc.inexact:
        if z3.is_true(z3.simplify(where)):
            return reason
        s = _solver(enc, deadline)
        s.add(where)
        if s.check() != z3.unsat:
            return reason
    return ""


def _models(enc: Encoded, goal, count: int, deadline: float) -> list | None:
    """Up to ``count`` distinct models of ``goal`` (small values first), [] when
    UNSAT, None when z3 gave up."""
    s = _solver(enc, deadline)
    s.add(goal)
    small = z3.Bool("specbench:small")
    s.add(z3.Implies(small, And(*enc.inputs.small)))
    out = []
    everything = [*enc.syms.values(), *([enc.rv] if enc.rv is not None else [])]
    while len(out) < count:
        answer = s.check(small)
        if answer == z3.unsat:
            answer = s.check()
        if answer == z3.unsat:
            return out
        if answer != z3.sat:
            return out or None
        model = s.model()
        out.append(model)
        s.add(Not(And(*[c for v in everything for c in describe(v, decode(model, v))])))
    return out


def _candidate(enc: Encoded, relation: Relation, model) -> Candidate:
    return Candidate(relation, {p: decode(model, v) for p, v in enc.syms.items()},
                     decode(model, enc.rv) if enc.rv is not None else None, TIER)

