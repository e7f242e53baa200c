"""Source-level machinery of PostcondBench (Python): prompts, answer parsing,
injection of the candidate's decorators into a private copy of the file.

Paper: Appendix D.2 (prompt template, Figure 7; C2P / N2P / F2P), §3.2.4
(the method is instrumented with the set and its tests are run).
"""
from __future__ import annotations

import ast
import re
import sys
import textwrap
from dataclasses import dataclass

from .options import SETTINGS  # the input settings (Appendix D.2)

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
MAX_ANSWER_CHARS = 64_000  # upstream's longest answer is under 6 KB
MAX_DEPTH = 100  # nesting of the answer's syntax tree (upstream's deepest: under 30)


def parse_answer(text: str, module_text: str | None = None) -> str:
    """The decorator lines of an answer: the last fenced block (or the whole text),
    which must parse as ``@icontract.ensure(...)`` / ``@icontract.snapshot(...)``
    decorators and nothing else, and pass :func:`screen` (``module_text``: the
    target's file, whose top-level names a condition may use).  Raises
    :class:`AnswerError` with a one-line reason."""
    if not isinstance(text, str) or not text.strip():
        raise AnswerError("empty answer")
    if len(text) > MAX_ANSWER_CHARS:
        raise AnswerError(f"answer of {len(text)} characters (at most {MAX_ANSWER_CHARS})")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise AnswerError(f"answer holds a character UTF-8 cannot encode (position {exc.start})") from None
    if "\0" in text:
        raise AnswerError("answer holds a NUL character")
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
    except (RecursionError, MemoryError, ValueError):
        raise AnswerError("decorators too deeply nested to parse") from None
    if len(probe.body) != 1 or not isinstance(probe.body[0], ast.FunctionDef):
        raise AnswerError("answer holds more than decorator lines")
    if not probe.body[0].decorator_list:
        raise AnswerError("no decorator in the answer")
    screen(probe.body[0].decorator_list, module_text)
    return _rename_eval(decorators, probe.body[0].decorator_list)


# ---------------------------------------------------------------- the screen
#
# The first filter (the wall is structural: the answer runs only in a spec
# child that holds no channel, pytest_specbench/pyspec/spec_process.py).  What a
# postcondition may be is decided here, on its syntax tree, before anything runs: each decorator is
# ``icontract.ensure(LAMBDA[, "description"])`` or ``icontract.snapshot(LAMBDA[,
# name="NAME"])``; inside, names are the lambdas' own parameters, comprehension
# variables, the pure builtins below, the top-level names the target's file
# defines, or a module of ALLOWED_MODULES (by name or ``__import__('m')``, as
# upstream's answers do), used only as ``module.attribute`` with an attribute
# that is neither private nor a module.  No attribute is a dunder or one of the
# introspection attributes (frames, code, generators' internals), no string holds
# ``__``, and ``str.format`` (which reads attributes by name) is out.  ``eval``
# is kept (four upstream Claude answers evaluate ``'*'.join(map(str, factors))``)
# but bound to :func:`pytest_specbench.pyspec.spec_process.safe_eval`, which evaluates arithmetic on
# literals only.

ALLOWED_BUILTINS = frozenset({
    "abs", "all", "any", "bin", "bool", "bytes", "callable", "chr", "complex", "dict", "divmod", "enumerate",
    "filter", "float", "frozenset", "hasattr", "hash", "hex", "int", "isinstance", "issubclass", "iter", "len",
    "list", "map", "max", "min", "next", "oct", "ord", "pow", "range", "repr", "reversed", "round", "set",
    "slice", "sorted", "str", "sum", "tuple", "zip", "eval",
    "ArithmeticError", "AssertionError", "AttributeError", "Exception", "IndexError", "KeyError",
    "LookupError", "OverflowError", "RecursionError", "RuntimeError", "StopIteration", "TypeError",
    "ValueError", "ZeroDivisionError", "NotImplemented", "Ellipsis",
})
ALLOWED_MODULES = frozenset({"math", "cmath", "functools", "itertools", "collections", "heapq", "bisect",
                             "statistics", "re", "operator", "copy", "fractions", "decimal", "numbers", "string"})
