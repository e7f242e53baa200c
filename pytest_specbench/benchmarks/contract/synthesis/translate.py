"""Translate ContractEval ``assert`` contracts into z3 constraints, without an LLM.

ContractEval (§3.2, Appendix G) prompts an LLM to turn every assert of a task
into SMT-LIB over an ADT of Python values.  This module does the same
deterministically: it walks the Python ``ast`` of the contract block and
evaluates it *symbolically* over :mod:`.adt` values.

Every expression evaluates to a pair ``(value, ok)``: ``ok`` is the z3
condition under which CPython evaluates the expression **without raising**
(``len(5)`` raises ``TypeError``; ``a and b`` never evaluates ``b`` when ``a``
is falsy; ``all(...)`` stops at the first false element).  An assert ``k`` is
then

* *satisfied* where ``ok_k and value_k`` -- CPython passes the assert;
* *violated*  where ``ok_k and not value_k`` -- CPython raises exactly
  ``AssertionError`` at this assert, also when it runs alone (the
  ``fired_individually`` check of §3.2).

Where the encoding is only an approximation (bounded lengths, ``dict == dict``,
float ``%`` ...) ``ok`` is made *false*: that only shrinks the search space, so
a model of "violated" is always a real violation.  Each such place is also
recorded in ``Translator.inexact`` (a reason and the z3 condition under which
the encoding may differ from CPython, including float rounding, which the
encoding computes in exact reals): a *proof* from a translation (the z3 tier of
the Python-spec service, ``pyspec/tiers/z3_tier.py``) needs that condition
unsatisfiable, since dropping inputs from the search space would forge it.  Anything outside the subset
raises :class:`~.adt.Unsupported` with a category, and the pipeline reports the
assert by name.
"""
from __future__ import annotations

import ast
import textwrap
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import z3

from .adt import (
    SStr, sstr_all_chars, sstr_any_char, sstr_char, sstr_concat, sstr_const, sstr_contains, sstr_less,
    sstr_prefix, sstr_sub, sstr_suffix, sstr_value, select_int,
    BOOL, CONTAINERS, DICT, FLOAT, INT, INTEGRAL, LIST, NONE, NUMERIC, SEQUENCES, SIZED, STR,
    TUPLE, UNHASHABLE, And, Bounds, If, Implies, Inputs, Not, Or, Sym, Unsupported, bool_sym,
    const, equal, float_sym, int_sym, int_value, is_tag, ite, length, real_value, select,
    seq_sym, str_sym, tag_in, truthy,
)

TRUE = z3.BoolVal(True)
FALSE = z3.BoolVal(False)

#: Largest ``range(a, b)`` with symbolic bounds that is unrolled.
RANGE_SLOTS = 8


# ---------------------------------------------------------------- value kinds
@dataclass
class TypeV:
    """A Python type object: a builtin name (``int``) or ``type(x)``.

    ``tag`` is ``None`` for builtin types that no ADT value has (``set``).
    """

    tag: Any
    tags: frozenset
    exact: bool = True  # a builtin type name (static) rather than type(x)


@dataclass
class TypeSet:
    """A list or tuple literal of types: ``(int, float)``, ``[int, float]``."""

    types: list


@dataclass
class Item:
    guard: Any
    value: Any
    ok: Any = TRUE


@dataclass
class Check:
    guard: Any
    cond: Any


@dataclass
class IterV:
    """A lazily iterated collection: generator, ``zip``, ``range``, dict view, set.

    ``events`` are in evaluation order: ``Check`` must hold when reached (else
    CPython raises), ``Item`` yields a value when its guard holds.  ``compact``
    means item ``k``'s guard is "at least ``k+1`` items", so ``zip`` can pair
    items by position.  ``materialized`` marks real lists/sets (all events are
    evaluated eagerly: no short circuit).
    """

    events: list
    compact: bool
    materialized: bool = False
    is_set: bool = False
    tag: int = LIST


@dataclass
class Builtin:
    name: str


@dataclass
class Macro:
    """A helper ``def f(x): return expr`` or a ``lambda`` from the contract block."""

    params: list
    body: ast.expr
    env: dict


@dataclass
class Poison:
    """A name assigned by a statement we do not model (loop, try ...)."""

    reason: str


BUILTIN_TYPES = {"int": INT, "float": FLOAT, "str": STR, "bool": BOOL, "list": LIST,
                 "tuple": TUPLE, "dict": DICT, "NoneType": NONE}
OTHER_TYPES = {"set", "frozenset", "complex", "bytes", "object", "type"}
BUILTIN_FUNCS = {"isinstance", "type", "len", "all", "any", "sum", "min", "max", "abs", "set",
                 "list", "tuple", "zip", "range", "map", "enumerate", "int", "float", "bool",
                 "sorted"}


def _type_of_name(name: str) -> TypeV:
    if name in BUILTIN_TYPES:
        t = BUILTIN_TYPES[name]
        return TypeV(z3.IntVal(t), frozenset({t}))
    return TypeV(None, frozenset())


# ---------------------------------------------------------------- the translator
@dataclass
class AssertModel:
    """One assert of a task, translated (or not)."""

    name: str  # assert_k
    text: str
    value: Any = None  # z3 Bool: the assert's condition is truthy
    ok: Any = None  # z3 Bool: evaluating it raises nothing
    error: Unsupported | None = None
    params: frozenset = frozenset()  # parameters it reads

    @property
    def supported(self) -> bool:
        return self.error is None

    @property
    def satisfied(self):
        return And(self.ok, self.value)

    @property
    def violated(self):
        return And(self.ok, Not(self.value))


@dataclass
class ContractModel:
    params: dict  # name -> Sym
    inputs: Inputs
    asserts: list  # AssertModel, in assert_k order
    axioms: list = field(default_factory=list)  # global side constraints


