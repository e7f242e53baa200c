"""Enumerate violation subsets and solve them with z3 (ContractEval §3.2).

For a task with supported asserts ``A``, every non-empty subset ``V`` of ``A``
is one SMT section: the asserts in ``V`` are *violated* (evaluate cleanly to a
falsy value), the others *satisfied*.  UNSAT sections are dropped; for a SAT
section up to ``K`` distinct models are decoded into keyword arguments.

Solver assumptions steer the models without excluding anything:

* ``natural``: no ``None``, ``bool`` or ``dict`` values (violations by a value
  of a common type are the ones a reference without contract can still run);
* ``small``: ints within ±20, strings of at most 3 characters, lists of at most
  3 items -- readable tests, fast reference runs;
* one *pin* per parameter that no violated assert reads: the parameter takes a
  known valid value (an EvalPlus input), so that the reference without its
  contract can still run (§3.2 feasibility filter).

When assumptions make a section UNSAT, z3's unsat core names them and the
least important one in the core is dropped for that section (``natural``
first, then ``small``, then pins).  Models are made distinct by blocking clauses: first
on the *shape* (types and lengths) so that the K candidates differ in type
structure, then on exact values.

:class:`CandidateSearch` also serves the counterexample-guided rounds of the
pipeline (the §3.2 feasibility filter in the loop): a section whose models all
crashed the reference without contract is asked again under the steering
flavours of :data:`STEERS`, never proposing an input twice.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any

import z3

from .adt import DICT, FLOAT, INT, LIST, STR, And, Implies, Not, Or, decode, describe, tag_in
from .translate import ContractModel


@dataclass
class Candidate:
    """One decoded model: a call that should violate exactly ``intended``."""

    input: dict
    intended: list
    smt_section: str
    case_index: int


@dataclass
class SolveStats:
    subsets: int = 0
    sat: int = 0
    unsat: int = 0
    unknown: int = 0  # solver timeouts / gave up
    skipped: int = 0  # not tried: the task's time budget ran out
    models: int = 0
    unknown_sections: list = field(default_factory=list)


def section_label(satisfied: list, violated: list) -> str:
    """Upstream's SMT section key, e.g. ``satisfied_assert_1, violated_assert_0;assert_2``."""
    return f"satisfied_{';'.join(satisfied)}, violated_{';'.join(violated)}"


def make_solver(model: ContractModel, timeout_ms: int) -> z3.Solver:
    s = z3.Solver()
    s.set("timeout", int(timeout_ms))
    s.add(*model.inputs.domain)
    s.add(*model.axioms)
    return s


def pin_literals(solver: z3.Solver, model: ContractModel, examples: dict | None) -> dict:
    """One assumption literal per parameter pinned to its example value."""
    lits = {}
    for p, value in (examples or {}).items():
        sym = model.params.get(p)
        if sym is None:
            continue
        eqs = describe(sym, value)
        if any(z3.is_false(e) for e in eqs):
            continue  # the example does not fit the bounded ADT
        lit = z3.Bool(f"pin:{p}")
        solver.add(Implies(lit, And(*eqs)))
        lits[p] = lit
    return lits


def enumerate_candidates(model: ContractModel, k_models: int = 3, timeout_ms: int = 2000,
                         examples: dict | None = None, deadline: float | None = None,
                         max_subset_size: int | None = None) -> tuple[list[Candidate], SolveStats]:
    """All non-empty violation subsets of the supported asserts, up to ``k_models`` each."""
    search = CandidateSearch(model, timeout_ms, examples)
    out: list[Candidate] = []
    for section in search.sections(max_subset_size):
        if deadline is not None and time.monotonic() > deadline:
            search.stats.skipped += 1
            continue
        out.extend(search.first_models(section, k_models))
    return out, search.stats


@dataclass
class Section:
    """One violation subset (an SMT section) and what the search has tried for it."""

    label: str
    violated: list  # AssertModel
    tried: list = field(default_factory=list)  # every input proposed so far
    crashed: list = field(default_factory=list)  # inputs the plain reference raised on
    blocks: list = field(default_factory=list)  # value-blocking clauses of tried[:len(blocks)]
    status: str = "pending"  # sat / unsat / unknown once first_models ran


