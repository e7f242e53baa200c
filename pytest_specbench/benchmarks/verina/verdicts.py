"""Lean's diagnostics -> per-case outcomes (VERINA Appendix C.5, Table 6).

Input: the messages of ``lean --json FILE`` (one JSON object per line with
``severity``, ``pos.line`` and ``data``; Lean 4's documented ``--json`` output),
and the :class:`~.assembly.LeanFile` with each case's lines.  Messages are
attributed by line, never by their text alone: a sample can print any string,
but not at the harness's lines, and not the per-file nonce it does not know.

Outcomes of one relation case (the paper's categories):
``proved`` (``decide`` true, or ``simp`` closed the goal before ``plausible``),
``might_hold`` (``plausible`` found no counterexample), ``counterexample``
(``decide`` false or ``plausible`` found one), ``unknown`` (neither side
definitive: §4.1, "cannot handle ... our evaluator returns unknown"; a case the
Lean process's time limit stopped before it ran is such a case, ``timed_out``,
as upstream's harness also leaves it unknown), ``not_run`` (no sentinel: the
file stopped before the case for another reason, a crash or a signal).

The message texts matched are Lean's and Plausible's: ``#guard`` failing reports
"did not evaluate to `true`"; a missing ``Decidable`` instance "failed to
synthesize"; Plausible reports "Found a counter-example!", "Unable to find a
counter-example" and "Gave up after failing to generate values"; a tactic after
a closed goal "no goals to be solved".
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Iterable

from .assembly import LeanFile

GUARD_FALSE = "did not evaluate to `true`"
NOT_DECIDABLE = "failed to synthesize"
PLAUSIBLE_FOUND = "Found a counter-example!"
PLAUSIBLE_NONE = "Unable to find a counter-example"
PLAUSIBLE_GAVE_UP = "Gave up after failing to generate values"
NO_GOALS = "no goals to be solved"

STANDARD_AXIOMS = frozenset({"propext", "Classical.choice", "Quot.sound"})


@dataclass(frozen=True)
class Message:
    severity: str  # information | warning | error
    line: int
    text: str


def parse_messages(stdout: str) -> list[Message]:
    """Messages of ``lean --json``; lines that are not JSON messages are kept as
    errors at line 0 (Lean's own crash output, an out-of-memory report)."""
    out: list[Message] = []
    for raw in stdout.splitlines():
        raw = raw.strip()
        if not raw:
            continue
        try:
            obj = json.loads(raw)
        except json.JSONDecodeError:
            out.append(Message("error", 0, raw))
            continue
        if not isinstance(obj, dict):
            out.append(Message("error", 0, raw))
            continue
        pos = obj.get("pos") or {}
        line = pos.get("line", 0) if isinstance(pos, dict) else 0
        out.append(Message(str(obj.get("severity", "error")), int(line) if isinstance(line, int) else 0,
                           str(obj.get("data", ""))))
    return out


@dataclass
class FileReport:
    compiled: bool  # the definitions elaborated without error
    compile_error: str  # first error in the definitions
    reached: set[str]  # case keys whose sentinel was printed
    by_case: dict[str, list[Message]]
    stopped: str  # why the file ended early ("" when it ran to the end)
    timed_out: bool = False  # the CPU or wall-clock limit ended it


def attribute(file: LeanFile, messages: Iterable[Message], stopped: str = "", timed_out: bool = False) -> FileReport:
    messages = list(messages)
    header_errors = [m for m in messages if m.severity == "error" and 1 <= m.line <= file.header_lines]
    crash = [m for m in messages if m.severity == "error" and m.line == 0]
    sentinel_header = f"specbench:{file.nonce}:header"
    reached: set[str] = set()
    printed = {(m.line, m.text.strip().strip('"')) for m in messages if m.severity == "information"}
    header_ok = (file.header_lines + 1, sentinel_header) in printed
    by_case: dict[str, list[Message]] = {}
    for case in file.cases:
        if (case.sentinel_line, f"specbench:{file.nonce}:{case.key}") in printed:
            reached.add(case.key)
        by_case[case.key] = [m for m in messages if case.first_line <= m.line <= case.last_line]
    error = header_errors[0].text if header_errors else ""
    if not header_ok and not error:
        # Why the run ended (limit, signal, output flood) says more than its last output line.
        error = stopped or (crash[0].text if crash else "Lean stopped before the definitions were checked")
    return FileReport(compiled=not header_errors and header_ok, compile_error=_one_line(error),
                      reached=reached, by_case=by_case, stopped=stopped, timed_out=timed_out)


def _one_line(text: str) -> str:
    return " ".join(text.split())[:300]


def _errors(msgs: list[Message]) -> list[str]:
    return [m.text for m in msgs if m.severity == "error"]


def guard_outcome(report: FileReport, key: str) -> tuple[str, str]:
    """A ``#guard`` case (code test or ``decide``): passed | failed | undecidable |
    error | timed_out | not_run, with the first relevant message."""
    if key not in report.reached:
        return _unreached(report), report.stopped or "Lean stopped before this case"
    errors = _errors(report.by_case.get(key, []))
    if not errors:
        return "passed", ""
    text = "\n".join(errors)
    if GUARD_FALSE in text:
        return "failed", _one_line(errors[0])
    if NOT_DECIDABLE in text and "Decidable" in text:
        return "undecidable", _one_line(errors[0])
    return "error", _one_line(errors[0])


def plausible_outcome(report: FileReport, key: str) -> str:
    """One ``example : R := by ... plausible`` case: counterexample | no_counterexample |
    closed (simp proved it) | gave_up | error | timed_out | not_run."""
    if key not in report.reached:
        return _unreached(report)
    msgs = report.by_case.get(key, [])
    text = "\n".join(m.text for m in msgs)
    errors = _errors(msgs)
    if PLAUSIBLE_FOUND in text:
        return "counterexample"
    if errors and all(NO_GOALS in e for e in errors):
        return "closed"
    if PLAUSIBLE_GAVE_UP in text:
        return "gave_up"
    if PLAUSIBLE_NONE in text:
        return "no_counterexample"
    return "error"  # no message at all: neither side is definitive


def _unreached(report: FileReport) -> str:
    return "timed_out" if report.timed_out else "not_run"


# decide outcomes that send a case on to plausible: the paper's "if not [decidable],
# we proceed to property-based testing" (Appendix C.5); a decide pass the time limit
# stopped decided nothing about the cases it did not reach.
TO_PLAUSIBLE = ("undecidable", "error", "timed_out")


def relation_outcome(decide: str, plausible: str | None, plausible_neg: str | None) -> str:
    """One case of a relation R (the paper's two steps, §4.1): ``decide`` when R is
    decidable; otherwise ``plausible`` on R and on ¬R, a definitive side wins
    (a counterexample to R: R fails; simp proves R or a counterexample to ¬R: R
    holds); no counterexample to R only: might hold; else unknown (a side the
    time limit stopped is not definitive: unknown, unless the other side is)."""
    if decide == "passed":
        return "proved"
    if decide == "failed":
        return "counterexample"
    if decide == "not_run":
        return "not_run"
    if plausible is None or plausible_neg is None:
        return "pending"
    if plausible == "not_run" or plausible_neg == "not_run":
        return "not_run"
    if plausible == "counterexample" or plausible_neg == "closed":
        return "counterexample"
    if plausible == "closed" or plausible_neg == "counterexample":
        return "proved"
    if plausible == "no_counterexample":
        return "might_hold"
    return "unknown"


def relation_score(case_outcomes: list[str]) -> str:
    """A relation over its cases: fail if any case fails (a counterexample or a case
    that never ran for a reason other than the time limit), unknown if any is
    unknown, else pass (no cases: pass, as the relation is vacuously true on the
    test suite; the adapter reports counts)."""
    if any(o in ("counterexample", "not_run") for o in case_outcomes):
        return "fail"
    if any(o == "unknown" for o in case_outcomes):
        return "unknown"
    return "pass"


def axioms_of(report: FileReport, key: str, theorem: str) -> tuple[set[str] | None, str]:
    """Axioms from ``#print axioms THEOREM`` at the case's line: "'T' depends on
    axioms: [a, b]" or "'T' does not depend on any axioms"."""
    if key not in report.reached:
        return None, report.stopped or "Lean stopped before '#print axioms'"
    for m in report.by_case.get(key, []):
        if m.severity != "information":
            continue
        text = " ".join(m.text.split())
        if f"'{theorem}' does not depend on any axioms" in text:
            return set(), ""
        prefix = f"'{theorem}' depends on axioms: ["
        if text.startswith(prefix) and text.endswith("]"):
            return {a.strip() for a in text[len(prefix):-1].split(",") if a.strip()}, ""
    errs = _errors(report.by_case.get(key, []))
    return None, _one_line(errs[0]) if errs else "no '#print axioms' output"


def summary(details: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v}" for k, v in details.items() if isinstance(v, (int, str)))[:200]