class Translator:
    """Symbolic evaluator for one contract block (see the module docstring)."""

    def __init__(self, inputs: Inputs, bounds: Bounds):
        self.inputs = inputs
        self.bounds = bounds
        self.axioms: list = []
        # (reason, z3 condition): where the encoding may differ from CPython (see the module docstring)
        self.inexact: list = []
        self.tail_ok = TRUE  # the statements after the last assert raise nothing

    def approx(self, reason: str, where=TRUE) -> None:
        """Record that the encoding may differ from CPython where ``where`` holds."""
        if not _is_false(where):
            self.inexact.append((reason, where))

    def _equal(self, a: Sym, b: Sym):
        v, ok = equal(a, b)
        self.approx("equality not modelled (dict == dict, or nesting too deep)", Not(ok))
        return v, ok

    # -- expressions ------------------------------------------------------
    def ev(self, node: ast.expr, env: dict):
        meth = getattr(self, "ev_" + type(node).__name__, None)
        if meth is None:
            raise Unsupported("expression kind", type(node).__name__)
        return meth(node, env)

    def sym(self, node: ast.expr, env: dict):
        """Evaluate to an ADT value (a list comprehension becomes a list)."""
        v, ok = self.ev(node, env)
        return self.as_sym(v, ok)

    def as_sym(self, v, ok):
        if isinstance(v, Sym):
            return v, ok
        if isinstance(v, IterV) and v.materialized and not v.is_set:
            return self.compact(v), ok
        raise Unsupported("value used where a plain value is needed", type(v).__name__)

    def ev_Constant(self, node, env):
        if isinstance(node.value, str) and any(not (32 <= ord(c) <= 126 or c in "\t\n\r\x0b\x0c")
                                               for c in node.value):
            self.approx("string constant outside printable ASCII (str predicates are exact for ASCII only)")
        if isinstance(node.value, (bool, int, float, str)) or node.value is None:
            return const(node.value), TRUE
        raise Unsupported("constant", type(node.value).__name__)

    def ev_Name(self, node, env):
        if node.id in env:
            v = env[node.id]
            if isinstance(v, Poison):
                raise Unsupported("depends on an unmodelled statement", v.reason)
            return v, TRUE
        if node.id in BUILTIN_TYPES or node.id in OTHER_TYPES:
            return _type_of_name(node.id), TRUE
        if node.id in BUILTIN_FUNCS:
            return Builtin(node.id), TRUE
        raise Unsupported("name defined outside the contract", node.id)

    def ev_List(self, node, env):
        return self._literal(node, env, LIST)

    def ev_Tuple(self, node, env):
        return self._literal(node, env, TUPLE)

    def _literal(self, node, env, tag):
        vals, oks = [], []
        for e in node.elts:
            if isinstance(e, ast.Starred):
                raise Unsupported("starred expression")
            v, ok = self.ev(e, env)
            vals.append(v)
            oks.append(ok)
        if vals and all(isinstance(v, TypeV) for v in vals):
            return TypeSet(vals), TRUE
        syms = [self.as_sym(v, TRUE)[0] for v in vals]
        return seq_sym(tag, z3.IntVal(len(syms)), syms), And(*oks)

    def ev_Set(self, node, env):
        items, oks = [], []
        for e in node.elts:
            v, ok = self.sym(e, env)
            items.append(Item(TRUE, v))
            oks.append(ok)
            oks.append(Not(tag_in(v, UNHASHABLE)))
        return IterV(items, compact=False, materialized=True, is_set=True), And(*oks)

    def ev_BoolOp(self, node, env):
        is_and = isinstance(node.op, ast.And)
        value, ok = self.sym(node.values[0], env)
        for nxt in node.values[1:]:
            t = truthy(value)
            go_on = t if is_and else Not(t)
            v2, ok2 = self.sym(nxt, env)
            ok = And(ok, Implies(go_on, ok2))
            value = ite(go_on, v2, value)
        return value, ok

    def ev_UnaryOp(self, node, env):
        v, ok = self.ev(node.operand, env)
        if isinstance(node.op, ast.Not):
            if isinstance(v, (TypeV, Builtin, Macro)) or (isinstance(v, IterV) and not v.materialized):
                return const(False), ok  # these objects are always truthy
            v, ok = self.as_sym(v, ok)
            return bool_sym(Not(truthy(v))), ok
        v, ok = self.as_sym(v, ok)
        if isinstance(node.op, (ast.USub, ast.UAdd)):
            sign = -1 if isinstance(node.op, ast.USub) else 1
            return self._numeric_map(v, lambda i: sign * i, lambda r: sign * r), And(ok, tag_in(v, NUMERIC))
        raise Unsupported("unary operator", type(node.op).__name__)

    def _numeric_map(self, v: Sym, fi: Callable, fr: Callable) -> Sym:
        """Apply an int/float function preserving int-ness (bool becomes int)."""
        outs = []
        if v.tags & INTEGRAL:
            outs.append((tag_in(v, INTEGRAL), int_sym(fi(int_value(v)))))
        if v.has(FLOAT):
            outs.append((is_tag(v, FLOAT), float_sym(fr(v.r))))
        if not outs:
            return const(0)
        res = outs[-1][1]
        for c, s in reversed(outs[:-1]):
            res = ite(c, s, res)
        return res

    def ev_IfExp(self, node, env):
        c, okc = self.sym(node.test, env)
        a, oka = self.sym(node.body, env)
        b, okb = self.sym(node.orelse, env)
        t = truthy(c)
        return ite(t, a, b), And(okc, If(t, oka, okb))

    # arithmetic ---------------------------------------------------------
    def ev_BinOp(self, node, env):
        a, oka = self.sym(node.left, env)
        b, okb = self.sym(node.right, env)
        v, ok = self.binop(node.op, a, b)
        return v, And(oka, okb, ok)

    def binop(self, op, a: Sym, b: Sym):
        may_float = a.has(FLOAT) or b.has(FLOAT)
        if isinstance(op, ast.Div) or (may_float and isinstance(op, (ast.Add, ast.Sub, ast.Mult, ast.Pow))):
            self.approx("float arithmetic (CPython rounds, the encoding computes in exact reals)")
        if may_float and isinstance(op, (ast.Mod, ast.FloorDiv)):
            self.approx("float % or // not modelled")
        if isinstance(op, ast.Mult) and (a.tags | b.tags) & (SEQUENCES | {STR}):
            self.approx("sequence repetition not modelled")
        cases = []  # (condition, result)
        num = And(tag_in(a, NUMERIC), tag_in(b, NUMERIC)) if (a.tags & NUMERIC and b.tags & NUMERIC) else FALSE
        both_int = And(tag_in(a, INTEGRAL), tag_in(b, INTEGRAL)) if (a.tags & INTEGRAL and b.tags & INTEGRAL) else FALSE
        some_float = Or(is_tag(a, FLOAT), is_tag(b, FLOAT))
        ia = int_value(a) if a.tags & INTEGRAL else z3.IntVal(0)
        ib = int_value(b) if b.tags & INTEGRAL else z3.IntVal(0)
        ra = real_value(a) if a.tags & NUMERIC else z3.RealVal(0)
        rb = real_value(b) if b.tags & NUMERIC else z3.RealVal(0)

        def arith(fi, fr, int_ok=TRUE, float_ok=TRUE):
            if not _is_false(num):
                cases.append((And(num, Not(some_float), int_ok), int_sym(fi(ia, ib))))
                cases.append((And(num, some_float, float_ok), float_sym(fr(ra, rb))))

        if isinstance(op, ast.Add):
            arith(lambda x, y: x + y, lambda x, y: x + y)
            if a.has(STR) and b.has(STR):
                cases.append((And(is_tag(a, STR), is_tag(b, STR)), str_sym(sstr_concat(a.s, b.s))))
            for t in SEQUENCES:
                if a.has(t) and b.has(t):
                    cases.append((And(is_tag(a, t), is_tag(b, t)), self.concat(t, a, b)))
        elif isinstance(op, ast.Sub):
            arith(lambda x, y: x - y, lambda x, y: x - y)
        elif isinstance(op, ast.Mult):
            arith(lambda x, y: x * y, lambda x, y: x * y)
        elif isinstance(op, ast.Mod):
            # float % is not modelled (ok false there); int % follows CPython's sign rule.
            if not _is_false(both_int):
                cases.append((And(both_int, ib != 0), int_sym(py_mod(ia, ib))))
        elif isinstance(op, ast.FloorDiv):
            if not _is_false(both_int):
                cases.append((And(both_int, ib != 0), int_sym(py_floordiv(ia, ib))))
        elif isinstance(op, ast.Div):
            if not _is_false(num):
                cases.append((And(num, rb != 0), float_sym(ra / rb)))
        elif isinstance(op, ast.Pow):
            e = z3.simplify(ib) if b.tags <= INTEGRAL else None
            if e is None or not z3.is_int_value(e) or not 0 <= e.as_long() <= 6:
                raise Unsupported("power with a non-constant or large exponent")
            k = e.as_long()

            def power(x, k=k):
                out = 1
                for _ in range(k):
                    out = out * x
                return out

            arith(lambda x, _y: power(x) if k else z3.IntVal(1), lambda x, _y: power(x) if k else z3.RealVal(1))
        else:
            raise Unsupported("binary operator", type(op).__name__)
        cases = [(c, v) for c, v in cases if not _is_false(c)]
        if not cases:
            return const(0), FALSE
        res = cases[-1][1]
        for c, v in reversed(cases[:-1]):
            res = ite(c, v, res)
        return res, Or(*[c for c, _ in cases])

    def concat(self, tag: int, a: Sym, b: Sym) -> Sym:
        slots = len(a.items) + len(b.items)
        items = []
        for k in range(slots):
            from_a = a.items[k] if k < len(a.items) else None
            j = k - a.n
            from_b = select(b.items, j) if b.items else None
            if from_a is None:
                items.append(from_b)
            elif from_b is None:
                items.append(from_a)
            else:
                items.append(ite(k < a.n, from_a, from_b))
        return seq_sym(tag, a.n + b.n, [x for x in items if x is not None])

    # comparisons --------------------------------------------------------
    def ev_Compare(self, node, env):
        left, ok = self.ev(node.left, env)
        result = TRUE
        for op, rnode in zip(node.ops, node.comparators):
            right, rok = self.ev(rnode, env)
            val, cok = self.compare(op, left, right)
            ok = And(ok, Implies(result, And(rok, cok)))
            result = And(result, val)
            left = right
        return bool_sym(result), ok

    def compare(self, op, a, b):
        if isinstance(op, (ast.In, ast.NotIn)):
            v, ok = self.contains(b, a)
            return (v if isinstance(op, ast.In) else Not(v)), ok
        if isinstance(op, (ast.Is, ast.IsNot)):
            if isinstance(b, Sym) and b.tags == {NONE} and isinstance(a, Sym):
                v = is_tag(a, NONE)
                return (v if isinstance(op, ast.Is) else Not(v)), TRUE
            raise Unsupported("'is' comparison other than with None")
        if isinstance(op, (ast.Eq, ast.NotEq)):
            v, ok = self.equals(a, b)
            return (v if isinstance(op, ast.Eq) else Not(v)), ok
        a, _ = self.as_sym(a, TRUE)
        b, _ = self.as_sym(b, TRUE)
        if a.tags & b.tags & SEQUENCES:
            self.approx("ordering of lists or tuples not modelled")
        cases = []
        if a.tags & NUMERIC and b.tags & NUMERIC:
            cond = And(tag_in(a, NUMERIC), tag_in(b, NUMERIC))
            if a.tags & NUMERIC <= INTEGRAL and b.tags & NUMERIC <= INTEGRAL:
                x, y = int_value(a), int_value(b)
            else:
                x, y = real_value(a), real_value(b)
            cases.append((cond, _order(op, x, y)))
        if a.has(STR) and b.has(STR):
            cases.append((And(is_tag(a, STR), is_tag(b, STR)), _str_order(op, a.s, b.s)))
        if not cases:
            return FALSE, FALSE
        return Or(*[And(c, v) for c, v in cases]), Or(*[c for c, _ in cases])

    def equals(self, a, b):
        if isinstance(a, TypeV) or isinstance(b, TypeV):
            if isinstance(a, TypeV) and isinstance(b, TypeV):
                return type_equal(a, b), TRUE
            return FALSE, TRUE
        if isinstance(a, TypeSet) or isinstance(b, TypeSet):
            return FALSE, TRUE
        if isinstance(a, IterV) and a.is_set or isinstance(b, IterV) and b.is_set:
            if isinstance(a, IterV) and isinstance(b, IterV) and a.is_set and b.is_set:
                return self.set_equal(a, b)
            raise Unsupported("set compared with a non-set")
        a, _ = self.as_sym(a, TRUE)
        b, _ = self.as_sym(b, TRUE)
        return self._equal(a, b)

    def set_equal(self, a: IterV, b: IterV):
        ina, oka = self.subset(a, b)
        inb, okb = self.subset(b, a)
        return And(ina, inb), And(oka, okb)

    def subset(self, a: IterV, b: IterV):
        parts, oks = [], []
        for e in a.events:
            if isinstance(e, Item):
                m, ok = self.contains(b, e.value)
                parts.append(Implies(e.guard, m))
                oks.append(Implies(e.guard, ok))
        return And(*parts), And(*oks)

    def contains(self, container, x):
        """Python ``x in container``: ``(value, ok)``."""
        if isinstance(container, TypeSet):
            if not isinstance(x, TypeV):
                return FALSE, TRUE
            return Or(*[type_equal(x, t) for t in container.types]), TRUE
        if isinstance(container, IterV):
            found, oks = FALSE, []
            if not isinstance(x, Sym):
                raise Unsupported("membership of a non-value")
            if container.is_set:
                oks.append(Not(tag_in(x, UNHASHABLE)))
            for e in container.events:
                if isinstance(e, Check):
                    oks.append(Implies(And(Not(found), e.guard), e.cond))
                else:
                    eqv, eok = self._equal(e.value, x)
                    oks.append(Implies(And(Not(found), e.guard), And(e.ok, eok)))
                    found = Or(found, And(e.guard, eqv))
            return found, And(*oks)
        if not isinstance(container, Sym) or not isinstance(x, Sym):
            raise Unsupported("membership test on", type(container).__name__)
        c = container
        cases, oks = [], []
        if c.has(STR):
            cond = is_tag(c, STR)
            if x.has(STR):
                cases.append(And(cond, is_tag(x, STR), sstr_contains(c.s, x.s)))
            oks.append(And(cond, is_tag(x, STR)))  # 'in <str>' needs a str (TypeError otherwise)
        for t in (LIST, TUPLE, DICT):
            if not c.has(t):
                continue
            cond = is_tag(c, t)
            hits, eoks = [], []
            for k, item in enumerate(c.items):
                eqv, eok = self._equal(item, x)
                hits.append(And(k < c.n, eqv))
                eoks.append(Implies(k < c.n, eok))
            cases.append(And(cond, Or(*hits)))
            extra = Not(tag_in(x, UNHASHABLE)) if t == DICT else TRUE
            oks.append(And(cond, extra, *eoks))
        return Or(*cases), Or(*oks)

    # subscripts -----------------------------------------------------------
    def ev_Subscript(self, node, env):
        v, ok = self.sym(node.value, env)
        if isinstance(node.slice, ast.Slice):
            if node.slice.step is not None:
                raise Unsupported("slice with a step")
            lo = hi = None
            if node.slice.lower is not None:
                lo, okl = self.sym(node.slice.lower, env)
                ok = And(ok, okl, tag_in(lo, INTEGRAL))
            if node.slice.upper is not None:
                hi, okh = self.sym(node.slice.upper, env)
                ok = And(ok, okh, tag_in(hi, INTEGRAL))
            res, sok = self.slice(v, lo, hi)
            return res, And(ok, sok)
        idx, oki = self.sym(node.slice, env)
        res, iok = self.index(v, idx)
        return res, And(ok, oki, iok)

    def slice(self, v: Sym, lo, hi):
        n = length(v)

        def norm(b, default):
            if b is None:
                return default
            x = int_value(b) if b.tags & INTEGRAL else z3.IntVal(0)
            return If(x < 0, _max(x + n, z3.IntVal(0)), _min(x, n))

        start, stop = norm(lo, z3.IntVal(0)), norm(hi, n)
        cnt = _max(stop - start, z3.IntVal(0))
        cases = []
        for t in SEQUENCES:
            if v.has(t):
                items = [select(v.items, start + k) for k in range(len(v.items))]
                cases.append((is_tag(v, t), seq_sym(t, cnt, items)))
        if v.has(STR):
            cases.append((is_tag(v, STR), str_sym(sstr_sub(v.s, start, cnt))))
        return _cases(cases)

    def index(self, v: Sym, idx: Sym):
        cases = []
        if v.tags & (SEQUENCES | {STR}):
            i = int_value(idx) if idx.tags & INTEGRAL else z3.IntVal(0)
            n = length(v)
            j = If(i < 0, i + n, i)
            inb = And(tag_in(idx, INTEGRAL), i >= -n, i < n)
            for t in SEQUENCES:
                if v.has(t):
                    cases.append((And(is_tag(v, t), inb), select(v.items, j)))
            if v.has(STR):
                cases.append((And(is_tag(v, STR), inb), str_sym(sstr_char(v.s, j))))
        if v.has(DICT):
            found, hit = FALSE, None
            for k, (key, val) in enumerate(zip(v.items, v.vals)):
                eqv, _ = self._equal(key, idx)
                c = And(k < v.n, eqv)
                hit = val if hit is None else ite(c, val, hit)
                found = Or(found, c)
            if hit is not None:
                cases.append((And(is_tag(v, DICT), found, Not(tag_in(idx, UNHASHABLE))), hit))
        return _cases(cases)

    # attribute and calls ----------------------------------------------------
    def ev_Attribute(self, node, env):
        v, ok = self.ev(node.value, env)
        if isinstance(v, TypeV) and node.attr == "__name__":
            if v.tag is None:
                raise Unsupported("__name__ of a type outside the ADT")
            from .adt import TAG_NAMES
            out = None
            for t in sorted(v.tags):
                s = str_sym(sstr_const(TAG_NAMES[t]))
                out = s if out is None else ite(v.tag == t, s, out)
            return out, ok
        raise Unsupported("attribute access", node.attr)

    def ev_Lambda(self, node, env):
        args = node.args
        if args.posonlyargs or args.vararg or args.kwarg or args.kwonlyargs or args.defaults:
            raise Unsupported("lambda with defaults, positional-only, starred or keyword-only parameters")
        return Macro([a.arg for a in node.args.args], node.body, env), TRUE

    def ev_Call(self, node, env):
        if node.keywords:
            raise Unsupported("call with keyword arguments")
        if isinstance(node.func, ast.Attribute):
            recv, ok = self.ev(node.func.value, env)
            args, oks = self._args(node.args, env)
            v, mok = self.method(recv, node.func.attr, args)
            return v, And(ok, *oks, mok)
        fn = node.func
        if isinstance(fn, ast.Name) and fn.id not in env and (fn.id in BUILTIN_FUNCS or fn.id in BUILTIN_TYPES):
            f, okf = Builtin(fn.id), TRUE  # int(x), set(x), len(x) ... (not shadowed by the contract)
        else:
            f, okf = self.ev(fn, env)
        if isinstance(f, TypeV):
            raise Unsupported("call of a computed type")
        if isinstance(f, Builtin) and f.name in ("all", "any", "set", "list", "tuple", "sum", "min", "max",
                                                  "sorted"):
            return self.builtin(f.name, node.args, env)
        args, oks = self._args(node.args, env)
        v, cok = self.call(f, args)
        return v, And(okf, *oks, cok)

    def _args(self, nodes, env):
        vals, oks = [], []
        for a in nodes:
            if isinstance(a, ast.Starred):
                raise Unsupported("starred argument")
            v, ok = self.ev(a, env)
            vals.append(v)
            oks.append(ok)
        return vals, oks

    def call(self, f, args):
        if isinstance(f, Macro):
            if len(args) != len(f.params):
                raise Unsupported("helper called with a different arity")
            if any(isinstance(a, IterV) and not a.materialized for a in args):
                self.approx("a one-shot iterator passed to a helper (the encoding re-iterates it)")
            env = dict(f.env)
            env.update(zip(f.params, args))
            return self.ev(f.body, env)
        if not isinstance(f, Builtin):
            raise Unsupported("call of", type(f).__name__)
        name = f.name
        if name == "isinstance":
            x, t = args
            types = t.types if isinstance(t, TypeSet) else [t]
            if not isinstance(x, Sym) or any(isinstance(u, TypeV) and u.tag is None for u in types):
                self.approx("isinstance() of a non-value or with a type outside the encoding (object, set, ...)")
            if not isinstance(x, Sym):
                return const(False), TRUE
            return bool_sym(isinstance_of(x, t)), TRUE
        if name == "type":
            (x,) = args
            if not isinstance(x, Sym):
                raise Unsupported("type() of a non-value")
            return TypeV(x.tag, x.tags, exact=False), TRUE
        if name == "len":
            (x,) = args
            if isinstance(x, IterV):
                if not x.materialized:
                    return const(0), FALSE  # len(generator) raises TypeError
                return int_sym(self.count(x)), TRUE
            return int_sym(length(x)), tag_in(x, SIZED)
        if name == "abs":
            (x,) = args
            return self._numeric_map(x, lambda i: If(i < 0, -i, i), lambda r: If(r < 0, -r, r)), tag_in(x, NUMERIC)
        if name == "int":
            (x,) = args
            if not x.tags <= NUMERIC:
                self.approx("int() of a non-number not modelled")
            parts = []
            if x.tags & INTEGRAL:
                parts.append((tag_in(x, INTEGRAL), int_value(x)))
            if x.has(FLOAT):  # int() truncates towards zero
                parts.append((is_tag(x, FLOAT), If(x.r >= 0, z3.ToInt(x.r), -z3.ToInt(-x.r))))
            if not parts:
                return const(0), FALSE
            val = parts[-1][1]
            for c, v in reversed(parts[:-1]):
                val = If(c, v, val)
            return int_sym(val), tag_in(x, NUMERIC)
        if name == "float":
            (x,) = args
            text = sstr_value(x.s) if x.tags == {STR} else None
            if text is not None:
                if "inf" in text.lower():
                    self.approx("float('inf') stands for a large number")
                return float_constant(text), TRUE
            if not x.tags <= NUMERIC:
                self.approx("float() of a non-number not modelled")
            if x.tags & INTEGRAL:  # int -> float is exact up to 2**53
                self.approx("float() of a large int rounds",
                            And(tag_in(x, INTEGRAL), Or(int_value(x) > 2**53, int_value(x) < -2**53)))
            return float_sym(real_value(x) if x.tags & NUMERIC else z3.RealVal(0)), tag_in(x, NUMERIC)
        if name == "bool":
            (x,) = args
            return bool_sym(truthy(x)), TRUE
        if name == "zip":
            return self.zip_(args)
        if name == "enumerate":
            (x,) = args
            evs, ok = self.iter_events(x)
            out = []
            k = 0
            for e in evs:
                if isinstance(e, Item):
                    out.append(Item(e.guard, seq_sym(TUPLE, z3.IntVal(2), [const(k), e.value]), e.ok))
                    k += 1
                else:
                    out.append(e)
            return IterV(out, compact=self._compact(x)), ok
        if name == "range":
            return self.range_(args)
        if name == "map":
            fn, x = args
            evs, ok = self.iter_events(x)
            out = []
            for e in evs:
                if isinstance(e, Item):
                    v, vok = self.call(fn, [e.value])
                    out.append(Item(e.guard, v, And(e.ok, vok)))
                else:
                    out.append(e)
            return IterV(out, compact=self._compact(x)), ok
        raise Unsupported("call of builtin", name)

    def builtin(self, name, arg_nodes, env):
        """Builtins that consume an iterable (their argument may be a generator)."""
        if name in ("min", "max") and len(arg_nodes) > 1:
            vals, oks = self._args(arg_nodes, env)
            items = [Item(TRUE, self.as_sym(v, TRUE)[0]) for v in vals]
            v, ok = self.fold_minmax(name, items)
            return v, And(*oks, ok)
        if len(arg_nodes) not in (1, 2) or (len(arg_nodes) == 2 and name != "sum"):
            raise Unsupported(f"{name}() with these arguments")
        it, ok = self.ev(arg_nodes[0], env)
        evs, iok = self.iter_events(it)
        ok = And(ok, iok)
        if name in ("all", "any"):
            return self.all_any(name == "all", evs, ok)
        # The rest consume the whole iterable: every event must evaluate.
        items, mok = materialize(evs)
        ok = And(ok, mok)
        if name in ("list", "tuple"):
            return IterV(items, compact=self._compact(it), materialized=True,
                         tag=LIST if name == "list" else TUPLE), ok
        if name == "set":
            hashable = And(*[Implies(e.guard, Not(tag_in(e.value, UNHASHABLE))) for e in items])
            return IterV(items, compact=False, materialized=True, is_set=True), And(ok, hashable)
        if name == "sorted":
            raise Unsupported("sorted()")
        if name in ("min", "max"):
            v, mok2 = self.fold_minmax(name, items)
            return v, And(ok, mok2)
        if name == "sum":
            start = None
            if len(arg_nodes) == 2:
                start, sok = self.sym(arg_nodes[1], env)
                ok = And(ok, sok)
            return self.sum_(items, start, ok)
        raise Unsupported("builtin", name)  # pragma: no cover

    def all_any(self, is_all: bool, events, ok):
        running = TRUE  # "the loop has not stopped yet"
        reqs = [ok]
        for e in events:
            if isinstance(e, Check):
                reqs.append(Implies(And(running, e.guard), e.cond))
            else:
                reqs.append(Implies(And(running, e.guard), e.ok))
                t = truthy(self.as_sym(e.value, TRUE)[0])
                running = And(running, Implies(e.guard, t if is_all else Not(t)))
        value = running if is_all else Not(running)
        return bool_sym(value), And(*reqs)

    def fold_minmax(self, name, items):
        if any(not e.value.tags <= NUMERIC for e in items if isinstance(e.value, Sym)):
            self.approx("min()/max() of non-numbers not modelled")
        best, seen, oks = None, FALSE, []
        for e in items:
            v = e.value
            oks.append(Implies(e.guard, tag_in(v, NUMERIC)))
            if best is None:
                best = v
            else:
                rv, rb = _real_or_zero(v), _real_or_zero(best)
                better = rv > rb if name == "max" else rv < rb
                best = ite(And(e.guard, Or(Not(seen), better)), v, best)
            seen = Or(seen, e.guard)
        if best is None:
            return const(0), FALSE
        return best, And(seen, *oks)  # max(()) raises ValueError

    def sum_(self, items, start, ok):
        if (start is not None and start.has(FLOAT)) or any(isinstance(e.value, Sym) and e.value.has(FLOAT)
                                                           for e in items):
            self.approx("float arithmetic (CPython rounds, the encoding computes in exact reals)")
        if start is None or (start.tags & NUMERIC and not start.tags & (CONTAINERS | {STR})):
            total_i, total_r, is_float = z3.IntVal(0), z3.RealVal(0), FALSE
            oks = []
            if start is not None:
                oks.append(tag_in(start, NUMERIC))
                total_i = int_value(start) if start.tags & INTEGRAL else z3.IntVal(0)
                total_r = real_value(start)
                is_float = is_tag(start, FLOAT)
            for e in items:
                v = e.value
                oks.append(Implies(e.guard, tag_in(v, NUMERIC)))
                if v.tags & INTEGRAL:
                    total_i = total_i + If(e.guard, int_value(v), z3.IntVal(0))
                if v.tags & NUMERIC:
                    total_r = total_r + If(e.guard, real_value(v), z3.RealVal(0))
                is_float = Or(is_float, And(e.guard, is_tag(v, FLOAT)))
            return ite(is_float, float_sym(total_r), int_sym(total_i)), And(ok, *oks)
        # sum(list_of_lists, []) / sum(tuple_of_tuples, ()): concatenation.
        tag = LIST if start.tags == {LIST} else TUPLE if start.tags == {TUPLE} else None
        if tag is None:
            raise Unsupported("sum() with a non-numeric, non-sequence start")
        out = [Check(TRUE, is_tag(start, tag))]
        for k, it in enumerate(start.items):
            out.append(Item(k < start.n, it))
        for e in items:
            out.append(Check(e.guard, is_tag(e.value, tag)))
            for k, it in enumerate(e.value.items):
                out.append(Item(And(e.guard, is_tag(e.value, tag), k < e.value.n), it))
        items2, mok = materialize(out)
        return IterV(items2, compact=False, materialized=True, tag=tag), And(ok, mok)

    def zip_(self, args):
        if len(args) < 2:
            raise Unsupported("zip() of fewer than two iterables")
        streams, ok = [], TRUE
        for a in args:
            if not self._compact(a):
                raise Unsupported("zip() over a filtered iterable")
            evs, iok = self.iter_events(a)
            ok = And(ok, iok)
            checks = [e for e in evs if isinstance(e, Check)]
            for c in checks:
                ok = And(ok, Implies(c.guard, c.cond))
            streams.append([e for e in evs if isinstance(e, Item)])
        out = []
        for k in range(min(len(s) for s in streams)):
            es = [s[k] for s in streams]
            out.append(Item(And(*[e.guard for e in es]), seq_sym(TUPLE, z3.IntVal(len(es)), [e.value for e in es]),
                            And(*[e.ok for e in es])))
        return IterV(out, compact=True), ok

    def range_(self, args):
        syms = [a for a in args]
        if not all(isinstance(a, Sym) for a in syms) or not 1 <= len(syms) <= 2:
            raise Unsupported("range() with these arguments")
        ok = And(*[tag_in(a, INTEGRAL) for a in syms])
        lo = int_value(syms[0]) if len(syms) == 2 and syms[0].tags & INTEGRAL else z3.IntVal(0)
        hi_s = syms[-1]
        hi = int_value(hi_s) if hi_s.tags & INTEGRAL else z3.IntVal(0)
        lo_c, hi_c = z3.simplify(lo), z3.simplify(hi)
        if z3.is_int_value(lo_c) and z3.is_int_value(hi_c) and hi_c.as_long() - lo_c.as_long() <= 64:
            items = [Item(TRUE, const(k)) for k in range(lo_c.as_long(), hi_c.as_long())]
            return IterV(items, compact=True), ok
        # symbolic bounds: unroll a bounded number of steps, longer ranges are not modelled
        items = [Item(lo + k < hi, int_sym(lo + k)) for k in range(RANGE_SLOTS)]
        self.approx(f"range() longer than {RANGE_SLOTS} not modelled", hi - lo > RANGE_SLOTS)
        return IterV(items, compact=True), And(ok, hi - lo <= RANGE_SLOTS)

    def method(self, recv, name, args):
        if isinstance(recv, IterV) and recv.is_set:
            if name in ("issubset", "issuperset") and len(args) == 1:
                other = args[0]
                if isinstance(other, Sym):
                    evs, ok = self.iter_events(other)
                    items, mok = materialize(evs)
                    other = IterV(items, compact=False, materialized=True, is_set=True)
                    ok = And(ok, mok)
                else:
                    ok = TRUE
                a, b = (recv, other) if name == "issubset" else (other, recv)
                v, sok = self.subset(a, b)
                return bool_sym(v), And(ok, sok)
            raise Unsupported("set method", name)
        if not isinstance(recv, Sym):
            raise Unsupported("method call on", type(recv).__name__)
        if name in STR_PREDICATES and not args:
            if not recv.has(STR):
                return const(False), FALSE
            return bool_sym(STR_PREDICATES[name](recv.s)), is_tag(recv, STR)
        if name in ("startswith", "endswith") and len(args) == 1 and isinstance(args[0], Sym):
            a = args[0]
            if not a.tags <= {STR}:
                self.approx(f"{name}() of a tuple not modelled")
            if not (recv.has(STR) and a.has(STR)):
                return const(False), FALSE
            f = sstr_prefix if name == "startswith" else sstr_suffix
            return bool_sym(f(recv.s, a.s)), And(is_tag(recv, STR), is_tag(a, STR))
        if name in ("keys", "values", "items") and not args:
            if not recv.has(DICT):
                return const(0), FALSE
            out = []
            for k, (key, val) in enumerate(zip(recv.items, recv.vals)):
                v = key if name == "keys" else val if name == "values" else seq_sym(TUPLE, z3.IntVal(2), [key, val])
                out.append(Item(k < recv.n, v))
            return IterV(out, compact=True), is_tag(recv, DICT)
        if name == "split" and len(args) == 1:
            return self.split(recv, args[0])
        if name in ("lower", "upper") and not args:
            return self.case_map(recv, name)
        raise Unsupported("method", name)

    def split(self, recv: Sym, sep: Sym):
        """``s.split(sep)`` for a constant one-character separator.

        Piece ``j`` runs from just after the ``j``-th separator to the next one;
        separator positions are found by counting separators before each index.
        """
        sc = sstr_value(sep.s) if sep.tags == {STR} else None
        if sc is None or len(sc) != 1:
            raise Unsupported("split() with a separator other than one constant character")
        if not recv.has(STR):
            return const(0), FALSE
        s, code = recv.s, ord(sc)
        is_sep = [And(k < s.n, c == code) for k, c in enumerate(s.cs)]
        before = []  # separators strictly before index k
        acc = z3.IntVal(0)
        for k in range(s.cap):
            before.append(acc)
            acc = acc + If(is_sep[k], z3.IntVal(1), z3.IntVal(0))
        n_sep = acc
        # position of the j-th separator (0-based), or len(s) when there is none
        pos = []
        for j in range(s.cap + 1):
            p = s.n
            for k in range(s.cap - 1, -1, -1):
                p = If(And(is_sep[k], before[k] == j), z3.IntVal(k), p)
            pos.append(p)
        pieces = []
        for j in range(s.cap + 1):
            start = z3.IntVal(0) if j == 0 else pos[j - 1] + 1
            end = pos[j] if j < s.cap else s.n
            pieces.append(str_sym(sstr_sub(s, start, end - start)))
        return seq_sym(LIST, n_sep + 1, pieces), is_tag(recv, STR)

    def case_map(self, recv: Sym, name: str):
        """``s.lower()`` / ``s.upper()`` (ASCII letters; input strings are ASCII)."""
        if not recv.has(STR):
            return const(0), FALSE
        lo, hi, delta = ("A", "Z", 32) if name == "lower" else ("a", "z", -32)
        cs = [If(And(c >= ord(lo), c <= ord(hi)), c + delta, c) for c in recv.s.cs]
        return str_sym(SStr(recv.s.n, cs)), is_tag(recv, STR)

    # comprehensions -----------------------------------------------------
    def ev_GeneratorExp(self, node, env):
        return IterV(self.comp_events(node.generators, 0, node.elt, env, TRUE), compact=self._gen_compact(node)), TRUE

    def ev_ListComp(self, node, env):
        evs = self.comp_events(node.generators, 0, node.elt, env, TRUE)
        items, ok = materialize(evs)
        return IterV(items, compact=self._gen_compact(node), materialized=True), ok

    def ev_SetComp(self, node, env):
        evs = self.comp_events(node.generators, 0, node.elt, env, TRUE)
        items, ok = materialize(evs)
        hashable = And(*[Implies(e.guard, Not(tag_in(e.value, UNHASHABLE))) for e in items])
        return IterV(items, compact=False, materialized=True, is_set=True), And(ok, hashable)

    def _gen_compact(self, node) -> bool:
        return len(node.generators) == 1 and not node.generators[0].ifs

    def comp_events(self, gens, idx, elt, env, guard):
        if idx == len(gens):
            v, ok = self.ev(elt, env)
            if isinstance(v, IterV) and not v.materialized:
                raise Unsupported("generator yielding generators")
            return [Item(guard, v, ok)]
        g = gens[idx]
        if g.is_async:
            raise Unsupported("async comprehension")
        it, ok = self.ev(g.iter, env)
        events = [Check(guard, ok)]
        evs, iok = self.iter_events(it)
        events.append(Check(guard, iok))
        for e in evs:
            if isinstance(e, Check):
                events.append(Check(And(guard, e.guard), e.cond))
                continue
            gg = And(guard, e.guard)
            events.append(Check(gg, e.ok))
            env2 = dict(env)
            uok = self.bind(g.target, e.value, env2)
            events.append(Check(gg, uok))
            for cond in g.ifs:
                cv, cok = self.sym(cond, env2)
                events.append(Check(gg, cok))
                gg = And(gg, truthy(cv))
            events.extend(self.comp_events(gens, idx + 1, elt, env2, gg))
        return events

    def bind(self, target, value, env):
        """Assign ``value`` to a comprehension target; returns the unpacking condition."""
        if isinstance(target, ast.Name):
            env[target.id] = value
            return TRUE
        if isinstance(target, (ast.Tuple, ast.List)):
            if not isinstance(value, Sym):
                raise Unsupported("unpacking a non-value")
            m = len(target.elts)
            if any(isinstance(t, ast.Starred) for t in target.elts):
                raise Unsupported("starred unpacking")
            if value.has(DICT):
                self.approx("unpacking a dict not modelled")
            if m > len(value.items) and not value.has(STR):
                return FALSE
            ok = And(tag_in(value, SEQUENCES), value.n == m) if value.tags & SEQUENCES else FALSE
            strs = And(is_tag(value, STR), value.s.n == m) if value.has(STR) else FALSE
            for k, t in enumerate(target.elts):
                parts = []
                if value.tags & SEQUENCES and k < len(value.items):
                    parts.append((tag_in(value, SEQUENCES), value.items[k]))
                if value.has(STR):
                    parts.append((is_tag(value, STR), str_sym(sstr_char(value.s, z3.IntVal(k)))))
                sub, _ = _cases(parts)
                sub_ok = self.bind(t, sub, env)
                ok = And(Or(ok, strs), sub_ok) if k == 0 else And(ok, sub_ok)
            return Or(ok, strs) if m == 0 else ok
        raise Unsupported("comprehension target", type(target).__name__)

    def iter_events(self, it):
        """Events of ``for x in it`` and the condition that ``iter(it)`` succeeds."""
        if isinstance(it, IterV):
            return it.events, TRUE
        if not isinstance(it, Sym):
            raise Unsupported("iteration over", type(it).__name__)
        cap = it.s.cap if it.has(STR) else 0
        slots = max(len(it.items), cap)
        ok_parts = []
        if it.tags & CONTAINERS:
            ok_parts.append(tag_in(it, CONTAINERS))
        if it.has(STR):
            ok_parts.append(is_tag(it, STR))
        events = []
        for k in range(slots):
            parts = []
            if it.tags & CONTAINERS and k < len(it.items):
                parts.append((And(tag_in(it, CONTAINERS), k < it.n), it.items[k]))
            if it.has(STR) and k < cap:
                parts.append((And(is_tag(it, STR), k < it.s.n), str_sym(SStr(z3.IntVal(1), [it.s.cs[k]]))))
            if not parts:
                continue
            guard = Or(*[c for c, _ in parts])
            val = parts[-1][1]
            for c, v in reversed(parts[:-1]):
                val = ite(c, v, val)
            events.append(Item(guard, val))
        return events, Or(*ok_parts)

    def _compact(self, it) -> bool:
        return it.compact if isinstance(it, IterV) else True

    def count(self, it: IterV):
        items = [e for e in it.events if isinstance(e, Item)]
        if not it.is_set:
            return _sum_if([e.guard for e in items])
        # distinct elements: count an element when no earlier live element equals it
        flags = []
        for k, e in enumerate(items):
            dup = Or(*[And(p.guard, self._equal(p.value, e.value)[0]) for p in items[:k]])
            flags.append(And(e.guard, Not(dup)))
        return _sum_if(flags)

    def compact(self, it: IterV) -> Sym:
        """A materialized iterable as a list/tuple value with ``n`` live slots."""
        items = [e for e in it.events if isinstance(e, Item)]
        vals = [self.as_sym(e.value, TRUE)[0] for e in items]
        n = _sum_if([e.guard for e in items])
        if it.compact:
            return seq_sym(it.tag, n, vals)
        out = []
        for j in range(len(items)):
            chosen = None
            for k in range(len(items) - 1, j - 1, -1):
                pos = _sum_if([e.guard for e in items[:k]])
                c = And(items[k].guard, pos == j)
                chosen = vals[k] if chosen is None else ite(c, vals[k], chosen)
            out.append(chosen)
        return seq_sym(it.tag, n, out)

    # statements -----------------------------------------------------------
    def translate_block(self, stmts: Sequence[ast.stmt], env: dict, names: list, texts: list) -> list:
        """Translate contract statements; returns AssertModels in source order.

        ``names`` is consumed in order (``assert_0`` ...); statements before an
        assert contribute their own evaluation condition to its ``ok`` because
        they also run when that assert runs alone.
        """
        out: list[AssertModel] = []
        pending = TRUE
        for st in stmts:
            if isinstance(st, ast.Assert):
                if st.msg is not None and not isinstance(st.msg, ast.Constant):
                    self.approx("an assert message that is evaluated (it may raise instead)")
                out.append(self._assert(st, env, names[len(out)], texts[len(out)], pending))
            elif isinstance(st, ast.Assign) and len(st.targets) == 1:
                try:
                    v, ok = self.ev(st.value, env)
                    if isinstance(v, IterV) and not v.materialized:
                        self.approx("a one-shot iterator bound to a name (the encoding re-iterates it)")
                    if isinstance(st.targets[0], ast.Name):
                        env[st.targets[0].id] = v
                    else:
                        vs = self.as_sym(v, ok)[0]
                        ok = And(ok, self.bind(st.targets[0], vs, env))
                    pending = And(pending, ok)
                except Unsupported as exc:
                    self.approx(f"statement not modelled: {exc}")
                    for n in _assigned_names(st):
                        env[n] = Poison(str(exc))
            elif isinstance(st, ast.FunctionDef):
                body = [b for b in st.body if not (isinstance(b, ast.Expr) and isinstance(b.value, ast.Constant))]
                args = st.args
                if (len(body) == 1 and isinstance(body[0], ast.Return) and body[0].value is not None
                        and not args.vararg and not args.kwarg and not args.kwonlyargs and not args.defaults):
                    env[st.name] = Macro([a.arg for a in args.args], body[0].value, env)
                else:
                    env[st.name] = Poison(f"helper function {st.name}() is not a single return")
                if (st.decorator_list or args.posonlyargs or st.returns is not None
                        or any(a.annotation is not None for a in args.args)
                        or isinstance(env[st.name], Poison)):
                    # decorators, annotations and defaults run when the def does
                    self.approx(f"def {st.name}() not modelled (decorators, annotations, defaults or body)")
            elif isinstance(st, ast.For) and _only_asserts(st):
                # for x in xs: assert p(x)   ==   assert all(p(x) for x in xs)
                n_inner = sum(isinstance(n, ast.Assert) for n in ast.walk(st))
                if n_inner != 1:
                    out.extend(self._unsupported_asserts(st, names, texts, len(out), "several asserts in a loop"))
                    continue
                gen = _loop_as_all(st)
                out.append(self._assert(gen, env, names[len(out)], texts[len(out)], pending))
                for n in _assigned_names(st):  # the loop leaves its target bound to the last element
                    env[n] = Poison("a loop variable after its loop")
            elif isinstance(st, ast.Expr) and isinstance(st.value, ast.Constant):
                continue
            else:
                kind = type(st).__name__
                self.approx(f"a {kind} statement not modelled")
                for n in _assigned_names(st):
                    env[n] = Poison(f"assigned in a {kind} statement")
                out.extend(self._unsupported_asserts(st, names, texts, len(out), f"assert inside a {kind} statement"))
        self.tail_ok = pending
        return out

    def _unsupported_asserts(self, st, names, texts, start, category):
        res = []
        for n in ast.walk(st):
            if isinstance(n, ast.Assert):
                k = start + len(res)
                res.append(AssertModel(names[k], texts[k], error=Unsupported(category)))
        return res

    def _assert(self, st: ast.Assert, env, name, text, pending) -> AssertModel:
        model = AssertModel(name, text, params=frozenset(_free_names(st.test)))
        try:
            v, ok = self.ev(st.test, env)
            if isinstance(v, (TypeV, TypeSet, Builtin, Macro)) or (isinstance(v, IterV) and not v.materialized):
                model.value, model.ok = TRUE, And(pending, ok)
            else:
                v, ok = self.as_sym(v, ok)
                model.value, model.ok = truthy(v), And(pending, ok)
        except Unsupported as exc:
            model.error = exc
        except (z3.Z3Exception, ValueError, TypeError, IndexError, AttributeError, RecursionError) as exc:
            model.error = Unsupported("translation error", f"{type(exc).__name__}: {exc}")
        return model


