"""The characters of an annotated Java source, made unambiguous before any parse (issue 42).

tree-sitter-java, the JML parser (:mod:`.expr`) and javac must read the same program: every
byte on which two lexers could disagree is either normalised away or refused here, before
the translator parses anything; what javac then compiles of the JML is re-printed from the
trees the checker validated (:mod:`.translate`), never copied from the answer's text.

* line terminators: ``\\r\\n`` and a lone ``\\r`` become ``\\n`` (JLS 3.4 ends a line comment at
  ``\\r``; the JML parser and tree-sitter's row counts only know ``\\n``);
* Java unicode escapes (``\\u`` with any number of ``u``, JLS 3.3): javac decodes them before it
  lexes anything, comments and strings included (``\\u000a`` ends a line comment, ``\\u0022`` a
  string): accepted only inside a string or character literal of the program's code and when
  they decode to a character that ends nothing there; refused anywhere else (JML comments included);
* lone surrogates (a Python string can hold one; UTF-8 cannot encode it), Unicode format
  characters (category Cf: zero-width joiners, bidi controls, the BOM), Java's
  identifier-ignorable code points (``Character.isIdentifierIgnorable``: U+0000-0008,
  U+000E-001B, U+007F-009F, which javac drops from identifiers, so ``spec\\u200Dbench`` is
  ``specbench`` to javac), the other control characters javac refuses (U+000B, U+001C-001F)
  and the Unicode line and paragraph separators (U+2028, U+2029: line ends to Python's
  ``splitlines``, an illegal character to javac): refused with one line naming the
  character and its line and column.

Tabs and form feeds stay: Java, tree-sitter and the JML tokenizer all read them as white space."""
from __future__ import annotations

import re
import unicodedata

# JLS 3.3: a backslash preceded by an even number of backslashes, then one or more 'u', then 4 hex digits
_UNICODE_ESCAPE = re.compile(r"(?<!\\)(?:\\\\)*(\\u+)[0-9a-fA-F]{4}")
_CONTROL_OK = {"\t", "\n", "\f"}
_SUSPECT = re.compile(r"[^\x20-\x7e\t\n\f]")  # the characters :func:`refused` must look at


class LexicalError(ValueError):
    """A character the checker and javac could read differently; ``line`` (1-based) and
    ``column`` (1-based, in characters) say where."""

    def __init__(self, message: str, line: int, column: int):
        super().__init__(f"line {line}, column {column}: {message}")
        self.line, self.column, self.reason = line, column, message


def _where(text: str, pos: int) -> tuple[int, int]:
    line = text.count("\n", 0, pos) + 1
    return line, pos - (text.rfind("\n", 0, pos) + 1) + 1


def refused(ch: str) -> str | None:
    """Why ``ch`` is refused (None: a character every lexer here reads alike)."""
    o = ord(ch)
    if o < 0x80 and (0x20 <= o < 0x7F or ch in _CONTROL_OK):
        return None  # the common case, first
    if 0xD800 <= o <= 0xDFFF:
        return "a lone surrogate (not a character; UTF-8 cannot encode it)"
    cat = unicodedata.category(ch)
    if cat == "Cf":
        return "a Unicode format character (invisible; javac drops it from identifiers)"
    if o <= 0x08 or 0x0E <= o <= 0x1B or 0x7F <= o <= 0x9F:
        return "an identifier-ignorable control character (javac drops it from identifiers)"
    if ch in "\x0b\x1c\x1d\x1e\x1f":
        return "a control character javac does not accept"
    if cat in ("Zl", "Zp"):
        return "a Unicode line or paragraph separator (a line end to Python, not to javac)"
    return None


def _name(ch: str) -> str:
    return f"U+{ord(ch):04X}" + (f" {unicodedata.name(ch)}" if unicodedata.name(ch, "") else "")


def normalise_source(text: str) -> str:
    """``text`` with ``\\n`` line ends, or :class:`LexicalError` for the first character or
    unicode escape two lexers could read differently (module docstring)."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    for m in _SUSPECT.finditer(text):
        why = refused(m.group())
        if why is not None:
            line, col = _where(text, m.start())
            raise LexicalError(f"{_name(m.group())}: {why}", line, col)
    escapes = list(_UNICODE_ESCAPE.finditer(text))
    if escapes:
        _escapes_inside_literals(text, escapes)
    return text


def _escapes_inside_literals(text: str, escapes: list) -> None:
    """javac decodes every ``\\u`` escape before lexing (JLS 3.3).  One changes no token's
    boundary only inside a string or character literal of the program's code, and only when
    it decodes to a character that ends nothing (not a quote, a backslash or a line end: a
    program's ``"\\u2029"`` or ``'\\u0000'`` is accepted, javac keeps it as the literal's
    content); any other is refused, wherever it stands (a comment, JML included, or code)."""
    from .parser import parse_java

    raw = text.encode("utf-8")
    tree = parse_java(raw)
    literals = []
    stack = [tree.root_node]
    while stack:
        n = stack.pop()
        if n.type in ("string_literal", "character_literal"):
            literals.append((n.start_byte, n.end_byte))
        elif n.type not in ("line_comment", "block_comment"):
            stack.extend(n.children)
    for m in escapes:
        start = m.start(1)
        at = len(text[:start].encode("utf-8"))
        ch = chr(int(m.group(0)[-4:], 16))
        inside = any(lo < at < hi for lo, hi in literals)
        if inside and ch not in "\"'\\\n\r":
            continue
        line, col = _where(text, start)
        where = "inside a literal it decodes to a quote, a backslash or a line end" if inside else \
            "outside a string or character literal"
        raise LexicalError(f"a Java unicode escape ({m.group(1)}{m.group(0)[-4:]}) {where}: javac decodes it before "
                           "lexing, so the checker and javac would read different programs", line, col)
