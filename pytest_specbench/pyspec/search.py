"""The harness side of the ``pbt`` tier (issue #47, docs/tiers.md): type trees
of a function's parameters, the search job, and its records.

The search runs in a blocks job (:func:`.blocks.blocks_job` with ``search``):
Hypothesis in the job's keeper with the reference implementation and the
validity contract (benchmark code), each case in a fresh confined child of the
zygote (:mod:`.pbt_keeper`'s docstring says where the verdict lives).  What
comes back per relation is a :class:`Found`: refuted with the shrunk case,
passed with the cases tried, or unknown with why.  A refutation is a claim of
the keeper's search, which the caller replays in a fresh job
(:func:`.blocks.check_blocks`, the reference recomputed) before it counts.

Type trees (JSON): ``"int"``, ``"float"``, ``"str"``, ``"bool"``, ``"none"``,
``"any"``, ``["list", T]``, ``["set", T]``, ``["tuple", T, ...]``,
``["tuple_var", T]``, ``["dict", K, V]``, ``["union", T, ...]``,
``["optional", T]``.
"""
from __future__ import annotations

import ast
import json
import textwrap
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

from ..errors import InfrastructureError
from ..execution import wire
from .blocks import INSTALL_HINT, blocks_job
from .tiers.replay import Candidate, Replayed
from .tiers.verdict import Relation, Status, TierVerdict

_SCALARS = {"int": "int", "float": "float", "str": "str", "bool": "bool", "None": "none", "Any": "any",
            "object": "any"}
_LISTS = {"List": "list", "list": "list", "Sequence": "list", "Iterable": "list", "Set": "set", "set": "set"}


def type_tree(annotation: ast.expr | None) -> Any:
    """The type tree of a parameter's annotation (None when there is none or it is
    not understood)."""
    if annotation is None:
        return None
    node = annotation
    if isinstance(node, ast.Constant) and isinstance(node.value, str):  # a string annotation
        try:
            node = ast.parse(node.value, mode="eval").body
        except SyntaxError:
            return None
    if isinstance(node, ast.Constant) and node.value is None:
        return "none"
    if isinstance(node, (ast.Name, ast.Attribute)):
        name = node.id if isinstance(node, ast.Name) else node.attr
        if name in _SCALARS:
            return _SCALARS[name]
        if name in _LISTS:
            return [_LISTS[name], "any"]
        if name in ("Tuple", "tuple"):
            return ["tuple_var", "any"]
        if name in ("Dict", "dict"):
            return ["dict", "any", "any"]
        return None
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        parts = [type_tree(node.left), type_tree(node.right)]
        return None if None in parts else ["union", *parts]
    if isinstance(node, ast.Subscript):
        head = type_tree(node.value)
        args = list(node.slice.elts) if isinstance(node.slice, ast.Tuple) else [node.slice]
        name = node.value.id if isinstance(node.value, ast.Name) else getattr(node.value, "attr", "")
        if name in ("Tuple", "tuple"):
            if len(args) == 2 and isinstance(args[1], ast.Constant) and args[1].value is Ellipsis:
                inner = type_tree(args[0])
                return None if inner is None else ["tuple_var", inner]
            inner = [type_tree(a) for a in args]
            return None if None in inner else ["tuple", *inner]
        inner = [type_tree(a) for a in args]
        if None in inner:
            return None
        if name == "Optional":
            return ["optional", inner[0]]
        if name == "Union":
            return ["union", *inner]
        if isinstance(head, list) and head[0] in ("list", "set") and len(inner) == 1:
            return [head[0], inner[0]]
        if isinstance(head, list) and head[0] == "dict" and len(inner) == 2:
            return ["dict", *inner]
    return None