def _between(lo: str, hi: str):
    return lambda c: And(c >= ord(lo), c <= ord(hi))


_DIGIT = _between("0", "9")
_UPPER = _between("A", "Z")
_LOWER = _between("a", "z")
_SPACE = lambda c: Or(*[c == ord(x) for x in " \t\n\r\x0b\x0c"])  # noqa: E731

#: CPython's str predicates, exact for ASCII (input strings are printable ASCII).
STR_PREDICATES = {
    "isdigit": lambda s: sstr_all_chars(s, _DIGIT),
    "isnumeric": lambda s: sstr_all_chars(s, _DIGIT),
    "isdecimal": lambda s: sstr_all_chars(s, _DIGIT),
    "isalpha": lambda s: sstr_all_chars(s, lambda c: Or(_UPPER(c), _LOWER(c))),
    "isalnum": lambda s: sstr_all_chars(s, lambda c: Or(_UPPER(c), _LOWER(c), _DIGIT(c))),
    "isspace": lambda s: sstr_all_chars(s, _SPACE),
    # at least one cased character and none of the other case
    "isupper": lambda s: And(sstr_any_char(s, _UPPER), sstr_all_chars(s, lambda c: Not(_LOWER(c)), False)),
    "islower": lambda s: And(sstr_any_char(s, _LOWER), sstr_all_chars(s, lambda c: Not(_UPPER(c)), False)),
}


