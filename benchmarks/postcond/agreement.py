"""Re-score upstream's released answers (the shared PostcondBench slice) and
compare sample by sample with upstream's verdicts (``postcond_corr``, ``mutant_kill``).

    python benchmarks/postcond/agreement.py DATA_DIR REPOS_DIR [--injection faithful] [--out results.json]

DATA_DIR holds ``<model>--<prompting>/*.json`` (or task files directly).  Runs go
through the command executor when given ``--sandbox`` and it is available,
otherwise through the local stand-in (:mod:`pytest_specbench.benchmarks.postcond.local`).
"""
from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

from pytest_specbench.benchmarks.postcond import execute, source
from pytest_specbench.benchmarks.postcond.adapter import ADAPTER, load_tasks
from pytest_specbench.benchmarks.postcond.local import LocalExecutor


class Ctx:
    def __init__(self, opts, executor, cache):
        self.opts, self.ex, self.cache = opts, executor, cache

    def option(self, name):
        return self.opts.get(name)

    def executor(self, kind):
        return self.ex

    def cache_dir(self, *parts):
        path = Path(self.cache, *parts)
        path.mkdir(parents=True, exist_ok=True)
        return path

    def result_of(self, check):
        return None


def score(task, answer, ctx):
    """(correct verdict, [mutant verdicts] or [] when not correct)."""
    try:
        decorators = source.parse_answer(answer)
    except source.AnswerError as exc:
        return "parse_error: " + str(exc), []
    corr = ADAPTER._run(task, ctx, decorators, ADAPTER._original(task, ctx))
    if corr["verdict"] != "passed":
        return corr["verdict"], []
    original = ADAPTER._original(task, ctx)
    return "passed", [ADAPTER._run(task, ctx, decorators, p)["verdict"]
                      for p in execute.mutant_programs(dict(task.data), original.file_text)]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("data", type=Path)
    ap.add_argument("repos", type=Path)
    ap.add_argument("--injection", default="fixed", choices=("fixed", "faithful"))
    ap.add_argument("--timeout", type=float, default=30.0)
    ap.add_argument("--out", type=Path)
    ap.add_argument("--only-reference", action="store_true", help="re-score the reference only")
    ap.add_argument("--no-reference", action="store_true", help="do not re-score the reference")
    ap.add_argument("--cache", type=Path, default=Path(".specbench-postcond-cache"))
    args = ap.parse_args()
    ctx = Ctx({"postcond_repos": str(args.repos), "postcond_injection": args.injection,
               "postcond_timeout": args.timeout, "postcond_complete": "paper"}, LocalExecutor(), args.cache)
    dirs = sorted(p for p in args.data.iterdir() if p.is_dir()) or [args.data]
    rows, corr_agree, kill_agree, ref_ok = [], Counter(), Counter(), Counter()
    for d in dirs:
        for task in load_tasks(d)[0]:
            if d == dirs[0] and not args.no_reference:
                rv, rk = score(task, task.data["ref_postcond"], ctx)
                ref_ok[rv == "passed" and all(k == "icontract_fail" for k in rk)] += 1
                rows.append({"model": "reference", "task": task.task_id, "corr": rv, "kills": rk,
                             "upstream_corr": "passed", "upstream_kills": task.data.get("ref_mutant_kill")})
                print(f"reference {task.task_id:40s} ours={rv} kills {sum(k == 'icontract_fail' for k in rk)}/{len(rk)}", flush=True)
            if args.only_reference:
                continue
            for i, answer in enumerate(task.data.get("postconds") or ()):
                ours, kills = score(task, answer, ctx)
                up, up_kills = task.data["postcond_corr"][i], task.data["mutant_kill"][i]
                corr_agree[(ours == "passed") == (up == "passed")] += 1
                if kills and up_kills:
                    for a, b in zip(kills, up_kills):
                        kill_agree[(a == "icontract_fail") == (b == "icontract_fail")] += 1
                rows.append({"model": d.name, "task": task.task_id, "sample": i, "corr": ours, "upstream_corr": up,
                             "kills": kills, "upstream_kills": up_kills})
                mark = "" if (ours == "passed") == (up == "passed") else "   <-- DIFFERS"
                kmark = ""
                if kills and up_kills:
                    diff = [j for j, (a, b) in enumerate(zip(kills, up_kills)) if (a == "icontract_fail") != (b == "icontract_fail")]
                    kmark = f" kills {sum(k == 'icontract_fail' for k in kills)}/{len(kills)} vs {sum(k == 'icontract_fail' for k in up_kills)}" + (
                        f" DIFF at {[(j, kills[j], up_kills[j]) for j in diff]}" if diff else "")
                print(f"{d.name:28s} {task.task_id:40s} #{i} ours={ours:16s} upstream={up}{mark}{kmark}", flush=True)
    print(f"reference correct and complete: {ref_ok[True]}/{sum(ref_ok.values())}")
    print(f"correctness agreement: {corr_agree[True]}/{sum(corr_agree.values())}")
    print(f"mutant-kill agreement (both correct): {kill_agree[True]}/{sum(kill_agree.values())}")
    if args.out:
        args.out.write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
