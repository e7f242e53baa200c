"""JML specification components of a Java program (SpecEval §3.2, §4.1).

The program's structure (classes, methods, loops, comments) comes from
tree-sitter-java; JML lives in comments (``//@ ...`` and ``/*@ ... @*/``),
which tree-sitter keeps as ``line_comment`` / ``block_comment`` nodes.  Each
JML comment is a :class:`SpecBlock` attached to what follows it (a method or
a loop) and split into :class:`Clause` s (``requires``, ``ensures``,
``maintaining`` ...).  A clause's expression is tokenised with a small JML
lexer: the *components* that tasks mutate or mask (variables, operators,
quantifiers, array indices, quantifier ranges) are token spans.

This module only reads specifications; checking them at run time is the JML
checker's job (``pytest_specbench/jml/``, reached through :mod:`.validation`).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from functools import lru_cache

from tree_sitter import Node

from ...jml import parse_java, walk

# Clauses that are specifications proper (the ground-truth set of §3.2.4);
# ``assume``/``assert``/``set``/``ghost``/``assignable`` are kept in the program
# as written but never mutated, masked or asked for.
SPEC_KEYWORDS = ("requires", "ensures", "maintaining", "loop_invariant", "decreases", "decreasing",
                 "signals", "signals_only")
OTHER_KEYWORDS = ("assignable", "modifies", "assume", "assert", "set", "ghost", "pure", "also",
                  "public", "private", "normal_behavior", "exceptional_behavior", "behavior",
                  "invariant", "spec_public", "nullable", "non_null", "model", "static", "int", "long",
                  "boolean", "instance", "helper", "loop_writes", "diverges", "when")
LOOP_TYPES = ("while_statement", "for_statement", "enhanced_for_statement", "do_statement")
METHOD_TYPES = ("method_declaration", "constructor_declaration")

def parse(source: str):
    """The tree-sitter tree of a Java source (the JML service's parser: JML is in its comments)."""
    return parse_java(source.encode("utf-8"))


def text(node: Node, src: bytes) -> str:
    return src[node.start_byte:node.end_byte].decode("utf-8")


def is_jml_comment(raw: str) -> bool:
    return raw.startswith("//@") or raw.startswith("/*@")


# --- the JML lexer ---------------------------------------------------------
_TOKEN = re.compile(r"""
    (?P<ws>\s+)
  | (?P<bskw>\\[A-Za-z_]+)
  | (?P<num>\d+(\.\d+)?[LlFfDd]?)
  | (?P<str>"(\\.|[^"\\])*"|'(\\.|[^'\\])*')
  | (?P<ident>[A-Za-z_$][A-Za-z_0-9$]*)
  | (?P<op><=!=>|<==>|==>|<==|>>>=|<<=|>>=|>>>|\+\+|--|&&|\|\||==|!=|<=|>=|<<|>>|[-+*/%<>=!&|^~?:;,.()\[\]{}@])
""", re.X)

RELATIONAL = ("<", "<=", ">", ">=", "==", "!=")
ARITHMETIC = ("+", "-", "*", "/", "%")
LOGICAL = ("&&", "||", "==>", "<==>")
JAVA_WORDS = {"int", "long", "short", "byte", "char", "boolean", "double", "float", "true", "false", "null",
              "new", "this", "instanceof", "length", "Integer", "Long", "Math", "Character", "String",
              "MAX_VALUE", "MIN_VALUE", "void", "super", "class"}


@dataclass(frozen=True)
class Token:
    kind: str  # bskw | num | str | ident | op
    text: str
    start: int  # offset in the clause expression
    end: int


def tokenize(expr: str) -> list[Token]:
    out: list[Token] = []
    pos = 0
    while pos < len(expr):
        m = _TOKEN.match(expr, pos)
        if m is None:  # a character JML does not use: keep it as an opaque token
            out.append(Token("op", expr[pos], pos, pos + 1))
            pos += 1
            continue
        kind = m.lastgroup
        if kind != "ws":
            out.append(Token(kind, m.group(), m.start(), m.end()))
        pos = m.end()
    return out


def normalize(expr: str) -> str:
    """Whitespace-free, outer-parenthesis-free text: the syntactic identity of a
    clause used for Recall (§3.2.4) and infilling matches (docs/speceval.md)."""
    s = "".join(t.text for t in tokenize(expr)).rstrip(";")
    while s.startswith("(") and s.endswith(")") and _balanced(s[1:-1]):
        s = s[1:-1]
    return s


def _balanced(s: str) -> bool:
    depth = 0
    for ch in s:
        depth += ch == "("
        depth -= ch == ")"
        if depth < 0:
            return False
    return depth == 0


# --- blocks and clauses ------------------------------------------------------
@dataclass(frozen=True)
class Clause:
    keyword: str
    expr: str  # the expression, without keyword and final ';'
    start: int  # byte offsets of the expression in the program source
    end: int
    case: int  # spec case (split by ``also``) within the block

    def render(self, expr: str | None = None) -> str:
        return f"{self.keyword} {self.expr if expr is None else expr};"


@dataclass
class SpecBlock:
    start: int  # the comment's byte span
    end: int
    raw: str
    target: str  # "method" | "loop" | "other"
    method: str  # enclosing or following method's name ("" outside methods)
    line: int  # 1-based line of the comment
    clauses: list[Clause] = field(default_factory=list)
    variables: tuple[str, ...] = ()  # variables in scope at the block (for mutations)
    # where the spec belongs, stable under the perturbations: (method name, its
    # ordinal among same-named methods, "method"/"loop"/"other", loop ordinal in the method)
    location: tuple = ()
    types: dict = field(default_factory=dict)  # variable -> declared type


_CLAUSE_START = re.compile(r"(?<![\w\\])(" + "|".join(SPEC_KEYWORDS + ("assignable", "modifies", "assume",
                           "assert", "set", "ghost", "also", "invariant")) + r")\b")


_QUANT = re.compile(r"\\(forall|exists|sum|product|num_of|max|min)\b")


def _clauses(raw: str, offset: int) -> list[Clause]:
    """Split one JML comment into clauses; offsets refer to the program source.

    A clause runs from its keyword to the ';' at bracket depth 0 (quantifiers
    contain ';' inside their parentheses); the comment's leading '@'s are kept
    in place (as spaces for the lexer) so that offsets stay exact."""
    body = raw
    # blank the comment markers and line-leading '@' but keep offsets
    chars = list(body)
    for i in range(min(3, len(chars))):
        chars[i] = " "
    if body.startswith("/*@"):
        if body.endswith("@*/"):
            chars[-3:] = "   "
        elif body.endswith("*/"):
            chars[-2:] = "  "
    for m in re.finditer(r"\n[ \t]*@", body):
        chars[m.end() - 1] = " "
    clean = "".join(chars)
    out: list[Clause] = []
    case = 0
    pos = 0
    while True:
        m = _CLAUSE_START.search(clean, pos)
        if m is None:
            break
        kw = m.group(1)
        if kw == "also":
            case += 1
            pos = m.end()
            continue
        # an unparenthesised quantifier (``\\forall int j; range; body``) owns
        # the next two ';' at its depth
        depth, i, pending = 0, m.end(), 0
        while i < len(clean):
            ch = clean[i]
            if ch in "([{":
                depth += 1
            elif ch in ")]}":
                depth -= 1
            elif ch == "\\" and depth <= 0 and _QUANT.match(clean, i):
                pending += 2
            elif ch == ";" and depth <= 0:
                if pending == 0:
                    break
                pending -= 1
            i += 1
        expr_raw = clean[m.end():i]
        lead = len(expr_raw) - len(expr_raw.lstrip())
        expr = expr_raw.strip()
        if kw in SPEC_KEYWORDS and expr:
            s = offset + m.end() + lead
            out.append(Clause(kw, expr, s, s + len(expr.encode("utf-8")), case))
        pos = i + 1
    return out


def declared_names(node: Node, src: bytes) -> list[str]:
    """Parameters and local variables declared under ``node`` (in order)."""
    names: list[str] = []
    for n in walk(node):
        if n.type in ("formal_parameter", "spread_parameter", "variable_declarator", "catch_formal_parameter"):
            ident = n.child_by_field_name("name")
            if ident is None:
                ident = next((c for c in n.named_children if c.type == "identifier"), None)
                if ident is None:
                    for c in n.named_children:
                        if c.type == "variable_declarator":
                            ident = c.child_by_field_name("name")
            if ident is not None:
                name = text(ident, src)
                if name not in names:
                    names.append(name)
        if n.type == "enhanced_for_statement":
            ident = n.child_by_field_name("name")
            if ident is not None and text(ident, src) not in names:
                names.append(text(ident, src))
    return names


def declared_types(node: Node, src: bytes, nodes: list[Node] | None = None) -> dict[str, str]:
    """name -> declared type (``int[]`` for ``int a[]`` too) of the parameters,
    locals and fields under ``node`` (``nodes``: those already listed); a name declared
    twice with different types maps to ``?`` (it is then never swapped for another)."""
    out: dict[str, str] = {}

    def put(name_node, type_node, dims_node=None):
        if name_node is None or type_node is None:
            return
        t = text(type_node, src).replace(" ", "") + (text(dims_node, src).replace(" ", "") if dims_node else "")
        name = text(name_node, src)
        out[name] = t if out.get(name, t) == t else "?"

    for n in (walk(node) if nodes is None else nodes):
        if n.type in ("formal_parameter", "catch_formal_parameter"):
            put(n.child_by_field_name("name"), n.child_by_field_name("type"), n.child_by_field_name("dimensions"))
        elif n.type in ("local_variable_declaration", "field_declaration"):
            for c in n.named_children:
                if c.type == "variable_declarator":
                    put(c.child_by_field_name("name"), n.child_by_field_name("type"), c.child_by_field_name("dimensions"))
        elif n.type == "enhanced_for_statement":
            put(n.child_by_field_name("name"), n.child_by_field_name("type"))
    return out


def field_names(tree, src: bytes, nodes: list[Node] | None = None) -> list[str]:
    out = []
    for n in (walk(tree.root_node) if nodes is None else nodes):
        if n.type == "field_declaration":
            for c in n.named_children:
                if c.type == "variable_declarator":
                    out.append(text(c.child_by_field_name("name"), src))
    return out


def spec_blocks(source: str) -> list[SpecBlock]:
    """Every JML comment of ``source`` with its clauses, in source order.

    Memoised by the source text: building a task's instance under a perturbation reads
    the blocks of the same (tagged, perturbed) sources many times over, and each read
    walks the whole syntax tree.  Every call gets blocks of its own (a caller may change
    one's clause list or types without changing what the next caller sees)."""
    return [replace(b, clauses=list(b.clauses), types=dict(b.types)) for b in _spec_blocks(source)]


@lru_cache(maxsize=2048)
def _spec_blocks(source: str) -> tuple[SpecBlock, ...]:
    src = source.encode("utf-8")
    tree = parse(source)
    nodes = list(walk(tree.root_node))  # one walk of the tree; the lists below keep its order
    fields = field_names(tree, src, nodes)
    field_types = {k: v for k, v in declared_types(tree.root_node, src, nodes).items() if k in fields}
    blocks: list[SpecBlock] = []
    methods = [m for m in nodes if m.type in METHOD_TYPES]
    method_key = {}
    seen: dict[str, int] = {}
    for m in methods:
        name = text(m.child_by_field_name("name"), src)
        method_key[m.id] = (name, seen.get(name, 0))
        seen[name] = seen.get(name, 0) + 1
    # per method, read once for all of its comments
    method_types: dict[int, dict[str, str]] = {}
    method_loops: dict[int, list[Node]] = {}
    method_locals: dict[int, list[tuple[int, str]]] = {}

    def types_of(method: Node) -> dict[str, str]:
        if method.id not in method_types:
            method_types[method.id] = declared_types(method, src)
        return method_types[method.id]

    for n in nodes:
        if n.type not in ("line_comment", "block_comment"):
            continue
        raw = text(n, src)
        if not is_jml_comment(raw):
            continue
        target, method, variables = "other", "", tuple(fields)
        types = dict(field_types)
        location: tuple = ("", 0, "other", 0)
        # what the comment annotates: the next named sibling that is not a comment
        nxt = n.next_named_sibling
        while nxt is not None and nxt.type in ("line_comment", "block_comment"):
            nxt = nxt.next_named_sibling
        enclosing = n.parent
        while enclosing is not None and enclosing.type not in METHOD_TYPES:
            enclosing = enclosing.parent
        if nxt is not None and nxt.type in METHOD_TYPES and enclosing is None:
            target = "method"
            method = text(nxt.child_by_field_name("name"), src)
            params = nxt.child_by_field_name("parameters")
            variables = tuple(declared_names(params, src)) + tuple(fields) if params else tuple(fields)
            location = method_key[nxt.id] + ("method", 0)
            types.update(types_of(nxt))
        elif enclosing is not None:
            method = text(enclosing.child_by_field_name("name"), src)
            if enclosing.id not in method_locals:
                method_locals[enclosing.id] = _locals(enclosing, src)
            variables = tuple(_names_in_scope(enclosing, n, src, method_locals[enclosing.id])) + tuple(fields)
            types.update(types_of(enclosing))
            if nxt is not None and nxt.type in LOOP_TYPES:
                target = "loop"
                variables = tuple(dict.fromkeys(variables + tuple(_loop_header_names(nxt, src))))
                if enclosing.id not in method_loops:
                    method_loops[enclosing.id] = [x for x in walk(enclosing) if x.type in LOOP_TYPES]
                loops = method_loops[enclosing.id]
                location = method_key[enclosing.id] + ("loop", next(i for i, x in enumerate(loops) if x.id == nxt.id))
            else:
                location = method_key[enclosing.id] + ("other", 0)
        elif nxt is not None and nxt.type == "modifiers":  # /*@ pure @*/ inside a method's modifiers
            target = "other"
        blocks.append(SpecBlock(n.start_byte, n.end_byte, raw, target, method, n.start_point[0] + 1,
                                _clauses(raw, n.start_byte), variables, location, types))
    blocks.sort(key=lambda b: b.start)
    return tuple(blocks)


def _names_in_scope(method: Node, at: Node, src: bytes, local: list[tuple[int, str]] | None = None) -> list[str]:
    """Parameters plus locals declared before ``at`` in the method (a cheap,
    slightly generous notion of scope: enough to pick replacement variables).
    ``local``: the method's :func:`_locals`, when the caller read them once for all
    of its comments (a walk of the body per comment was a sixth of building the
    instances of a real program's tasks)."""
    names = []
    params = method.child_by_field_name("parameters")
    if params is not None:
        names += declared_names(params, src)
    for start, name in (_locals(method, src) if local is None else local):
        if start < at.start_byte and name not in names:
            names.append(name)
    return names


def _locals(method: Node, src: bytes) -> list[tuple[int, str]]:
    """(start byte, name) of each variable declarator of the method's body, in tree order."""
    body = method.child_by_field_name("body")
    return [] if body is None else [(n.start_byte, text(n.child_by_field_name("name"), src))
                                    for n in walk(body) if n.type == "variable_declarator"]


def _loop_header_names(loop: Node, src: bytes) -> list[str]:
    init = loop.child_by_field_name("init")
    return declared_names(init, src) if init is not None else []


def all_identifiers(source: str) -> set[str]:
    """Every identifier-shaped word of the source, comments included."""
    return set(re.findall(r"[A-Za-z_$][A-Za-z_0-9$]*", source))


def strip_jml(source: str, keep_auxiliary: bool = False) -> str:
    """The program without its JML comments (the Generation task's input)."""
    src = source.encode("utf-8")
    tree = parse(source)
    cuts = []
    for n in walk(tree.root_node):
        if n.type in ("line_comment", "block_comment") and is_jml_comment(text(n, src)):
            cuts.append((n.start_byte, n.end_byte))
    out = bytearray(src)
    for s, e in sorted(cuts, reverse=True):
        # drop the whole line when the comment is alone on it
        ls = out.rfind(b"\n", 0, s) + 1
        le = out.find(b"\n", e)
        le = len(out) if le < 0 else le
        if out[ls:s].strip() == b"" and out[e:le].strip() == b"":
            del out[ls:le + 1 if le < len(out) else le]
        else:
            out[s:e] = b""
    return out.decode("utf-8")


def methods_and_loops(source: str) -> tuple[list[str], int]:
    """Method names (in order) and the number of loops: what a perturbation must keep."""
    src = source.encode("utf-8")
    tree = parse(source)
    methods, loops = [], 0
    for n in walk(tree.root_node):
        if n.type in METHOD_TYPES:
            methods.append(text(n.child_by_field_name("name"), src))
        elif n.type in LOOP_TYPES:
            loops += 1
    return sorted(methods), loops


def has_syntax_error(source: str) -> bool:
    return parse(source).root_node.has_error
