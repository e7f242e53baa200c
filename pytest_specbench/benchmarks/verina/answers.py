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


def code_text(text: str) -> str:
    """``text`` with Lean's comments blanked (``--`` to the end of the line, ``/- -/``
    nested, doc comments alike) and the text of string literals blanked (what is in
    braces kept: interpolation), so that a keyword in a comment or a string does
    not count and a comment marker inside a string does not hide the code after
    it.  Line breaks and lengths are kept."""
    out: list[str] = []
    i, n, depth = 0, len(text), 0
    while i < n:
        c = text[i]
        if depth:
            if text.startswith("/-", i):
                depth, i = depth + 1, i + 2
                out.append("  ")
            elif text.startswith("-/", i):
                depth, i = depth - 1, i + 2
                out.append("  ")
            else:
                out.append("\n" if c == "\n" else " ")
                i += 1
        elif text.startswith("/-", i):
            depth, i = 1, i + 2
            out.append("  ")
        elif text.startswith("--", i):
            end = text.find("\n", i)
            end = n if end < 0 else end
            out.append(" " * (end - i))
            i = end
        elif c == '"':
            # A string's text is blanked; what is inside braces is kept, as it is
            # code in an interpolated string (s!"{e}", throwError "{e}").
            out.append('"')
            j, braces = i + 1, 0
            while j < n and (text[j] != '"' or braces):
                if text[j] == "\\" and not braces:
                    out.append("  " if j + 1 < n and text[j + 1] != "\n" else " ")
                    j += 2
                    continue
                if text[j] == "{":
                    braces += 1
                elif text[j] == "}" and braces:
                    braces -= 1
                    out.append("}")
                    j += 1
                    continue
                out.append(text[j] if braces or text[j] in "{\n" else " ")
                j += 1
            out.append(text[j:j + 1])
            i = j + 1
        elif c == "'" and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] in "_'!?.")):
            # a char literal ('"', '\'', 'a'); a quote after a name is part of the name (x')
            m = re.match(r"'(?:\\(?:x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|.)|[^\\\n])'", text[i:])
            lit = m.group(0) if m else "'"
            out.append(lit)
            i += len(lit)
        else:
            out.append(c)
            i += 1
    return "".join(out)


# What an answer may not bring, found as tokens in its code (comments blanked).
# Each would let a sample run code while Lean elaborates the file (and so print
# the harness's sentinels and stop Lean before a failing check), change what the
# harness's own commands mean, or weaken what a check proves.  The reference
# answers of every task use none of them (tests/test_hostile_verina.py).
_WORD = r"(?<![\w'!?.])({})(?![\w'!?])"
FORBIDDEN_WORDS = {
    # elaboration-time code: commands, tactics and terms that run metaprograms
    "run_cmd": "runs a metaprogram", "run_elab": "runs a metaprogram", "run_meta": "runs a metaprogram",
    "run_tac": "runs a metaprogram", "by_elab": "runs a metaprogram", "initialize": "runs code at load",
    "builtin_initialize": "runs code at load",
    # new syntax and elaborators: could rewrite the harness's #guard / decide / plausible
    "macro": "defines syntax", "macro_rules": "defines syntax", "elab": "defines an elaborator",
    "elab_rules": "defines an elaborator", "syntax": "defines syntax", "declare_syntax_cat": "defines syntax",
    "notation": "defines notation", "infix": "defines notation", "infixl": "defines notation",
    "infixr": "defines notation", "prefix": "defines notation", "postfix": "defines notation",
    # code the compiler runs in place of what the kernel sees
    "unsafe": "leaves the kernel's guarantees", "implemented_by": "replaces compiled code",
    "extern": "replaces compiled code", "csimp": "replaces compiled code",
    # instances would change what ==, decide and plausible compute in the checks
    "instance": "declares an instance", "attribute": "changes attributes of existing names",
    # assumptions: a check must rest on what the task states
    "axiom": "declares an axiom", "variable": "adds hypotheses to later theorems",
    "include": "adds hypotheses to later theorems", "omit": "changes the hypotheses of later theorems",
    "namespace": "moves the harness's definitions", "section": "scopes the harness's definitions",
}
_FORBIDDEN_RE = re.compile(_WORD.format("|".join(sorted(FORBIDDEN_WORDS, key=len, reverse=True))))
_HASH_COMMAND = re.compile(r"(?<![\w'!?.])(#[A-Za-z_][\w!?]*)(?!\[)")  # #eval, #exit, #print ...; not #[..] or #v[..]
_DERIVING_INSTANCE = re.compile(r"\bderiving\s+instance\b")
_SORRY = re.compile(_WORD.format("sorry|admit"))
_SET_OPTION = re.compile(r"\bset_option\s+([\w.]+)")
HARMLESS_OPTIONS = ("pp.", "trace.", "linter.", "autoImplicit", "relaxedAutoImplicit")
# Attributes in @[...] lists: the ones that only guide simp, unfolding or inlining.
HARMLESS_ATTRIBUTES = {"simp", "reducible", "irreducible", "semireducible", "inline", "noinline", "specialize",
                       "ext", "local", "scoped", "match_pattern", "induction_eliminator", "cases_eliminator",
                       "grind", "aesop", "deprecated", "nolint", "norm_num", "simps", "pp_nodot", "pp_dot"}


def screen(fields: dict[str, str]) -> None:
    """Raise :class:`AnswerError` when a field holds what a sample may not bring."""
    for line in fields.get("imports", "").splitlines():
        line = line.strip()
        if line and not line.startswith("--") and not IMPORT_LINE.match(line):
            raise AnswerError(f"imports field holds a non-import line: {line[:60]!r}")
    for name, value in fields.items():
        if "-- !benchmark" in value:
            raise AnswerError(f"{name} contains a '-- !benchmark' marker")
        code = code_text(value)
        found = _first_forbidden(name, code)
        if found:
            raise AnswerError(f"{name} {found}, which the harness does not accept")


def _first_forbidden(field: str, code: str) -> str:
    hits = []
    m = _FORBIDDEN_RE.search(code)
    if m:
        hits.append((m.start(), f"uses '{m.group(1)}' ({FORBIDDEN_WORDS[m.group(1)]})"))
    m = _HASH_COMMAND.search(code)
    if m:
        hits.append((m.start(), f"uses '{m.group(1)}' (a command: answers hold definitions only)"))
    m = _DERIVING_INSTANCE.search(code)
    if m:
        hits.append((m.start(), "uses 'deriving instance' (declares an instance)"))
    if field not in ("proof", "proof_aux"):  # a proof's axioms are checked with #print axioms
        m = _SORRY.search(code)
        if m:
            hits.append((m.start(), f"uses '{m.group(1)}' outside a proof"))
    for m in _SET_OPTION.finditer(code):
        if not m.group(1).startswith(HARMLESS_OPTIONS):
            hits.append((m.start(), f"uses 'set_option {m.group(1)}' (changes how Lean checks)"))
            break
    for m in re.finditer(r"@\[([^\]]*)\]", code):
        for entry in m.group(1).split(","):
            words = entry.replace("-", " ").split()
            words = [w for w in words if w not in ("local", "scoped")] or ["local"]
            if words[0] not in HARMLESS_ATTRIBUTES:
                hits.append((m.start(), f"uses the attribute '{words[0]}'"))
                break
    return min(hits)[1] if hits else ""
