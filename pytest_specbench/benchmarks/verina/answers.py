"""The model's answer -> its fields (Appendix C.3 output fields).

Upstream prompts through DSPy, whose answers carry ``[[ ## field ## ]]`` headers;
models also answer with JSON objects or Markdown headings over fenced blocks.
All three are read; anything else is a failed sample with a one-line reason
(:class:`AnswerError`), never an exception out of the check.
"""
from __future__ import annotations

import json
import re

FIELDS = ("imports", "code_aux", "code", "precond_aux", "precond", "postcond_aux", "postcond",
          "proof_aux", "proof")

MAX_ANSWER = 200_000  # characters; longer answers are refused, not parsed


class AnswerError(ValueError):
    """The answer cannot be read: the message is the sample's failure reason."""


_DSPY = re.compile(r"^\s*\[\[\s*##\s*(\w+)\s*##\s*\]\]\s*$", re.M)
_HEADING = re.compile(r"^\s*(?:#{1,6}\s*|\*\*)`?(\w+)`?(?:\*\*)?\s*:?\s*$", re.M)
_FENCE = re.compile(r"^\s*```[\w+-]*[ \t]*\n(.*?)^\s*```\s*$", re.M | re.S)


def strip_fences(text: str) -> str:
    m = _FENCE.search(text)
    if m and not text[:m.start()].strip() and not text[m.end():].strip():
        text = m.group(1)
    else:
        # A fence opened before the first field or closed after the last one
        # (the whole answer fenced) leaves a lone fence line at one end.
        lines = text.strip("\n").split("\n")
        if lines and re.fullmatch(r"\s*```[\w+-]*\s*", lines[0]) and "```" not in "\n".join(lines[1:]):
            lines = lines[1:]
        if lines and re.fullmatch(r"\s*```\s*", lines[-1]) and "```" not in "\n".join(lines[:-1]):
            lines = lines[:-1]
        text = "\n".join(lines)
    return text.strip("\n").rstrip()


def _split(text: str, pattern: re.Pattern[str]) -> dict[str, str]:
    marks = [(m.group(1).lower(), m.start(), m.end()) for m in pattern.finditer(text)]
    fields: dict[str, str] = {}
    for n, (name, _, end) in enumerate(marks):
        stop = marks[n + 1][1] if n + 1 < len(marks) else len(text)
        if name in FIELDS and name not in fields:
            fields[name] = strip_fences(text[end:stop])
    return fields


def parse_answer(text: object, required: tuple[str, ...]) -> dict[str, str]:
    """Fields of an answer; every name in ``required`` must be present (optional
    ones default to empty).  Raises :class:`AnswerError` with the reason."""
    if not isinstance(text, str):
        raise AnswerError(f"answer is {type(text).__name__}, not text")
    if "\x00" in text:
        raise AnswerError("answer contains a NUL byte")
    if len(text) > MAX_ANSWER:
        raise AnswerError(f"answer is {len(text):,} characters (limit {MAX_ANSWER:,})")
    fields = _split(text, _DSPY)
    if not fields:
        fields = _from_json(text)
    if not fields:
        fields = _split(text, _HEADING)
    if not fields:
        raise AnswerError("no answer fields found (expected [[ ## code ## ]]-style headers or a JSON object)")
    missing = [f for f in required if f not in fields or not fields[f].strip()]
    # Auxiliary fields and imports may be left empty (Appendix C.3: "Keep it empty if not needed").
    missing = [f for f in missing if not (f.endswith("_aux") or f == "imports")]
    if missing:
        raise AnswerError(f"answer has no {', '.join(missing)} field")
    return {f: fields.get(f, "") for f in required}


def _from_json(text: str) -> dict[str, str]:
    body = strip_fences(text.strip())
    start, end = body.find("{"), body.rfind("}")
    if start < 0 or end <= start:
        return {}
    try:
        obj = json.loads(body[start:end + 1])
    except (json.JSONDecodeError, RecursionError):
        return {}
    if not isinstance(obj, dict):
        return {}
    return {k.lower(): strip_fences(v) for k, v in obj.items() if isinstance(v, str) and k.lower() in FIELDS}


IMPORT_LINE = re.compile(r"^import\s+[\w.]+(\s+[\w.]+)*\s*$")
