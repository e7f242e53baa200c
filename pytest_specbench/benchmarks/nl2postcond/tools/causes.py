"""One line per task saying whether our verdicts agree with upstream's sheet and,
where they do not, why (the done-when of #46 allows disagreements "the docs list
with their cause"): the lines of docs/nl2postcond.md's "Per-task causes" table.

    python -m pytest_specbench.benchmarks.nl2postcond.tools.causes DATA_ROOT --corpus FILE|PARTS_FOLDER
        [--report REPORT.json ...] [--tasks HumanEval/0 ...]

The run columns (``num_codes_run``, ``num_bopi_run``, ``num_natural_codes_run``: one
figure per task upstream) are the evaluation's where a kept run evaluated a row correct on
both sides (its ``--nl2postcond-pairs`` and ``--nl2postcond-oracle``), else the corpus's
own; ``test_set_correct`` and the kill columns come from kept agreement runs (``tools.agreement ... --keep DIR``: its
``DIR/report.json``).  A cause is stated only where arithmetic on the data shows it:

- **repeat**: HumanEval+ 0.1.10 lists an input twice (a base input again among the
  plus inputs); counting it once (:func:`.agreement.counts_by_input_value`) gives
  upstream's counts exactly: upstream's pairs are by input value there (EvalPlus's
  scripts changed none of those tasks' inputs since upstream's HumanEval+, so its list
  had the repeat too).
- **inputs dropped since**: EvalPlus dropped inputs of the task after upstream's
  HumanEval+ (:data:`.agreement.INPUTS_DROPPED`, from its ``fix_v0NN.py`` scripts); where
  upstream's ``num_bopi_run`` pairs from its ``num_codes_run`` programs exceed programs x
  distinct inputs of 0.1.10 (a program gives one output per input), the arithmetic shows
  it.  Upstream's distinct pairs fewer than ours (by position and by value) are *not*
  shown by it: the distinct pairs are the union of every program's bad pairs, which more
  inputs can only grow.
- **more inputs**: that arithmetic on a task whose inputs no script dropped.
- **reference changed** (HumanEval/35 between EvalPlus 0.1.5 and 0.1.10) and
  **upstream varies by row** (upstream's ``num_bopi_run`` differs between its rows of one
  task: EvalPlus keeps only the verdicts before a process time-out).
- **kills follow the corpus**: run columns differ, so per-row kills are on other bad outputs.
- otherwise **not shown**, with the differences, so a reader sees what is left to explain
  (and, where no script changed the task's inputs since upstream's HumanEval+, that too:
  the inputs are not the cause there).
"""
from __future__ import annotations

import argparse
import ast
import functools
import re
import sys
import tempfile
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any, Mapping, Sequence

from ..corpus import parts_in_order, task_order
from . import agreement, one_line_errors


def joined_corpus(path: Path, into: Path) -> Path:
    """A corpus file: ``path`` itself, or a build's parts folder joined in task order
    (what the build writes when it ends)."""
    if path.is_file():
        return path
    parts = parts_in_order(path)
    into.write_text("".join(p.read_text(encoding="utf-8") for p in parts), encoding="utf-8")
    if (path / "long").is_dir():  # the long strings the lines name (corpus.LongStore)
        into.with_name(into.name + ".long").symlink_to((path / "long").resolve(), target_is_directory=True)
    return into


