"""The answer screen: what a VERINA answer may not bring into a Lean file.

The checks are commands in the same Lean file as the answer, and Lean runs code
while it elaborates: a sample that runs code can read its own file (the
per-file nonce), print the harness's sentinels in ``lean --json`` form and exit
before a failing ``#guard``.  So every answer field is refused unless it holds
declarations only.  The screen reads each field three ways and refuses it when
any reading finds what it may not hold (two lexers never agree on every byte;
each reading covers a way ours could disagree with Lean's):

1. **lexed** (:func:`code_text`): comments and string text blanked, what an
   interpolated string's braces hold kept as code;
2. **comments only** (:func:`comment_text`): comments blanked, strings and char
   literals not recognised at all, so a quote our lexer misreads cannot hide
   code (and every word inside a string is seen);
3. **raw**: nothing blanked, NFKC-folded too.  Every forbidden command,
   attribute, option and name refuses here wherever it is, comments and strings
   included, except the few command keywords that are ordinary English words
   (``prefix``, ``section``, ``instance``, ...: :data:`ENGLISH_COMMANDS`), which
   reference answers write in their comments; those are found by readings 1
   and 2, that is anywhere outside a comment.

Commands are an allow-list: every command keyword of Lean 4.18 core, Batteries,
Mathlib, Aesop and Plausible (:data:`KNOWN_COMMANDS`) outside
:data:`ALLOWED_COMMANDS` refuses; attributes an allow-list of those that
register no metaprogram (:data:`ALLOWED_ATTRIBUTES`), read with nested brackets;
options an allow-list of names (:data:`ALLOWED_OPTIONS`).  Any mention of
``IO``, ``EIO``, ``BaseIO``, ``Lean.Elab``, ``Lean.Meta`` (any ``Elab``/``Meta``
component), ``System`` or a name containing ``unsafe`` refuses: a pure ``def``
that applies an ``IO`` action to the world token runs it when ``#guard``
evaluates the definition.  Control, zero-width and bidirectional characters
refuse outright (Lean and Python split lines and tokens at different ones).

This is a screen, not the wall: a command keyword added by a package after
Lean 4.18 / this Mathlib is not in the list.  Where Lean is installed the files
also end with a post-elaboration audit (:mod:`.audit`).  The reference answers
of every task pass (``tests/test_hostile_verina.py``).
"""
from __future__ import annotations

import functools
import re
import unicodedata

from .answers import IMPORT_LINE, AnswerError

# ---------------------------------------------------------------- the lexers
_IDENT_CHARS = "_'!?"


def _is_ident_char(c: str) -> bool:
    """Whether Lean reads ``c`` as part of a name (ASCII letters, digits, ``_'!?``,
    and its letter-like characters: see :data:`_NOT_NAME_CHAR`)."""
    if c.isascii():
        return c.isalnum() or c in _IDENT_CHARS
    return not _NOT_NAME_CHAR.match(c)


def _token_start(text: str, end: int) -> int:
    """Start of the identifier/number token that ends just before ``end``."""
    i = end
    while i > 0 and _is_ident_char(text[i - 1]):
        i -= 1
    return i


_CHAR_LITERAL = re.compile(r"'(?:\\(?:x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|.)|[^\\\n'])'")
_RAW_OPEN = re.compile(r'r(#*)"')


def _starts_char_literal(text: str, i: int) -> bool:
    """Whether the ``'`` at ``i`` opens a char literal for Lean.  A quote that
    ends a name is part of it (``x'``, ``h₁'``); after a number (``1'``), after
    ``.`` (``x.'a'``), a bracket or a space it opens a literal."""
    if i > 0 and _is_ident_char(text[i - 1]) and text[i - 1] not in "!?":
        start = _token_start(text, i)
        if not text[start].isdigit():
            return False  # the quote is part of an identifier
    return bool(_CHAR_LITERAL.match(text, i))


def _interpolated(text: str, i: int) -> bool:
    """A string at ``i`` is interpolated when a ``name!`` token opens it
    (``s!"..."``, ``m!"..."``, ``f!"..."``); ``{`` in any other string is text."""
    return i >= 2 and text[i - 1] == "!" and _is_ident_char(text[i - 2])


