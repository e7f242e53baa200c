"""``specbench cife ...``: CIFE tools (also ``python -m pytest_specbench.benchmarks.cife.cli``).

    specbench cife rules --data benchmark_data.jsonl [--judged upstream_llmjudge.jsonl]
        rule coverage over a data file; on upstream's judged answers, strict vs
        positional reading and rule-vs-judge agreement (Cohen's kappa)
    specbench cife import-upstream JUDGED.jsonl --out DIR
        turn one of IBM/CIFE's judged files (``id``, ``combined_instruction``,
        ``final_constraints``, ``response``, ``constraint_adherence_responses``,
        ``code_correctness_response``) into DIR/cife/benchmark_data.jsonl,
        DIR/responses.jsonl (``--model=replay:``) and DIR/judgments.jsonl
        (``--judge-model=replay:``), so upstream's own judgments can be re-read
        through the plugin: ``pytest --specbench=cife --specbench-data=DIR
        --model=replay:DIR/responses.jsonl --judge-model=replay:DIR/judgments.jsonl
        --cife-prompts=upstream [--cife-parse=upstream]``
"""
from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from ...errors import SpecbenchError
from . import rules
from .data import parse_constraints


def register(subparsers: Any) -> None:
    cife = subparsers.add_parser("cife", help="CIFE tools")
    sub = cife.add_subparsers(dest="command", required=True)
    r = sub.add_parser("rules", help="rule coverage, and agreement with recorded judgments")
    r.add_argument("--data", type=Path, help="a CIFE data file (benchmark_data.jsonl)")
    r.add_argument("--judged", type=Path, help="an IBM/CIFE judged file (*_llmjudge.jsonl)")
    r.set_defaults(func=cmd_rules)
    imp = sub.add_parser("import-upstream", help="an IBM/CIFE judged file -> data, responses and judgments for replay")
    imp.add_argument("judged", type=Path)
    imp.add_argument("--out", type=Path, required=True)
    imp.set_defaults(func=cmd_import)


def _rows(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        raise SpecbenchError(f"{path}: file not found")
    out = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if line.strip():
            try:
                out.append(json.loads(line))
            except json.JSONDecodeError as exc:
                raise SpecbenchError(f"{path}:{n}: malformed JSON ({exc.msg})") from None
    return out


def coverage(path: Path) -> None:
    counts: Counter = Counter()
    total = 0
    for row in _rows(path):
        for c in parse_constraints(row["constraints"]):
            total += 1
            chosen = rules.select(c.text, row["instruction"])
            counts[chosen[0].name if chosen else None] += 1
    covered = total - counts[None]
    print(f"coverage: {covered}/{total} constraints = {covered / max(1, total):.1%}")
    for name, n in counts.most_common():
        if name:
            print(f"  {name:20s} {n}")


def judged(path: Path) -> None:
    from ...data.bundled import suites_root
    from ...execution.limits import Limits
    from ...execution.python import PythonExecutor
    from .adapter import _runner
    from .extract import extract_code
    from .judge import JudgeAnswerError, parse_adherence, parse_adherence_upstream
    from .metrics import cohen_kappa

    ex = PythonExecutor(Limits(), hide=[str(suites_root())])
    run = _runner(type("Ctx", (), {"executor": lambda self, kind: ex})())
    rows = _rows(path)
    strict_ok = differ = empty = 0
    pairs: list[tuple[bool, bool]] = []
    per_rule: dict[str, list[tuple[bool, bool]]] = {}
    applied = undecided = 0
    try:
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
            differ += verdicts is None or upstream != verdicts
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
    finally:
        ex.close()
    n = max(1, len(rows))
    print(f"judged rows: {len(rows)}; strict reading accepts {strict_ok} ({strict_ok / n:.1%}); upstream's positional "
          f"reading differs from the strict one (or the strict one rejects the answer) on {differ} ({differ / n:.1%}); "
          f"upstream reads an empty verdict list on {empty}")
    agree = sum(a == b for a, b in pairs)
    print(f"rules applied to {applied} constraints, decided {len(pairs)}, undecided {undecided}; agreement with the "
          f"judge {agree}/{len(pairs)} = {agree / max(1, len(pairs)):.1%}, Cohen's kappa {cohen_kappa(pairs):.3f}")
    for name, ps in sorted(per_rule.items(), key=lambda kv: -len(kv[1])):
        a = sum(x == y for x, y in ps)
        print(f"  {name:20s} decided {len(ps):4d}  agree {a:4d}  judge-false {sum(not j for j, _ in ps):3d}  "
              f"rule-false {sum(not r for _, r in ps):3d}")


def cmd_rules(args: argparse.Namespace) -> int:
    if not args.data and not args.judged:
        raise SpecbenchError("cife rules: give --data and/or --judged")
    if args.data:
        coverage(args.data)
    if args.judged:
        judged(args.judged)
    return 0


def cmd_import(args: argparse.Namespace) -> int:
    rows = _rows(args.judged)
    (args.out / "cife").mkdir(parents=True, exist_ok=True)
    with open(args.out / "cife" / "benchmark_data.jsonl", "w", encoding="utf-8") as data, \
            open(args.out / "responses.jsonl", "w", encoding="utf-8") as responses, \
            open(args.out / "judgments.jsonl", "w", encoding="utf-8") as judgments:
        for row in rows:
            task_id = str(row["id"])
            constraints = [{"type": c.category, "constraint": c.text} for c in parse_constraints(row["final_constraints"])]
            data.write(json.dumps({"id": row["id"], "source_dataset": row.get("dataset", ""),
                                   "instruction": row.get("combined_instruction") or row["instruction"],
                                   "constraints": constraints,
                                   "instruction_difficulty": row.get("instruction_difficulty", "")}) + "\n")
            responses.write(json.dumps({"task_id": task_id, "solution": row.get("response") or ""}) + "\n")
            for purpose, key in (("adherence", "constraint_adherence_responses"), ("correctness", "code_correctness_response")):
                if isinstance(row.get(key), str):
                    judgments.write(json.dumps({"task_id": task_id, "sample_index": 0, "purpose": purpose, "attempt": 0,
                                                "answer": row[key]}) + "\n")
    print(f"wrote {len(rows)} tasks, responses and judgments under {args.out}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="specbench")
    register(parser.add_subparsers(dest="group", required=True))
    try:
        args = parser.parse_args(argv)
        return args.func(args)
    except (SpecbenchError, ValueError, KeyError) as exc:
        print(f"specbench: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
