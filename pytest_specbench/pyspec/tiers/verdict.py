"""One tier's verdict on one relation of a specification, and how verdicts of
several tiers combine (VERINA's way, issue #47).

Relations (neutral names; VERINA says *complete* for AC and *sound* for RW,
nl2postcond *correct* and *complete*): **AC** accepts correct outputs, **RW**
rejects wrong outputs; for preconditions **AV** accepts valid inputs, **RI**
rejects invalid inputs.
"""
from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Iterable


class Relation(str, Enum):
    AC = "AC"
    RW = "RW"
    AV = "AV"
    RI = "RI"


class Status(str, Enum):
    REFUTED = "REFUTED"
    PROVED = "PROVED"
    PASSED = "PASSED"
    UNKNOWN = "UNKNOWN"


@dataclass(frozen=True)
class TierVerdict:
    tier: str
    relation: Relation
    status: Status
    examples: int = 0
    bound: int | None = None
    counterexample: dict | None = None  # {"inputs": {...}, "return_value": ..., "why": "..."}; only after a concrete replay
    reason: str = ""

    def line(self) -> str:
        head = f"{self.relation.value} {self.status.value}"
        if self.status is Status.PROVED and self.bound is not None:
            head += f"({self.bound})"
        elif self.status is Status.PASSED:
            head += f"({self.examples})"
        text = f"{self.tier}: {head}"
        if self.counterexample is not None:
            ce = self.counterexample
            text += f" on inputs {ce.get('inputs')!r} with return_value {ce.get('return_value')!r}"
            if ce.get("why"):
                text += f": {ce['why']}"
        elif self.reason:
            text += f": {self.reason}"
        return text


def combine(verdicts: Iterable[TierVerdict]) -> TierVerdict:
    """One relation's verdicts over tiers: REFUTED if any tier refuted (with its
    counterexample); else PROVED(k) from z3 only; else PASSED(n) where a tier
    passed; else UNKNOWN."""
    verdicts = list(verdicts)
    if not verdicts:
        raise ValueError("no verdicts to combine")
    relation = verdicts[0].relation
    for status in (Status.REFUTED, Status.PROVED, Status.PASSED):
        found = [v for v in verdicts if v.status is status and (status is not Status.PROVED or v.tier == "z3")]
        if found:
            best = found[0] if status is not Status.PASSED else max(found, key=lambda v: v.examples)
            return TierVerdict("combined", relation, status, best.examples, best.bound, best.counterexample,
                               f"from {best.tier}")
    return TierVerdict("combined", relation, Status.UNKNOWN, reason="no tier decided")


def bounds(statuses: Iterable[Status]) -> tuple[float, float]:
    """The share of relations that hold: lower (UNKNOWN counts as a failure) and
    upper (UNKNOWN counts as a pass)."""
    statuses = list(statuses)
    if not statuses:
        return 0.0, 0.0
    good = sum(s in (Status.PROVED, Status.PASSED) for s in statuses)
    unknown = sum(s is Status.UNKNOWN for s in statuses)
    return good / len(statuses), (good + unknown) / len(statuses)
