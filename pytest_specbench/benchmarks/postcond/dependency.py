"""Table 3 / §5.4 "Dependency Complexity" of PostcondBench, after Yu et al. (CoderEval,
ICSE 2024): a method is *standalone* (Solo.) if it runs with only built-in types and
the standard library (CoderEval's self-contained and slib-runnable levels), otherwise
non-standalone (Dep.: plib-, class-, file- or project-runnable).  Upstream's released
task files carry no label, so it is derived from what the method itself reaches: its
body, decorators and defaults, never the rest of its file (an unused import of the file
does not make a method Dep, a call of a sibling function or a use of its instance does).

Levels, least dependent first: ``builtin``, ``stdlib``, ``third-party``, ``file`` (a
function, class, type or variable of the file or its package), ``class`` (its instance,
``self``/``this``, or a member of its class); the most dependent level reached wins.
"""
from __future__ import annotations

import ast
import builtins
import sys
from typing import Any

LEVELS = ("builtin", "stdlib", "third-party", "file", "class")
STANDALONE = ("builtin", "stdlib")


def is_standalone(file_text: str, name: str | None = None, start_line: int | None = None) -> bool:
    """Table 3 / §5.4 "Dependency Complexity", after Yu et al. (CoderEval): a method is
    *standalone* (Solo.) if it runs with only built-in types and the standard library
    (CoderEval's self-contained and slib-runnable levels), otherwise non-standalone
    (Dep.: plib-, class-, file- or project-runnable).  Upstream's released task files
    carry no such label, so it is derived here from what the method itself reaches
    (:func:`dependency_level`): ``"builtin"`` or ``"stdlib"`` is Solo.  A task's own
    ``standalone`` field, when present, wins (the adapter)."""
    return dependency_level(file_text, name, start_line) in STANDALONE


def dependency_level(file_text: str, name: str | None = None, start_line: int | None = None) -> str:
    """CoderEval's runnable level of the method ``name`` defined at ``start_line`` (its
    ``def`` line, 1-based) of ``file_text``, from the names its body, decorators and
    defaults reach: ``"class"`` (its first parameter, ``self``/``cls``, its class's
    name, or ``super``), ``"file"`` (a function, class or variable of the file's module level, or a
    name the file imports relatively), ``"third-party"`` (a module outside
    ``sys.stdlib_module_names``, imported by the file or in the method), ``"stdlib"``
    or ``"builtin"``.  The most dependent level found wins; a name bound nowhere
    (e.g. by a ``*`` import) is ``"file"``.  Without ``name`` or when the method is not
    found, the whole file's imports decide (the previous, file-level rule: ``"stdlib"``
    or ``"third-party"``/``"file"``)."""
    try:
        tree = ast.parse(file_text)
    except SyntaxError:
        return "file"

    def module_level(module: str | None, level: int) -> str:
        if level or not module:
            return "file"
        return "stdlib" if module.split(".")[0] in sys.stdlib_module_names else "third-party"

    found = _find_method(tree, name, start_line) if name else None
    if found is None:
        levels = [module_level(n, 0) for node in ast.walk(tree) if isinstance(node, ast.Import) for n in
                  (a.name for a in node.names)]
        levels += [module_level(node.module, node.level) for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)]
        return max(levels, key=LEVELS.index, default="stdlib")
    method, owner = found
    # what the file's module level binds, and where each name comes from
    module_names: dict[str, str] = {}
    for node in tree.body:
        for bound, level in _bindings(node, module_level):
            module_names.setdefault(bound, level)
    args = method.args
    params = [a.arg for a in args.posonlyargs + args.args + args.kwonlyargs] + \
        [a.arg for a in (args.vararg, args.kwarg) if a]
    is_static = any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in method.decorator_list)
    instance = params[0] if owner is not None and params and not is_static else None
    reached = list(method.body) + list(method.decorator_list) + list(args.defaults) + \
        [d for d in args.kw_defaults if d is not None]
    local = set(params) - {instance}
    levels = ["builtin"]
    for part in reached:
        for node in ast.walk(part):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                local.add(node.name)
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                a = node.args
                local.update(x.arg for x in a.posonlyargs + a.args + a.kwonlyargs)
                local.update(x.arg for x in (a.vararg, a.kwarg) if x)
            elif isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
                local.add(node.id)
            elif isinstance(node, ast.ExceptHandler) and node.name:
                local.add(node.name)
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                for bound, level in _bindings(node, module_level):
                    local.add(bound)
                    levels.append(level)  # an import in the method: the module it reaches
            elif isinstance(node, (ast.Global, ast.Nonlocal)):
                levels.append("file")
    for part in reached:
        for node in ast.walk(part):
            if not (isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)):
                continue
            n = node.id
            if n == instance or (owner is not None and n in (owner.name, "super")):
                levels.append("class")
            elif n in local or (owner is None and n == method.name):  # a function's own name: recursion
                continue
            elif n in module_names:
                levels.append(module_names[n])
            elif not hasattr(builtins, n):
                levels.append("file")
    return max(levels, key=LEVELS.index)


