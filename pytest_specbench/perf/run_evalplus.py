#!/usr/bin/env python3
"""Run EvalPlus 0.3.1 (sanitize + evaluate) on a samples file and save per-task verdicts.

Reference runner for comparing pytest-specbench against upstream EvalPlus. It works
offline: the dataset comes from a local file through EvalPlus's
HUMANEVAL_OVERRIDE_PATH / MBPP_OVERRIDE_PATH variables, and the ground-truth cache
lives in WORK_DIR/cache (XDG_CACHE_HOME), so runs do not touch ~/.cache.

Steps
  1. Create the venv and `pip install evalplus==0.3.1` if VENV has no EvalPlus.
  2. Copy the samples into WORK_DIR, keeping only tasks that exist in the data file
     (and in --task-filter if given). Dropped task ids are reported, not fatal.
     `evalplus.evaluate` asserts that every dataset task has a sample, so when the
     samples cover only part of the dataset a subset copy of the data file is written
     to WORK_DIR (WORK_DIR must therefore not be inside the project repository).
  3. `evalplus.sanitize`, then `evalplus.evaluate --parallel N`, each timed with
     /usr/bin/time -v when available (else perf_counter + getrusage(RUSAGE_CHILDREN)).
     Peak RSS is the largest single process in the tree (rusage semantics), not a sum.
     evaluate's wall time includes up to 20 s of idling at exit (see timed_run), so
     `output_written_s` (results file mtime - start) is reported as well.
  4. Write verdicts {task_id: {"base": bool, "plus": bool}}, where plus means
     base_status == plus_status == "pass" (EvalPlus's "base + extra"). When a task has
     several samples, the values are lists of bools in sample order. A run summary
     (timings, pass@1, dropped ids, data md5) is written next to it.

Example
  python -m pytest_specbench.perf.run_evalplus \\
      --samples ../shared/datasets/samples/humaneval-chatgpt-temp0.0.jsonl \\
      --dataset humaneval --data ../shared/datasets/evalplus/HumanEvalPlus-v0.1.10.jsonl.gz \\
      --work-dir /tmp/evalplus-work/he --parallel 2
"""

from __future__ import annotations

import argparse
import importlib.util
import gzip
import hashlib
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

EVALPLUS_VERSION = "0.3.1"
# The checkout (or site-packages) that holds this package: data files must not be written there.
REPO_ROOT = Path(importlib.util.find_spec("pytest_specbench").origin).resolve().parent.parent


def read_jsonl(path: Path) -> list[dict]:
    opener = gzip.open if path.name.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def write_jsonl(path: Path, rows: list[dict]) -> None:
    with open(path, "w", encoding="utf-8") as f:
        for row in rows:
            f.write(json.dumps(row) + "\n")


def ensure_venv(venv: Path) -> None:
    if (venv / "bin" / "evalplus.evaluate").exists():
        return
    if not (venv / "bin" / "python").exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    subprocess.run([str(venv / "bin" / "pip"), "install", f"evalplus=={EVALPLUS_VERSION}"], check=True)


