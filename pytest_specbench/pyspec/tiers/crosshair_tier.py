"""Tier 3, ``crosshair``: symbolic search with CrossHair (``crosshair-tool``,
MIT) for inputs where a postcondition Q disagrees with the reference (issue
#47, tier 3):

* **AC**: Q against the reference implementation (the reference runs on
  symbolic inputs, Q on its output) and, where a reference specification R
  exists, R ⇒ Q over symbolic inputs and ``return_value``;
* **RW**: where R exists, Q ⇒ R (an output Q lets through that R rejects).

CrossHair imports and runs the spec: it runs **only in a sandbox job** (the
``command`` executor, with CPU, wall, memory and output limits; the search
bounded by ``--per_condition_timeout``).  What it prints is a *candidate*
counterexample, parsed (never evaluated) from its ``when calling f(...)``
lines and replayed concretely (:mod:`.replay`) before it is REFUTED.  CrossHair
rarely confirms anything about unbounded containers: no counterexample, or a
candidate that does not replay, is UNKNOWN, never PASSED or PROVED.

The target module is built here from parsed ASTs (``ast.unparse``): the task's
preamble and reference program, and one function per search whose leading
``assert`` lines are preconditions (CrossHair's ``asserts`` analysis kind):
the task's validity precondition, then R or Q as a predicate; the body's
asserts are what CrossHair tries to break.
"""
from __future__ import annotations

import ast
import importlib.util
import sys
from ...execution.protocol import CommandJob
from .replay import Candidate, TierServices, TierSettings, TierTask, _dedented, replay, type_hints
from .verdict import Relation, Status, TierVerdict

TIER = "crosshair"
TARGET = "specbench_crosshair_target.py"
SEARCHES = {"_specbench_reference_vs_spec": Relation.AC, "_specbench_r_implies_q": Relation.AC,
            "_specbench_q_implies_r": Relation.RW}
_MAIN = "import sys; from crosshair.main import main; sys.exit(main())"


def available() -> str | None:
    """None when CrossHair is installed, else how to install it."""
    # Found, not imported: the check runs CrossHair in a job of its own, and importing it
    # here cost every caller ~0.3 CPU s (the tests' skip marks, at each xdist worker's collection).
    if importlib.util.find_spec("crosshair") is None:
        return "CrossHair is not installed: pip install crosshair-tool"
    return None


class NotBuilt(Exception):
    pass


def target_module(task: TierTask, spec: str, reference_spec: str | None, kill: str) -> str:
    """The module CrossHair analyses (module docstring); raises NotBuilt when a
    block does not parse as a module's statements."""
    def stmts(source: str, what: str) -> list[ast.stmt]:
        try:
            body = ast.parse(source).body
        except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
            raise NotBuilt(f"the {what} does not parse ({type(exc).__name__})") from None
        for node in ast.walk(ast.Module(body=body, type_ignores=[])):
            if isinstance(node, (ast.Return, ast.Yield, ast.YieldFrom, ast.Await, ast.Global, ast.Nonlocal)) \
                    and not _inside_function(node, body):
                raise NotBuilt(f"the {what} is not a module's statements ({type(node).__name__})")
        return body

    q = stmts(spec, "spec")
    r = stmts(reference_spec, "reference spec") if reference_spec else None
    pre = stmts(_dedented(task.precondition), "precondition") if task.precondition else []
    returns = _returns(task)
    args = ", ".join(task.parameters)
    with_rv = f"{args}, return_value" if args else "return_value"
    # typing's names first (an observed hint may say List[int]); the task's own names win
    lines = ["import typing", "from typing import Any, List, Optional, Tuple, Union", "", task.preamble, "",
             task.program, ""]

    def func(name: str, signature: str, leading: list[ast.stmt] | None, body: list[ast.stmt]) -> None:
        # CrossHair analyses a function that starts with an assert (None: a helper it must not analyse)
        leading = [ast.Assert(test=ast.Constant(True), msg=None), *leading] if leading is not None else []
        fn = ast.FunctionDef(name=name, args=ast.parse(f"def f({signature}): pass").body[0].args,
                             body=[*leading, *body], decorator_list=[], returns=None)
        lines.extend([ast.unparse(ast.fix_missing_locations(fn)), ""])

    sig = ", ".join(_hinted(task))
    sig_rv = f"{sig}, return_value: {returns}" if sig else f"return_value: {returns}"
    call = ast.parse(f"return_value = {task.entry_point}({args})").body
    func("_specbench_reference_vs_spec", sig, pre, [*call, *q])
    if r is not None:
        func("_specbench_holds_r", sig_rv, None, _predicate(r, "any"))
        func("_specbench_lets_q", sig_rv, None, _predicate(q, kill))
        holds_r = ast.parse(f"assert _specbench_holds_r({with_rv})").body
        lets_q = ast.parse(f"assert _specbench_lets_q({with_rv})").body
        func("_specbench_r_implies_q", sig_rv, [*pre, *holds_r], q)
        func("_specbench_q_implies_r", sig_rv, [*pre, *lets_q], holds_r)
    return "\n".join(lines)


def _inside_function(node: ast.AST, body: list[ast.stmt]) -> bool:
    for top in body:
        for fn in ast.walk(top):
            if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)) and fn is not node:
                if any(n is node for n in ast.walk(fn)):
                    return True
    return False


