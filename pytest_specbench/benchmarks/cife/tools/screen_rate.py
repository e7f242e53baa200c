"""Measure the injection screen's false-positive rate on real model answers.

    python -m pytest_specbench.benchmarks.cife.tools.screen_rate --samples ../shared/datasets/samples [--show 20]

Reads every ``*.jsonl`` / ``*.jsonl.gz`` of the folder (EvalPlus-released ChatGPT
answers: JSON lines with ``solution``, the raw model text), extracts the code as the
CIFE adapter does (``extract.py``) and screens it (``screen.addresses_the_judge``),
plus the bundled suite's reference answers.  None of these answers speaks to a judge
(they were written before any judge read them), so every hit is a false positive.
Prints the answers read, the hits by what the screen found, the rate, the seconds
taken, and the first ``--show`` hits.  Exit status 0 (a figure, not a gate).
"""
from __future__ import annotations

import argparse
import gzip
import json
import sys
import time
from collections import Counter
from pathlib import Path

from ..adapter import ADAPTER
from ..extract import extract_code
from ..screen import addresses_the_judge


def answers(folder: Path):
    """``(file name, line, raw answer)`` of every sample file, then the bundled references."""
    for path in sorted(folder.iterdir()):
        if not (path.name.endswith(".jsonl") or path.name.endswith(".jsonl.gz")):
            continue
        opener = gzip.open if path.name.endswith(".gz") else open
        with opener(path, "rt", encoding="utf-8") as fh:
            for line, text in enumerate(fh, 1):
                if text.strip():
                    yield path.name, line, str(json.loads(text).get("solution", ""))
    for task in ADAPTER.load(None, None).tasks:
        yield "bundled cife", task.task_id, task.data["reference_answer"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--samples", type=Path, required=True, help="folder of JSON-lines answer files")
    parser.add_argument("--show", type=int, default=20, help="hits to print")
    args = parser.parse_args(argv)
    if not args.samples.is_dir():
        print(f"--samples: folder not found: {args.samples}", file=sys.stderr)
        return 2
    started = time.perf_counter()
    read, hits, kinds, by_file = 0, [], Counter(), Counter()
    for name, line, raw in answers(args.samples):
        read += 1
        by_file[name] += 1
        found = addresses_the_judge(extract_code(raw).code)
        if found:
            hits.append((name, line, found))
            kinds[found.split(":", 1)[0]] += 1
    seconds = time.perf_counter() - started
    print(f"answers screened: {read} ({', '.join(f'{n} {f}' for f, n in by_file.items())})")
    print(f"flagged (false positives): {len(hits)} = {len(hits) / max(read, 1):.4%}"
          + (f"; by kind: {dict(kinds)}" if kinds else ""))
    print(f"time: {seconds:.1f} s ({seconds / max(read, 1) * 1e3:.2f} ms per answer)")
    for name, line, found in hits[:args.show]:
        print(f"  {name}:{line}: {found}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