def run_cause(task_id: str, ours: tuple, upstream: tuple, by_value: tuple, inputs: list[Any],
              upstream_bopi_by_row: set) -> str:
    """Why a task's run columns (codes, bopi, natural codes) differ from upstream's."""
    from ..corpus import stable_text

    if ours == upstream:
        return "agrees"
    distinct = len({stable_text(x) for x in inputs})
    codes, bopi = upstream[0], upstream[1]
    if len(upstream_bopi_by_row) > 1:
        return (f"upstream varies by row ({', '.join(str(b) for b in sorted(upstream_bopi_by_row))} pairs): "
                f"EvalPlus keeps the verdicts before a process time-out")
    if task_id in agreement.CHANGED_REFERENCES:
        return "reference changed (EvalPlus 0.1.5 -> 0.1.10): other bad outputs"
    if by_value == upstream:
        return (f"repeat: {len(inputs) - distinct} input(s) listed twice in 0.1.10; counted once, "
                f"{by_value[1]:,} pairs = upstream's (ours {ours[1] - by_value[1]:+,} on the repeat)")
    more = (f"upstream's {bopi:,} pairs from {codes} programs exceed {codes} x {distinct} "
            f"distinct inputs of 0.1.10 = {codes * distinct:,}") if bopi > codes * distinct else ""
    diffs = ", ".join(f"{name} {a - b:+,}" for name, a, b in zip(("codes", "bopi", "natural"), ours, upstream)
                      if a != b)
    closer = by_value[1] - upstream[1]
    dropped = agreement.inputs_dropped_since_upstream(task_id)
    if dropped:
        version, script, what = dropped
        since = f"EvalPlus {version} ({script}) dropped {what}"
        if more:
            return f"inputs dropped since upstream's: {since}; {more}"
        if min(ours[1], by_value[1]) > bopi:
            return (f"not shown ({diffs}; a repeat counted once: bopi {closer:+,}); not the inputs EvalPlus {version} "
                    f"dropped alone: more inputs cannot give fewer distinct pairs")
        return f"consistent with inputs dropped since upstream's: {since} ({diffs}; a repeat counted once: bopi {closer:+,})"
    if more:
        return f"more inputs: {more}"
    return (f"not shown ({diffs}; a repeat counted once: bopi {closer:+,}); not the inputs: "
            f"unchanged since upstream's HumanEval+")


def kill_summary(rows: list[dict[str, Any]], bench: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """Per task: rows agreeing on ``test_set_correct``, and for rows correct on both
    sides, rows agreeing on each kill column (``agreement.compare``)."""
    out: dict[str, dict[str, Any]] = {}
    by_task: dict[str, list] = defaultdict(list)
    for r in rows:
        by_task[r["task_id"]].append(r)
    for task_id, task_rows in by_task.items():
        if task_id not in bench.get("tasks", {}):
            continue
        result = agreement.compare(task_rows, {"tasks": {task_id: bench["tasks"][task_id]}})
        correct = result["table"].get("agree", 0)
        kills = {col: agreement._share(result["kills"], col) for col in agreement.KILL_COLUMNS}
        differ = [(r_num, col, mine, theirs) for _, r_num, col, mine, theirs in result["kill_rows"]]
        out[task_id] = {"correct": f"{correct}/{len(task_rows)}", "kills": kills, "kill_rows": differ,
                        "both_correct": result["kills"] and sum(result["kills"].values()) // len(agreement.KILL_COLUMNS),
                        # the run columns the evaluation counted (its --nl2postcond-pairs and -oracle)
                        "evaluated": (result["runs"].get(task_id) or {}).get("ours"),
                        "correct_causes": sorted({d[4] or "cause not shown" for d in result["disagreements"]})}
    return out


def opaque_outputs(programs: Sequence[Any], task: Mapping[str, Any]) -> Counter:
    """The task's distinct bad outputs (as the evaluation counts them by default) that are
    objects the wire cannot carry as data (:class:`...execution.wire.Opaque`: a ``filter``, a
    generator, a function), by type.  The postcondition sees a placeholder for each, and
    raises on it (``any``: killed) where upstream's ran on the object itself."""
    from ....execution.wire import Opaque
    from ..evaluate import bad_outputs, input_keys, str_pair_key

    def kind(out: Opaque) -> str:  # a corpus line holds the build's placeholder: its text names the object's type
        inner = re.match(r"<([\w.]+) ", out.text) if out.type_name.endswith("wire.Opaque") else None
        return (inner.group(1) if inner else out.type_name).rsplit(".", 1)[-1]

    pairs, _ = bad_outputs(programs, input_keys(task), str_pair_key)
    return Counter(kind(out) for _, _, out in pairs if isinstance(out, Opaque))


def random_programs(candidates: Path, task_id: str) -> list[int]:
    """The task's candidate programs whose source imports ``random`` (read from upstream's
    candidates file, parsed, nothing run).  Upstream's counts are one unseeded draw of them, the
    corpus's the build's seeded one (``observe.observed_program``), and upstream's kill run called
    each program again through its wrapper, another draw, on which a program that flips a coin
    gives the right output part of the time (HumanEval/57's program 214: ``False`` for a monotonic
    list of odd length when ``randint(1, 10)`` is odd)."""
    if not candidates.is_file():
        return []
    return sorted(_random_importers(candidates).get(task_id, ()))


def _draws_text(programs: Sequence[int]) -> str:
    return f"consistent with a buggy program that draws random numbers (program(s) {', '.join(map(str, programs))})"


@functools.lru_cache(maxsize=2)
def _random_importers(candidates: Path) -> dict[str, set[int]]:
    from ..corpus import read_candidates

    out: dict[str, set[int]] = defaultdict(set)
    for cand in read_candidates(candidates):
        if "random" in cand.code and _imports_random(cand.code):
            out[cand.task_id].add(cand.program)
    return dict(out)


def _imports_random(code: str) -> bool:
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):
        return False
    return any(isinstance(n, ast.Import) and any(a.name.split(".")[0] == "random" for a in n.names)
               or isinstance(n, ast.ImportFrom) and (n.module or "").split(".")[0] == "random"
               for n in ast.walk(tree))