def value_tree(values: Sequence[Any]) -> Any:
    """The one reading of types from example values (issue #47): a type tree
    covering ``values`` (the task's test inputs, or the reference's outputs),
    where a parameter has no usable hint.  The elements of all the list (tuple,
    set) values together give the element tree, so ``[[1, 2], []]`` is a list
    of ints; ``"any"`` where there is nothing to read."""
    trees: list[Any] = []
    for v in values:
        t = _tree_of(v)
        if t not in trees:
            trees.append(t)
    containers: dict[str, list] = {}
    for v in values:
        head = _CONTAINER_HEADS.get(type(v))
        if head is not None:
            containers.setdefault(head, []).extend(list(v)[:20])
    if not trees:
        return "any"
    merged: list[Any] = []
    for t in trees:
        if isinstance(t, list) and t[0] in containers:
            t = [t[0], value_tree(containers.pop(t[0]))]
        elif isinstance(t, list) and t[0] in _CONTAINER_HEADS.values():
            continue  # merged into the first tree of its head
        merged.append(t)
    return merged[0] if len(merged) == 1 else ["union", *merged]


_CONTAINER_HEADS = {list: "list", tuple: "tuple_var", set: "set"}


def _tree_of(v: Any) -> Any:
    if v is None:
        return "none"
    for kind, name in ((bool, "bool"), (int, "int"), (float, "float"), (str, "str")):
        if type(v) is kind:
            return name
    if type(v) in _CONTAINER_HEADS:
        return [_CONTAINER_HEADS[type(v)], value_tree(list(v)[:20])]
    if isinstance(v, dict):
        return ["dict", value_tree(list(v)[:20]), value_tree(list(v.values())[:20])]
    return "any"


_HINTS = {"int": "int", "float": "float", "str": "str", "bool": "bool"}


def hint_text(tree: Any) -> str | None:
    """A type tree as one type hint's source text (z3's and CrossHair's reading),
    or None where no single hint says it: ``"none"``, ``"any"``, a dict, a union
    (but ints and floats together read as ``float``)."""
    if isinstance(tree, str):
        return _HINTS.get(tree)
    if tree[0] == "union" and sorted(map(str, tree[1:])) == ["float", "int"]:
        return "float"
    if tree[0] == "list":
        inner = hint_text(tree[1])
        return f"List[{inner}]" if inner else "list" if tree[1] == "any" else None
    return None


def observed_type(values: Sequence[Any]) -> str | None:
    """A type hint every one of ``values`` has (bool, int, float, str, a list of
    such), or None (mixed, empty, or another kind): :func:`hint_text` of
    :func:`value_tree`."""
    return hint_text(value_tree(values)) if list(values) else None


def parameter_trees(source: str, entry_point: str, examples: Sequence[Sequence[Any]] = ()) -> dict[str, Any]:
    """Per parameter of ``entry_point`` in ``source``: its type tree from the hint,
    else from the example argument lists (the task's test inputs)."""
    for node in ast.parse(source).body:
        if isinstance(node, ast.FunctionDef) and node.name == entry_point:
            params = [*node.args.posonlyargs, *node.args.args]
            out = {}
            for i, arg in enumerate(params):
                tree = type_tree(arg.annotation)
                if tree is None:
                    tree = value_tree([ex[i] for ex in examples if len(ex) > i])
                out[arg.arg] = tree
            return out
    raise ValueError(f"no def {entry_point} in the source")


def contract_alphabet(contract: str, longest: int = 3) -> str:
    """The characters of the short string literals a validity contract names
    (HumanEval/1's ``ch in ["(", ")", " "]``, HumanEval/11's ``{"0", "1"}``): the
    pbt tier draws strings over them first, as inputs of random text would
    rarely pass such a contract.  Empty when there are none."""
    try:
        tree = ast.parse(textwrap.dedent("\n".join(line for line in contract.split("\n") if line.strip())))
    except SyntaxError:
        return ""
    chars = {c for node in ast.walk(tree) if isinstance(node, ast.Constant) and isinstance(node.value, str)
             and 0 < len(node.value) <= longest and node.value != "invalid inputs" for c in node.value}
    return "".join(sorted(chars))


