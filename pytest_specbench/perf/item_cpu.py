#!/usr/bin/env python3
"""One sample's CPU in the plugin's sandbox against the floor's, item by item, interleaved.

    python -m pytest_specbench.perf.item_cpu --set mbpp --tasks Mbpp/599,Mbpp/271 [--rounds 3]
        [--parts plugin,executor,floor,fresh] [--data ../shared/datasets] [--work /tmp/specbench-perf]

``--work`` is a perf work folder whose state already holds the set's expected outputs
(``perf/run.py``'s warm-up made them; ``--top N --timeline DIR`` takes the N items of
a run's timeline whose sandbox CPU was largest).  Each round runs every task through
every part, one after the other (on a loaded machine, figures are compared within a
round, a minute apart at most):

  plugin    ``pytest -n 0 --specbench-tasks=TASK`` (result cache off) with the timeline
            plugin: the item's ``kids``, every CPU second of its sandbox (the zygote's own
            and the job children's), re-measurements included
  executor  the same sample through :class:`PythonExecutor` in this process, the job the
            functional check sends (per-input limits, #33's margin, stopped at the first
            wrong output or time-out; no re-measurement, no digests): the zygote's and the
            child's CPU (``zygote+child``), the child's alone as the zygote counted it
            (``child``) and the sum of the calls' own figures as the child took them
            (``calls``)
  floor     ``perf/run.py``'s ``_floor_one`` in a child forked from this process (as the
            floor's pool runs it): its whole CPU
  fresh     a fresh ``python`` running the floor's ``_floor_one`` on the sample: its whole CPU
            (``total``: the interpreter's start and its imports included) and that call
            alone (``calls``: the exec, the calls and the comparisons)

Each part also gives its wall time (``wall``) and the minor page faults of the processes
that ran the sample (``faults``: the plugin's and the executor's sandbox, the floor's
forked child, the fresh interpreter).  Prints each figure per round and the least over
the rounds (CPU figures on a loaded machine only grow), and per task the plugin's least
against the floor's.
"""
from __future__ import annotations

import argparse
import json
import os
import pickle
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from pytest_specbench.benchmarks.contract.evalplus_data import load_evalplus, outputs_match
from pytest_specbench.benchmarks.contract.sanitize import clean_sample
from pytest_specbench.perf import run as perf_run
from pytest_specbench.perf import timeline

PARTS = ("plugin", "executor", "floor", "fresh")
# A cheap task of each set whose item runs first in a plugin part (it starts the zygote).
WARM = {"mbpp": "Mbpp/2", "humaneval": "HumanEval/0"}

# The fresh interpreter's job: the floor's own loop (perf/run.py's _floor_one: its timer, stopped
# at 1x), its CPU taken inside around it.
FRESH = r"""
import pickle, sys, time
t_start = time.process_time()
from pytest_specbench.perf import run
with open(sys.argv[1], "rb") as fh:
    task, code, expected, limits = pickle.load(fh)
tid = task["task_id"]
run._floor_init({tid: task}, {tid: expected}, {tid: limits})
t0 = time.process_time()
_, _, passed, stopped = run._floor_one((tid, 0, code))
print("passed" if passed else "timeout" if stopped is not None else "failed", time.process_time() - t0, t_start)
"""


def _children_cpu() -> float:
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return kids.ru_utime + kids.ru_stime


def _children_faults() -> int:
    return resource.getrusage(resource.RUSAGE_CHILDREN).ru_minflt


