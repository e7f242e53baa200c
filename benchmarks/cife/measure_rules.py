"""Print rule figures: coverage over a CIFE data file, and rule-vs-judge agreement
on recorded judged answers.

    python benchmarks/cife/measure_rules.py --data ../shared/datasets/cife/benchmark_data.jsonl \
        [--judged PATH_TO_UPSTREAM_llmjudge.jsonl]

``--judged``: a JSON-lines file in the layout of IBM/CIFE's judged outputs
(``LLMjudge_outputs_test/constraint_adherence/*_llmjudge.jsonl`` in its git
history: ``final_constraints``, ``response``, ``constraint_adherence_responses``,
``Constraint_adherence``).  For it the script prints how often upstream's
positional reading and our strict reading disagree, and Cohen's kappa of the
rules against the judge.  Dynamic rules run in the sandbox.
"""
from __future__ import annotations

import argparse
import ast
import json
from collections import Counter
from pathlib import Path

from pytest_specbench.benchmarks.cife import rules
from pytest_specbench.benchmarks.cife.adapter import _runner
from pytest_specbench.benchmarks.cife.data import parse_constraints
from pytest_specbench.benchmarks.cife.extract import extract_code
from pytest_specbench.benchmarks.cife.judge import JudgeAnswerError, parse_adherence, parse_adherence_upstream
from pytest_specbench.benchmarks.cife.metrics import cohen_kappa
from pytest_specbench.execution.limits import Limits
from pytest_specbench.execution.python import PythonExecutor


def coverage(path: Path) -> None:
    counts: Counter = Counter()
    total = 0
    for line in path.read_text().splitlines():
        row = json.loads(line)
        for c in parse_constraints(row["constraints"]):
            total += 1
            chosen = rules.select(c.text, row["instruction"])
            counts[chosen[0].name if chosen else None] += 1
    covered = total - counts[None]
    print(f"coverage: {covered}/{total} constraints = {covered / total:.1%}")
    for name, n in counts.most_common():
        if name:
            print(f"  {name:20s} {n}")


def judged(path: Path) -> None:
    ex = PythonExecutor(Limits(), hide=[str(Path(__file__).resolve().parents[2])])
    run = _runner(type("Ctx", (), {"executor": lambda self, kind: ex})())
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    strict_ok = misaligned = empty = 0
    pairs: list[tuple[bool, bool]] = []
    per_rule: dict[str, list[tuple[bool, bool]]] = {}
    applied = undecided = 0
    for row in rows:
        constraints = parse_constraints(row["final_constraints"])
        answer = row.get("constraint_adherence_responses") or ""
        upstream = parse_adherence_upstream(answer)
        empty += not upstream
        try:
            verdicts = [v for v, _ in parse_adherence(answer, len(constraints), indexed=False, list_ok=True)]
            strict_ok += 1
        except JudgeAnswerError:
            verdicts = None
        if verdicts is None or upstream != verdicts:
            misaligned += 1
        if verdicts is None:
            continue
        code = rules.Code.parse(extract_code(row.get("response") or "").code)
        instruction = row.get("combined_instruction") or row.get("instruction") or ""
        for c, judge in zip(constraints, verdicts):
            v = rules.check(c.text, code, run, instruction)
            if v is None:
                continue
            applied += 1
            if v.verdict is None:
                undecided += 1
                continue
            pairs.append((judge, v.verdict))
            per_rule.setdefault(v.rule, []).append((judge, v.verdict))
    ex.close()
    n = len(rows)
    print(f"judged rows: {n}; strict reading accepts {strict_ok} ({strict_ok / n:.1%}); upstream's positional "
          f"reading differs from the strict one (or the strict one rejects the answer) on {misaligned} "
          f"({misaligned / n:.1%}); upstream reads an empty verdict list on {empty}")
    agree = sum(a == b for a, b in pairs)
    print(f"rules applied to {applied} constraints, decided {len(pairs)}, undecided {undecided}; "
          f"agreement with the judge {agree}/{len(pairs)} = {agree / max(1, len(pairs)):.1%}, "
          f"Cohen's kappa {cohen_kappa(pairs):.3f}")
    for name, ps in sorted(per_rule.items(), key=lambda kv: -len(kv[1])):
        a = sum(x == y for x, y in ps)
        jf = sum(1 for j, r in ps if not j)
        rf = sum(1 for j, r in ps if not r)
        print(f"  {name:20s} decided {len(ps):4d}  agree {a:4d}  judge-false {jf:3d}  rule-false {rf:3d}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path)
    ap.add_argument("--judged", type=Path)
    args = ap.parse_args()
    if args.data:
        coverage(args.data)
    if args.judged:
        judged(args.judged)


if __name__ == "__main__":
    main()
