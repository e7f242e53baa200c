"""What a ContractEval precondition tier check costs (issue #47; the README's
RI/AV rows): the plugin run as a user runs it, once per tier, on a slice of
tasks, under the ``cs`` prompt.

    python -m pytest_specbench.benchmarks.contract.tools.tier_costs [--data DATA_ROOT] [--tasks 10]
        [--model reference] [--tiers corpus,pbt,z3] [--examples 100]

Per tier: one ``pytest -n 0`` run of that tier's check alone on the first
``--tasks`` tasks (with CVTs), and one collection-only run of the same
selection (plugin start, loading, collecting); CPU seconds per check are the
difference of the two runs' CPU (user + sys of the run and every process it
waited for: the sandbox jobs), divided by the checks.  Prints those, the wall
seconds, and the statuses per relation from the run's report.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from ....data.bundled import bundled_suite
from ...tier_options import TIERS
from ..tiers import TIER_CHECKS


def _children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def _run(argv: list[str], folder: Path) -> tuple[float, float, int]:
    cpu, wall = _children_cpu(), time.monotonic()
    done = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", *argv], cwd=folder,
                          capture_output=True, text=True, env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})
    return _children_cpu() - cpu, time.monotonic() - wall, done.returncode


def task_ids(data: Path | None, count: int) -> list[str]:
    """The first ``count`` tasks with CVTs of the ContractEval file the run reads."""
    root = data if data else bundled_suite("contract")
    rows = [json.loads(line) for line in (root / "contracteval" / "contracteval_rebuilt.jsonl").read_text().splitlines()
            if line.strip()]
    return [r["task_id"] for r in rows if r["cvts"]][:count]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="tier_costs", description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=None, help="a data root (default: the bundled suite)")
    parser.add_argument("--tasks", type=int, default=10)
    parser.add_argument("--model", default="reference")
    parser.add_argument("--tiers", default=",".join(TIER_CHECKS))
    parser.add_argument("--examples", type=int, default=100)
    args = parser.parse_args(argv)
    tiers = [t for t in args.tiers.split(",") if t in TIER_CHECKS and t in TIERS]
    ids = task_ids(args.data.resolve() if args.data else None, args.tasks)
    with tempfile.TemporaryDirectory(prefix="contract-tier-costs-") as tmp:
        folder = Path(tmp)
        for tier in tiers:
            check = TIER_CHECKS[tier]
            common = ["--specbench=contract", f"--model={args.model}", "--contract-condition=cs",
                      f"--spec-tiers={tier}", f"--specbench-checks={check}", f"--spec-pbt-examples={args.examples}",
                      f"--specbench-tasks={','.join(ids)}", "--specbench-result-cache=off", "-n", "0",
                      *([f"--specbench-data={args.data.resolve()}"] if args.data else [])]
            base_cpu, _, _ = _run([*common, "--co"], folder)
            cpu, wall, code = _run([*common, "--specbench-report=r.json"], folder)
            report = json.loads((folder / "r.json").read_text())["benchmarks"]["contract"]
            statuses: Counter = Counter()
            checks = 0
            for task in report["tasks"].values():
                for sample in task["samples"]:
                    found = sample["checks"].get(check)
                    if found:
                        checks += 1
                        statuses.update(f"{d['relation']} {d['status']}" for d in found.get("tiers", ()))
            per = (cpu - base_cpu) / checks if checks else float("nan")
            print(f"{check}: {checks} checks, {per:.2f} CPU s per check (run {cpu:.1f} s - start {base_cpu:.1f} s), "
                  f"{wall:.1f} s wall, exit {code}; " + ", ".join(f"{k}: {v}" for k, v in sorted(statuses.items())))


if __name__ == "__main__":
    main()
