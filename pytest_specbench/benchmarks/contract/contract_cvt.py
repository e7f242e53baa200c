"""ContractEval's CVT-generation task (Lim et al., arXiv:2510.12047, §6.2):
a model writes *contract-violating inputs* for a function, and the inputs are
scored with AVC and TS (§3.4, :mod:`pytest_specbench.benchmarks.contract.cvt_metrics`).

``pytest --specbench=contract-cvt --model=...`` reads the same tasks as
``contract`` (the bundled suite, or ``DATA/contracteval/contracteval_rebuilt.jsonl``;
EvalPlus files are not needed: nothing here checks functional behaviour).

Prompt.  The paper's §6.2 compares a direct o4-mini generator (Table 4: AVC
97.58%, TS 72.69%) with its pipeline but does not give the prompt's text.
What is followed is upstream's
LLM-only CVT prompt (suhanmen/PACT, ``code/utils/Instruction.py``,
``ASSERT_SPECIFICATION`` + ``OUTPUT_INSTRUCTION_ASSERTIONS``): the model gets
the method name, the problem description and the contract list
(``assert_k: ...``), and answers, per assert, :data:`CASES_PER_ASSERT` (5)
inputs that violate *that* assert, as one JSON object in a fenced block::

    {"assert_0": [{"input": [ARG, ...]}, ...], "assert_1": [...]}

A key may also name several asserts (``"assert_0,assert_2"``, upstream's
``MULTI_ASSERT_SPECIFICATION`` form): the input is meant to violate all of
them.  Differences from upstream, on purpose: the problem description is the
task's ``original_prompt`` (signature and docstring; the contract is listed
separately) instead of the reference implementation, and the ``<think>``
preamble upstream asks for is allowed but not required.

Parsing is defensive and never executes model text: the last fenced block
(else the first ``{...}`` span) is read with :func:`json.loads`, else with
:func:`ast.literal_eval` (Python literals: ``None``, ``True``, tuples).  An
answer that does not parse fails its item with one line; a single malformed
case (``input`` not a list of arguments, too deep, unknown assert name)
counts as a proposed input that is *not* rejected, since it cannot violate
anything.

Scoring runs in the sandbox (:class:`~pytest_specbench.execution.python.PythonExecutor`),
on program variants of ``reference_with_contracts`` built by
:func:`pytest_specbench.benchmarks.contract.synthesis.variants.build_variants`:

* ``full`` (the contract block, then a sentinel exception): an input is
  *rejected* iff this raises ``AssertionError``.  The contract block sits at the
  function's entry, so this is exactly "the reference with contracts raises
  ``AssertionError`` at its contract"; the body never runs, so slow bodies
  and asserts in the body do not count;
* ``assert_k`` (every other assert replaced by ``pass``): ``fired_individually``.

Only plain data (parsed literals) crosses into the sandbox; the harness
compares outcomes itself.

Per item (one task, one sample, check ``violations``): it passes iff the
answer parses and every proposed input is rejected.  Metrics over all
samples: ``avc`` (pooled over proposed inputs), ``ts`` (the paper's §3.4
formula: mean Jaccard of fired and intended asserts over the inputs that fire
one), ``ts_exact`` (share of all inputs whose firing set is exactly the
intended one), ``ts_upstream`` (upstream's per-(input, intended assert) reading),
``assert_coverage``, ``all_rejected`` (share of samples whose every input is
rejected, averaged over tasks), ``answers_parsed`` and counts.

``--model=reference`` answers with the task's own CVTs (upstream's, or the
bundled suite's) grouped by their ``intended_violated`` sets, in the same
format; it must score AVC 100%.  Tasks without CVTs are skipped: the data has
no solution for them.
"""
from __future__ import annotations

import ast
import hashlib
import json
import re
import warnings
from pathlib import Path
from typing import Any, Mapping, Sequence

from ...data.jsonl import read_jsonl
from ...errors import DataError, OptionError
from ...execution.python import CallsJob
from . import cvt_metrics
from ...models.base import Completion
from ..base import CheckResult, Message, Prompt, Task, TaskSet
from .contract import CONTRACT_FIELDS, entry_parameters, file_digest_cached
from .evalplus import bundled_folder

CASES_PER_ASSERT = 5
MAX_CASES = 500  # proposed inputs scored per answer; more are ignored (and reported)
MAX_ANSWER_CHARS = 400_000
MAX_DEPTH = 12  # nesting depth of one input value
MAX_ITEMS = 20_000  # scalars + containers in one input
CHECK = "violations"

