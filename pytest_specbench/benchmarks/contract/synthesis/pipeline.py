"""The CVT synthesis pipeline of ContractEval §3.2, without an LLM.

Per task: translate the asserts (:mod:`.translate`), solve every violation
subset (:mod:`.solve`), run the candidates on the reference in a child process
(:mod:`.feasibility`) and keep the ones that pass the feasibility filter:

* without the contract the reference returns normally, and
* with the contract it raises ``AssertionError``.

Each kept CVT records the intended violated asserts and the asserts that fire
when run alone (``fired_individually``), as upstream does.  Tasks run in
parallel worker processes; each finished task is appended to a JSONL *work
file* at once, so an interrupted run resumes where it stopped (``resume``).
The final output has the schema of ``contracteval_rebuilt.jsonl`` with the
task's non-CVT fields copied from the input.
"""
from __future__ import annotations

import ast
import gzip
import hashlib
import json
import os
import time
import traceback
from concurrent.futures import ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from dataclasses import asdict, dataclass, field
from multiprocessing import get_context
from pathlib import Path
from typing import Any, Callable, Iterable

from .adt import Bounds
from .feasibility import run_calls
from .solve import STEERS, CandidateSearch
from .translate import translate_contract
from .variants import VariantError, build_variants
from .signature import function_params  # noqa: F401  (also used by callers of the pipeline)

CVT_KEYS = ("input", "intended_violated", "fired_individually", "smt_section", "case_index")
WORK_VERSION = 2  # 2: guided search rounds, feasibility mode, coverage and uncovered reasons


@dataclass
class Options:
    """Knobs of one synthesis run (the CLI options map onto these)."""

    max_models: int = 3  # K verified CVTs kept per violation subset
    explore: int = 4  # the solver proposes up to explore*K models per subset
    solver_timeout_ms: int = 2000
    task_budget_s: float = 120.0  # solver time per task before remaining subsets are skipped
    call_timeout_s: float = 0.5  # one reference call
    run_budget_s: float = 120.0  # all reference calls of one task
    max_subset_size: int | None = None
    # "paper" (ContractEval §3.2): kept iff the reference without contract returns and the
    # contract raises AssertionError; "upstream": the contract raising AssertionError is
    # enough (what upstream's released CVTs satisfy, see docs/synthesis.md)
    feasibility: str = "paper"
    # Counterexample-guided rounds after the first enumeration (counts, not time, so that
    # runs are reproducible): all of STEERS for a task without any feasible CVT yet, the
    # first ``search_rounds_covered`` for sections of a task that already has one.
    search_rounds: int = len(STEERS)
    search_rounds_covered: int = 1
    round_models: int = 3  # models asked per section and round
    round_candidates: int = 150  # at most this many new candidates per task and round
    bounds: Bounds = field(default_factory=Bounds)
    translations: dict = field(default_factory=dict)  # --translator: {task_id: ...} from llm.LLMTranslator.prepare


# ---------------------------------------------------------------- one task
def task_digest(row: dict) -> str:
    """Identifies the task content a work record was computed from (for --resume)."""
    h = hashlib.sha256()
    for key in ("task_id", "entry_point", "contract", "reference_with_contracts"):
        h.update(str(row.get(key, "")).encode())
        h.update(b"\0")
    h.update(json.dumps(sorted(row.get("contracts", {}).items())).encode())
    return h.hexdigest()[:16]


def fresh_z3_context() -> None:
    """Give the next task a z3 context of its own.

    z3's models depend on the internal ids of its terms, which depend on every term
    created before in the same context; a worker process that ran other tasks first
    would get other models.  A fresh context per task makes the candidates a function
    of the task alone (same output for any ``--jobs`` and task order).  z3's Python
    API has no public setter for the default context, hence the module attribute;
    ``translate``'s constant terms are rebuilt in it.
    """
    import z3

    from . import translate

    z3.z3._main_ctx = z3.Context()
    translate.TRUE = z3.BoolVal(True)
    translate.FALSE = z3.BoolVal(False)


def synthesize_task(row: dict, options: Options, example: list | None = None) -> dict:
    """Synthesize the CVTs of one task; never raises (problems go in the record)."""
    started = time.monotonic()
    fresh_z3_context()
    tid = row.get("task_id", "?")
    rec: dict[str, Any] = {"version": WORK_VERSION, "task_id": tid, "digest": task_digest(row), "status": "ok",
                           "problems": [], "unsupported": {}, "solver": {}, "candidates": [], "cvts": []}
    try:
        _synthesize(row, options, example, rec)
    except Exception as exc:  # a bug or bad data in one task must not stop the run
        rec["status"] = "error"
        rec["problems"].append({"kind": "internal error", "detail": f"{type(exc).__name__}: {exc}",
                                "trace": traceback.format_exc(limit=4)})
    rec["coverage"] = coverage_flags(rec)
    if not rec["cvts"]:
        rec["uncovered"] = uncovered_reason(rec)
    rec["seconds"] = round(time.monotonic() - started, 3)
    return rec


