"""Verdict of one run (one program, one postcondition set), PostcondBench §3.2.4.

From the runner's structured records (``sandbox_runner``) and the sandbox result:

* ``timeout``: the time limit ended the run (upstream: 30 s per run).
* ``icontract_fail``: some test raised an ``icontract.ViolationError`` (a
  postcondition was violated; eval = 0), or icontract's ``RuntimeError`` from
  ``_create_violation_error`` (a violated condition whose message icontract could
  not render, e.g. nested lambdas: the violation was found all the same).  Outranks everything but timeout, as upstream.
* ``compile_failure``: the injected module does not import (a collection error:
  syntax error in the decorators, an exception while the decorators are applied).
* ``local_crash``: a test failed with an exception whose traceback passes through
  the injected method's lines (the decorators or the method) or through
  icontract's own checker code (a lambda naming an argument the method lacks is
  reported by icontract at call time), other than a violation: the postcondition itself crashed (eval = -1); also a run that ended
  without the final record (killed, crashed interpreter, exit by the sample).
* ``failed``: a test failed for another reason (eval = -1).
* ``passed``: every test passed (eval = 1).

``text_verdict`` is upstream's text-search reading of the same run (a
``ViolationError`` anywhere in the output outranks passed), for agreement.
"""
from __future__ import annotations

import json
from typing import Any, Sequence

VIOLATION_TEXT = "icontract.errors.ViolationError"


def read_records(raw: bytes | None) -> list[dict]:
    out = []
    for line in (raw or b"").decode("utf-8", "replace").splitlines():
        try:
            rec = json.loads(line)
        except ValueError:
            continue
        if isinstance(rec, dict):
            out.append(rec)
    return out


def decide(records: Sequence[dict], timed_out: bool, first_line: int, last_line: int,
           output: str = "") -> dict[str, Any]:
    """``{"verdict", "reason", "text_verdict"}``."""
    finish = next((r for r in records if r.get("event") == "finish"), None)
    failures = [r for r in records if r.get("event") == "phase" and r.get("outcome") == "failed"]
    collect = [r for r in records if r.get("event") == "collect_error"]
    text_violation = VIOLATION_TEXT in output or "ViolationError" in output
    if timed_out:
        verdict, reason = "timeout", "the run hit the time limit"
    elif any(f.get("violation") for f in failures):
        f = next(f for f in failures if f.get("violation"))
        verdict, reason = "icontract_fail", f"{f['nodeid']}: {f.get('text', '')[:160]}"
    elif collect:
        verdict, reason = "compile_failure", collect[0].get("longrepr", "").strip().splitlines()[-1:][0][:200] \
            if collect[0].get("longrepr", "").strip() else "collection error"
    elif finish is None:
        verdict, reason = "local_crash", "the test run ended without its final report"
    elif failures:
        inside = [f for f in failures if f.get("in_contract")
                  or any(first_line <= ln <= last_line for ln in f.get("private_lines", ()))]
        f = (inside or failures)[0]
        verdict = "local_crash" if inside else "failed"
        reason = f"{f['nodeid']} ({f.get('when')}): {f.get('exc_type', '')}: {f.get('text', '')[:160]}"
    elif finish.get("exitstatus") not in (0,):
        verdict, reason = ("failed", f"pytest exit status {finish.get('exitstatus')} (no test ran?)")
    else:
        verdict, reason = "passed", ""
    text_verdict = "timeout" if timed_out else ("icontract_fail" if text_violation else verdict)
    return {"verdict": verdict, "reason": reason.replace("\n", " "), "text_verdict": text_verdict}
