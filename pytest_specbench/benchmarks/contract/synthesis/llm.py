"""LLM fallback translator (``specbench contract synthesize --translator=MODEL``).

ContractEval (§3.2, Appendix G) has an LLM translate every assert into SMT-LIB
over an algebraic data type of Python values.  This package translates
deterministically (:mod:`.translate`); this module asks a model for help with
the asserts the deterministic translator reports as unsupported -- and only
those.

**What is implemented (the narrow version).**  The model is *not* asked for
SMT-LIB.  Upstream's Appendix G template (suhanmen/PACT,
``code/utils/Instruction.py``: ``GRAMMAR_ASSERT_SPECIFICATION`` with
``ADT_BASE_TEMPLATE``) targets a recursive ``Value`` datatype
(``IntVal``/``FloatVal``/``StrVal``/``BoolVal``/``Nil``/``Cons``) with
``define-fun-rec`` helpers; mapping such answers onto this package's bounded
record encoding (:mod:`.adt`: type tag, payloads, length and element slots,
``None``/tuples/dicts that upstream's ADT lacks) was not done in the time
available.  Instead :data:`SYSTEM` keeps Appendix G's structure (role, method
name, problem description, contract list, strict rules, a JSON answer keyed by
``assert_k``) but asks for the assert rewritten as **one Python boolean
expression inside the supported subset**.  That expression is translated by the
same deterministic translator, so its ``value``/``ok`` terms live over the same
symbolic parameters as every other assert (:class:`~.translate.AssertModel`).

Consequences, on purpose:

* model text is never executed: it is parsed with :mod:`ast` and evaluated
  symbolically; the feasibility filter still runs the task's *original*
  reference variants in a child process, so a wrong rewrite can only cost
  candidates (or label them with the asserts that really fire), never produce a
  CVT that does not raise ``AssertionError``;
* an answer that is garbage, not an expression, or still outside the subset
  leaves the assert unsupported; the reason is appended to its ``detail`` in
  the work file and the summary.  Nothing raises.

Requests go through the model layer (:func:`pytest_specbench.models.load_model`,
e.g. ``openai:MODEL``; endpoint from ``$OPENAI_BASE_URL``) with its generation
cache (``$SPECBENCH_DIR/cache/generations``, default ``.specbench``): a
re-run asks nothing again.  All requests are made once, in the parent process,
before the synthesis workers start (:meth:`LLMTranslator.prepare`); workers
only re-translate (:func:`apply_translations`).
"""
from __future__ import annotations

import ast
import json
import os
import re
import textwrap
from pathlib import Path
from typing import Any, Sequence

from ....errors import OptionError, SpecbenchError

SYSTEM = """You are an expert program analyst who writes precise specifications of Python input-validation \
assertions.

A contract is a list of Python assert statements (assert_0, assert_1, ...) at the start of a function. One of \
them uses constructs our translator does not model. Rewrite that one assertion as a single Python boolean \
expression over the function's parameters that is true exactly when the original assertion passes (and raises \
exactly when the original raises), using only:

- names of the function's parameters, and names assigned earlier in the contract;
- literals; and/or/not; conditional expressions; comparisons (also chained); in / not in; is None;
- + - * / // % and ** with a constant exponent; indexing and slicing without a step;
- isinstance, type, len, all, any, sum, min, max, abs, int, float, bool, set, zip, enumerate, range, map, \
lambda inside map;
- generator expressions and list comprehensions (several for clauses, if filters, tuple targets);
- str methods isdigit, isalpha, isalnum, isupper, islower, isspace, startswith, endswith, lower, upper, \
split (one-character separator); dict keys, values, items.

STRICT RULES
- One expression per assertion; no statements, no comments, no helper functions, no imports, no loops \
outside comprehensions, no names defined outside the contract (inline what they mean).
- Keep the original semantics, including the order of checks that guard against errors \
(for example isinstance before len).
"""

USER = """Method Name: {entry_point}
Problem Description:
{prompt}

Contract List:
{listing}

Rewrite {name}: {text}

Answer with one JSON object in a ```json fenced block:
```json
{{"{name}": "<python boolean expression>"}}
```
"""

MAX_EXPR_CHARS = 4000


class TranslatorSettings:
    """The few settings the model layer reads, outside pytest (the CLI)."""

    def __init__(self, state_dir: Path):
        self.state_dir = state_dir
        self.samples = 1
        self.config = None
        # Few retries: a translator that is down should cost seconds, not minutes (each assert
        # it could not translate is reported as such).
        self._values = {"model_temperature": "0", "model_max_tokens": "2048", "specbench_cache": "readwrite",
                        "model_retries": "2"}

    def option(self, name: str) -> Any:
        return self._values.get(name)