# Steering of the counterexample-guided rounds (ContractEval §3.2 feasibility filter in
# the loop).  When every model of a section crashes the reference without contract, the
# section is asked again under one of these "flavours", in this order.  Each flavour is
# a set of assumption literals, dropped one by one (first listed, first dropped) when an
# unsat core names them, so a flavour steers and never excludes a violation.  Why these:
# the crashes seen on ContractEval come from a value of the wrong *kind* reaching an
# operation (a str in arithmetic, a negative number in ``range``/``str(n)`` digit code,
# a list where one of several params is a number); values the reference tolerates are
# numbers where numbers are expected (a float for an int), ints out of range before
# floats (``[11, 3]`` for digits, where a float breaks ``int(str(x))``), numeric elements,
# non-negative or negative numbers, strings made of digits or of the valid input's
# characters (``"12"`` for an int that the body reads as ``str(n)``: most digit-code
# references), parameters of one common type (``max("a", "b")``), a list of the
# valid value's kind of element (``["A"]`` for a str), and tiny values (``range(0)``
# loops that do not run).
STEERS = (
    ("valid-like", ("no_floats", "kind", "nonneg", "numeric_leaves", "alphabet"), True),
    ("same-type", ("homogeneous", "nonneg", "alphabet"), False),
    ("element-like", ("element_kind", "nonneg", "alphabet"), True),
    ("digit-strings", ("as_str", "alphabet"), True),
    ("negative", ("kind", "negative"), False),
    ("tiny", ("tiny", "alphabet"), False),
    ("new-shapes", ("avoid_crashed_shapes",), False),
)


def _kind(value) -> set | None:
    """Type tags of the "kind" of a valid value: number, str, list or dict."""
    if isinstance(value, (int, float)):
        return {INT, FLOAT}
    if isinstance(value, str):
        return {STR}
    if isinstance(value, (list, tuple)):
        return {LIST}
    if isinstance(value, dict):
        return {DICT}
    return None


def _example_alphabet(examples: dict | None) -> set:
    """Digits plus the characters of the valid input's strings (nested values too)."""
    chars = set(range(ord("0"), ord("9") + 1))
    stack = list((examples or {}).values())
    while stack:
        v = stack.pop()
        if isinstance(v, str):
            chars.update(ord(c) for c in v if 32 <= ord(c) <= 126)
        elif isinstance(v, (list, tuple)):
            stack.extend(v)
        elif isinstance(v, dict):
            stack.extend(v.keys())
            stack.extend(v.values())
    return chars