def _bindings(node, module_level):
    """``(name, level)`` for what one statement binds at its level: imports by their
    module, definitions and assignments of the file (``"file"``)."""
    if isinstance(node, ast.Import):
        return [((a.asname or a.name).split(".")[0], module_level(a.name, 0)) for a in node.names]
    if isinstance(node, ast.ImportFrom):
        return [(a.asname or a.name, module_level(node.module, node.level)) for a in node.names]
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [(node.name, "file")]
    if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.For, ast.With)):
        return [(n.id, "file") for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)]
    if isinstance(node, (ast.If, ast.Try)):  # imports and definitions under if/try at module level
        out = []
        for child in ast.iter_child_nodes(node):
            for handler in ([child] if not isinstance(child, ast.ExceptHandler) else child.body):
                out += _bindings(handler, module_level)
        return out
    return []


def _find_method(tree, name: str, start_line: int | None):
    """``(def node, enclosing class or None)`` of the method ``name`` whose ``def`` (or a
    decorator) is on ``start_line``; the only method of that name when no line matches."""
    hits = []

    def visit(node, owner):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)) and child.name == name:
                hits.append((child, owner))
            visit(child, child if isinstance(child, ast.ClassDef) else
                  None if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)) else owner)

    visit(tree, None)
    for node, owner in hits:
        lines = {node.lineno, *(d.lineno for d in node.decorator_list)}
        if start_line in lines:
            return node, owner
    return hits[0] if len(hits) == 1 else None


# ------------------------------------------------------------------ Java
# java.lang, imported by every Java file: the JDK's built-ins for this label (a type name
# that is neither imported, nor of the file, nor here is of the file's package: ``file``).
JAVA_LANG = frozenset("""
AbstractMethodError Appendable ArithmeticException ArrayIndexOutOfBoundsException ArrayStoreException
AssertionError AutoCloseable Boolean Byte CharSequence Character Class ClassCastException
ClassNotFoundException CloneNotSupportedException Cloneable Comparable Deprecated Double Enum Error
Exception Float FunctionalInterface IllegalArgumentException IllegalStateException
IndexOutOfBoundsException InterruptedException Integer Iterable Long Math NegativeArraySizeException
NullPointerException Number NumberFormatException Object OutOfMemoryError Override Process Record
ReflectiveOperationException Runnable Runtime RuntimeException SafeVarargs SecurityException Short
StackOverflowError StrictMath String StringBuffer StringBuilder StringIndexOutOfBoundsException
SuppressWarnings System Thread ThreadLocal Throwable UnsupportedOperationException Void
""".split())


def is_standalone_java(file_text: str, name: str | None = None, start_line: int | None = None) -> bool:
    """Table 3's *standalone* for a Java method (:func:`java_dependency_level`)."""
    return java_dependency_level(file_text, name, start_line) in STANDALONE