def require_translator(model: str, state_dir: Path | None = None) -> "LLMTranslator":
    """The fallback translator for ``model`` (a ``--model`` spec such as ``openai:NAME``)."""
    from ....models import load_model

    state = state_dir or Path(os.environ.get("SPECBENCH_DIR") or ".specbench")
    try:
        loaded = load_model(model, TranslatorSettings(state), option="--translator")
    except SpecbenchError:
        raise
    if not hasattr(loaded, "generate") or not hasattr(loaded, "completion"):
        raise OptionError("--translator", f"{model!r} is not a generating model")
    return LLMTranslator(loaded)


class LLMTranslator:
    def __init__(self, model: Any):
        self.model = model
        self.spec = getattr(model, "spec", str(model))

    def prepare(self, tasks: Sequence[dict], bounds: Any = None) -> dict:
        """Ask the model about every unsupported assert of ``tasks``; never raises for one task.

        Returns ``{task_id: {"asserts": {assert_k: expression}, "failed": {assert_k: reason}}}``
        for tasks with unsupported asserts; expressions are kept only when the
        deterministic translator accepts them.
        """
        from ...base import Message, Prompt, Task
        from ....models.base import GenerationRequest
        from .signature import function_params
        from .translate import translate_contract

        jobs = []  # (task row, params, names, assert name, request)
        for row in tasks:
            names = list(row.get("contracts") or {})
            try:
                params = function_params(row.get("reference_with_contracts", ""), row.get("entry_point", ""))
                model = translate_contract(row.get("contract", ""), params, names, bounds)
            except (SyntaxError, ValueError):
                continue  # the pipeline reports these tasks itself
            for a in model.asserts:
                if a.supported:
                    continue
                text = str(row["contracts"].get(a.name, ""))
                prompt = Prompt((Message("system", SYSTEM), Message("user", USER.format(
                    entry_point=row.get("entry_point", ""), prompt=str(row.get("original_prompt", "")).rstrip(),
                    listing=textwrap.dedent(str(row.get("contract", ""))).strip(), name=a.name, text=text))))
                task = Task(f"{row['task_id']}::{a.name}", {"task_id": row["task_id"], "assert": a.name,
                                                             "contract": row.get("contract", "")}, Path("<synthesis>"))
                request = GenerationRequest("synthesis-translator", task, 0, prompt, lambda: "")
                jobs.append((row, params, names, a.name, request))
        out: dict = {}
        if not jobs:
            return out
        try:
            self.model.generate([j[4] for j in jobs])
        except SpecbenchError as exc:  # e.g. the endpoint is unreachable: every assert stays unsupported
            for row, _, _, name, _ in jobs:
                out.setdefault(row["task_id"], {"asserts": {}, "failed": {}})["failed"][name] = f"translator {self.spec}: {exc}"
            return out
        for row, params, names, name, request in jobs:
            entry = out.setdefault(row["task_id"], {"asserts": {}, "failed": {}})
            try:
                answer = self.model.completion(request).text
            except Exception as exc:  # noqa: BLE001 - a failed generation leaves the assert unsupported
                entry["failed"][name] = f"translator {self.spec}: {exc}"[:300]
                continue
            expr, reason = parse_answer(answer, name)
            if expr is None:
                entry["failed"][name] = f"translator {self.spec}: {reason}"
                continue
            # Accept it only if the deterministic translator now supports the assert.
            try:
                rewritten = rewrite_contract(row.get("contract", ""), names, {name: expr})
                model = translate_contract(rewritten, params, names, bounds)
                again = next(a for a in model.asserts if a.name == name)
            except (SyntaxError, ValueError, StopIteration) as exc:
                entry["failed"][name] = f"translator {self.spec}: rewritten contract unusable: {exc}"[:300]
                continue
            if not again.supported:
                entry["failed"][name] = (f"translator {self.spec}: its expression is outside the subset too "
                                         f"({again.error.category}{': ' + again.error.detail if again.error.detail else ''})")[:300]
                continue
            entry["asserts"][name] = expr
        return out

    def manifest(self) -> dict:
        try:
            return self.model.manifest()
        except Exception:  # noqa: BLE001
            return {"spec": self.spec}


