"""PostcondBench Python's ``pbt`` tier (issue #47; docs/tiers.md, "PostcondBench"):
the model's icontract postcondition judged on the repository's REAL method beyond
the repository's tests, on arguments Hypothesis draws from the method's own types.

* **Types**: each parameter's type hint (:func:`pytest_specbench.pyspec.search.type_tree`),
  else (for a repository without hints) the stub the hints file gives for the task
  (``--postcond-pbt-hints``), else an ``isinstance`` among the method's simple
  conditions; a parameter with a default and no type keeps its
  default.  Where a parameter has none of them, or is ``self``/``cls`` (an object
  Hypothesis cannot build), the check skips with one line saying why.
* **Validity** (a small filter of our own, not icontract-hypothesis: the issue's
  "Don't"): the method's ``@require`` lambdas and leading ``assert`` statements
  (and the stub's) are the validity conditions the keeper runs on each drawn input;
  their simple forms narrow the strategies: bounds (``n >= 1``, ``0 <= x < 10``),
  ``len(xs) OP k``, ``isinstance(x, T)``, ``xs == sorted(xs)``.
* **AC**: the postcondition holds on the real method's result (``OLD`` snapshots
  taken by icontract from the arguments before the call, as the repository's
  decorators would); **RW**: type-directed perturbations of the result (the
  nl2postcond tier's: bool flip, ints +- k, list drop/duplicate/swap/replace,
  string edits, ``None``) are rejected.  Where the verdict lives:
  :mod:`pytest_specbench.pyspec.icontract_search`.

VERINA's words (§3.2): AC is *complete*, RW is *sound*; PostcondBench's own
(§3.2.4) are *correctness* (the ``correct`` check, on the repository's tests) and
*completeness* (the ``complete`` check, on its mutants).
"""
from __future__ import annotations

import ast
import importlib.util
import json
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Mapping, Sequence

from ... import pyspec
from ...errors import DataError
from ...execution import wire
from ...pyspec import blocks
from ...pyspec.search import Found, read_search, type_tree
from ...pyspec.tiers.verdict import Relation, Status, TierVerdict
from ..base import CheckResult
from . import source

RELATIONS = ("AC", "RW")
SEARCH_SECONDS = 40.0  # the keeper's budget for the whole search (both relations), as nl2postcond's
CASE_SECONDS = 0.5  # per case in a confined child (the decorators are evaluated there too)
CALL_SECONDS = 1.0  # per call of the real method in the keeper
PBT_KEEPER = Path(blocks.SEARCH_SCRIPT)  # nl2postcond's keeper: its strategies and perturbations
LAST_CPU = [0.0]  # the last search job's CPU seconds (tools/pbt_slice.py prints them)
KEEPER = Path(blocks.__file__).with_name("icontract_search.py")  # this tier's (job side; not imported here)


@dataclass(frozen=True)
class Plan:
    """What the search needs to know about the method (plain data)."""

    module: str
    name: str
    params: tuple[str, ...]
    types: Mapping[str, Any]
    bounds: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    require: tuple[str, ...] = ()
    origin: Mapping[str, str] = field(default_factory=dict)  # parameter -> where its type came from


def module_name(rel_file: str) -> str:
    """``./algorithms/dp/coin_change.py`` -> ``algorithms.dp.coin_change``."""
    parts = Path(rel_file.removeprefix("./")).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def load_hints(path: str | None) -> dict[str, str]:
    """``--postcond-pbt-hints``: a JSON object, task id (the task file's stem) -> a
    stub ``def`` with the method's parameters hinted and its validity as ``assert``
    lines.  Bad input is one line naming the file."""
    if not path:
        return {}
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise DataError(Path(path), None, f"not a pbt hints file: {exc}") from None
    if not isinstance(data, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in data.items()):
        raise DataError(Path(path), None, "a pbt hints file is a JSON object of task id -> stub def text")
    for key, stub in data.items():
        try:
            tree = ast.parse(stub)
        except SyntaxError as exc:
            raise DataError(Path(path), None, f"{key}: the stub does not parse: {exc.msg} (line {exc.lineno})") from None
        if not (tree.body and isinstance(tree.body[0], ast.FunctionDef)):
            raise DataError(Path(path), None, f"{key}: the stub must be one def")
    return data