def _numeric(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _cell(k: str, v) -> str:
    return f"{k} {v}" if isinstance(v, int) else f"{k} {v:.3f}" if isinstance(v, float) else str(v)


class Items:
    """The set's tasks, samples, expected outputs and limits (as the floor reads them)."""

    def __init__(self, data: Path, work: Path, dataset: str, task_ids: list[str], rest: list[str] = (),
                 plugin_args: tuple[str, ...] = ()):
        self.data, self.work, self.dataset, self.plugin_args = data, work, dataset, tuple(plugin_args)
        data_file = next((data / "evalplus").glob("HumanEvalPlus*" if dataset == "humaneval" else "MbppPlus*"))
        self.tasks = load_evalplus(data_file)
        self.samples_file = data / "samples" / ("humaneval-chatgpt-temp0.0.jsonl" if dataset == "humaneval"
                                                else "mbpp-gpt-3.5-turbo-temp0.0.jsonl")
        samples = {s["task_id"]: s for s in perf_run.read_jsonl(self.samples_file)}
        self.expected, self.limits, _ = perf_run.floor_expected(list(task_ids) + list(rest), work / "state")
        # The floor leaves out a task without expected outputs (its reference failed): so do the rest
        self.rest = [t for t in rest if t in self.expected and t in samples]
        missing = [t for t in task_ids if t not in self.expected or t not in samples]
        if missing:
            sys.exit(f"item_cpu.py: no expected outputs (or no sample) in {work / 'state'} for {', '.join(missing)}: "
                     f"run perf/run.py's W4 there first")
        self.code = {t: clean_sample(samples[t]["solution"], self.tasks[t]["entry_point"])
                     for t in list(task_ids) + self.rest}
        perf_run._floor_init(self.tasks, self.expected, self.limits)

    def inputs(self, task_id: str) -> list:
        task = self.tasks[task_id]
        return list(task["base_input"]) + list(task["plus_input"])

    def _pytest(self, task_ids: list[str]) -> tuple[subprocess.CompletedProcess, list[dict]]:
        """A ``-n 0`` run of these tasks' items (result cache off) with the timeline plugin:
        the process and its items' timeline events, in the order they ran."""
        folder = Path(tempfile.mkdtemp(prefix="item-cpu-", dir=self.work))
        argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:benchmark",
                "-p", "pytest_specbench.perf.timeline", f"--specbench-dir={self.work / 'state'}",
                "--specbench=evalplus", f"--specbench-data={self.data}", f"--model=replay:{self.samples_file}",
                "--specbench-checks=functional", f"--specbench-tasks={','.join(task_ids)}",
                "--specbench-result-cache=off", "-n", "0", *self.plugin_args]
        proc = subprocess.run(argv, cwd=self.work, env={**os.environ, timeline.ENV: str(folder)},
                              capture_output=True, text=True)
        items = sorted((e for evs in timeline.load(folder).values() for e in evs if e["ev"] == "item"),
                       key=lambda e: e["t0"])
        for path in folder.glob("*"):
            path.unlink()
        folder.rmdir()
        return proc, items

    # ------------------------------------------------------------ the parts
    def plugin(self, task_id: str) -> dict:
        """The item's sandbox CPU in a ``-n 0`` run, after a cheap item of another task
        (``WARM``) has started the zygote (a run starts it once per worker, not per item)."""
        proc, items = self._pytest([WARM[self.dataset], task_id])
        if len(items) != 2 or f"::{task_id}::" not in items[1]["nodeid"]:
            raise SystemExit(f"item_cpu.py: {task_id}: not two items, the warm one first: "
                             f"{[e['nodeid'] for e in items]} {proc.stdout[-400:]}{proc.stderr[-400:]}")
        e = items[1]
        return {"sandbox": e["kids"] - e["kids0"], "worker": e["cpu"] - e["cpu0"], "wall": e["t"] - e["t0"],
                "faults": e["flt"] - e["flt0"],
                "verdict": "failed" if f"FAILED specbench::evalplus::{task_id}::" in proc.stdout else "passed"}

    def the_rest(self, task_ids: list[str]) -> dict:
        """Many small items at once: the plugin's ``-n 0`` run over ``task_ids`` (their items'
        summed sandbox CPU and the worker's own in them) and the floor's loop over the same
        samples in one process forked from this one (its whole CPU)."""
        _, items = self._pytest(task_ids)
        c0 = _children_cpu()
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the forked floor process
            for task_id in task_ids:
                perf_run._floor_one((task_id, 0, self.code[task_id]))
            os._exit(0)
        os.waitpid(pid, 0)
        return {"plugin sandbox": sum(e["kids"] - e["kids0"] for e in items),
                "plugin worker": sum(e["cpu"] - e["cpu0"] for e in items), "items": len(items),
                "floor": _children_cpu() - c0}

    def executor(self, task_id: str, ex) -> dict:
        from pytest_specbench.execution.limits import BORDERLINE_MARGIN
        from pytest_specbench.execution.python import CallsJob

        task, expected, inputs = self.tasks[task_id], self.expected[task_id], self.inputs(task_id)
        verdict = ["passed"]

        def judge(outcome) -> bool:
            if outcome.status == "ok":
                try:
                    if outputs_match(task, inputs[outcome.index], outcome.value, expected[outcome.index]):
                        return True
                except ValueError:
                    pass
            verdict[0] = outcome.status if outcome.status != "ok" else "wrong"
            return False

        job = CallsJob(self.code[task_id], task["entry_point"], f"{task_id}:item-cpu",
                       lambda: [(tuple(inp), {}) for inp in inputs], range(len(inputs)),
                       call_cpu=self.limits[task_id], margin=BORDERLINE_MARGIN)
        before, _, flt0 = timeline.walk()
        t0 = time.perf_counter()
        result = ex.run(None, job, on_outcome=judge)
        wall = time.perf_counter() - t0
        after, _, flt1 = timeline.walk()
        if result.load_error:
            verdict[0] = "load error"
        return {"zygote+child": after - before, "child": result.cpu or 0.0, "wall": wall, "faults": flt1 - flt0,
                "calls": sum(o.cpu for o in result.outcomes.values()), "verdict": verdict[0]}

    def floor(self, task_id: str) -> dict:
        c0, f0, t0 = _children_cpu(), _children_faults(), time.perf_counter()
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the forked floor process
            _, _, passed, stopped = perf_run._floor_one((task_id, 0, self.code[task_id]))
            os._exit(0 if passed else 2 if stopped is not None else 1)
        _, status = os.waitpid(pid, 0)
        code = os.waitstatus_to_exitcode(status)
        return {"all": _children_cpu() - c0, "wall": time.perf_counter() - t0, "faults": _children_faults() - f0,
                "verdict": {0: "passed", 2: "timeout"}.get(code, "failed")}

    def fresh(self, task_id: str) -> dict:
        with tempfile.NamedTemporaryFile(suffix=".pickle", dir=self.work, delete=False) as fh:
            pickle.dump((self.tasks[task_id], self.code[task_id], self.expected[task_id], self.limits[task_id]), fh,
                        protocol=pickle.HIGHEST_PROTOCOL)
        try:
            c0, f0, t0 = _children_cpu(), _children_faults(), time.perf_counter()
            proc = subprocess.run([sys.executable, "-c", FRESH, fh.name], capture_output=True, text=True)
            total, wall, faults = _children_cpu() - c0, time.perf_counter() - t0, _children_faults() - f0
        finally:
            os.unlink(fh.name)
        status, calls, _ = proc.stdout.split()
        return {"total": total, "calls": float(calls), "wall": wall, "faults": faults, "verdict": status}