def _predicate(block: list[ast.stmt], kill: str) -> list[ast.stmt]:
    """``try: <block>`` returning whether the block lets the output through:
    True when it completes; on AssertionError False; on any other exception
    False when every exception rejects (``any``), else True."""
    other = "False" if kill == "any" else "True"
    text = f"try:\n    pass\nexcept AssertionError:\n    return False\nexcept Exception:\n    return {other}\nreturn True"
    tree = ast.parse(text).body
    tree[0].body = list(block) or [ast.Pass()]
    return tree


def _returns(task: TierTask) -> str:
    return type_hints(task)[1] or "typing.Any"


def _hinted(task: TierTask) -> list[str]:
    params, _ = type_hints(task)
    return [f"{p}: {t}" if t else p for p, t in params.items()]


def crosshair_job(module: str, seconds: float) -> CommandJob:
    per_condition = max(1.0, seconds / len(SEARCHES))
    return CommandJob(argv=(sys.executable, "-s", "-c", _MAIN, "check", "--analysis_kind=asserts",
                            f"--per_condition_timeout={per_condition:g}", TARGET),
                      files={TARGET: module.encode()}, cpu_seconds=seconds + 20,
                      wall_seconds=6 * (seconds + 20),  # CPU is the bound; wall time stretches on a loaded machine
                      memory_mb=2048, output_bytes=1 << 16)


def candidates_from(stdout: str, task: TierTask) -> list[Candidate]:
    """Candidates from CrossHair's ``<file>:<line>: error: ... when calling f(...)``
    lines: each call parsed as Python and its arguments read as literals
    (``ast.literal_eval``: nothing the job printed is evaluated)."""
    out: list[Candidate] = []
    names = list(task.parameters)
    for line in stdout.splitlines():
        head, sep, call = line.rpartition("when calling ")
        if not sep or ": error: " not in head:
            continue
        try:
            node = ast.parse(call.strip(), mode="eval").body
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name) or node.func.id not in SEARCHES:
            continue
        relation = SEARCHES[node.func.id]
        order = names + (["return_value"] if node.func.id != "_specbench_reference_vs_spec" else [])
        try:
            values = dict(zip(order, (_literal(a) for a in node.args)))
            values.update({k.arg: _literal(k.value) for k in node.keywords if k.arg})
        except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError):
            continue
        if any(n not in values for n in order):
            continue
        out.append(Candidate(relation, {p: values[p] for p in names}, values.get("return_value"), node.func.id))
    return out


_FLOATS = ("inf", "-inf", "+inf", "nan", "-nan", "+nan", "infinity", "-infinity")


class _SpecialFloats(ast.NodeTransformer):
    """``float("inf")`` (how CrossHair writes a non-finite float) as the constant."""

    def visit_Call(self, node: ast.Call) -> ast.AST:
        if (isinstance(node.func, ast.Name) and node.func.id == "float" and not node.keywords
                and len(node.args) == 1 and isinstance(node.args[0], ast.Constant)
                and isinstance(node.args[0].value, str) and node.args[0].value.strip().lower() in _FLOATS):
            return ast.Constant(float(node.args[0].value))
        return node


def _literal(node: ast.expr):
    """A value CrossHair printed: a Python literal, where ``float("inf")`` may stand
    for a float; anything else raises ValueError (nothing is evaluated)."""
    return ast.literal_eval(_SpecialFloats().visit(node))


def check(services: TierServices, task: TierTask, spec: str, reference_spec: str | None,
          settings: TierSettings) -> list[TierVerdict]:
    """AC and RW of ``spec`` by CrossHair's search (module docstring)."""
    relations = (Relation.AC, Relation.RW)
    try:
        module = target_module(task, spec, reference_spec, settings.kill)
    except NotBuilt as exc:
        return [TierVerdict(TIER, r, Status.UNKNOWN, reason=str(exc)) for r in relations]
    except (RecursionError, MemoryError, ValueError) as exc:  # ast.unparse of a pathological tree
        return [TierVerdict(TIER, r, Status.UNKNOWN, reason=f"the target module was not built ({type(exc).__name__})")
                for r in relations]
    result = services.spec_executor.run(None, crosshair_job(module, settings.seconds))
    found = candidates_from(result.stdout, task)
    per_relation: dict[Relation, list[Candidate]] = {}
    for cand in found:
        per_relation.setdefault(cand.relation, [])
        if len(per_relation[cand.relation]) < settings.candidates:
            per_relation[cand.relation].append(cand)
    replayed = replay(services, task, spec, [c for cs in per_relation.values() for c in cs], settings.kill)
    searched = "timed out" if result.timed_out else "no counterexample found"
    out = []
    for relation in relations:
        hit = next((ce for cand, ce in replayed.confirmed if cand.relation is relation), None)
        if hit is not None:
            out.append(TierVerdict(TIER, relation, Status.REFUTED, counterexample=hit, reason=hit["why"]))
        elif relation in per_relation:
            why = next((w for cand, w in replayed.unconfirmed if cand.relation is relation), "")
            out.append(TierVerdict(TIER, relation, Status.UNKNOWN,
                                   reason=f"CrossHair's candidate did not replay ({why})"))
        elif relation is Relation.RW and not reference_spec:
            out.append(TierVerdict(TIER, relation, Status.UNKNOWN,
                                   reason="no reference specification for this task (RW needs one)"))
        else:
            out.append(TierVerdict(TIER, relation, Status.UNKNOWN,
                                   reason=f"CrossHair: {searched} in {settings.seconds:g} s (not a proof)"))
    return out