def java_dependency_level(file_text: str, name: str | None = None, start_line: int | None = None) -> str:
    """The level of the Java method ``name`` whose declaration lies in the task's span
    from ``start_line`` (its Javadoc's first line or the declaration's) of ``file_text``:
    ``class`` for ``this``/``super`` or a field or method of its class named without a
    receiver, ``file`` for a type of the file or its package, ``third-party`` for a type
    imported from outside ``java.*``/``javax.*``, ``stdlib`` for a JDK import, ``builtin``
    otherwise (``java.lang``, primitives, its own parameters and locals).  Without the
    method, the file's imports decide (the previous, file-level rule)."""
    from ...jml import parse_java
    from ...jml import node_text, walk

    src = file_text.encode("utf-8")
    root = parse_java(src).root_node
    imports: dict[str, str] = {}  # simple name -> level
    for node in walk(root):
        if node.type == "import_declaration":
            text = node_text(src, node).removeprefix("import").strip().rstrip(";").strip()
            text = text.removeprefix("static").strip()
            level = "stdlib" if text.startswith(("java.", "javax.")) else "third-party"
            imports[text.rsplit(".", 1)[-1]] = level
    found = _java_method(root, src, name, start_line) if name else None
    if found is None:
        return max(imports.values(), key=LEVELS.index, default="stdlib")
    method, owner = found
    file_types = {node_text(src, n.child_by_field_name("name")) for n in walk(root)
                  if n.type in ("class_declaration", "interface_declaration", "enum_declaration",
                                "record_declaration") and n.child_by_field_name("name")}
    members: set[str] = set()
    if owner is not None:
        body = owner.child_by_field_name("body")
        for child in body.children if body else ():
            if child.type == "field_declaration":
                members |= {node_text(src, d.child_by_field_name("name")) for d in child.children
                            if d.type == "variable_declarator"}
            elif child.type == "method_declaration":
                members.add(node_text(src, child.child_by_field_name("name")))
    members.discard(name)  # recursion is not a dependency
    local: set[str] = set()
    for node in walk(method):
        if node.type in ("formal_parameter", "spread_parameter", "variable_declarator", "catch_formal_parameter",
                         "enhanced_for_statement", "type_parameter", "resource") and node.child_by_field_name("name"):
            local.add(node_text(src, node.child_by_field_name("name")))
        elif node.type == "type_parameter":
            local |= {node_text(src, c) for c in node.children if c.type == "type_identifier"}
        elif node.type == "lambda_expression":
            params = node.child_by_field_name("parameters")
            local |= {node_text(src, c) for c in walk(params) if c.type == "identifier"} if params else set()
    levels = ["builtin"]
    for node in walk(method):
        parent = node.parent
        if node.type in ("this", "super"):
            levels.append("class")
        elif node.type == "identifier":
            text = node_text(src, node)
            if parent.type == "field_access" and parent.child_by_field_name("field") == node:
                continue  # x.f: the receiver decides
            if parent.type == "method_invocation" and parent.child_by_field_name("name") == node:
                if parent.child_by_field_name("object") is None and text in members:
                    levels.append("class")  # an unqualified call of a sibling method
                continue
            if parent.type in ("method_declaration",) or text in local:
                continue
            if text in members:
                levels.append("class")
            elif text[:1].isupper():  # a receiver type: Math.max, Node.of
                levels.append(_java_type_level(text, imports, file_types))
        elif node.type == "type_identifier" and node_text(src, node) not in local:
            levels.append(_java_type_level(node_text(src, node), imports, file_types))
    return max(levels, key=LEVELS.index)


def _java_type_level(type_name: str, imports: dict[str, str], file_types: set[str]) -> str:
    if type_name in file_types:
        return "file"
    if type_name in imports:
        return imports[type_name]
    return "builtin" if type_name in JAVA_LANG else "file"  # unimported: the file's package


def _java_method(root: Any, src: bytes, name: str, start_line: int | None) -> tuple[Any, Any] | None:
    """``(method_declaration, its class or None)``: the method ``name`` declared at or just after
    ``start_line`` (1-based), else the only method of that name."""
    from ...jml import node_text, walk

    hits = [n for n in walk(root) if n.type == "method_declaration"
            and node_text(src, n.child_by_field_name("name")) == name]
    if start_line is not None:
        after = [n for n in hits if n.start_point[0] + 1 >= start_line]
        hits = after[:1] or (hits if len(hits) == 1 else [])
    elif len(hits) != 1:
        hits = []
    if not hits:
        return None
    owner = hits[0].parent
    while owner is not None and owner.type not in ("class_declaration", "enum_declaration", "record_declaration",
                                                   "interface_declaration"):
        owner = owner.parent
    return hits[0], owner
