"""Branch probes: which branches of the program the test calls took.

SpecEval reports the branch coverage of its test cases (95.5% on average,
§4.1), measured with a coverage tool on the Java program; JaCoCo cannot be
installed here, so the translator inserts probes itself, found with
tree-sitter-java in the bodies of the class's methods and constructors (not
``main``, not field initialisers, not the JML):

- each *condition* of ``if``, ``while``, ``do``, ``for`` and ``?:`` has two
  branches, taken when it is true and when it is false; a condition built with
  ``&&``, ``||`` and ``!`` counts its operands instead (each short-circuit
  operand is a branch point, as in the bytecode JaCoCo counts), and so does any
  other ``&&``/``||`` expression (``return a && b``);
- each statement group of a classic ``switch`` statement is one branch, plus the
  implicit ``default`` when the switch has none.

Not counted: literal ``true``/``false`` conditions (javac emits no branch, and
wrapping them would change its reachability analysis), ``instanceof`` patterns
(wrapping would end the binding's scope), enhanced ``for`` loops, arrow-form
``switch`` and switch expressions (none occur in SpecGenBench).

A probe is a call to ``specbench.jml.JmlRt.br(ID, condition)`` (returns the
condition) or ``JmlRt.hit(ID)``; the runner reports the ids a call reached in
its nonce-tagged record, and the total comes from here, so neither can be set
by the program's output.  Probes are inserted without new lines: the JML
lines in verdicts are unchanged.
"""
from __future__ import annotations

from dataclasses import dataclass

RT = "specbench.jml.JmlRt"
_CONDITIONAL = {"if_statement", "while_statement", "do_statement", "for_statement", "ternary_expression"}
_STATEMENT_PARENTS = {"block", "switch_block_statement_group", "labeled_statement", "if_statement",
                      "while_statement", "for_statement", "do_statement", "constructor_body"}
# Seq numbers of the translator's edit list: at one position, a probe's opening
# goes after the translator's own insertions (loop invariants wrap the whole
# condition) and its closing before them; among probes, outer ones outside.
_OPEN, _CLOSE = 10 ** 8, -(10 ** 8)


@dataclass(frozen=True)
class Branch:
    line: int
    kind: str  # if, while, do, for, ?:, &&, ||, case, default


@dataclass
class Probes:
    edits: list[tuple[int, int, int, str]]  # (start, end, seq, text) for the translator's edit list
    branches: list[Branch]  # index = probe id


def branch_probes(root, src: bytes) -> Probes:
    out = Probes([], [])
    decomposed: set[tuple[int, int]] = set()
    order = [0]

    def seq() -> int:
        order[0] += 1
        return order[0]

    def add(line: int, *kinds: str) -> int:
        first = len(out.branches)
        out.branches.extend(Branch(line, k) for k in kinds)
        return first

    def strip(n):
        while n is not None and n.type == "parenthesized_expression" and n.named_children:
            n = n.named_children[0]
        return n

    def leaf(n, kind: str) -> None:
        if n is None or n.type in ("true", "false", "instanceof_expression"):
            return
        text = src[n.start_byte:n.end_byte].decode("utf-8", "replace").strip()
        if text in ("true", "false"):
            return
        k = seq()
        ident = add(n.start_point[0] + 1, kind, kind)
        out.edits.append((n.start_byte, n.start_byte, _OPEN + k, f"{RT}.br({ident}, "))
        out.edits.append((n.end_byte, n.end_byte, _CLOSE - k, ")"))

    def condition(n, kind: str) -> None:
        n = strip(n)
        if n is None:
            return
        if n.type == "binary_expression":
            op = n.child_by_field_name("operator")
            op_text = src[op.start_byte:op.end_byte].decode() if op is not None else ""
            if op_text in ("&&", "||"):
                decomposed.add((n.start_byte, n.end_byte))
                condition(n.child_by_field_name("left"), op_text)
                condition(n.child_by_field_name("right"), op_text)
                return
        if n.type == "unary_expression":
            op = n.child_by_field_name("operator")
            if op is not None and src[op.start_byte:op.end_byte] == b"!":
                decomposed.add((n.start_byte, n.end_byte))
                condition(n.child_by_field_name("operand"), kind)
                return
        leaf(n, kind)

    def switch(node) -> None:
        body = node.child_by_field_name("body")
        if body is None or node.parent is None or node.parent.type not in _STATEMENT_PARENTS:
            return
        groups = [g for g in body.named_children if g.type == "switch_block_statement_group"]
        if not groups or any(c.type == "switch_rule" for c in body.named_children):
            return
        has_default = False
        for g in groups:
            labels = [c for c in g.children if c.type == "switch_label"]
            has_default |= any(src[c.start_byte:c.end_byte].strip() == b"default" for c in labels)
            stmts = [c for c in g.named_children if c.type not in ("switch_label", "line_comment", "block_comment")]
            colons = [c for c in g.children if c.type == ":" and (not stmts or c.end_byte <= stmts[0].start_byte)]
            if not stmts or not colons:
                continue  # only labels: they share the next group's code (one branch target)
            ident = add(g.start_point[0] + 1, "case")
            out.edits.append((colons[-1].end_byte, colons[-1].end_byte, _OPEN + seq(), f" {RT}.hit({ident});"))
        if not has_default:
            # first, with a break: reached exactly when no case matches, as the original's fall-out
            ident = add(node.start_point[0] + 1, "default")
            at = body.start_byte + 1
            out.edits.append((at, at, _OPEN + seq(), f" default: {RT}.hit({ident}); break;"))

    def walk(node, inside: bool) -> None:
        t = node.type
        if t in ("method_declaration", "constructor_declaration"):
            name = node.child_by_field_name("name")
            inside = name is None or src[name.start_byte:name.end_byte] != b"main"
        elif t in ("field_declaration", "line_comment", "block_comment"):
            return
        if inside:
            if t in _CONDITIONAL:
                kind = {"if_statement": "if", "while_statement": "while", "do_statement": "do",
                        "for_statement": "for", "ternary_expression": "?:"}[t]
                condition(node.child_by_field_name("condition"), kind)
            elif t == "binary_expression" and (node.start_byte, node.end_byte) not in decomposed:
                op = node.child_by_field_name("operator")
                if op is not None and src[op.start_byte:op.end_byte] in (b"&&", b"||"):
                    condition(node, src[op.start_byte:op.end_byte].decode())
            elif t == "switch_expression":
                switch(node)
        for c in node.children:
            walk(c, inside)

    walk(root, False)
    return out
