"""Bind the bundled suite's recorded judgments to the questions they answer.

Each line of ``benchmarks/cife/judgments.jsonl`` gets ``question_sha256``
(:func:`..prompts.question_digest` of its purpose, the paper's prompts, the task's
instruction and constraints, and the reference answer's extracted code), so that the
recorded judge answers those questions and no other (issue #43: any other answer
to the same task is a skip with the usage line when no ``--judge-model`` is given).

    python -m pytest_specbench.benchmarks.cife.tools.bind_judgments [--check]

Run it after a change to the bundled tasks, their reference answers or the paper's
prompt templates; ``--check`` only says whether the file is up to date (exit 1 if not).
"""
from __future__ import annotations

import argparse
import json
import sys

from ..adapter import ADAPTER
from ..data import constraints_of
from ..extract import extract_code
from ..judge import judge_text
from ..prompts import question_digest


def bound_lines(lines: list[dict]) -> list[dict]:
    tasks = {t.task_id: t for t in ADAPTER.load(None, None).tasks}
    out = []
    for line in lines:
        task = tasks[str(line["task_id"])]
        code = judge_text(extract_code(task.data["reference_answer"]).code)
        purpose = line["purpose"]
        constraints = constraints_of(task.data) if purpose == "adherence" else ()
        out.append({**line, "question_sha256": question_digest(purpose, "paper", task.data["instruction"],
                                                               constraints, code)})
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="only check that the file is up to date")
    args = parser.parse_args(argv)
    from .. import adapter as module

    path = module.BUNDLED_JUDGMENTS
    lines = [json.loads(l) for l in path.read_text(encoding="utf-8").splitlines() if l.strip()]
    bound = bound_lines(lines)
    if args.check:
        ok = bound == lines
        print(f"{path}: {'up to date' if ok else 'out of date: run without --check'}")
        return 0 if ok else 1
    path.write_text("".join(json.dumps(l) + "\n" for l in bound), encoding="utf-8")
    print(f"{path}: {len(bound)} judgments bound to their questions")
    return 0


if __name__ == "__main__":
    sys.exit(main())