def _lex(text: str, i: int, out: list[str], in_braces: bool) -> int:
    """Append ``text[i:]``'s lexed form to ``out`` up to the end, or (``in_braces``)
    up to the ``}`` closing an interpolation; return where it stopped."""
    n, braces = len(text), 0
    while i < n:
        c = text[i]
        end = _comment(text, i, out)
        if end >= 0:
            i = end
        elif in_braces and c == "{":
            braces += 1
            out.append(c)
            i += 1
        elif in_braces and c == "}":
            if not braces:
                return i
            braces -= 1
            out.append(c)
            i += 1
        elif c == "«":
            # a quoted name: anything up to » is part of the name, never a string or comment
            end = text.find("»", i)
            end = n if end < 0 else end + 1
            out.append("".join("\n" if ch == "\n" else " " for ch in text[i:end]))
            i = end
        elif c == "r" and (i == 0 or not _is_ident_char(text[i - 1])) and _RAW_OPEN.match(text, i):
            # r"..." / r#"..."#: no escapes; ends at a quote followed by as many #
            hashes = _RAW_OPEN.match(text, i).group(1)
            close = '"' + hashes
            body = i + 2 + len(hashes)
            end = text.find(close, body)
            end = n if end < 0 else end + len(close)
            out.append(text[i:body] + "".join("\n" if ch == "\n" else " " for ch in text[body:end]))
            i = end
        elif c == '"':
            i = _string(text, i, out, _interpolated(text, i))
        elif c == "'" and _starts_char_literal(text, i):
            lit = _CHAR_LITERAL.match(text, i).group(0)
            out.append("'" + " " * (len(lit) - 2) + "'")
            i += len(lit)
        else:
            # ordinary code up to the next character that could open or close something
            m = _SPECIAL.search(text, i + 1)
            j = m.start() if m else n
            out.append(text[i:j])
            i = j
    return i


_SPECIAL = re.compile(r"[-/\"'«r{}]")


def _string(text: str, i: int, out: list[str], interpolated: bool) -> int:
    out.append('"')
    j, n = i + 1, len(text)
    while j < n and text[j] != '"':
        if text[j] == "\\":
            out.append(" " if j + 1 >= n or text[j + 1] == "\n" else "  ")
            if j + 1 < n and text[j + 1] == "\n":
                out.append("\n")
            j += 2
            continue
        if interpolated and text[j] == "{":
            out.append("{")
            j = _lex(text, j + 1, out, in_braces=True)
            if j < n:
                out.append("}")
                j += 1
            continue
        out.append("\n" if text[j] == "\n" else " ")
        j += 1
    out.append(text[j:j + 1])
    return j + 1


def code_text(text: str) -> str:
    """``text`` with Lean's comments blanked (``--`` to the end of the line, ``/- -/``
    nested, doc comments alike), the text of string and char literals blanked
    (plain, raw ``r#"..."#`` and interpolated strings, whose ``{...}`` is kept as
    code), quoted names ``«...»`` blanked.  Line breaks and lengths are kept."""
    out: list[str] = []
    _lex(text, 0, out, in_braces=False)
    return "".join(out)


_COMMENT_OPEN = re.compile(r"/-|--")


def comment_text(text: str) -> str:
    """``text`` with comments blanked and nothing else: quotes are not read as
    strings, so no string our lexer misreads can hide what follows it."""
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        m = _COMMENT_OPEN.search(text, i)
        j = m.start() if m else n
        out.append(text[i:j])
        i = _comment(text, j, out) if m else n
    return "".join(out)


def _comment(text: str, i: int, out: list[str]) -> int:
    """When a comment opens at ``i`` (``--`` to the end of the line; ``/- -/``
    nested, doc comments alike): append it blanked (line breaks kept) and return
    where it ends; else -1."""
    if text.startswith("--", i):
        end = text.find("\n", i)
        end = len(text) if end < 0 else end
    elif text.startswith("/-", i):
        depth, end = 1, i + 2
        while depth and end < len(text):
            if text.startswith("/-", end):
                depth, end = depth + 1, end + 2
            elif text.startswith("-/", end):
                depth, end = depth - 1, end + 2
            else:
                end += 1
    else:
        return -1
    out.append("".join("\n" if ch == "\n" else " " for ch in text[i:end]))
    return end


