"""Source-level machinery of PostcondBench (Java): prompts (Appendix D.2), answer
parsing (JML ``ensures`` clauses), injection of the clauses above the target
method, and locating the method with tree-sitter.

Upstream's Java prompt is the Python one (Figure 7) with ``java``/``JML``, a
short grammar restriction (``//@ ensures``, ``\\result``, ``\\old``, ``==>``,
``<==>``, ``<=!=>``; no quantifiers, Java streams instead) and "JML ``ensures``
lines with leading ``//@ ensures``" as the expected answer.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from ....jml import JmlSyntaxError, LexicalError, normalise_source, parse_expr, parse_java, tokenize
from ....jml import node_text as _text, walk as _walk
from ..source import AnswerError, SETTINGS, replace_method

__all__ = ["AnswerError", "SETTINGS", "replace_method", "render_prompt", "parse_answer", "inject", "locate",
           "reference_clauses", "Injected", "MethodSite"]

GUIDELINE = (
    "Above is the java code context and target method. You should generate JML format postconditions "
    "for this method `{name}`.\n"
    "Note that you are only allowed to use the subset of JML grammar:\n"
    "- `//@ ensures <jml-expression>`\n"
    "- `\\result`\n"
    "- `\\old(<expression>)`\n"
    "- `==>`, `<==>` and `<=!=>`\n\n"
    "Do NOT use JML quantified expressions, like `\\forall` or `\\exists`. You can use Java native grammars, "
    "like Java Streams, to replace them.\n"
    "Try to generate correct and complete postconditions.\n"
    "Note that your response should only contain JML `ensures` lines with leading `//@ ensures`."
)


# ---------------------------------------------------------------- the method
@dataclass(frozen=True)
class MethodSite:
    decl_line: int  # 1-based line where the declaration (annotations, modifiers) starts
    decl_start: int  # byte offset of that start
    indent: str
    binary_class: str  # e.g. javalib.Outer$Inner
    name: str
    header_end: int  # byte offset of the body's opening brace


def locate(file_text: str, name: str, start_line: int, end_line: int) -> MethodSite | None:
    """The method (or constructor) named ``name`` whose declaration lies in
    ``start_line..end_line`` (the task's ``content``, which starts at its Javadoc)."""
    src = file_text.encode("utf-8")
    tree = parse_java(src)
    package = ""
    for c in tree.root_node.named_children:
        if c.type == "package_declaration":
            ident = next((k for k in c.named_children if k.type in ("scoped_identifier", "identifier")), None)
            package = _text(src, ident) if ident else ""
    best = None
    for n in _walk(tree.root_node):
        if n.type not in ("method_declaration", "constructor_declaration"):
            continue
        nm = n.child_by_field_name("name")
        if nm is None or _text(src, nm) != name:
            continue
        line = n.start_point[0] + 1
        if start_line <= line <= end_line and (best is None or line < best.start_point[0] + 1):
            best = n
    if best is None:
        return None
    classes = []
    p = best.parent
    while p is not None:
        if p.type in ("class_declaration", "interface_declaration", "enum_declaration", "record_declaration"):
            classes.append(_text(src, p.child_by_field_name("name")))
        p = p.parent
    binary = "$".join(reversed(classes))
    if package:
        binary = package + "." + binary
    line_start = src.rfind(b"\n", 0, best.start_byte) + 1
    indent = src[line_start:best.start_byte].decode("utf-8")
    indent = indent if not indent.strip() else re.match(r"\s*", indent).group(0)
    body = best.child_by_field_name("body")
    return MethodSite(best.start_point[0] + 1, best.start_byte, indent, binary, name,
                      body.start_byte if body is not None else best.end_byte)


# ---------------------------------------------------------------- prompts (D.2)
def _comments_removed(text: str) -> str:
    """The text without its comments; a comment alone on its lines takes the lines with it."""
    src = text.encode("utf-8")
    tree = parse_java(src)
    cuts = []
    for n in _walk(tree.root_node):
        if n.type not in ("line_comment", "block_comment"):
            continue
        a, b = n.start_byte, n.end_byte
        line_start = src.rfind(b"\n", 0, a) + 1
        line_end = src.find(b"\n", b)
        line_end = len(src) if line_end < 0 else line_end
        if not src[line_start:a].strip() and not src[b:line_end].strip():
            a, b = line_start, min(line_end + 1, len(src))  # the whole lines
        else:
            while a > line_start and src[a - 1:a] in (b" ", b"\t"):
                a -= 1  # the spaces before a trailing comment
        cuts.append((a, b))
    out, cur = [], 0
    for a, b in sorted(cuts):
        if a < cur:
            continue
        out.append(src[cur:a])
        cur = b
    out.append(src[cur:])
    return b"".join(out).decode("utf-8")


def _bodies_removed(text: str) -> str:
    src = text.encode("utf-8")
    tree = parse_java(src)
    cuts = []
    for n in _walk(tree.root_node):
        if n.type in ("method_declaration", "constructor_declaration"):
            body = n.child_by_field_name("body")
            if body is not None and not any(a <= body.start_byte < b for a, b in cuts):
                cuts.append((body.start_byte, body.end_byte))
    out, cur = [], 0
    for a, b in sorted(cuts):
        out.append(src[cur:a] + b"{ ... }")
        cur = b
    out.append(src[cur:])
    return b"".join(out).decode("utf-8")


def render_prompt(setting: str, file_text: str, content: str, header: str, name: str) -> str:
    """Figure 7's template for Java.  F2P: the file and the method as written.  C2P:
    comments removed from both.  N2P: every method body in the file replaced by
    ``{ ... }``; the target's header (Javadoc and signature) only."""
    if setting == "f2p":
        context, target = file_text, content
    elif setting == "c2p":
        context, target = _comments_removed(file_text), _comments_removed(content)
    elif setting == "n2p":
        context, target = _bodies_removed(file_text), header
    else:
        raise ValueError(f"unknown setting {setting!r}; known: {', '.join(SETTINGS)}")
    return (f"## Code Context\n```\n{context}\n```\n## Target Method\n```\n{target}\n```\n## Guideline\n"
            + GUIDELINE.format(name=name))


# ---------------------------------------------------------------- answers
_FENCE = re.compile(r"```[^\n]*\n(.*?)```", re.S)
_MARKERS = re.compile(r"^\s*(?://\s*@+|/\*+\s*@*|@+\*/|\*+/|\*+(?!/)|@+)?\s*")
_UNICODE_ESCAPE = re.compile(r"\\u+[0-9a-fA-F]{0,4}")


def _cut_clause(text: str) -> tuple[str, bool, str]:
    """The clause up to its top-level ``;`` (outside strings, chars and brackets);
    (clause, found the ``;``, the text after it)."""
    depth, i, quote = 0, 0, ""
    while i < len(text):
        ch = text[i]
        if quote:
            if ch == "\\":
                i += 2
                continue
            if ch == quote:
                quote = ""
        elif ch in "\"'":
            quote = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth = max(0, depth - 1)
        elif ch == ";" and depth == 0:
            return text[:i], True, text[i + 1:]
        i += 1
    return text, False, ""


def _normalise(clause: str, number: int) -> str:
    """One line of JML with the clause's tokens (comments dropped, whitespace
    collapsed); rejects what could leave a ``//@`` line: line breaks inside a
    token and Java unicode escapes (javac decodes ``\\u000a`` even in comments)."""
    if _UNICODE_ESCAPE.search(clause):
        raise AnswerError(f"ensures clause {number}: Java unicode escapes (\\u) are not accepted in a clause")
    try:
        clause = normalise_source(clause)  # the JML service's characters (issue 42): no surrogate, no ignorable
    except LexicalError as exc:
        raise AnswerError(f"ensures clause {number}: {exc}") from None
    try:
        toks = tokenize(clause)
    except JmlSyntaxError as exc:
        raise AnswerError(f"ensures clause {number} does not parse: {exc}") from None
    parts, prev_end = [], None
    for t in toks:
        if t.kind == "eof":
            break
        if any(ord(c) < 0x20 for c in t.text):
            raise AnswerError(f"ensures clause {number}: a control character (line break) inside {t.text[:20]!r}")
        if prev_end is not None and t.pos > prev_end:
            parts.append(" ")
        parts.append(t.text)
        prev_end = t.pos + len(t.text)
    line = "".join(parts).strip()
    if not line:
        raise AnswerError(f"ensures clause {number} is empty")
    try:
        parse_expr(line)
    except JmlSyntaxError as exc:
        raise AnswerError(f"ensures clause {number} does not parse: {exc} in {line[:80]!r}") from None
    return line


def parse_answer(text: str) -> list[str]:
    """The ``ensures`` clauses of an answer, each as one line of JML without the
    keyword and the ``;``.  Taken from the last fenced block that mentions
    ``ensures`` (else the whole text); lines may carry ``//@``, ``/*@``, ``*`` or
    ``@`` markers and prose lines are ignored; a clause runs to its top-level
    ``;`` (or the end of its line).  Raises :class:`AnswerError` (one line) when no
    clause is found or one does not parse."""
    if not isinstance(text, str) or not text.strip():
        raise AnswerError("empty answer")
    blocks = [b for b in _FENCE.findall(text) if re.search(r"\bensures\b", b)]
    block = blocks[-1] if blocks else text
    lines = [_MARKERS.sub("", ln, count=1) for ln in block.splitlines()]
    clauses: list[str] = []
    i = 0
    while i < len(lines):
        m = re.match(r"(?:(?:public|private|protected)\s+)?(?:normal_behavior\s+|also\s+)*ensures\b(.*)", lines[i])
        if not m:
            i += 1
            continue
        rest = m.group(1)
        clause, done, after = _cut_clause(rest)
        j = i
        while not done and j + 1 < len(lines) and not re.match(r"(ensures|requires|also|assignable|signals)\b",
                                                                   lines[j + 1]):
            j += 1
            rest = rest + "\n" + lines[j]
            clause, done, after = _cut_clause(rest)
        if not done:  # no ';': the clause is its own line (tolerant reading)
            clause, j, after = m.group(1), i, ""
        clause = re.sub(r"@+\s*$", "", clause.strip().rstrip("*/").strip())
        clauses.append(_normalise(clause, len(clauses) + 1))
        after = _MARKERS.sub("", after.strip(), count=1)
        if re.match(r"ensures\b", after):  # another clause on the same line
            lines[j] = after
            i = j
        else:
            i = j + 1
    if not clauses:
        first = next((ln.strip() for ln in block.splitlines() if ln.strip()), "")
        raise AnswerError(f"no JML ensures clause in the answer (first line: {first[:60]!r})")
    return clauses


def reference_clauses(ref_postcond: str) -> list[str]:
    return parse_answer(ref_postcond)


# ---------------------------------------------------------------- injection
@dataclass(frozen=True)
class Injected:
    text: str
    decl_line: int  # the method's declaration line in ``text``
    clause_lines: dict[int, int]  # JML line in ``text`` -> clause number (1-based)
    site: MethodSite


def inject(file_text: str, name: str, start_line: int, end_line: int, clauses: list[str]) -> Injected | None:
    """``//@ ensures CLAUSE;`` lines directly above the method's declaration (after
    its Javadoc, before its annotations), at its indentation.  None when the
    method is not found in the task's line range."""
    site = locate(file_text, name, start_line, end_line)
    if site is None:
        return None
    src = file_text.encode("utf-8")
    line_start = src.rfind(b"\n", 0, site.decl_start) + 1
    block = "".join(f"{site.indent}//@ ensures {c};\n" for c in clauses).encode("utf-8")
    prefix = src[:line_start]
    if src[line_start:site.decl_start].strip():  # something precedes the declaration on its line
        prefix, block = src[:site.decl_start], b"\n" + block + site.indent.encode("utf-8")
    new = prefix + block + src[len(prefix):]
    first = prefix.count(b"\n") + 1 + (1 if block.startswith(b"\n") else 0)
    lines = {first + k: k + 1 for k in range(len(clauses))}
    return Injected(new.decode("utf-8"), site.decl_line + len(clauses) + (1 if block.startswith(b"\n") else 0),
                    lines, site)