SYSTEM = """You are an expert program analyst.

I will provide:
- Method Name: the name of the function to test.
- Problem Description: the function's signature and docstring, describing what it does.
- Contract List: the input-validation assertions (assert_0, assert_1, ...) that the function checks \
before its main logic runs.

Your task:
- For each assertion in the Contract List, write {n} distinct test inputs that violate that assertion.
- Keep each input meaningful for the function, but make it break the assertion (a wrong type, an \
out-of-range value, a malformed structure, ...). Inputs should satisfy the other assertions where possible.
- Do not repeat the same input for different assertions.

JSON rules (strict):
- No comments and no trailing commas.
- JSON literals only: null, true, false. No tuples: use lists.
- "input" is the list of positional arguments of one call.
"""

OUTPUT_FORMAT = """----------------------------------------
Answer with one JSON object in a ```json fenced block, one key per assertion, each with exactly {n} test cases:

```json
{{
  "assert_0": [
    {{ "input": [...] }},
    ...
  ],
  "assert_1": [
    {{ "input": [...] }},
    ...
  ]
}}
```
----------------------------------------
"""


class ContractCvtBenchmark:
    name = "contract-cvt"
    checks = (CHECK,)

    version = "1"
    options = ()

    def checks_for(self, task: Task) -> tuple[str, ...]:
        return self.checks

    def metric_names(self, settings) -> list[str]:
        # Display order: the paper's two metrics first (ContractEval §3.4), then counts.
        return ["avc", "ts", "ts_exact", "ts_upstream", "all_rejected", "answers_parsed", "cvts_proposed", "samples"]

    # ------------------------------------------------------------------ data
    def load(self, data_root: Path | None, settings) -> TaskSet:
        root = data_root if data_root else bundled_folder("contract")
        path = root / "contracteval" / "contracteval_rebuilt.jsonl"
        if not path.is_file():
            raise DataError(path, None, "ContractEval file not found (expected DATA/contracteval/contracteval_rebuilt.jsonl)")
        tasks = []
        for lineno, row in read_jsonl(path, required=CONTRACT_FIELDS):
            if not isinstance(row["cvts"], list):
                raise DataError(path, lineno, "'cvts' must be a list")
            if not isinstance(row["contracts"], dict):
                raise DataError(path, lineno, "'contracts' must be an object of assert_k -> text")
            for k, cvt in enumerate(row["cvts"]):
                if not isinstance(cvt, dict) or not isinstance(cvt.get("input"), dict):
                    raise DataError(path, lineno, f"cvts[{k}] needs an 'input' object of parameter values")
            tasks.append(Task(row["task_id"], row, path, lineno))
        return TaskSet(tuple(tasks), (path,), bundled=data_root is None)

    def skip_reason(self, check: str, task: Task, ctx=None) -> str | None:
        if not task.data["contracts"]:
            return "task has no contract asserts"
        if not task.data["cvts"]:
            return "task has no contract-violating tests (no reference answer)"
        return None

    def prompt(self, task: Task, settings) -> Prompt:
        row = task.data
        listing = "\n".join(f"{name}: {text}" for name, text in contract_listing(row))
        user = (f"Method Name: {row['entry_point']}\nProblem Description:\n{row['original_prompt'].rstrip()}\n\n"
                f"Contract List:\n{listing}\n\n" + OUTPUT_FORMAT.format(n=CASES_PER_ASSERT))
        return Prompt((Message("system", SYSTEM.format(n=CASES_PER_ASSERT)), Message("user", user)))

    def reference(self, task: Task, check: str) -> str:
        """The task's own CVTs, grouped by intended assert set, in the answer format."""
        row = task.data
        params = entry_parameters(row)
        groups: dict[str, list] = {}
        for cvt in row["cvts"]:
            key = ",".join(cvt.get("intended_violated") or ()) or "unlabelled"
            values = cvt["input"]
            if params and all(p in values for p in params):
                case = [values[p] for p in params]
            else:
                case = dict(values)
            groups.setdefault(key, []).append({"input": case})
        return "```json\n" + json.dumps(groups, indent=1) + "\n```\n"

    # ---------------------------------------------------------------- checks
    def run_check(self, check: str, task: Task, sample: Completion, ctx) -> CheckResult:
        if check != CHECK:
            raise OptionError("--specbench-checks", f"contract-cvt has no check {check!r}")
        row = task.data
        names = list(row["contracts"])
        try:
            cases, notes = parse_answer(sample.text, names, entry_parameters(row))
        except AnswerError as exc:
            return CheckResult(False, {"passed": False, "parsed": False, "reason": str(exc)[:300]},
                               f"unusable answer: {exc}")
        from .synthesis.variants import VariantError, build_variants

        try:
            with warnings.catch_warnings():  # parsing (not running) the reference: its escape sequences are its own
                warnings.simplefilter("ignore", DeprecationWarning)
                variants = build_variants(row["reference_with_contracts"], row["contract"], row["entry_point"],
                                          len(names))
        except VariantError as exc:
            raise DataError(task.source, task.line, f"cannot split reference_with_contracts: {exc}") from None
        runnable = [i for i, c in enumerate(cases) if c.call is not None]
        calls = [cases[i].call for i in runnable]
        # repr, not JSON: (1, 2) and [1, 2] are different inputs and must not share a loaded input set.
        digest = hashlib.sha256(repr(calls).encode("utf-8", "surrogatepass")).hexdigest()[:24]
        key = f"{task.task_id}@{file_digest_cached(task.source)[:12]}:cvt-gen:{digest}"
        executor = ctx.python_executor()
        outcomes: dict[str, dict[int, Any]] = {v: {} for v in ["full"] + names}
        for variant in (["full"] + names) if calls else ():
            code = SENTINEL_DEF + variants.sources[variant]
            result = executor.run(None, CallsJob(code, row["entry_point"], key, lambda: calls, range(len(calls))))
            if result.load_error:
                raise DataError(task.source, task.line, f"variant {variant} does not load: {result.load_error}")
            outcomes[variant] = {runnable[j]: o for j, o in result.outcomes.items()}
        records = []
        for i, case in enumerate(cases):
            full = outcomes["full"].get(i)
            rejected = bool(full is not None and full.status == "raise" and full.assertion)
            fired = [n for n in names if (o := outcomes[n].get(i)) is not None and o.status == "raise" and o.assertion]
            records.append([case.intended, fired, rejected])
        n_rejected = sum(r[2] for r in records)
        details: dict[str, Any] = {"passed": bool(records) and n_rejected == len(records), "parsed": True,
                                   "rejected": n_rejected, "total": len(records), "cvts": records}
        if notes:
            details["notes"] = notes[:5]
        message = ""
        if not records:
            message = "the answer proposes no inputs"
        elif n_rejected < len(records):
            first = next(i for i, r in enumerate(records) if not r[2])
            full = outcomes["full"].get(first)
            what = (cases[first].problem or ("no outcome" if full is None else
                    "passes the contract" if full.exc_type == SENTINEL else
                    "timed out" if full.status == "timeout" else
                    f"raised {full.exc_type}" if full.status == "raise" else "returned"))
            message = (f"{len(records) - n_rejected} of {len(records)} proposed inputs do not violate the contract; "
                       f"first: {row['entry_point']}{_short_call(cases[first])} {what}")
        return CheckResult(details["passed"], details, message)

    def aggregate(self, results: Mapping[str, Sequence[Mapping[str, Any]]], tasks: Mapping[str, Task],
                  settings) -> dict[str, Any]:
        return cvt_metrics.generated_cvt_metrics(results, CHECK)


