"""Dynamic validation: does a specification hold on the program's tests?

SpecEval decides a specification's correctness by running test cases against
the JML-instrumented program (§4.1).  That is the JML runtime checker's job
(issue 13: ``speceval/jml/`` and the ``jvm`` executor, written alongside this
family).  Every SpecEval check reaches it through :func:`clause_verdicts` only,
so wiring it is this one module.

Until the checker is importable, :func:`clause_verdicts` returns None and the
checks fall back to *syntactic* validation (a clause holds iff it is, after
normalisation, a ground-truth clause at the same place): exact for the
reference model, a lower bound on Precision and on infilling accuracy for
others, and no mutant is dropped from Judgement.  The report's manifest says
which mode ran (``validation``).
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any

CHECKER_MODULE = "pytest_specbench.benchmarks.speceval.jml"
CHECKER_FUNCTION = "holds"  # holds(source_with_specs, tests_source, executor) -> list[bool | None]


@dataclass(frozen=True)
class Verdicts:
    """One verdict per spec clause of the program, in source order (as
    :func:`.jmlspec.spec_blocks` lists them): True holds on every test whose
    precondition held, False refuted, None unsupported / not checked."""

    clauses: tuple[bool | None, ...]
    tests: int = 0  # test calls the clauses were checked on
    message: str = ""


def checker():
    """The checker's entry point, or None when the jml branch has not landed."""
    try:
        module = importlib.import_module(CHECKER_MODULE)
    except ImportError:
        return None
    return getattr(module, CHECKER_FUNCTION, None)


def mode(requested: str) -> str:
    """``dynamic`` or ``syntactic`` for a ``--speceval-validation`` value."""
    if requested == "syntactic":
        return "syntactic"
    if requested == "dynamic" and checker() is None:
        return "unavailable"
    return "dynamic" if checker() is not None else "syntactic"


def clause_verdicts(source_with_specs: str, tests_source: str | None, ctx: Any) -> Verdicts | None:
    """Run the program's tests (``daikon/`` driver) against the specified program
    in the sandbox; None when no checker is available."""
    fn = checker()
    if fn is None:
        return None
    result = fn(source_with_specs, tests_source, ctx.executor("jvm"))
    if isinstance(result, Verdicts):
        return result
    return Verdicts(tuple(result))
