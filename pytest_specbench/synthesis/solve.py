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
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any

import z3

from .adt import And, Implies, Not, decode, describe
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
    solver = make_solver(model, timeout_ms)
    small = z3.Bool("small")
    solver.add(Implies(small, And(*model.inputs.small)))
    natural = z3.Bool("natural")
    solver.add(Implies(natural, And(*model.inputs.natural)))
    pins = pin_literals(solver, model, examples)
    supported = [a for a in model.asserts if a.supported]
    stats = SolveStats()
    out: list[Candidate] = []
    sizes = range(1, (max_subset_size or len(supported)) + 1)
    for size in sizes:
        for combo in combinations(supported, size):
            stats.subsets += 1
            if deadline is not None and time.monotonic() > deadline:
                stats.skipped += 1
                continue
            violated = [a.name for a in combo]
            satisfied = [a.name for a in supported if a not in combo]
            label = section_label(satisfied, violated)
            solver.push()
            for a in supported:
                solver.add(a.violated if a in combo else a.satisfied)
            free = set(model.params) - set().union(*[a.params for a in combo])
            # in the order they are given up
            assumptions = [natural, small] + [pins[p] for p in sorted(free) if p in pins]
            found, status = _models(solver, model, assumptions, k_models)
            solver.pop()
            if status == "unknown" and not found:
                stats.unknown += 1
                stats.unknown_sections.append(label)
            elif not found:
                stats.unsat += 1
            else:
                stats.sat += 1
            for idx, kwargs in enumerate(found, 1):
                out.append(Candidate(kwargs, violated, label, idx))
            stats.models += len(found)
    return out, stats


def _models(solver: z3.Solver, model: ContractModel, assumptions: list, k: int) -> tuple[list, str]:
    """Up to ``k`` distinct models; the status says whether the search ended early."""
    found: list[dict] = []
    shape_phase = True
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
                s.push()
                s.add(cond)
                r = s.check()
                s.pop()
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
