"""Mutants by rule for Java methods: PIT's default mutators reimplemented on the
source with tree-sitter (PostcondBench §3.2.2: "For Java, we reproduce the
default mutation operators from PIT"; PIT is not vendored).

PIT's defaults (11, the paper's Table 9 names one of them, ``null_returns``),
each applied once per site, in the method body only:

* ``conditionals_boundary``: ``<`` <-> ``<=``, ``>`` <-> ``>=``
* ``negate_conditionals``: ``==`` <-> ``!=``, ``<`` -> ``>=``, ``<=`` -> ``>``, ``>`` -> ``<=``, ``>=`` -> ``<``
* ``math``: ``+`` <-> ``-``, ``*`` <-> ``/``, ``%`` -> ``*``, ``&`` <-> ``|``, ``^`` -> ``&``,
  ``<<`` <-> ``>>``, ``>>>`` -> ``<<`` (also in compound assignments ``*=`` ...)
* ``increments``: ``++`` <-> ``--``, ``+=`` <-> ``-=``
* ``invert_negs``: ``-x`` -> ``x``
* ``void_method_calls``: a call statement removed (PIT removes calls to void
  methods; without types every call statement is a candidate, and one whose
  removal does not compile is dropped by the authors' tool)
* ``empty_returns`` (``""``, ``0`` of a boxed type, empty collections, ``Optional.empty()``),
  ``false_returns``, ``true_returns``, ``null_returns``, ``primitive_returns`` (``0``):
  ``return e;`` replaced by the constant of the method's return type.

Each mutant is the method's text (the task's ``content``) with one token or
statement changed, formatting kept; duplicates are dropped.
"""
from __future__ import annotations

from typing import Iterator

from ....jml import parse_java

_BOUNDARY = {"<": "<=", "<=": "<", ">": ">=", ">=": ">"}
_NEGATE = {"==": "!=", "!=": "==", "<": ">=", "<=": ">", ">": "<=", ">=": "<"}
_MATH = {"+": "-", "-": "+", "*": "/", "/": "*", "%": "*", "&": "|", "|": "&", "^": "&", "<<": ">>", ">>": "<<",
         ">>>": "<<"}
_MATH_ASSIGN = {"*=": "/=", "/=": "*=", "%=": "*=", "&=": "|=", "|=": "&=", "^=": "&=", "<<=": ">>=",
                 ">>=": "<<=", ">>>=": "<<="}
_PRIMITIVE_ZERO = {"int": "0", "long": "0L", "short": "0", "byte": "0", "char": "0", "float": "0.0f",
                   "double": "0.0d"}
_BOXED_EMPTY = {"Integer": "0", "Long": "0L", "Short": "(short) 0", "Byte": "(byte) 0", "Character": "'\\0'",
                "Float": "0.0f", "Double": "0.0d"}
_COLLECTION_EMPTY = {"List": "java.util.Collections.emptyList()", "Collection": "java.util.Collections.emptyList()",
                     "Iterable": "java.util.Collections.emptyList()", "Set": "java.util.Collections.emptySet()",
                     "Map": "java.util.Collections.emptyMap()", "Optional": "java.util.Optional.empty()",
                     "String": '""'}
OPERATORS = ("conditionals_boundary", "negate_conditionals", "math", "increments", "invert_negs",
             "void_method_calls", "empty_returns", "false_returns", "true_returns", "null_returns",
             "primitive_returns")

_WRAP = "class __SpecbenchMutant {\n"


def _walk(node) -> Iterator:
    yield node
    for c in node.children:
        if c.type in ("lambda_expression", "class_body"):
            continue  # code of other methods (lambdas, anonymous classes) is not the target's body
        yield from _walk(c)