class CandidateSearch:
    """The solver of one task, queried section by section and round by round.

    ``first_models`` is the plain enumeration (steered by ``natural``/``small``
    and pins, see the module docstring); ``more_models`` asks one section again
    under a steering flavour of :data:`STEERS`, excluding every input tried for
    it so far (and, in the last flavour, the shapes on which the reference crashed).
    """

    def __init__(self, model: ContractModel, timeout_ms: int = 2000, examples: dict | None = None,
                 round_rlimit: int = 2_000_000):
        self.model = model
        self.round_rlimit = round_rlimit
        self.solver = solver = make_solver(model, timeout_ms)
        self.stats = SolveStats()
        self.supported = [a for a in model.asserts if a.supported]
        inputs = model.inputs
        self.lits: dict = {}
        self._alphabet = _example_alphabet(examples)
        for name, cons in (("small", inputs.small), ("natural", inputs.natural)):
            lit = z3.Bool(name)
            solver.add(Implies(lit, And(*cons)))
            self.lits[name] = lit
        # The steering constraints are asserted only inside a round's scope: present in
        # every check, even behind a free literal, they slow the plain enumeration down.
        self.steering = {"nonneg": inputs.nonneg, "negative": inputs.negative, "tiny": inputs.tiny,
                         "numeric_leaves": inputs.numeric_leaves, "no_floats": inputs.no_floats}
        self.pins = pin_literals(solver, model, examples)
        # "kind" steering: a parameter keeps the kind of its valid value (a number stays a
        # number, a list a list); one literal per parameter so a conflict drops only its own
        self.kinds = []
        # "element-like": the elements of a parameter have the kind of its valid value's
        # elements, or of the valid value itself (a list of strs where a str is expected:
        # ``["A"]`` still has ``x[0].isupper()``)
        self.element_kinds = []
        for p, value in sorted((examples or {}).items()):
            sym = model.params.get(p)
            if sym is None:
                continue
            tags = _kind(value)
            if tags and tags & sym.tags:
                self.kinds.append((z3.Bool(f"kind:{p}"), tag_in(sym, tags)))
            inner = _kind(value[0]) if isinstance(value, (list, tuple)) and value else tags
            if inner and sym.items and LIST in sym.tags:
                self.element_kinds.append((z3.Bool(f"element-kind:{p}"),
                                           And(sym.tag == LIST, *[tag_in(x, inner) for x in sym.items])))
        self._rounds = 0

    def sections(self, max_subset_size: int | None = None) -> list:
        out = []
        for size in range(1, (max_subset_size or len(self.supported)) + 1):
            for combo in combinations(self.supported, size):
                self.stats.subsets += 1
                satisfied = [a.name for a in self.supported if a not in combo]
                out.append(Section(section_label(satisfied, [a.name for a in combo]), list(combo)))
        return out

    def _enter(self, section: Section, relaxed: bool = False) -> None:
        self.solver.push()
        first = min(self.supported.index(a) for a in section.violated)
        for i, a in enumerate(self.supported):
            if a in section.violated:
                self.solver.add(a.violated)
            elif relaxed and i > first:
                # Python never evaluates an assert after one that fired: it may also be one
                # that would raise (``n >= 0`` for ``n = "12"`` after ``isinstance(n, int)``).
                # It still does not fire alone, so the intended set stays exact.
                self.solver.add(Or(a.satisfied, Not(a.ok)))
            else:
                self.solver.add(a.satisfied)

    def _free_pins(self, section: Section) -> list:
        free = set(self.model.params) - set().union(*[a.params for a in section.violated])
        return [self.pins[p] for p in sorted(free) if p in self.pins]

    def first_models(self, section: Section, k: int) -> list:
        """Up to ``k`` models of ``section`` (the plain, unguided enumeration)."""
        self._enter(section)
        # in the order they are given up
        assumptions = [self.lits["natural"], self.lits["small"]] + self._free_pins(section)
        found, status = _models(self.solver, self.model, assumptions, k)
        self.solver.pop()
        if status == "unknown" and not found:
            self.stats.unknown += 1
            self.stats.unknown_sections.append(section.label)
            section.status = "unknown"
        elif not found:
            self.stats.unsat += 1
            section.status = "unsat"
        else:
            self.stats.sat += 1
            section.status = "sat"
        section.tried.extend(found)
        self.stats.models += len(found)
        return self._candidates(section, found)

    def more_models(self, section: Section, k: int, steer: tuple) -> list:
        """Up to ``k`` new models of ``section`` steered by one entry of :data:`STEERS`."""
        _name, lit_names, use_pins = steer
        self._enter(section, relaxed=True)
        # never propose an input twice (clauses built once: building them is costly in z3's API)
        section.blocks.extend(_block(self.model, kw, shape_only=False) for kw in section.tried[len(section.blocks):])
        self.solver.add(*section.blocks)
        self._rounds += 1
        assumptions = []
        for name in lit_names:
            if name == "avoid_crashed_shapes":
                # only as a flavour of its own: blocking the shape "float" would also
                # block the negative float that a value flavour is looking for
                lit = z3.Bool(f"avoid-crashed-shapes:{self._rounds}")
                self.solver.add(Implies(lit, And(*[_block(self.model, kw, shape_only=True)
                                                   for kw in section.crashed])))
                assumptions.append(lit)
            elif name == "as_str":
                # one literal per parameter: a parameter that cannot be a str drops only its own
                for p in sorted(set().union(*[a.params for a in section.violated])):
                    sym = self.model.params.get(p)
                    if sym is not None and STR in sym.tags:
                        lit = z3.Bool(f"as-str:{p}:{self._rounds}")
                        self.solver.add(Implies(lit, sym.tag == STR))
                        assumptions.append(lit)
            elif name in ("kind", "element_kind"):
                for lit, cond in (self.kinds if name == "kind" else self.element_kinds):
                    self.solver.add(Implies(lit, cond))
                    assumptions.append(lit)
            elif name == "homogeneous":
                lit = z3.Bool(f"homogeneous:{self._rounds}")
                params = sorted(set().union(*[a.params for a in section.violated]))
                syms = [self.model.params[p] for p in params if p in self.model.params]
                self.solver.add(Implies(lit, And(*[syms[0].tag == s.tag for s in syms[1:]])))
                assumptions.append(lit)
            else:
                if name == "alphabet" and name not in self.steering:  # built when first needed
                    extra = sorted(self._alphabet - set(range(ord("0"), ord("9") + 1)))
                    self.steering[name] = [
                        z3.Implies(z3.And(is_str, j < ln),
                                   z3.Or(z3.And(c >= ord("0"), c <= ord("9")), *[c == x for x in extra]))
                        for is_str, ln, codes in self.model.inputs.strings for j, c in enumerate(codes)]
                lit = z3.Bool(f"{name}:{self._rounds}")
                self.solver.add(Implies(lit, And(*self.steering[name])))
                assumptions.append(lit)
        assumptions += [self.lits["natural"], self.lits["small"]]
        if use_pins:
            assumptions += self._free_pins(section)
        # Value blocking only (no shape phase: proving "no new shape" is an UNSAT check,
        # the expensive kind), under a deterministic resource limit instead of a timeout
        # so that the rounds give the same models on a loaded machine.
        self.solver.set("rlimit", self.round_rlimit)
        try:
            found, _status = _models(self.solver, self.model, assumptions, k, shape_first=False)
        finally:
            self.solver.set("rlimit", 0)
            self.solver.pop()
        section.tried.extend(found)
        self.stats.models += len(found)
        return self._candidates(section, found)

    def _candidates(self, section: Section, found: list) -> list:
        start = len(section.tried) - len(found)
        intended = [a.name for a in section.violated]
        return [Candidate(kwargs, intended, section.label, start + idx) for idx, kwargs in enumerate(found, 1)]