def _str_order(op, a: SStr, b: SStr):
    if isinstance(op, ast.Lt):
        return sstr_less(a, b, False)
    if isinstance(op, ast.LtE):
        return sstr_less(a, b, True)
    if isinstance(op, ast.Gt):
        return sstr_less(b, a, False)
    if isinstance(op, ast.GtE):
        return sstr_less(b, a, True)
    raise Unsupported("comparison operator", type(op).__name__)


def _order(op, x, y):
    if isinstance(op, ast.Lt):
        return x < y
    if isinstance(op, ast.LtE):
        return x <= y
    if isinstance(op, ast.Gt):
        return x > y
    if isinstance(op, ast.GtE):
        return x >= y
    raise Unsupported("comparison operator", type(op).__name__)


def _is_false(e) -> bool:
    return isinstance(e, z3.BoolRef) and z3.is_false(e)


def _real_or_zero(v: Sym):
    return real_value(v) if v.tags & NUMERIC else z3.RealVal(0)


def _max(a, b):
    return If(a >= b, a, b)


def _min(a, b):
    return If(a <= b, a, b)


def _sum_if(conds):
    out = z3.IntVal(0)
    for c in conds:
        out = out + If(c, z3.IntVal(1), z3.IntVal(0))
    return out


def _cases(cases):
    cases = [(c, v) for c, v in cases if not _is_false(c)]
    if not cases:
        return const(0), FALSE
    res = cases[-1][1]
    for c, v in reversed(cases[:-1]):
        res = ite(c, v, res)
    return res, Or(*[c for c, _ in cases])


