"""The five semantic-preserving perturbations of SpecEval §3.3.1.

Each one rewrites a Java program *together with its JML comments* (renamed
variables are renamed in the specifications too; a branch that moves takes
its loop invariants along), deterministically from a seed:

- ``def-use-break``: every method parameter gets a fresh local copy declared
  at the top of the body (``int PZYcz = num1;``) and the body, with its loop
  invariants, uses the copy (the paper's Fig. example).  Method-level specs keep
  naming the parameter, which the body no longer assigns, so they mean the same.
- ``if-else-flip``: ``if (c) A else B`` becomes ``if (!(c)) {B} else {A}``
  (outermost if-else statements; else-if chains flip at their head).
- ``independent-swap``: in each block, the first pair of adjacent simple
  statements (expression statements and local declarations without calls)
  whose read/write sets are disjoint is swapped; a comment between them (a
  ``//@ set`` or ``assert``) prevents the swap.
- ``name-random``: parameters and locals of each method get fresh random names
  (never an identifier already in the file).
- ``name-shuffle``: the same names, permuted within each method.

A perturbation that finds nothing to change returns the program unchanged
(``applied`` False); the task is still built, as the paper keeps all programs
in every category (Table 1).  That each result compiles and keeps its methods
and loops is checked by the test suite with ``javac``.
"""
from __future__ import annotations

import random
import re
import string
from dataclasses import dataclass

from .jmlspec import (LOOP_TYPES, METHOD_TYPES, all_identifiers, declared_names, is_jml_comment, parse, text,
                      walk)

from .options import ALL_CATEGORIES, PERTURBATIONS  # noqa: F401 - declared with the options

JAVA_KEYWORDS = set("""abstract assert boolean break byte case catch char class const continue default do double
else enum extends final finally float for goto if implements import instanceof int interface long native new
package private protected public return short static strictfp super switch synchronized this throw throws
transient try void volatile while true false null var record yield""".split())


# words task texts may put into comments (placeholders, trivial specs): always
# taken, so a task's text never changes the names a perturbation picks
_RESERVED = {"FILL", "CANDIDATE", "true", "false"}


@dataclass(frozen=True)
class Perturbed:
    source: str
    applied: bool
    note: str = ""


def perturb(source: str, kind: str, seed: int) -> Perturbed:
    if kind == "original":
        return Perturbed(source, False)
    fn = {"def-use-break": _def_use_break, "if-else-flip": _if_else_flip, "independent-swap": _independent_swap,
          "name-random": _name_random, "name-shuffle": _name_shuffle}.get(kind)
    if fn is None:
        raise ValueError(f"unknown perturbation {kind!r}; known: {', '.join(PERTURBATIONS)}")
    return fn(source, random.Random(f"{seed}:{kind}"))


# --- edits ---------------------------------------------------------------
def _apply(src: bytes, edits: list[tuple[int, int, bytes]]) -> str:
    out = bytearray(src)
    for s, e, new in sorted(edits, key=lambda x: x[0], reverse=True):
        out[s:e] = new
    return out.decode("utf-8")


_WORD = re.compile(rb"(?<![\w$\\.])([A-Za-z_$][\w$]*)\b")


def _rename_edits(region, src: bytes, mapping: dict[str, str], skip_old: bool = False):
    """Renames inside ``region``: identifier nodes of code, and words of JML
    comments (not after '.', '\\' or inside ``\\old(...)`` when ``skip_old``)."""
    edits = []
    for n in walk(region):
        if n.type == "identifier":
            name = text(n, src)
            parent = n.parent
            # a.b: only the object, never the member; method names are not variables
            if parent is not None and parent.type == "field_access" and parent.child_by_field_name("field") == n:
                continue
            if parent is not None and parent.type in ("method_invocation",) + METHOD_TYPES \
                    and parent.child_by_field_name("name") == n:
                continue
            if name in mapping:
                edits.append((n.start_byte, n.end_byte, mapping[name].encode()))
        elif n.type in ("line_comment", "block_comment"):
            raw = src[n.start_byte:n.end_byte]
            if not is_jml_comment(raw.decode("utf-8", "replace")):
                continue
            old_spans = _old_spans(raw) if skip_old else []
            for m in _WORD.finditer(raw):
                name = m.group(1).decode()
                if name in mapping and not any(s <= m.start() < e for s, e in old_spans):
                    edits.append((n.start_byte + m.start(1), n.start_byte + m.end(1), mapping[name].encode()))
    return edits