# Modules whose names a target file may import without its conditions reaching them
# through those names (the rest of a file's imports are the project's own code).
DENIED_MODULES = frozenset({
    "os", "sys", "io", "builtins", "subprocess", "shutil", "pathlib", "importlib", "inspect", "gc", "ctypes",
    "socket", "pickle", "marshal", "tempfile", "glob", "atexit", "signal", "threading", "multiprocessing",
    "code", "codeop", "runpy", "pty", "posix", "fcntl", "resource", "mmap", "types", "traceback", "linecache",
    "tokenize", "ast", "dis", "pytest", "_pytest", "icontract", "specbench_postcond_runner", "specbench_pyspec", "pytest_specbench",
    "sysconfig", "site", "zipimport", "pkgutil", "faulthandler", "tracemalloc", "weakref", "asyncio",
    "concurrent", "select", "selectors", "pdb", "bdb", "platform", "logging", "warnings", "unittest",
})
# Standard modules whose names (classes, constants) a target file may import for its conditions to use.
SAFE_STDLIB = frozenset({"typing", "dataclasses", "enum", "abc", "numbers", "datetime", "array", "random",
                         "__future__", "textwrap", "unicodedata", "string", "json"})
_DENIED_ATTRS = frozenset({"format", "format_map", "attrgetter", "methodcaller", "Formatter", "mro",
                           "func_globals", "func_code", "im_func", "im_self", "im_class"})
_INTROSPECTION = re.compile(r"^(gi|cr|ag|f|tb|co)_")
_ENSURE_KW = {"ensure": {"description"}, "snapshot": {"name"}}


def _module_names(module_text: str | None) -> set[str]:
    """Top-level names the target's file binds that a condition may use: its
    functions, classes and assignments, and what it imports, except modules (and
    names from modules) of DENIED_MODULES and modules not in ALLOWED_MODULES."""
    if not module_text:
        return set()
    try:
        tree = ast.parse(module_text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return set()
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                names.update(n.id for n in ast.walk(t) if isinstance(n, ast.Name))
        elif isinstance(node, ast.ImportFrom):
            root = (node.module or "").split(".")[0]
            # From the standard library only names of allowed modules (``from os
            # import path``, ``from codecs import open`` are not); the rest is the
            # project's own code or its dependencies.
            if node.level == 0 and (root in DENIED_MODULES or (
                    root in sys.stdlib_module_names and root not in ALLOWED_MODULES | SAFE_STDLIB)):
                continue
            names.update((a.asname or a.name) for a in node.names if a.name != "*")
    return {n for n in names if not n.startswith("__")}


def _module_ref(node: ast.AST) -> str | None:
    """The allowed module a node names (``math`` or ``__import__('math')``), else None."""
    if isinstance(node, ast.Name) and node.id in ALLOWED_MODULES:
        return node.id
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "__import__"
            and len(node.args) == 1 and not node.keywords and isinstance(node.args[0], ast.Constant)
            and node.args[0].value in ALLOWED_MODULES):
        return node.args[0].value
    return None


def _module_attr_ok(module: str, attr: str) -> bool:
    import importlib
    import types

    if attr.startswith("_"):
        return False
    try:
        value = getattr(importlib.import_module(module), attr)
    except (ImportError, AttributeError):
        return False
    return not isinstance(value, types.ModuleType)


def _depth(root: ast.AST) -> int:
    deepest, todo = 0, [(root, 1)]
    while todo:
        node, d = todo.pop()
        deepest = max(deepest, d)
        if deepest > MAX_DEPTH:
            return deepest
        todo.extend((child, d + 1) for child in ast.iter_child_nodes(node))
    return deepest