# ------------------------------------------------------------------ the method's types and validity

def _number(node: ast.expr) -> float | None:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        inner = _number(node.operand)
        return None if inner is None else (-inner if isinstance(node.op, ast.USub) else inner)
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        return node.value
    return None


def _subject(node: ast.expr, params: Sequence[str]) -> tuple[str, str] | None:
    """(parameter, "value" | "len") of ``p`` or ``len(p)``."""
    if isinstance(node, ast.Name) and node.id in params:
        return node.id, "value"
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "len"
            and len(node.args) == 1 and isinstance(node.args[0], ast.Name) and node.args[0].id in params):
        return node.args[0].id, "len"
    return None


_FLIP = {ast.Lt: ast.Gt, ast.LtE: ast.GtE, ast.Gt: ast.Lt, ast.GtE: ast.LtE, ast.Eq: ast.Eq}


def _bound(bounds: dict, subject: tuple[str, str], op: ast.cmpop, value: float) -> None:
    param, what = subject
    b = bounds.setdefault(param, {})
    lo, hi = ("min_size", "max_size") if what == "len" else ("min", "max")
    whole = what == "len" or isinstance(value, int)
    step = 1 if whole else 0
    if isinstance(op, ast.Gt):
        b[lo] = max(b.get(lo, value + step), value + step)
    elif isinstance(op, ast.GtE):
        b[lo] = max(b.get(lo, value), value)
    elif isinstance(op, ast.Lt):
        b[hi] = min(b.get(hi, value - step), value - step)
    elif isinstance(op, ast.LtE):
        b[hi] = min(b.get(hi, value), value)
    elif isinstance(op, ast.Eq):
        b[lo] = b[hi] = value


def simple_forms(conditions: Sequence[ast.expr], params: Sequence[str]) -> tuple[dict, dict]:
    """From the validity conditions' simple conjuncts: per parameter its bounds
    (``min``/``max``, ``min_size``/``max_size``, ``sorted``, ``items``: its elements'
    bounds) and the type tree an
    ``isinstance`` names.  Anything else is left to the keeper's filter."""
    bounds: dict[str, dict] = {}
    kinds: dict[str, Any] = {}
    todo = list(conditions)
    while todo:
        node = todo.pop()
        if isinstance(node, ast.BoolOp) and isinstance(node.op, ast.And):
            todo += node.values
        elif isinstance(node, ast.Compare):
            terms = [node.left, *node.comparators]
            for left, op, right in zip(terms, node.ops, terms[1:]):
                subject, value = _subject(left, params), _number(right)
                if subject is None or value is None:
                    subject, value = _subject(right, params), _number(left)
                    op = _FLIP.get(type(op), type(None))() if subject is not None else op
                if subject is not None and value is not None:
                    _bound(bounds, subject, op, value)
                elif (isinstance(op, ast.Eq) and isinstance(left, ast.Name) and left.id in params
                      and isinstance(right, ast.Call) and isinstance(right.func, ast.Name)
                      and right.func.id == "sorted" and len(right.args) == 1
                      and isinstance(right.args[0], ast.Name) and right.args[0].id == left.id):
                    bounds.setdefault(left.id, {})["sorted"] = True
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "all"
              and len(node.args) == 1 and isinstance(node.args[0], ast.GeneratorExp)
              and len(node.args[0].generators) == 1 and not node.args[0].generators[0].ifs
              and isinstance(node.args[0].generators[0].target, ast.Name)
              and isinstance(node.args[0].generators[0].iter, ast.Name)
              and node.args[0].generators[0].iter.id in params):
            # all(LO <= v <= HI for v in p): bounds of p's elements
            gen = node.args[0]
            inner, _ = simple_forms([gen.elt], [gen.generators[0].target.id])
            items = inner.get(gen.generators[0].target.id)
            if items:
                bounds.setdefault(gen.generators[0].iter.id, {})["items"] = items
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "isinstance"
              and len(node.args) == 2 and isinstance(node.args[0], ast.Name) and node.args[0].id in params):
            kinds.setdefault(node.args[0].id, type_tree(node.args[1]))
    return bounds, kinds


