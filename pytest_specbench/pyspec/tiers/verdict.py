"""What a tier says about one relation of a specification, and how tiers combine.

Relations (VERINA, Ye et al. 2025, §3.2 calls a postcondition *complete* when it
accepts every correct output and *sound* when it rejects every wrong one;
nl2postcond says *test-set correct* and *complete*): **AC** accepts correct
outputs, **RW** rejects wrong outputs; for a precondition **AV** accepts valid
inputs, **RI** rejects invalid inputs (ContractEval's model-written
preconditions: the corpus's valid test inputs and CVTs, the pbt keeper's AV/RI
search, z3 against the reference contract; docs/tiers.md).

Statuses: ``REFUTED`` (a counterexample, replayed concretely by the harness
before it counts), ``PROVED`` (only z3, up to a bound), ``PASSED`` (n cases
tried, none refuted), ``UNKNOWN`` (nothing decided).  :func:`combine` follows
VERINA's evaluation (§4.1: a specification is unsound/incomplete as soon as one
test shows it; proven where a proof exists; else it passed the tests):
REFUTED if any tier refuted, PROVED(k) only from z3, PASSED(n) otherwise,
UNKNOWN where nothing decided.  :func:`bounds` gives the lower share (UNKNOWN
counts as failing) and the upper share (UNKNOWN counts as passing).
"""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from enum import Enum
from typing import Any, Iterable


class Relation(str, Enum):
    AC = "AC"  # accepts correct outputs
    RW = "RW"  # rejects wrong outputs
    AV = "AV"  # accepts valid inputs
    RI = "RI"  # rejects invalid inputs


class Status(str, Enum):
    REFUTED = "REFUTED"
    PROVED = "PROVED"
    PASSED = "PASSED"
    UNKNOWN = "UNKNOWN"


LINE_CHARS = 300


@dataclass(frozen=True)
class TierVerdict:
    tier: str  # "corpus" | "pbt" | "crosshair" | "z3"
    relation: Relation
    status: Status
    examples: int = 0  # PASSED(n): cases tried
    bound: int | None = None  # PROVED(k): z3's bound
    counterexample: dict | None = None  # {"inputs": {...}, "return_value": ..., "why": "..."}; REFUTED only, replayed
    reason: str = ""  # one line

    def line(self) -> str:
        """One line, e.g. ``RW REFUTED by pbt: accepts a wrong output (inputs {'xs': [0, 1]}, return_value [1, 1])``."""
        head = f"{self.relation.value} {self.status.value}"
        if self.status is Status.PROVED and self.bound is not None:
            head += f"({self.bound})"
        elif self.status is Status.PASSED:
            head += f"({self.examples})"
        text = f"{head} by {self.tier}"
        if self.reason:
            text += f": {self.reason}"
        if self.counterexample is not None:
            shown = {k: v for k, v in self.counterexample.items() if k != "why"}
            text += f" ({_short(shown)})"
        text = " ".join(text.split())
        return text if len(text) <= LINE_CHARS else text[:LINE_CHARS - 3] + "..."

    def as_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["relation"], d["status"] = self.relation.value, self.status.value
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "TierVerdict":
        return cls(str(d["tier"]), Relation(d["relation"]), Status(d["status"]), int(d.get("examples") or 0),
                   d.get("bound"), d.get("counterexample"), str(d.get("reason") or ""))


def _short(value: Any, limit: int = 160) -> str:
    try:
        text = json.dumps(value, default=repr, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= limit else text[:limit - 3] + "..."


def combine(verdicts: Iterable[TierVerdict]) -> TierVerdict:
    """The tiers' verdicts on ONE relation joined (VERINA's way, see the module
    docstring); raises ValueError on an empty or mixed-relation input."""
    verdicts = list(verdicts)
    if not verdicts:
        raise ValueError("combine: no verdicts")
    relation = verdicts[0].relation
    if any(v.relation is not relation for v in verdicts):
        raise ValueError("combine: verdicts of different relations")
    tiers = "+".join(dict.fromkeys(v.tier for v in verdicts))
    refuted = next((v for v in verdicts if v.status is Status.REFUTED), None)
    if refuted is not None:
        return refuted
    proved = [v for v in verdicts if v.status is Status.PROVED and v.tier == "z3"]
    if proved:
        return max(proved, key=lambda v: v.bound or 0)
    passed = [v for v in verdicts if v.status is Status.PASSED]
    if passed:
        return TierVerdict(tiers, relation, Status.PASSED, examples=sum(v.examples for v in passed))
    reasons = "; ".join(v.reason for v in verdicts if v.reason)
    return TierVerdict(tiers, relation, Status.UNKNOWN, reason=reasons)


def bounds(statuses: Iterable[Status | str]) -> tuple[float, float]:
    """(lower, upper) share of statuses that hold: PASSED and PROVED hold,
    REFUTED fails, UNKNOWN fails in the lower share and holds in the upper one.
    (0.0, 0.0) for no statuses."""
    values = [Status(s) for s in statuses]
    if not values:
        return 0.0, 0.0
    holds = sum(s in (Status.PASSED, Status.PROVED) for s in values)
    unknown = sum(s is Status.UNKNOWN for s in values)
    return holds / len(values), (holds + unknown) / len(values)