#: Stand-in for ``float("inf")``: input numbers are bounded by ``Bounds.max_int``
#: and contracts do little arithmetic, so every comparison with it comes out as
#: with infinity.
INFINITY = 10**30


def float_constant(text: str) -> Sym:
    """``float("<literal>")``: a number, or +-inf (see :data:`INFINITY`)."""
    t = text.strip().lower()
    if t in ("inf", "+inf", "infinity", "+infinity"):
        return float_sym(z3.RealVal(INFINITY))
    if t in ("-inf", "-infinity"):
        return float_sym(z3.RealVal(-INFINITY))
    try:
        value = float(t)
    except ValueError:
        raise Unsupported("float() of a non-numeric string constant", repr(text)) from None
    if value != value:
        raise Unsupported("float('nan')")
    return const(value)


def py_mod(x, y):
    """CPython's ``x % y`` for ints: the result has the sign of ``y``."""
    r = x % y  # z3: 0 <= r < |y|
    return If(y > 0, r, If(r == 0, r, r + y))


def py_floordiv(x, y):
    return z3.ToInt(z3.ToReal(x) / z3.ToReal(y))


def type_equal(a: TypeV, b: TypeV):
    if a.tag is None or b.tag is None:
        return FALSE  # a type outside the ADT equals no ADT type
    return a.tag == b.tag