def kill_cause(summary: Mapping[str, Any], runs_agree: bool, opaque: Mapping[str, int] | None = None,
               renamed: Sequence[int] = (), random_draws: Sequence[int] = ()) -> str:
    if not summary["kill_rows"]:
        return ""
    if not runs_agree:
        return "kills follow the corpus (its run columns differ)"
    over = [theirs - mine for _, _, mine, theirs in summary["kill_rows"]
            if isinstance(mine, int) and isinstance(theirs, int)]
    bopi_over = {theirs - mine for _, col, mine, theirs in summary["kill_rows"] if col == "bopi_killed"}
    n = sum((opaque or {}).values())
    if n and bopi_over == {-n}:
        kinds = ", ".join(f"{name} x{count:,}" for name, count in sorted(opaque.items()))
        return (f"objects the wire cannot carry: {n:,} bad outputs ({kinds}) reach the postcondition as "
                f"placeholders, which it raises on (killed); upstream's ran on the objects: ours {n:+,} on every "
                f"such row")
    if random_draws and over and max(over) < 0:
        return (f"{_draws_text(random_draws)}: the corpus holds the build's seeded draw, and upstream's kill run "
                f"called the program again, a fresh draw that is sometimes the right output (ours above upstream on "
                f"every such row)")
    if renamed:
        return (f"consistent with the buggy programs' own parameter names: program(s) {', '.join(map(str, renamed))} "
                f"name theirs otherwise than the reference, and upstream's kill run bound their bad outputs to them "
                f"(--nl2postcond-names=program; the default binds the task's)")
    direction = ("upstream above ours on every such row" if over and min(over) > 0 else
                 "upstream below ours on every such row" if over and max(over) < 0 else "both ways")
    return f"same corpus counts, kills differ ({direction}): not shown" + (f" ({n:,} opaque bad outputs)" if n else "")


