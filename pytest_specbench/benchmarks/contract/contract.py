"""ContractEval (Lim et al., "ContractEval: A Benchmark for Evaluating
Contract-Satisfying Assertions in Code Generation", arXiv:2510.12047).

Each task is a HumanEval+/MBPP+ task with contract-violating tests (CVTs). A
sample is checked twice:

* ``functional``: EvalPlus "base + extra" correctness on valid inputs
  (see :mod:`.evalplus`);
* ``contract``: every CVT is called; a CVT is *rejected* iff the call raises
  ``AssertionError`` (upstream's rule, §3.4).  ``--contract-rejection=assert-or-raise``
  also counts a ``ValueError``/``TypeError`` raised by a ``raise`` statement (not
  one raised by a failing operation such as ``None + 1``).  A hang is not a rejection.

Prompts (§4.2): ``standard`` is the original HumanEval+/MBPP+ prompt; ``cs``
(contract specification) and ``eas`` (CS plus example CVTs) are the prompts the
data carries.
"""
from __future__ import annotations

import ast
from pathlib import Path
from typing import Any, Mapping, Sequence

from ...data.jsonl import file_digest, read_jsonl
from ...errors import DataError, OptionError
from ...execution.python import CallsJob
from ...models.base import Completion
from ..base import CheckResult, Message, Prompt, Task, TaskSet
from .evalplus_data import canonical_program
from .evalplus import (CALL_OVERHEAD_WORK, JOB_OVERHEAD_WORK, EvalPlusData, bundled_folder, functional_check,
                       functional_cost, index_folder, no_code, pass_at_k_metrics, sample_code, sample_program_key)
from .metrics import contract_satisfaction
from . import tiers
from .options import OPTIONS
from .sanitize import NO_CODE, program_form, quiet_parse

CONTRACT_FIELDS = ("task_id", "entry_point", "original_prompt", "contracts", "reference_with_contracts", "cvts")
STANDARD_INSTRUCTION = ("Complete the following Python function. Answer with the whole function "
                        "in one ```python code block.\n\n")


