"""What the search tiers (``z3``, ``crosshair``; issue #47) decide on upstream's
postconditions, and what a check costs: the README's row per tier.

    python -m pytest_specbench.benchmarks.nl2postcond.tools.tier_costs DATA_ROOT [--tasks HumanEval/0 ...]
        [--rows 3] [--tiers z3,crosshair] [--seconds 20]

For each task whose upstream reference spec exists (the first row upstream's
sheet shows test-set correct and complete, ``tier_checks.reference_spec``),
the first ``--rows`` rows (by ``r_num``, that row excluded) go through each tier
as the plugin's check would.  Prints, per tier: checks, CPU seconds per check
(this process and its forked search children, the solver's side, plus the
sandbox jobs' own CPU as the executors count it), wall seconds, and the statuses per relation; then each
REFUTED row with its counterexample, and how many of the rows upstream marks
test-set correct a tier refuted.
"""
from __future__ import annotations

import argparse
import json
import resource
import statistics
import time
from collections import Counter
from pathlib import Path
from typing import Any

from ....execution.command import CommandExecutor
from ....execution.limits import Limits
from ....execution.python import PythonExecutor
from ....pyspec.tiers.replay import TierServices, TierSettings
from ....pyspec.tiers.verdict import Status
from ...base import Task
from ...tier_options import DEFAULT_TIER_SECONDS
from ..answers import AnswerError, postcondition_text
from .. import tier_checks
from ...contract.evalplus import EvalPlusData


class Counting:
    """An executor that adds up its jobs' CPU seconds."""

    def __init__(self, real: Any):
        self.real, self.cpu = real, 0.0

    def run(self, env: Any, job: Any) -> Any:
        result = self.real.run(env, job)
        self.cpu += float(getattr(result, "cpu", 0.0) or 0.0)
        return result


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="tier_costs", description=__doc__.split("\n\n")[0])
    parser.add_argument("data_root", type=Path)
    parser.add_argument("--tasks", nargs="*", default=None)
    parser.add_argument("--rows", type=int, default=3)
    parser.add_argument("--tiers", default="z3,crosshair")
    parser.add_argument("--seconds", type=float, default=DEFAULT_TIER_SECONDS)
    args = parser.parse_args(argv)
    root = args.data_root.resolve()
    sheet = root / "nl2postcond" / tier_checks.SHEET
    refs = tier_checks._upstream_references(str(sheet))
    rows = [json.loads(line) for line in sheet.read_text(encoding="utf-8").splitlines() if line.strip()]
    data = EvalPlusData.load(root / "evalplus")
    wanted = [t for t in sorted(refs, key=lambda t: int(t.split("/")[1])) if not args.tasks or t in args.tasks]
    command, python = Counting(CommandExecutor()), Counting(PythonExecutor(Limits()))
    python.real.ensure_started()
    tiers = [t for t in args.tiers.split(",") if t in tier_checks.TIER_CHECKS]
    settings = TierSettings(seconds=args.seconds)
    stats = {t: {"cpu": [], "wall": [], "status": Counter(), "refuted": [], "upstream_correct_refuted": 0,
                 "upstream_correct": 0, "upstream_complete_refuted": 0, "upstream_complete": 0} for t in tiers}
    try:
        for task_id in wanted:
            task = Task(task_id, data.tasks[task_id], None)
            mine = sorted((r for r in rows if r["task_id"] == task_id and r["postcondition"] != refs[task_id]),
                          key=lambda r: r["r_num"])[:args.rows]
            services = TierServices(command, tier_checks.reference_runner(task.data, python, 20.0),
                                    tier_checks.oracle(task.data))
            seen = services.run_reference([tuple(i) for i in task.data.get("base_input") or ()])
            tier_task = tier_checks.tier_task(task.data, [o[1] for o in seen if o is not None])
            for row in mine:
                try:
                    block = postcondition_text(row["postcondition"])
                except AnswerError:
                    continue
                for tier in tiers:
                    module = _tier_module(tier)
                    cpu0, wall0, jobs0 = _own_cpu(), time.monotonic(), command.cpu + python.cpu
                    verdicts = module.check(services, tier_task, block, refs[task_id], settings)
                    s = stats[tier]
                    s["cpu"].append(_own_cpu() - cpu0 + command.cpu + python.cpu - jobs0)
                    s["wall"].append(time.monotonic() - wall0)
                    for v in verdicts:
                        s["status"][f"{v.relation.value} {v.status.value}"] += 1
                    refuted = [v for v in verdicts if v.status is Status.REFUTED]
                    if row.get("test_set_correct"):
                        s["upstream_correct"] += 1
                        s["upstream_correct_refuted"] += bool(refuted)
                        if row.get("num_bopi_run") and row.get("num_bopi_killed") == row["num_bopi_run"]:
                            s["upstream_complete"] += 1
                            s["upstream_complete_refuted"] += bool(refuted)
                    s["refuted"] += [(task_id, row["r_num"], row.get("test_set_correct"), v.line()) for v in refuted]
                    print(f"{task_id} r{row['r_num']} {tier}: " + " | ".join(v.line()[:160] for v in verdicts),
                          flush=True)
    finally:
        command.real.close()
        python.real.close()
    print()
    print("| tier | checks | CPU s per check (median / mean / max) | wall s (mean) | statuses |")
    print("|---|---|---|---|---|")
    for tier, s in stats.items():
        if not s["cpu"]:
            continue
        statuses = ", ".join(f"{k} {n}" for k, n in sorted(s["status"].items()))
        print(f"| {tier} | {len(s['cpu'])} | {statistics.median(s['cpu']):.2f} / {statistics.mean(s['cpu']):.2f} / "
              f"{max(s['cpu']):.2f} | {statistics.mean(s['wall']):.1f} | {statuses} |")
    for tier, s in stats.items():
        print(f"\n{tier}: {s['upstream_correct_refuted']} of {s['upstream_correct']} rows upstream marks test-set "
              f"correct refuted; {s['upstream_complete_refuted']} of {s['upstream_complete']} it shows complete too")
        for task_id, r_num, correct, line in s["refuted"]:
            print(f"  {task_id} r{r_num} (upstream test-set correct: {correct}): {line[:300]}")


def _own_cpu() -> float:
    """This process's CPU seconds and its waited children's (z3's search runs in a forked child)."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


def _tier_module(tier: str):
    if tier == "z3":
        from ....pyspec.tiers import z3_tier as module
    else:
        from ....pyspec.tiers import crosshair_tier as module
    return module


if __name__ == "__main__":
    main()
