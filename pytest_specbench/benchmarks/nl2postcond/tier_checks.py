"""nl2postcond's search tiers (issue #47): the ``crosshair`` and ``z3`` checks,
each calling its tier of the Python-spec service (``pyspec/tiers/``) with the
task as plain data and this family's sandboxed run of the reference.

The reference specification R: a bundled task's own reference postcondition;
on upstream's data, the first postcondition (by ``r_num``) that upstream's
sheet shows test-set correct and complete (every bad output rejected), where
there is one (31 of the 110 tasks of the shared sheet); else none, and what
needs R is UNKNOWN.
"""
from __future__ import annotations

import hashlib
import json
from functools import lru_cache
from pathlib import Path
from typing import Any, Mapping, Sequence

from ...execution import wire
from ...pyspec.search import observed_type
from ...pyspec.tiers.replay import TierServices, TierSettings, TierTask
from ...pyspec.tiers.verdict import Status
from ..base import CheckResult, Task
from ..tier_options import DEFAULT_TIER_SECONDS, DEFAULT_Z3_BOUND
from ..contract.evalplus_data import canonical_program, outputs_match
from . import observe, tasks

TIER_CHECKS = ("crosshair", "z3")
SHEET = "annotated_postconditions.jsonl"


def selected(settings: Any) -> tuple[str, ...]:
    chosen = settings.option("spec_tiers") if hasattr(settings, "option") else None
    return tuple(c for c in TIER_CHECKS if c in (chosen or ()))


def reference_spec(task: Task) -> str | None:
    if task.data.get("reference_postcondition"):
        return task.data["reference_postcondition"]
    root = task.data.get("_data_root")
    return _upstream_references(str(Path(root) / "nl2postcond" / SHEET)).get(task.task_id) if root else None


@lru_cache(maxsize=4)
def _upstream_references(path: str) -> dict[str, str]:
    out: dict[str, tuple[int, str]] = {}
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        return {}
    for line in lines:
        try:
            row = json.loads(line)
            run, killed = row.get("num_bopi_run"), row.get("num_bopi_killed")
            if row.get("test_set_correct") is True and run and killed == run:
                key = int(row["r_num"])
                if row["task_id"] not in out or key < out[row["task_id"]][0]:
                    out[row["task_id"]] = (key, str(row["postcondition"]))
        except (ValueError, KeyError, TypeError, AttributeError):
            continue  # a row the sheet's format does not give: no reference from it
    return {tid: text for tid, (_, text) in out.items()}


def tier_task(data: Mapping[str, Any], outputs: Sequence[Any] = ()) -> TierTask:
    """The task as the tiers see it; what its def leaves unhinted takes the type
    every test input has (``base_input``) and, given the reference's ``outputs``,
    the type all of them have (HumanEval+ leaves a third of its functions
    unhinted; without a hint z3's search space holds every type)."""
    names = tasks.parameters(data)
    inputs = [list(i) for i in data.get("base_input") or ()]
    seen = {n: observed_type([i[k] for i in inputs if len(i) > k]) for k, n in enumerate(names)}
    seen["return"] = observed_type(outputs)
    return TierTask(str(data["task_id"]), str(data["entry_point"]), tuple(names), data["prompt"],
                    tasks.preamble(data), str(data.get("contract") or ""), canonical_program(dict(data)),
                    {k: v for k, v in seen.items() if v})


def reference_runner(data: Mapping[str, Any], python_executor: Any, cpu: float):
    """``run_reference`` of :class:`TierServices`: the task's canonical solution
    in the sandboxed Python executor, per call (arguments after, result) or None."""
    data = dict(data)

    def run_reference(calls):
        key = hashlib.sha256(wire.dumps([list(c) for c in calls]).encode()).hexdigest()[:16]
        seen = observe.observe(python_executor, canonical_program(data), data, f"{data['task_id']}:tiers-{key}",
                               [(tuple(c), {}) for c in calls], cpu)
        return [(o.args_after, o.result) if o.status == "ok" else None for o in seen]

    return run_reference


def oracle(data: Mapping[str, Any]):
    """EvalPlus's oracle (``atol``, special oracles): an output it accepts is not a wrong one."""
    data = dict(data)
    return lambda args, output, expected: outputs_match(data, list(args), output, expected)


def services(data: Mapping[str, Any], ctx: Any) -> TierServices:
    return TierServices(ctx.executor("command"), reference_runner(
        data, ctx.python_executor(), ctx.settings.limits.call_cpu * observe.REFERENCE_CPU_FACTOR), oracle(data))


def _reference_outputs(task: Task, ctx: Any) -> list[Any]:
    """The reference's outputs on the test inputs (computed once and cached by the ``correct`` check)."""
    if task.source is None:
        return []
    from ..contract.evalplus import EvalPlusData

    digest = EvalPlusData.load(task.source.parent).digest[task.task_id]
    return [case["return_value"] for case in observe.reference_cases(task.data, digest,
                                                                     ctx.option("nl2postcond_inputs") or "base+plus", ctx)]


def run_tier(check: str, task: Task, block: str, ctx: Any) -> CheckResult:
    """One tier's check: F when a relation is REFUTED (its replayed
    counterexample in the message); the statuses in the details."""
    if check == "z3":
        from ...pyspec.tiers import z3_tier as tier
    else:
        from ...pyspec.tiers import crosshair_tier as tier
    settings = TierSettings(max_bound=ctx.option("spec_z3_bound") or DEFAULT_Z3_BOUND,
                            seconds=ctx.option("spec_tier_seconds") or DEFAULT_TIER_SECONDS,
                            kill=ctx.option("nl2postcond_kill") or "assertion")
    verdicts = tier.check(services(task.data, ctx), tier_task(task.data, _reference_outputs(task, ctx)), block,
                          reference_spec(task), settings)
    details = {"tier": check, **{v.relation.value: v.status.value for v in verdicts},
               "tiers": [{**v.as_dict(), "line": v.line()} for v in verdicts]}
    refuted = [v for v in verdicts if v.status is Status.REFUTED]
    if refuted:
        line = " ".join("; ".join(v.line() for v in refuted).split())
        return CheckResult(False, details, line if len(line) <= 400 else line[:397] + "...")
    return CheckResult(True, details)
