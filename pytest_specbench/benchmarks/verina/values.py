"""Test values of ``test.json`` / ``reject_inputs.json`` rendered as Lean terms.

Values are JSON scalars (``true``, ``3``, ``1.5``), JSON lists (of scalars), raw
strings for ``String``/``Char`` parameters, or Lean source for everything else
(``#[1, 2]``, ``some (98)``, ``fun x => x < 5``, ``Float.nan``, ``⟨...⟩``).  Every
rendered term is wrapped in parentheses by the caller, so Lean source is kept as
written.  Unlike upstream (which pastes ``"{value}"``), strings and chars are
escaped, so a quote or backslash in a test value stays one literal.
"""
from __future__ import annotations

import json
import math
from typing import Any

_ESCAPES = {"\\": "\\\\", '"': '\\"', "'": "\\'", "\n": "\\n", "\t": "\\t", "\r": "\\r"}


def lean_string(text: str) -> str:
    return '"' + "".join(_escape(c, '"') for c in text) + '"'


def lean_char(text: str) -> str:
    if len(text) != 1:
        raise ValueError(f"a Char value must be one character, got {text!r}")
    return "'" + _escape(text, "'") + "'"


def _escape(c: str, quote: str) -> str:
    if c in ("\\", quote, "\n", "\t", "\r"):
        return _ESCAPES[c]
    if ord(c) < 0x20 or ord(c) == 0x7F:
        return f"\\x{ord(c):02x}"
    return c


def _head(lean_type: str) -> str:
    t = lean_type.strip()
    while t.startswith("(") and t.endswith(")"):
        t = t[1:-1].strip()
    return t.split()[0] if t else ""


def _element_type(lean_type: str) -> str:
    t = lean_type.strip()
    while t.startswith("(") and t.endswith(")"):
        t = t[1:-1].strip()
    return t.split(None, 1)[1] if " " in t else ""


def render(lean_type: str, value: Any) -> str:
    """Lean source for ``value`` of type ``lean_type`` (raises ValueError on a value
    that cannot be one: the loader reports it with the task and test index)."""
    head = _head(lean_type)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        if head == "Float":
            return f"{value}.0" if value >= 0 else f"-{-value}.0"
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "Float.nan" if head == "Float" else _bad(lean_type, value)
        if math.isinf(value):
            return ("Float.inf" if value > 0 else "-Float.inf") if head == "Float" else _bad(lean_type, value)
        return repr(value)
    if isinstance(value, list):
        inner = _element_type(lean_type)
        items = ", ".join(render(inner, v) for v in value)
        return f"#[{items}]" if head == "Array" else f"[{items}]"
    if value is None:
        return "none" if head == "Option" else _bad(lean_type, value)
    if isinstance(value, str):
        if head == "String":
            return lean_string(value)
        if head == "Char":
            return lean_char(value)
        if not value.strip():
            return _bad(lean_type, value)
        return value
    return _bad(lean_type, value)


def _bad(lean_type: str, value: Any) -> str:
    raise ValueError(f"cannot render {json.dumps(value)[:60]} as a Lean {lean_type}")
