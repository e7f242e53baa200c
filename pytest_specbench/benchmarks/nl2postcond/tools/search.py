"""The ``pbt`` tier on upstream's test-set-correct postconditions (nl2postcond's
qualitative sheet, ``nl2postcond/annotated_postconditions.jsonl``): search
beyond the fixed tests, row by row, beside upstream's verdict.

    python -m pytest_specbench.benchmarks.nl2postcond.tools.search DATA_ROOT [--tasks HumanEval/0 ...]
        [--examples 100] [--tiers pbt|corpus] [-n 2] [--keep DIR]
    python -m pytest_specbench.benchmarks.nl2postcond.tools.search DATA_ROOT --kept DIR [DIR ...]

Replays every row upstream marks ``test_set_correct`` (``--model=replay:``, as
the agreement tool does) through the plugin with ``--spec-tiers=pbt``; prints
per row upstream's verdict, the pbt tier's AC and RW, and the shrunk
counterexample of a refutation; then the share of upstream-correct
postconditions the search refutes, split by upstream's completeness (every bad
output rejected: ``num_bopi_killed == num_bopi_run``; every buggy program:
``num_codes_killed == num_codes_run``), and the CPU seconds per check (the plugin
run's own and its sandboxes', from ``getrusage``).  ``--kept`` reads the runs
kept with ``--keep`` (their ``report.json``) instead of searching: one table
over several runs.  docs/nl2postcond.md,
"Search beyond the fixed tests", reports a run.
"""
from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from .agreement import replay_lines, run_report, sheet_rows
from . import one_line_errors


def correct_rows(data_root: Path, tasks: set[str] | None = None) -> list[dict[str, Any]]:
    return [r for r in sheet_rows(data_root, tasks) if r.get("test_set_correct")]


def pbt_args(data_root: Path, rows: list[dict[str, Any]], folder: Path, examples: int, workers: int,
             tiers: str = "pbt") -> list[str]:
    """The arguments of the pytest run of the plugin on ``rows`` with the pbt tier alone (or
    ``tiers``), run in ``folder`` (the replay file is written there), for :func:`run_pbt` or
    a caller's own pytest."""
    replay = folder / "sheet-replay.jsonl"
    replay.write_text(replay_lines(rows), encoding="utf-8")
    argv = ["--specbench=nl2postcond", f"--model=replay:{replay}",
            f"--specbench-data={data_root}", f"--spec-tiers={tiers}", f"--spec-pbt-examples={examples}",
            f"--specbench-report={folder / 'report.json'}",
            f"--specbench-tasks={','.join(sorted({r['task_id'] for r in rows}))}",
            "-p", "no:cacheprovider", "-q", "--rootdir", str(folder), "-o", "addopts="]
    return argv + (["-n", str(workers)] if workers else [])


