"""``specbench contract ...``: ContractEval's tools (registered by :mod:`pytest_specbench.cli`).

Subcommands::

    specbench contract synthesize   build contract-violating tests (ContractEval §3.2) without an LLM
    specbench contract cvt-metrics  AVC / TS / coverage (ContractEval §3.4) of any CVT set
    specbench contract build-suite  regenerate the bundled suite benchmarks/contract/ (--check: is it current?)
    specbench contract validate-suite  check a suite folder's tasks, CVTs and labels

Errors reach the user as one line (``specbench: error: ...``), never as a
traceback (the core command catches :class:`~pytest_specbench.errors.SpecbenchError`).
"""
from __future__ import annotations

import argparse
import fnmatch
import json
import os
import sys
from pathlib import Path

from ...errors import OptionError, SpecbenchError
from .cvt_metrics import TS_MODES

DEFAULT_DATA_ROOT = Path("..") / "shared" / "datasets"
REBUILT = Path("contracteval") / "contracteval_rebuilt.jsonl"


def register(sub) -> None:
    """Add ``specbench contract ...`` to the core command's subparsers."""
    contract = sub.add_parser("contract", help="ContractEval tools")
    csub = contract.add_subparsers(dest="command", required=True, parser_class=type(contract))

    syn = csub.add_parser("synthesize", help="synthesize contract-violating tests with z3 (no LLM)",
                          description="Translate each task's asserts into z3 constraints, solve every violation "
                                      "subset, keep the candidates that pass the feasibility filter on the reference "
                                      "(ContractEval §3.2), and write a contracteval_rebuilt.jsonl-shaped file.")
    syn.add_argument("--data-root", type=Path, default=None,
                     help="data folder (default: ../shared/datasets if it exists); supplies the default --input "
                          "and EvalPlus inputs used as valid values for untouched parameters")
    syn.add_argument("--input", type=Path, default=None,
                     help=f"tasks in the contracteval_rebuilt.jsonl schema (default: DATA_ROOT/{REBUILT})")
    syn.add_argument("--out", type=Path, default=Path("specbench-synth") / REBUILT,
                     help="output file (default: %(default)s); a sibling evalplus/ link to DATA_ROOT/evalplus is "
                          "created when missing so the folder works with --specbench-data")
    syn.add_argument("--work", type=Path, default=None, help="work file of finished tasks (default: OUT.work.jsonl)")
    syn.add_argument("--max-models", type=int, default=3, metavar="K",
                     help="verified CVTs kept per violation subset (default 3)")
    syn.add_argument("--explore", type=int, default=4, metavar="F",
                     help="the solver proposes up to F*K models per subset for the feasibility filter (default 4)")
    syn.add_argument("--jobs", type=int, default=os.cpu_count() or 1, metavar="N", help="worker processes")
    syn.add_argument("--solver-timeout-ms", type=int, default=2000, metavar="MS", help="per z3 check (default 2000)")
    syn.add_argument("--task-budget", type=float, default=120.0, metavar="S",
                     help="solver seconds per task before remaining subsets are skipped (default 120)")
    syn.add_argument("--call-timeout", type=float, default=0.5, metavar="S",
                     help="seconds per reference call in the feasibility filter (default 0.5)")
    syn.add_argument("--feasibility", choices=("paper", "upstream"), default="paper",
                     help="which candidates become CVTs: 'paper' (ContractEval §3.2, default): the reference "
                          "without contract returns and the contract raises AssertionError; 'upstream': the "
                          "contract raising AssertionError is enough (what upstream's released CVTs satisfy)")
    syn.add_argument("--search-rounds", type=int, default=None, metavar="R",
                     help="counterexample-guided rounds for sections whose candidates all crash the reference "
                          "without contract (default: all steering flavours; 0 turns the loop off)")
    syn.add_argument("--tasks", default=None, metavar="PATTERNS",
                     help="comma-separated task ids or glob patterns, e.g. 'HumanEval/*,Mbpp/2*'")
    syn.add_argument("--resume", action="store_true", help="skip tasks already in the work file")
    syn.add_argument("--translator", default=None, metavar="MODEL",
                     help="LLM fallback for asserts outside the supported subset, e.g. openai:NAME (endpoint: $OPENAI_BASE_URL; see pytest_specbench/benchmarks/contract/synthesis/llm.py)")
    syn.add_argument("--quiet", action="store_true", help="no per-task progress lines")

    met = csub.add_parser("cvt-metrics", help="AVC / TS / coverage of a CVT set (ContractEval §3.4)")
    met.add_argument("file", type=Path, help="a file in the contracteval_rebuilt.jsonl schema (or a synthesis work file)")
    met.add_argument("--ts-mode", choices=TS_MODES, default="jaccard",
                     help="TS reading (see pytest_specbench.benchmarks.contract.cvt_metrics): jaccard (the paper's "
                          "§3.4 formula, default), exact, upstream, all-intended")
    met.add_argument("--candidates", action="store_true",
                     help="for a synthesis work file: score the solver candidates before the feasibility filter")
    met.add_argument("--per-task", action="store_true", help="also print one line per task")
    met.add_argument("--json", action="store_true", help="print JSON")
    build = csub.add_parser("build-suite", help="regenerate the bundled suite benchmarks/contract/ from its definitions")
    build.add_argument("--check", action="store_true", help="do not write; exit 1 if the files are out of date")
    val = csub.add_parser("validate-suite", help="check a suite folder (default: the bundled one) for consistency")
    val.add_argument("--root", type=Path, default=None, help="suite root (default: the bundled benchmarks/contract/)")
    val.add_argument("--timeout", type=float, default=60.0, help="seconds per task process")
    val.add_argument("--per-call-timeout", type=float, default=5.0, help="seconds per call")
    val.add_argument("-v", "--verbose", action="store_true", help="one line per task")
    build.set_defaults(func=cmd_build_suite)
    val.set_defaults(func=cmd_validate_suite)
    syn.set_defaults(func=cmd_synthesize)
    met.set_defaults(func=cmd_cvt_metrics)