class ContractBenchmark:
    name = "contract"
    checks = ("functional", "contract")

    # 2: the functional check (evalplus.functional_check) measures borderline CPU times again (#33)
    # and judges large outputs by the oracle where the expected output is not exact (#28);
    # an answer without code fails with "the answer has no code block" (#32).
    version = "2"
    options = OPTIONS
    executors = ("python",)  # as evalplus: its functional check is evalplus's (plugin/startup.py)

    def checks_for(self, task: Task) -> tuple[str, ...]:
        return self.checks + tuple(task.data.get("_checks") or ())  # the precondition tiers (cs, eas: tiers.py)

    def metric_names(self, settings) -> list[str]:
        probe = self.aggregate({"probe": [{"index": i, "checks": {c: {"passed": True, "base_passed": True,
                                                                       "rejected": 1, "total": 1}
                                                                   for c in self.checks}}
                                          for i in range(max(settings.ks))]}, {}, settings)
        names = [k for k, v in probe.items() if not isinstance(v, Mapping)]  # the curve is a table
        return sorted(set(names) | set(tiers.tier_metrics({}, self._tier_checks(settings))))

    @staticmethod
    def _tier_checks(settings) -> tuple[str, ...]:
        option = settings.option if hasattr(settings, "option") else (lambda name: None)
        return tiers.checks(option("spec_tiers"), option("contract_condition"))

    def figures(self, metrics: Mapping[str, Any], settings) -> list[dict]:
        """Appendix J, Figure 10: E[c | f >= t] and Pr(c = 1 | f >= t) by functionality threshold t."""
        curve = metrics.get("csr_by_threshold") or {}
        if not curve:
            return []
        ts = sorted(curve)
        return [{"title": "ContractEval: contract satisfaction c given functional pass rate f >= t (Appendix J)",
                 "kind": "bar", "percent": True, "x": ts,
                 "series": {"E[c | f >= t]": [curve[t]["csr"] for t in ts],
                            "Pr(c = 1 | f >= t)": [curve[t]["csr_perfect"] for t in ts]},
                 "xlabel": "t (only t = 1.00 without --specbench-details)", "ylabel": "contract satisfaction"}]

    def metric_notes(self, metrics: Mapping[str, Any], settings) -> dict[str, str]:
        rule = settings.option("contract_rejection")
        rejects = "AssertionError" if rule == "assert" else "AssertionError or a raised ValueError/TypeError"
        return {"csr": f"§3.4; a CVT is rejected by {rejects} (--contract-rejection={rule}; docs/contract.md)",
                "csr_conditional": "E[c | f = 1], Table 11's CSR (§5 calls the 51-59% range 'mean CSR')",
                "csr_perfect_conditional": "Pr(c = 1 | f = 1), Appendix J's name for the 51-59% range",
                "csr_by_threshold": "Appendix J's curve over thresholds t of the functional pass rate f; "
                                    "t < 1 needs --specbench-details (f of a failing sample)"}

    def __init__(self) -> None:
        self._evalplus_folder: dict[Path, Path] = {}

    def _evalplus(self, task: Task) -> EvalPlusData:
        folder = self._evalplus_folder.get(Path(task.source).resolve())
        if folder is None:
            raise DataError(task.source, task.line, "ContractEval task used before its data was loaded "
                                                    "(call load() first: it pairs the file with its EvalPlus data)")
        return EvalPlusData.load(folder)

    # ------------------------------------------------------------------ data
    def load(self, data_root: Path | None, settings) -> TaskSet:
        root = data_root if data_root else bundled_folder("contract")
        path = root / "contracteval" / "contracteval_rebuilt.jsonl"
        if not path.is_file():
            raise DataError(path, None, "ContractEval file not found (expected DATA/contracteval/contracteval_rebuilt.jsonl)")
        evalplus = EvalPlusData.load(root / "evalplus", index_folder(settings))
        # Each ContractEval file is checked against the EvalPlus data loaded with it
        # (not a folder guessed from the file's path).
        self._evalplus_folder[path.resolve()] = root / "evalplus"
        tasks, missing = [], []
        for lineno, row in read_jsonl(path, required=CONTRACT_FIELDS):
            if not isinstance(row["cvts"], list):
                raise DataError(path, lineno, "'cvts' must be a list")
            for k, cvt in enumerate(row["cvts"]):
                if not isinstance(cvt, dict) or not isinstance(cvt.get("input"), dict):
                    raise DataError(path, lineno, f"cvts[{k}] needs an 'input' object of parameter values")
            if row["task_id"] not in evalplus.tasks:
                missing.append(row["task_id"])
                continue
            tasks.append(Task(row["task_id"], {**row, "_checks": self._tier_checks(settings)}, path, lineno))
        option = settings.option if hasattr(settings, "option") else (lambda name: None)
        warnings = tiers.unbuilt(option("spec_tiers"), option("contract_condition"))
        if missing:
            warnings += (f"{len(missing)} ContractEval tasks have no HumanEval+/MBPP+ entry and are left out: "
                        + ", ".join(missing[:10]) + (" ..." if len(missing) > 10 else ""),)
        return TaskSet(tuple(tasks), (path, *evalplus.files), bundled=data_root is None, warnings=warnings)

    def prompt(self, task: Task, settings) -> Prompt:
        row, condition = task.data, settings.option("contract_condition")
        if condition == "cs":
            messages = (Message("system", row["cs_system"]), Message("user", row["cs_user"]))
        elif condition == "eas":
            messages = (Message("system", row["eas_system"]), Message("user", row["eas_user"]))
        else:
            messages = (Message("user", STANDARD_INSTRUCTION + row["original_prompt"]),)
        return Prompt(messages, completion_prefix=row["original_prompt"])

    def reference(self, task: Task, check: str) -> str:
        """The canonical solution for ``functional`` (it defines the expected outputs),
        the reference with its contracts for ``contract``.

        Each is the benchmark's own answer to that check.  A few upstream contracts
        reject inputs that HumanEval+/MBPP+ count as valid, so
        ``reference_with_contracts`` alone would fail ``functional`` there
        (``specbench contract check-data`` lists them).
        """
        if check == "functional":
            evalplus = self._evalplus(task)
            return canonical_program(evalplus.tasks[task.task_id])
        return task.data["reference_with_contracts"]  # contract, and the precondition tiers: its contract block

    def skip_reason(self, check: str, task: Task, ctx=None) -> str | None:
        if check == "contract" and not task.data["cvts"]:
            return "task has no contract-violating tests"
        return None

    # ---------------------------------------------------------------- checks
    def run_check(self, check: str, task: Task, sample: Completion, ctx) -> CheckResult:
        evalplus = self._evalplus(task)
        if check == "functional":
            return functional_check(evalplus.tasks[task.task_id], evalplus.digest[task.task_id], sample, ctx)
        if check == "contract":
            return self._contract_check(task, sample, ctx)
        if check in tiers.TIER_CHECKS.values():
            code = sample_code(sample, task.data["entry_point"])
            if no_code(sample, code):
                return CheckResult(False, {"no_code": True}, f"{NO_CODE}: no precondition to judge")
            return tiers.run_tier(check, task.data, evalplus.tasks[task.task_id], code, ctx)
        raise OptionError("--specbench-checks", f"contract has no check {check!r}")

    def program_key(self, task: Task, sample: Completion, check: str) -> str:
        """Both checks run the sanitized program and nothing else of the answer
        (``engine/dedupe.py``): samples whose programs have this key get one verdict."""
        if check == "functional":  # sanitized for the entry point functional_check uses
            return sample_program_key(sample, self._evalplus(task).tasks[task.task_id]["entry_point"])
        return sample_program_key(sample, task.data["entry_point"])

    def dispatch_cost(self, task: Task, check: str, ctx) -> float:
        """Predicted cost of one item, for dispatch order under xdist (plugin/scheduling.py)."""
        if check == "functional":
            evalplus = self._evalplus(task)
            return functional_cost(evalplus.tasks[task.task_id], evalplus.digest[task.task_id], ctx)
        if check == "pre_pbt":
            return JOB_OVERHEAD_WORK * 40  # a search of up to tiers.SEARCH_SECONDS
        return JOB_OVERHEAD_WORK + len(task.data["cvts"]) * CALL_OVERHEAD_WORK

    def _contract_check(self, task: Task, sample: Completion, ctx) -> CheckResult:
        row = task.data
        total = len(row["cvts"])
        also_raise = ctx.settings.option("contract_rejection") == "assert-or-raise"
        code = sample_code(sample, row["entry_point"])
        if no_code(sample, code):
            # Nothing ran, so nothing was "accepted": the sample rejects none of the CVTs
            # (0 of total in the CSR, as upstream's harness scores a sample that does not load).
            return CheckResult(False, {"passed": False, "rejected": 0, "total": total, "no_code": True},
                               f"{NO_CODE}: none of the {total} contract-violating inputs could be tried")
        key = f"{task.task_id}@{file_digest_cached(task.source)[:12]}:cvts"
        # The calls (which parse the reference for its parameters) are built only
        # when the sandbox does not hold this task's CVT inputs yet.
        result = ctx.python_executor().run(None, CallsJob(code, row["entry_point"], key, lambda: cvt_calls(row),
                                                           range(total)))
        rejected = set()
        for i in range(total):
            outcome = result.outcomes.get(i)
            if outcome is not None and outcome.status == "raise" and (
                    outcome.assertion or (also_raise and outcome.value_or_type_error)):
                rejected.add(i)
        details: dict[str, Any] = {"passed": len(rejected) == total, "rejected": len(rejected), "total": total}
        message = ""
        if len(rejected) < total and result.load_error:
            # The program did not load: no input ran, none was accepted.
            message = (f"the program does not load: {result.load_error}; "
                       f"none of the {total} contract-violating inputs ran")[:400]
            details["load_error"] = result.load_error[:300]
        elif len(rejected) < total:
            accepted = [i for i in range(total) if i not in rejected]
            first = accepted[0]
            outcome = result.outcomes.get(first)
            what = (result.failure_reason() if outcome is None else
                    "returned normally" if outcome.status == "ok" else
                    "timed out" if outcome.status == "timeout" else f"raised {outcome.exc_type}")
            message = (f"{total - len(rejected)} of {total} contract-violating inputs accepted; "
                       f"first: {row['entry_point']}(**{_short(row['cvts'][first]['input'])}) {what}")
            details["accepted"] = accepted[:50]
        return CheckResult(details["passed"], details, message)

    def aggregate(self, results: Mapping[str, Sequence[Mapping[str, Any]]], tasks: Mapping[str, Task],
                  settings) -> dict[str, Any]:
        metrics = pass_at_k_metrics(results, settings.ks)
        metrics.update(contract_satisfaction(results))
        metrics.update(tiers.tier_metrics(results, self._tier_checks(settings)))
        return metrics


