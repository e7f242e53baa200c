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
* ``passed``: every collected test has a ``call`` record that passed, and the
  run ended with its final record and exit status 0 (eval = 1).  A skipped test
  or exit status 0 alone is not a pass.

Records count only when they carry the run's nonce (:func:`genuine`).

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


def genuine(records: Sequence[Any], nonce: str) -> list[dict]:
    """The records the runner wrote: JSON objects carrying this run's nonce."""
    return [r for r in records if isinstance(r, dict) and r.get("nonce") == nonce]


def _line(value: Any, limit: int) -> str:
    return " ".join(str(value).split())[:limit]


def decide(records: Sequence[dict], timed_out: bool, first_line: int, last_line: int,
           output: str = "") -> dict[str, Any]:
    """``{"verdict", "reason", "text_verdict"}`` from the run's genuine records
    (:func:`genuine`).  ``passed`` needs the final record, the list of collected
    tests (at least one), and for every collected test a ``call`` record that
    passed: a test that skipped, or never reached its call, is not a pass, and
    neither is an exit status of 0 alone."""
    finish = next((r for r in records if r.get("event") == "finish"), None)
    collected = next((r for r in records if r.get("event") == "collected"), None)
    failures = [r for r in records if r.get("event") == "phase" and r.get("outcome") == "failed"]
    collect = [r for r in records if r.get("event") == "collect_error"]
    text_violation = VIOLATION_TEXT in output or "ViolationError" in output
    if timed_out:
        verdict, reason = "timeout", "the run hit the time limit"
    elif any(f.get("violation") for f in failures):
        f = next(f for f in failures if f.get("violation"))
        verdict, reason = "icontract_fail", f"{_line(f.get('nodeid'), 200)}: {_line(f.get('text', ''), 160)}"
    elif collect:
        tail = str(collect[0].get("longrepr", "")).strip().splitlines()[-1:]
        verdict, reason = "compile_failure", (_line(tail[0], 200) if tail else "collection error")
    elif finish is None or collected is None:
        verdict, reason = "local_crash", "the test run ended without its final report"
    elif failures:
        inside = [f for f in failures if f.get("in_contract")
                  or any(isinstance(ln, int) and first_line <= ln <= last_line for ln in f.get("private_lines") or ())]
        f = (inside or failures)[0]
        verdict = "local_crash" if inside else "failed"
        reason = (f"{_line(f.get('nodeid'), 200)} ({_line(f.get('when'), 20)}): {_line(f.get('exc_type', ''), 80)}: "
                  f"{_line(f.get('text', ''), 160)}")
    else:
        passed = {r.get("nodeid") for r in records
                  if r.get("event") == "phase" and r.get("when") == "call" and r.get("outcome") == "passed"}
        called = {r.get("nodeid"): r.get("outcome") for r in records
                  if r.get("event") == "phase" and r.get("when") == "call"}
        nodeids = collected.get("nodeids")
        nodeids = [n for n in nodeids if isinstance(n, str)] if isinstance(nodeids, list) else []
        missing = [n for n in nodeids if n not in passed]
        if not nodeids:
            verdict, reason = "failed", "no test was collected"
        elif missing:
            how = called.get(missing[0])
            verdict, reason = "failed", (f"{_line(missing[0], 200)}: " + (f"{_line(how, 20)} in its call" if how else
                                                                           "no call report (skipped or stopped before it)")
                                         + (f" (and {len(missing) - 1} more)" if len(missing) > 1 else ""))
        elif finish.get("exitstatus") != 0:
            verdict, reason = "failed", f"pytest exit status {_line(finish.get('exitstatus'), 20)}"
        else:
            verdict, reason = "passed", ""
    text_verdict = "timeout" if timed_out else ("icontract_fail" if text_violation else verdict)
    return {"verdict": verdict, "reason": reason, "text_verdict": text_verdict}