def _conditions(node: ast.FunctionDef, text: str) -> list[tuple[ast.expr, str]]:
    """(expression, source) of the method's ``@require`` lambdas and leading asserts."""
    out = []
    for dec in node.decorator_list:
        func = dec.func if isinstance(dec, ast.Call) else None
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        if name == "require" and dec.args and isinstance(dec.args[0], ast.Lambda):
            body = dec.args[0].body
            out.append((body, ast.get_source_segment(text, body) or ast.unparse(body)))
    body = node.body
    if body and isinstance(body[0], ast.Expr) and isinstance(getattr(body[0], "value", None), ast.Constant):
        body = body[1:]
    for stmt in body:
        if not isinstance(stmt, ast.Assert):
            break
        out.append((stmt.test, ast.get_source_segment(text, stmt.test) or ast.unparse(stmt.test)))
    return out


def plan(task_data: Mapping[str, Any], file_text: str, stub: str | None = None) -> Plan | str:
    """The search's plan for the task's method, or one line saying why the types
    do not allow a search."""
    name = task_data["name"]
    try:
        tree = ast.parse(file_text)
    except SyntaxError as exc:
        return f"pbt: the method's file does not parse ({exc.msg})"
    node = source._method_node(tree, name, int(task_data["start_line"]))
    if node is None:
        return f"pbt: no def {name} in {task_data['file']}"
    if node not in tree.body:
        owner = next((c.name for c in ast.walk(tree) if isinstance(c, ast.ClassDef) and node in c.body), None)
        return (f"pbt: {name} is a method of class {owner}: Hypothesis cannot build its instance"
                if owner else f"pbt: {name} is a nested function: not reachable from its module")
    if isinstance(node, ast.AsyncFunctionDef):
        return f"pbt: {name} is a coroutine (async def): not searched"
    args = node.args
    if any(d is None for d in args.kw_defaults):
        return f"pbt: {name} has a keyword-only parameter without a default"
    positional = [*args.posonlyargs, *args.args]
    defaults = len(args.defaults)
    hinted = {a.arg: a.annotation for a in positional}
    conditions = _conditions(node, file_text)
    origin_of_hints = "hint"
    if stub is not None:
        stub_node = ast.parse(stub).body[0]
        stub_args = [*stub_node.args.posonlyargs, *stub_node.args.args]
        hinted.update({a.arg: a.annotation for a in stub_args if a.arg in hinted and a.annotation is not None})
        conditions += _conditions(stub_node, stub)
        origin_of_hints = "hints file"
    params_all = [a.arg for a in positional]
    bounds, kinds = simple_forms([c for c, _ in conditions], params_all)
    params, types, origin = [], {}, {}
    for i, arg in enumerate(positional):
        own = type_tree(arg.annotation)
        tree_ = own if own is not None else type_tree(hinted.get(arg.arg))
        how = "hint" if own is not None else origin_of_hints
        if tree_ is None and kinds.get(arg.arg) is not None:
            tree_, how = kinds[arg.arg], "isinstance"
        if tree_ is None:
            if i >= len(positional) - defaults:
                continue  # keeps its default
            if i == 0 and arg.arg in ("self", "cls"):
                return f"pbt: {name}'s {arg.arg}: Hypothesis cannot build it"
            return (f"pbt: parameter {arg.arg!r} of {name} has no type hint Hypothesis can build from "
                    f"(give one, or a stub in --postcond-pbt-hints)")
        if params and len(params) != i:
            return f"pbt: parameter {arg.arg!r} of {name} follows one left at its default"
        params.append(arg.arg)
        types[arg.arg] = tree_
        origin[arg.arg] = how
    if not params:
        return f"pbt: {name} takes no argument to search over"
    used = {p: b for p, b in bounds.items() if p in params}
    require = tuple(f"assert {text}" for cond, text in conditions
                    if {n.id for n in ast.walk(cond) if isinstance(n, ast.Name)} & set(params_all) <= set(params))
    return Plan(module_name(task_data["file"]), name, tuple(params), types, used, require, origin)