# ---------------------------------------------------------------- what is refused
# The command keywords of Lean 4.18, Batteries, Mathlib, Aesop and Plausible fall in
# two sets: ALLOWED_COMMANDS (declarations, and what shapes them) and KNOWN_COMMANDS
# (every other one, with why it refuses; tests/test_hostile_verina.py keeps them apart).
ALLOWED_COMMANDS = frozenset({
    "def", "theorem", "lemma", "abbrev", "structure", "inductive", "example", "where", "open", "in", "mutual",
    "end", "universe", "deriving", "termination_by", "decreasing_by", "private", "protected", "noncomputable",
    "partial", "nonrec", "set_option", "import"})
_RUNS = "runs a metaprogram"
_SYNTAX = "defines syntax or an elaborator"
_COMPILED = "replaces compiled code"
_INSTANCE = "declares an instance"
_WEAKENS = "weakens what a check proves"
_SCOPE = "moves or scopes the harness's definitions"
_DECLARES = "declares what the harness does not read"
KNOWN_COMMANDS = {
    # elaboration-time code
    "run_cmd": _RUNS, "run_elab": _RUNS, "run_meta": _RUNS, "run_tac": _RUNS, "by_elab": _RUNS,
    "initialize": "runs code at load", "builtin_initialize": "runs code at load",
    "register_option": "runs code at load", "register_builtin_option": "runs code at load",
    "register_simp_attr": "runs code at load", "register_label_attr": "runs code at load",
    "declare_aesop_rule_sets": "runs code at load", "add_aesop_rules": "registers a metaprogram",
    "erase_aesop_rules": "changes a tactic", "declare_config_elab": _SYNTAX, "declare_simp_like_tactic": _SYNTAX,
    "simproc": "registers a simp metaprogram", "dsimproc": "registers a simp metaprogram",
    "simproc_decl": "registers a simp metaprogram", "dsimproc_decl": "registers a simp metaprogram",
    "builtin_simproc": "registers a simp metaprogram", "builtin_dsimproc": "registers a simp metaprogram",
    "builtin_simproc_decl": "registers a simp metaprogram", "grind_pattern": "changes a tactic",
    "compile_inductive%": _COMPILED, "compile_def%": _COMPILED, "gen_injective_theorems%": _DECLARES,
    # new syntax and elaborators: could rewrite the harness's #guard / decide / plausible
    "macro": _SYNTAX, "macro_rules": _SYNTAX, "elab": _SYNTAX, "elab_rules": _SYNTAX, "syntax": _SYNTAX,
    "declare_syntax_cat": _SYNTAX, "notation": _SYNTAX, "notation3": _SYNTAX, "infix": _SYNTAX,
    "infixl": _SYNTAX, "infixr": _SYNTAX, "prefix": _SYNTAX, "postfix": _SYNTAX, "binder_predicate": _SYNTAX,
    "elab_stx_quot": _SYNTAX, "scoped[": _SYNTAX,
    # code the compiler runs in place of what the kernel sees
    "unsafe": "leaves the kernel's guarantees", "implemented_by": _COMPILED, "extern": _COMPILED,
    "csimp": _COMPILED, "opaque": "declares a constant without a definition",
    # instances would change what ==, decide and plausible compute in the checks
    "instance": _INSTANCE, "attribute": "changes attributes of existing names", "class": _INSTANCE,
    "seal": "changes how definitions unfold", "unseal": "changes how definitions unfold",
    # assumptions: a check must rest on what the task states
    "axiom": "declares an axiom", "variable": "adds hypotheses to later theorems",
    "include": "adds hypotheses to later theorems", "omit": "changes the hypotheses of later theorems",
    "namespace": _SCOPE, "section": _SCOPE, "export": _SCOPE,
    "alias": _DECLARES, "irreducible_def": _DECLARES, "add_decl_doc": _DECLARES, "library_note": _DECLARES,
    "assert_not_exists": _DECLARES, "initialize_simps_projections": _DECLARES, "recall": _DECLARES,
    "suppress_compilation": _COMPILED, "unsuppress_compilation": _COMPILED,
    "unif_hint": "changes how the harness's terms elaborate", "init_quot": _DECLARES,
    "assert_not_imported": _DECLARES, "mk_iff_of_inductive_prop": _DECLARES, "extend_docs": _DECLARES,
    "proof_wanted": _DECLARES, "register_tactic_tag": _DECLARES, "tactic_extension": _DECLARES,
    "reset_grind_attrs%": "changes a tactic", "declare_uint_theorems": _DECLARES,
    # a term that reads a file while Lean elaborates: the check file holds the expected outputs
    "include_str": "reads a file while Lean elaborates",
}
# Command keywords that are also English words (reference answers write 'prefix' in
# comments): refused anywhere outside a comment (readings 1 and 2), not in the raw text.
ENGLISH_COMMANDS = frozenset({"prefix", "postfix", "infix", "notation", "syntax", "section", "namespace",
                              "variable", "include", "omit", "instance", "attribute", "axiom", "export", "class",
                              "opaque", "alias", "recall", "seal", "unseal"})