# ---------------------------------------------------------------- synthesize
def _data_root(arg: Path | None) -> Path | None:
    if arg is not None:
        if not arg.is_dir():
            raise OptionError("--data-root", f"{arg} is not a folder")
        return arg
    return DEFAULT_DATA_ROOT if DEFAULT_DATA_ROOT.is_dir() else None


def _select(tasks: list, patterns: str | None) -> list:
    if not patterns:
        return tasks
    pats = [p.strip() for p in patterns.split(",") if p.strip()]
    chosen = [t for t in tasks if any(fnmatch.fnmatchcase(t["task_id"], p) for p in pats)]
    if not chosen:
        raise OptionError("--tasks", f"no task matches {patterns!r}")
    return chosen


def cmd_synthesize(args) -> int:
    from .synthesis import pipeline
    from .synthesis.llm import require_translator

    translator = require_translator(args.translator) if args.translator else None
    for opt, val in (("--max-models", args.max_models), ("--jobs", args.jobs), ("--explore", args.explore),
                     ("--solver-timeout-ms", args.solver_timeout_ms)):
        if val < 1:
            raise OptionError(opt, "must be at least 1")
    root = _data_root(args.data_root)
    src = args.input or (root / REBUILT if root else None)
    if src is None:
        raise OptionError("--input", "no input file given and no data root found (use --data-root or --input)")
    tasks = _select(pipeline.read_tasks(src), args.tasks)
    work = args.work or args.out.with_name(args.out.name + ".work.jsonl")
    if args.resume and not work.exists():
        print(f"specbench: no work file {work}; starting from scratch", file=sys.stderr)
    options = pipeline.Options(max_models=args.max_models, solver_timeout_ms=args.solver_timeout_ms,
                               task_budget_s=args.task_budget, call_timeout_s=args.call_timeout,
                               explore=args.explore, feasibility=args.feasibility)
    if args.search_rounds is not None:
        if args.search_rounds < 0:
            raise OptionError("--search-rounds", "must be at least 0")
        options.search_rounds = args.search_rounds
    examples = pipeline.load_examples(root)
    if translator is not None:  # asks the model once, here, for the asserts the translator cannot handle
        options.translations = translator.prepare(tasks, options.bounds)
        asked = sum(len(t["asserts"]) + len(t["failed"]) for t in options.translations.values())
        print(f"translator {translator.spec}: {asked} unsupported asserts asked, "
              f"{sum(len(t['asserts']) for t in options.translations.values())} translated", flush=True)

    def progress(rec, done, total):
        if args.quiet:
            return
        flag = "" if rec.get("status") == "ok" else "  [" + "; ".join(p["kind"] for p in rec["problems"]) + "]"
        print(f"[{done}/{total}] {rec['task_id']}: {len(rec.get('cvts', []))} CVTs "
              f"from {len(rec.get('candidates', []))} candidates, {rec.get('seconds', 0):.1f}s{flag}", flush=True)

    result = pipeline.run(tasks, args.out, work, options, jobs=args.jobs, resume=args.resume,
                          examples=examples, progress=progress)
    _link_evalplus(args.out, root)
    summary = _print_summary(result, args.out, work)
    summary_path = args.out.with_name(args.out.name + ".summary.json")
    summary_path.write_text(json.dumps(summary, indent=1) + "\n", encoding="utf-8")
    print(f"summary: {summary_path}")
    return 0