def run_pbt(data_root: Path, rows: list[dict[str, Any]], folder: Path, examples: int, workers: int,
            tiers: str = "pbt") -> tuple[dict[str, Any], float]:
    """The plugin on ``rows`` with the pbt tier alone (or ``tiers``): (the report's
    nl2postcond section, CPU seconds of the run and everything it started)."""
    argv = pbt_args(data_root, rows, folder, examples, workers, tiers)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([sys.executable, "-m", "pytest", *argv], cwd=folder, check=False, stdout=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return run_report(folder, "search"), cpu


def table(rows: list[dict[str, Any]], bench: dict[str, Any]) -> list[dict[str, Any]]:
    """Per row: upstream's verdict and the pbt tier's statuses and counterexamples."""
    ours = {(t, s["index"]): s["checks"].get("pbt") for t, task in bench.get("tasks", {}).items()
            for s in task["samples"]}
    out = []
    for r in rows:
        pbt = ours.get((r["task_id"], r["r_num"]))
        entry = {"task_id": r["task_id"], "r_num": r["r_num"], "upstream": bool(r["test_set_correct"]),
                 "postcondition": r["postcondition"], "upstream_complete": {
                     kind: r.get(f"num_{kind}_run") is not None and r.get(f"num_{kind}_killed") == r[f"num_{kind}_run"]
                     for kind in ("bopi", "codes")}}
        if pbt is None or "tiers" not in pbt:
            entry["pbt"] = {"AC": "E", "RW": "E"}
            entry["error"] = (pbt or {}).get("error") or (pbt or {}).get("message") or "no verdict"
        else:
            entry["pbt"] = {d["relation"]: d["status"] for d in pbt["tiers"]}
            entry["verdicts"] = pbt["tiers"]
        out.append(entry)
    return out


def summary(entries: list[dict[str, Any]]) -> dict[str, Any]:
    judged = [e for e in entries if "verdicts" in e]
    refuted = [e for e in judged if "REFUTED" in e["pbt"].values()]
    per = Counter(f"{rel} {status}" for e in judged for rel, status in e["pbt"].items())
    split = {kind: Counter(f"{rel} {status} / {'complete' if e['upstream_complete'][kind] else 'incomplete'}"
                           for e in judged for rel, status in e["pbt"].items()) for kind in ("bopi", "codes")}
    return {"rows": len(entries), "judged": len(judged), "refuted": len(refuted),
            "share_refuted": len(refuted) / len(judged) if judged else None, "by_relation": dict(per),
            "by_upstream_completeness": {kind: dict(c) for kind, c in split.items()}}


def kept_runs(data_root: Path, folders: list[Path]) -> list[dict[str, Any]]:
    """The entries of runs kept with ``--keep`` (each folder's ``report.json``), against the sheet's rows."""
    entries = []
    for folder in folders:
        report = folder / "report.json"
        if not report.is_file():
            raise SystemExit(f"search: {report}: no report (a run kept with --keep writes one)")
        bench = json.loads(report.read_text())["benchmarks"]["nl2postcond"]
        entries += table(correct_rows(data_root, set(bench.get("tasks", {}))), bench)
    return entries


def print_summary(entries: list[dict[str, Any]]) -> None:
    s = summary(entries)
    share = f"{s['share_refuted']:.1%}" if s["share_refuted"] is not None else "n/a"
    print(f"rows upstream marks test-set correct: {s['rows']}; judged: {s['judged']}; refuted by search: "
          f"{s['refuted']} ({share}); " + ", ".join(f"{k}: {v}" for k, v in sorted(s["by_relation"].items())))
    for kind, what in (("bopi", "every bad output rejected"), ("codes", "every buggy program rejected")):
        print(f"by upstream's completeness ({what}): "
              + ", ".join(f"{k}: {v}" for k, v in sorted(s["by_upstream_completeness"][kind].items())))


@one_line_errors("search")
def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="search", description=__doc__.split("\n\n")[0])
    p.add_argument("data_root", type=Path)
    p.add_argument("--tasks", nargs="*", default=None)
    p.add_argument("--examples", type=int, default=100)
    p.add_argument("--tiers", default="pbt", help="tiers to run (corpus: measures the corpus tier's cost alone; "
                                                  "its `complete` needs --nl2postcond-corpus, absent here)")
    p.add_argument("-n", dest="workers", type=int, default=0)
    p.add_argument("--keep", type=Path, default=None, help="keep the run's files here")
    p.add_argument("--kept", type=Path, nargs="+", default=None,
                   help="summarise runs kept with --keep (their report.json) instead of searching")
    args = p.parse_args(argv)
    if args.kept:
        print_summary(kept_runs(args.data_root, args.kept))
        return 0
    rows = correct_rows(args.data_root, set(args.tasks) if args.tasks else None)
    if not rows:
        raise SystemExit("search: no upstream-correct rows for these tasks")
    with tempfile.TemporaryDirectory() as tmp:
        folder = (args.keep or Path(tmp)).resolve()  # (the plugin runs in it: a relative path would move)
        folder.mkdir(parents=True, exist_ok=True)
        started = time.monotonic()
        bench, cpu = run_pbt(args.data_root.resolve(), rows, folder, args.examples, args.workers, args.tiers)
        wall = time.monotonic() - started
    entries = table(rows, bench)
    print(f"{'task':<14} {'r':>2}  upstream  pbt AC     pbt RW     counterexample")
    for e in entries:
        shown = next((v["counterexample"] for v in e.get("verdicts", ()) if v.get("counterexample")), None)
        print(f"{e['task_id']:<14} {e['r_num']:>2}  {'correct':<8}  {e['pbt'].get('AC', '-'):<9}  "
              f"{e['pbt'].get('RW', '-'):<9}  {json.dumps(shown)[:110] if shown else e.get('error', '')[:110]}")
    print_summary(entries)
    print(f"tiers: {args.tiers}; examples per relation: {args.examples}; CPU {cpu:.1f} s for {len(rows)} checks "
          f"({cpu / len(rows):.2f} s per check, plugin start included); wall {wall:.1f} s with -n {args.workers}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
