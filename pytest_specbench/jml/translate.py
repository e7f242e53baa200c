"""Translate a Java class annotated with JML into plain Java with runtime checks.

tree-sitter-java gives the Java structure (methods, loops, returns, declared
types); JML lives in ``//@`` and ``/*@ @*/`` comments, parsed by :mod:`.expr`.
Every clause becomes a generated helper method returning its truth value (its
free variables passed as arguments, so quantifiers can be Java lambdas even in
loop conditions); a failing check throws ``specbench.jml.JmlViolation`` naming
the clause kind, its JML source line and text (the runtime records it first,
so a program that catches ``Throwable`` cannot hide it).

Semantics (JML Reference Manual):
- method specs (§9): spec cases joined by ``also`` (and nested ``{| |}``); the
  precondition is the disjunction of the cases' ``requires``; a case's
  ``ensures``/``signals`` apply when its ``requires`` held at entry; formal
  parameters in postconditions denote their pre-state values (§11.1);
  ``\\old(e)`` evaluates ``e`` on entry snapshots of its variables, arrays copied
  deeply; ``old T x = e;`` declarations are evaluated at entry.
- ``normal_behavior`` forbids exceptions; ``signals_only``/``signals`` and
  ``exceptional_behavior`` allow the listed ones; a lightweight case allows none
  explicitly, so an escaping exception is the program crashing.
- loop invariants (``maintaining``/``loop_invariant``, §13.2) are checked
  before every evaluation of the loop condition (at entry and after each
  iteration); ``decreases`` at the start of each iteration: non-negative and
  below its previous value.
- ``assert``/``assume`` are checked where they stand (as OpenJML's RAC does);
  ``ghost`` declarations and ``set`` become plain Java.
- ``pure``, ``spec_public``, ``helper``, ``nullable``, ``function`` are
  accepted (nothing to check at run time); reference parameters and results are
  non-null by default (§6.2.10) unless ``nullable``.
- ``assignable`` (and ``pure`` = ``assignable \\nothing``) is checked for whole
  variables: array parameters and Java fields not named must be unchanged.
- class ``invariant``s (§8.2) are checked at entry and normal exit of
  non-private, non-helper instance methods and at the normal exit of constructors.
- ``model`` methods become plain Java methods (their own specs unchecked).
Not supported (reported, never silently passed): ``constraint``, ``initially``,
``represents``, ``\\sum``-style generalized quantifiers, unbounded quantifiers,
``\\same``, labelled ``\\old``.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from . import expr as X
from .coverage import branch_probes
from .lexical import LexicalError, normalise_source
from .parser import node_text as _text, parse_java, reprint, walk as _walk

_PRIMS = {"int", "long", "short", "byte", "char", "boolean", "double", "float"}
_RT = "specbench.jml.JmlRt"
_LOOPS = {"for_statement", "while_statement", "do_statement", "enhanced_for_statement"}
_MODIFIERS = {"public", "private", "protected", "static", "final", "pure", "helper", "spec_public",
              "spec_protected", "nullable", "non_null", "function", "instance", "strictfp"}


# The checker's runtime (issue 25): no name in a specification, and no declaration in one
# (ghost, old, model method, local class, quantifier or lambda variable), may be one of these;
# a member type named ``specbench`` would shadow the runtime's package (JLS 6.4.2).
_RUNTIME_NAMES = frozenset({"specbench", "JmlRt", "JmlViolation", "JmlRunner", "JUnitRunner", "RunnerSupport",
                            "PostcondJUnit", "NoPoolThreads"})  # PostcondJUnit: JUnitRunner's former name
# Reflection, class loading, threads, processes: a specification (clause or model method) that could
# reach the runtime or run code outside its call is refused.
_FORBIDDEN = frozenset({
    "forName", "getMethod", "getMethods", "getDeclaredMethod", "getDeclaredMethods", "getField", "getFields",
    "getDeclaredField", "getDeclaredFields", "getConstructor", "getConstructors", "getDeclaredConstructor",
    "getDeclaredConstructors", "newInstance", "invoke", "invokeExact", "invokeWithArguments", "setAccessible",
    "getClassLoader", "loadClass", "defineClass", "getSystemClassLoader", "getContextClassLoader",
    "getPlatformClassLoader", "lookup", "privateLookupIn", "MethodHandles", "MethodHandle", "VarHandle",
    "StackWalker", "getCallerClass", "Unsafe", "getClass", "Class", "ClassLoader", "Proxy",
    "Thread", "ThreadGroup", "ThreadLocal", "Executor", "Executors", "ExecutorService", "ForkJoinPool",
    "ForkJoinTask", "CompletableFuture", "Timer", "TimerTask", "Cleaner", "parallel", "parallelStream",
    "commonPool", "runAsync", "supplyAsync", "Runtime", "ProcessBuilder", "ProcessHandle", "exec", "exit",
    "halt", "setOut", "setErr", "setIn", "setSecurityManager", "setProperty", "clearProperty",
})
# Methods that change their target or arguments: not in a specification (JML RM §7.1.1.3: specification
# expressions are pure).  Calls with a receiver other than the program's own class or ``this``.
_MUTATORS = frozenset({
    "add", "addAll", "put", "putAll", "putIfAbsent", "remove", "removeAll", "removeIf", "retainAll", "clear",
    "set", "setAll", "parallelSetAll", "parallelPrefix", "fill", "sort", "parallelSort", "push", "pop", "poll",
    "pollFirst", "pollLast", "offer", "offerFirst", "offerLast", "addFirst", "addLast", "removeFirst",
    "removeLast", "arraycopy", "reverse", "swap", "shuffle", "rotate", "compute", "computeIfAbsent",
    "computeIfPresent", "merge", "replaceAll", "getAndSet", "getAndIncrement", "getAndDecrement", "getAndAdd",
    "incrementAndGet", "decrementAndGet", "addAndGet", "lazySet", "compareAndSet", "wait", "notify", "notifyAll",
    "sleep", "join", "park", "start", "run", "submit", "execute", "invokeAll", "interrupt", "gc", "load",
    "loadLibrary", "insert", "delete", "deleteCharAt", "trimToSize", "ensureCapacity", "close", "flush",
})


def _runtime_name(name: str) -> bool:
    return name in _RUNTIME_NAMES or name.startswith("__jml")


class TranslationError(ValueError):
    """The spec cannot be translated (syntax); ``line`` is the JML source line."""

    def __init__(self, message: str, line: int):
        super().__init__(f"line {line}: {message}")
        self.line = line


@dataclass
class Clause:
    kind: str  # requires ensures signals signals_only maintaining decreases assert assume
    line: int
    text: str  # JML source of the expression
    expr: X.Node | None = None
    extra: dict = field(default_factory=dict)


@dataclass
class SpecCase:
    behavior: str = ""  # "" (lightweight) | "normal" | "exceptional" | "behavior"
    line: int = 0
    clauses: list[Clause] = field(default_factory=list)

    def of(self, kind: str) -> list[Clause]:
        return [c for c in self.clauses if c.kind == kind]


@dataclass
class Translation:
    source: str  # the translated Java
    class_name: str
    clauses: list[Clause]  # every translated clause (for messages and mutants)
    unsupported: list[tuple[str, int]]  # (construct, JML line): the spec must not be judged
    methods: dict[str, list[dict]]  # name -> [{"params": [(type, name)], "ret": type, "static": bool}]
    branches: list = field(default_factory=list)  # coverage.Branch per probe id (empty: no probes)

    @property
    def ok(self) -> bool:
        return not self.unsupported


# ------------------------------------------------------------------ JML text
def comment_text(raw: str) -> str | None:
    """The JML inside a comment, same length and line layout as ``raw`` (markers
    blanked so offsets map back to lines); None for a plain comment."""
    if raw.startswith("//@"):
        return "   " + raw[3:]
    if raw.startswith("/*@"):
        body = "   " + raw[3:-2] + "  "
        lines = body.split("\n")
        out = []
        for ln in lines:
            ln = re.sub(r"^(\s*)@+", lambda m: m.group(1) + " " * (len(m.group(0)) - len(m.group(1))), ln)
            ln = re.sub(r"@+(\s*)$", lambda m: " " * (len(m.group(0)) - len(m.group(1))) + m.group(1), ln)
            out.append(ln)
        return "\n".join(out)
    return None


class ClauseScanner:
    """Splits JML text into keyword items; expressions go through :mod:`.expr`."""

    def __init__(self, text: str, first_line: int, offset: int = 0):
        self.text = text
        self.first_line = first_line
        self.offset = offset  # of ``text`` in the source (for clause spans)
        self.p = X.Parser(text)

    def line_at(self, pos: int) -> int:
        return self.first_line + self.text.count("\n", 0, pos)

    def end(self, p: X.Parser) -> None:
        """A clause ends with ';' (tolerated missing at the end of a comment, as OpenJML does)."""
        if p.tok.kind == "eof":
            return
        p.expect(";")

    def items(self) -> list[tuple[str, int, object]]:
        """[(keyword, line, payload)]: payload is a Clause, a type list, or raw text."""
        p, out = self.p, []
        while p.tok.kind != "eof":
            t = p.tok
            line = self.line_at(t.pos)
            if t.kind == "op" and t.text in ("{", "}") and p.peek().text == "|" or (
                    t.text == "|" and p.peek().text == "}"):
                a = p.take()
                p.take()
                out.append(("{|" if a.text == "{" else "|}", line, None))
                continue
            if t.kind != "id":
                raise TranslationError(f"unexpected {t.text!r} in JML", line)
            kw = p.take().text
            if kw in _MODIFIERS or kw in ("also",):
                out.append((kw, line, None))
                continue
            if kw in ("normal_behavior", "normal_behaviour", "exceptional_behavior", "exceptional_behaviour",
                      "behavior", "behaviour"):
                out.append(("behavior", line, kw))
                continue
            if kw in ("requires", "pre", "ensures", "post", "maintaining", "loop_invariant", "decreases",
                      "decreasing", "assert", "assume", "loop_variant", "invariant"):
                kind = {"pre": "requires", "post": "ensures", "loop_invariant": "maintaining",
                        "decreasing": "decreases", "loop_variant": "decreases"}.get(kw, kw)
                start = p.tok.pos
                if p.at("\\same"):
                    p.take()
                    raise TranslationError("\\same is not supported", line)
                e = p.expr()
                end = p.tok.pos
                text = self.text[start:end].strip()
                if p.at(":") and kind in ("assert", "assume"):
                    raise TranslationError("assert messages are not supported", line)
                self.end(p)
                out.append((kind, line, Clause(kind, line, " ".join(text.split()), e,
                                               {"span": (self.offset + start, self.offset + end)})))
                continue
            if kw == "signals_only":
                types = []
                if p.at("\\nothing"):
                    p.take()
                else:
                    types.append(p.type_name())
                    while p.at(","):
                        p.take()
                        types.append(p.type_name())
                p.expect(";")
                out.append(("signals_only", line, types))
                continue
            if kw in ("signals", "exsures"):
                p.expect("(")
                typ = p.type_name()
                var = p.ident() if p.tok.kind == "id" else None
                p.expect(")")
                start = p.tok.pos
                e = X.Lit("true") if p.at(";") else p.expr()
                text = self.text[start:p.tok.pos].strip() or "true"
                p.expect(";")
                out.append(("signals", line, Clause("signals", line, " ".join(text.split()), e,
                                                    {"type": typ, "var": var})))
                continue
            if kw in ("assignable", "modifies", "modifiable", "accessible", "loop_modifies", "loop_writes",
                      "diverges", "when", "measured_by", "callable", "captures", "working_space", "duration"):
                start = p.tok.pos
                while p.tok.kind != "eof" and not p.at(";"):
                    p.take()
                text = " ".join(self.text[start:p.tok.pos].split())
                self.end(p)
                out.append((kw, line, text))
                continue
            if kw in ("ghost", "old", "set"):
                if kw == "set":
                    target = p.expr()
                    if p.at("=", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<=", ">>=", ">>>="):
                        op = p.take().text
                        value = p.array_init_elem() if p.at("{") else p.expr()
                        target = X.Binary(op, target, value)
                    self.end(p)
                    out.append(("set", line, target))
                    continue
                typ = p.type_name()
                name = p.ident()
                dims = ""
                while p.at("["):
                    p.take(), p.expect("]")
                    dims += "[]"
                init = None
                if p.at("="):
                    p.take()
                    init = p.array_init_elem() if p.at("{") else p.expr()
                self.end(p)
                out.append((kw, line, (typ + dims, name, init)))
                continue
            if kw in ("constraint", "initially", "axiom", "represents", "model", "monitors_for",
                      "readable", "writable"):
                # class-level constructs this checker does not run: skip to the end of the comment's item
                depth = 0
                while p.tok.kind != "eof":
                    x = p.take()
                    depth += (x.text == "{") - (x.text == "}")
                    if x.text == ";" and depth == 0 and kw != "model":
                        break
                    if x.text == "}" and depth == 0 and kw == "model":
                        break
                out.append((kw, line, None))
                continue
            raise TranslationError(f"unknown JML keyword {kw!r}", line)
        return out


# --------------------------------------------------------------- spec cases
def spec_cases(items: list[tuple[str, int, object]]) -> tuple[list[SpecCase], list[tuple[str, int]]]:
    """Flatten ``also`` and ``{| |}`` into spec cases (a nested group's cases each
    get the clauses before the group)."""
    unsupported: list[tuple[str, int]] = []
    pos = 0

    def parse_seq() -> list[SpecCase]:
        nonlocal pos
        cases: list[SpecCase] = []
        cur = SpecCase()
        started = False
        while pos < len(items):
            kw, line, payload = items[pos]
            if kw == "|}":
                break
            pos += 1
            if kw == "also":
                if started:
                    cases.append(cur)
                cur, started = SpecCase(), False
                continue
            if kw == "{|":
                subs = parse_seq()
                if pos < len(items) and items[pos][0] == "|}":
                    pos += 1
                for s in subs:
                    cases.append(SpecCase(s.behavior or cur.behavior, cur.line or s.line, cur.clauses + s.clauses))
                cur, started = SpecCase(), False
                continue
            if kw == "behavior":
                cur.behavior = {"n": "normal", "e": "exceptional"}.get(str(payload)[0], "behavior")
                cur.line = cur.line or line
                started = True
                continue
            if kw in _MODIFIERS:
                continue
            started = True
            cur.line = cur.line or line
            if isinstance(payload, Clause):
                cur.clauses.append(payload)
            elif kw == "signals_only":
                cur.clauses.append(Clause("signals_only", line, ", ".join(payload), None, {"types": payload}))
            elif kw == "old":
                typ, name, init = payload
                cur.clauses.append(Clause("old", line, X.to_jml(init) if init else "", init,
                                          {"type": typ, "name": name}))
            elif kw in ("assignable", "modifies", "modifiable"):
                cur.clauses.append(Clause("assignable", line, payload or ""))
            elif kw in ("invariant", "model", "constraint", "initially", "axiom", "represents"):
                unsupported.append((kw, line))
        if started:
            cases.append(cur)
        return cases

    cases = parse_seq()
    return cases, unsupported


# ----------------------------------------------------------------- translator
@dataclass
class _Var:
    name: str
    type: str
    pos: int


class _Method:
    def __init__(self, node, src: bytes):
        self.node = node
        self.src = src
        self.is_ctor = node.type == "constructor_declaration"
        mods = next((c for c in node.children if c.type == "modifiers"), None)
        self.mod_text = _text(src, mods) if mods else ""
        self.static = bool(mods and any(c.type == "static" for c in mods.children))
        self.name = _text(src, node.child_by_field_name("name"))
        t = node.child_by_field_name("type")
        dims = node.child_by_field_name("dimensions")
        self.ret = "void" if self.is_ctor else _text(src, t) + (_text(src, dims) if dims else "")
        self.params: list[_Var] = []
        self.nullable_params: set[str] = set()
        for p in node.child_by_field_name("parameters").named_children:
            if p.type not in ("formal_parameter", "spread_parameter"):
                continue
            ptype = _text(src, p.child_by_field_name("type")) if p.child_by_field_name("type") else ""
            name_node = p.child_by_field_name("name")
            if name_node is None:  # spread parameter: type ... name
                decl = next(c for c in p.named_children if c.type == "variable_declarator")
                name_node = decl.child_by_field_name("name")
                ptype += "[]"
            pdims = p.child_by_field_name("dimensions")
            if pdims is not None:
                ptype += _text(src, pdims)
            self.params.append(_Var(_text(src, name_node), ptype, p.start_byte))
            if "nullable" in _text(src, p):
                self.nullable_params.add(_text(src, name_node))
        self.body = node.child_by_field_name("body")
        self.locals: list[_Var] = []
        if self.body is not None:
            self._collect(self.body)

    def _collect(self, n) -> None:
        src = self.src
        if n.type in ("local_variable_declaration",):
            t = _text(src, n.child_by_field_name("type"))
            for d in n.children_by_field_name("declarator"):
                dims = d.child_by_field_name("dimensions")
                self.locals.append(_Var(_text(src, d.child_by_field_name("name")),
                                        t + (_text(src, dims) if dims else ""), d.start_byte))
        elif n.type == "enhanced_for_statement":
            t = _text(src, n.child_by_field_name("type"))
            self.locals.append(_Var(_text(src, n.child_by_field_name("name")), t, n.start_byte))
        elif n.type == "catch_formal_parameter":
            name = n.child_by_field_name("name")
            types = [c for c in n.named_children if c.type == "catch_type"]
            if name is not None and types:
                self.locals.append(_Var(_text(src, name), _text(src, types[0]).split("|")[0].strip(), n.start_byte))
        if n.type in ("lambda_expression", "class_body"):
            return
        for c in n.children:
            self._collect(c)

    def type_of(self, name: str, pos: int) -> str | None:
        best = None
        for v in self.locals:
            if v.name == name and v.pos < pos and (best is None or v.pos > best.pos):
                best = v
        if best is not None:
            return best.type
        for v in self.params:
            if v.name == name:
                return v.type
        return None


def _default(t: str) -> str:
    return {"boolean": "false", "char": "'\\0'"}.get(t, "0" if t in _PRIMS else "null")


def _rename_state(e: X.Node, names: set[str], fmt: str, bound: frozenset = frozenset()) -> X.Node:
    """Rename free occurrences of ``names`` in ``e`` (respecting quantifier scopes)."""
    if isinstance(e, X.Name):
        return X.Name(fmt.format(e.name)) if e.name in names and e.name not in bound else e
    if isinstance(e, X.Quant):
        inner = bound | {e.var}
        return X.Quant(e.kind, e.type, e.var,
                       None if e.range is None else _rename_state(e.range, names, fmt, inner),
                       _rename_state(e.body, names, fmt, inner))
    if isinstance(e, X.Lambda):
        return X.Lambda(e.params, _rename_state(e.body, names, fmt, bound | X.binds(e)))
    if isinstance(e, X.Call):
        return X.Call(None if e.target is None else _rename_state(e.target, names, fmt, bound), e.name,
                      tuple(_rename_state(a, names, fmt, bound) for a in e.args))
    changes = {}
    for k, v in vars(e).items():
        if isinstance(v, X.Node):
            changes[k] = _rename_state(v, names, fmt, bound)
        elif isinstance(v, tuple) and any(isinstance(x, X.Node) for x in v):
            changes[k] = tuple(_rename_state(x, names, fmt, bound) if isinstance(x, X.Node) else x for x in v)
    from dataclasses import replace
    return replace(e, **changes) if changes else e


class _Unsupported(Exception):
    def __init__(self, what: str, line: int):
        self.what, self.line = what, line


class Translator:
    def __init__(self, source: str, probes: bool = True, only_lines=None, non_null: bool = True):
        self.probes = probes
        self.source = source
        # PostcondBench (Java) instruments one method of a project file: the others stay as written.
        self.only_lines = None if only_lines is None else set(only_lines)
        self.non_null = non_null
        self.src = source.encode("utf-8")
        self.tree = parse_java(self.src)
        self.edits: list[tuple[int, int, int, str]] = []  # (start, end, seq, text)
        self.helpers: dict[int, list[str]] = {}  # class body end byte -> helper methods
        self.clauses: list[Clause] = []
        self.unsupported: list[tuple[str, int]] = []
        self.fields: dict[str, str] = {}
        self.n = 0
        self.methods: dict[str, list[dict]] = {}
        self.invariants: list[Clause] = []
        self.field_static: dict[str, bool] = {}  # Java fields (not ghost ones): static?
        self._loop_specs: dict[int, list] = {}  # loop node id -> its maintaining/decreases items
        self.own_types = frozenset(_text(self.src, n.child_by_field_name("name")) for n in _walk(self.tree.root_node)
                                   if n.type in ("class_declaration", "interface_declaration", "enum_declaration")
                                   and n.child_by_field_name("name") is not None)
        self.ghosts: set[str] = set()
        self.class_names: dict[int, str] = {}  # class body end byte -> the class's name
        # static pure methods whose frame check covers all they could change (see do_method); names
        # some other method of which does not qualify
        self.checked_pure: set[str] = set()
        self.unsafe_pure: set[str] = set()

    # -------------------------------------------------------------- helpers
    def edit(self, start: int, end: int, text: str) -> None:
        self.edits.append((start, end, len(self.edits), text))

    def fresh(self) -> int:
        self.n += 1
        return self.n

    def line_of(self, node) -> int:
        return node.start_point[0] + 1

    def jml_items(self, comment) -> list[tuple[str, int, object]] | None:
        raw = _text(self.src, comment)
        body = comment_text(raw)
        if body is None:
            return None
        offset = len(self.src[:comment.start_byte].decode("utf-8"))
        try:
            return ClauseScanner(body, self.line_of(comment), offset).items()
        except X.JmlSyntaxError as exc:
            scanner = ClauseScanner(body, self.line_of(comment))
            raise TranslationError(str(exc), scanner.line_at(exc.offset)) from None

    def helper(self, m: _Method, cls_end: int, clause: Clause, e: X.Node, pos: int,
               extra: dict[str, str] | None = None, ret: str = "boolean") -> str:
        """A helper method evaluating ``e``; returns the call expression.  ``extra``:
        name -> type of further parameters (``__jml_result``, ``__jml_old_x``...)."""
        extra = extra or {}
        params: list[tuple[str, str]] = []
        for name in sorted(X.free_names(e)):
            if name in extra:
                params.append((extra[name], name))
                continue
            t = m.type_of(name, pos)
            if t is not None:
                params.append((t, name))
        if isinstance(e, X.Node) and any(isinstance(x, X.Result) for x in X.walk(e)):
            if "__jml_result" not in [p[1] for p in params]:
                params.append((m.ret, "__jml_result"))
        try:
            java = X.to_java(e)
        except X.Unbounded as exc:
            raise _Unsupported(str(exc), clause.line) from None
        k = self.fresh()
        name = f"__jml_c{k}"
        static = "static " if m.static else ""
        sig = ", ".join(f"{t} {n}" for t, n in params)
        kind = clause.kind
        lit = _java_str(clause.text)
        types = {**self.fields, **{x.var: x.type for x in X.walk(e) if isinstance(x, X.Quant)},
                 **{n: t for t, n in params}}
        own = self.class_names.get(cls_end, "")
        # calls of the program's static pure methods are checked by their own frame conditions
        # (decided at the end, when every method's purity is known: apply)
        deferred = frozenset(x.name for x in X.walk(e) if isinstance(x, X.Call) and (
            x.target is None or isinstance(x.target, X.Name) and x.target.name == own))
        may_run = _may_run_code(e, types, lambda c: c.name in deferred)
        plain = (f"    private {static}{ret} {name}({sig}) {{ /*@jml:{clause.line}*/\n"
                 f"        try {{ return {java}; }}\n"
                 f"        catch (RuntimeException | StackOverflowError __jml_e) "
                 f"{{ throw {_RT}.undefined(\"{kind}\", {clause.line}, {lit}, __jml_e); }}\n    }}\n")
        if may_run or deferred:
            snap = self.snapshot(cls_end, m.static, [n for t, n in params if t not in _PRIMS])
            body = (f"    private {static}{ret} {name}({sig}) {{ /*@jml:{clause.line}*/\n"
                    f"        final {ret} __jml_v;\n"
                    f"        try {{ final {_RT}.Snapshot __jml_s = {snap}; __jml_v = {java}; "
                    f"{_RT}.same(__jml_s, \"{kind}\", {clause.line}, {lit}); }}\n"
                    f"        catch (RuntimeException | StackOverflowError __jml_e) "
                    f"{{ throw {_RT}.undefined(\"{kind}\", {clause.line}, {lit}, __jml_e); }}\n"
                    f"        return __jml_v;\n    }}\n")
            if not may_run:  # only calls of the program's own methods: plain if they all are checked pure
                body = _Deferred(deferred, body, plain)
        else:  # nothing in it can run code (no call, no string conversion): nothing to observe
            body = plain
        self.helpers.setdefault(cls_end, []).append(body)
        args = ", ".join(n for _, n in params)
        return f"{name}({args})"

    def snapshot(self, cls_end: int, static: bool, names) -> str:
        """Purity by observation (issue 42): a snapshot, before spec code runs, of what it can
        reach of the program's state: the receiver, its reference arguments and the class's
        static fields (``JmlRt.same`` after it fails the call when they changed).  Ghost fields
        are spec state: skipped (``__jml_ghosts``, one constant per class body)."""
        self.helpers.setdefault(cls_end, [])  # the class body gets its __jml_ghosts
        roots = ([] if static else ["this"]) + list(names) + [f"{self.class_names[cls_end]}.class"]
        return f"{_RT}.snap(__jml_ghosts, {', '.join(roots)})"

    # ----------------------------------------------------------------- main
    def jml_comments(self):
        """Every JML comment of the source (``//@``, ``/*@``)."""
        return [n for n in _walk(self.tree.root_node) if n.type in ("line_comment", "block_comment")
                and self.src[n.start_byte:n.start_byte + 3] in (b"//@", b"/*@")]

    def screen_comments(self, comments) -> None:
        """javac decodes ``\\u`` escapes everywhere, comments included (``\\u000a`` ends a line
        comment, ``\\u002a\\u002f`` a block comment, ``\\u0022`` a string): refused in JML."""
        for c in comments:
            raw = _text(self.src, c)
            m = re.search(r"\\u", raw)
            if m:
                raise TranslationError("Java unicode escapes (\\u) are not accepted in JML",
                                       self.line_of(c) + raw.count("\n", 0, m.start()))
            if len(raw) > X.MAX_TEXT:
                raise TranslationError(f"JML comment longer than {X.MAX_TEXT} characters", self.line_of(c))

    def blank_comments(self, comments) -> None:
        """No JML text stays in the output: each JML comment not already replaced becomes
        spaces, its line breaks kept (so javac's lines are the source's)."""
        replaced = {(s, e) for s, e, _, _ in self.edits if e > s}
        for c in comments:
            if (c.start_byte, c.end_byte) in replaced:
                continue
            if any(s < c.end_byte and e > c.start_byte for s, e in replaced):
                continue  # inside a replaced region (a model method's text)
            raw = _text(self.src, c)
            self.edits.append((c.start_byte, c.end_byte, 10 ** 9 - 1, re.sub(r"[^\n]", " ", raw)))

    def run(self, class_name: str | None = None) -> Translation:
        comments = self.jml_comments()
        self.screen_comments(comments)
        root = self.tree.root_node
        classes = [c for c in root.named_children if c.type == "class_declaration"]
        if not classes:
            raise TranslationError("no class declaration found", 1)
        main_cls = classes[0]
        if class_name:
            main_cls = next((c for c in classes if _text(self.src, c.child_by_field_name("name")) == class_name),
                            main_cls)
        for cls in classes:
            try:
                self.do_class(cls)
            except _Unsupported as exc:  # outside a method (a class invariant): the spec is not judged
                self.unsupported.append((exc.what, exc.line))
        if self.tree.root_node.has_error:
            err = _first_error(self.tree.root_node)
            raise TranslationError("Java syntax error", err.start_point[0] + 1 if err else 1)
        self.blank_comments(comments)
        branches = []
        if self.probes:
            probes = branch_probes(self.tree.root_node, self.src)
            self.edits.extend(probes.edits)
            branches = probes.branches
        out = self.apply()
        return Translation(out, _text(self.src, main_cls.child_by_field_name("name")), self.clauses,
                           self.unsupported, self.methods, branches)

    def apply(self) -> str:
        edits = list(self.edits)
        ghosts = ", ".join(_java_str(g) for g in sorted(self.ghosts))
        safe = self.checked_pure - self.unsafe_pure
        for pos, hs in self.helpers.items():
            hs = [h.plain if isinstance(h, _Deferred) and h.calls <= safe else
                  h.observed if isinstance(h, _Deferred) else h for h in hs]
            edits.append((pos, pos, 10 ** 9, "\n" + "".join(hs)
                          + f"    private static final String[] __jml_ghosts = {{{ghosts}}};\n"))
        edits.sort(key=lambda e: (e[0], e[2]))
        out, cur = [], 0
        for start, end, _, text in edits:
            if start < cur:
                raise TranslationError("overlapping edits (translator bug)", 1)
            out.append(self.src[cur:start].decode("utf-8"))
            out.append(text)
            cur = end
        out.append(self.src[cur:].decode("utf-8"))
        return "".join(out)

    def do_class(self, cls) -> None:
        body = cls.child_by_field_name("body")
        cls_end = body.end_byte - 1
        self.class_names[cls_end] = _text(self.src, cls.child_by_field_name("name"))
        for c in body.named_children:
            if c.type == "field_declaration":
                t = _text(self.src, c.child_by_field_name("type"))
                mods = next((k for k in c.children if k.type == "modifiers"), None)
                static = bool(mods and any(k.type == "static" for k in mods.children))
                for d in c.children_by_field_name("declarator"):
                    dims = d.child_by_field_name("dimensions")
                    name = _text(self.src, d.child_by_field_name("name"))
                    self.fields[name] = t + (_text(self.src, dims) if dims else "")
                    self.field_static[name] = static
        self.invariants = []
        # class invariants first: they apply to every method, wherever they stand
        for c in body.children:
            if c.type in ("line_comment", "block_comment"):
                text = comment_text(_text(self.src, c))
                if text is not None and re.search(r"\binvariant\b", text) and not re.search(r"\bmodel\b", text):
                    for it in self.jml_items(c) or ():
                        if it[0] == "invariant":
                            self.record(it[2])
                            self.invariants.append(it[2])
        pending: list = []
        for c in body.children:
            if c.type in ("line_comment", "block_comment"):
                body_text = comment_text(_text(self.src, c))
                if body_text is not None and re.search(r"\bmodel\b[^;{]*\(", body_text):
                    self.model_method(c, body_text)
                    continue
                items = self.jml_items(c)
                if items is None:
                    continue
                member_items = []
                for it in items:
                    if it[0] == "invariant":
                        pass  # collected above
                    elif it[0] == "ghost":
                        typ, name, init = it[2]
                        self.declared(name, typ, it[1])
                        if init is not None:
                            _pure(init, it[1], self.own_types)
                        self.fields[name] = typ
                        init_java = ""
                        if init is not None:
                            # guarded as spec code (issue 42): the initialiser runs in a helper whose
                            # exception is a recorded violation, not the program's exception
                            value = self.plain_java(init, it[1])
                            if isinstance(init, X.NewArray) and init.type == "?":
                                value = f"new {typ}{value}"
                            k = self.fresh()
                            self.helpers.setdefault(cls_end, []).append(
                                f"    private {typ} __jml_g{k}() {{ /*@jml:{it[1]}*/\n        final {typ} __jml_v; "
                                + self.spec_statement(f"__jml_v = {value};", "ghost", it[1],
                                                      f"ghost {typ} {name} = {X.to_jml(init)}",
                                                      self.snapshot(cls_end, False, [])
                                                      if _may_run_code(init, self.fields) else None)
                                + " return __jml_v;"
                                + "\n    }\n")
                            init_java = f" = __jml_g{k}()"
                        self.edit(c.start_byte, c.end_byte, "")
                        self.edit(c.end_byte, c.end_byte, f" {typ} {name}{init_java};")
                    elif it[0] in ("model", "constraint", "initially", "axiom", "represents"):
                        self.unsupported.append((f"class-level {it[0]}", it[1]))
                    else:
                        member_items.append(it)
                pending.extend(member_items)
                continue
            if c.type in ("method_declaration", "constructor_declaration"):
                if self.only_lines is not None and self.line_of(c) not in self.only_lines:
                    pending = []
                    continue
                try:
                    self.do_method(c, cls_end, pending)
                except _Unsupported as exc:
                    self.unsupported.append((exc.what, exc.line))
                pending = []
            elif c.type in ("class_declaration",):
                self.do_class(c)
                pending = []
            elif c.type not in ("{", "}", ";"):
                pending = []

    def model_method(self, comment, text: str) -> None:
        """A ``model`` method becomes a plain Java method (JML RM §7.1.1); its own
        spec clauses are not checked and ``assume``/``assert`` lines inside it dropped.
        The comment must hold exactly one method declaration (parsed by tree-sitter, so
        braces in strings or characters count for nothing), and no name in it may be the
        runtime's or reach it (reflection, threads: ``_FORBIDDEN``)."""
        line = self.line_of(comment)
        m = re.search(r"\bmodel\b", text)
        blank = lambda t: re.sub(r"[^\n]", " ", t)  # noqa: E731 - same layout, no text
        decl = re.sub(r"\b(pure|helper|spec_public|nullable|non_null|function)\b", lambda x: blank(x.group()),
                      text[m.end():])
        decl = re.sub(r"^(\s*)((?:assume|assert)\b[^;]*;)", lambda x: x.group(1) + blank(x.group(2)), decl,
                      flags=re.M)
        head = "class __M {\n"
        wrapped = (head + decl + "\n}").encode("utf-8")
        tree = parse_java(wrapped)
        body = tree.root_node.named_children[0].child_by_field_name("body") if tree.root_node.named_children else None
        members = [c for c in (body.named_children if body is not None else ()) if not c.type.endswith("comment")]
        if tree.root_node.has_error or len(tree.root_node.named_children) != 1 or body is None:
            err = _first_error(tree.root_node)
            at = line + (err.start_point[0] - 1 if err is not None else 0)
            raise TranslationError("model method: Java syntax error", max(line, at))
        if len(members) != 1 or members[0].type != "method_declaration" or members[0].child_by_field_name("body") is None:
            raise TranslationError("a model method comment must hold exactly one method with a body", line)
        for n in _walk(members[0]):
            if n.type in ("identifier", "type_identifier"):
                name = wrapped[n.start_byte:n.end_byte].decode("utf-8")
                if _runtime_name(name) or name in _FORBIDDEN:
                    raise TranslationError(f"model method: {name!r} is not allowed in a specification (the "
                                           "checker's runtime, reflection, threads or processes)",
                                           line + n.start_point[0] - 1)
        # javac gets the tokens tree-sitter read and screened, re-printed (issue 42), never the answer's text
        lo = members[0].start_byte - len(head)
        hi = members[0].end_byte - len(head)
        dec = decl.encode("utf-8")
        java = blank(dec[:lo].decode("utf-8")) + reprint(wrapped, members[0]) + blank(dec[hi:].decode("utf-8"))
        self.edit(comment.start_byte, comment.end_byte, blank(text[:m.end()]) + java)

    def declared(self, name: str, typ: str, line: int) -> None:
        """A ghost or old variable: not named like the runtime (it would shadow it)."""
        for part in [name] + re.findall(r"[A-Za-z_$][\w$]*", typ):
            if _runtime_name(part):
                raise TranslationError(f"a declaration named like the checker's runtime ({part})", line)
            if part in _FORBIDDEN:
                raise TranslationError(f"{part!r} is not allowed in a specification", line)
        self.ghosts.add(name)

    def ghost_target(self, e: X.Node, line: int) -> None:
        """``set`` assigns ghost variables only (JML RM §13.4.4); its value is pure."""
        target, value = e, None
        if isinstance(e, X.Binary) and e.op.endswith("=") and e.op not in ("==", "!=", "<=", ">="):
            target, value = e.left, e.right
        elif isinstance(e, (X.Unary, X.Postfix)) and e.op in ("++", "--"):
            target = e.expr
        if not (isinstance(target, X.Name) and target.name in self.ghosts):
            # an element or field write goes through a reference the program may share
            # (``ghost int[] g = a; set g[0] = key;`` writes the input: issue 42)
            raise TranslationError("set may only assign a whole ghost variable (not an element or a field of one)",
                                   line)
        if value is not None:
            _pure(value, line, self.own_types)
        _screen(e, line, self.own_types)

    def plain_java(self, e: X.Node, line: int) -> str:
        _no_runtime_names(e, line, ("specbench", "JmlRt"))
        _screen(e, line, self.own_types)
        return self.to_java(e, line)

    @staticmethod
    def to_java(e: X.Node, line: int) -> str:
        try:
            return X.to_java(e)
        except X.Unbounded as exc:
            raise _Unsupported(str(exc), line) from None

    def record(self, c: Clause) -> None:
        self.clauses.append(c)
        if c.expr is not None:
            _no_runtime_names(c.expr, c.line, ("specbench", "JmlRt", "__jml"))
            _screen(c.expr, c.line, self.own_types)
            _pure(c.expr, c.line, self.own_types)
            olds = [x for x in X.walk(c.expr) if isinstance(x, X.Old)]
            if olds and c.kind in ("requires", "invariant"):
                raise TranslationError(f"\\old in a {c.kind} clause (it is evaluated in the pre-state)", c.line)
            if any(isinstance(y, X.Old) for o in olds for y in X.walk(o.expr)):
                raise TranslationError("\\old inside \\old", c.line)
        for u in X.unsupported(c.expr) if c.expr is not None else ():
            raise _Unsupported(u, c.line)

    # ---------------------------------------------------------------- methods
    def do_method(self, node, cls_end: int, items) -> None:
        m = _Method(node, self.src)
        self.methods.setdefault(m.name, []).append(
            {"params": [(p.type, p.name) for p in m.params], "ret": m.ret, "static": m.static, "ctor": m.is_ctor,
             "private": bool(re.search(r"\bprivate\b", m.mod_text))})
        cases, unsup = spec_cases(items)
        self.unsupported.extend(unsup)
        if m.body is None:
            return
        for case in cases:
            for c in case.clauses:
                if c.expr is not None and c.kind != "old":
                    self.record(c)
        entry = m.body.start_byte
        pre_pos = m.params[-1].pos + 1 if m.params else entry
        ctor_first = None
        if m.is_ctor:
            first = next((s for s in m.body.named_children if s.type == "explicit_constructor_invocation"), None)
            ctor_first = first
        lines: list[str] = ["try {"]
        # non-null reference parameters (JML's default)
        for p in m.params if self.non_null else ():
            if p.type not in _PRIMS and p.name not in m.nullable_params:
                lines.append(f"{_RT}.check({p.name} != null, \"requires\", {self.line_of(node)}, "
                             f"\"{p.name} != null (non_null by default)\");")
        flags = []
        for i, case in enumerate(cases):
            reqs = case.of("requires")
            flag = f"__jml_pre{i}"
            flags.append(flag)
            if not reqs:
                lines.append(f"final boolean {flag} = true;")
                continue
            calls = [self.helper(m, cls_end, c, c.expr, pre_pos) for c in reqs]
            if len(cases) == 1:
                lines.append(f"final boolean {flag} = true;")
                for c, call in zip(reqs, calls):
                    lines.append(f"{_RT}.check({call}, \"requires\", {c.line}, {_java_str(c.text)});")
            else:
                lines.append(f"final boolean {flag} = " + " && ".join(calls) + ";")
        if len(cases) > 1:
            first = next((c for case in cases for c in case.of("requires")), None)
            line = first.line if first else self.line_of(node)
            lines.append(f"if (!({' || '.join(flags)})) throw {_RT}.raise(\"requires\", {line}, "
                         f"\"no spec case's requires holds\", \"\");")
        # pre-state: parameters, \old snapshots, old declarations
        posts = [c for case in cases for c in case.clauses if c.kind in ("ensures", "signals")]
        # \old(e) reading object state (a call, this, a field of an object) is evaluated at entry
        # (snapshots of e's free variables would miss that state)
        entry_values: list[tuple[str, X.Node, Clause]] = []
        lifted: dict[int, X.Node] = {}
        for c in posts:
            if c.kind == "ensures" and c.expr is not None:
                new = _lift_state_olds(c.expr, lambda ex, c=c: self._entry_value(entry_values, ex, c))
                if new is not c.expr:
                    lifted[id(c)] = new
        olds: dict[str, str] = {}
        for c in posts:
            for name in X.free_names(_transform_olds(lifted.get(id(c), c.expr))):
                if name.startswith("__jml_old_"):
                    base = name[len("__jml_old_"):]
                    t = m.type_of(base, pre_pos) or self.fields.get(base)
                    if t is not None:
                        olds[base] = t
        # \old also may appear in loop invariants and asserts of the body
        if m.body is not None:
            for name, t in self.body_olds(m):
                olds.setdefault(name, t)
        for p in m.params:
            lines.append(f"final {p.type} __jml_pre_{p.name} = {p.name};")
        for name, t in olds.items():
            lines.append(f"final {t} __jml_old_{name} = {_RT}.old({name});")
        pnames = {p.name for p in m.params}
        for name, ex, c in entry_values:
            # screened as written, then renamed: the translator's own names never trip its own check (issue 42)
            self.plain_java(ex, c.line)
            java = self.to_java(_rename_state(ex, pnames, "__jml_pre_{}"), c.line)
            snap = self.snapshot(cls_end, m.static, [p.name for p in m.params if p.type not in _PRIMS])
            lines.append(f"final {_RT}.Snapshot {name}_s = {snap}; "
                         f"final var {name} = {_RT}.oldv(() -> ({java}), {c.line}, {_java_str(c.text)}); "
                         f"{_RT}.same({name}_s, \"ensures\", {c.line}, {_java_str(c.text)}); /*@jml:{c.line}*/")
        old_decls: dict[str, str] = {}
        for i, case in enumerate(cases):
            for c in case.of("old"):
                t, name = c.extra["type"], c.extra["name"]
                self.declared(name, t, c.line)
                if c.expr is not None:
                    _no_runtime_names(c.expr, c.line, ("specbench", "JmlRt", "__jml"))
                    _screen(c.expr, c.line, self.own_types)
                    _pure(c.expr, c.line, self.own_types)
                val = self.helper(m, cls_end, Clause("old", c.line, c.text, c.expr), c.expr, pre_pos,
                                  dict(old_decls), ret=t)
                if name in old_decls:
                    lines.append(f"{name} = __jml_pre{i} ? {val} : {name};")
                else:
                    lines.append(f"{t} {name} = __jml_pre{i} ? {val} : {_default(t)};")
                    old_decls[name] = t
        # frame conditions (JML RM §9.9.9), whole variables only: a case with ``assignable`` clauses (or a
        # ``pure`` method: assignable \nothing) may not change array parameters or fields it does not name
        frame_checks = []
        pure = bool(re.search(r"\bpure\b", self.pure_text(node))) or any(it[0] == "pure" for it in items)
        # a static pure method with primitive (or primitive array) parameters, in a class whose static
        # fields are primitive (or primitive arrays), checked by its frame (assignable \nothing, below)
        # at every call: spec code calling it needs no snapshot of its own (PrimeNumbers' div)
        prim = lambda t: t.replace("[]", "").strip() in _PRIMS  # noqa: E731
        if (self.only_lines is None and m.static and pure and not m.is_ctor
                and not any(case.of("assignable") for case in cases)
                and all(prim(p.type) for p in m.params)
                and all(prim(t) for f, t in self.fields.items() if self.field_static.get(f))):
            self.checked_pure.add(m.name)
        else:
            self.unsafe_pure.add(m.name)
        if not m.is_ctor:
            for i, case in enumerate(cases or [SpecCase()]):
                assigns = case.of("assignable")
                if not assigns and not pure:
                    continue
                text = " ".join(a.text for a in assigns)
                if "\\everything" in text:
                    continue
                named = set(re.findall(r"[A-Za-z_$][\w$]*", re.sub(r"\\\w+", " ", text))) - {"this"}
                line = assigns[0].line if assigns else self.line_of(node)
                what = _java_str(f"assignable {text}" if assigns else "pure: assignable \\nothing")
                flag = f"__jml_pre{i}" if cases else "true"
                frame = [(p.name, p.type) for p in m.params if p.type.endswith("]") and p.name not in named]
                frame += [(f, t) for f, t in self.fields.items() if f not in named and f in self.field_static
                          and (self.field_static[f] or not m.static)]
                for name, t in frame:
                    snap = f"__jml_frame{i}_{name}"
                    lines.append(f"final {t} {snap} = {flag} ? {_RT}.old({name}) : null;" if not t in _PRIMS
                                 else f"final {t} {snap} = {name};")
                    frame_checks.append(f"if ({flag}) {_RT}.check(java.util.Objects.deepEquals({snap}, {name}), "
                                        f"\"assignable\", {line}, {what[:-1]} ({name} changed)\");")
        # class invariants (JML RM §8.2): at entry of non-private instance methods, at exit of those and
        # of constructors; not for static methods or helper methods
        inv_checks = []
        if not m.static and "private" not in m.mod_text and "helper" not in m.mod_text:
            for c in self.invariants:
                call = self.helper(m, cls_end, c, c.expr, pre_pos, {})
                inv_checks.append(f"{_RT}.check({call}, \"invariant\", {c.line}, {_java_str(c.text)});")
        if not m.is_ctor:
            lines.extend(inv_checks)
        void = m.ret == "void"
        if not void:
            lines.append(f"{m.ret} __jml_result;")
        lines.append("try { __jml_body: {")
        prefix = "\n".join(lines)
        # postconditions
        post: list[str] = []
        ensure_extra = {"__jml_result": m.ret}
        ensure_extra.update({f"__jml_old_{n}": t for n, t in olds.items()})
        ensure_extra.update(old_decls)
        params = {p.name for p in m.params}
        inline_result = False
        for i, case in enumerate(cases):
            checks = []
            for c in case.of("ensures"):
                if id(c) in lifted:
                    # the clause reads entry values declared with ``var`` (types javac infers):
                    # checked in a lambda at the exit instead of a helper method with typed parameters
                    e = self.post_expr(lifted[id(c)], params)
                    e = _rename_state(e, params, "__jml_pre_{}")
                    try:
                        java = X.to_java(e, lambda n: "__jml_rv" if isinstance(n, X.Result) else None)
                    except X.Unbounded as exc:
                        raise _Unsupported(str(exc), c.line) from None
                    inline_result = inline_result or any(isinstance(x, X.Result) for x in X.walk(e))
                    lit = _java_str(c.text)
                    roots = [p.name for p in m.params if p.type not in _PRIMS]
                    roots += [] if void or m.ret in _PRIMS else ["__jml_result"]
                    snap = self.snapshot(cls_end, m.static, roots)
                    post.append(f"if (__jml_pre{i}) {{ final {_RT}.Snapshot __jml_s = {snap}; "
                                f"{_RT}.check(((java.util.function.BooleanSupplier) () -> {{ "
                                f"try {{ return {java}; }} catch (RuntimeException | StackOverflowError __jml_e) "
                                f"{{ throw {_RT}.undefined(\"ensures\", {c.line}, {lit}, __jml_e); }} }})"
                                f".getAsBoolean(), \"ensures\", {c.line}, {lit}); "
                                f"{_RT}.same(__jml_s, \"ensures\", {c.line}, {lit}); }} /*@jml:{c.line}*/")
                    continue
                e = self.post_expr(c.expr, params)
                call = self.helper(m, cls_end, c, e, pre_pos, ensure_extra)
                call = self.pre_args(call, params)
                checks.append(f"{_RT}.check({call}, \"ensures\", {c.line}, {_java_str(c.text)});")
            if self.non_null and not void and m.ret not in _PRIMS and not m.is_ctor and "nullable" not in m.mod_text:
                checks.append(f"{_RT}.check(__jml_result != null, \"ensures\", {self.line_of(node)}, "
                              f"\"\\\\result != null (non_null by default)\");")
            if checks:
                post.append(f"if (__jml_pre{i}) {{ " + " ".join(checks) + " }")
        # exceptions
        exc: list[str] = []
        for i, case in enumerate(cases):
            sig_only = case.of("signals_only")
            sigs = case.of("signals")
            body = []
            if case.behavior == "normal":
                body.append(f"throw {_RT}.raise(\"signals\", {case.line}, \"normal_behavior: no exception allowed\", "
                            f"__jml_exc.getClass().getName());")
            else:
                for so in sig_only:
                    types = so.extra["types"]
                    test = " || ".join(f"__jml_exc instanceof {t}" for t in types) or "false"
                    body.append(f"if (!({test})) throw {_RT}.raise(\"signals_only\", {so.line}, "
                                f"{_java_str(so.text or chr(92) + 'nothing')}, __jml_exc.getClass().getName());")
                for s in sigs:
                    t, var = s.extra["type"], s.extra["var"]
                    e = self.post_expr(s.expr, params)
                    extra = dict(ensure_extra)
                    if var:
                        extra[var] = t
                    call = self.pre_args(self.helper(m, cls_end, s, e, pre_pos, extra), params)
                    bind = f"final {t} {var} = ({t}) __jml_exc; " if var else ""
                    body.append(f"if (__jml_exc instanceof {t}) {{ {bind}{_RT}.check({call}, \"signals\", "
                                f"{s.line}, {_java_str(s.text)}); }}")
                if sig_only or sigs or case.behavior == "exceptional":
                    body.append(f"{_RT}.allowed();")
            if body:
                exc.append(f"if (__jml_pre{i}) {{ " + " ".join(body) + " }")
        if inline_result and not void:
            post.insert(0, f"final {m.ret} __jml_rv = __jml_result;")
        post.extend(frame_checks)
        post.extend(inv_checks)
        suffix = ("} } catch (final Throwable __jml_exc) { if (!(__jml_exc instanceof specbench.jml.JmlViolation)) { "
                  + " ".join(exc) + " } throw __jml_exc; }\n" + "\n".join(post)
                  + ("" if void else "\nreturn __jml_result;") + "\n} finally { }\n")
        # returns inside the body
        self.rewrite_returns(m.body, void)
        self.do_block(m, cls_end, m.body)
        if ctor_first is not None:
            self.edit(ctor_first.end_byte, ctor_first.end_byte, "\n" + prefix + "\n")
        else:
            self.edit(entry + 1, entry + 1, "\n" + prefix + "\n")
        self.edit(m.body.end_byte - 1, m.body.end_byte - 1, "\n" + suffix)

    def _entry_value(self, entry_values: list, ex: X.Node, c: Clause) -> X.Node:
        name = f"__jml_s{self.fresh()}"
        entry_values.append((name, ex, c))
        return X.Name(name)

    def pure_text(self, node) -> str:
        """JML modifiers written in comments inside the declaration's modifiers (``/*@ pure @*/``)."""
        mods = next((c for c in node.children if c.type == "modifiers"), None)
        out = [_text(self.src, c) for c in (mods.children if mods else ()) if c.type.endswith("comment")]
        # comments between the modifiers and the name (public /*@ pure @*/ int f())
        for c in node.children:
            if c.type.endswith("comment"):
                out.append(_text(self.src, c))
        return " ".join(x for x in out if x.startswith(("/*@", "//@")))

    def body_olds(self, m: _Method):
        out = []
        for c in _walk(m.body):
            if c.type in ("line_comment", "block_comment") and "\\old" in _text(self.src, c):
                for kw, line, payload in self.jml_items(c) or ():
                    if isinstance(payload, Clause):
                        for o in (x for x in X.walk(payload.expr) if isinstance(x, X.Old)):
                            for name in X.free_names(o.expr):
                                t = m.type_of(name, m.body.start_byte) or self.fields.get(name)
                                if t:
                                    out.append((name, t))
        return out

    @staticmethod
    def post_expr(e: X.Node, params: set[str]) -> X.Node:
        """``\\old(e)`` -> e on snapshots; plain parameters stay (passed their pre-state values)."""
        def fn(n):
            if isinstance(n, X.Old):
                names = X.free_names(n.expr)
                return _rename_state(n.expr, names, "__jml_old_{}")
            return None
        return _transform_olds(e, fn)

    @staticmethod
    def pre_args(call: str, params: set[str]) -> str:
        """Pass parameters' pre-state values (JML RM §11.1) to a postcondition helper."""
        name, _, args = call.partition("(")
        args = args[:-1]
        new = [f"__jml_pre_{a}" if a in params else a for a in (x.strip() for x in args.split(",")) if a]
        return f"{name}({', '.join(new)})"

    def rewrite_returns(self, node, void: bool) -> None:
        for c in node.children:
            if c.type in ("lambda_expression", "class_body"):
                continue
            if c.type == "return_statement":
                kw = c.children[0]
                semi = c.children[-1]
                if void or len(c.named_children) == 0:
                    self.edit(c.start_byte, c.end_byte, "break __jml_body;")
                else:
                    self.edit(kw.start_byte, kw.end_byte, "{ __jml_result = (")
                    self.edit(semi.start_byte, semi.end_byte, "); break __jml_body; }")
                    self.rewrite_returns(c, void)
                continue
            self.rewrite_returns(c, void)

    # ----------------------------------------------------------------- bodies
    def old_rename(self, e: X.Node) -> X.Node:
        return _transform_olds(e, lambda n: _rename_state(n.expr, X.free_names(n.expr), "__jml_old_{}")
                               if isinstance(n, X.Old) else None)

    def do_block(self, m: _Method, cls_end: int, node) -> None:
        kids = node.children
        for idx, c in enumerate(kids):
            if c.type in ("line_comment", "block_comment"):
                try:
                    items = self.jml_items(c)
                except TranslationError:
                    raise
                if items is None:
                    continue
                stmts, loop_items = [], []
                for kw, line, payload in items:
                    if kw in ("maintaining", "decreases"):
                        loop_items.append((kw, line, payload))
                    elif kw in ("assert", "assume"):
                        self.record(payload)
                        e = self.old_rename(payload.expr)
                        call = self.helper(m, cls_end, payload, e, c.start_byte, dict(self._old_types(m, e)))
                        stmts.append(f"{_RT}.check({call}, \"{kw}\", {line}, {_java_str(payload.text)});")
                    elif kw == "ghost":
                        typ, name, init = payload
                        self.declared(name, typ, line)
                        if init is not None:
                            _pure(init, line, self.own_types)
                        m.locals.append(_Var(name, typ, c.start_byte))
                        if init is None:
                            stmts.append(f"{typ} {name};")
                        else:
                            value = self.plain_java(self.old_rename(init), line)
                            if isinstance(init, X.NewArray) and init.type == "?":
                                value = f"new {typ}{value}"
                            snap = (self.snapshot(cls_end, m.static, self.statement_roots(m, init, c.start_byte))
                                    if _may_run_code(init, self.var_types(m)) else None)
                            stmts.append(f"{typ} {name}; " + self.spec_statement(
                                f"{name} = {value};", "ghost", line, f"ghost {typ} {name} = {X.to_jml(init)}", snap))
                    elif kw == "set":
                        self.ghost_target(payload, line)
                        e = self.old_rename(payload)
                        if isinstance(e, X.Binary) and e.op.endswith("=") and e.op not in ("==", "!=", "<=", ">="):
                            stmt = f"{self.plain_java(e.left, line)} {e.op} {self.plain_java(e.right, line)};"
                        elif isinstance(e, (X.Postfix, X.Unary)) and e.op in ("++", "--"):
                            stmt = self.plain_java(e, line)[1:-1] + ";"
                        else:
                            stmt = self.plain_java(e, line) + ";"
                        snap = (self.snapshot(cls_end, m.static, self.statement_roots(m, payload, c.start_byte))
                                if _may_run_code(payload, self.var_types(m)) else None)
                        stmts.append(self.spec_statement(stmt, "set", line, "set " + X.to_jml(payload), snap))
                    elif kw in ("invariant", "model"):
                        self.unsupported.append((kw, line))
                    # modifiers, assignable etc.: nothing to run
                if loop_items:
                    loop = next((k for k in kids[idx + 1:] if k.type not in ("line_comment", "block_comment")), None)
                    target = loop
                    while target is not None and target.type == "labeled_statement":
                        target = target.named_children[-1]
                    if target is None or target.type not in _LOOPS:
                        raise _Unsupported("loop specification not followed by a loop", loop_items[0][1])
                    self._loop_specs.setdefault(target.id, []).extend(loop_items)
                if stmts:
                    text = f"/*@jml:{items[0][1]}*/ " + " ".join(stmts)
                    if node.type in ("block", "constructor_body", "switch_block_statement_group", "program"):
                        self.edit(c.start_byte, c.end_byte, text)
                    else:  # e.g. the body of a brace-less loop: make a block of it and the next statement
                        nxt = next((k for k in kids[idx + 1:] if k.type not in ("line_comment", "block_comment")
                                    and k.is_named), None)
                        if nxt is None:
                            raise _Unsupported("JML statement with no statement after it", c.start_point[0] + 1)
                        self.edit(c.start_byte, c.end_byte, "{ " + text)
                        self.edit(nxt.end_byte, nxt.end_byte, " }")
                else:
                    self.edit(c.start_byte, c.end_byte, "")
                continue
            if c.type in _LOOPS:
                self.do_loop(m, cls_end, c, node)
                continue
            if c.type in ("lambda_expression", "class_body"):
                continue
            self.do_block(m, cls_end, c)

    def var_types(self, m: _Method) -> dict[str, str]:
        return {**self.fields, **{v.name: v.type for v in m.params + m.locals}}

    def spec_statement(self, stmt: str, kind: str, line: int, text: str, snap: str | None) -> str:
        """A ghost initialiser or ``set`` statement, guarded as spec code (issue 42): an exception
        it raises is the clause being undefined (a recorded violation), never the program's
        exception for ``signals`` to allow; what it changes of the program's state (``snap``:
        :meth:`snapshot`; None when it cannot run code) fails the call."""
        k = self.fresh()
        lit = _java_str(text)
        observe = ("", "") if snap is None else (f"final {_RT}.Snapshot __jml_s{k} = {snap}; ",
                                                 f"{_RT}.same(__jml_s{k}, \"{kind}\", {line}, {lit}); ")
        return (f"try {{ {observe[0]}{stmt} {observe[1]}}} "
                f"catch (RuntimeException | StackOverflowError __jml_g{k}) "
                f"{{ throw {_RT}.undefined(\"{kind}\", {line}, {lit}, __jml_g{k}); }}")

    def statement_roots(self, m: _Method, e: X.Node, pos: int) -> list[str]:
        """The program's references a body-level ghost statement could reach: the method's
        reference parameters and the reference variables it names (not ghosts)."""
        names = [p.name for p in m.params if p.type not in _PRIMS]
        for n in sorted(X.free_names(e)):
            t = m.type_of(n, pos)
            if t is not None and t not in _PRIMS and n not in names and n not in self.ghosts:
                names.append(n)
        return names

    def _old_types(self, m: _Method, e: X.Node):
        for name in X.free_names(e):
            if name.startswith("__jml_old_"):
                base = name[len("__jml_old_"):]
                t = m.type_of(base, m.body.start_byte) or self.fields.get(base)
                if t:
                    yield name, t

    def do_loop(self, m: _Method, cls_end: int, loop, parent) -> None:
        specs = self._loop_specs.pop(loop.id, [])
        self.do_block(m, cls_end, loop)  # the body first: its own loops and JML statements
        if not specs:
            return
        cond_pos = loop.start_byte
        if loop.type == "for_statement":
            cond = loop.child_by_field_name("condition")
            cond_pos = cond.start_byte if cond is not None else loop.start_byte
        invs, decs = [], []
        for kw, line, c in specs:
            self.record(c)
            e = self.old_rename(c.expr)
            extra = {n: t for n, t in self._old_types(m, e)}
            if kw == "maintaining":
                call = self.helper(m, cls_end, c, e, cond_pos, extra)
                invs.append(f"{_RT}.inv({call}, {line}, {_java_str(c.text)})")
            else:
                call = self.helper(m, cls_end, c, e, cond_pos, extra, ret="long")
                decs.append((call, line, c.text))
        k = self.fresh()
        dec_text = [f"{_RT}.t(__jml_d{k}_{i} = {_RT}.dec(__jml_d{k}_{i}, {call}, {line}, {_java_str(text)}))"
                    for i, (call, line, text) in enumerate(decs)]
        wrap_node = parent if parent is not None and parent.type == "labeled_statement" else loop
        if decs:
            decl = " ".join(f"long __jml_d{k}_{i} = Long.MIN_VALUE;" for i in range(len(decs)))
            self.edit(wrap_node.start_byte, wrap_node.start_byte, "{ " + decl + " ")
            self.edit(wrap_node.end_byte, wrap_node.end_byte, " }")
        inv = " && ".join(invs) or "true"
        dec = " && ".join(dec_text) or "true"
        if loop.type == "enhanced_for_statement":
            body = loop.child_by_field_name("body")
            self.edit(body.start_byte, body.start_byte, f"{{ if ({inv} && {dec}) {{}} ")
            self.edit(body.end_byte, body.end_byte, " }")
            return
        cond = loop.child_by_field_name("condition")
        if cond is None:  # for (;;)
            semis = [c for c in loop.children if c.type == ";"]
            at = semis[0].end_byte if semis else loop.start_byte
            self.edit(at, at, f" {inv} && {dec} ")
            return
        inner = cond
        if cond.type == "parenthesized_expression":
            inner = cond.named_children[0]
        self.edit(inner.start_byte, inner.start_byte, f"{inv} && (")
        self.edit(inner.end_byte, inner.end_byte, f") && {dec}")


@dataclass(frozen=True)
class _Deferred:
    """A clause helper whose only calls are of the program's own methods (``calls``): ``plain``
    when they are all checked pure methods (known at the end of the translation), else ``observed``."""
    calls: frozenset
    observed: str
    plain: str


def _may_run_code(e: X.Node, types: dict[str, str], checked=lambda call: False) -> bool:
    """Can evaluating ``e`` run code that changes state?  A call or a method reference can; so
    can ``+`` when it may convert an object to a string (``toString``): an operand that is a
    string literal or names a variable not known to be of a primitive type (or an array of
    them).  Operators, indexing, field reads and quantifiers alone cannot (assignments do
    not parse, ``++``/``--`` are refused): their helpers skip the purity snapshot."""
    nodes = list(X.walk(e))
    if any(isinstance(x, X.MethodRef) or isinstance(x, X.Call) and not checked(x) for x in nodes):
        return True
    if not any(isinstance(x, X.Binary) and x.op == "+" for x in nodes):
        return False
    for x in nodes:
        if isinstance(x, X.Lit) and x.text.startswith('"'):
            return True
        if isinstance(x, X.Name) and types.get(x.name, "").rstrip("[]") not in _PRIMS:
            return True
        if isinstance(x, X.Field) and x.name != "length":
            return True
    return False


def _reads_object_state(e: X.Node) -> bool:
    """Does ``e`` read state that entry snapshots of its free variables miss (a
    method call, ``this``/``super``, a field of an object other than an array's length)?"""
    for x in X.walk(e):
        if isinstance(x, X.Call) or (isinstance(x, X.Lit) and x.text in ("this", "super")):
            return True
        if isinstance(x, X.Field) and x.name != "length":
            return True
    return False


def _lift_state_olds(e: X.Node, lift, bound: frozenset = frozenset()) -> X.Node:
    """Replace each ``\\old(e)`` that reads object state and names no quantifier-bound
    variable by ``lift(e)`` (a name for its value computed at entry)."""
    if isinstance(e, X.Old):
        if _reads_object_state(e.expr) and not (X.free_names(e.expr) & bound):
            return lift(e.expr)
        return e
    from dataclasses import replace
    bound = bound | X.binds(e)
    changes = {}
    for k, v in vars(e).items():
        if isinstance(v, X.Node):
            new = _lift_state_olds(v, lift, bound)
            if new is not v:
                changes[k] = new
        elif isinstance(v, tuple) and any(isinstance(x, X.Node) for x in v):
            new_t = tuple(_lift_state_olds(x, lift, bound) if isinstance(x, X.Node) else x for x in v)
            if any(a is not b for a, b in zip(new_t, v)):
                changes[k] = new_t
    return replace(e, **changes) if changes else e


def _transform_olds(e: X.Node, fn=None, bound: frozenset = frozenset()) -> X.Node:
    """Replace each ``\\old(e)`` by ``e`` on entry snapshots (``__jml_old_<v>``) of
    its free variables (not those bound by an enclosing quantifier)."""
    if isinstance(e, X.Old):
        return _rename_state(e.expr, X.free_names(e.expr) - bound, "__jml_old_{}")
    from dataclasses import replace
    bound = bound | X.binds(e)
    changes = {}
    for k, v in vars(e).items():
        if isinstance(v, X.Node):
            changes[k] = _transform_olds(v, fn, bound)
        elif isinstance(v, tuple) and any(isinstance(x, X.Node) for x in v):
            changes[k] = tuple(_transform_olds(x, fn, bound) if isinstance(x, X.Node) else x for x in v)
    return replace(e, **changes) if changes else e


def _no_runtime_names(e: X.Node, line: int, prefixes: tuple[str, ...]) -> None:
    """A specification naming the checker's runtime or generated code could
    record branches or steer the checks: refused (never silently run)."""
    for n in X.walk(e):
        name = getattr(n, "name", None) if isinstance(n, (X.Name, X.Field, X.Call)) else None
        if isinstance(name, str) and name.startswith(prefixes):
            raise _Unsupported(f"a name of the checker's own runtime ({name})", line)


def _screen(e: X.Node, line: int, own_types=frozenset()) -> None:
    """No name of the runtime, reflection, threads or processes anywhere in ``e`` (types of
    casts and ``new`` included), and no declared variable named like the runtime."""
    for n in X.walk(e):
        names: list[str] = []
        if isinstance(n, (X.Name, X.Field, X.Call, X.MethodRef)):
            names.append(n.name)
        if isinstance(n, (X.Cast, X.InstanceOf, X.NewArray)):
            names.append(n.type)
        if isinstance(n, X.Quant):
            names += [n.type, n.var]
        if isinstance(n, X.Lambda):
            names += list(n.params)
        for name in names:
            for part in re.findall(r"[A-Za-z_$][\w$]*", name):
                if _runtime_name(part):
                    raise _Unsupported(f"a name of the checker's own runtime ({part})", line)
                if part in _FORBIDDEN or (part == "class" and isinstance(n, X.Field)):
                    raise TranslationError(f"{part!r} is not allowed in a specification (not pure: reflection, threads or "
                                           "processes)", line)


def _pure(e: X.Node, line: int, own_types=frozenset()) -> None:
    """Specification expressions are pure (JML RM §7.1.1.3): no ``++``/``--`` (assignments do
    not parse), no call of a library method that changes its receiver or arguments."""
    for n in X.walk(e):
        if isinstance(n, (X.Unary, X.Postfix)) and n.op in ("++", "--"):
            raise TranslationError(f"not pure: {n.op} in a specification expression", line)
        if isinstance(n, (X.Call, X.MethodRef)) and n.target is not None and n.name in _MUTATORS:
            t = n.target
            if isinstance(t, X.Lit) and t.text in ("this", "super"):
                continue
            if isinstance(t, X.Name) and t.name in own_types:
                continue
            raise TranslationError(f"not pure: {n.name}(...) may change its receiver or arguments", line)
        if isinstance(n, (X.Call, X.MethodRef)) and n.target is not None and re.match(r"set[A-Z]", n.name):
            raise TranslationError(f"not pure: {n.name}(...) may change its receiver", line)


def _first_error(node):
    for n in _walk(node):
        if n.type == "ERROR" or n.is_missing:
            return n
    return None


def _java_str(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", " ") + '"'


def translate(source: str, class_name: str | None = None, probes: bool = True, *, only_lines=None,
              non_null: bool = True) -> Translation:
    """Translate JML-annotated Java ``source``; raises :class:`TranslationError`
    for a JML or Java syntax error (with its line).  ``probes``: with branch
    probes in the program's code (:mod:`.coverage`).  ``only_lines``: instrument only
    the methods whose declarations start on these lines (1-based; the others are
    left as written); ``non_null=False``: no JML non-null defaults (§6.2.10) for
    reference parameters and results (PostcondBench injects ``ensures`` only)."""
    try:
        source = normalise_source(source)
    except LexicalError as exc:
        raise TranslationError(exc.reason + f" (column {exc.column})", exc.line) from None
    return Translator(source, probes, only_lines, non_null).run(class_name)