# Names whose mention refuses (any component of a dotted name).
FORBIDDEN_NAMES = {
    "IO": "names IO (runs effects)", "EIO": "names IO (runs effects)", "BaseIO": "names IO (runs effects)",
    "RealWorld": "names IO (runs effects)", "Elab": "names Lean's elaborator", "Meta": "names Lean's metaprograms",
    "MetaM": "names Lean's metaprograms", "CoreM": "names Lean's metaprograms",
    "TermElabM": "names Lean's elaborator", "CommandElabM": "names Lean's elaborator",
    "TacticM": "names Lean's elaborator", "MacroM": "names Lean's elaborator", "Parser": "names Lean's parser",
    "Compiler": "names Lean's compiler", "System": "names the operating system",
}
# Attributes in @[...] lists: the ones that register no metaprogram (only guide simp,
# unfolding, inlining, extensionality or elimination).  Not aesop or norm_num: each
# registers a rule that its tactic runs as a metaprogram.
ALLOWED_ATTRIBUTES = frozenset({"simp", "reducible", "irreducible", "semireducible", "inline", "noinline",
                                "specialize", "ext", "match_pattern", "induction_eliminator", "cases_eliminator",
                                "deprecated", "nolint", "simps", "grind", "pp_nodot", "refl", "symm", "trans"})
# Options a sample may set: only what changes warnings or implicit arguments.
ALLOWED_OPTIONS = frozenset({"autoImplicit", "relaxedAutoImplicit"})
ALLOWED_OPTION_FAMILIES = ("linter.",)

_WORD = r"(?<![\w'!?.])({})(?![\w'!?])"
_COMMAND_RE = {english: re.compile(_WORD.format("|".join(
    re.escape(k) for k in sorted((k for k in KNOWN_COMMANDS if (k in ENGLISH_COMMANDS) == english),
                                 key=len, reverse=True)))) for english in (False, True)}
# #eval, #exit, #print ...; not #[..] or #v[..].  No look-behind: `#` is never part of a
# name, so Lean reads `x#eval` as `x` then the command (and resumes at a command
# keyword after a parse error).
_HASH_COMMAND = re.compile(r"(#[A-Za-z_][\w!?]*)(?![\w!?\[])")
_DERIVING_INSTANCE = re.compile(r"\bderiving\s+instance\b")
_SORRY = re.compile(_WORD.format("sorry|admit"))
_SET_OPTION = re.compile(r"\bset_option\s+(\S+)")
_FORBIDDEN_NAME = re.compile(r"(?<![\w'!?])({})(?![\w'!?])".format("|".join(FORBIDDEN_NAMES)))
# In the raw text (comments included) only the names that are no English word:
# "System" or "Parser" may start a comment's sentence.
_FORBIDDEN_RAW_NAME = re.compile(r"(?<![\w'!?])(IO|EIO|BaseIO|RealWorld|MetaM|CoreM|TermElabM|CommandElabM|TacticM"
                                 r"|MacroM|(?<=Lean\.)(?:Elab|Meta|Parser|Compiler))(?![\w'!?])")