def entry_parameters(row: Mapping[str, Any]) -> list[str] | None:
    """Parameter names of the entry point in the reference solution, in order."""
    try:
        tree = quiet_parse(row["reference_with_contracts"])
    except SyntaxError:
        return None
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == row["entry_point"]:
            return [a.arg for a in node.args.posonlyargs + node.args.args]
    return None


def cvt_calls(row: Mapping[str, Any]) -> list[tuple[tuple, dict]]:
    """The calls of a task's CVTs, positional in the reference's parameter order.

    Upstream CVT inputs name the reference's parameters and sometimes carry the
    solver's auxiliary variables too (``{"INF": -1.0, "number": -1.0}``); only the
    parameters are passed, by position, so a sample that names them differently
    is judged on what it does, not on its parameter names.
    """
    params = entry_parameters(row)
    calls = []
    for cvt in row["cvts"]:
        values = cvt["input"]
        if params and all(p in values for p in params):
            calls.append((tuple(values[p] for p in params), {}))
        else:
            calls.append(((), dict(values)))
    return calls


_digests: dict[Path, str] = {}


def file_digest_cached(path: Path) -> str:
    if path not in _digests:
        _digests[path] = file_digest(path)
    return _digests[path]


def _short(value: Any, width: int = 100) -> str:
    text = repr(value)
    return text if len(text) <= width else text[:width - 3] + "..."


ADAPTER = ContractBenchmark()