def _models(solver: z3.Solver, model: ContractModel, assumptions: list, k: int,
            shape_first: bool = True) -> tuple[list, str]:
    """Up to ``k`` distinct models; the status says whether the search ended early."""
    found: list[dict] = []
    shape_phase = shape_first
    solver.push()  # shape-blocking clauses live in this scope
    status = "done"
    while len(found) < k:
        r = solver.check(*assumptions)
        if r == z3.unknown:
            status = "unknown"
            break
        if r == z3.unsat:
            core = {str(c) for c in solver.unsat_core()}
            culprit = next((a for a in assumptions if str(a) in core), None)
            if culprit is not None:
                # an assumption was in the way: give up the least important one, retry
                assumptions = [a for a in assumptions if a is not culprit]
                continue
            if shape_phase and found:
                # no new shapes left: allow same shapes with other values
                shape_phase = False
                solver.pop()
                solver.push()
                for f in found:
                    solver.add(_block(model, f, shape_only=False))
                continue
            break
        m = solver.model()
        kwargs = {p: decode(m, sym) for p, sym in model.params.items()}
        found.append(kwargs)
        solver.add(_block(model, kwargs, shape_only=shape_phase))
    solver.pop()
    return found, status


def _block(model: ContractModel, kwargs: dict, shape_only: bool):
    eqs = []
    for p, sym in model.params.items():
        eqs.extend(describe(sym, kwargs[p], shape_only=shape_only))
    return Not(And(*eqs))


class ConcreteChecker:
    """What the encoding says about concrete calls (used by the tests to compare with CPython).

    ``verdicts(kwargs)`` gives per assert ``"pass"``, ``"fail"`` (raises
    ``AssertionError`` when run alone), ``"error"`` (raises something else, or
    is outside the modelled space), ``"unsupported"``, or ``"ambiguous"`` (both
    pass and fail possible: a translation bug).
    """

    def __init__(self, model: ContractModel, timeout_ms: int = 5000):
        self.model = model
        self.solver = make_solver(model, timeout_ms)

    def verdicts(self, kwargs: dict) -> dict:
        s = self.solver
        s.push()
        for p, sym in self.model.params.items():
            s.add(*describe(sym, kwargs[p]))
        out = {}
        for a in self.model.asserts:
            if not a.supported:
                out[a.name] = "unsupported"
                continue
            found = []
            for name, cond in (("pass", a.satisfied), ("fail", a.violated)):
                # as an assumption, not a push/add/pop: the same question, and z3 keeps what it
                # learnt of the values between the two (~17% of the CPython agreement test)
                r = s.check(cond)
                if r == z3.sat:
                    found.append(name)
                elif r == z3.unknown:
                    found.append("unknown")
            out[a.name] = ("unknown" if "unknown" in found else "ambiguous" if len(found) == 2
                           else found[0] if found else "error")
        s.pop()
        return out


def check_concrete(model: ContractModel, kwargs: dict, timeout_ms: int = 5000) -> dict:
    """One-off :meth:`ConcreteChecker.verdicts`."""
    return ConcreteChecker(model, timeout_ms).verdicts(kwargs)
