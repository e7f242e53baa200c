"""JML expressions: tokenizer, parser to a small AST, and Java emission.

JML expressions are Java expressions plus ``\\result``, ``\\old(e)``,
``\\forall``/``\\exists`` (bounded), ``==>``, ``<==``, ``<==>`` and ``<=!=>``
(JML Reference Manual §12).  tree-sitter-java cannot parse these operators, so
expressions get this small precedence-climbing parser; Java structure around
the comments comes from tree-sitter.  Precedence, lowest first (JML RM §12.1):
``?:``, ``<==> <=!=>``, ``==> <==``, then Java's ``||`` ... unary.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Iterator

# --------------------------------------------------------------------- tokens
_TOKEN = re.compile(r"""(?s)
    (?P<ws>\s+|//[^\n]*|/\*.*?\*/)
  | (?P<char>'(?:\\.|[^'\\])+')
  | (?P<str>"(?:\\.|[^"\\])*")
  | (?P<num>0[xX][0-9a-fA-F_]+[lL]? | \d[\d_]*\.\d*(?:[eE][+-]?\d+)?[fFdD]? | \.\d+(?:[eE][+-]?\d+)?[fFdD]?
            | \d[\d_]*(?:[eE][+-]?\d+)[fFdD]? | \d[\d_]*[lLfFdD]?)
  | (?P<kw>\\[A-Za-z_]+)
  | (?P<id>[A-Za-z_$][A-Za-z0-9_$]*)
  | (?P<op><=!=>|<==>|==>|<==|->|::|>>>=|<<=|>>=|>>>|\.\.|&&|\|\||==|!=|<=|>=|<<|>>|\+\+|--|[-+*/%<>!~&|^?:;,.()\[\]{}=])
