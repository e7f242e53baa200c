"""A bounded algebraic data type of Python values, encoded in z3.

ContractEval (§3.2, Appendix G) has an LLM translate each ``assert`` into
SMT-LIB over an ADT of Python values.  We build the same kind of encoding
directly, without a model, and keep it *quantifier-free* so that z3 answers in
milliseconds: a symbolic value is a record of z3 terms

* ``tag``    which Python type the value has (``NONE`` ... ``DICT``),
* ``b``/``i``/``r``/``s``  the payload for ``bool``/``int``/``float``/``str``
  (``s`` is an :class:`SStr`),
* ``n``      the length of a ``list``/``tuple``/``dict``,
* ``items``  a fixed number of element slots (dict: key slots) and ``vals``
  (dict value slots); only the first ``n`` slots are live.

Containers therefore have bounded length and bounded nesting depth, which is
what makes every ``all(...)``/``any(...)`` a finite conjunction/disjunction.

Python semantics kept on purpose:

* ``bool`` is a subclass of ``int``: ``isinstance(True, int)`` holds, bools
  take part in arithmetic and compare equal to ``0``/``1``; ``type(True) == int``
  does not hold.
* ``float`` payloads of *input* values are dyadic rationals ``k / 4`` so that
  the z3 model decodes to a Python float exactly (no rounding on decode).
* strings are bounded arrays of character codes (:class:`SStr`), input strings
  printable ASCII: ``isdigit``, ``isupper`` ... are then exact per-character
  integer constraints, and everything stays in linear integer arithmetic, which
  z3 decides far faster than its string theory.

Every symbolic value also carries ``tags``, the *static* set of types it may
have; operations use it to avoid building disjuncts that can never hold.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from itertools import zip_longest
from typing import Any, Iterable, Sequence

import z3

NONE, BOOL, INT, FLOAT, STR, LIST, TUPLE, DICT = range(8)
TAG_NAMES = {NONE: "NoneType", BOOL: "bool", INT: "int", FLOAT: "float", STR: "str",
             LIST: "list", TUPLE: "tuple", DICT: "dict"}
PY_TYPES = {NONE: type(None), BOOL: bool, INT: int, FLOAT: float, STR: str, LIST: list,
            TUPLE: tuple, DICT: dict}
ALL_TAGS = frozenset(range(8))
NUMERIC = frozenset({BOOL, INT, FLOAT})
INTEGRAL = frozenset({BOOL, INT})
SEQUENCES = frozenset({LIST, TUPLE})
CONTAINERS = frozenset({LIST, TUPLE, DICT})
SIZED = frozenset({STR, LIST, TUPLE, DICT})
UNHASHABLE = frozenset({LIST, DICT})

#: Denominator of input floats: every decoded float is ``k / FLOAT_DENOMINATOR``.
FLOAT_DENOMINATOR = 4


@dataclass(frozen=True)
class Bounds:
    """Size limits of the symbolic inputs (the search space of the solver).

    ``slots`` gives the element slots per nesting level (``slots[0]`` for a
    parameter, ``slots[1]`` for its elements); its length is the nesting depth.
    The *small* limits are tried first (as solver assumptions): small values make
    readable test cases and keep the reference program fast.
    """

    slots: tuple[int, ...] = (4, 3)
    max_str: int = 6
    max_int: int = 10**6
    small_int: int = 20
    small_str: int = 3
    small_len: int = 3
    allow_tuples: bool = False  # tuples do not survive the JSON output format

    @property
    def depth(self) -> int:
        return len(self.slots)


class Unsupported(Exception):
    """An assert uses Python outside the translated subset.

    ``category`` is a short stable label for the summary ("call to helper
    function", "assert inside loop", ...); ``str(exc)`` says what exactly.
    """

    def __init__(self, category: str, detail: str = ""):
        super().__init__(f"{category}: {detail}" if detail else category)
        self.category = category
        self.detail = detail


def _is_true(e) -> bool:
    return e is True or (isinstance(e, z3.BoolRef) and z3.is_true(e))


def _is_false(e) -> bool:
    return e is False or (isinstance(e, z3.BoolRef) and z3.is_false(e))


def And(*args) -> z3.BoolRef:
    """``z3.And`` that drops ``True`` and short-cuts ``False`` (smaller formulas)."""
    out = []
    for a in args:
        if _is_true(a):
            continue
        if _is_false(a):
            return z3.BoolVal(False)
        out.append(a)
    if not out:
        return z3.BoolVal(True)
    return out[0] if len(out) == 1 else z3.And(*out)


def Or(*args) -> z3.BoolRef:
    out = []
    for a in args:
        if _is_false(a):
            continue
        if _is_true(a):
            return z3.BoolVal(True)
        out.append(a)
    if not out:
        return z3.BoolVal(False)
    return out[0] if len(out) == 1 else z3.Or(*out)


def Not(a) -> z3.BoolRef:
    if _is_true(a):
        return z3.BoolVal(False)
    if _is_false(a):
        return z3.BoolVal(True)
    return z3.Not(a)


def Implies(a, b) -> z3.BoolRef:
    if _is_true(a):
        return b if not isinstance(b, bool) else z3.BoolVal(b)
    if _is_false(a) or _is_true(b):
        return z3.BoolVal(True)
    return z3.Implies(a, b)


def If(c, a, b):
    if _is_true(c):
        return a
    if _is_false(c):
        return b
    if a is b or (z3.is_expr(a) and z3.is_expr(b) and a.eq(b)):
        return a
    return z3.If(c, a, b)


class SStr:
    """A symbolic string: length ``n`` and character codes ``cs`` (capacity ``len(cs)``).

    Only the first ``n`` codes are meaningful; ``n <= len(cs)`` always holds.
    """

    __slots__ = ("n", "cs")

    def __init__(self, n, cs):
        self.n = n
        self.cs = tuple(cs)

    @property
    def cap(self) -> int:
        return len(self.cs)


def sstr_const(text: str) -> SStr:
    return SStr(z3.IntVal(len(text)), [z3.IntVal(ord(c)) for c in text])


def sstr_value(s: SStr):
    """The Python string of a constant :class:`SStr`, or ``None`` if symbolic."""
    n = z3.simplify(s.n)
    if not z3.is_int_value(n):
        return None
    codes = [z3.simplify(c) for c in s.cs[: n.as_long()]]
    if not all(z3.is_int_value(c) for c in codes):
        return None
    return "".join(chr(c.as_long()) for c in codes)


def select_int(cs, idx):
    """``cs[idx]`` for a symbolic index into a tuple of int terms."""
    if not cs:
        return z3.IntVal(0)
    out = cs[-1]
    for k in range(len(cs) - 2, -1, -1):
        out = If(idx == k, cs[k], out)
    return out


def sstr_ite(c, a: SStr, b: SStr) -> SStr:
    cs = [x if y is None else y if x is None else If(c, x, y) for x, y in zip_longest(a.cs, b.cs)]
    return SStr(If(c, a.n, b.n), cs)


def sstr_eq(a: SStr, b: SStr):
    parts = [a.n == b.n]
    for k, (x, y) in enumerate(zip(a.cs, b.cs)):
        parts.append(Implies(k < a.n, x == y))
    return And(*parts)


def sstr_char(a: SStr, j) -> SStr:
    return SStr(z3.IntVal(1), [select_int(a.cs, j)])


def sstr_sub(a: SStr, start, cnt) -> SStr:
    """``a[start:start+cnt]`` for in-range ``start``/``cnt``."""
    return SStr(cnt, [select_int(a.cs, start + k) for k in range(a.cap)])


def sstr_concat(a: SStr, b: SStr) -> SStr:
    cs = []
    for k in range(a.cap + b.cap):
        from_b = select_int(b.cs, k - a.n) if b.cs else z3.IntVal(0)
        cs.append(If(k < a.n, a.cs[k], from_b) if k < a.cap else from_b)
    return SStr(a.n + b.n, cs)


def sstr_contains(hay: SStr, needle: SStr):
    """Python ``needle in hay`` (substring test; ``"" in s`` holds)."""
    hits = []
    for p in range(hay.cap + 1):
        parts = [p + needle.n <= hay.n]
        for k in range(needle.cap):
            if p + k < hay.cap:
                parts.append(Implies(k < needle.n, hay.cs[p + k] == needle.cs[k]))
            else:
                parts.append(k >= needle.n)
        hits.append(And(*parts))
    return Or(*hits)


def sstr_prefix(hay: SStr, pre: SStr):
    parts = [pre.n <= hay.n]
    for k in range(pre.cap):
        parts.append(Implies(k < pre.n, hay.cs[k] == pre.cs[k]) if k < hay.cap else k >= pre.n)
    return And(*parts)


def sstr_suffix(hay: SStr, suf: SStr):
    parts = [suf.n <= hay.n]
    for k in range(suf.cap):
        parts.append(Implies(k < suf.n, select_int(hay.cs, hay.n - suf.n + k) == suf.cs[k]))
    return And(*parts)


def sstr_less(a: SStr, b: SStr, or_equal: bool):
    """Lexicographic ``a < b`` (or ``<=``) by code point, as CPython compares str."""
    result = Or(And(a.n == b.n, sstr_eq(a, b))) if or_equal else z3.BoolVal(False)
    same = z3.BoolVal(True)  # a[:k] == b[:k]
    for k in range(max(a.cap, b.cap) + 1):
        ak = a.cs[k] if k < a.cap else None
        bk = b.cs[k] if k < b.cap else None
        # a ends at k while b goes on
        result = Or(result, And(same, a.n == k, b.n > k))
        if ak is not None and bk is not None:
            result = Or(result, And(same, a.n > k, b.n > k, ak < bk))
            same = And(same, Or(a.n <= k, b.n <= k, ak == bk))
        else:
            break
    return result


def sstr_all_chars(a: SStr, pred, nonempty: bool = True):
    parts = [a.n > 0] if nonempty else []
    for k, c in enumerate(a.cs):
        parts.append(Implies(k < a.n, pred(c)))
    return And(*parts)


def sstr_any_char(a: SStr, pred):
    return Or(*[And(k < a.n, pred(c)) for k, c in enumerate(a.cs)])


@dataclass(eq=False)
class Sym:
    """A symbolic Python value (see the module docstring for the fields)."""

    tag: Any
    tags: frozenset
    b: Any = None
    i: Any = None
    r: Any = None
    s: Any = None
    n: Any = None
    items: tuple = ()
    vals: tuple = ()
    name: str = ""  # a readable path (``nums[2]``) for input values

    def has(self, t: int) -> bool:
        return t in self.tags


def is_tag(v: Sym, t: int):
    """The z3 condition "``v`` has type tag ``t``" (folded when known statically)."""
    if t not in v.tags:
        return z3.BoolVal(False)
    if v.tags == {t}:
        return z3.BoolVal(True)
    return v.tag == t


def tag_in(v: Sym, ts: Iterable[int]):
    ts = frozenset(ts)
    if v.tags <= ts:
        return z3.BoolVal(True)
    return Or(*[v.tag == t for t in sorted(v.tags & ts)])


# ---------------------------------------------------------------- constructors
def const(value: Any) -> Sym:
    """A concrete Python value as a symbolic value."""
    if value is None:
        return Sym(z3.IntVal(NONE), frozenset({NONE}))
    if isinstance(value, bool):
        return Sym(z3.IntVal(BOOL), frozenset({BOOL}), b=z3.BoolVal(value))
    if isinstance(value, int):
        return Sym(z3.IntVal(INT), frozenset({INT}), i=z3.IntVal(value))
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            raise Unsupported("non-finite float constant", repr(value))
        return Sym(z3.IntVal(FLOAT), frozenset({FLOAT}), r=z3.RealVal(Fraction(value)))
    if isinstance(value, str):
        return Sym(z3.IntVal(STR), frozenset({STR}), s=sstr_const(value))
    if isinstance(value, (list, tuple)):
        tag = LIST if isinstance(value, list) else TUPLE
        return Sym(z3.IntVal(tag), frozenset({tag}), n=z3.IntVal(len(value)),
                   items=tuple(const(x) for x in value))
    if isinstance(value, dict):
        return Sym(z3.IntVal(DICT), frozenset({DICT}), n=z3.IntVal(len(value)),
                   items=tuple(const(k) for k in value), vals=tuple(const(v) for v in value.values()))
    raise Unsupported("constant of unsupported type", type(value).__name__)


def bool_sym(e) -> Sym:
    return Sym(z3.IntVal(BOOL), frozenset({BOOL}), b=e)


def int_sym(e) -> Sym:
    return Sym(z3.IntVal(INT), frozenset({INT}), i=e)


def float_sym(e) -> Sym:
    return Sym(z3.IntVal(FLOAT), frozenset({FLOAT}), r=e)


def str_sym(e) -> Sym:
    return Sym(z3.IntVal(STR), frozenset({STR}), s=e)


def seq_sym(tag: int, n, items: Sequence[Sym]) -> Sym:
    return Sym(z3.IntVal(tag), frozenset({tag}), n=n, items=tuple(items))


class Inputs:
    """Factory of fresh symbolic inputs; collects their domain constraints.

    ``domain`` must always hold (it defines the search space); ``small`` holds
    under the "small values first" assumption (see :class:`Bounds`).
    """

    def __init__(self, bounds: Bounds):
        self.bounds = bounds
        self.domain: list = []
        self.small: list = []
        # "natural" values: no None, bool or dict anywhere.  Tried first because
        # a contract-violating input of a common type (a float for an int, a
        # str for a list) is the one a reference without contract can still run.
        self.natural: list = []
        # Steering sets of the counterexample-guided search (see solve.STEERS): each
        # holds under one assumption literal and is dropped when it conflicts.
        self.nonneg: list = []  # numbers >= 0 (many references index or range() by them)
        self.negative: list = []  # numbers < 0 (references that return early on them)
        self.tiny: list = []  # ints 0..2, strings and containers of at most 2 items
        self.numeric_leaves: list = []  # container elements are int or float
        self.no_floats: list = []  # numbers are ints (an out-of-range int before a float)
        self.strings: list = []  # (is-str condition, length, codes): for alphabet steering
        self._count = 0

    def fresh(self, name: str, level: int = 0, tags: frozenset | None = None,
              elements: tuple | None = None) -> Sym:
        """A fresh symbolic input.  ``tags`` narrows its types; ``elements``
        narrows its elements' the same way, as a pair ``(tags, elements)``
        (e.g. from a type hint: ``List[int]`` is ``({LIST}, ({INT}, None))``)."""
        return self._build(name, level, tags, elements, _Terms())

    def _build(self, name: str, level: int, tags: frozenset | None, elements: tuple | None, t: _Terms) -> Sym:
        bd = self.bounds
        self._count += 1
        uid = f"{name}#{self._count}"
        allowed = set(tags if tags is not None else ALL_TAGS)
        if level >= bd.depth:
            allowed -= CONTAINERS
        if not bd.allow_tuples:
            allowed.discard(TUPLE)
        allowed = frozenset(allowed)
        tag = z3.Int(f"tag:{uid}")
        v = Sym(tag, allowed, name=name)
        self.domain.append(t.or_(*[t.eq(tag, k) for k in sorted(allowed)]))
        odd = sorted(allowed & {NONE, BOOL, DICT})
        if odd:
            self.natural.append(t.and_(*[t.ne(tag, k) for k in odd]))
        if level > 0 and allowed & {INT, FLOAT}:
            self.numeric_leaves.append(t.or_(*[t.eq(tag, k) for k in sorted(allowed & {INT, FLOAT})]))
        if BOOL in allowed:
            v.b = z3.Bool(f"b:{uid}")
        if INT in allowed:
            v.i = z3.Int(f"i:{uid}")
            self.domain.append(t.implies(t.eq(tag, INT), t.and_(t.ge(v.i, -bd.max_int), t.le(v.i, bd.max_int))))
            self.small.append(t.implies(t.eq(tag, INT), t.and_(t.ge(v.i, -bd.small_int), t.le(v.i, bd.small_int))))
            self.nonneg.append(t.implies(t.eq(tag, INT), t.ge(v.i, 0)))
            self.negative.append(t.implies(t.eq(tag, INT), t.lt(v.i, 0)))
            self.tiny.append(t.implies(t.eq(tag, INT), t.and_(t.ge(v.i, 0), t.le(v.i, 2))))
        if FLOAT in allowed:
            k = z3.Int(f"k:{uid}")
            v.r = z3.Real(f"r:{uid}")
            # The z3 model must decode to a Python float exactly: a dyadic rational.
            self.domain.append(v.r == z3.ToReal(k) / FLOAT_DENOMINATOR)
            lim = bd.max_int * FLOAT_DENOMINATOR
            self.domain.append(t.implies(t.eq(tag, FLOAT), t.and_(t.ge(k, -lim), t.le(k, lim))))
            slim = bd.small_int * FLOAT_DENOMINATOR
            self.small.append(t.implies(t.eq(tag, FLOAT), t.and_(t.ge(k, -slim), t.le(k, slim))))
            self.nonneg.append(t.implies(t.eq(tag, FLOAT), t.ge(k, 0)))
            self.no_floats.append(t.ne(tag, FLOAT))
            self.negative.append(t.implies(t.eq(tag, FLOAT), t.lt(k, 0)))
            self.tiny.append(t.implies(t.eq(tag, FLOAT), t.and_(t.ge(k, 0), t.le(k, 2 * FLOAT_DENOMINATOR))))
        if STR in allowed:
            ln = z3.Int(f"len:{uid}")
            codes = [z3.Int(f"c{k}:{uid}") for k in range(bd.max_str)]
            v.s = SStr(ln, codes)
            # printable ASCII only (exact str predicates, JSON-safe); unused codes stay free
            # (``k < ln`` is z3's ``ln > k``: Python asks the right operand)
            self.domain.append(t.implies(t.eq(tag, STR), t.and_(t.ge(ln, 0), t.le(ln, bd.max_str), *[
                t.implies(t.gt(ln, k), t.and_(t.ge(c, 32), t.le(c, 126))) for k, c in enumerate(codes)])))
            self.small.append(t.implies(t.eq(tag, STR), t.le(ln, bd.small_str)))
            self.tiny.append(t.implies(t.eq(tag, STR), t.le(ln, 2)))
            self.strings.append((t.eq(tag, STR), ln, codes))
        if allowed & CONTAINERS:
            slots = bd.slots[level]
            v.n = z3.Int(f"n:{uid}")
            is_container = t.or_(*[t.eq(tag, k) for k in sorted(allowed & CONTAINERS)])
            self.domain.append(t.implies(is_container, t.and_(t.ge(v.n, 0), t.le(v.n, slots))))
            self.small.append(t.implies(is_container, t.le(v.n, bd.small_len)))
            self.tiny.append(t.implies(is_container, t.le(v.n, 2)))
            elem_tags, elem_elements = elements if elements is not None else (None, None)
            elems = tuple(self._build(f"{name}[{k}]", level + 1, elem_tags, elem_elements, t) for k in range(slots))
            v.items = elems
            if DICT in allowed:
                # JSON objects only have string keys: dict keys are distinct strings.
                # The element nodes double as the dict's value nodes (a value is
                # either a list or a dict), which keeps the encoding small.
                keys = tuple(self._build(f"{name}.key{k}", level + 1, frozenset({STR}), None, t) for k in range(slots))
                for a in range(slots):
                    for c in range(a + 1, slots):
                        # (sstr_eq and Not's shortcuts never apply to these fresh terms)
                        ka, kc = keys[a].s, keys[c].s
                        same = t.and_(t.eq_terms(ka.n, kc.n), *[
                            t.implies(t.gt(ka.n, j), t.eq_terms(x, y)) for j, (x, y) in enumerate(zip(ka.cs, kc.cs))])
                        self.domain.append(t.implies(t.and_(t.eq(tag, DICT), t.gt(v.n, c)), t.not_(same)))
                # ``items`` are what iteration yields: the keys for a dict.
                v.items = tuple(ite(tag == DICT, kk, el) for kk, el in zip(keys, elems))
                v.vals = elems
        return v


class _Terms:
    """The z3 constructors :meth:`Inputs.fresh` calls by the thousand, as the calls of z3's C API
    that its Python operators end in (``x >= 32`` is ``Z3_mk_ge(x, 32)``, ``x != 2`` is
    ``Z3_mk_distinct(x, 2)``): the same terms made in the same order, so with the same ids and
    the same models, without the operators' sort checks and casts of Python ints, which were
    most of a translation's cost.  Integer comparisons take an int term and a Python int."""

    def __init__(self):
        self.ctx = z3.main_ctx()
        self.ref = self.ctx.ref()
        self.int_sort = z3.IntSort(self.ctx).ast
        self.nums: dict = {}  # numerals made (z3 gives an equal numeral its one term)

    def num(self, k: int):
        term = self.nums.get(k)
        if term is None:
            term = self.nums[k] = z3.IntNumRef(z3.Z3_mk_numeral(self.ref, str(k), self.int_sort), self.ctx)
        return term

    def _cmp(self, mk, x, k: int) -> z3.BoolRef:
        return z3.BoolRef(mk(self.ref, x.as_ast(), self.num(k).as_ast()), self.ctx)

    def eq(self, x, k: int) -> z3.BoolRef:
        return self._cmp(z3.Z3_mk_eq, x, k)

    def ge(self, x, k: int) -> z3.BoolRef:
        return self._cmp(z3.Z3_mk_ge, x, k)

    def le(self, x, k: int) -> z3.BoolRef:
        return self._cmp(z3.Z3_mk_le, x, k)

    def gt(self, x, k: int) -> z3.BoolRef:
        return self._cmp(z3.Z3_mk_gt, x, k)

    def lt(self, x, k: int) -> z3.BoolRef:
        return self._cmp(z3.Z3_mk_lt, x, k)

    def ne(self, x, k: int) -> z3.BoolRef:
        return z3.BoolRef(z3.Z3_mk_distinct(self.ref, 2, (z3.Ast * 2)(x.as_ast(), self.num(k).as_ast())), self.ctx)

    def eq_terms(self, x, y) -> z3.BoolRef:
        return z3.BoolRef(z3.Z3_mk_eq(self.ref, x.as_ast(), y.as_ast()), self.ctx)

    def implies(self, a, b) -> z3.BoolRef:
        return z3.BoolRef(z3.Z3_mk_implies(self.ref, a.as_ast(), b.as_ast()), self.ctx)

    def not_(self, a) -> z3.BoolRef:
        return z3.BoolRef(z3.Z3_mk_not(self.ref, a.as_ast()), self.ctx)

    def and_(self, *args) -> z3.BoolRef:
        return z3.BoolRef(z3.Z3_mk_and(self.ref, len(args), (z3.Ast * len(args))(*[a.as_ast() for a in args])),
                          self.ctx)

    def or_(self, *args) -> z3.BoolRef:
        return z3.BoolRef(z3.Z3_mk_or(self.ref, len(args), (z3.Ast * len(args))(*[a.as_ast() for a in args])),
                          self.ctx)


# ---------------------------------------------------------------- combinators
def _merge(c, x, y):
    if x is None:
        return y
    if y is None:
        return x
    if isinstance(x, SStr):
        return sstr_ite(c, x, y)
    return If(c, x, y)


def ite(c, a: Sym, b: Sym) -> Sym:
    """The value ``a if c else b`` (field-wise ``If``)."""
    if _is_true(c):
        return a
    if _is_false(c):
        return b
    if a is b:
        return a
    items = tuple(x if y is None else y if x is None else ite(c, x, y)
                  for x, y in zip_longest(a.items, b.items))
    vals = tuple(x if y is None else y if x is None else ite(c, x, y)
                 for x, y in zip_longest(a.vals, b.vals))
    return Sym(_merge(c, a.tag, b.tag), a.tags | b.tags, b=_merge(c, a.b, b.b), i=_merge(c, a.i, b.i),
               r=_merge(c, a.r, b.r), s=_merge(c, a.s, b.s), n=_merge(c, a.n, b.n), items=items, vals=vals)


def select(items: Sequence[Sym], idx) -> Sym:
    """``items[idx]`` for a symbolic index (an ``If`` chain; caller checks bounds)."""
    if not items:
        raise Unsupported("indexing an always-empty container")
    out = items[-1]
    for k in range(len(items) - 2, -1, -1):
        out = ite(idx == k, items[k], out)
    return out


def truthy(v: Sym):
    """Python's ``bool(v)``."""
    parts = []
    if v.has(NONE):
        pass  # None is falsy
    if v.has(BOOL):
        parts.append(And(is_tag(v, BOOL), v.b))
    if v.has(INT):
        parts.append(And(is_tag(v, INT), v.i != 0))
    if v.has(FLOAT):
        parts.append(And(is_tag(v, FLOAT), v.r != 0))
    if v.has(STR):
        parts.append(And(is_tag(v, STR), v.s.n > 0))
    if v.tags & CONTAINERS:
        parts.append(And(tag_in(v, CONTAINERS), v.n > 0))
    return Or(*parts)


def int_value(v: Sym):
    """The integer of a bool/int value (``True`` is ``1``)."""
    if v.has(BOOL) and v.has(INT):
        return If(v.tag == BOOL, If(v.b, z3.IntVal(1), z3.IntVal(0)), v.i)
    if v.has(BOOL):
        return If(v.b, z3.IntVal(1), z3.IntVal(0))
    if v.has(INT):
        return v.i
    raise Unsupported("internal: int_value of non-integral")  # pragma: no cover


def real_value(v: Sym):
    """The number of a bool/int/float value as a z3 Real."""
    out = None
    if v.has(FLOAT):
        out = v.r
    if v.tags & INTEGRAL:
        iv = z3.ToReal(int_value(v))
        out = iv if out is None else If(tag_in(v, INTEGRAL), iv, out)
    if out is None:
        raise Unsupported("internal: real_value of non-number")  # pragma: no cover
    return out


def length(v: Sym):
    """``len(v)`` (meaningful where ``tag_in(v, SIZED)``)."""
    out = None
    if v.tags & CONTAINERS:
        out = v.n
    if v.has(STR):
        ls = v.s.n
        out = ls if out is None else If(is_tag(v, STR), ls, out)
    if out is None:
        return z3.IntVal(0)
    return out


def equal(a: Sym, b: Sym, depth: int = 4):
    """Python ``a == b``: returns ``(value, ok)``; ``ok`` is false where not modelled."""
    cases, not_ok = [], []
    if a.tags & NUMERIC and b.tags & NUMERIC:
        if a.tags & NUMERIC <= INTEGRAL and b.tags & NUMERIC <= INTEGRAL:
            eqv = int_value(a) == int_value(b)
        else:
            eqv = real_value(a) == real_value(b)
        cases.append(And(tag_in(a, NUMERIC), tag_in(b, NUMERIC), eqv))
    if a.has(NONE) and b.has(NONE):
        cases.append(And(is_tag(a, NONE), is_tag(b, NONE)))
    if a.has(STR) and b.has(STR):
        cases.append(And(is_tag(a, STR), is_tag(b, STR), sstr_eq(a.s, b.s)))
    for t in (LIST, TUPLE):
        if a.has(t) and b.has(t):
            both = And(is_tag(a, t), is_tag(b, t))
            if depth <= 0:
                not_ok.append(both)
                continue
            parts = [a.n == b.n]
            for k, (x, y) in enumerate(zip(a.items, b.items)):
                ev, eok = equal(x, y, depth - 1)
                parts.append(Implies(k < a.n, ev))
                not_ok.append(And(both, k < a.n, Not(eok)))
            # zip() stops at the shorter slot tuple; that is enough because every
            # container keeps n <= its slot count, so equal lengths fit both.
            cases.append(And(both, *parts))
    if a.has(DICT) and b.has(DICT):
        not_ok.append(And(is_tag(a, DICT), is_tag(b, DICT)))  # dict == dict not modelled
    return Or(*cases), Not(Or(*not_ok))


# ---------------------------------------------------------------- decoding
def decode(model: z3.ModelRef, v: Sym) -> Any:
    """The Python value of input ``v`` in ``model`` (exact, see module docstring)."""
    tag = model.eval(v.tag, model_completion=True).as_long()
    if tag == NONE:
        return None
    if tag == BOOL:
        return z3.is_true(model.eval(v.b, model_completion=True))
    if tag == INT:
        return model.eval(v.i, model_completion=True).as_long()
    if tag == FLOAT:
        r = model.eval(v.r, model_completion=True)
        return float(Fraction(r.numerator_as_long(), r.denominator_as_long()))
    if tag == STR:
        n = model.eval(v.s.n, model_completion=True).as_long()
        return "".join(chr(model.eval(c, model_completion=True).as_long()) for c in v.s.cs[:n])
    n = model.eval(v.n, model_completion=True).as_long()
    if tag == LIST:
        return [decode(model, x) for x in v.items[:n]]
    if tag == TUPLE:
        return tuple(decode(model, x) for x in v.items[:n])
    if tag == DICT:
        return {decode(model, k): decode(model, x) for k, x in zip(v.items[:n], v.vals[:n])}
    raise ValueError(f"bad tag {tag}")  # pragma: no cover


def describe(v: Sym, value: Any, shape_only: bool = False) -> list:
    """Equalities that pin input ``v`` to the decoded ``value``.

    With ``shape_only`` only types and lengths are pinned; blocking a shape makes
    the solver's next model differ in *type structure*, not just in a number,
    which gives the feasibility filter (§3.2) more varied candidates.
    """
    t = _tag_of(value)
    if t is None or t not in v.tags:
        return [z3.BoolVal(False)]
    out = [v.tag == t]
    if t in (BOOL, INT, FLOAT, STR) and not shape_only:
        if t == BOOL:
            out.append(v.b == value)
        elif t == INT:
            out.append(v.i == value)
        elif t == FLOAT:
            out.append(v.r == z3.RealVal(Fraction(value)))
        else:
            if len(value) > v.s.cap:
                return [z3.BoolVal(False)]
            out.append(sstr_eq(v.s, sstr_const(value)))
    elif t == STR and shape_only:
        out.append(v.s.n == len(value))
    elif t in (LIST, TUPLE, DICT):
        if len(value) > len(v.items):
            return [z3.BoolVal(False)]
        out.append(v.n == len(value))
        elems = list(value.keys()) if t == DICT else list(value)
        for x, y in zip(v.items, elems):
            out.extend(describe(x, y, shape_only and t != DICT))
        if t == DICT:
            for x, y in zip(v.vals, value.values()):
                out.extend(describe(x, y, shape_only))
    return out


def _tag_of(value: Any) -> int | None:
    for t, py in ((BOOL, bool), (INT, int), (FLOAT, float), (STR, str), (LIST, list),
                  (TUPLE, tuple), (DICT, dict)):
        if type(value) is py:
            return t
    if value is None:
        return NONE
    return None