def _link_evalplus(out: Path, root: Path | None) -> None:
    """Make OUT's data folder usable with --specbench-data (functional tests live in evalplus/)."""
    if root is None or out.parent.name != "contracteval" or out.name != REBUILT.name:
        return
    target = out.parent.parent / "evalplus"
    if target.exists() or target.is_symlink() or not (root / "evalplus").is_dir():
        return
    try:
        target.symlink_to((root / "evalplus").resolve(), target_is_directory=True)
    except OSError:
        print(f"specbench: note: could not link {target} to {root / 'evalplus'}", file=sys.stderr)


def _pct(x) -> str:
    return "n/a" if x is None else f"{100 * x:.2f}%"


def _ts_line(by_mode: dict) -> str:
    return (f"TS {_pct(by_mode['jaccard']['ts'])} (paper, Jaccard) / {_pct(by_mode['exact']['ts'])} (exact) / "
            f"{_pct(by_mode['upstream']['ts'])} (upstream)")


def _print_summary(result, out: Path, work: Path) -> dict:
    from .cvt_metrics import aggregate, task_metrics
    from .synthesis.pipeline import summarize

    records = result.records
    s = summarize(records)
    final = {}
    cand = {}
    for mode in ("jaccard", "exact", "upstream"):
        final[mode] = aggregate(task_metrics(r["task_id"], r.get("cvts", []), r.get("asserts", []), mode)
                                for r in records)
        cand[mode] = aggregate(task_metrics(r["task_id"], r.get("candidates", []), r.get("asserts", []), mode)
                               for r in records)
    print()
    print(f"tasks: {s['tasks']} ({result.resumed} resumed), wall {result.wall_seconds:.1f}s")
    print(f"asserts translated without a model: {s['translated']}/{s['asserts']} "
          f"({_pct(s['translated'] / s['asserts'] if s['asserts'] else None)})")
    for cat, items in sorted(s["unsupported_by_category"].items(), key=lambda kv: -len(kv[1])):
        print(f"  unsupported, {cat}: {len(items)}: {', '.join(items[:6])}{' ...' if len(items) > 6 else ''}")
    print(f"violation subsets: {s['subsets']} (sat {s['sat_subsets']}, unsat {s['unsat_subsets']}, "
          f"solver timeout {s['unknown_subsets']})")
    print(f"candidates (before the feasibility filter): {s['candidates']}; "
          f"AVC {_pct(cand['exact']['avc'])}, {_ts_line(cand)}")
    print(f"CVTs kept: {s['cvts']}; AVC {_pct(final['exact']['avc'])}, {_ts_line(final)}; tasks with a CVT {s['tasks_with_cvt']}/{s['tasks']} "
          f"({_pct(final['exact']['task_coverage'])}); asserts covered {final['exact']['asserts_covered']}/"
          f"{final['exact']['asserts']}")
    cov = s["coverage"]
    print(f"tasks where some candidate passes the feasibility rule: paper (§3.2) {cov['paper']}/{s['tasks']} "
          f"({_pct(cov['paper'] / s['tasks'] if s['tasks'] else None)}), upstream (contract raises "
          f"AssertionError) {cov['upstream']}/{s['tasks']} ({_pct(cov['upstream'] / s['tasks'] if s['tasks'] else None)}); "
          f"CVTs kept under --feasibility={'/'.join(s['feasibility'])}")
    for steer, t in s["search_rounds"].items():
        print(f"  guided round {steer}: {t['tasks']} task(s), {t['candidates']} candidates, {t['kept']} CVTs kept")
    if s["uncovered_by_category"]:
        print("tasks without a CVT, by reason (details in the summary file):")
        for cat, tids in s["uncovered_by_category"].items():
            print(f"  {cat}: {len(tids)}: {', '.join(tids[:8])}{' ...' if len(tids) > 8 else ''}")
    kinds: dict = {}
    for tid, kind, detail in s["problems"]:
        kinds.setdefault(kind, []).append(tid)
    if kinds:
        print("problems by kind (details in the summary file):")
        for kind, tids in sorted(kinds.items(), key=lambda kv: -len(kv[1])):
            print(f"  {kind}: {len(tids)}: {', '.join(tids[:8])}{' ...' if len(tids) > 8 else ''}")
    print(f"output: {out}\nwork file: {work}")
    return {"summary": s, "metrics_final": final, "metrics_candidates": cand,
            "wall_seconds": result.wall_seconds, "resumed": result.resumed}