_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_+-]*)[ \t]*\n(.*?)```", re.S)


def parse_answer(text: Any, name: str) -> tuple[str | None, str]:
    """``(expression, "")`` from a model answer, or ``(None, one-line reason)``."""
    if not isinstance(text, str) or not text.strip():
        return None, "empty answer"
    blocks = [body for _, body in _FENCE.findall(text)] or [text]
    candidate = None
    for body in reversed(blocks):
        try:
            obj = json.loads(body)
        except (ValueError, RecursionError):
            obj = None
        if isinstance(obj, dict):
            value = obj.get(name)
            if value is None and len(obj) == 1:
                value = next(iter(obj.values()))
            if isinstance(value, str):
                candidate = value
                break
        elif isinstance(obj, str):
            candidate = obj
            break
    if candidate is None:
        # a python block with `assert EXPR` or a bare expression
        body = blocks[-1].strip()
        candidate = body[len("assert"):].strip() if body.startswith("assert") else body
    candidate = candidate.strip()
    if candidate.startswith("assert "):
        candidate = candidate[len("assert "):]
    if len(candidate) > MAX_EXPR_CHARS:
        return None, f"expression longer than {MAX_EXPR_CHARS} characters"
    try:
        # As the test of an assert: `EXPR` and `EXPR, "message"` both give EXPR.
        body = ast.parse("assert " + candidate).body
    except (SyntaxError, RecursionError, ValueError, MemoryError):
        return None, f"not a Python expression: {candidate[:60]!r}"
    if len(body) != 1 or not isinstance(body[0], ast.Assert):
        return None, f"not a single expression: {candidate[:60]!r}"
    return ast.unparse(body[0].test), ""


def rewrite_contract(contract: str, names: Sequence[str], exprs: dict) -> str:
    """The contract block (dedented) with the named asserts replaced by ``assert (EXPR)``.

    A top-level statement holding only that assert (a ``for``/``if``/``try``
    around it) is replaced as a whole, so the rewritten assert stands alone.
    Raises :class:`SyntaxError`/:class:`ValueError` on a block that cannot be split.
    """
    from .translate import parse_contract_block

    src = textwrap.dedent(contract.strip("\n"))
    stmts = parse_contract_block(contract)
    lines = src.splitlines()
    found = []  # (assert index, top-level statement, assert node)
    for st in stmts:
        for node in _in_order(st):
            if isinstance(node, ast.Assert):
                found.append((st, node))
    if len(found) != len(names):
        raise ValueError(f"contract block has {len(found)} asserts, the task lists {len(names)}")
    edits = []
    for k, (st, node) in enumerate(found):
        if names[k] not in exprs:
            continue
        alone = sum(isinstance(n, ast.Assert) for n in ast.walk(st)) == 1
        target = st if alone else node
        edits.append((target.lineno, target.end_lineno, target.col_offset,
                      f"assert ({exprs[names[k]]}), \"invalid inputs\""))
    for first, last, col, text in sorted(edits, reverse=True):
        lines[first - 1: last] = [" " * col + text]
    rewritten = "\n".join(lines) + "\n"
    ast.parse(rewritten)  # SyntaxError if the splice broke something
    return rewritten


def apply_translations(row: dict, params: Sequence[str], names: Sequence[str], bounds: Any,
                       model: Any, translation: dict) -> tuple[Any, dict]:
    """In a synthesis worker: the task's contract model with the translator's expressions.

    Returns ``(model, {assert_k: expression})``; asserts the translator could not
    help keep their error, with its reason appended to the detail.
    """
    from .adt import Unsupported
    from .translate import translate_contract

    exprs = dict(translation.get("asserts") or {})
    failed = dict(translation.get("failed") or {})
    used: dict = {}
    if exprs:
        try:
            texts = [row["contracts"][n] for n in names]
            new = translate_contract(rewrite_contract(row.get("contract", ""), names, exprs), params, names, bounds, texts)
        except (SyntaxError, ValueError, KeyError) as exc:
            failed.update({n: f"rewritten contract unusable: {exc}" for n in exprs})
        else:
            for a in new.asserts:
                if a.name in exprs:
                    if a.supported:
                        used[a.name] = exprs[a.name]
                    else:
                        failed[a.name] = f"expression outside the subset ({a.error.category})"
            model = new
    for a in model.asserts:
        if a.name in failed and not a.supported:
            detail = "; ".join(x for x in (a.error.detail, f"LLM fallback failed: {failed[a.name]}") if x)
            a.error = Unsupported(a.error.category, detail[:400])
    return model, used


def _in_order(node):
    yield node
    for child in ast.iter_child_nodes(node):
        yield from _in_order(child)
