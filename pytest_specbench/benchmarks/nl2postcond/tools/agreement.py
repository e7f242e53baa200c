"""Re-score upstream's own verdicts (nl2postcond's qualitative sheet,
``nl2postcond/annotated_postconditions.jsonl``: 10 postconditions per task for
HumanEval/0-109) through the plugin, and print the agreement row by row.

    python -m pytest_specbench.benchmarks.nl2postcond.tools.agreement DATA_ROOT [--tasks HumanEval/0 ...] [--sheet FILE]
        [--inputs base+plus|base] [--time paper|upstream] [--long-ints upstream|paper] [--corpus FILE] [-n 2]
        [--spec-tiers corpus] [--corpus-pin check|warn|off] [--pairs str|value|position|json] [--oracle eq|exact] [--names reference|program]
        [--keep DIR] [--report FILE ...] [-v]

Each row's ``postcondition`` text is replayed (``sample_index`` = its ``r_num``);
``correct`` is compared with ``test_set_correct``; with a corpus, ``complete``'s
``codes_run``/``bopi_run``/``natural_codes_run`` per task and the kill columns
per correct row with upstream's, under the run's ``--nl2postcond-kill`` and under
each rule (the calibration of the kill rule, docs/nl2postcond.md).  Prints the
table (rows agreeing / total per column) and each disagreement with its known
cause; ``--report`` compares a kept run's report again without running, or
several kept runs of other tasks as one (a whole-sheet table from batches run
as the corpus's parts were built).

``--long-ints`` is ``upstream`` here by default (the run's
``--nl2postcond-long-ints``): upstream's harness failed every output holding an
int of more than 4,300 digits (HumanEval/83, docs/nl2postcond.md), so its
sheet's HumanEval/83 rows are reproduced; ``paper`` shows them as the plugin's
default scores them (correct), each listed with that cause.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

from ..corpus import task_order
from . import one_line_errors

SHEET = "nl2postcond/annotated_postconditions.jsonl"
KILL_COLUMNS = ("codes_killed", "bopi_killed", "natural_codes_killed")
RUN_COLUMNS = ("codes_run", "bopi_run", "natural_codes_run")


# What a row needs (upstream's sheet: its kill columns, num_*, are read where present).
ROW_FIELDS = (("task_id", str), ("r_num", int), ("postcondition", str), ("test_set_correct", (bool, int)))


def sheet_rows(data_root: Path, tasks: set[str] | None = None, sheet: Path | None = None) -> list[dict[str, Any]]:
    """The rows of upstream's sheet (``sheet``: a file of rows in its format, such as the rows
    kept aside; default ``ROOT/nl2postcond/annotated_postconditions.jsonl``), of ``tasks`` only
    if given.  A missing file or a row that is not one is one line naming it (SystemExit)."""
    path = sheet or data_root / SHEET
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise SystemExit(f"{path}: cannot read the sheet ({exc.strerror or exc})") from None
    rows = []
    for lineno, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except ValueError as exc:
            raise SystemExit(f"{path}:{lineno}: not a sheet row (a JSON object per line): {exc}") from None
        missing = [name for name, kind in ROW_FIELDS if not isinstance(row, dict) or not isinstance(row.get(name), kind)]
        if missing:
            raise SystemExit(f"{path}:{lineno}: not a sheet row: {', '.join(missing)} missing or of another type "
                             f"(a row has {', '.join(name for name, _ in ROW_FIELDS)})")
        rows.append(row)
    return [r for r in rows if not tasks or r["task_id"] in tasks]


def replay_lines(rows: list[dict[str, Any]]) -> str:
    return "".join(json.dumps({"task_id": r["task_id"], "sample_index": r["r_num"],
                               "postcondition": r["postcondition"]}) + "\n" for r in rows)


def plugin_args(data_root: Path, rows: list[dict[str, Any]], folder: Path, inputs: str, corpus: Path | None,
                workers: int, time_rule: str = "paper", long_ints: str = "upstream",
                spec_tiers: str | None = None, corpus_pin: str | None = None, pairs: str | None = None,
                oracle: str | None = None, names: str | None = None) -> list[str]:
    """The arguments of the pytest run that replays ``rows`` (run in ``folder``; the
    replay file is written there), for :func:`run_plugin` or a caller's own pytest.
    ``spec_tiers``: the run's ``--spec-tiers`` (None: the family's default, which includes
    the ``pbt`` tier's search; ``corpus`` runs the paper's checks only, all the columns need).
    ``corpus_pin``: the run's ``--nl2postcond-corpus-pin`` (None: the family's default, ``check``;
    ``warn`` takes a part this machine built otherwise, named in a warning).  ``pairs``: the run's
    ``--nl2postcond-pairs`` (None: the family's default, ``str``); ``oracle``: its
    ``--nl2postcond-oracle`` (None: the family's default, ``eq``); ``names``: its
    ``--nl2postcond-names`` (None: the family's default, ``reference``)."""
    replay = folder / "sheet-replay.jsonl"
    replay.write_text(replay_lines(rows), encoding="utf-8")
    tasks = sorted({r["task_id"] for r in rows})
    argv = ["--specbench=nl2postcond", f"--model=replay:{replay}",
            f"--specbench-data={data_root}", f"--nl2postcond-inputs={inputs}", f"--nl2postcond-time={time_rule}",
            f"--nl2postcond-long-ints={long_ints}",
            f"--specbench-report={folder / 'report.json'}",
            f"--specbench-tasks={','.join(tasks)}", "-p", "no:cacheprovider", "-q", "--rootdir", str(folder),
            "-o", "addopts="]
    argv += [f"--nl2postcond-corpus={corpus}"] if corpus else ["--specbench-checks=correct"]
    argv += [f"--nl2postcond-corpus-pin={corpus_pin}"] if corpus and corpus_pin else []
    argv += [f"--spec-tiers={spec_tiers}"] if spec_tiers else []
    argv += [f"--nl2postcond-pairs={pairs}"] if corpus and pairs else []
    argv += [f"--nl2postcond-oracle={oracle}"] if corpus and oracle else []
    argv += [f"--nl2postcond-names={names}"] if corpus and names else []
    return argv + (["-n", str(workers)] if workers else [])


def reports_read(paths: list[Path], tool: str = "agreement") -> dict[str, Any]:
    """The nl2postcond sections of several kept runs' reports as one (each run a batch of
    tasks: a whole-sheet table from runs made as parts were built). A task in two reports
    is refused: which run's verdicts count would be a guess."""
    tasks: dict[str, Any] = {}
    where: dict[str, Path] = {}
    for path in paths:
        try:
            section = json.loads(path.read_text())["benchmarks"]["nl2postcond"]
        except OSError as e:
            raise SystemExit(f"{tool}: {path}: cannot read the report ({e.strerror})") from None
        except (ValueError, KeyError, TypeError):
            raise SystemExit(f"{tool}: {path}: not a report with an nl2postcond section") from None
        for task_id, task in section.get("tasks", {}).items():
            if task_id in where:
                raise SystemExit(f"{tool}: {path}: {task_id} is also in {where[task_id]} (one run a task)")
            where[task_id] = path
            tasks[task_id] = task
    return {"tasks": tasks}


def run_report(folder: Path, tool: str = "agreement") -> dict[str, Any]:
    """The nl2postcond section of the report a run of :func:`plugin_args` wrote in ``folder``."""
    report = folder / "report.json"
    if not report.is_file():
        raise SystemExit(f"{tool}: the plugin run wrote no report (see {folder})")
    return json.loads(report.read_text())["benchmarks"]["nl2postcond"]


def run_plugin(data_root: Path, rows: list[dict[str, Any]], folder: Path, inputs: str, corpus: Path | None,
               workers: int, time_rule: str = "paper", long_ints: str = "upstream",
               spec_tiers: str | None = None, corpus_pin: str | None = None, pairs: str | None = None,
               oracle: str | None = None, names: str | None = None) -> dict[str, Any]:
    argv = plugin_args(data_root, rows, folder, inputs, corpus, workers, time_rule, long_ints, spec_tiers, corpus_pin,
                       pairs, oracle, names)
    subprocess.run([sys.executable, "-m", "pytest", *argv], cwd=folder, check=False, stdout=subprocess.DEVNULL)
    return run_report(folder)


# Tasks whose reference changed between EvalPlus 0.1.5 (upstream's pin) and 0.1.10 (ours).
CHANGED_REFERENCES = {"HumanEval/35", "HumanEval/114", "HumanEval/115", "HumanEval/140"}
# How EvalPlus changed HumanEval+'s test inputs after v0.1.1, by its own scripts (evalplus/evalplus,
# tools/humaneval/fix_v0NN.py: fix_v011.py makes v0.1.2 from v0.1.1, ..., fix_v019.py makes v0.1.10
# from v0.1.9): each drops inputs, none adds or edits one, and no other task's inputs changed.  By task:
# (version that dropped them, its script, which inputs).  Upstream's own were v0.1.2's or later: the six
# base inputs of /75 that v0.1.2 dropped would have given 12 distinct pairs more than upstream counts
# (docs/nl2postcond.md, "Which HumanEval+ upstream ran").
UPSTREAM_INPUTS_FROM = "v0.1.2"
INPUTS_DROPPED = {
    "HumanEval/75": ("v0.1.2", "fix_v011.py", "base and plus inputs with a >= 100"),
    "HumanEval/129": ("v0.1.2", "fix_v011.py", "base and plus grids that are not a permutation of 1..N*N"),
    "HumanEval/0": ("v0.1.3", "fix_v012.py", "plus inputs whose threshold is not a positive float or numbers not a list"),
    "HumanEval/3": ("v0.1.3", "fix_v012.py", "plus inputs whose operations are not a list"),
    "HumanEval/9": ("v0.1.3", "fix_v012.py", "plus inputs whose numbers are not a list"),
    "HumanEval/53": ("v0.1.3", "fix_v012.py", "plus inputs whose x or y is not an int"),
    "HumanEval/148": ("v0.1.3", "fix_v012.py", "plus inputs whose planets are not both str"),
    "HumanEval/116": ("v0.1.4", "fix_v013.py", "plus inputs that are not a list of non-negative ints"),
    "HumanEval/32": ("v0.1.5", "fix_v014.py", "plus inputs its check_valid refuses (no root found, odd length)"),
    "HumanEval/6": ("v0.1.6", "fix_v015.py", "plus inputs its check_valid refuses (a character other than "
                    "'(' or ')', or unbalanced)"),
    "HumanEval/126": ("v0.1.6", "fix_v015.py", "plus inputs that are not a list of non-negative ints"),
    "HumanEval/160": ("v0.1.7", "fix_v016.py", "plus inputs whose expression does not evaluate; v0.1.10 "
                      "(fix_v019.py) those its contract refuses"),
    "HumanEval/1": ("v0.1.10", "fix_v019.py", "plus inputs its contract (v0.1.8: balanced) refuses"),
    "HumanEval/28": ("v0.1.10", "fix_v019.py", "plus inputs its contract (v0.1.9: a list) refuses"),
    "HumanEval/99": ("v0.1.10", "fix_v019.py", "plus inputs its contract (v0.1.8: not inf or nan) refuses"),
}


def _version(v: str) -> tuple[int, ...]:
    return tuple(int(x) for x in v.lstrip("v").split("."))


def inputs_dropped_since_upstream(task_id: str) -> tuple[str, str, str] | None:
    """EvalPlus's drop of ``task_id``'s inputs after upstream's HumanEval+ (:data:`UPSTREAM_INPUTS_FROM`), or None."""
    dropped = INPUTS_DROPPED.get(task_id)
    return dropped if dropped and _version(dropped[0]) > _version(UPSTREAM_INPUTS_FROM) else None


# Tasks whose reference outputs hold ints of more than 4,300 digits on HumanEval+'s inputs (all
# 164 scanned: /83 and /139 only): upstream fails them whatever the postcondition.
LONG_INT_OUTPUTS = {"HumanEval/83", "HumanEval/139"}


def _known_cause(row: dict[str, Any]) -> str:
    if row["task_id"] in CHANGED_REFERENCES:
        return "reference changed (EvalPlus 0.1.5 -> 0.1.10)"
    if row["task_id"] in LONG_INT_OUTPUTS:
        return "outputs with ints of more than 4,300 digits (upstream's harness fails them: --nl2postcond-long-ints)"
    if row.get("base_error"):
        return "base_error: " + str(row["base_error"])[:60]
    return ""


def compare(rows: list[dict[str, Any]], bench: dict[str, Any]) -> dict[str, Any]:
    """Per row: ours against upstream's ``test_set_correct``; for rows correct on
    both sides (with a corpus), per task the run columns (``codes_run``,
    ``bopi_run``, ``natural_codes_run``: the same for every correct row of a
    task) and per row the kill columns, under each kill rule."""
    ours: dict[tuple[str, int], dict[str, Any]] = {}
    for task_id, task in bench.get("tasks", {}).items():
        for sample in task["samples"]:
            ours[(task_id, sample["index"])] = sample["checks"]
    table, disagreements = Counter(), []
    kills = Counter()
    by_rule: dict[str, Counter] = {}
    runs: dict[str, dict[str, Any]] = {}  # task -> {"ours": (...), "upstream": (...)}
    kill_rows: list[tuple[str, int, str, Any, Any]] = []
    no_part = Counter()  # task -> rows correct on both sides whose complete check skipped (no corpus part)
    for r in rows:
        checks = ours.get((r["task_id"], r["r_num"]))
        if checks is None or "correct" not in checks:
            table["not evaluated (E or skipped)"] += 1
            disagreements.append((r["task_id"], r["r_num"], "no verdict", r["test_set_correct"], _known_cause(r)))
            continue
        mine = bool(checks["correct"].get("passed"))
        table[("agree" if mine == bool(r["test_set_correct"]) else "differ")] += 1
        if mine != bool(r["test_set_correct"]):
            disagreements.append((r["task_id"], r["r_num"], mine, r["test_set_correct"], _known_cause(r)))
        complete = checks.get("complete", {})
        if mine and r["test_set_correct"] and "complete" not in checks:  # skipped: the corpus has no part
            no_part[r["task_id"]] += 1
        if not (mine and r["test_set_correct"] and complete.get("applicable")):
            continue
        runs.setdefault(r["task_id"], {"ours": tuple(complete.get(c) for c in RUN_COLUMNS),
                                       "upstream": tuple(r.get(f"num_{c}") for c in RUN_COLUMNS)})
        for col in KILL_COLUMNS:
            same = complete.get(col) == r.get(f"num_{col}")
            kills[f"{col} {'agree' if same else 'differ'}"] += 1
            if not same:
                kill_rows.append((r["task_id"], r["r_num"], col, complete.get(col), r.get(f"num_{col}")))
        for rule, counts in (checks["correct"].get("killed_by_rule") or {}).items():
            for col in KILL_COLUMNS:
                by_rule.setdefault(rule, Counter())[f"{col} {'agree' if counts.get(col) == r.get(f'num_{col}') else 'differ'}"] += 1
    run_table = Counter()
    for task_id, pair in runs.items():
        for col, a, b in zip(RUN_COLUMNS, pair["ours"], pair["upstream"]):
            run_table[f"{col} {'agree' if a == b else 'differ'}"] += 1
    return {"rows": len(rows), "table": dict(table), "kills": dict(kills),
            "by_rule": {k: dict(v) for k, v in by_rule.items() if v}, "runs": runs, "run_table": dict(run_table),
            "kill_rows": kill_rows, "disagreements": disagreements, "no_part": dict(no_part)}


def corpus_runs(rows: list[dict[str, Any]], corpus_path: Path, tasks: dict[str, Any] | None = None,
                pairs_by: str = "str", expected=None) -> dict[str, dict[str, tuple]]:
    """The run columns per task straight from a corpus (no postcondition runs: they are
    the corpus's counts), beside upstream's (the same on every correct row of a task).
    With the tasks (HumanEval+), also ``by_value``: the same counts with an input that
    HumanEval+ 0.1.10 lists twice (a base input repeated among the plus inputs, 98 of
    164 tasks) counted once, the selection keyed by (input value, bad output) with the output
    as ``pairs_by`` keys it (:func:`counts_by_input_value`).  ``expected``: a callable giving a
    task's reference outputs (``--oracle eq``, the evaluation's default: only the bad outputs
    Python's ``==`` rejects count, and a program left with no new pair is not counted, as the
    evaluation selects); None: the corpus's own outputs (``exact``)."""
    from ..corpus import load
    from ..evaluate import _pairs, unequal_only

    built = load(corpus_path)
    upstream: dict[str, tuple] = {}
    for r in rows:
        if r["task_id"] in built and r.get("num_codes_run") not in (None, "", "TBD"):
            upstream.setdefault(r["task_id"], tuple(r.get(f"num_{c}") for c in RUN_COLUMNS))
    out = {}
    for t, theirs in upstream.items():
        programs = built[t] if expected is None else unequal_only(built[t], expected(t))
        pairs, _, _, selected = _pairs(programs, select=expected is not None)
        out[t] = {"ours": (len(selected), len(pairs), sum(k.natural for k in selected)), "upstream": theirs}
        if tasks:
            out[t]["by_value"] = counts_by_input_value(selected, tasks[t], pairs_by)
    return out


def counts_by_input_value(programs, task: dict[str, Any], pairs_by: str = "str") -> tuple[int, int, int]:
    """(programs, distinct pairs, natural programs) of a task's corpus, selected again in
    program order with each pair keyed by its input's value, not its position, and its output
    as ``pairs_by`` says (``--nl2postcond-pairs``: ``str``, the default, by the text ``str()``
    prints; ``value`` by value and type)."""
    from ..evaluate import by_input_value, input_keys, pair_key_of

    kept, pairs = by_input_value(programs, input_keys(task), pair_key_of(pairs_by))
    return len(kept), len(pairs), sum(k.natural for k in kept)


@contextlib.contextmanager
def _reference_outputs(tasks: dict[str, Any], inputs: str):
    """A callable giving a task's reference outputs, each task's run once in the sandbox
    (the reference is the benchmark's, but it runs where the build runs it)."""
    from ....execution.limits import Limits
    from ....execution.python import PythonExecutor
    from ..corpus import reference_outputs

    limits = Limits()
    executor = PythonExecutor(limits)
    try:
        yield lambda task_id: reference_outputs(executor, dict(tasks[task_id]), inputs, limits)
    finally:
        executor.close()


def _share(counter: dict[str, int], col: str) -> str:
    agree, differ = counter.get(f"{col} agree", 0), counter.get(f"{col} differ", 0)
    return f"{agree}/{agree + differ}"


@one_line_errors("agreement")
def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="agreement", description=__doc__.split("\n\n")[0])
    p.add_argument("data_root", type=Path)
    p.add_argument("--tasks", nargs="*", default=None)
    p.add_argument("--sheet", type=Path, default=None,
                   help="rows in the format of upstream's sheet (e.g. the rows kept aside; default "
                        "DATA_ROOT/nl2postcond/annotated_postconditions.jsonl)")
    p.add_argument("--inputs", choices=("base+plus", "base"), default="base+plus")
    p.add_argument("--corpus", type=Path, default=None)
    p.add_argument("--time", dest="time_rule", choices=("paper", "upstream"), default="paper",
                   help="--nl2postcond-time of the run")
    p.add_argument("--long-ints", choices=("upstream", "paper"), default="upstream",
                   help="--nl2postcond-long-ints of the run (default upstream: the sheet's HumanEval/83)")
    p.add_argument("--corpus-pin", choices=("check", "warn", "off"), default=None,
                   help="--nl2postcond-corpus-pin of the run (default: the family's, check; warn takes a part "
                        "built otherwise on this machine, named in a warning)")
    p.add_argument("--pairs", choices=("str", "value", "position", "json"), default="str",
                   help="--nl2postcond-pairs of the run (default str: an output by the text str() prints, an "
                        "input listed twice is one input)")
    p.add_argument("--oracle", choices=("eq", "exact"), default="eq",
                   help="--nl2postcond-oracle of the run (default eq: a bad output is one Python's == rejects)")
    p.add_argument("--names", choices=("reference", "program"), default=None,
                   help="--nl2postcond-names of the run (default: the family's, reference; program binds a bad "
                        "output's inputs to its buggy program's own parameter names, as upstream's kill run)")
    p.add_argument("-n", dest="workers", type=int, default=0)
    p.add_argument("--spec-tiers", default=None,
                   help="--spec-tiers of the run (default: the family's; 'corpus' skips the pbt tier's search)")
    p.add_argument("--keep", type=Path, default=None, help="keep the run's files here")
    p.add_argument("--report", type=Path, nargs="+", default=None,
                   help="compare these runs' reports (no new run): several kept runs of other tasks (batches) "
                        "are read as one")
    p.add_argument("--runs-only", action="store_true",
                   help="only the run columns per task, from --corpus (no postcondition runs; under --oracle eq, the "
                        "default, the reference runs in the sandbox for the outputs == takes)")
    p.add_argument("-v", dest="verbose", action="store_true", help="list each row whose kill columns differ")
    args = p.parse_args(argv)
    rows = sheet_rows(args.data_root, set(args.tasks) if args.tasks else None, args.sheet)
    if args.runs_only:
        if args.corpus is None:
            p.error("--runs-only needs --corpus")
        from ...contract.evalplus import EvalPlusData

        outputs_by = "value" if args.pairs == "position" else args.pairs  # the output's part of a pair's key
        tasks = EvalPlusData.load(args.data_root / "evalplus").tasks
        with _reference_outputs(tasks, args.inputs) if args.oracle == "eq" else contextlib.nullcontext() as expected:
            runs = corpus_runs(rows, args.corpus, tasks, outputs_by, expected)
        bad = ("outputs Python's == rejects (--oracle eq, the evaluation's)" if args.oracle == "eq" else
               "outputs unequal in value or type (the corpus's own: --oracle exact)")
        for key, label in (("ours", f"run columns per task, pairs by input position, {bad}"),
                           ("by_value", f"  pairs by input value (a repeated input once), outputs keyed as --pairs "
                                        f"{outputs_by} keys them (--oracle {args.oracle})")):
            table = Counter(f"{col} {'agree' if a == b else 'differ'}" for pair in runs.values()
                            for col, a, b in zip(RUN_COLUMNS, pair[key], pair["upstream"]))
            print(f"{label} ({len(runs)} tasks of the corpus with a correct row upstream): "
                  + "  ".join(f"{col} {_share(table, col)}" for col in RUN_COLUMNS))
        for task_id, pair in sorted(runs.items(), key=lambda kv: task_order(kv[0])):
            if pair["ours"] != pair["upstream"] or pair["by_value"] != pair["upstream"]:
                print(f"  {task_id} runs (codes, bopi, natural codes): ours {pair['ours']}, upstream {pair['upstream']}"
                      f"; a repeated input once: {pair['by_value']}{' (agrees)' if pair['by_value'] == pair['upstream'] else ''}")
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        folder = args.keep or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        bench = (reports_read(args.report) if args.report else
                 run_plugin(args.data_root.resolve(), rows, folder, args.inputs, args.corpus, args.workers,
                            args.time_rule, args.long_ints, args.spec_tiers, args.corpus_pin, args.pairs, args.oracle,
                            args.names))
        result = compare(rows, bench)
    print(f"rows: {result['rows']}  " + "  ".join(f"{k}: {v}" for k, v in sorted(result["table"].items())))
    if result["runs"]:
        print(f"run columns per task ({len(result['runs'])} tasks with a row correct on both sides): "
              + "  ".join(f"{col} {_share(result['run_table'], col)}" for col in RUN_COLUMNS))
        print("kill columns per row (rows correct on both sides, the run's rule): "
              + "  ".join(f"{col} {_share(result['kills'], col)}" for col in KILL_COLUMNS))
        for rule, counter in result["by_rule"].items():
            kill, _, codes = rule.partition("/")
            print(f"  --nl2postcond-kill={kill} --nl2postcond-codes={codes}: " + "  ".join(f"{col} {_share(counter, col)}" for col in KILL_COLUMNS))
    if result["no_part"]:
        print(f"kill columns not compared on {sum(result['no_part'].values())} rows correct on both sides: the corpus "
              f"has no part for " + ", ".join(sorted(result["no_part"], key=task_order)))
    for task_id, r_num, mine, theirs, note in result["disagreements"]:
        print(f"  {task_id} r_num={r_num}: ours {mine}, upstream {theirs} {note}".rstrip())
    for task_id, pair in sorted(result["runs"].items(), key=lambda kv: task_order(kv[0])):
        if pair["ours"] != pair["upstream"]:
            print(f"  {task_id} runs (codes, bopi, natural codes): ours {pair['ours']}, upstream {pair['upstream']}")
    if args.verbose:
        for task_id, r_num, col, mine, theirs in result["kill_rows"]:
            print(f"  {task_id} r_num={r_num} {col}: ours {mine}, upstream {theirs}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
