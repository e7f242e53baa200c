"""The ``pbt`` tier on the shared PostcondBench slice beside upstream's verdicts
(issue #47): how many answers upstream marks correct (``postcond_corr``) the
search refutes, with their counterexamples.

Every check runs through the plugin (keon/algorithms has no type hints: the
stubs of ``keon_pbt_hints.json`` beside this file give them, written from the
methods' docstrings):

    specbench postcond export-answers DATA/gpt-5--v2-all gpt5.jsonl
    nice pytest --specbench=postcond --model=replay:gpt5.jsonl --specbench-data=DATA/gpt-5--v2-all \\
        --postcond-repos=REPOS --spec-tiers=pbt \\
        --postcond-pbt-hints=pytest_specbench/benchmarks/postcond/tools/keon_pbt_hints.json \\
        --specbench-report=gpt5-pbt.json -n 1
    python -m pytest_specbench.benchmarks.postcond.tools.pbt_slice gpt5-pbt.json DATA/gpt-5--v2-all

Prints one line per sample the pbt check ran on (upstream's verdict, ours per
relation, the one-line message) and the totals.
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path


def compare(report: dict, data_dir: Path, out=print) -> dict:
    """Per sample with a pbt result: upstream's ``postcond_corr`` beside the pbt
    verdicts.  Returns the counts (``upstream_correct``, ``refuted`` of those,
    ``refuted_AC``/``refuted_RW`` of those, ``skipped`` tasks)."""
    tasks = report["benchmarks"]["postcond"]["tasks"]
    counts = {"ran": 0, "upstream_correct": 0, "refuted": 0, "refuted_AC": 0, "refuted_RW": 0, "errors": 0}
    example = None
    for f in sorted(data_dir.glob("*.json")):
        up = json.loads(f.read_text(encoding="utf-8"))
        for s in tasks.get(f.stem, {}).get("samples", []):
            pbt = (s.get("checks") or {}).get("pbt")
            if not pbt or "tiers" not in pbt:
                counts["errors"] += bool(pbt)
                continue
            counts["ran"] += 1
            status = {t["relation"]: t["status"] for t in pbt["tiers"]}
            correct = up["postcond_corr"][s["index"]] == "passed"
            refuted = [rel for rel, st in status.items() if st == "REFUTED"]
            if correct:
                counts["upstream_correct"] += 1
                counts["refuted"] += bool(refuted)
                for rel in refuted:
                    counts[f"refuted_{rel}"] += 1
                if refuted and example is None:
                    example = f"{f.stem} #{s['index']}: {s.get('message') or _line(pbt)}"
            out(f"{f.stem:42s} #{s['index']} upstream {up['postcond_corr'][s['index']]:15s} "
                f"AC {status.get('AC', '-'):8s} RW {status.get('RW', '-'):8s} {_line(pbt)[:160]}")
    out(f"pbt ran on {counts['ran']} samples; upstream marks {counts['upstream_correct']} of them correct; "
        f"pbt refutes {counts['refuted']} of those (AC {counts['refuted_AC']}, RW {counts['refuted_RW']})")
    if example:
        out(f"example: {example}")
    return counts


def _line(pbt: dict) -> str:
    refuted = [t for t in pbt["tiers"] if t["status"] == "REFUTED"]
    if not refuted:
        return ""
    t = refuted[0]
    return f"{t['relation']} REFUTED: {t['reason']} {json.dumps({k: v for k, v in t['counterexample'].items() if k != 'why'})}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("report", type=Path, help="the plugin's JSON report of a --spec-tiers=pbt run")
    parser.add_argument("data", type=Path, help="the upstream task folder (postcondbench/<model>--<prompting>)")
    args = parser.parse_args(argv)
    compare(json.loads(args.report.read_text(encoding="utf-8")), args.data)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