@dataclass(frozen=True)
class Found:
    """The keeper's claim about one relation."""

    relation: str
    status: str  # "refuted" | "passed" | "unknown"
    tried: int
    before: Any = None  # refuted: the arguments before the call
    case: Mapping[str, Any] | None = None  # refuted: what the child was shown
    expected: Any = None  # refuted: the reference's output in the search
    outcome: Mapping[str, Any] | None = None  # refuted: the child's answer
    reason: str = ""


def read_search(records: Sequence[Any], nonce: str, relations: Sequence[str], timed_out: bool) -> dict[str, Found]:
    """Per relation, the keeper's record (unknown, with why, where none came)."""
    mine = [r for r in records if isinstance(r, dict) and r.get("nonce") == nonce]
    if not any(r.get("event") == "start" for r in mine):
        raise InfrastructureError("the search job's keeper did not start (no start record)")
    out: dict[str, Found] = {}
    for rec in mine:
        if rec.get("event") != "search":
            continue
        if rec.get("kind") == "harness":
            raise InfrastructureError(f"the spec service could not evaluate: {rec.get('line') or INSTALL_HINT}")
        rel = rec.get("relation")
        if rel in relations and rel not in out:
            status = rec.get("status")
            if status == "refuted":
                out[rel] = Found(rel, "refuted", int(rec.get("tried") or 0), wire.loads(rec["before"]),
                                 wire.loads(rec["case"]), wire.loads(rec["expected"]), dict(rec.get("outcome") or {}),
                                 str(rec.get("note") or ""))
            elif status == "passed":
                out[rel] = Found(rel, "passed", int(rec.get("tried") or 0))
            else:
                out[rel] = Found(rel, "unknown", int(rec.get("tried") or 0), reason=str(rec.get("reason") or "")[:300])
    why = "the search ran out of time" if timed_out else "the search ended early"
    return {rel: out.get(rel, Found(rel, "unknown", 0, reason=why)) for rel in relations}


def run_search(executor: Any, preamble: str, source: str, config: Mapping[str, Any], case_seconds: float,
               timeout: float) -> dict[str, Found]:
    """One search job in the ``command`` executor; ``config`` is
    :mod:`.pbt_keeper`'s (program, entry_point, params, types, contract, oracle,
    examples, seconds, relations)."""
    relations = tuple(config.get("relations", ("AC", "RW")))
    search = {**config, "relations": list(relations)}
    json.dumps(search)  # plain data only: fails here, not in the job
    job, nonce = blocks_job(preamble, source, [], case_seconds, timeout, search=search)
    result = executor.run(None, job)
    return read_search(result.records, nonce, relations, result.timed_out)


def verdicts_of(tier: str, found: Mapping[str, Found], relations: Sequence[str], names: Sequence[str],
                replayed: Callable[[list], Replayed]) -> list[TierVerdict]:
    """A search tier's verdict per relation from the keeper's records: a claimed
    refutation counts only once ``replayed(candidates)`` (the one replay,
    :func:`.tiers.replay.replay`, which gives a ``Replayed``) confirms it; else
    it is UNKNOWN with why."""
    claims = [Candidate(Relation(f.relation), dict(zip(names, f.before)), (f.case or {}).get("return_value"), tier,
                        dict(f.outcome or {})) for f in found.values() if f.status == "refuted"]
    done = replayed(claims) if claims else Replayed()
    out = []
    for rel in relations:
        f, relation = found[rel], Relation(rel)
        if f.status == "passed":
            out.append(TierVerdict(tier, relation, Status.PASSED, examples=f.tried))
        elif f.status == "unknown":
            out.append(TierVerdict(tier, relation, Status.UNKNOWN, examples=f.tried, reason=f.reason))
        else:
            hit = next((ce for cand, ce in done.confirmed if cand.relation is relation), None)
            if hit is not None:
                out.append(TierVerdict(tier, relation, Status.REFUTED, examples=f.tried, counterexample=hit,
                                       reason=hit["why"]))
            else:
                why = next((w for cand, w in done.unconfirmed if cand.relation is relation), "")
                out.append(TierVerdict(tier, relation, Status.UNKNOWN, examples=f.tried,
                                       reason=f"not confirmed: {why}"))
    return out