# ------------------------------------------------------------------ answers
SENTINEL = "_SpecbenchContractPassed"
SENTINEL_DEF = f"class {SENTINEL}(BaseException):\n    pass\n\n\n"


class AnswerError(ValueError):
    """The answer has no usable JSON object of test cases."""


class Case:
    __slots__ = ("intended", "call", "problem", "shown")

    def __init__(self, intended: list, call, problem: str = "", shown: str = ""):
        self.intended, self.call, self.problem, self.shown = intended, call, problem, shown


_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_+-]*)[ \t]*\n(.*?)```", re.S)


def _candidates(text: str) -> list[str]:
    blocks = [body for _, body in _FENCE.findall(text)]
    out = list(reversed(blocks))  # the last block is the answer; earlier ones may be drafts
    start, end = text.find("{"), text.rfind("}")
    if start != -1 and end > start:
        out.append(text[start:end + 1])
    return out


def _load(snippet: str) -> Any:
    try:
        return json.loads(snippet)
    except (ValueError, RecursionError):
        pass
    try:
        return ast.literal_eval(snippet.strip())
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError, OverflowError):
        return None


def parse_answer(text: str, names: Sequence[str], params: Sequence[str] | None) -> tuple[list[Case], list[str]]:
    """The proposed inputs of an answer, with their intended asserts; raises :class:`AnswerError`."""
    if not isinstance(text, str) or not text.strip():
        raise AnswerError("empty answer")
    if len(text) > MAX_ANSWER_CHARS:
        raise AnswerError(f"answer longer than {MAX_ANSWER_CHARS} characters")
    obj = None
    for snippet in _candidates(text):
        obj = _load(snippet)
        if isinstance(obj, dict):
            break
    if not isinstance(obj, dict):
        raise AnswerError("no JSON object of test cases found (expected {\"assert_0\": [{\"input\": [...]}, ...]})")
    known = set(names)
    cases: list[Case] = []
    notes: list[str] = []
    for key, group in obj.items():
        intended = [k.strip() for k in str(key).split(",") if k.strip()]
        unknown = [k for k in intended if k not in known]
        if unknown:
            notes.append(f"unknown assert {unknown[0]!r} in key {str(key)[:40]!r}")
            intended = [k for k in intended if k in known]
        intended = sorted(set(intended), key=lambda n: names.index(n))
        if isinstance(group, dict):
            group = [group]
        if not isinstance(group, list):
            cases.append(Case(intended, None, "is not a list of test cases", repr(group)[:60]))
            continue
        for entry in group:
            cases.append(_case(intended, entry, params))
    if not cases:
        raise AnswerError("the JSON object holds no test cases")
    if len(cases) > MAX_CASES:
        notes.append(f"{len(cases)} inputs proposed; the first {MAX_CASES} are scored")
        cases = cases[:MAX_CASES]
    return cases, notes


def _case(intended: list, entry: Any, params: Sequence[str] | None) -> Case:
    value = entry.get("input") if isinstance(entry, dict) and "input" in entry else entry
    shown = repr(value)[:80]
    if not _plain(value):
        return Case(intended, None, f"input is not plain data of depth <= {MAX_DEPTH}", shown)
    if isinstance(value, (list, tuple)):
        return Case(intended, (tuple(value), {}), "", shown)
    if isinstance(value, dict) and value and all(isinstance(k, str) for k in value):
        if params and all(p in value for p in params):  # named like the reference: pass by position
            return Case(intended, (tuple(value[p] for p in params), {}), "", shown)
        return Case(intended, ((), dict(value)), "", shown)
    return Case(intended, None, "input is not a list of arguments", shown)


def _plain(value: Any) -> bool:
    """Literal data only, bounded: what json/literal_eval produce, nothing else."""
    budget = [MAX_ITEMS]

    def walk(v, depth):
        budget[0] -= 1
        if budget[0] < 0 or depth > MAX_DEPTH:
            return False
        if v is None or type(v) in (bool, int, float, str, bytes, complex):
            return True
        if type(v) in (list, tuple, set, frozenset):
            return all(walk(x, depth + 1) for x in v)
        if type(v) is dict:
            return all(walk(k, depth + 1) and walk(x, depth + 1) for k, x in v.items())
        return False

    return walk(value, 0)


def _short_call(case: Case, width: int = 100) -> str:
    if case.call is None:
        text = f"(<{case.shown}>)"
    else:
        args, kwargs = case.call
        parts = [repr(a) for a in args] + [f"{k}={v!r}" for k, v in kwargs.items()]
        text = "(" + ", ".join(parts) + ")"
    return text if len(text) <= width else text[:width - 4] + "...)"


def contract_listing(row: Mapping[str, Any]) -> list[tuple[str, str]]:
    """``(assert_k, source)`` pairs: the contract block's asserts unparsed, else the data's texts."""
    names = list(row["contracts"])
    try:
        from .synthesis.translate import parse_contract_block

        asserts = [n for st in parse_contract_block(row["contract"]) for n in _in_order(st) if isinstance(n, ast.Assert)]
        if len(asserts) == len(names):
            return [(name, ast.unparse(node)) for name, node in zip(names, asserts)]
    except (SyntaxError, ValueError):
        pass
    return [(name, str(row["contracts"][name])) for name in names]


def _in_order(node):
    yield node
    for child in ast.iter_child_nodes(node):
        yield from _in_order(child)


ADAPTER = ContractCvtBenchmark()
