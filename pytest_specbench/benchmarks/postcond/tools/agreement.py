"""Compare a plugin run's per-sample verdicts with upstream's own
(``postcond_corr``, ``mutant_kill``) on the shared PostcondBench slice.

Every check ran through the plugin, i.e. through ``ctx.executor("command")``:

    specbench postcond export-answers DATA/gpt-5--v2-all answers.jsonl
    pytest --specbench=postcond --model=replay:answers.jsonl --specbench-data=DATA/gpt-5--v2-all \
        --postcond-repos=REPOS --specbench-report=report.json -n 2
    python -m pytest_specbench.benchmarks.postcond.tools.agreement report.json DATA/gpt-5--v2-all

Prints one line per sample (ours vs upstream, kills, differences) and the totals.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def compare(report: dict, data_dir: Path, out=print) -> dict:
    """Sample-by-sample agreement of ``report`` (the plugin's JSON report) with
    the upstream task files in ``data_dir``.  Returns the counts."""
    tasks = report["benchmarks"]["postcond"]["tasks"]
    counts = {"corr_agree": 0, "corr_total": 0, "kill_agree": 0, "kill_total": 0, "errors": 0}
    for f in sorted(data_dir.glob("*.json")):
        up = json.loads(f.read_text(encoding="utf-8"))
        for s in tasks.get(f.stem, {}).get("samples", []):
            i, checks = s["index"], s.get("checks", {})
            if "correct" not in checks or "verdict" not in checks["correct"]:
                counts["errors"] += 1
                out(f"{f.stem:40s} #{i} no verdict (errored item)")
                continue
            ours, theirs = checks["correct"]["verdict"], up["postcond_corr"][i]
            same = (ours == "passed") == (theirs == "passed")
            counts["corr_total"] += 1
            counts["corr_agree"] += same
            kills = (checks.get("complete") or {}).get("kills") or []
            up_kills = up["mutant_kill"][i] or []
            note = ""
            if kills and up_kills:
                diff = [j for j, (a, b) in enumerate(zip(kills, up_kills))
                        if (a == "icontract_fail") != (b == "icontract_fail")]
                counts["kill_total"] += min(len(kills), len(up_kills))
                counts["kill_agree"] += min(len(kills), len(up_kills)) - len(diff)
                note = (f" kills {sum(k == 'icontract_fail' for k in kills)}/{len(kills)}"
                        f" vs {sum(k == 'icontract_fail' for k in up_kills)}/{len(up_kills)}")
                if diff:
                    note += f" DIFF {[(j, kills[j], up_kills[j]) for j in diff]}"
            out(f"{f.stem:40s} #{i} ours={ours:14s} upstream={theirs:14s}{'' if same else '  <-- DIFFERS'}{note}")
    out(f"correctness agreement: {counts['corr_agree']}/{counts['corr_total']}")
    out(f"mutant-kill agreement (sets correct on both sides): {counts['kill_agree']}/{counts['kill_total']}")
    return counts


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("report", type=Path, help="the plugin's --specbench-report JSON")
    ap.add_argument("data", type=Path, help="upstream's <model>--<prompting> folder")
    args = ap.parse_args()
    try:
        report = json.loads(args.report.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        print(f"agreement.py: {args.report}: {exc}", file=sys.stderr)
        return 2
    compare(report, args.data)
    return 0


if __name__ == "__main__":
    sys.exit(main())
