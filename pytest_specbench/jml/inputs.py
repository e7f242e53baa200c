"""Test inputs for JML checking: a Java driver class with one case per call.

Policy (docs/jml.md, "Inputs"):
1. The calls of a SpecGenBench ``daikon/`` copy's ``main()`` are the inputs.
   Each call replays the statements of ``main`` before it (declarations and
   assignments; earlier calls are not replayed, so each call sees the values
   written in ``main``) and then calls the *oracle's* method: daikon names that
   differ are mapped by name ignoring case, then by parameter types (also a
   permutation of them: ``linearSearch(arr, x)`` -> ``linearSearch(int, int[])``),
   then by arity when one method fits.
2. When a program has fewer than ``MIN_CALLS`` calls, generated calls are added:
   small boundary and seeded-random values per parameter type (ints and longs
   in [-100, 100], chars, booleans, strings, int and char arrays, square int
   matrices); no Integer.MAX_VALUE: a loop linear in its input would only time out.  A generated call outside the method's
   ``requires`` is reported as "precondition" by the checker and so does not
   count: the precondition itself is the filter.
"""
from __future__ import annotations

import random
import re
from dataclasses import dataclass, field

from .parser import node_text as _text, parse_java
from .translate import Translation

MIN_CALLS = 10
GENERATED = 24

# Calls whose oracle shape differs from the daikon copy beyond renaming (by program).
SPECIAL = {
    # daikon: fibCompute(n) builds a table of n entries; oracle: new Fibonacci(n).fibCompute()
    ("Fibonacci", "fibCompute"): "new Fibonacci({0}).fibCompute()",
}


@dataclass
class DriverCall:
    index: int
    text: str  # the Java call as the driver makes it (for reports)
    generated: bool = False


@dataclass
class Driver:
    class_name: str
    source: str
    calls: list[DriverCall] = field(default_factory=list)
    unmapped: list[str] = field(default_factory=list)  # daikon methods with no oracle counterpart


def _norm_type(t: str) -> str:
    t = re.sub(r"\s+", "", t)
    return t


def _map_method(name: str, ptypes: list[str], oracle: dict[str, list[dict]]):
    """(oracle method name, its overload, argument permutation) or None."""
    def fits(cands, perm_ok=True):
        out = []
        for mname, ov in cands:
            otypes = [_norm_type(t) for t, _ in ov["params"]]
            if otypes == ptypes:
                out.append((mname, ov, list(range(len(ptypes)))))
            elif perm_ok and sorted(otypes) == sorted(ptypes) and len(set(ptypes)) == len(ptypes):
                out.append((mname, ov, [ptypes.index(t) for t in otypes]))
        return out

    all_methods = [(n, ov) for n, ovs in oracle.items() for ov in ovs if not ov.get("ctor") and not ov.get("private")]
    for pred in (lambda n: n == name, lambda n: n.lower() == name.lower(), lambda n: True):
        cands = [(n, ov) for n, ov in all_methods if pred(n)]
        hits = fits(cands)
        if len(hits) == 1:
            return hits[0]
        if len({h[0] for h in hits}) == 1 and hits:
            return hits[0]  # overloads of one name: Java resolves them
    same_arity = [(n, ov) for n, ov in all_methods if len(ov["params"]) == len(ptypes) and not n.startswith("__")]
    if len(same_arity) == 1:
        n, ov = same_arity[0]
        return n, ov, list(range(len(ptypes)))
    return None


