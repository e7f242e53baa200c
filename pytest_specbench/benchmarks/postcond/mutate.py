"""Mutants by rule: mutmut's operator families reimplemented on the AST
(PostcondBench §3.2.2 "Operator-based Mutation"; mutmut is not vendored).

Families (one change per mutant, in the method body only; the docstring is left alone):
number (n -> n + 1), string ("s" -> "XXsXX"), comparison (< <=, > >=, == !=,
in / not in, is / is not swapped), arithmetic (+ -, * /, / *, // /, % /, ** *),
augmented assignment (+= -= ...), boolean (and <-> or, ``not x`` -> ``x``),
keyword constants (True <-> False), loop control (break <-> continue),
return value (``return e`` -> ``return None``), removal of a call statement.
"""
from __future__ import annotations

import ast
import copy
import textwrap
from typing import Iterator

_CMP = {ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt, ast.Eq: ast.NotEq, ast.NotEq: ast.Eq,
        ast.In: ast.NotIn, ast.NotIn: ast.In, ast.Is: ast.IsNot, ast.IsNot: ast.Is}
_ARITH = {ast.Add: ast.Sub, ast.Sub: ast.Add, ast.Mult: ast.Div, ast.Div: ast.Mult, ast.FloorDiv: ast.Div,
          ast.Mod: ast.Div, ast.Pow: ast.Mult, ast.LShift: ast.RShift, ast.RShift: ast.LShift,
          ast.BitAnd: ast.BitOr, ast.BitOr: ast.BitAnd}


def _docstring(node) -> ast.AST | None:
    body = getattr(node, "body", None)
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str):
        return body[0].value
    return None


def _sites(func: ast.AST) -> Iterator[tuple[str, ast.AST, str]]:
    """(family, node, what) for every mutable spot, in a stable order."""
    skip = {id(_docstring(func))}
    for node in ast.walk(func):
        if id(node) in skip or node is func:
            continue
        if isinstance(node, ast.Constant):
            if isinstance(node.value, bool):
                yield "keyword", node, "flip"
            elif isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
                yield "number", node, "plus1"
            elif isinstance(node.value, str):
                yield "string", node, "xx"
        elif isinstance(node, ast.Compare):
            for i, op in enumerate(node.ops):
                if type(op) in _CMP:
                    yield "comparison", node, str(i)
        elif isinstance(node, ast.BinOp) and type(node.op) in _ARITH:
            yield "arithmetic", node, "op"
        elif isinstance(node, ast.AugAssign) and type(node.op) in _ARITH:
            yield "augassign", node, "op"
        elif isinstance(node, ast.BoolOp):
            yield "boolean", node, "op"
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            yield "boolean", node, "drop-not"
        elif isinstance(node, (ast.Break, ast.Continue)):
            yield "loop", node, "swap"
        elif isinstance(node, ast.Return) and node.value is not None and not (
                isinstance(node.value, ast.Constant) and node.value.value is None):
            yield "return", node, "none"
        elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
            yield "call", node, "remove"


def _mutate(node: ast.AST, what: str) -> ast.AST | None:
    if isinstance(node, ast.Constant):
        if isinstance(node.value, bool):
            return ast.Constant(not node.value)
        if what == "plus1":
            return ast.Constant(node.value + 1)
        return ast.Constant("XX" + node.value + "XX")
    if isinstance(node, ast.Compare):
        i = int(what)
        new = copy.copy(node)
        new.ops = list(node.ops)
        new.ops[i] = _CMP[type(node.ops[i])]()
        return new
    if isinstance(node, (ast.BinOp, ast.AugAssign)):
        new = copy.copy(node)
        new.op = _ARITH[type(node.op)]()
        return new
    if isinstance(node, ast.BoolOp):
        new = copy.copy(node)
        new.op = ast.Or() if isinstance(node.op, ast.And) else ast.And()
        return new
    if isinstance(node, ast.UnaryOp):
        return node.operand
    if isinstance(node, ast.Break):
        return ast.Continue()
    if isinstance(node, ast.Continue):
        return ast.Break()
    if isinstance(node, ast.Return):
        return ast.Return(ast.Constant(None))
    if isinstance(node, ast.Expr):
        return ast.Pass()
    return None


def _replace(root: ast.AST, old: ast.AST, new: ast.AST) -> None:
    for parent in ast.walk(root):
        for field, value in ast.iter_fields(parent):
            if value is old:
                setattr(parent, field, new)
                return
            if isinstance(value, list):
                for i, v in enumerate(value):
                    if v is old:
                        value[i] = new
                        return


def rule_mutants(method_source: str) -> list[tuple[str, str]]:
    """``[(family, mutant method source)]`` for a method's source text (as the
    task's ``content``: the def line to the last line, at its own indentation).
    Each mutant re-renders the method with ``ast.unparse`` at the original
    indentation; duplicates and no-op changes are dropped."""
    indent = method_source[: len(method_source) - len(method_source.lstrip())].split("\n")[-1]
    base = ast.parse(textwrap.dedent(method_source))
    original = ast.unparse(base)
    count = sum(1 for _ in _sites(base.body[0]))
    seen, out = {original}, []
    for n in range(count):
        tree = copy.deepcopy(base)
        family, node, what = list(_sites(tree.body[0]))[n]
        new = _mutate(node, what)
        if new is None:
            continue
        _replace(tree, node, new)
        text = ast.unparse(ast.fix_missing_locations(tree))
        if text in seen:
            continue
        seen.add(text)
        out.append((family, textwrap.indent(text, indent)))
    return out