# ------------------------------------------------------------------ the job

def _harness_paths() -> list[str]:
    """Where the harness's Hypothesis and pyseccomp are (the keeper and the zygote
    append them to a repository venv's path; found without importing them here)."""
    out = []
    for mod in ("hypothesis", "pyseccomp", "sortedcontainers"):
        spec = importlib.util.find_spec(mod)
        if spec is None or not spec.origin:
            continue
        where = Path(spec.origin).parent
        where = where.parent if spec.submodule_search_locations else where
        if str(where) not in out:
            out.append(str(where))
    return out


def search_job(task_data: Mapping[str, Any], checkout: Path, the_plan: Plan, decorators: str, file_text: str,
               python: str, examples: int, seconds: float = SEARCH_SECONDS, replay: Sequence[dict] = ()):
    """The blocks job of one search (or, with ``replay``, of replaying its claims): (job, nonce)."""
    injected = source.inject(file_text, task_data["name"], task_data["start_line"], task_data["end_line"],
                             decorators, "fixed")
    spec = pyspec.guard_spec(injected.decorators_text(), injected.first_line, injected.text)
    paths = [str(checkout)]
    preamble = (f"import specbench_search\n"
                f"specbench_search.prepare({paths!r}, {the_plan.module!r}, {the_plan.name!r}, {spec!r}, "
                f"{source.EVAL_NAME!r})\n"
                f"import sys\nsys.path.extend({_harness_paths()!r})\n"
                f"from specbench_search import check_case as __specbench_check\n")
    config = {"paths": paths, "harness_paths": _harness_paths(), "module": the_plan.module, "name": the_plan.name,
              "params": list(the_plan.params), "types": dict(the_plan.types), "bounds": dict(the_plan.bounds),
              "require": list(the_plan.require), "examples": int(examples), "seconds": float(seconds),
              "call_seconds": CALL_SECONDS, "relations": list(RELATIONS), "replay": list(replay)}
    job, nonce = blocks.blocks_job(preamble, "__specbench_check(__before, __after, __result_is, return_value)", [],
                                   CASE_SECONDS, seconds + 30.0, search=config,
                                   keeper=KEEPER)
    job = replace(job, argv=(python, "-s", "-E", *job.argv[3:]),
                  files={**job.files, "specbench_pbt.py": PBT_KEEPER.read_bytes(), **pyspec.job_files()},
                  readonly=(checkout,), memory_mb=4096)
    return job, nonce


