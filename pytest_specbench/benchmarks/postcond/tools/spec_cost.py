"""What the Python-spec service (a spec child per outermost call, issue 41)
costs against the in-process design before it, on the same machine in one run.

    git archive main pytest_specbench | tar -x -C /tmp/old-tree
    python -m pytest_specbench.benchmarks.postcond.tools.spec_cost ../shared/datasets/postcondbench/gpt-5--v2-all \
        /work/.mirror --old-tree /tmp/old-tree [--state DIR] [--tasks a,b]

    python -m pytest_specbench.benchmarks.postcond.tools.spec_cost --per-call 200

``--per-call N``: one guarded call's cost alone (N calls of a guarded ``max``-like
function in a process that imported pytest and icontract, as the keeper has), beside
the same icontract condition in-process.

For each task of the folder: the reference on the original and on every mutant
(upstream's ``correct`` and ``complete`` runs), each one sandboxed pytest run
through ``execute.build_job`` and the ``command`` executor, once with this tree
and once with ``--old-tree`` (a copy of the package before the service), the two
sides at the same time (so both see the same load), each in a process of its
own.  Prints per task and in total: runs, wall and CPU of the jobs, verdicts
(and whether the two sides agree on each run), the spec children the new side
forked, and the extra wall per child.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest_specbench  # noqa: E402

# The tree this file is in: the folder holding the imported pytest_specbench package.
HERE = Path(pytest_specbench.__path__[0]).resolve().parent


def worker(task_file: Path, repos: Path, state: Path, timeout: float) -> dict:
    """One side, one task: every program with the reference (runs in this tree)."""
    from pytest_specbench.benchmarks.postcond import execute, repos as repos_mod, source, verdict
    from pytest_specbench.benchmarks.postcond.adapter import load_tasks
    from pytest_specbench.execution.command import CommandExecutor

    (task,) = load_tasks(task_file)[0]
    data = dict(task.data)
    checkout = repos_mod.checkout_for(data, task.source, repos, state / "cache" / "postcond" / "checkouts")
    text = (checkout / data["file"].removeprefix("./")).read_text(encoding="utf-8")
    decorators = source.parse_answer(data["ref_postcond"], text)
    programs = [execute.Program(text, "original")] + execute.mutant_programs(data, text)
    ex = CommandExecutor(state_dir=state)
    runs = []
    try:
        prepared = ex.prepare(execute.environment_for(data, checkout))
        python = (getattr(prepared, "executables", None) or {}).get("python", "python")
        for program in programs:
            job, injected, nonce = execute.build_job(data, checkout, program, decorators, "fixed", timeout, python)
            start = time.perf_counter()
            result = ex.run(prepared, job)
            wall = time.perf_counter() - start
            records = verdict.genuine(result.records, nonce)
            out = verdict.decide(records, bool(result.timed_out), injected.first_line, injected.last_line)
            finish = next((r for r in records if r.get("event") == "finish"), {})
            runs.append({"label": program.label, "verdict": out["verdict"], "wall": wall, "cpu": result.cpu,
                         "children": finish.get("spec_children")})
    finally:
        ex.close()
    import pytest_specbench

    return {"task": task.task_id, "runs": runs, "package": str(Path(pytest_specbench.__file__).resolve().parent)}


def per_call(n: int, work: Path) -> None:
    """Print the wall and CPU of one outermost guarded call, and of icontract in-process."""
    import importlib.util
    import resource

    import pytest  # noqa: F401 - the keeper's weight: pytest (with its Python collector) and icontract imported
    import icontract

    from pytest_specbench.pyspec import guard_spec, spec_process as sp

    def cpu() -> float:
        own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
        return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime

    dec = "@icontract.ensure(lambda a, b, result: result == max(a, b))"
    from pytest_specbench.benchmarks.postcond.source import GUARD_NAME, HEAD
    text = f"{HEAD}\n{dec}\ndef f(a, b):\n    return a if a > b else b\n"
    work.mkdir(parents=True, exist_ok=True)
    (work / "per_call_mod.py").write_text(text.replace(dec, f"@{GUARD_NAME}('0')"))
    sys.modules["specbench_pyspec"] = sp
    sp.register({"0": guard_spec(dec, 2, text)})
    spec = importlib.util.spec_from_file_location("per_call_mod", work / "per_call_mod.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    start, c0 = time.perf_counter(), cpu()
    for i in range(n):
        mod.f(i, 3)
    wall, used = (time.perf_counter() - start) / n, (cpu() - c0) / n

    @icontract.ensure(lambda a, b, result: result == max(a, b))
    def g(a, b):
        return a if a > b else b

    start = time.perf_counter()
    for i in range(n):
        g(i, 3)
    inproc = (time.perf_counter() - start) / n
    print(f"guarded call (a spec child): {wall * 1000:.2f} ms wall, {used * 1000:.2f} ms CPU per call; "
          f"icontract in-process: {inproc * 1000:.3f} ms per call; {n} calls; load {os.getloadavg()[0]:.1f}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("data", type=Path, nargs="?", help="a task folder (upstream's task files)")
    ap.add_argument("repos", type=Path, nargs="?", help="the repositories' mirror (--postcond-repos)")
    ap.add_argument("--old-tree", type=Path, help="a folder holding the old pytest_specbench package")
    ap.add_argument("--per-call", type=int, metavar="N", help="only the cost of one guarded call, N calls")
    ap.add_argument("--state", type=Path, default=Path("/tmp/spec-cost-state"), help="venvs and checkouts (reused)")
    ap.add_argument("--tasks", default="", help="comma-separated task ids (default: all)")
    ap.add_argument("--timeout", type=float, default=30.0)
    ap.add_argument("--worker", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.per_call:
        per_call(args.per_call, args.state / "per-call")
        return 0
    if args.worker:
        print(json.dumps(worker(args.worker, args.repos, args.state, args.timeout)))
        return 0
    if args.data is None or args.repos is None or args.old_tree is None:
        ap.error("DATA, REPOS and --old-tree are needed (or --per-call N)")
    if not (args.old_tree / "pytest_specbench").is_dir():
        ap.error(f"--old-tree {args.old_tree}: no pytest_specbench folder there")
    wanted = {t for t in args.tasks.split(",") if t}
    files = [f for f in sorted(args.data.glob("*.json")) if not wanted or f.stem in wanted]
    if not files:
        ap.error(f"{args.data}: no task file{' of ' + args.tasks if wanted else ''}")
    sides = {"old": args.old_tree.resolve(), "new": HERE}
    totals = {side: {"runs": 0, "wall": 0.0, "cpu": 0.0, "children": 0} for side in sides}
    disagree = []
    for f in files:
        procs = {}
        for side, tree in sides.items():
            env = dict(os.environ, PYTHONPATH=str(tree))
            procs[side] = subprocess.Popen(
                # (this file as a script: the old tree has no such tool, only the package it imports)
                [sys.executable, str(Path(__file__).resolve()), str(args.data),
                 str(args.repos), "--old-tree", str(args.old_tree), "--state", str(args.state),
                 "--timeout", str(args.timeout), "--worker", str(f)],
                cwd=tree, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        got = {}
        for side, proc in procs.items():
            out, err = proc.communicate()
            if proc.returncode != 0:
                print(f"{f.stem} {side}: worker failed: {err.strip().splitlines()[-1:] or out[-200:]}")
                return 1
            got[side] = json.loads(out.strip().splitlines()[-1])
            if not Path(got[side]["package"]).is_relative_to(sides[side]):
                print(f"{side}: the worker imported {got[side]['package']}, not the package of {sides[side]}")
                return 1
        for side in sides:
            runs = got[side]["runs"]
            t = totals[side]
            t["runs"] += len(runs)
            t["wall"] += sum(r["wall"] for r in runs)
            t["cpu"] += sum(r["cpu"] for r in runs)
            t["children"] += sum(r["children"] or 0 for r in runs)
        verdicts = {side: [r["verdict"] for r in got[side]["runs"]] for side in sides}
        disagree += [f"{f.stem} {r['label']}: old {o}, new {n}"
                     for r, o, n in zip(got["new"]["runs"], verdicts["old"], verdicts["new"]) if o != n]
        line = " | ".join(f"{side}: {sum(r['wall'] for r in got[side]['runs']):6.1f} s wall, "
                          f"{sum(r['cpu'] for r in got[side]['runs']):6.1f} s CPU" for side in sides)
        kinds = {v: verdicts["new"].count(v) for v in sorted(set(verdicts["new"]))}
        children = sum(r["children"] or 0 for r in got["new"]["runs"])
        print(f"{f.stem:45s} {len(got['new']['runs']):3d} runs | {line} | new: {children} spec children | {kinds}",
              flush=True)
    old, new = totals["old"], totals["new"]
    print(f"total: {new['runs']} runs; old {old['wall']:.1f} s wall ({old['wall'] / max(old['runs'], 1):.2f} s/run), "
          f"{old['cpu']:.1f} s CPU; new {new['wall']:.1f} s wall ({new['wall'] / max(new['runs'], 1):.2f} s/run), "
          f"{new['cpu']:.1f} s CPU; new/old wall {new['wall'] / max(old['wall'], 1e-9):.2f}x; "
          f"{new['children']} spec children, {(new['wall'] - old['wall']) / max(new['children'], 1) * 1000:.1f} ms "
          f"extra wall per child; load {os.getloadavg()[0]:.1f}")
    print(f"verdicts: {'the same on every run' if not disagree else str(len(disagree)) + ' differ'}")
    for line in disagree[:20]:
        print("  " + line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