def _old_spans(raw: bytes) -> list[tuple[int, int]]:
    spans = []
    for m in re.finditer(rb"\\old\s*\(", raw):
        depth, i = 1, m.end()
        while i < len(raw) and depth:
            depth += raw[i:i + 1] == b"("
            depth -= raw[i:i + 1] == b")"
            i += 1
        spans.append((m.start(), i))
    return spans


def _methods(tree):
    return [n for n in walk(tree.root_node) if n.type in METHOD_TYPES and n.child_by_field_name("body") is not None]


def _spec_comment_before(method, src: bytes):
    """JML comments directly above a method (its contract), which name its parameters."""
    out = []
    prev = method.prev_named_sibling
    while prev is not None and prev.type in ("line_comment", "block_comment"):
        out.append(prev)
        prev = prev.prev_named_sibling
    return out


def _fresh_name(rng: random.Random, taken: set[str]) -> str:
    while True:
        name = "".join(rng.choice(string.ascii_letters) for _ in range(5))
        if name not in taken and name not in JAVA_KEYWORDS:
            taken.add(name)
            return name


# --- the five --------------------------------------------------------------
def _renaming(source: str, rng: random.Random, shuffle: bool) -> Perturbed:
    src = source.encode("utf-8")
    tree = parse(source)
    taken = all_identifiers(source) | _RESERVED
    edits = []
    for method in _methods(tree):
        names = declared_names(method, src)
        if not names:
            continue
        if shuffle:
            if len(names) < 2:
                continue
            perm = names[:]
            for _ in range(20):  # prefer a permutation that moves every name
                rng.shuffle(perm)
                if all(a != b for a, b in zip(names, perm)):
                    break
            mapping = dict(zip(names, perm))
        else:
            mapping = {n: _fresh_name(rng, taken) for n in names}
        edits += _rename_edits(method, src, mapping)
        for comment in _spec_comment_before(method, src):
            edits += _rename_edits(comment, src, mapping)
    return Perturbed(_apply(src, edits), bool(edits))


def _name_random(source: str, rng: random.Random) -> Perturbed:
    return _renaming(source, rng, shuffle=False)


def _name_shuffle(source: str, rng: random.Random) -> Perturbed:
    return _renaming(source, rng, shuffle=True)


def _def_use_break(source: str, rng: random.Random) -> Perturbed:
    src = source.encode("utf-8")
    tree = parse(source)
    taken = all_identifiers(source) | _RESERVED
    edits = []
    for method in _methods(tree):
        params = method.child_by_field_name("parameters")
        body = method.child_by_field_name("body")
        decls, mapping = [], {}
        for p in params.named_children if params is not None else []:
            if p.type not in ("formal_parameter", "spread_parameter"):
                continue
            ptype = p.child_by_field_name("type") or next(c for c in p.named_children if c.type != "modifiers")
            tname = text(ptype, src)
            if p.type == "spread_parameter":
                declarator = next(c for c in p.named_children if c.type == "variable_declarator")
                name_node = declarator.child_by_field_name("name")
                tname += "[]"
            else:
                name_node = p.child_by_field_name("name")
            dims = p.child_by_field_name("dimensions")
            if dims is not None:
                tname += text(dims, src).replace(" ", "")
            name = text(name_node, src)
            mapping[name] = _fresh_name(rng, taken)
            decls.append(f"{tname} {mapping[name]} = {name};")
        if not mapping or body is None:
            continue
        # a constructor's explicit this(...)/super(...) must stay first
        first = body.named_children[0] if body.named_children else None
        insert_at = body.start_byte + 1
        rename_from = body
        if first is not None and first.type == "explicit_constructor_invocation":
            insert_at = first.end_byte
        edits.append((insert_at, insert_at, (" " + " ".join(decls)).encode()))
        for e in _rename_edits(rename_from, src, mapping, skip_old=True):
            if not (first is not None and first.type == "explicit_constructor_invocation" and e[0] < first.end_byte):
                edits.append(e)
    return Perturbed(_apply(src, edits), bool(edits))