def driver_from_daikon(daikon_source: str, translation: Translation, program: str = "",
                       generate: bool = True, seed: int = 0) -> Driver:
    """A driver class ``__JmlDriver`` for the oracle class of ``translation``."""
    src = daikon_source.encode("utf-8")
    tree = parse_java(src)
    cls = next(c for c in tree.root_node.named_children if c.type == "class_declaration")
    body = cls.child_by_field_name("body")
    dmethods: dict[str, list[list[str]]] = {}
    main = None
    for m in body.named_children:
        if m.type != "method_declaration":
            continue
        name = _text(src, m.child_by_field_name("name"))
        if name == "main":
            main = m
            continue
        ptypes = []
        for p in m.child_by_field_name("parameters").named_children:
            if p.type == "formal_parameter":
                t = _text(src, p.child_by_field_name("type"))
                dims = p.child_by_field_name("dimensions")
                ptypes.append(_norm_type(t + (_text(src, dims) if dims else "")))
        dmethods.setdefault(name, []).append(ptypes)
    oracle_cls = translation.class_name
    lines: list[str] = []
    calls: list[DriverCall] = []
    unmapped: set[str] = set()

    def target(mname: str, ov: dict) -> str:
        return oracle_cls if ov["static"] else f"new {oracle_cls}()"

    if main is not None:
        for stmt in main.child_by_field_name("body").named_children:
            invs = [n for n in _walk(stmt) if n.type == "method_invocation" and n.child_by_field_name("object") is None
                    and _text(src, n.child_by_field_name("name")) in dmethods
                    and not _text(src, n.child_by_field_name("name")).startswith("__")]
            if not invs:
                if stmt.type in ("local_variable_declaration", "expression_statement"):
                    lines.append("        " + _text(src, stmt))
                continue
            for inv in invs:
                dname = _text(src, inv.child_by_field_name("name"))
                args = [_text(src, a) for a in inv.child_by_field_name("arguments").named_children]
                special = SPECIAL.get((program, dname))
                if special is not None:
                    call = special.format(*args)
                    void = True
                else:
                    ptypes = next((p for p in dmethods[dname] if len(p) == len(args)), None)
                    hit = None if ptypes is None else _map_method(dname, ptypes, translation.methods)
                    if hit is None or len(hit[2]) != len(args):
                        unmapped.add(dname)
                        continue
                    oname, ov, perm = hit
                    call = f"{target(oname, ov)}.{oname}({', '.join(args[i] for i in perm)})"
                    void = ov["ret"] == "void"
                k = len(calls)
                calls.append(DriverCall(k, call))
                lines.append(f"        if (k == {k}) {{ {call}; return null; }}" if void
                             else f"        if (k == {k}) return {call};")
    if generate and len(calls) < MIN_CALLS:
        rng = random.Random(f"{seed}:{program}")
        methods = [(n, ov) for n, ovs in translation.methods.items() for ov in ovs
                   if not ov.get("ctor") and not ov.get("private") and not n.startswith("__") and n != "main"]
        mapped = {re.findall(r"\.(\w+)\(", c.text)[-1] for c in calls if re.findall(r"\.(\w+)\(", c.text)}
        methods = [m for m in methods if m[0] in mapped] or methods
        for j in range(GENERATED):
            if not methods:
                break
            oname, ov = methods[j % len(methods)]
            args = [_gen_value(t, rng, j) for t, _ in ov["params"]]
            if any(a is None for a in args):
                continue
            call = f"{target(oname, ov)}.{oname}({', '.join(args)})"
            k = len(calls)
            calls.append(DriverCall(k, call, generated=True))
            lines.append(f"        if (k == {k}) {{ {call}; return null; }}" if ov["ret"] == "void"
                         else f"        if (k == {k}) return {call};")
    source = ("public final class __JmlDriver {\n"
              "    public static Object call(int k) throws Throwable {\n"
              + "\n".join(lines)
              + "\n        throw new IllegalArgumentException(\"no call \" + k);\n    }\n}\n")
    return Driver("__JmlDriver", source, calls, sorted(unmapped))


# Small magnitudes only: loops linear in an int input would turn Integer.MAX_VALUE into timeouts.
_INT_EDGES = ["0", "1", "-1", "2", "3", "7", "10", "-10", "100", "16", "-100", "5"]


def _gen_value(t: str, rng: random.Random, j: int) -> str | None:
    t = _norm_type(t)
    if t in ("int", "short", "byte"):
        return _INT_EDGES[j] if j < len(_INT_EDGES) else str(rng.randint(-50, 50))
    if t == "long":
        v = _INT_EDGES[j] if j < len(_INT_EDGES) else str(rng.randint(-50, 50))
        return v.replace("Integer.", "Long.") if v.startswith("Integer") else v + "L"
    if t == "char":
        return repr(rng.choice("abcxyzAZ09 +-*/%"))
    if t == "boolean":
        return rng.choice(["true", "false"])
    if t == "double":
        return repr(rng.uniform(-100, 100))
    if t == "String":
        n = rng.randint(0, 6) if j else 0
        return '"' + "".join(rng.choice("abcab") for _ in range(n)) + '"'
    if t == "int[]":
        n = rng.randint(0, 6) if j else 0
        return "new int[]{" + ", ".join(str(rng.randint(-9, 9)) for _ in range(n)) + "}"
    if t == "int[][]":
        n = rng.randint(2, 3)
        return "new int[][]{" + ", ".join(
            "{" + ", ".join(str(rng.randint(-9, 9)) for _ in range(n)) + "}" for _ in range(n)) + "}"
    if t == "char[]":
        n = rng.randint(0, 6) if j else 0
        return "new char[]{" + ", ".join(repr(rng.choice("abcd")) for _ in range(n)) + "}"
    return None


def _walk(node):
    yield node
    for c in node.children:
        yield from _walk(c)


def driver_from_calls(calls: list[str], void: set[int] = frozenset()) -> Driver:
    """A driver of Java call expressions (``"A.f(1, new int[]{2})"``); indices in
    ``void`` are statements whose value is not returned."""
    lines = []
    out = []
    for k, call in enumerate(calls):
        out.append(DriverCall(k, call))
        lines.append(f"        if (k == {k}) {{ {call}; return null; }}" if k in void
                     else f"        if (k == {k}) return {call};")
    source = ("public final class __JmlDriver {\n"
              "    public static Object call(int k) throws Throwable {\n"
              + "\n".join(lines)
              + "\n        throw new IllegalArgumentException(\"no call \" + k);\n    }\n}\n")
    return Driver("__JmlDriver", source, out)