_UNSAFE = re.compile(r"[Uu]nsafe")
_BAD_CHARS = {"Cc", "Cf", "Zl", "Zp", "Cs", "Co", "Cn"}
_ASCII_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
_MIXED_SCRIPTS = ("CYRILLIC", "ARMENIAN", "CHEROKEE", "GREEK CAPITAL")


def screen(fields: dict[str, str]) -> None:
    """Raise :class:`AnswerError` (one line naming the field and what it holds)
    when a field holds what a sample may not bring."""
    for line in fields.get("imports", "").split("\n"):
        line = line.strip()
        if line and not line.startswith("--") and not IMPORT_LINE.match(line):
            raise AnswerError(f"imports field holds a non-import line: {line[:60]!r}")
    for name, value in fields.items():
        if "-- !benchmark" in value:
            raise AnswerError(f"{name} contains a '-- !benchmark' marker")
        found = _field_problem(name, value)
        if found:
            raise AnswerError(f"{name} {found}, which the harness does not accept")


@functools.lru_cache(maxsize=4096)
def _field_problem(name: str, value: str) -> str:
    """What a field holds that it may not ("" if nothing); the checks of one sample
    (and the task kinds of one reference answer) screen the same fields again."""
    return _bad_character(value) or _first_forbidden(name, value)


def _bad_character(value: str) -> str:
    m = _ASCII_CONTROL.search(value)
    hits = [m.start()] if m else []
    if not value.isascii():
        hits += [value.index(c) for c in set(value) if not c.isascii() and unicodedata.category(c) in _BAD_CHARS]
    if hits:
        n = min(hits)
        c = value[n]
        what = f"{unicodedata.name(c)} (U+{ord(c):04X})" if unicodedata.name(c, "") else f"U+{ord(c):04X}"
        return f"holds the character {what} at offset {n}"
    if value.isascii():
        return ""
    for m in re.finditer(r"\w+", value):
        word = m.group(0)
        if word.isascii() or not any(c.isascii() and c.isalpha() for c in word):
            continue
        if any(unicodedata.name(c, "").startswith(_MIXED_SCRIPTS) for c in word):
            return f"holds the word {word!r}, which mixes Latin letters with look-alikes"
    return ""


# Characters Lean reads as part of a name besides ASCII letters, digits and _'!?
# (Lean 4's `isLetterLike` and `isSubScriptAlnum`): Greek but λ, Π, Σ; Coptic;
# polytonic Greek; the letterlike block; mathematical alphanumerics; subscripts.
_NOT_NAME_CHAR = re.compile("[^\x00-\x7f\u03b1-\u03ba\u03bc-\u03c9\u0391-\u039f\u03a1\u03a2\u03a4-\u03a9"
                            "\u03ca-\u03fb\u1f00-\u1ffe\u2100-\u214f\U0001d49c-\U0001d59f\u2080-\u2089"
                            "\u2090-\u209c\u1d62-\u1d6a]")
_LEADING_NUMBER = re.compile(r"(?<![\w'!?])\d+")


def lean_words(text: str) -> str:
    """``text`` with what cannot be part of a Lean name blanked, so that Python's
    word boundaries fall where Lean's do: ``λmacro``, ``émacro`` and ``1macro`` are
    a token (or a number) and then the keyword ``macro`` for Lean, one word for
    Python's ``\\w``.  Lengths are kept."""
    if not text.isascii():
        text = _NOT_NAME_CHAR.sub(" ", text)
    return _LEADING_NUMBER.sub(lambda m: " " * len(m.group(0)), text)


def _first_forbidden(field: str, value: str) -> str:
    lexed, commented = lean_words(code_text(value)), lean_words(comment_text(value))
    raw = [lean_words(value)]
    folded = unicodedata.normalize("NFKC", value)
    if folded != value:
        raw.append(lean_words(folded))
    hits: list[tuple[int, str]] = []
    for text in (lexed, commented):
        hits += _command_hits(text, english=True) + _name_hits(text, _FORBIDDEN_NAME)
        m = _DERIVING_INSTANCE.search(text)
        if m:
            hits.append((m.start(), "uses 'deriving instance' (declares an instance)"))
        if field not in ("proof", "proof_aux"):  # a proof's axioms are checked with #print axioms
            m = _SORRY.search(text)
            if m:
                hits.append((m.start(), f"uses '{m.group(1)}' outside a proof"))
    for text in [lexed, commented] + raw:
        hits += _command_hits(text, english=False) + _hash_hits(text) + _option_hits(text) \
            + _attribute_hits(text) + _name_hits(text, _FORBIDDEN_RAW_NAME)
        if hits:
            break
    return min(hits)[1] if hits else ""