def top_items(folder: Path, n: int) -> list[str]:
    """The ``n`` task ids whose items' sandbox CPU was largest in a run's timeline."""
    rows = [(e["kids"] - e["kids0"], e["nodeid"].split("::")[2])
            for evs in timeline.load(folder).values() for e in evs if e["ev"] == "item"]
    return [task for _, task in sorted(rows, reverse=True)[:n]]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--set", choices=("mbpp", "humaneval"), default="mbpp")
    ap.add_argument("--tasks", default="", help="task ids, comma-separated")
    ap.add_argument("--top", type=int, default=0, help="with --timeline: the N costliest items of that run")
    ap.add_argument("--timeline", type=Path, help="a run's timeline folder (perf/run.py --timeline DIR/<name>-timeline)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--wall-factor", type=float, default=None,
                    help="the plugin part's --specbench-wall-factor (a large one keeps a loaded machine's wall "
                         "stops off a CPU-bound call, so that its CPU rules are the ones measured)")
    ap.add_argument("--rest", action="store_true",
                    help="each round, also every other task of the set at once: the plugin's -n 0 run over them "
                         "(summed sandbox CPU) against the floor's loop over them in one process")
    ap.add_argument("--parts", default=",".join(PARTS))
    ap.add_argument("--data", type=Path, default=Path("../shared/datasets"))
    ap.add_argument("--work", type=Path, default=Path("/tmp/specbench-perf"))
    args = ap.parse_args(argv)
    parts = [p for p in args.parts.split(",") if p]
    if set(parts) - set(PARTS):
        sys.exit(f"item_cpu.py: --parts takes {', '.join(PARTS)} (got {args.parts!r})")
    task_ids = [t for t in args.tasks.split(",") if t]
    if args.top:
        if args.timeline is None:
            sys.exit("item_cpu.py: --top needs --timeline")
        task_ids += [t for t in top_items(args.timeline, args.top) if t not in task_ids]
    if not task_ids:
        sys.exit("item_cpu.py: no task (--tasks or --top with --timeline)")
    work = args.work.resolve()
    rest = []
    if args.rest:
        every = [s["task_id"] for s in perf_run.read_jsonl(args.data / "samples" / (
            "humaneval-chatgpt-temp0.0.jsonl" if args.set == "humaneval" else "mbpp-gpt-3.5-turbo-temp0.0.jsonl"))]
        rest = [t for t in every if t not in task_ids]
    items = Items(args.data.resolve(), work, args.set, task_ids, rest,
                  plugin_args=() if args.wall_factor is None else (f"--specbench-wall-factor={args.wall_factor:g}",))
    rest = items.rest
    ex = None
    if "executor" in parts:
        from pytest_specbench.execution.limits import Limits
        from pytest_specbench.execution.python import PythonExecutor

        ex = PythonExecutor(Limits())
        ex.ensure_started()  # the zygote's own start is not an item's
    figures: dict[tuple[str, str], list[dict]] = {}
    try:
        for round_ in range(args.rounds):
            for task_id in task_ids:
                line = []
                for part in parts:
                    got = items.executor(task_id, ex) if part == "executor" else getattr(items, part)(task_id)
                    figures.setdefault((task_id, part), []).append(got)
                    line.append(f"{part} " + " ".join(_cell(k, v) for k, v in got.items()))
                print(f"round {round_ + 1} {task_id} load {os.getloadavg()[0]:.1f} {time.strftime('%H:%M:%S')}: "
                      + "; ".join(line), flush=True)
            if rest:
                got = items.the_rest(rest)
                figures.setdefault(("the rest", "rest"), []).append(got)
                print(f"round {round_ + 1} the other {len(rest)} tasks load {os.getloadavg()[0]:.1f} "
                      f"{time.strftime('%H:%M:%S')}: " + ", ".join(f"{k} {v:.3f}" if isinstance(v, float) else
                                                                   f"{k} {v}" for k, v in got.items()), flush=True)
    finally:
        if ex is not None:
            ex.close()
    print("\nleast over the rounds (CPU s)")
    print("task          " + "  ".join(f"{part}" for part in parts))
    totals: dict[str, float] = {}
    for task_id in task_ids:
        cells = []
        for part in parts:
            runs = figures[(task_id, part)]
            keys = [k for k, v in runs[0].items() if _numeric(v)]
            least = {k: min(r[k] for r in runs) for k in keys}
            for k, v in least.items():
                totals[f"{part} {k}"] = totals.get(f"{part} {k}", 0) + v
            cells.append(f"{part}: " + ", ".join(f"{k} {v}" if isinstance(v, int) else f"{k} {v:.2f}"
                                                 for k, v in least.items())
                         + f" [{'/'.join(sorted({r['verdict'] for r in runs}))}]")
        print(f"{task_id:12s}  " + "; ".join(cells))
    if rest:
        runs = figures[("the rest", "rest")]
        print(f"the other {len(rest)} tasks: " + ", ".join(
            f"{k} {min(r[k] for r in runs):.2f}" for k, v in runs[0].items() if isinstance(v, float)))
    print("sum           " + "; ".join(_cell(k, round(v, 2) if isinstance(v, float) else v) for k, v in totals.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