def isinstance_of(x: Sym, t) -> Any:
    """``isinstance(x, t)``; bool counts as int (CPython subclassing)."""
    if isinstance(t, TypeSet):
        return Or(*[isinstance_of(x, u) for u in t.types])
    if isinstance(t, Sym) and t.tags <= {LIST, TUPLE}:
        raise Unsupported("isinstance() with a computed tuple of types")
    if not isinstance(t, TypeV):
        raise Unsupported("isinstance() second argument")
    if t.tag is None:
        return FALSE
    if t.exact:
        tt = z3.simplify(t.tag).as_long()
        return tag_in(x, {tt, BOOL} if tt == INT else {tt})
    return Or(x.tag == t.tag, And(t.tag == INT, is_tag(x, BOOL)))


def materialize(events):
    """Evaluate every event (a list/set is built eagerly): items and the condition."""
    items, oks = [], []
    for e in events:
        if isinstance(e, Check):
            oks.append(Implies(e.guard, e.cond))
        else:
            oks.append(Implies(e.guard, e.ok))
            items.append(Item(e.guard, e.value))
    return items, And(*oks)


def _assigned_names(st) -> list:
    return [n.id for n in ast.walk(st) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)]


def _free_names(node) -> set:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def _only_asserts(st: ast.For) -> bool:
    if st.orelse:
        return False
    for b in st.body:
        if isinstance(b, ast.Assert):
            continue
        if isinstance(b, ast.For) and _only_asserts(b):
            continue
        return False
    return True


