"""Java syntax for the JML service: one tree-sitter-java parser per process and the
two walks over its trees that the translator (:mod:`.translate`), the input builder
(:mod:`.inputs`) and PostcondBench's Java side (prompts, injection, mutants) share.

JML expressions (inside ``//@`` and ``/*@ @*/`` comments) are parsed by :mod:`.expr`;
tree-sitter sees them as comments."""
from __future__ import annotations

from functools import lru_cache
from typing import Any, Iterator


@lru_cache(maxsize=None)
def java_parser() -> Any:
    """The tree-sitter parser of Java (built once: building the language is the cost)."""
    import tree_sitter as ts
    import tree_sitter_java as tsj

    return ts.Parser(ts.Language(tsj.language()))


def parse_java(source: bytes) -> Any:
    """The tree-sitter tree of a Java file (UTF-8 bytes); a syntax error is an
    ``ERROR`` or missing node in it, never an exception."""
    return java_parser().parse(source)


def node_text(src: bytes, node: Any) -> str:
    """The source text of a node (``src``: the bytes the tree was parsed from)."""
    return src[node.start_byte:node.end_byte].decode("utf-8")


def walk(node: Any) -> Iterator[Any]:
    """The node and all its descendants, in source order (pre-order); without recursion, so
    a sample's 4,000 nested parentheses are a deep tree, never a RecursionError (issue 42).
    With a tree cursor: one node object a step, where reading ``children`` made a list of
    them at every node (about twice the CPU; the walks were a fifth of building SpecEval's
    task instances of a real program)."""
    cursor = node.walk()
    depth = 0
    while True:
        yield cursor.node
        if cursor.goto_first_child():
            depth += 1
            continue
        while True:
            if depth == 0:  # (never above or beside the node the walk began at)
                return
            if cursor.goto_next_sibling():
                break
            cursor.goto_parent()
            depth -= 1


_ATOMS = frozenset({"string_literal", "character_literal"})  # one token each, whatever their children


def reprint(src: bytes, node: Any) -> str:
    """``node``'s tokens printed canonically (issue 42): one space between tokens on a line, the
    line breaks of the source kept (javac's lines stay the source's), no comment, nothing between
    tokens copied.  What javac reads of the printed text is the token sequence tree-sitter read,
    so a byte the two lexers would read differently (a ``\\r`` ending a ``//`` comment for javac
    only, an escape inside a comment) cannot reach javac."""
    out: list[str] = []
    row = node.start_point[0]
    stack = [node]
    while stack:
        n = stack.pop()
        if n.type in ("line_comment", "block_comment"):
            continue
        if n.child_count and n.type not in _ATOMS:
            stack.extend(reversed(n.children))
            continue
        if n.is_missing or n.end_byte == n.start_byte:
            continue
        r = n.start_point[0]
        if r > row:
            out.append("\n" * (r - row))
        elif out:
            out.append(" ")
        out.append(node_text(src, n))
        row = n.end_point[0]
    return "".join(out)