""", re.VERBOSE)


class JmlSyntaxError(ValueError):
    def __init__(self, message: str, offset: int = 0):
        super().__init__(message)
        self.offset = offset


@dataclass(frozen=True)
class Tok:
    kind: str  # ws char str num kw id op eof
    text: str
    pos: int


def tokenize(text: str) -> list[Tok]:
    out, pos = [], 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if not m:
            raise JmlSyntaxError(f"unexpected character {text[pos]!r}", pos)
        if m.lastgroup != "ws":
            out.append(Tok(m.lastgroup, m.group(), pos))
        pos = m.end()
    out.append(Tok("eof", "", len(text)))
    return out


# ------------------------------------------------------------------------ AST
@dataclass(frozen=True)
class Node:
    pass


@dataclass(frozen=True)
class Lit(Node):
    text: str


@dataclass(frozen=True)
class Name(Node):
    name: str


@dataclass(frozen=True)
class Result(Node):
    pass


@dataclass(frozen=True)
class Old(Node):
    expr: Node


@dataclass(frozen=True)
class Field(Node):
    obj: Node
    name: str


@dataclass(frozen=True)
class Index(Node):
    arr: Node
    index: Node


@dataclass(frozen=True)
class Call(Node):
    target: Node | None  # None: a bare method name
    name: str
    args: tuple[Node, ...]


@dataclass(frozen=True)
class Unary(Node):
    op: str
    expr: Node


@dataclass(frozen=True)
class Postfix(Node):
    op: str
    expr: Node


@dataclass(frozen=True)
class Cast(Node):
    type: str
    expr: Node


@dataclass(frozen=True)
class Binary(Node):
    op: str
    left: Node
    right: Node


@dataclass(frozen=True)
class Cond(Node):
    test: Node
    then: Node
    other: Node


@dataclass(frozen=True)
class InstanceOf(Node):
    expr: Node
    type: str


@dataclass(frozen=True)
class Quant(Node):
    kind: str  # "forall" | "exists"
    type: str
    var: str
    range: Node | None
    body: Node


@dataclass(frozen=True)
class NewArray(Node):
    type: str  # the base type ("int"); "?" for a bare initializer ``{...}``
    dims: tuple[Node, ...]  # sized dimensions
    init: tuple[Node, ...] | None
    extra: int = 0  # unsized dimensions ``[]``


@dataclass(frozen=True)
class Lambda(Node):
    """A Java lambda with an expression body (PostcondBench's Java prompt asks for
    Java streams instead of quantifiers: ``IntStream.range(0, n).allMatch(i -> ...)``)."""
    params: tuple[str, ...]
    body: Node


@dataclass(frozen=True)
class MethodRef(Node):
    """``Type::name`` or ``expr::name``."""
    target: Node
    name: str


@dataclass(frozen=True)
class Unsupported(Node):
    """A JML construct this checker does not translate (``\\sum``, ``\\fresh``...)."""
    what: str


_PRIMS = {"int", "long", "short", "byte", "char", "boolean", "double", "float"}
_BINARY_LEVELS = [
    ("||",), ("&&",), ("|",), ("^",), ("&",), ("==", "!="), ("<", "<=", ">", ">=", "instanceof"),
    ("<<", ">>", ">>>"), ("+", "-"), ("*", "/", "%"),
]


# Limits of one JML text (issue 25): a sample's deep or huge expression is a syntax error
# with its offset, never a RecursionError in this parser or in the tree walkers after it.
MAX_TEXT = 20_000  # characters of one JML comment
MAX_NESTING = 60  # nested sub-expressions (parentheses, arguments, operands of unary operators...)
MAX_DEPTH = 150  # depth of the expression tree (long chains of binary operators)


def depth(n: Node) -> int:
    """The depth of an expression tree, without recursion."""
    best, stack = 0, [(n, 1)]
    while stack:
        x, d = stack.pop()
        best = max(best, d)
        stack.extend((c, d + 1) for c in children(x))
    return best


class Parser:
    def __init__(self, text: str):
        if len(text) > MAX_TEXT:
            raise JmlSyntaxError(f"JML text longer than {MAX_TEXT} characters", 0)
        self.text = text
        self.toks = tokenize(text)
        self.i = 0
        self.nesting = 0

    def _enter(self) -> None:
        self.nesting += 1
        if self.nesting > MAX_NESTING:
            raise JmlSyntaxError(f"expression nested more than {MAX_NESTING} levels deep", self.tok.pos)

    # helpers
    @property
    def tok(self) -> Tok:
        return self.toks[self.i]

    def peek(self, k: int = 1) -> Tok:
        return self.toks[min(self.i + k, len(self.toks) - 1)]

    def at(self, *texts: str) -> bool:
        return self.tok.kind in ("op", "id", "kw") and self.tok.text in texts

    def take(self) -> Tok:
        t = self.tok
        self.i += 1
        return t

    def expect(self, text: str) -> Tok:
        if not self.at(text):
            raise JmlSyntaxError(f"expected {text!r}, found {self.tok.text or 'end of clause'!r}", self.tok.pos)
        return self.take()

    def ident(self) -> str:
        if self.tok.kind != "id":
            raise JmlSyntaxError(f"expected a name, found {self.tok.text or 'end of clause'!r}", self.tok.pos)
        return self.take().text

    # types
    def type_name(self) -> str:
        parts = [self.ident()]
        while self.at(".") and self.peek().kind == "id":
            self.take()
            parts.append(self.ident())
        name = ".".join(parts)
        if self.at("<"):  # generics: the tokens up to the matching '>' (re-printed: no text between them)
            depth, toks = 0, []
            while True:
                t = self.take()
                toks.append(t.text)
                if t.text == "<":
                    depth += 1
                elif t.text == ">":
                    depth -= 1
                elif t.text == ">>":
                    depth -= 2
                if depth <= 0 or t.kind == "eof":
                    break
            name += " ".join(toks)
        while self.at("[") and self.peek().text == "]":
            self.take(), self.take()
            name += "[]"
        return name

    def looks_like_cast(self) -> bool:
        # "(" type ")" followed by something that starts an operand
        j = self.i + 1
        t = self.toks[j]
        if t.kind != "id":
            return False
        prim = t.text in _PRIMS
        j += 1
        while self.toks[j].text == "." and self.toks[j + 1].kind == "id":
            j += 2
        while self.toks[j].text == "[" and self.toks[j + 1].text == "]":
            j += 2
        if self.toks[j].text != ")":
            return False
        nxt = self.toks[j + 1]
        if prim:
            return nxt.kind != "eof" and nxt.text not in (")", ";", ",", "]", "}", ":", "?") and not (
                nxt.kind == "op" and nxt.text in ("==", "!=", "<", ">", "<=", ">=", "&&", "||", "*", "/", "%"))
        return nxt.kind in ("id", "num", "str", "char", "kw") or nxt.text in ("(", "!", "~")

    # expressions
    def parse_clause(self) -> Node:
        e = self.expr()
        if self.tok.kind != "eof":
            raise JmlSyntaxError(f"unexpected {self.tok.text!r}", self.tok.pos)
        return e

    def lambda_params(self) -> tuple[str, ...] | None:
        """The parameter names when a lambda starts here (``x ->``, ``(x, y) ->``,
        ``(int x) ->``, ``() ->``), else None; consumes nothing."""
        if self.tok.kind == "id" and self.peek().text == "->":
            return (self.tok.text,)
        if not self.at("("):
            return None
        j, depth = self.i, 0
        while j < len(self.toks) and self.toks[j].kind != "eof":
            t = self.toks[j].text
            depth += (t == "(") - (t == ")")
            if depth == 0:
                break
            j += 1
        if j + 1 >= len(self.toks) or self.toks[j + 1].text != "->":
            return None
        inner = self.toks[self.i + 1:j]
        if any(t.kind not in ("id", "op") or (t.kind == "op" and t.text not in (",", "[", "]", "<", ">", "."))
               for t in inner):
            return None
        names, group = [], []
        for t in inner + [Tok("op", ",", 0)]:
            if t.text == ",":
                if group:
                    names.append(group[-1])
                group = []
            elif t.kind == "id":
                group.append(t.text)
        return tuple(names)

    def expr(self) -> Node:
        start = self.tok.pos
        self._enter()
        try:
            e = self._expr()
        finally:
            self.nesting -= 1
        if self.nesting == 0 and depth(e) > MAX_DEPTH:
            raise JmlSyntaxError(f"expression more than {MAX_DEPTH} operators deep", start)
        return e

    def _expr(self) -> Node:
        params = self.lambda_params()
        if params is not None:
            while not self.at("->"):
                self.take()
            self.take()
            if self.at("{"):
                raise JmlSyntaxError("lambda bodies must be expressions (no { } block)", self.tok.pos)
            return Lambda(params, self.expr())
        test = self.equiv()
        if self.at("?"):
            self.take()
            then = self.expr()
            self.expect(":")
            return Cond(test, then, self.expr())
        return test

    def equiv(self) -> Node:
        left = self.implies()
        while self.at("<==>", "<=!=>"):
            op = self.take().text
            left = Binary(op, left, self.implies())
        return left

    def implies(self) -> Node:
        left = self.binary(0)
        if self.at("==>"):
            self.take()
            self._enter()
            try:
                return Binary("==>", left, self.implies())  # right-associative
            finally:
                self.nesting -= 1
        while self.at("<=="):
            self.take()
            left = Binary("<==", left, self.binary(0))
        return left

    def binary(self, level: int) -> Node:
        if level == len(_BINARY_LEVELS):
            return self.unary()
        left = self.binary(level + 1)
        ops = _BINARY_LEVELS[level]
        while self.at(*ops):
            op = self.take().text
            if op == "instanceof":
                left = InstanceOf(left, self.type_name())
            elif op in ("<", "<=", ">", ">=") and isinstance(left, Binary) and left.op in ("<", "<=", ">", ">="):
                # JML chained comparison: a <= b < c means a <= b && b < c
                left = Binary("&&", left, Binary(op, left.right, self.binary(level + 1)))
            else:
                left = Binary(op, left, self.binary(level + 1))
        return left

    def unary(self) -> Node:
        self._enter()
        try:
            if self.at("-", "+", "!", "~", "++", "--"):
                op = self.take().text
                return Unary(op, self.unary())
            if self.at("(") and self.looks_like_cast():
                self.take()
                t = self.type_name()
                self.expect(")")
                return Cast(t, self.unary())
            return self.postfix(self.primary())
        finally:
            self.nesting -= 1

    def postfix(self, e: Node) -> Node:
        while True:
            if self.at("."):
                self.take()
                name = self.ident()
                if self.at("("):
                    e = Call(e, name, self.args())
                else:
                    e = Field(e, name)
            elif self.at("["):
                self.take()
                idx = self.expr()
                if self.at(".."):  # JML range (assignable a[i .. j]): keep as unsupported in expressions
                    raise JmlSyntaxError("array range '..' is only meaningful in assignable", self.tok.pos)
                self.expect("]")
                e = Index(e, idx)
            elif self.at("++", "--"):
                e = Postfix(self.take().text, e)
            elif self.at("::"):
                self.take()
                e = MethodRef(e, "new" if self.at("new") and self.take() else self.ident())
            else:
                return e

    def args(self) -> tuple[Node, ...]:
        self.expect("(")
        out = []
        if not self.at(")"):
            out.append(self.expr())
            while self.at(","):
                self.take()
                out.append(self.expr())
        self.expect(")")
        return tuple(out)

    def primary(self) -> Node:
        t = self.tok
        if t.kind in ("num", "str", "char"):
            self.take()
            return Lit(t.text)
        if t.kind == "kw":
            self.take()
            if t.text == "\\result":
                return Result()
            if t.text in ("\\old", "\\pre"):
                self.expect("(")
                e = self.expr()
                if self.at(","):
                    raise JmlSyntaxError("\\old with a label is not supported", self.tok.pos)
                self.expect(")")
                return Old(e)
            if t.text in ("\\forall", "\\exists"):
                return self.quantifier(t.text[1:])
            if self.at("("):  # \sum, \fresh, \typeof ... : skip the balanced argument list
                depth = 0
                while True:
                    x = self.take()
                    depth += x.text == "("
                    depth -= x.text == ")"
                    if depth == 0 or x.kind == "eof":
                        break
            return Unsupported(t.text)
        if t.kind == "op" and t.text == "(":
            self.take()
            if self.tok.kind == "kw" and self.tok.text in ("\\forall", "\\exists", "\\sum", "\\product",
                                                            "\\max", "\\min", "\\num_of"):
                kw = self.take().text
                if kw in ("\\forall", "\\exists"):
                    q = self.quantifier(kw[1:])
                else:
                    depth = 1
                    while depth and self.tok.kind != "eof":
                        x = self.take()
                        depth += (x.text == "(") - (x.text == ")")
                    return Unsupported(kw)
                self.expect(")")
                return q
            e = self.expr()
            self.expect(")")
            return e
        if t.kind == "id":
            if t.text == "new":
                self.take()
                base = self.ident()
                while self.at(".") and self.peek().kind == "id":
                    self.take()
                    base += "." + self.ident()
                dims, extra = [], 0
                while self.at("["):
                    self.take()
                    if self.at("]"):
                        self.take()
                        extra += 1
                    else:
                        dims.append(self.expr())
                        self.expect("]")
                init = None
                if self.at("{"):
                    init = self.array_init()
                if not dims and not extra:
                    if self.at("("):
                        return Call(None, "new " + base, self.args())
                    raise JmlSyntaxError("expected '(' or '[' after new", self.tok.pos)
                return NewArray(base, tuple(dims), init, extra)
            self.take()
            if t.text in ("true", "false", "null", "this", "super"):
                return Lit(t.text)
            if self.at("("):
                return Call(None, t.text, self.args())
            return Name(t.text)
        if t.kind == "op" and t.text == "{":
            return NewArray("?", (), self.array_init())
        raise JmlSyntaxError(f"unexpected {t.text or 'end of clause'!r}", t.pos)

    def array_init(self) -> tuple[Node, ...]:
        self.expect("{")
        out = []
        while not self.at("}"):
            out.append(self.array_init_elem())
            if not self.at(","):
                break
            self.take()
        self.expect("}")
        return tuple(out)

    def array_init_elem(self) -> Node:
        if self.at("{"):
            return NewArray("?", (), self.array_init())
        return self.expr()

    def quantifier(self, kind: str) -> Quant:
        type_ = self.type_name()
        names = [self.ident()]
        while self.at(","):
            self.take()
            names.append(self.ident())
        self.expect(";")
        first = self.expr()
        rng, body = (None, first)
        if self.at(";"):
            self.take()
            rng, body = first, self.expr()
        # several variables: nest, each outer one ranging over the conjuncts that mention
        # no inner variable (R implies them, so the nesting means the same)
        q = Quant(kind, type_, names[-1], rng, body)
        for k in range(len(names) - 2, -1, -1):
            inner = set(names[k + 1:])
            conj = [c for c in _conjuncts(rng) if not (free_names(c) & inner)]
            outer_rng = None
            for c in conj:
                outer_rng = c if outer_rng is None else Binary("&&", outer_rng, c)
            q = Quant(kind, type_, names[k], outer_rng, q)
        return q


def _conjuncts(e: Node | None) -> list[Node]:
    if e is None:
        return []
    if isinstance(e, Binary) and e.op == "&&":
        return _conjuncts(e.left) + _conjuncts(e.right)
    return [e]


def parse_expr(text: str) -> Node:
    return Parser(text).parse_clause()


# -------------------------------------------------------------------- walking
def children(n: Node) -> Iterator[Node]:
    for v in vars(n).values():
        if isinstance(v, Node):
            yield v
        elif isinstance(v, tuple):
            yield from (x for x in v if isinstance(x, Node))


def walk(n: Node) -> Iterator[Node]:
    yield n
    for c in children(n):
        yield from walk(c)


def binds(n: Node) -> frozenset:
    """Names a node binds for its sub-expressions (a quantifier's variable, a lambda's parameters)."""
    if isinstance(n, Quant):
        return frozenset((n.var,))
    if isinstance(n, Lambda):
        return frozenset(n.params)
    return frozenset()


def free_names(n: Node, bound: frozenset = frozenset()) -> set[str]:
    """Plain names the expression reads (not bound by a quantifier or lambda, not method names)."""
    if isinstance(n, Name):
        return set() if n.name in bound else {n.name}
    if isinstance(n, Lambda):
        return free_names(n.body, bound | frozenset(n.params))
    if isinstance(n, Quant):
        inner = bound | {n.var}
        out = free_names(n.body, inner)
        if n.range is not None:
            out |= free_names(n.range, inner)
        return out
    out: set[str] = set()
    for c in children(n):
        out |= free_names(c, bound)
    return out


def unsupported(n: Node) -> list[str]:
    return [x.what for x in walk(n) if isinstance(x, Unsupported)]


# ------------------------------------------------------------------- emission
def bounds(q: Quant) -> tuple[Node, bool, Node, bool] | None:
    """``(lo, lo_strict, hi, hi_inclusive)`` of a quantifier's variable from its range's
    conjuncts (``lo <= x``, ``lo < x``, ``x < hi``, ``x <= hi`` and mirrored forms).  The
    bounds are the expressions as written: no ``+ 1`` in the expression's own type, which
    could wrap (``k <= Integer.MAX_VALUE``: issue 42); the runtime widens them to ``long``."""
    lo = hi = None
    lo_strict = hi_incl = False
    conj: list[Node] = []

    def split(e: Node | None):
        if isinstance(e, Binary) and e.op == "&&":
            split(e.left), split(e.right)
        elif e is not None:
            conj.append(e)

    split(q.range)
    for c in conj:
        if not isinstance(c, Binary) or c.op not in ("<", "<=", ">", ">="):
            continue
        a, op, b = c.left, c.op, c.right
        if isinstance(b, Name) and b.name == q.var and not (isinstance(a, Name) and a.name == q.var):
            a, b = b, a
            op = {"<": ">", "<=": ">=", ">": "<", ">=": "<="}[op]
        if not (isinstance(a, Name) and a.name == q.var) or q.var in free_names(b):
            continue
        if op in (">=", ">") and lo is None:
            lo, lo_strict = b, op == ">"
        elif op in ("<", "<=") and hi is None:
            hi, hi_incl = b, op == "<="
    if lo is None or hi is None:
        return None
    return lo, lo_strict, hi, hi_incl


# the values of each integral type (a quantified variable never leaves its type's range)
_RANGES = {"byte": ("-128L", "127L"), "short": ("-32768L", "32767L"), "char": ("0L", "65535L"),
           "int": ("-2147483648L", "2147483647L"), "long": ("(-9223372036854775807L - 1L)", "9223372036854775807L")}


class Unbounded(ValueError):
    pass


def to_java(n: Node, rename: Callable[[Node], str | None] = lambda n: None) -> str:
    """Java source for ``n``, fully parenthesised.  ``rename`` maps ``Name``,
    ``Result`` and ``Old`` nodes to Java text (None: default)."""
    r = rename(n)
    if r is not None:
        return r
    j = lambda x: to_java(x, rename)  # noqa: E731
    if isinstance(n, Lit):
        return n.text
    if isinstance(n, Name):
        return n.name
    if isinstance(n, Result):
        return "__jml_result"
    if isinstance(n, Old):
        raise ValueError("\\old must be renamed by the translator")
    if isinstance(n, Field):
        return f"{j(n.obj)}.{n.name}"
    if isinstance(n, Index):
        return f"{j(n.arr)}[{j(n.index)}]"
    if isinstance(n, Call):
        args = ", ".join(j(a) for a in n.args)
        return f"{n.name}({args})" if n.target is None else f"{j(n.target)}.{n.name}({args})"
    if isinstance(n, Unary):
        return f"({n.op}{j(n.expr)})"
    if isinstance(n, Postfix):
        return f"({j(n.expr)}{n.op})"
    if isinstance(n, Cast):
        return f"(({n.type}) {j(n.expr)})"
    if isinstance(n, Cond):
        return f"({j(n.test)} ? {j(n.then)} : {j(n.other)})"
    if isinstance(n, InstanceOf):
        return f"({j(n.expr)} instanceof {n.type})"
    if isinstance(n, NewArray):
        inits = "" if n.init is None else "{" + ", ".join(j(x) for x in n.init) + "}"
        if n.type == "?":
            return inits
        return f"new {n.type}" + "".join(f"[{j(d)}]" for d in n.dims) + "[]" * n.extra + inits
    if isinstance(n, Binary):
        a, b = j(n.left), j(n.right)
        if n.op == "==>":
            return f"(!({a}) || ({b}))"
        if n.op == "<==":
            return f"(({a}) || !({b}))"
        if n.op == "<==>":
            return f"(({a}) == ({b}))"
        if n.op == "<=!=>":
            return f"(({a}) != ({b}))"
        return f"({a} {n.op} {b})"
    if isinstance(n, Quant):
        bd = bounds(n)
        if bd is None:
            raise Unbounded(f"\\{n.kind} over {n.var}: no lower and upper bound found in its range")
        lo, lo_strict, hi, hi_incl = bd
        if n.type not in _RANGES:
            raise Unbounded(f"\\{n.kind} over a {n.type}: only integral quantifiers are supported")
        rng = j(n.range) if n.range is not None else "true"
        fn = "forall" if n.kind == "forall" else "exists"
        v = n.var
        cast = "" if n.type == "long" else f"{n.type} {v} = ({n.type}) __q_{v}; "
        param = f"__q_{v}" if n.type != "long" else v
        tmin, tmax = _RANGES[n.type]
        # the bounds widened to long as written (an int bound cannot wrap there), strictness as flags, the
        # variable's own type's range as a clamp: the runtime counts in long with overflow checks (JmlRt.span)
        return (f"specbench.jml.JmlRt.{fn}((long) ({j(lo)}), {str(lo_strict).lower()}, (long) ({j(hi)}), "
                f"{str(hi_incl).lower()}, {tmin}, {tmax}, "
                f"({param}) -> {{ {cast}return ({rng}) ? ({j(n.body)}) : {'true' if fn == 'forall' else 'false'}; }})")
    if isinstance(n, Lambda):
        return f"({', '.join(n.params)}) -> {j(n.body)}"
    if isinstance(n, MethodRef):
        return f"{j(n.target)}::{n.name}"
    if isinstance(n, Unsupported):
        raise Unbounded(f"{n.what} is not supported")
    raise ValueError(f"cannot emit {n!r}")


def to_jml(n: Node) -> str:
    """JML source text for ``n`` (for mutants and messages)."""
    if isinstance(n, Lit):
        return n.text
    if isinstance(n, Name):
        return n.name
    if isinstance(n, Result):
        return "\\result"
    if isinstance(n, Old):
        return f"\\old({to_jml(n.expr)})"
    if isinstance(n, Field):
        return f"{to_jml(n.obj)}.{n.name}"
    if isinstance(n, Index):
        return f"{to_jml(n.arr)}[{to_jml(n.index)}]"
    if isinstance(n, Call):
        args = ", ".join(to_jml(a) for a in n.args)
        return f"{n.name}({args})" if n.target is None else f"{to_jml(n.target)}.{n.name}({args})"
    if isinstance(n, Unary):
        return f"{n.op}{to_jml(n.expr)}"
    if isinstance(n, Postfix):
        return f"{to_jml(n.expr)}{n.op}"
    if isinstance(n, Cast):
        return f"({n.type}) {to_jml(n.expr)}"
    if isinstance(n, Cond):
        return f"({to_jml(n.test)} ? {to_jml(n.then)} : {to_jml(n.other)})"
    if isinstance(n, InstanceOf):
        return f"{to_jml(n.expr)} instanceof {n.type}"
    if isinstance(n, Binary):
        return f"({to_jml(n.left)} {n.op} {to_jml(n.right)})"
    if isinstance(n, Quant):
        rng = f"{to_jml(n.range)}; " if n.range is not None else ""
        return f"(\\{n.kind} {n.type} {n.var}; {rng}{to_jml(n.body)})"
    if isinstance(n, NewArray):
        inits = "" if n.init is None else "{" + ", ".join(to_jml(x) for x in n.init) + "}"
        if n.type == "?":
            return inits
        return f"new {n.type}" + "".join(f"[{to_jml(d)}]" for d in n.dims) + "[]" * n.extra + inits
    if isinstance(n, Lambda):
        return f"({', '.join(n.params)}) -> {to_jml(n.body)}"
    if isinstance(n, MethodRef):
        return f"{to_jml(n.target)}::{n.name}"
    if isinstance(n, Unsupported):
        return n.what
    return "?"