def _loop_as_all(st: ast.For) -> ast.Assert:
    gens = []
    node = st
    while isinstance(node, ast.For):
        gens.append(ast.comprehension(target=node.target, iter=node.iter, ifs=[], is_async=0))
        node = node.body[0]
    assert isinstance(node, ast.Assert)
    call = ast.Call(func=ast.Name("all", ast.Load()), args=[ast.GeneratorExp(elt=node.test, generators=gens)],
                    keywords=[])
    return ast.Assert(test=ast.copy_location(call, node.test), msg=None)


# ---------------------------------------------------------------- entry point
def parse_contract_block(contract: str) -> list[ast.stmt]:
    """Parse the evalplus ``contract`` field (indented ``assert ... # $_CONTRACT_$`` lines)."""
    src = textwrap.dedent(contract.strip("\n"))
    return ast.parse(src).body


def count_asserts(stmts) -> int:
    return sum(isinstance(n, ast.Assert) for st in stmts for n in ast.walk(st))


def translate_contract(contract: str, params: Sequence[str], assert_names: Sequence[str],
                       bounds: Bounds | None = None, assert_texts: Sequence[str] | None = None) -> ContractModel:
    """Translate a task's contract block over fresh symbolic parameters.

    Raises :class:`SyntaxError` when the block does not parse and
    :class:`ValueError` when its assert count differs from ``assert_names``.
    """
    bounds = bounds or Bounds()
    stmts = parse_contract_block(contract)
    if count_asserts(stmts) != len(assert_names):
        raise ValueError(f"contract block has {count_asserts(stmts)} asserts, the task lists {len(assert_names)}")
    inputs = Inputs(bounds)
    syms = {p: inputs.fresh(p) for p in params}
    tr = Translator(inputs, bounds)
    env = dict(syms)
    texts = list(assert_texts) if assert_texts is not None else [""] * len(assert_names)
    asserts = tr.translate_block(stmts, env, list(assert_names), texts)
    # keep only parameter names in each assert's read set (helpers and locals resolved loosely)
    for a in asserts:
        a.params = frozenset(x for x in a.params if x in syms) or frozenset(syms)
    return ContractModel(syms, inputs, asserts, tr.axioms)
