"""Source-level machinery of PostcondBench (Python): prompts, answer parsing,
injection of the candidate's decorators into a private copy of the file.

Paper: Appendix D.2 (prompt template, Figure 7; C2P / N2P / F2P), §3.2.4
(the method is instrumented with the set and its tests are run).
"""
from __future__ import annotations

import ast
import re
import textwrap
from dataclasses import dataclass

SETTINGS = ("f2p", "c2p", "n2p")

GUIDELINE = (
    "Above is the python code context and target method. You should generate icontract format postconditions "
    "for this method `{name}`.\nTry to generate correct and complete postconditions.\n"
    "Note that your response should only contain `@icontract.ensure` and `@icontract.snapshot` lines."
)


class AnswerError(ValueError):
    """The model's answer is not usable (a failed sample, with this one-line reason)."""


# ---------------------------------------------------------------- prompts (D.2)

def _strip_docstrings(tree: ast.AST) -> None:
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and body:
            first = body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
                node.body = body[1:] or [ast.Pass()]


def _bodies_removed(tree: ast.AST) -> None:
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            first = node.body[0]
            keep = [first] if (isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
                               and isinstance(first.value.value, str)) else []
            node.body = keep + [ast.Expr(ast.Constant(Ellipsis))]


def _method_node(tree: ast.AST, name: str, line: int):
    best = None
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name:
            if best is None or abs(node.lineno - line) < abs(best.lineno - line):
                best = node
    return best


def render_prompt(setting: str, file_text: str, content: str, name: str, start_line: int) -> str:
    """Figure 7's template.  F2P: the whole file and the method as written.  C2P:
    comments and docstrings removed from both (via the AST, so layout is
    normalised).  N2P: every body in the file replaced by ``...`` (docstrings
    kept), the target's signature and docstring only."""
    if setting == "f2p":
        context, target = file_text, content
    else:
        tree = ast.parse(file_text)
        method = ast.parse(textwrap.dedent(content))
        if setting == "c2p":
            _strip_docstrings(tree)
            _strip_docstrings(method)
        elif setting == "n2p":
            _bodies_removed(tree)
            _bodies_removed(method)
        else:
            raise ValueError(f"unknown setting {setting!r}; known: {', '.join(SETTINGS)}")
        context, target = ast.unparse(tree) + "\n", ast.unparse(method)
    return (f"## Code Context\n```\n{context}\n```\n## Target Method\n```\n{target}\n```\n## Guideline\n"
            + GUIDELINE.format(name=name))


# ---------------------------------------------------------------- answers

_FENCE = re.compile(r"```[^\n]*\n(.*?)```", re.S)


def parse_answer(text: str) -> str:
    """The decorator lines of an answer: the last fenced block (or the whole text),
    which must parse as ``@icontract.ensure(...)`` / ``@icontract.snapshot(...)``
    decorators and nothing else.  Raises :class:`AnswerError` with a one-line reason."""
    if not isinstance(text, str) or not text.strip():
        raise AnswerError("empty answer")
    blocks = _FENCE.findall(text)
    block = textwrap.dedent(blocks[-1] if blocks else text).strip("\n")
    lines = [ln for ln in block.splitlines() if ln.strip() and not ln.strip().startswith("#")]
    if not lines or not lines[0].lstrip().startswith("@"):
        raise AnswerError("answer is not decorator lines (first line: %r)" % (lines[0][:60] if lines else ""))
    decorators = textwrap.dedent("\n".join(lines))
    try:
        probe = ast.parse(decorators + "\ndef __specbench_probe__():\n    pass\n")
    except SyntaxError as exc:
        raise AnswerError(f"decorators do not parse: {exc.msg} (line {exc.lineno})") from None
    if len(probe.body) != 1 or not isinstance(probe.body[0], ast.FunctionDef):
        raise AnswerError("answer holds more than decorator lines")
    for dec in probe.body[0].decorator_list:
        call = dec.func if isinstance(dec, ast.Call) else dec
        if not (isinstance(call, ast.Attribute) and isinstance(call.value, ast.Name) and call.value.id == "icontract"
                and call.attr in ("ensure", "snapshot")):
            raise AnswerError(f"not an icontract.ensure/snapshot decorator: {ast.unparse(dec)[:80]}")
    if not probe.body[0].decorator_list:
        raise AnswerError("no decorator in the answer")
    return decorators


# ---------------------------------------------------------------- injection

@dataclass(frozen=True)
class Injected:
    text: str
    first_line: int  # 1-based: first injected decorator line (or the def line when nothing was injected)
    last_line: int  # 1-based: the method's last line in the new text
    injected: bool


def replace_method(file_text: str, start_line: int, end_line: int, new_method: str) -> str:
    """The file with lines ``start_line..end_line`` (the task's ``content``) replaced (a mutant)."""
    lines = file_text.splitlines(keepends=True)
    body = new_method if new_method.endswith("\n") else new_method + "\n"
    return "".join(lines[: start_line - 1]) + body + "".join(lines[end_line:])


_IMPORT = re.compile(r"^(import|from)\s")


def inject(file_text: str, name: str, start_line: int, end_line: int, decorators: str,
           mode: str = "fixed") -> Injected:
    """Put ``decorators`` directly above the method's ``def`` line (after its other
    decorators, at its indentation) and ``import icontract`` into the module.

    ``faithful`` (upstream): the def line is the first ``def NAME(`` at or after
    ``start_line`` (``async def`` never matches: nothing is injected), and the import
    goes after the first column-0 ``import``/``from`` line (which may sit inside a
    multi-line ``from x import (``).  ``fixed``: the AST finds the (async) def and the
    import goes before the first statement that is not the docstring or a
    ``from __future__`` import."""
    lines = file_text.splitlines(keepends=True)
    span = end_line - start_line
    if mode == "faithful":
        pattern = re.compile(r"^\s*def\s+" + re.escape(name) + r"\s*\(")
        def_idx = next((i for i in range(max(start_line - 1, 0), len(lines)) if pattern.match(lines[i])), None)
        import_idx = next((i + 1 for i, ln in enumerate(lines) if _IMPORT.match(ln)), 0)
    elif mode == "fixed":
        tree = ast.parse(file_text)
        node = _method_node(tree, name, start_line)
        def_idx = node.lineno - 1 if node is not None else None
        import_idx = 0
        for stmt in tree.body:
            is_doc = isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) and isinstance(stmt.value.value, str)
            is_future = isinstance(stmt, ast.ImportFrom) and stmt.module == "__future__"
            if not (is_doc or is_future):
                break
            import_idx = stmt.end_lineno
    else:
        raise ValueError(f"unknown injection mode {mode!r}")
    if def_idx is None:
        return Injected(file_text, start_line, end_line, False)
    indent = re.match(r"\s*", lines[def_idx]).group(0)
    block = [indent + ln + "\n" for ln in decorators.splitlines()]
    new = lines[:def_idx] + block + lines[def_idx:]
    new = new[:import_idx] + ["import icontract\n"] + new[import_idx:]
    shift = 1 if import_idx <= def_idx else 0
    first = def_idx + 1 + shift
    return Injected("".join(new), first, first + len(block) + span + (def_idx + 1 - start_line), True)
