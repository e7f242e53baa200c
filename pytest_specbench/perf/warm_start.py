#!/usr/bin/env python3
"""What a warm start saves (execution/warm.py, issue #45): pyspec jobs exec'd and warm.

    python -m pytest_specbench.perf.warm_start [--jobs 6] [--rounds 3] [--examples 15]
    python -m pytest_specbench.perf.warm_start --kind postcond [--jobs 6] [--rounds 3]

Per round and mode (exec'd: ``CommandExecutor(warm=False)``; warm), one command
executor runs ``--jobs`` pbt search jobs (nl2postcond's keeper, a weak sortedness
postcondition: AC passes, RW is refuted and shrunk) and as many blocks jobs (two
cases each), then is closed.  Printed: the median CPU of a job as the sandbox counts
it (the job's processes), and the CPU of the whole executor (its zygote, the warm
starts' seed and images, every job: this process's children, counted when the
executor is closed), per mode and round; the modes alternate, so load moves both.

``--kind postcond``: the jobs are PostcondBench's runs instead (``python -m pytest`` of
the bundled minilib--clamp's cover test with a spec it violates, in the harness's
interpreter: the ``-m`` kind of warm start), ``--jobs`` of them per round; the verdicts
of both modes are printed.
"""
from __future__ import annotations

import argparse
import resource
import statistics
from typing import Callable

from pytest_specbench.execution.command import CommandExecutor
from pytest_specbench.pyspec.blocks import blocks_job, check_blocks
from pytest_specbench.pyspec.search import read_search

SPEC = "assert all(a <= b for a, b in zip(return_value, return_value[1:]))"
CONFIG = {"program": "def f(xs):\n    return sorted(set(xs))\n", "entry_point": "f", "params": ["xs"],
          "types": {"xs": ["list", "int"]}, "contract": "", "seconds": 60, "relations": ["AC", "RW"]}
CASES = [{"inputs": {"xs": [2, 1]}, "return_value": [1, 2]}, {"inputs": {"xs": [2, 1]}, "return_value": [2, 1]}]


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def one_round(warm: bool, jobs: int, examples: int) -> tuple[list[float], list[float], float, list]:
    before = _children_cpu()
    executor = CommandExecutor(warm=warm)
    search, blocks, found = [], [], []
    try:
        for _ in range(jobs):
            job, nonce = blocks_job("import re", SPEC, [], 2.0, 60.0, search={**CONFIG, "examples": examples})
            result = executor.run(None, job)
            search.append(result.cpu)
            found.append({r: (f.status, f.tried) for r, f in read_search(result.records, nonce, ("AC", "RW"),
                                                                          result.timed_out).items()})
            job, _ = blocks_job("import re", SPEC, CASES, 2.0, 60.0)
            result = executor.run(None, job)
            blocks.append(result.cpu)
        check_blocks(executor, "import re", SPEC, CASES)  # (the records are read: the job did run)
    finally:
        executor.close()
    return search, blocks, _children_cpu() - before, found


class _Counted:
    """The executor as ``run_program`` uses it, keeping each job's CPU as the sandbox counts it."""

    def __init__(self, executor: CommandExecutor):
        self.executor, self.cpu = executor, []

    def run(self, prepared, job):
        result = self.executor.run(prepared, job)
        self.cpu.append(result.cpu)
        return result


def postcond_round(warm: bool, jobs: int) -> tuple[list[float], float, list]:
    import tempfile
    from pathlib import Path

    from pytest_specbench.benchmarks.postcond import execute
    from pytest_specbench.benchmarks.postcond.adapter import BUNDLED, load_tasks

    task = next(t for t in load_tasks(BUNDLED)[0] if t.task_id == "minilib--clamp").data
    checkout = (BUNDLED / task["repo"]["local"]).resolve()
    program = execute.Program((checkout / task["file"]).read_text(), "original")
    before = _children_cpu()
    with tempfile.TemporaryDirectory() as state:
        executor = CommandExecutor(warm=warm, state_dir=Path(state))
        found = []
        try:
            prepared = executor.prepare(execute.environment_for(task, checkout))
            counted = _Counted(executor)
            for _ in range(jobs):
                out = execute.run_program(counted, prepared, task, checkout, program,
                                          "@icontract.ensure(lambda x, result: result == x)", "fixed", 20.0)
                found.append(out["verdict"])
            cpu = counted.cpu
        finally:
            executor.close()
    return cpu, _children_cpu() - before, found


def alternate(rounds: int, one: Callable[[bool], tuple[list[list[float]], float, list]], what: str) -> None:
    """``rounds`` rounds of both modes, exec'd first: per round and mode the medians of the
    job figures ``one(warm)`` gives and its executor's whole CPU; then the medians of the
    rounds and whether both modes found the same (``what``)."""
    totals: dict[str, list[float]] = {"exec": [], "warm": []}
    results = {}
    for r in range(rounds):
        for mode in ("exec", "warm"):
            columns, whole, found = one(mode == "warm")
            totals[mode].append(whole)
            results.setdefault(mode, found)
            print(f"{mode:6} {r:>5} " + " ".join(f"{statistics.median(c):>11.3f}" for c in columns) + f" {whole:>9.2f}")
    print(f"executor CPU, median of rounds: exec {statistics.median(totals['exec']):.2f} s, "
          f"warm {statistics.median(totals['warm']):.2f} s")
    print(f"same {what} in both modes:", results["exec"] == results["warm"], results["warm"][0])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--jobs", type=int, default=6)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--examples", type=int, default=15)
    parser.add_argument("--kind", choices=("pyspec", "postcond"), default="pyspec")
    args = parser.parse_args(argv)
    if args.kind == "postcond":
        print(f"{'mode':6} {'round':>5} {'run job':>11} {'executor':>9}  (CPU s: job median, executor whole; "
              f"{args.jobs} runs of minilib--clamp's test)")

        def one(warm):
            cpu, whole, found = postcond_round(warm, args.jobs)
            return [cpu], whole, found
        return alternate(args.rounds, one, "verdicts")
    print(f"{'mode':6} {'round':>5} {'search job':>11} {'blocks job':>11} {'executor':>9}  (CPU s: job medians, "
          f"executor whole; {args.jobs} search + {args.jobs + 1} blocks jobs)")

    def one(warm):
        search, blocks, whole, found = one_round(warm, args.jobs, args.examples)
        return [search, blocks], whole, found
    alternate(args.rounds, one, "search verdicts")


if __name__ == "__main__":
    main()