def timed_run(cmd: list[str], env: dict, log: Path, cwd: Path, output: Path | None = None) -> dict:
    """Run cmd, return wall seconds and peak RSS (KiB) of its largest process.

    If `output` is given, also report when that file was written: evalplus.evaluate
    starts a non-daemon "stucking checker" thread that sleeps in 20 s steps, so the
    process lingers up to 20 s after the results are saved.
    """
    gnu_time = shutil.which("time", path="/usr/bin")
    time_file = log.with_suffix(".time.txt")
    if gnu_time:
        cmd = [gnu_time, "-v", "-o", str(time_file)] + cmd
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start, start_epoch = time.perf_counter(), time.time()
    with open(log, "w") as out:
        proc = subprocess.run(cmd, env=env, cwd=cwd, stdout=out, stderr=subprocess.STDOUT)
    wall = time.perf_counter() - start
    stats = {"wall_s": round(wall, 2), "returncode": proc.returncode}
    if output is not None and output.exists():
        stats["output_written_s"] = round(output.stat().st_mtime - start_epoch, 2)
    if gnu_time and time_file.exists():
        text = time_file.read_text()
        rss = re.search(r"Maximum resident set size \(kbytes\): (\d+)", text)
        stats["peak_rss_kib"] = int(rss.group(1)) if rss else None
        cpu = re.findall(r"(?:User|System) time \(seconds\): ([\d.]+)", text)
        stats["cpu_s"] = round(sum(map(float, cpu)), 2)  # robust to other load on the host
    else:  # only meaningful if this run raised the high-water mark
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        stats["peak_rss_kib"] = after.ru_maxrss if after.ru_maxrss > before.ru_maxrss else None
        stats["cpu_s"] = round(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime, 2)
    if proc.returncode != 0:
        sys.exit(f"command failed ({proc.returncode}): {' '.join(cmd)}\nsee {log}")
    return stats


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--samples", type=Path, required=True, help="samples jsonl(.gz): task_id + solution|completion")
    ap.add_argument("--dataset", choices=["humaneval", "mbpp"], required=True)
    ap.add_argument("--data", type=Path, required=True, help="HumanEvalPlus/MbppPlus jsonl(.gz)")
    ap.add_argument("--task-filter", type=Path, help="file with one task id per line to keep")
    ap.add_argument("--venv", type=Path, default=Path("/opt/evalplus-venv"))
    ap.add_argument("--work-dir", type=Path, required=True)
    ap.add_argument("--parallel", type=int, default=2)
    ap.add_argument("--cold", action="store_true", help="delete the ground-truth cache first")
    ap.add_argument("--out", type=Path, help="verdict json (default WORK_DIR/<dataset>_verdicts.json)")
    args = ap.parse_args()

    work = args.work_dir.resolve()
    if work == REPO_ROOT or REPO_ROOT in work.parents:
        sys.exit("--work-dir must be outside the project repository (data files are written there)")
    work.mkdir(parents=True, exist_ok=True)
    ensure_venv(args.venv)

    # Select samples: known tasks only, optionally restricted by the filter file.
    problems = read_jsonl(args.data)
    known = {p["task_id"] for p in problems}
    wanted = known
    if args.task_filter:
        wanted = known & {ln.strip() for ln in args.task_filter.read_text().splitlines() if ln.strip()}
    samples = read_jsonl(args.samples)
    kept = [s for s in samples if s["task_id"] in wanted]
    unknown = sorted({s["task_id"] for s in samples} - known)
    covered = {s["task_id"] for s in kept}
    samples_path = work / "samples.jsonl"
    write_jsonl(samples_path, kept)

    # evaluate requires a sample for every dataset task: use a subset data file if needed.
    data_path = args.data.resolve()
    if covered != known:
        data_path = work / "data-subset.jsonl"
        write_jsonl(data_path, [p for p in problems if p["task_id"] in covered])
    empty = work / "empty.jsonl"  # sanitize loads both datasets; the other one stays empty
    empty.write_text("")

    cache = work / "cache"
    if args.cold:
        shutil.rmtree(cache, ignore_errors=True)
    env = dict(os.environ, XDG_CACHE_HOME=str(cache), TOKENIZERS_PARALLELISM="false")
    env.pop("EVALPLUS_TIMEOUT_PER_TASK", None)  # 0.3.1 crashes on it (str vs float min)
    env["HUMANEVAL_OVERRIDE_PATH"] = str(data_path if args.dataset == "humaneval" else empty)
    env["MBPP_OVERRIDE_PATH"] = str(data_path if args.dataset == "mbpp" else empty)

    bin_dir = args.venv / "bin"
    sanitized = work / "samples-sanitized.jsonl"
    result_path = work / "samples-sanitized_eval_results.json"
    result_path.unlink(missing_ok=True)  # an existing file would be reused, not re-evaluated
    t_san = timed_run([str(bin_dir / "evalplus.sanitize"), "--samples", str(samples_path)],
                      env, work / "sanitize.log", work)
    t_eval = timed_run([str(bin_dir / "evalplus.evaluate"), "--dataset", args.dataset,
                        "--samples", str(sanitized), "--parallel", str(args.parallel)],
                       env, work / "evaluate.log", work, output=result_path)

    results = json.loads(result_path.read_text())
    verdicts = {}
    for task_id, rows in results["eval"].items():
        base = [r["base_status"] == "pass" for r in rows]
        plus = [r["base_status"] == r["plus_status"] == "pass" for r in rows]
        verdicts[task_id] = {"base": base, "plus": plus}
    single = all(len(v["base"]) == 1 for v in verdicts.values())
    if single:
        verdicts = {t: {k: v[0] for k, v in d.items()} for t, d in verdicts.items()}
    out = args.out or work / f"{args.dataset}_verdicts.json"
    out.write_text(json.dumps(dict(sorted(verdicts.items(), key=lambda kv: _task_key(kv[0]))), indent=1))

    def pass1(key: str) -> float:
        vals = [sum(v[key]) / len(v[key]) if not single else float(v[key]) for v in verdicts.values()]
        return round(sum(vals) / len(vals), 4)

    summary = {
        "evalplus": EVALPLUS_VERSION, "dataset": args.dataset, "data": str(args.data),
        "data_md5": hashlib.md5(data_path.read_bytes()).hexdigest(), "samples": str(args.samples),
        "n_samples_in": len(samples), "n_samples_evaluated": len(kept), "n_tasks": len(verdicts),
        "unknown_task_ids_dropped": unknown, "parallel": args.parallel, "cold_cache": args.cold,
        "sanitize": t_san, "evaluate": t_eval,
        "total_wall_s": round(t_san["wall_s"] + t_eval["wall_s"], 2),
        "pass@1_base": pass1("base"), "pass@1_plus": pass1("plus"), "verdicts": str(out),
    }
    (work / f"{args.dataset}_run.json").write_text(json.dumps(summary, indent=1))
    print(json.dumps(summary, indent=1))


def _task_key(task_id: str) -> tuple:
    prefix, _, num = task_id.rpartition("/")
    return (prefix, int(num)) if num.isdigit() else (prefix, 0)


if __name__ == "__main__":
    main()