def _outer_if_else(tree):
    out = []

    def visit(n, inside):
        if n.type == "if_statement" and n.child_by_field_name("alternative") is not None and not inside:
            out.append(n)
            inside = True
        for c in n.children:
            visit(c, inside)

    visit(tree.root_node, False)
    return out


def _braced(node, src: bytes) -> str:
    body = text(node, src)
    return body if node.type == "block" else "{ " + body + " }"


def _if_else_flip(source: str, rng: random.Random) -> Perturbed:
    src = source.encode("utf-8")
    tree = parse(source)
    edits = []
    for n in _outer_if_else(tree):
        cond = n.child_by_field_name("condition")  # parenthesized_expression
        cons = n.child_by_field_name("consequence")
        alt = n.child_by_field_name("alternative")
        inner = text(cond, src)[1:-1].strip()
        # comments between the two branches (rare) stay attached to the else part
        new = f"if (!({inner})) {_braced(alt, src)} else {_braced(cons, src)}"
        edits.append((n.start_byte, n.end_byte, new.encode()))
    return Perturbed(_apply(src, edits), bool(edits))


_SIMPLE = ("expression_statement", "local_variable_declaration")


def _reads_writes(stmt, src: bytes) -> tuple[set[str], set[str]] | None:
    reads, writes = set(), set()
    for n in walk(stmt):
        if n.type in ("method_invocation", "object_creation_expression", "lambda_expression", "switch_expression"):
            return None
        if n.type == "identifier":
            reads.add(text(n, src))
        if n.type == "assignment_expression":
            writes |= _base_names(n.child_by_field_name("left"), src)
        if n.type == "update_expression":
            writes |= _base_names(n.named_children[0], src)
        if n.type == "variable_declarator":
            writes.add(text(n.child_by_field_name("name"), src))
    return reads, writes


def _base_names(node, src: bytes) -> set[str]:
    return {text(n, src) for n in walk(node) if n.type == "identifier"}


def _independent_swap(source: str, rng: random.Random) -> Perturbed:
    src = source.encode("utf-8")
    tree = parse(source)
    edits = []
    for block in (n for n in walk(tree.root_node) if n.type == "block"):
        kids = block.named_children
        for a, b in zip(kids, kids[1:]):
            if a.type not in _SIMPLE or b.type not in _SIMPLE:
                continue
            ra, rb = _reads_writes(a, src) or (None, None), _reads_writes(b, src) or (None, None)
            if ra[0] is None or rb[0] is None:
                continue
            (reads_a, writes_a), (reads_b, writes_b) = ra, rb
            if writes_a & (reads_b | writes_b) or writes_b & reads_a:
                continue
            between = src[a.end_byte:b.start_byte]
            if b"/" in between:  # a comment (JML set/assert) between them pins the order
                continue
            edits.append((a.start_byte, a.end_byte, text(b, src).encode()))
            edits.append((b.start_byte, b.end_byte, text(a, src).encode()))
            break
    return Perturbed(_apply(src, edits), bool(edits))


def structure(source: str) -> tuple[list[str], int]:
    """Methods and loop count, for the 'keeps the program points' rule."""
    src = source.encode("utf-8")
    tree = parse(source)
    methods = sorted(text(n.child_by_field_name("name"), src) for n in walk(tree.root_node) if n.type in METHOD_TYPES)
    loops = sum(1 for n in walk(tree.root_node) if n.type in LOOP_TYPES)
    return methods, loops