_TOKEN = re.compile(r"(?<![\w'!?.])[A-Za-z_][\w'!?]*%?\[?")


def _command_hits(text: str, english: bool) -> list[tuple[int, str]]:
    # one pass over the words first: most fields hold no keyword at all
    words = {w.rstrip("[") if not w.startswith("scoped[") else w for w in _TOKEN.findall(text)}
    if words.isdisjoint(KNOWN_COMMANDS):
        return []
    m = _COMMAND_RE[english].search(text)
    return [(m.start(), f"uses '{m.group(1)}' ({KNOWN_COMMANDS[m.group(1)]})")] if m else []


def _hash_hits(text: str) -> list[tuple[int, str]]:
    m = _HASH_COMMAND.search(text)
    return [(m.start(), f"uses '{m.group(1)}' (a command: answers hold definitions only)")] if m else []


def option_allowed(name: str) -> bool:
    if name in ALLOWED_OPTIONS:
        return True
    return name.startswith(ALLOWED_OPTION_FAMILIES) and all(
        re.fullmatch(r"[A-Za-z_]\w*", part) for part in name.split("."))


def _option_hits(text: str) -> list[tuple[int, str]]:
    for m in _SET_OPTION.finditer(text):
        if not option_allowed(m.group(1)):
            return [(m.start(), f"uses 'set_option {m.group(1)[:40]}' (only {', '.join(sorted(ALLOWED_OPTIONS))} "
                                f"and linter.* may be set)")]
    return []


def attribute_groups(text: str) -> list[tuple[int, list[str]]]:
    """Each ``@[...]`` list (nested brackets and parentheses read, so ``@[aesop
    safe (rule_sets := [x]), command_elab f]`` has two entries): its offset and
    the first word of each entry (``local``/``scoped`` skipped)."""
    groups = []
    for m in re.finditer(r"@\[", text):
        i, depth, entries, current = m.end(), 0, [], []
        while i < len(text):
            c = text[i]
            if c in "[(":
                depth += 1
            elif c in "])":
                if depth == 0 and c == "]":
                    break
                depth -= 1
            elif c == "," and depth == 0:
                entries.append("".join(current))
                current = []
                i += 1
                continue
            current.append(c)
            i += 1
        entries.append("".join(current))
        words = []
        for entry in entries:
            tokens = [t for t in re.findall(r"[^\s(\[\]),]+", entry.replace("-", " - ")) if t not in ("local", "scoped")]
            words.append(tokens[0] if tokens else "")
        groups.append((m.start(), words))
    return groups


def _attribute_hits(text: str) -> list[tuple[int, str]]:
    for start, words in attribute_groups(text):
        for word in words:
            if word not in ALLOWED_ATTRIBUTES:
                return [(start, f"uses the attribute '{word[:40]}' (allowed: {', '.join(sorted(ALLOWED_ATTRIBUTES))})")]
    return []


def _name_hits(text: str, names: re.Pattern[str]) -> list[tuple[int, str]]:
    hits = []
    m = names.search(text)
    if m:
        hits.append((m.start(), f"mentions '{_name_at(text, m)}' ({FORBIDDEN_NAMES[m.group(1)]})"))
    m = _UNSAFE.search(text)
    if m:
        hits.append((m.start(), f"mentions '{_name_at(text, m)}' (unsafe code)"))
    return hits


def _name_at(text: str, m: re.Match[str]) -> str:
    """The dotted name around a match, for the refusal's line."""
    start, end = m.start(), m.end()
    while start > 0 and (_is_ident_char(text[start - 1]) or text[start - 1] in ".«»"):
        start -= 1
    while end < len(text) and (_is_ident_char(text[end]) or text[end] in ".«»"):
        end += 1
    return text[start:end].strip(".")[:40]