def screen(decorators: list[ast.expr], module_text: str | None = None) -> None:
    """Reject (:class:`AnswerError`, one line) a decorator list that is not made of
    icontract conditions over the method's values (see the comment above)."""
    globals_ok = _module_names(module_text) | ALLOWED_BUILTINS
    for dec in decorators:
        if _depth(dec) > MAX_DEPTH:
            raise AnswerError(f"a decorator nests deeper than {MAX_DEPTH} levels")
        head = ast.unparse(dec.func if isinstance(dec, ast.Call) else dec)[:60]
        if not (isinstance(dec, ast.Call) and isinstance(dec.func, ast.Attribute)
                and isinstance(dec.func.value, ast.Name) and dec.func.value.id == "icontract"
                and dec.func.attr in _ENSURE_KW):
            raise AnswerError(f"not an icontract.ensure/snapshot(...) decorator: {head}")
        kind = dec.func.attr
        if not dec.args or not isinstance(dec.args[0], ast.Lambda):
            raise AnswerError(f"icontract.{kind} without a lambda as its first argument")
        extra = list(dec.args[1:]) + [k.value for k in dec.keywords]
        if len(dec.args) > 2 or any(k.arg not in _ENSURE_KW[kind] for k in dec.keywords):
            bad = [k.arg or "**" for k in dec.keywords if k.arg not in _ENSURE_KW[kind]]
            raise AnswerError(f"icontract.{kind} takes a lambda and a {'/'.join(_ENSURE_KW[kind])} here"
                              + (f", not {', '.join(bad)}=" if bad else ""))
        if not all(isinstance(v, ast.Constant) and isinstance(v.value, str) for v in extra):
            raise AnswerError(f"icontract.{kind}: its {'/'.join(_ENSURE_KW[kind])} must be a string literal")
        _screen_expr(dec.args[0], frozenset(), globals_ok)
        for v in extra:
            _screen_expr(v, frozenset(), globals_ok)


def _params(args: ast.arguments) -> set[str]:
    every = args.posonlyargs + args.args + args.kwonlyargs + [a for a in (args.vararg, args.kwarg) if a]
    return {a.arg for a in every}


def _targets(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}



def _plain_target(node: ast.AST) -> bool:
    """A comprehension target made of names only (``x``, ``(a, *b)``): a subscript
    or attribute target (``{}[CODE]``) would run CODE at each step, unscreened."""
    if isinstance(node, ast.Name):
        return True
    if isinstance(node, ast.Starred):
        return _plain_target(node.value)
    return isinstance(node, (ast.Tuple, ast.List)) and all(_plain_target(e) for e in node.elts)


def _screen_expr(root: ast.AST, scope: frozenset, globals_ok: frozenset | set) -> None:
    """Walk one expression with the names bound around it (``scope``)."""
    todo: list[tuple[ast.AST, frozenset]] = [(root, scope)]
    while todo:
        node, names = todo.pop()
        if isinstance(node, (ast.Yield, ast.YieldFrom, ast.Await, ast.NamedExpr)):
            raise AnswerError(f"{type(node).__name__.lower()} is not allowed in a postcondition")
        if isinstance(node, ast.Lambda):
            # Defaults are evaluated outside the lambda; the body sees its parameters.
            todo.extend((d, names) for d in node.args.defaults + [d for d in node.args.kw_defaults if d])
            todo.append((node.body, names | _params(node.args)))
            continue
        if isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
            bound = names
            for gen in node.generators:
                if not _plain_target(gen.target):
                    raise AnswerError(f"comprehension target {ast.unparse(gen.target)[:40]!r} is not a name "
                                      "(only names are allowed there)")
                todo.append((gen.iter, bound))  # (the first iterable is evaluated outside; later ones see earlier targets)
                bound = bound | _targets(gen.target)
                todo.extend((cond, bound) for cond in gen.ifs)
            elts = [node.key, node.value] if isinstance(node, ast.DictComp) else [node.elt]
            todo.extend((e, bound) for e in elts)
            continue
        if isinstance(node, ast.Name):
            if isinstance(node.ctx, ast.Load) and node.id not in names and node.id not in globals_ok:
                if node.id in ALLOWED_MODULES:
                    raise AnswerError(f"module {node.id} used other than as {node.id}.ATTRIBUTE")
                raise AnswerError(f"name {node.id!r} is not available to a postcondition")
            continue
        if isinstance(node, ast.Attribute):
            attr = node.attr
            if attr.startswith("__") or _INTROSPECTION.match(attr) or attr in _DENIED_ATTRS:
                raise AnswerError(f"attribute .{attr} is not allowed in a postcondition")
            module = _module_ref(node.value) if not (isinstance(node.value, ast.Name) and node.value.id in names) else None
            if module is not None:
                if not _module_attr_ok(module, attr):
                    raise AnswerError(f"{module}.{attr} is not allowed in a postcondition")
                continue  # (the module reference itself is fine here)
            todo.append((node.value, names))
            continue
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "__import__" \
                and "__import__" not in names:
            raise AnswerError("__import__ only of an allowed module (%s), as __import__('m').ATTRIBUTE"
                              % ", ".join(sorted(ALLOWED_MODULES)))
        if isinstance(node, ast.Constant) and isinstance(node.value, (str, bytes)) and \
                ("__" in node.value if isinstance(node.value, str) else b"__" in node.value):
            raise AnswerError("a string holding '__' is not allowed in a postcondition")
        if isinstance(node, ast.keyword) and node.arg and node.arg.startswith("__"):
            raise AnswerError(f"keyword {node.arg}= is not allowed in a postcondition")
        todo.extend((child, names) for child in ast.iter_child_nodes(node))