def coverage_flags(rec: dict) -> dict:
    """Whether some candidate passes each feasibility rule (``paper``/``upstream``, §3.2)."""
    cands = rec.get("candidates", [])
    return {"paper": any(c["full_contract"] == "AssertionError" and c["no_contract"] == "ok" for c in cands),
            "upstream": any(c["full_contract"] == "AssertionError" for c in cands)}


def uncovered_reason(rec: dict) -> dict:
    """Why a task ended without a kept CVT: ``{"category", "detail"}``.

    Categories (most specific first): a bad-input problem of the task; no assert
    in the supported subset; no violation satisfiable in the bounded model (or the
    solver/time budget ran out); the reference without contract times out or
    raises on every candidate -- "every candidate" means every one the bounded,
    steered search proposed, not a proof that no feasible input exists.
    """
    problems = rec.get("problems", [])
    unsupported = sorted(rec.get("unsupported", {}))
    if rec.get("status") == "error" and problems:
        return {"category": problems[0]["kind"], "detail": problems[0]["detail"]}
    if rec.get("asserts") and len(unsupported) == len(rec["asserts"]):
        return {"category": "no assert translated",
                "detail": "; ".join(f"{n}: {rec['unsupported'][n]['category']}" for n in unsupported)}
    cands = rec.get("candidates", [])
    kinds = {p["kind"] for p in problems}
    if not cands:
        for kind in ("solver timeout", "task time budget", "reference run budget", "reference does not load"):
            if kind in kinds:
                return {"category": kind, "detail": next(p["detail"] for p in problems if p["kind"] == kind)}
        return {"category": "no violation satisfiable in the bounded model",
                "detail": f"{rec.get('solver', {}).get('unsat', 0)} violation subset(s) UNSAT"}
    outcomes: dict = {}
    for c in cands:
        if c["full_contract"] == "AssertionError":
            outcomes[c["no_contract"]] = outcomes.get(c["no_contract"], 0) + 1
    detail = ", ".join(f"{k} {v}" for k, v in sorted(outcomes.items(), key=lambda kv: (-kv[1], kv[0])))
    valid = [p["kind"] for p in problems if p["kind"] in ("reference fails on a valid input",
                                                           "contract rejects a valid input")]
    if valid:
        detail += f"; {valid[0]} (EvalPlus input, e.g. tuples read back from JSON as lists)"
    if outcomes and set(outcomes) <= {"timeout", "killed"}:
        category = "reference times out on every candidate"
    elif outcomes:
        category = "reference raises on every candidate"
    else:
        category = "no candidate rejected by the contract"
    if unsupported:
        category += "; unsupported asserts not searched"
        detail += "; not searched: " + ", ".join(unsupported)
    return {"category": category, "detail": f"{len(cands)} candidate(s): {detail}"}


