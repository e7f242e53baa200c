"""The corpus build run the naive way, for timing beside ``specbench nl2postcond
build-corpus`` (docs/timing.md, "nl2postcond's corpus build"): one fresh
``python`` process per candidate program, as upstream's script runs each
program, every program run (no copy skipped), one after another.

    python -m pytest_specbench.benchmarks.nl2postcond.tools.naive_build DATA_ROOT --tasks HumanEval/0 ...

Each process is a job of the ``command`` sandbox (the candidates are untrusted
code): it loads the program, calls it on every test input (1 CPU second each,
the build's per-call limit) and writes, per input, the repr of the arguments
after the call and of the result.  Here a bad output is a repr that differs from
the reference's (the exact oracle on reprs).  The sandbox's start per process
is in the naive figure (upstream's processes have none); the harness side is
this process.  Prints per task: programs, kept, bad outputs, wall, CPU.
"""
from __future__ import annotations

import argparse
import json
import os
import pickle
import resource
import sys
import time
from pathlib import Path

from . import one_line_errors

RUNNER = r'''
import json, os, pickle, signal, sys
calls = pickle.load(open("calls.pkl", "rb"))
out = os.fdopen(3, "w")
class Stop(BaseException):
    pass
def stop(*_):
    raise Stop()
signal.signal(signal.SIGPROF, stop)
namespace = {"__name__": "__candidate__"}
try:
    exec(compile(open("program.py").read(), "program.py", "exec"), namespace)
    fn = namespace[sys.argv[1]]
except BaseException:
    out.write(json.dumps({"load_error": True}) + "\n")
    sys.exit(0)
for i, (args, kwargs) in enumerate(calls):
    signal.setitimer(signal.ITIMER_PROF, 1.0)
    try:
        result = fn(*args, **kwargs)
        signal.setitimer(signal.ITIMER_PROF, 0)
        line = {"i": i, "s": "ok", "a": repr(list(args)), "r": repr(result)}
    except Stop:
        line = {"i": i, "s": "timeout"}
    except BaseException:
        signal.setitimer(signal.ITIMER_PROF, 0)
        line = {"i": i, "s": "raise"}
    out.write(json.dumps(line) + "\n")
out.flush()
'''


@one_line_errors("naive_build")
def main(argv: list[str] | None = None) -> int:
    from ....execution.command import CommandExecutor
    from ....execution.protocol import CommandJob
    from ...contract.evalplus import EvalPlusData
    from ..corpus import Candidate, read_candidates, select
    from ..observe import Observation, test_inputs

    p = argparse.ArgumentParser(prog="naive_build", description=__doc__.split("\n\n")[0])
    p.add_argument("data_root", type=Path)
    p.add_argument("--tasks", nargs="+", required=True)
    p.add_argument("--inputs", choices=("base+plus", "base"), default="base+plus")
    args = p.parse_args(argv)
    data = EvalPlusData.load(args.data_root / "evalplus")
    zipped = args.data_root / "nl2postcond" / "code_mutants" / "merged_codes_preprocessed.jsonl.zip"
    wanted = set(args.tasks)
    by_task: dict[str, list[Candidate]] = {}
    for cand in read_candidates(zipped):
        if cand.task_id in wanted:
            by_task.setdefault(cand.task_id, []).append(cand)
    executor = CommandExecutor()
    children0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    start, cpu0, total = time.monotonic(), time.process_time(), 0
    try:
        for task_id in args.tasks:
            task, t0 = dict(data.tasks[task_id]), time.monotonic()
            calls = [(tuple(a), dict(k)) for a, k in test_inputs(task, args.inputs)]
            files = {"calls.pkl": pickle.dumps(calls), "runner.py": RUNNER.encode()}

            def run(code: str) -> list:
                job = CommandJob(argv=("python3", "-I", "runner.py", task["entry_point"]),
                                 files={**files, "program.py": code.encode()},
                                 cpu_seconds=5.0 + 1.0 * len(calls), wall_seconds=30.0 + 3.0 * len(calls))
                result = executor.run(None, job)
                seen = {}
                for rec in result.records:
                    if isinstance(rec, dict) and isinstance(rec.get("i"), int):
                        seen[rec["i"]] = rec
                return [Observation(i, "ok", (seen[i].get("a"),), seen[i].get("r"))
                        if seen.get(i, {}).get("s") == "ok" else Observation(i, "raise") for i in range(len(calls))]

            from ...contract.evalplus_data import canonical_program
            reference = [o.result for o in run(canonical_program(task))]
            observations = {c.program: run(c.code) for c in by_task[task_id]}
            kept = select(task, reference, by_task[task_id], observations, "exact")
            pairs = {(b.index, b.output) for k in kept for b in k.bopi}
            total += len(by_task[task_id])
            print(f"{task_id}: {len(by_task[task_id])} programs, {len(kept)} kept, {len(pairs)} distinct bad outputs "
                  f"({time.monotonic() - t0:.1f} s)", flush=True)
    finally:
        executor.close()
    wall = time.monotonic() - start
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    sandbox_cpu = (children.ru_utime + children.ru_stime) - (children0.ru_utime + children0.ru_stime)
    print(f"naive: {total} programs, wall {wall:.1f} s, harness CPU {time.process_time() - cpu0:.1f} s, "
          f"sandbox CPU {sandbox_cpu:.1f} s, {total / wall:.2f} programs/s; load average {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