def run_search(executor: Any, prepared: Any, task_data: Mapping[str, Any], checkout: Path, the_plan: Plan,
               decorators: str, file_text: str, examples: int, seconds: float = SEARCH_SECONDS) -> dict[str, Found]:
    """The search's claims per relation, each refutation replayed (:func:`confirm`): a
    claim the replay does not confirm comes back ``unknown`` with why."""
    python = (getattr(prepared, "executables", None) or {}).get("python") or sys.executable
    job, nonce = search_job(task_data, checkout, the_plan, decorators, file_text, python, examples, seconds)
    result = executor.run(prepared, job)
    LAST_CPU[0] = result.cpu
    found = read_search(result.records, nonce, RELATIONS, result.timed_out)
    claims = [f for f in found.values() if f.status == "refuted"]
    if not claims:
        return found
    job, nonce = search_job(task_data, checkout, the_plan, decorators, file_text, python, 1, seconds,
                            [{"relation": f.relation, "before": wire.dumps(f.before),
                              "shown": wire.dumps((f.case or {}).get("return_value"))} for f in claims])
    result = executor.run(prepared, job)
    LAST_CPU[0] += result.cpu
    replayed = {r.get("index"): r for r in result.records if isinstance(r, dict) and r.get("nonce") == nonce
                and r.get("event") == "replay"}
    return {**found, **{f.relation: confirm(f, replayed.get(i)) for i, f in enumerate(claims)}}


def confirm(claim: Found, replayed: Mapping[str, Any] | None) -> Found:
    """A refutation counts once a fresh job, calling the method anew on the claim's
    input and asking a fresh child, sees it again (nl2postcond's rule: a case the
    postcondition answers both ways is refuted for that, unless the search's answer
    was a time-out, the machine's)."""
    def unknown(why: str) -> Found:
        return Found(claim.relation, "unknown", claim.tried, reason=f"not confirmed: {why}")

    if replayed is None:
        return unknown("the replay job ended early")
    if replayed.get("status") == "no call":
        return unknown("the method did not run on the search's input in the replay")
    if replayed.get("status") == "not wrong":
        return unknown("the shown output is the method's own result in the replay")
    kind = (replayed.get("outcome") or {}).get("kind")
    if (kind != "holds") if claim.relation == "AC" else (kind == "holds"):
        return claim
    first = claim.outcome or {}
    if first.get("kind") == "raised" and not first.get("exc") and "timeout" in str(first.get("line", "")):
        return unknown(f"a time-out in the search, {kind} in the replay")
    return replace(claim, reason=f"{kind} in the replay: its outcome on one case changes between runs")


def verdicts(found: Mapping[str, Found], params: Sequence[str]) -> list[TierVerdict]:
    out = []
    for rel in RELATIONS:
        f = found[rel]
        relation = Relation(rel)
        if f.status == "passed":
            out.append(TierVerdict("pbt", relation, Status.PASSED, examples=f.tried))
        elif f.status == "unknown":
            out.append(TierVerdict("pbt", relation, Status.UNKNOWN, examples=f.tried, reason=f.reason))
        else:
            outcome = f.outcome or {}
            if rel == "AC":
                what = "does not hold" if outcome.get("kind") == "violated" else \
                    f"raised {outcome.get('exc') or ''}".rstrip()
                line = str(outcome.get("line") or "")
                line = line if len(line) <= 120 else line[:117] + "..."
                why = f"{what} on the method's result" + (f": {line}" if line else "")
            else:
                why = f"accepts a wrong output (the method gives {_short(f.expected)})"
            if f.reason:
                why += f" [{f.reason}]"
            case = f.case or {}
            example = {"inputs": {k: _plain(v) for k, v in (case.get("inputs") or {}).items()},
                       "return_value": _plain(case.get("return_value"))}
            out.append(TierVerdict("pbt", relation, Status.REFUTED, examples=f.tried,
                                   counterexample={**example, "why": why}, reason=why))
    return out


def result_of(found_verdicts: Sequence[TierVerdict], the_plan: Plan, examples: int) -> CheckResult:
    details = {"tiers": [v.as_dict() for v in found_verdicts], "examples": examples,
               "types": dict(the_plan.types), "origin": dict(the_plan.origin)}
    refuted = next((v for v in found_verdicts if v.status is Status.REFUTED), None)
    return CheckResult(refuted is None, details, refuted.line() if refuted else "")


def _plain(value: Any) -> Any:
    return json.loads(wire.dumps(value))


def _short(value: Any, limit: int = 80) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[:limit - 3] + "..."