def _synthesize(row: dict, options: Options, example: list | None, rec: dict) -> None:
    names = list(row.get("contracts") or {})
    entry = row.get("entry_point", "")
    reference = row.get("reference_with_contracts", "")
    contract = row.get("contract", "")
    rec["asserts"] = names
    if not names:
        return _fail(rec, "no contracts", "the task lists no asserts")
    try:
        params = function_params(reference, entry)
    except SyntaxError as exc:
        return _fail(rec, "reference does not parse", f"{exc.msg} (line {exc.lineno})")
    except ValueError as exc:
        return _fail(rec, "bad reference", str(exc))
    try:
        model = translate_contract(contract, params, names, options.bounds,
                                   [row["contracts"][n] for n in names])
    except SyntaxError as exc:
        return _fail(rec, "contract does not parse", f"{exc.msg} (line {exc.lineno})")
    except ValueError as exc:
        return _fail(rec, "contract/assert mismatch", str(exc))
    if options.translations.get(row.get("task_id")):  # LLM fallback (synthesis/llm.py)
        from .llm import apply_translations
        model, rec["llm_translated"] = apply_translations(row, params, names, options.bounds, model,
                                                          options.translations[row.get("task_id")])
    for a in model.asserts:
        if not a.supported:
            rec["unsupported"][a.name] = {"category": a.error.category, "detail": a.error.detail}
    try:
        variants = build_variants(reference, contract, entry, len(names))
    except VariantError as exc:
        return _fail(rec, "bad reference", str(exc))

    examples = dict(zip(params, example)) if example and len(example) == len(params) else None
    deadline = time.monotonic() + options.task_budget_s
    search = CandidateSearch(model, options.solver_timeout_ms, examples)
    sections = search.sections(options.max_subset_size)
    cands = []
    for section in sections:
        if time.monotonic() > deadline:
            search.stats.skipped += 1
            continue
        cands.extend(search.first_models(section, options.max_models * max(1, options.explore)))

    order = ["full"] + names + ["no_contract"]
    run_deadline = time.monotonic() + options.run_budget_s

    def run(texts: list, run_all=()) -> list:
        return run_calls(variants.sources, entry, texts, order, per_call_timeout=options.call_timeout_s,
                         total_timeout=max(0.0, run_deadline - time.monotonic()),
                         run_last_only_if=("full", "AssertionError"), run_all=run_all)

    probes = []
    if examples is not None:
        probes.append(json.dumps(examples))
    results = run(probes + [json.dumps(c.input) for c in cands], range(len(probes)))
    if probes:
        probe = results[0]
        if probe is None or probe.get("no_contract") != "ok":
            rec["problems"].append({"kind": "reference fails on a valid input",
                                    "detail": f"EvalPlus input {examples!r}: {probe and probe.get('no_contract')}"})
        elif probe.get("full") != "passed":
            rec["problems"].append({"kind": "contract rejects a valid input",
                                    "detail": f"EvalPlus input: full contract gave {probe.get('full')}"})
        results = results[1:]
    loads = {v for r in results if r for v in r.values() if isinstance(v, str) and v.startswith("load-error")}
    if loads:
        rec["problems"].append({"kind": "reference does not load", "detail": sorted(loads)[0]})

    by_label = {s.label: s for s in sections}
    kept_per_section: dict = {}
    unchecked = 0

    def absorb(batch: list, batch_results: list) -> int:
        """Record the outcomes of one batch of candidates; keep the feasible ones (§3.2)."""
        nonlocal unchecked
        kept_now = 0
        for cand, res in zip(batch, batch_results):
            if res is None:
                unchecked += 1
                continue
            fired = [n for n in names if res.get(n) == "AssertionError"]
            entry_rec = {"input": cand.input, "intended_violated": cand.intended, "fired_individually": fired,
                         "smt_section": cand.smt_section, "case_index": cand.case_index,
                         "full_contract": res.get("full"), "no_contract": res.get("no_contract")}
            rec["candidates"].append(entry_rec)
            rejected = res.get("full") == "AssertionError"
            if rejected and res.get("no_contract") != "ok":
                by_label[cand.smt_section].crashed.append(cand.input)
            if rejected and (res.get("no_contract") == "ok" or options.feasibility == "upstream"):
                # the first K feasible models of each section, numbered 1..K like upstream's cases
                kept = kept_per_section.get(cand.smt_section, 0)
                if kept < options.max_models:
                    kept_per_section[cand.smt_section] = kept + 1
                    cvt = {k: entry_rec[k] for k in CVT_KEYS}
                    cvt["case_index"] = kept + 1
                    rec["cvts"].append(cvt)
                    kept_now += 1
        return kept_now

    absorb(cands, results)
    rounds = []
    # Counterexample-guided rounds: sections whose models crashed the reference without
    # contract are asked again, steered toward values the reference tolerates and away
    # from the crashing shapes.  Bounded by counts (not time) so runs are reproducible.
    for number, steer in enumerate(STEERS[: options.search_rounds if options.feasibility == "paper" else 0]):
        todo = [s for s in sections if s.status == "sat" and s.crashed and not kept_per_section.get(s.label)]
        if rec["cvts"] and number >= options.search_rounds_covered:
            break
        if not todo or time.monotonic() > deadline or time.monotonic() > run_deadline:
            break
        batch = []
        for section in todo:
            if len(batch) >= options.round_candidates:
                break
            batch.extend(search.more_models(section, options.round_models, steer))
        kept_now = absorb(batch, run([json.dumps(c.input) for c in batch])) if batch else 0
        rounds.append({"steer": steer[0], "sections": len(todo), "candidates": len(batch), "kept": kept_now})
    rec["search"] = {"feasibility": options.feasibility, "rounds": rounds}
    stats = search.stats
    rec["solver"] = asdict(stats)
    if stats.unknown:
        rec["problems"].append({"kind": "solver timeout",
                                "detail": f"{stats.unknown} violation subset(s) undecided within "
                                          f"{options.solver_timeout_ms} ms"})
    if stats.skipped:
        rec["problems"].append({"kind": "task time budget",
                                "detail": f"{stats.skipped} subset(s) skipped after {options.task_budget_s} s"})
    if unchecked:
        rec["problems"].append({"kind": "reference run budget",
                                "detail": f"{unchecked} candidate(s) not run within {options.run_budget_s} s"})
    if rec["candidates"] and not rec["cvts"]:
        rejected_by_body = sum(1 for c in rec["candidates"]
                               if c["full_contract"] == "AssertionError" and c["no_contract"] != "ok")
        rec["problems"].append({"kind": "no feasible CVT",
                                "detail": f"{len(rec['candidates'])} candidate(s); {rejected_by_body} rejected "
                                          f"because the reference without contract raises on them"})


