"""A postcondition on recorded cases, through the Python-spec service.

Test-set correctness and completeness are evaluated in *one* job over one pool:
the reference's cases and the corpus's bad outputs, shuffled with a fresh
random order each time, each case evaluated by a spec process that holds that
case alone (:func:`pytest_specbench.pyspec.check_blocks`).  A postcondition thus
cannot tell a reference output from a bad one by anything but the values it is
shown (no job of its own per phase, no position, no other case in memory): the
only way to be both test-set correct and complete is to tell right outputs from
wrong ones, which is what the benchmark measures.  Verdicts do not depend on
the order: each case's outcome is its own.
"""
from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from ...pyspec.blocks import BlockOutcome, check_blocks
from .corpus import Kept
from .tasks import parameters
from .observe import as_case


@dataclass(frozen=True)
class Evaluated:
    """Outcomes of one postcondition: per reference case, and per corpus program per bopi."""

    reference: list[BlockOutcome]
    programs: list[tuple[Kept, list[BlockOutcome]]]


def evaluate(executor, task: Mapping[str, Any], block: str, preamble: str, reference_cases: Sequence[dict],
             programs: Sequence[Kept], timeout: float) -> Evaluated:
    names = parameters(task)
    pool: list[tuple[int, int, dict]] = [(-1, i, case) for i, case in enumerate(reference_cases)]
    for p, kept in enumerate(programs):
        pool += [(p, j, as_case(names, b.args_after, b.output)) for j, b in enumerate(kept.bopi)]
    order = list(range(len(pool)))
    random.SystemRandom().shuffle(order)
    outcomes = check_blocks(executor, preamble, block, [pool[i][2] for i in order], timeout=timeout)
    by_slot: dict[tuple[int, int], BlockOutcome] = {}
    for position, i in enumerate(order):
        by_slot[(pool[i][0], pool[i][1])] = outcomes[position]
    reference = [by_slot[(-1, i)] for i in range(len(reference_cases))]
    per_program = [(kept, [by_slot[(p, j)] for j in range(len(kept.bopi))]) for p, kept in enumerate(programs)]
    return Evaluated(reference, per_program)


def rejects(outcome: BlockOutcome, kill: str) -> bool:
    """Does the postcondition reject this output?  ``assertion``: an
    ``AssertionError`` (upstream's modified EvalPlus counts a failed assert);
    ``any``: any exception (``--nl2postcond-kill``)."""
    return outcome.kind == "violated" or (kill == "any" and outcome.kind == "raised")
