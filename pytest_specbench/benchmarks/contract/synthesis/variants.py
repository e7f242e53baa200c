"""Program variants of a task's reference, for the feasibility filter (§3.2).

From ``reference_with_contracts`` (the canonical solution with the contract
block at function entry) we derive, as source text:

* ``no_contract`` -- the contract block removed: the plain canonical solution;
* ``full``        -- all contract statements, then a sentinel ``raise`` so the
  function body never runs (we only need to know whether the contract block
  raised ``AssertionError``; stopping there is exact and keeps slow or
  non-terminating bodies out of the measurement);
* ``assert_k``    -- like ``full`` but every other contract assert replaced by
  ``pass``: the assert "alone", as upstream checks ``fired_individually``.
  Non-assert contract statements (helper ``def``s, ``words = s.split()``) stay,
  since the assert needs them.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass

from .translate import parse_contract_block

MARKER = "$_CONTRACT_$"
SENTINEL = "_SpecbenchContractPassed"


class VariantError(ValueError):
    """The reference cannot be split into contract and body."""


@dataclass
class Variants:
    sources: dict  # name -> source text
    n_asserts: int


def build_variants(reference: str, contract: str, entry_point: str, n_asserts: int) -> Variants:
    try:
        tree = ast.parse(reference)
    except SyntaxError as exc:
        raise VariantError(f"reference does not parse: {exc.msg} (line {exc.lineno})") from None
    fn = next((n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
               and n.name == entry_point), None)
    if fn is None:
        fn = next((n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == entry_point), None)
    if fn is None:
        raise VariantError(f"reference has no function {entry_point!r}")
    block = _contract_statements(fn, contract, reference)
    asserts = [n for st in block for n in _walk_in_order(st) if isinstance(n, ast.Assert)]
    if len(asserts) != n_asserts:
        raise VariantError(f"reference contract block has {len(asserts)} asserts, the task lists {n_asserts}")
    lines = reference.splitlines()
    first, last = block[0], block[-1]
    indent = lines[first.lineno - 1][: first.col_offset]

    # no_contract: drop the whole block (keep a `pass` so the body is never empty)
    nc = lines[: first.lineno - 1] + [indent + "pass"] + lines[last.end_lineno:]
    sources = {"no_contract": "\n".join(nc) + "\n"}

    # full: sentinel after the block
    with_sentinel = lines[: last.end_lineno] + [f"{indent}raise {SENTINEL}()"] + lines[last.end_lineno:]
    sources["full"] = "\n".join(with_sentinel) + "\n"
    for k in range(n_asserts):
        text = list(with_sentinel)
        # replace the other asserts, bottom-up so earlier positions stay valid
        for j in sorted((j for j in range(n_asserts) if j != k), key=lambda j: -asserts[j].lineno):
            _replace_with_pass(text, asserts[j])
        sources[f"assert_{k}"] = "\n".join(text) + "\n"
    for name, src in sources.items():
        try:
            ast.parse(src)
        except SyntaxError as exc:  # pragma: no cover - defensive
            raise VariantError(f"could not build variant {name}: {exc.msg}") from None
    return Variants(sources, n_asserts)


def _replace_with_pass(lines: list, node: ast.stmt) -> None:
    first, last = node.lineno - 1, node.end_lineno - 1
    head = lines[first][: node.col_offset]
    tail = lines[last][node.end_col_offset:]
    lines[first: last + 1] = [head + "pass" + tail]


def _walk_in_order(node):
    yield node
    for child in ast.iter_child_nodes(node):
        yield from _walk_in_order(child)


def _contract_statements(fn, contract: str, reference: str) -> list:
    """The top-level statements of ``fn`` that form the contract block."""
    body = fn.body
    try:
        wanted = [ast.dump(s) for s in parse_contract_block(contract)]
    except SyntaxError:
        wanted = []
    if wanted:
        dumps = [ast.dump(s) for s in body]
        for i in range(len(body) - len(wanted) + 1):
            if dumps[i: i + len(wanted)] == wanted:
                return body[i: i + len(wanted)]
    # fall back on the `# $_CONTRACT_$` markers
    lines = reference.splitlines()
    marked = [s for s in body if any(MARKER in lines[i - 1] for i in range(s.lineno, s.end_lineno + 1))]
    if not marked:
        raise VariantError("contract block not found in the reference")
    start, end = body.index(marked[0]), body.index(marked[-1])
    return body[start: end + 1]
