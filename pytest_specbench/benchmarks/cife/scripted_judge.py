"""A deterministic stand-in judge for tests and end-to-end trials (no model).

:func:`answer` reads a CIFE judge prompt (paper or upstream style, adherence or
correctness) and writes an answer in the requested schema.  Verdicts are a
pure function of (constraint text, code): a rule's verdict where an AST rule
decides, otherwise "satisfied" (or, with ``satisfied`` < 1, a hash deciding that
share), so repeated runs, resumed runs and workers agree, and the bundled
reference answers score 100% (every rule passes them).  The correctness label
is *Completely Correct* (or, with ``correct`` < 1, a hash picks the others for
the rest).  With ``garbage`` > 0 that share of first attempts is
answered with unusable text, so retries are exercised; a retry (its prompt
shows "could not be used") is always answered properly.

Use it behind ``tests/openai_server.py``'s ``StubOpenAIServer(answer=...)``::

    StubOpenAIServer(answer=lambda req: answer(req["messages"]))
"""
from __future__ import annotations

import ast
import hashlib
import json
import re
from typing import Any, Sequence

from . import rules
from .prompts import CORRECTNESS_LABELS


def _h(*parts: str) -> int:
    return int(hashlib.sha256("\0".join(parts).encode()).hexdigest()[:8], 16)


def _code_of(user: str) -> str:
    m = re.search(r"```python\n(.*?)```", user, re.S)
    return m.group(1) if m else ""


def _constraints(user: str) -> tuple[list[str], bool]:
    """The constraint texts of an adherence prompt, and whether they are numbered (paper style)."""
    m = re.search(r"Constraints \((\d+)\):\n(.*?)\n\nResponse:", user, re.S)
    if m:
        lines = [re.sub(r"^\d+\.\s", "", line) for line in m.group(2).split("\n") if re.match(r"^\d+\.\s", line)]
        return lines, True
    m = re.search(r"\[Constraints\]:\n\s*(\[.*?\])\n\n\s*\[Response\]:", user, re.S)
    if m:
        try:
            return [c["constraint"] for c in ast.literal_eval(m.group(1))], False
        except (ValueError, SyntaxError, KeyError, TypeError):
            pass
    return [], True


def answer(messages: Sequence[dict[str, Any]], garbage: float = 0.0, satisfied: float = 1.0, correct: float = 1.0) -> str:
    user = next((m["content"] for m in reversed(messages) if m.get("role") == "user"), "")
    code = _code_of(user)
    retry = "could not be used" in user
    if not retry and garbage and _h("garbage", user) % 1000 < garbage * 1000:
        return "I'm sorry, I can't evaluate this."
    if '"correctness"' in user:
        label = CORRECTNESS_LABELS[0] if _h("cc", code) % 1000 < correct * 1000 else CORRECTNESS_LABELS[1 + _h("l", code) % 2]
        return json.dumps({"reason": "scripted", "correctness": label})
    texts, numbered = _constraints(user)
    parsed = rules.Code.parse(code)
    evaluation = []
    for i, text in enumerate(texts, 1):
        chosen = rules.select(text)
        verdict = None
        if chosen is not None and not chosen[0].dynamic:
            verdict = chosen[0].decide(chosen[1], parsed, None)[0]
        if verdict is None:
            verdict = _h(text, code) % 1000 < satisfied * 1000
        entry = {"Constraint": text, "Reason": "scripted", "Aligns": verdict}
        if numbered:
            entry = {"Index": i, **entry}
        evaluation.append(entry)
    return "```json\n" + json.dumps({"Evaluation": evaluation}, indent=1) + "\n```"