def _fail(rec: dict, kind: str, detail: str) -> None:
    rec["status"] = "error"
    rec["problems"].append({"kind": kind, "detail": detail})


# ---------------------------------------------------------------- data
def read_tasks(path: Path) -> list:
    from ....data.jsonl import read_jsonl

    return [obj for _, obj in read_jsonl(Path(path), required=("task_id",))]


def load_examples(data_root: Path | None) -> dict:
    """First EvalPlus ``base_input`` per task id (valid inputs used as solver pins)."""
    out: dict = {}
    if data_root is None:
        return out
    folder = Path(data_root) / "evalplus"
    if not folder.is_dir():
        return out
    for path in sorted(folder.glob("*.jsonl*")):
        opener = gzip.open if path.suffix == ".gz" else open
        try:
            with opener(path, "rt", encoding="utf-8") as fh:
                for line in fh:
                    if not line.strip():
                        continue
                    obj = json.loads(line)
                    inputs = obj.get("base_input") or []
                    if inputs and isinstance(inputs[0], list):
                        out.setdefault(obj.get("task_id"), inputs[0])
        except (OSError, ValueError):
            continue
    return out


def read_work(path: Path) -> dict:
    """Finished task records of an earlier run (a torn last line is ignored)."""
    done: dict = {}
    if not path.exists():
        return done
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            try:
                rec = json.loads(line)
            except json.JSONDecodeError:
                continue  # interrupted mid-write
            if isinstance(rec, dict) and rec.get("version") == WORK_VERSION and "task_id" in rec:
                done[rec["task_id"]] = rec
    return done


def output_row(row: dict, rec: dict) -> dict:
    """The input task with its ``cvts`` replaced by the synthesized ones (same schema)."""
    out = {k: v for k, v in row.items() if k != "cvts"}
    out["cvts"] = rec.get("cvts", [])
    return out


# ---------------------------------------------------------------- the run
@dataclass
class RunResult:
    records: list  # work records in input order
    wall_seconds: float
    resumed: int


def _worker(row: dict, options: Options, example):
    return synthesize_task(row, options, example)


def run(tasks: list, out_path: Path, work_path: Path, options: Options, *, jobs: int = 2, resume: bool = False,
        examples: dict | None = None, progress: Callable[[dict, int, int], None] | None = None) -> RunResult:
    """Synthesize all ``tasks``; write ``out_path`` (schema of contracteval_rebuilt.jsonl)."""
    started = time.monotonic()
    examples = examples or {}
    work_path.parent.mkdir(parents=True, exist_ok=True)
    done = read_work(work_path) if resume else {}
    digests = {t["task_id"]: task_digest(t) for t in tasks}
    # a record counts only for the same task content and the same feasibility rule
    done = {tid: r for tid, r in done.items() if digests.get(tid) == r.get("digest")
            and r.get("search", {}).get("feasibility", options.feasibility) == options.feasibility}
    if not resume:
        work_path.write_text("", encoding="utf-8")
    todo = [t for t in tasks if t["task_id"] not in done]
    # large tasks first: better load balance across workers
    todo.sort(key=lambda t: -len(t.get("contracts") or {}))
    resumed = len(done)
    with open(work_path, "a", encoding="utf-8") as work:
        def finish(rec):
            done[rec["task_id"]] = rec
            work.write(json.dumps(rec) + "\n")
            work.flush()
            os.fsync(work.fileno())
            if progress:
                progress(rec, len(done), len(tasks))

        attempts = 0
        while todo and attempts < 3:
            attempts += 1
            try:
                if jobs <= 1:
                    for t in todo:
                        finish(_worker(t, options, examples.get(t["task_id"])))
                else:
                    with ProcessPoolExecutor(max_workers=jobs, mp_context=get_context("spawn")) as pool:
                        futs = {pool.submit(_worker, t, options, examples.get(t["task_id"])): t for t in todo}
                        for fut in as_completed(futs):
                            finish(fut.result())
            except BrokenProcessPool:
                pass  # a worker died (e.g. out of memory): retry what is left
            todo = [t for t in todo if t["task_id"] not in done]
        for t in todo:  # gave up after repeated worker crashes
            rec = {"version": WORK_VERSION, "task_id": t["task_id"], "digest": digests[t["task_id"]],
                   "status": "error", "problems": [{"kind": "worker crashed", "detail": "worker process died"}],
                   "unsupported": {}, "solver": {}, "candidates": [], "cvts": [], "asserts": list(t.get("contracts", {}))}
            finish(rec)
    records = [done[t["task_id"]] for t in tasks]
    tmp = out_path.with_name(out_path.name + ".tmp")
    out_path.parent.mkdir(parents=True, exist_ok=True)
    with open(tmp, "w", encoding="utf-8") as fh:
        for t, rec in zip(tasks, records):
            fh.write(json.dumps(output_row(t, rec)) + "\n")
    os.replace(tmp, out_path)
    return RunResult(records, time.monotonic() - started, resumed)


