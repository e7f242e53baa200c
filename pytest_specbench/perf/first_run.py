"""A first run against a run with warm caches, one task selected, ``-n 2`` (issue #28, point 3).

    python -m pytest_specbench.perf.first_run [--data ../shared/datasets] [--families contract,postcond]

For each family, one task is selected with ``-k`` and the same command runs three
times in one fresh state folder (``--specbench-dir``):

  cold     nothing cached: ground truths, expected outputs, venvs, compiled classes
           and verdicts are all computed;
  warm     the identical command again: every cache warm, verdicts read back;
  recheck  warm preparation caches, but ``--specbench-result-cache=off``, so every
           item of the selected task is evaluated again.

The target is cold <= 3x warm.  ``recheck`` is printed beside it because ``warm``
of a family whose items are read back from the result cache costs little more than
pytest's own start: cold/recheck is what the selected task's preparation costs on top
of its evaluation.  Caches outside the state folder stay as they are (pip's own wheel
cache, the JDK's class data); the table says so instead of clearing the user's.

CPU is user + system of the run's whole process tree as far as it was waited for
(``RUSAGE_CHILDREN`` before and after); the 1-minute load average is printed beside
every row, since the machine may be shared.

``--profile DIR`` records each run with py-spy and prints where its time goes
(perf/profile.py), the CPU by command line (pip, the repository's pytest, the
harness: perf/families.py) and each pytest process's timeline (perf/timeline.py).
"""
from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# One task per family, chosen because it needs every preparation step of its family
# (PostcondBench: a repository checkout and its venv; SpecEval: the program's ground
# truth; ContractEval/EvalPlus: expected outputs; CVT: z3 synthesis).
SELECTIONS: dict[str, tuple[list[str], str]] = {
    "contract": (["--specbench-data={data}"], "HumanEval/0"),
    "contract-cvt": (["--specbench-data={data}"], "HumanEval/0"),
    "evalplus": (["--specbench-data={data}"], "HumanEval/0"),
    "postcond": (["--specbench-data={data}", "--postcond-repos={repos}"], "keon--algorithms--count"),
    "speceval": (["--specbench-data={data}"], "BinarySearch/"),
    # CIFE on the shared data needs a judge server; the bundled suite (whose default
    # judge is its recorded judgments) measures the harness's own preparation without one.
    "cife": ([], "b01"),
    "verina": (["--specbench-data={data}"], "verina_basic_99"),
}


def _run(args: list[str], cwd: Path, profile: Path | None = None) -> dict:
    if profile is not None:
        return _run_profiled(args, cwd, profile)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args],
                          cwd=cwd, capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    lines = proc.stdout.strip().splitlines()
    return {"wall": wall, "cpu": cpu, "exit": proc.returncode, "summary": lines[-1] if lines else proc.stderr.strip()[-200:],
            "load": os.getloadavg()[0]}


def _run_profiled(args: list[str], cwd: Path, out: Path) -> dict:
    """The run under py-spy (perf/profile.py), timed per pytest process (perf/timeline.py),
    its CPU by command line from /proc (families.measure: pip, the repository's pytest,
    the harness's processes); prints the three.  The figures include py-spy's own work."""
    from . import profile as prof
    from .families import measure as tree_measure

    argv, env = prof.profiled_pytest([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args], out)
    m = tree_measure(argv, cwd, env, log=out.with_suffix(".log"))
    lines = [f"{out.stem}: wall {m['wall_s']:.1f} s, CPU of the tree {m['cpu_s']:.1f} s (py-spy's included); "
             f"load {m['loadavg_before']} -> {m['loadavg_after']}", "CPU by command (sampled every 0.1 s from /proc):"]
    lines += [f"  {v:7.2f} s  {k}" for k, v in m["cpu_by_command"].items()]
    lines.append(prof.pytest_report(out))
    text = "\n".join(lines)
    out.with_suffix(".summary.txt").write_text(text + "\n")
    print(text, file=sys.stderr, flush=True)
    said = [line for line in out.with_suffix(".log").read_text(errors="replace").splitlines()
            if line.strip() and not line.startswith("py-spy>")]
    return {"wall": m["wall_s"], "cpu": m["cpu_s"], "exit": m["exit"], "summary": said[-1] if said else m["summary"],
            "load": os.getloadavg()[0]}


def measure(family: str, data: Path, repos: Path | None, work: Path, workers: str,
            profile: Path | None = None) -> dict:
    extra, selection = SELECTIONS[family]
    state = work / family
    shutil.rmtree(state, ignore_errors=True)
    base = [f"--specbench={family}", "--model=reference", f"--specbench-dir={state}", "-n", workers, "-k", selection,
            *(a.format(data=data, repos=repos) for a in extra)]
    rows = {"cold": _run(base, work, profile and profile / f"{family}-cold.txt")}
    rows["warm"] = _run(base, work, profile and profile / f"{family}-warm.txt")
    rows["recheck"] = _run(base + ["--specbench-result-cache=off"], work, profile and profile / f"{family}-recheck.txt")
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=Path.cwd().parent / "shared" / "datasets")
    ap.add_argument("--families", default=",".join(SELECTIONS))
    ap.add_argument("--postcond-repos", type=Path, default=None,
                    help="PostcondBench's repository mirrors (the plugin's --postcond-repos); without it postcond's row is left out")
    ap.add_argument("--work", type=Path, default=None, help="a folder for the state folders (default: a new temporary one)")
    ap.add_argument("-n", dest="workers", default="2")
    ap.add_argument("--profile", type=Path, default=None,
                    help="record each run with py-spy into this folder, with per-process timelines and CPU by "
                         "command (perf/profile.py, perf/timeline.py); the figures then include py-spy's work")
    args = ap.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="specbench-first-run-"))
    work.mkdir(parents=True, exist_ok=True)
    print(f"| family | -k | cold wall / CPU | warm wall / CPU | recheck wall / CPU | cold/warm | cold/recheck | outcome |")
    print("|---|---|---|---|---|---|---|---|")
    for family in [f.strip() for f in args.families.split(",") if f.strip()]:
        if family not in SELECTIONS:
            sys.exit(f"--families: unknown family {family!r} (known: {', '.join(SELECTIONS)})")
        if family == "postcond" and args.postcond_repos is None:
            print(f"| postcond | - | not measured: pass --postcond-repos=DIR (its tasks run in checkouts of their repositories) |")
            continue
        r = measure(family, args.data, args.postcond_repos, work, args.workers,
                    args.profile.resolve() if args.profile else None)
        cells = [f"{r[k]['wall']:.1f} s / {r[k]['cpu']:.1f} s (load {r[k]['load']:.1f})" for k in ("cold", "warm", "recheck")]
        print(f"| {family} | `{SELECTIONS[family][1]}` | {' | '.join(cells)} | {r['cold']['wall'] / r['warm']['wall']:.2f}x "
              f"| {r['cold']['wall'] / r['recheck']['wall']:.2f}x | {r['cold']['summary']} |", flush=True)


if __name__ == "__main__":
    main()