# ---------------------------------------------------------------- cvt-metrics
def cmd_cvt_metrics(args) -> int:
    from ...data.jsonl import read_jsonl
    from .cvt_metrics import as_dict, set_metrics

    rows = []
    for _, obj in read_jsonl(args.file, required=("task_id",)):
        if "version" in obj and "asserts" in obj:  # a synthesis work record
            obj = {"task_id": obj["task_id"], "contracts": {n: "" for n in obj["asserts"]},
                   "cvts": obj.get("candidates" if args.candidates else "cvts", [])}
        elif args.candidates:
            raise OptionError("--candidates", "only applies to a synthesis work file")
        if "contracts" not in obj:
            raise SpecbenchError(f"{args.file}: task {obj['task_id']} has no 'contracts' field")
        rows.append(obj)
    try:
        per_task, agg = set_metrics(rows, args.ts_mode)
    except ValueError as exc:
        raise SpecbenchError(f"{args.file}: {exc}") from None
    if args.json:
        out = {"aggregate": agg, "ts_mode": args.ts_mode}
        if args.per_task:
            out["tasks"] = [as_dict(t) for t in per_task]
        print(json.dumps(out, indent=1))
        return 0
    if args.per_task:
        for t in per_task:
            print(f"{t.task_id}: {t.n_cvts} CVTs, AVC {_pct(t.avc)}, TS {_pct(t.ts)}, "
                  f"asserts covered {len(t.asserts_covered)}/{t.n_asserts}")
    print(f"file: {args.file}")
    print(f"tasks with at least one CVT: {agg['tasks_with_cvt']}/{agg['tasks']} ({_pct(agg['task_coverage'])})")
    print(f"CVTs: {agg['cvts']}")
    print(f"AVC: {_pct(agg['avc'])}")
    print(f"TS ({args.ts_mode}): {_pct(agg['ts'])}")
    print(f"asserts fired by at least one CVT: {agg['asserts_covered']}/{agg['asserts']} "
          f"({_pct(agg['assert_coverage'])})")
    return 0


# ---------------------------------------------------------------- the bundled suite
def cmd_build_suite(args) -> int:
    from .suite import build
    return build.main(["--check"] if args.check else [])


def cmd_validate_suite(args) -> int:
    from .suite import validate
    argv = ["--timeout", str(args.timeout), "--per-call-timeout", str(args.per_call_timeout)]
    if args.root is not None:
        argv += ["--root", str(args.root)]
    if args.verbose:
        argv.append("-v")
    return validate.main(argv)