def summarize(records: Iterable[dict]) -> dict:
    """Translation coverage, solver and filter statistics, and per-task problems."""
    records = list(records)
    total_asserts = sum(len(r.get("asserts", [])) for r in records)
    unsupported = [(r["task_id"], name, info) for r in records for name, info in r.get("unsupported", {}).items()]
    by_category: dict = {}
    for tid, name, info in unsupported:
        by_category.setdefault(info["category"], []).append(f"{tid} {name}")
    problems = [(r["task_id"], p["kind"], p["detail"]) for r in records for p in r.get("problems", [])]
    translated = total_asserts - len(unsupported) - sum(
        len(r.get("asserts", [])) for r in records if r.get("status") == "error" and not r.get("unsupported")
        and not r.get("solver"))
    return {
        "tasks": len(records),
        "asserts": total_asserts,
        "translated": translated,
        "unsupported_by_category": by_category,
        "tasks_with_cvt": sum(1 for r in records if r.get("cvts")),
        "cvts": sum(len(r.get("cvts", [])) for r in records),
        "candidates": sum(len(r.get("candidates", [])) for r in records),
        "subsets": sum(r.get("solver", {}).get("subsets", 0) for r in records),
        "sat_subsets": sum(r.get("solver", {}).get("sat", 0) for r in records),
        "unsat_subsets": sum(r.get("solver", {}).get("unsat", 0) for r in records),
        "unknown_subsets": sum(r.get("solver", {}).get("unknown", 0) for r in records),
        "problems": problems,
        "errors": [r["task_id"] for r in records if r.get("status") == "error"],
        # tasks where some candidate passes each feasibility rule (the kept CVTs follow
        # the run's --feasibility; under "upstream" no guided rounds run, so the
        # "paper" count there is lower than a paper run's)
        "feasibility": sorted({r.get("search", {}).get("feasibility", "paper") for r in records}),
        "coverage": {mode: sum(1 for r in records if (r.get("coverage") or coverage_flags(r))[mode])
                     for mode in ("paper", "upstream")},
        "uncovered": {r["task_id"]: r.get("uncovered") or uncovered_reason(r) for r in records if not r.get("cvts")},
        "uncovered_by_category": uncovered_by_category(records),
        "search_rounds": _round_totals(records),
    }


def uncovered_by_category(records: Iterable[dict]) -> dict:
    out: dict = {}
    for r in records:
        if not r.get("cvts"):
            reason = r.get("uncovered") or uncovered_reason(r)
            out.setdefault(reason["category"], []).append(r["task_id"])
    return dict(sorted(out.items(), key=lambda kv: (-len(kv[1]), kv[0])))


def _round_totals(records: Iterable[dict]) -> dict:
    """Candidates proposed and CVTs kept per guided round (over all tasks)."""
    out: dict = {}
    for r in records:
        for rd in r.get("search", {}).get("rounds", []):
            t = out.setdefault(rd["steer"], {"tasks": 0, "candidates": 0, "kept": 0})
            t["tasks"] += 1
            t["candidates"] += rd["candidates"]
            t["kept"] += rd["kept"]
    return out
