"""Turn raw model text into the program to run, as EvalPlus's sanitizer does.

EvalPlus 0.3.1 (``evalplus.sanitize``) does two things, reproduced here with
:mod:`ast` instead of tree-sitter (both see the same code, because only text
that :func:`ast.parse` accepts is kept):

1. *Extract*: of all spans of two or more consecutive lines that parse, keep the
   one with the most non-blank lines (earliest on ties).  Markdown fences and
   prose fall away because they do not parse.  If nothing parses, the first line.
2. *Prune*: keep top-level imports (moved first), then classes, functions that
   contain a ``return``, and simple assignments, each the first of its name,
   and of those only what the entry point reaches through the names it uses.
   If that leaves nothing, the extracted span is returned as it is.

ContractEval's CS/EAS prompts ask for a JSON object whose ``"code"`` field holds
the program; :func:`extract_code_field` takes that field out first.
"""
from __future__ import annotations

import ast
import json
import re
import warnings
from functools import lru_cache

_FENCED_JSON = re.compile(r"```(?:json)?\s*(\{.*?\})\s*```", re.S)


def quiet_parse(text: str) -> ast.Module:
    """``ast.parse`` without the text's own SyntaxWarnings/DeprecationWarnings
    (``invalid escape sequence '\\w'`` in a reference or an answer is its problem,
    not a warning of the run: xdist workers printed it on the terminal)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SyntaxWarning)
        warnings.simplefilter("ignore", DeprecationWarning)
        return ast.parse(text)


def _parses(text: str) -> bool:
    try:
        quiet_parse(text)
        return True
    except (SyntaxError, MemoryError, ValueError, RecursionError):
        return False


def code_extract(text: str) -> str:
    """The longest (by non-blank lines) span of >= 2 lines that parses."""
    lines = text.split("\n")
    n = len(lines)
    nonblank = [0] * (n + 1)
    for k, line in enumerate(lines):
        nonblank[k + 1] = nonblank[k] + (1 if line.strip() else 0)
    if _parses(text) and n >= 2:
        # The whole text is the longest span there is (fast path, same answer:
        # any span with as many non-blank lines starts no earlier than line 0).
        last = max((k for k, line in enumerate(lines) if line.strip()), default=0)
        return "\n".join(lines[:max(last, 1) + 1])
    # Visit spans from most to fewest non-blank lines; within a count, EvalPlus's
    # scan order (i ascending, then j ascending) decides, and the first that
    # parses wins, exactly as its strictly-greater update rule would pick.
    spans = sorted(((nonblank[j + 1] - nonblank[i], i, j) for i in range(n) for j in range(i + 1, n)),
                   key=lambda s: (-s[0], s[1], s[2]))
    for count, i, j in spans:
        if count == 0:
            break
        if _parses("\n".join(lines[i:j + 1])):
            return "\n".join(lines[i:j + 1])
    return lines[0]


def _identifiers(node: ast.AST) -> set[str]:
    names: set[str] = set()
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name):
            names.add(sub.id)
        elif isinstance(sub, ast.Attribute):
            names.add(sub.attr)
        elif isinstance(sub, ast.arg):
            names.add(sub.arg)
        elif isinstance(sub, ast.keyword) and sub.arg:
            names.add(sub.arg)
        elif isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(sub.name)
        elif isinstance(sub, (ast.Global, ast.Nonlocal)):
            names.update(sub.names)
        elif isinstance(sub, ast.alias):
            names.update(sub.name.split("."))
            if sub.asname:
                names.add(sub.asname)
    return names


def _has_return(node: ast.AST) -> bool:
    return any(isinstance(sub, ast.Return) for sub in ast.walk(node))


def _assigned_name(node: ast.stmt) -> str | None:
    """The first identifier among the assignment's direct parts, as tree-sitter sees it.

    ``x = ...`` names ``x``; ``x.y = z`` or ``a, b = z`` name ``z`` (the value is the
    first bare identifier); ``a = b = c`` names ``a``.
    """
    if isinstance(node, ast.Assign):
        target = node.targets[0]
        value = node.value if len(node.targets) == 1 else None
    else:
        target, value = node.target, node.value
    if isinstance(target, ast.Name):
        return target.id
    return value.id if isinstance(value, ast.Name) else None


def _prune(code: str, entry_point: str | None) -> str:
    try:
        tree = quiet_parse(code)
    except (SyntaxError, MemoryError, ValueError, RecursionError):
        return ""
    lines = code.split("\n")

    def source(node: ast.stmt) -> str:
        return ast.get_source_segment(code, node) or "\n".join(lines[node.lineno - 1:node.end_lineno])

    imports: list[str] = []
    definitions: list[tuple[str | None, ast.stmt]] = []
    seen: set[str | None] = set()
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            # tree-sitter gives ``from __future__`` a node type of its own, which
            # EvalPlus does not keep.
            if not (isinstance(node, ast.ImportFrom) and node.module == "__future__"):
                imports.append(source(node))
            continue
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and not node.decorator_list:
            if node.name in seen or not _has_return(node):
                continue
            name = node.name
        elif isinstance(node, ast.ClassDef) and not node.decorator_list:
            if node.name in seen:
                continue
            name = node.name
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            name = _assigned_name(node)
            if name in seen:
                continue
        else:
            continue
        seen.add(name)
        definitions.append((name, node))
    if entry_point:
        deps = {name: _identifiers(node) for name, node in definitions if name is not None}
        reachable, queue = {entry_point}, [entry_point]
        while queue:
            for dep in deps.get(queue.pop(0), ()):
                if dep not in reachable:
                    reachable.add(dep)
                    queue.append(dep)
        definitions = [(n, d) for n, d in definitions if n in reachable]
    return "\n".join(imports + [source(node) for _, node in definitions]).strip()


@lru_cache(maxsize=4096)
def sanitize(text: str, entry_point: str | None = None) -> str:
    """EvalPlus-equivalent sanitization of raw model text."""
    extracted = code_extract(text)
    return _prune(extracted, entry_point) or extracted


def extract_code_field(text: str) -> str | None:
    """The ``"code"`` field of a JSON answer (ContractEval CS/EAS format), if any.

    Models write the field as JSON or, as the prompt's own example does, with
    Python triple quotes, so both readings are tried.
    """
    if '"code"' not in text and "'code'" not in text:
        return None
    candidates = [m.group(1) for m in _FENCED_JSON.finditer(text)]
    start, end = text.find("{"), text.rfind("}")
    if start != -1 and end > start:
        candidates.append(text[start:end + 1])
    for candidate in candidates:
        for reader in (json.loads, ast.literal_eval):
            try:
                obj = reader(candidate)
            except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
                continue
            if isinstance(obj, dict) and isinstance(obj.get("code"), str):
                return obj["code"]
    return None


def clean_sample(text: str, entry_point: str) -> str:
    """What a user expects run from a model answer: the code field if any, sanitized."""
    field = extract_code_field(text)
    return sanitize(field if field is not None else text, entry_point)


NO_CODE = "the answer has no code block"


def has_no_code(text: str, program: str) -> bool:
    """Whether a model answer holds no code at all: nothing survived sanitizing, or
    it has no fence and nothing in it parses as Python (prose only, as small models
    answer).  Such an answer fails every check with :data:`NO_CODE` rather than a
    ``SyntaxError`` of its first sentence (issue #32); a fenced block that does not
    parse is code with a syntax error and is run (and reported) as such."""
    if not program.strip():
        return True
    if "```" in text:
        return False
    try:
        quiet_parse(program)
    except (SyntaxError, MemoryError, ValueError, RecursionError):
        return True
    return False


def program_form(code: str) -> str:
    """What decides a Python program's behaviour, for within-run deduplication
    (``engine/dedupe.py``): its syntax tree with the line number of each node,
    so comments, blank space and quoting style do not count but line numbers
    do (they reach verdict messages: ``'return' outside function (<sample>,
    line 7)`` is raised when the program is compiled, after it parsed, and a
    program can read its own ``f_lineno``).  Code that does not parse is its
    own text.  Measured on the shared ChatGPT HumanEval samples (docs/dedupe.md):
    W1 keeps 3,656 of 8,000 programs this way, 4,145 as sanitized text, and
    3,367 as the tree without line numbers, which is not safe for the reasons above.
    """
    try:
        tree = quiet_parse(code)
    except (SyntaxError, MemoryError, ValueError, RecursionError):
        return "text:" + code
    try:
        lines = [(type(node).__name__, getattr(node, "lineno", None), getattr(node, "end_lineno", None))
                 for node in ast.walk(tree)]
        return "ast:" + ast.dump(tree) + repr(lines)
    except RecursionError:  # a tree too deep to dump: compare the text
        return "text:" + code