def table(data_root: Path, corpus: Path, reports: list[Path], tasks: set[str] | None,
          every_task: bool = False, sheet: Path | None = None) -> list[str]:
    """The lines: each task with a corpus part, and each task without one whose
    ``test_set_correct`` differs somewhere (``every_task``: every task of the sheet)."""
    from ...contract.evalplus import EvalPlusData

    rows = agreement.sheet_rows(data_root, tasks, sheet)
    evalplus = EvalPlusData.load(data_root / "evalplus").tasks
    runs = agreement.corpus_runs(rows, corpus, evalplus)
    bopi_by_row: dict[str, set] = defaultdict(set)
    for r in rows:
        if r["test_set_correct"] and r.get("num_bopi_run") is not None:
            bopi_by_row[r["task_id"]].add(r["num_bopi_run"])
    kills = kill_summary(rows, agreement.reports_read(reports, tool="causes"))
    lines = ["| task | runs: ours / upstream (codes, bopi, natural) | run cause | test_set_correct | "
             "kill rows agreeing (codes, bopi, natural) | kill cause |", "|---|---|---|---|---|---|"]
    from ..corpus import load

    built = load(corpus)
    candidates = data_root / "nl2postcond" / "code_mutants" / "merged_codes_preprocessed.jsonl.zip"
    for task_id in sorted({r["task_id"] for r in rows}, key=task_order):
        if task_id not in built and task_id not in kills:
            continue
        pair = runs.get(task_id)
        task = evalplus.get(task_id)
        k = kills.get(task_id)
        if pair is not None and k is not None and k["evaluated"]:  # the run's counts, not the corpus's exact ones
            pair = {**pair, "ours": tuple(k["evaluated"]), "by_value": tuple(k["evaluated"])}
        if pair is None:
            run_text, cause = "-", ("no row upstream marks correct: no run columns" if task_id in built
                                    else "no corpus part")
        else:
            inputs = list(task["base_input"]) + list(task["plus_input"])
            run_text = f"{_t(pair['ours'])} / {_t(pair['upstream'])}"
            cause = run_cause(task_id, pair["ours"], pair["upstream"], pair["by_value"], inputs, bopi_by_row[task_id])
            draws = random_programs(candidates, task_id)
            if cause.startswith("not shown") and draws:
                cause = f"{_draws_text(draws)}: upstream's counts are one unseeded draw, the corpus's the build's seeded one; {cause}"
        if task_id not in built and not every_task and (k is None or not k["correct_causes"]):
            continue
        correct = "-" if k is None else k["correct"] + (f" ({'; '.join(k['correct_causes'])})" if k["correct_causes"] else "")
        kill_text = "-" if k is None or not k["both_correct"] else ", ".join(k["kills"].values())
        runs_agree = pair is not None and pair["ours"] == pair["upstream"]
        # the opaque outputs are counted only where they can be the cause: kills differ on equal run columns
        opaque = opaque_outputs(built[task_id], task) if k and k["kill_rows"] and runs_agree and task_id in built \
            else None
        renamed = [kept.program for kept in built[task_id] if kept.params is not None] if opaque is not None else []
        kept_draws = sorted({kept.program for kept in built[task_id]} & set(random_programs(candidates, task_id))) \
            if opaque is not None else []
        kcause = "" if k is None else kill_cause(k, runs_agree, opaque, renamed, kept_draws)
        lines.append(f"| {task_id} | {run_text} | {cause} | {correct} | {kill_text} | {kcause} |")
    return lines


def _t(values: tuple) -> str:
    return ", ".join(f"{v:,}" if isinstance(v, int) else str(v) for v in values)


@one_line_errors("causes")
def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="causes", description=__doc__.split("\n\n")[0])
    p.add_argument("data_root", type=Path)
    p.add_argument("--corpus", type=Path, required=True, help="a corpus file or a build's parts folder")
    p.add_argument("--report", type=Path, nargs="*", default=[], help="report.json of kept agreement runs")
    p.add_argument("--tasks", nargs="*", default=None)
    p.add_argument("--sheet", type=Path, default=None,
                   help="rows in the format of upstream's sheet (default DATA_ROOT/nl2postcond/annotated_postconditions.jsonl)")
    p.add_argument("--all", dest="every_task", action="store_true",
                   help="a line for every task of the sheet (default: tasks with a part, and tasks without one "
                        "whose test_set_correct differs)")
    args = p.parse_args(argv)
    for path in [args.corpus, *args.report]:  # before the minutes of reading the corpus
        if not path.exists():
            raise SystemExit(f"causes: {path}: no such file or folder")
    with tempfile.TemporaryDirectory() as tmp:
        corpus = joined_corpus(args.corpus, Path(tmp) / "corpus.jsonl")
        for line in table(args.data_root, corpus, args.report, set(args.tasks) if args.tasks else None,
                          args.every_task, args.sheet):
            print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