def _edits(method_source: str) -> list[tuple[str, int, int, str]]:
    """``(operator, start, end, replacement)`` byte spans in ``method_source``."""
    src = (_WRAP + method_source + "\n}\n").encode("utf-8")
    off = len(_WRAP.encode("utf-8"))
    tree = parse_java(src)
    method = next((n for n in tree.root_node.named_children[0].child_by_field_name("body").named_children
                   if n.type in ("method_declaration", "constructor_declaration")), None)
    if method is None or method.child_by_field_name("body") is None:
        return []
    t = method.child_by_field_name("type")
    ret = src[t.start_byte:t.end_byte].decode() if t is not None else "void"
    base = ret.split("<", 1)[0].strip().split(".")[-1]
    out = []

    def text(n) -> str:
        return src[n.start_byte:n.end_byte].decode("utf-8")

    for n in _walk(method.child_by_field_name("body")):
        if n.type == "binary_expression":
            op = n.child_by_field_name("operator")
            o = text(op)
            if o in _BOUNDARY:
                out.append(("conditionals_boundary", op.start_byte, op.end_byte, _BOUNDARY[o]))
            if o in _NEGATE:
                out.append(("negate_conditionals", op.start_byte, op.end_byte, _NEGATE[o]))
            if o in _MATH:
                out.append(("math", op.start_byte, op.end_byte, _MATH[o]))
        elif n.type == "assignment_expression":
            op = n.child_by_field_name("operator")
            o = text(op)
            if o in ("+=", "-="):
                out.append(("increments", op.start_byte, op.end_byte, "-=" if o == "+=" else "+="))
            elif o in _MATH_ASSIGN:
                out.append(("math", op.start_byte, op.end_byte, _MATH_ASSIGN[o]))
        elif n.type == "update_expression":
            op = next((c for c in n.children if c.type in ("++", "--")), None)
            if op is not None:
                out.append(("increments", op.start_byte, op.end_byte, "--" if op.type == "++" else "++"))
        elif n.type == "unary_expression":
            op = n.child_by_field_name("operator")
            if op is not None and text(op) == "-":
                out.append(("invert_negs", op.start_byte, op.end_byte, ""))
        elif n.type == "expression_statement" and n.named_children and n.named_children[0].type == "method_invocation":
            out.append(("void_method_calls", n.start_byte, n.end_byte, ";"))
        elif n.type == "return_statement" and n.named_children:
            e = n.named_children[0]
            value = text(e).strip()
            for operator, const in _return_constants(ret, base):
                if value != const:
                    out.append((operator, e.start_byte, e.end_byte, const))
    return [(op, a - off, b - off, r) for op, a, b, r in out]


def _return_constants(ret: str, base: str) -> list[tuple[str, str]]:
    if ret == "void":
        return []
    if ret == "boolean":
        return [("false_returns", "false"), ("true_returns", "true")]
    if ret in _PRIMITIVE_ZERO:
        return [("primitive_returns", _PRIMITIVE_ZERO[ret])]
    if ret == "Boolean":
        return [("false_returns", "false"), ("true_returns", "true"), ("null_returns", "null")]
    out = []
    if base in _BOXED_EMPTY:
        out.append(("empty_returns", _BOXED_EMPTY[base]))
    elif base in _COLLECTION_EMPTY:
        out.append(("empty_returns", _COLLECTION_EMPTY[base]))
    if base != "Optional" or ret.endswith("]"):  # PIT returns Optional.empty(), never null, for Optional
        out.append(("null_returns", "null"))
    return out


def rule_mutants(method_source: str) -> list[tuple[str, str]]:
    """``[(operator, mutant method source)]`` for a method's text (the task's
    ``content``: its Javadoc, declaration and body), one change each, in a stable
    order; duplicates and no-op changes dropped."""
    raw = method_source.encode("utf-8")
    seen, out = {method_source}, []
    for operator, a, b, rep in _edits(method_source):
        text = (raw[:a] + rep.encode("utf-8") + raw[b:]).decode("utf-8")
        if text in seen:
            continue
        seen.add(text)
        out.append((operator, text))
    return out
