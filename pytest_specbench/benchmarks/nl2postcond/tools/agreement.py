"""Re-score upstream's own verdicts (nl2postcond's qualitative sheet,
``nl2postcond/annotated_postconditions.jsonl``: 10 postconditions per task for
HumanEval/0-109) through the plugin, and print the agreement row by row.

    python -m pytest_specbench.benchmarks.nl2postcond.tools.agreement DATA_ROOT [--tasks HumanEval/0 ...]
        [--inputs base+plus|base] [--corpus FILE] [-n 2] [--keep DIR]

Each row's ``postcondition`` text is replayed (``sample_index`` = its ``r_num``);
``correct`` is compared with ``test_set_correct``; with a corpus, ``complete``'s
``codes_run``/``bopi_run`` per task and ``codes_killed``/``bopi_killed`` per
correct row with upstream's columns.  Prints a table and each disagreement.
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

SHEET = "nl2postcond/annotated_postconditions.jsonl"
KILL_COLUMNS = ("codes_killed", "bopi_killed", "natural_codes_killed")
RUN_COLUMNS = ("codes_run", "bopi_run", "natural_codes_run")


def sheet_rows(data_root: Path, tasks: set[str] | None = None) -> list[dict[str, Any]]:
    rows = [json.loads(line) for line in (data_root / SHEET).read_text(encoding="utf-8").splitlines() if line.strip()]
    return [r for r in rows if not tasks or r["task_id"] in tasks]


def replay_lines(rows: list[dict[str, Any]]) -> str:
    return "".join(json.dumps({"task_id": r["task_id"], "sample_index": r["r_num"],
                               "postcondition": r["postcondition"]}) + "\n" for r in rows)


def run_plugin(data_root: Path, rows: list[dict[str, Any]], folder: Path, inputs: str, corpus: Path | None,
               workers: int) -> dict[str, Any]:
    replay = folder / "sheet-replay.jsonl"
    replay.write_text(replay_lines(rows), encoding="utf-8")
    report = folder / "report.json"
    tasks = sorted({r["task_id"] for r in rows})
    argv = [sys.executable, "-m", "pytest", "--specbench=nl2postcond", f"--model=replay:{replay}",
            f"--specbench-data={data_root}", f"--nl2postcond-inputs={inputs}", f"--specbench-report={report}",
            f"--specbench-tasks={','.join(tasks)}", "-p", "no:cacheprovider", "-q", "--rootdir", str(folder),
            "-o", "addopts="]
    argv += [f"--nl2postcond-corpus={corpus}"] if corpus else ["--specbench-checks=correct"]
    argv += ["-n", str(workers)] if workers else []
    subprocess.run(argv, cwd=folder, check=False, stdout=subprocess.DEVNULL)
    if not report.is_file():
        raise SystemExit(f"agreement: the plugin run wrote no report (see {folder})")
    return json.loads(report.read_text())["benchmarks"]["nl2postcond"]


def compare(rows: list[dict[str, Any]], bench: dict[str, Any]) -> dict[str, Any]:
    """Per row: ours against upstream's ``test_set_correct`` (and kill columns where both have them)."""
    ours: dict[tuple[str, int], dict[str, Any]] = {}
    for task_id, task in bench.get("tasks", {}).items():
        for sample in task["samples"]:
            ours[(task_id, sample["index"])] = sample["checks"]
    table, disagreements = Counter(), []
    kills = Counter()
    for r in rows:
        checks = ours.get((r["task_id"], r["r_num"]))
        if checks is None or "correct" not in checks:
            table["not evaluated (E or skipped)"] += 1
            disagreements.append((r["task_id"], r["r_num"], "no verdict", r["test_set_correct"], ""))
            continue
        mine = bool(checks["correct"].get("passed"))
        table[("agree" if mine == bool(r["test_set_correct"]) else "differ")] += 1
        if mine != bool(r["test_set_correct"]):
            disagreements.append((r["task_id"], r["r_num"], mine, r["test_set_correct"],
                                  "base_error" if r.get("base_error") else ""))
        complete = checks.get("complete", {})
        if mine and r["test_set_correct"] and complete.get("applicable"):
            for col in KILL_COLUMNS:
                kills[f"{col} agree" if complete.get(col) == r.get(f"num_{col}") else f"{col} differ"] += 1
    return {"rows": len(rows), "table": dict(table), "kills": dict(kills), "disagreements": disagreements}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="agreement", description=__doc__.split("\n\n")[0])
    p.add_argument("data_root", type=Path)
    p.add_argument("--tasks", nargs="*", default=None)
    p.add_argument("--inputs", choices=("base+plus", "base"), default="base+plus")
    p.add_argument("--corpus", type=Path, default=None)
    p.add_argument("-n", dest="workers", type=int, default=0)
    p.add_argument("--keep", type=Path, default=None, help="keep the run's files here")
    args = p.parse_args(argv)
    rows = sheet_rows(args.data_root, set(args.tasks) if args.tasks else None)
    with tempfile.TemporaryDirectory() as tmp:
        folder = args.keep or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        result = compare(rows, run_plugin(args.data_root.resolve(), rows, folder, args.inputs, args.corpus,
                                          args.workers))
    print(f"rows: {result['rows']}  " + "  ".join(f"{k}: {v}" for k, v in sorted(result["table"].items())))
    if result["kills"]:
        print("kill columns (rows correct on both sides): " +
              "  ".join(f"{k}: {v}" for k, v in sorted(result["kills"].items())))
    for task_id, r_num, mine, theirs, note in result["disagreements"]:
        print(f"  {task_id} r_num={r_num}: ours {mine}, upstream {theirs} {note}".rstrip())
    return 0


if __name__ == "__main__":
    sys.exit(main())