def _rename_eval(decorators: str, decs: list[ast.expr]) -> str:
    """Calls of the builtin ``eval`` (not a lambda parameter of that name) become
    calls of the runner's ``safe_eval``, imported into the module as
    ``_specbench_eval`` (see :func:`inject`)."""
    spots = []
    for dec in decs:
        todo = [(dec, frozenset())]
        while todo:
            node, names = todo.pop()
            if isinstance(node, ast.Lambda):
                todo.extend((d, names) for d in node.args.defaults + [d for d in node.args.kw_defaults if d])
                todo.append((node.body, names | _params(node.args)))
                continue
            if isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
                names = names | set().union(*(_targets(g.target) for g in node.generators))
            if isinstance(node, ast.Name) and node.id == "eval" and "eval" not in names:
                spots.append((node.lineno, node.col_offset, node.end_col_offset))
            todo.extend((child, names) for child in ast.iter_child_nodes(node))
    if not spots:
        return decorators
    lines = [ln.encode("utf-8") for ln in decorators.split("\n")]
    for lineno, start, end in sorted(spots, reverse=True):
        raw = lines[lineno - 1]
        lines[lineno - 1] = raw[:start] + EVAL_NAME.encode() + raw[end:]
    return "\n".join(ln.decode("utf-8") for ln in lines)


EVAL_NAME = "_specbench_eval"
GUARD_NAME = "_specbench_guard"
# The one line the injection adds at the top: icontract (the answer's decorators
# name it, in their own process) and the Python-spec service's guard and literal
# eval (pytest_specbench/pyspec/spec_process.py, shipped into the job).
HEAD = f"import icontract; from specbench_pyspec import guard as {GUARD_NAME}, safe_eval as {EVAL_NAME}"


# ---------------------------------------------------------------- injection

@dataclass(frozen=True)
class Injected:
    text: str
    first_line: int  # 1-based: first injected decorator line (or the def line when nothing was injected)
    last_line: int  # 1-based: the method's last line in the new text
    injected: bool
    decorator_lines: int = 0  # how many lines the answer's decorators take, from first_line

    def keeper_text(self, spec_id: str = "0") -> str:
        """The text the job's test process imports: the answer's decorator lines
        replaced by the harness's guard and blank lines (the method keeps its line
        numbers), so no byte of the answer is in it
        (:func:`pytest_specbench.pyspec.spec_process.guard`)."""
        if not self.injected or not self.decorator_lines:  # (no decorator: nothing to guard, e.g. the authors' plain run)
            return self.text
        lines = self.text.splitlines(keepends=True)
        start = self.first_line - 1
        indent = re.match(r"[ \t]*", lines[start]).group(0)
        guard = [f"{indent}@{GUARD_NAME}({spec_id!r})\n"] + ["\n"] * (self.decorator_lines - 1)
        return "".join(lines[:start] + guard + lines[start + self.decorator_lines:])

    def decorators_text(self) -> str:
        """The answer's decorator lines as injected (the spec child compiles them)."""
        lines = self.text.splitlines(keepends=True)
        return "".join(lines[self.first_line - 1:self.first_line - 1 + self.decorator_lines])


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
    new = new[:import_idx] + [HEAD + "\n"] + new[import_idx:]
    shift = 1 if import_idx <= def_idx else 0
    first = def_idx + 1 + shift
    return Injected("".join(new), first, first + len(block) + span + (def_idx + 1 - start_line), True, len(block))
