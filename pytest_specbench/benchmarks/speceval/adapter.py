"""The ``speceval`` adapter: SpecEval's four JML tasks under the five
perturbations, on SpecGenBench (``--specbench-data=DIR`` with
``DIR/specgenbench/{oracle,common,daikon}`` or ``DIR/{oracle,...}``) or the
bundled suite ``benchmarks/speceval/`` (same layout).

One task per (program, task kind, perturbation category); its id
``Program/kind/category`` (``BinarySearch/infilling/name-random``) and its one
check, named after the kind, make the item
``specbench::speceval::BinarySearch/infilling/name-random::0::infilling``.
Tasks are built from ``--speceval-seed`` (§3.2) and recorded in the task data.
"""
from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any, Mapping, Sequence

from ...data.bundled import bundled_suite
from ...errors import DataError, InfrastructureError
from ...jml import LexicalError, normalise_source
from ..base import CheckResult, Prompt, Task, TaskSet
from . import metrics as M
from . import prompts, validation
from .jmlspec import has_syntax_error, normalize, spec_blocks, strip_jml
from .options import OPTIONS, parse_perturbations, parse_tasks  # noqa: F401 - parse_* are imported from here too
from .tasks import PLACEHOLDER, Instance, build, instantiate, load_programs


def _option(settings: Any, name: str) -> Any:
    opt = next(o for o in OPTIONS if o.name == name)
    value = settings.option(name)
    if value is None or value == "":
        value = opt.default
    if opt.parse is not None and (isinstance(value, str) or name != "speceval_seed"):
        if not (name == "speceval_seed" and isinstance(value, int)):
            value = opt.parse(value)
    return value


def bundled_root() -> Path:
    return bundled_suite("speceval")


def data_folder(data_root: Path | None) -> Path:
    if data_root is None:
        return bundled_root()
    for cand in (data_root / "specgenbench", data_root):
        if (cand / "oracle").is_dir():
            return cand
    raise DataError(data_root, None, "no SpecGenBench data here: expected specgenbench/oracle/<Name>/<Name>.java")


@lru_cache(maxsize=4096)
def _instance(source: str, plan_json: str, category: str, seed: int) -> Instance:
    return instantiate(source, json.loads(plan_json), category, seed)


class SpecEval:
    name = "speceval"
    # 2: branch coverage in the details; 3: issue 25 (JML checker v4, vacuity, one-expression fills);
    # 4: a dropped judgement keeps the model's answer (judgement_acc_all, issue 49); 5: issue 42 (JML
    # checker v5: answers normalised, purity observed, ranges that cannot wrap, one guard per sample)
    version = "5"
    options = OPTIONS


    # --- tasks ---------------------------------------------------------------
    def load(self, data_root: Path | None, settings: Any) -> TaskSet:
        folder = data_folder(data_root)
        kinds = _option(settings, "speceval_task")
        categories = _option(settings, "speceval_perturbation")
        seed = _option(settings, "speceval_seed")
        tasks, files, warnings = [], [], []
        for program in load_programs(folder):
            files.append(program.oracle)
            source = program.source
            if has_syntax_error(source):
                warnings.append(f"{program.oracle}: not parseable as Java; skipped")
                continue
            if not any(b.clauses for b in spec_blocks(source)):
                warnings.append(f"{program.oracle}: no JML specification (no ground truth); skipped")
                continue
            for kind in kinds:
                plan = build(program.name, source, kind, seed)
                if plan is None:
                    warnings.append(f"{program.oracle}: nothing to build a {kind} task from; skipped")
                    continue
                for cat in categories:
                    data = {"program": program.name, "kind": kind, "category": cat, "seed": seed, "plan": plan,
                            "tests": str(program.daikon) if program.daikon else None}
                    tasks.append(Task(f"{program.name}/{kind}/{cat}", data, program.oracle, 0, program.name))
        if not tasks:
            raise DataError(folder, None, "no SpecEval task could be built from these programs")
        return TaskSet(tuple(tasks), tuple(files), bundled=data_root is None, warnings=tuple(warnings))

    def instance(self, task: Task) -> Instance:
        d = task.data
        return _instance(Path(task.source).read_text(encoding="utf-8"), json.dumps(d["plan"], sort_keys=True),
                         d["category"], d["seed"])

    def dispatch_cost(self, task: Task, check: str, ctx: Any) -> float:
        """Predicted item cost (relative): Generation runs the JML checker in
        rounds, a Judgement mutant and a non-matching infill once, Selection never."""
        kind = task.data["kind"]
        if kind == "generation":
            return 10.0
        if kind == "judgement":
            return 3.0 if not task.data["plan"].get("label", True) else 0.1
        return 1.0 if kind == "infilling" else 0.1

    def checks_for(self, task: Task) -> Sequence[str]:
        return (task.data["kind"],)

    def skip_reason(self, check: str, task: Task, ctx: Any = None) -> str | None:
        requested = _option(ctx.settings, "speceval_validation")
        mode = validation.mode(requested)
        if mode == "unavailable":
            return ("--speceval-validation=dynamic needs the JML runtime checker "
                    "(pytest_specbench.jml), which is not installed in this version")
        if mode == "dynamic" and check in ("judgement", "infilling", "generation"):
            missing = validation.jvm_missing(ctx)
            if missing:
                return missing + " (or run with --speceval-validation=syntactic)"
        if mode == "dynamic" and _option(ctx.settings, "speceval_oracle_refuted") == "skip":
            gt = self.ground_truth(task, ctx)
            if gt is not None and gt.fails:
                return gt.reason(task.data["program"]) + "; excluded (--speceval-oracle-refuted=keep scores it)"
        return None

    def ground_truth(self, task: Task, ctx: Any) -> "validation.GroundTruth | None":
        """The program's ground truth (the original oracle, whatever the task's
        category: a perturbation that breaks it is our bug and must stay visible)
        checked once on its tests; None when the harness could not run it (the
        items then run and report that fault themselves), or, while the xdist
        controller plans (``ctx.planning``), when it is not cached yet: the worker
        that runs one of the program's items checks it then (#28)."""
        try:
            return validation.ground_truth(Path(task.source).read_text(encoding="utf-8"), _tests(task), ctx,
                                           cached_only=ctx.planning)
        except InfrastructureError:
            return None

    # --- prompts and answers -------------------------------------------------
    def prompt(self, task: Task, settings: Any) -> Prompt:
        inst = self.instance(task)
        return prompts.build_prompt(task.data["kind"], inst.program, inst.data)

    def reference(self, task: Task, check: str) -> str:
        d = self.instance(task).data
        kind = task.data["kind"]
        if kind == "judgement":
            return "Answer: " + ("correct" if d["label"] else "incorrect")
        if kind == "selection":
            return "Answer: " + "ABCD"[d["answer"]]
        if kind == "infilling":
            return f"```jml\n{d['ground_truth']}\n```"
        return f"```java\n{d['ground_truth']}\n```"

    # --- checks ----------------------------------------------------------------
    def run_check(self, check: str, task: Task, sample: Any, ctx: Any) -> CheckResult:
        text = sample.text if hasattr(sample, "text") else str(sample)
        inst = self.instance(task)
        d = inst.data
        base = {"program": task.data["program"], "category": task.data["category"], "applied": d["applied"]}
        requested = _option(ctx.settings, "speceval_validation")
        dynamic = validation.mode(requested) == "dynamic"
        if dynamic:
            gt = self.ground_truth(task, ctx)
            if gt is not None and gt.checkable:
                # the program's tests as the ground truth sees them (its domain): the per-program
                # figure of the report, the same whatever the model answers
                base["program_tests"] = _test_strength(gt.tests, gt.branch_coverage)
        kind = task.data["kind"]
        # One guard around the whole per-sample path (issue 42): whatever the answer makes fail
        # (a lone surrogate, 4,000 nested parentheses, a name the checker refuses) is F with one
        # line; only the harness's own faults are E.
        try:
            return self._check_answer(kind, task, inst, text, base, dynamic, ctx)
        except (InfrastructureError, OSError, MemoryError):
            raise
        except Exception as exc:  # noqa: BLE001 - the sample's fault, whatever it is
            what = " ".join(str(exc).split())[:200]
            scores = {"precision": 0.0, "recall": 0.0, "all_hold": False} if kind == "generation" else {}
            return CheckResult(False, {**base, **scores, "passed": False, "sample_fault": type(exc).__name__},
                               f"the answer could not be checked: {type(exc).__name__}: {what}"[:300])

    def _check_answer(self, kind: str, task: Task, inst: Instance, text: str, base: dict, dynamic: bool,
                      ctx: Any) -> CheckResult:
        d = inst.data
        if kind == "judgement":
            details = {**base, "label": d["label"], "validation": "syntactic"}
            verdict = prompts.parse_judgement(text)
            details["answer"] = verdict
            if dynamic and not d["label"]:
                # §3.2.1 / issue: a mutant counts as incorrect only if the tests refute it
                refuted, check = self._mutant_refuted(task, inst, ctx)
                details.update({"validation": "dynamic" if refuted is not None else "unchecked",
                                "checker": check.summary, **_test_strength(check.tests, check.branch_coverage)})
                # a mutant the checker cannot run (unsupported construct) stays incorrect, as built
                if refuted is False:
                    # dropped from judgement_acc; judgement_acc_all (the paper's every candidate,
                    # metrics.py) scores the answer against the label as built
                    return CheckResult(True, {**details, "dropped": True, "passed": None},
                                       "mutant not refuted by the tests: dropped from the metrics")
            if verdict is None:
                return CheckResult(False, {**details, "passed": False}, "no 'correct'/'incorrect' verdict in the answer")
            ok = verdict == d["label"]
            return CheckResult(ok, {**details, "passed": ok},
                               "" if ok else f"answered {'correct' if verdict else 'incorrect'} for "
                                             f"{'a correct' if d['label'] else 'an incorrect'} specification")
        if kind == "selection":
            pick = prompts.parse_selection(text, d["candidates"])
            details = {**base, "answer": pick, "expected": d["answer"]}
            if pick is None:
                return CheckResult(False, {**details, "passed": False}, "no candidate letter (A-D) in the answer")
            ok = pick == d["answer"]
            return CheckResult(ok, {**details, "passed": ok},
                               "" if ok else f"chose {'ABCD'[pick]}, the most appropriate is {'ABCD'[d['answer']]}")
        if kind == "infilling":
            return self._infilling(inst, text, base, dynamic, ctx, task)
        return self._generation(inst, text, base, dynamic, ctx, task)

    def _mutant_refuted(self, task: Task, inst: Instance, ctx: Any) -> tuple[bool | None, validation.SpecCheck]:
        key = (task.task_id, json.dumps(task.data["plan"], sort_keys=True))
        if key not in _MUTANT_VERDICTS:
            check = validation.spec_holds(inst.program, _tests(task), ctx, _admitted(self, task, ctx))
            _MUTANT_VERDICTS[key] = (None if check.holds is None else check.holds is False, check)
        return _MUTANT_VERDICTS[key]

    def _infilling(self, inst: Instance, text: str, base: dict, dynamic: bool, ctx: Any, task: Task) -> CheckResult:
        d = inst.data
        fill = prompts.parse_infilling(text, d["masked"])
        details = {**base, "fill": fill, "expected": d["answer"], "component": d["component"]}
        if fill is None:
            return CheckResult(False, {**details, "passed": False}, "no filled specification in the answer")
        try:
            fill = normalise_source(fill)
        except LexicalError as exc:
            return CheckResult(False, {**base, "fill": None, "expected": d["answer"], "component": d["component"],
                                       "passed": False}, f"the fill is refused: {exc}"[:300])
        why, bare = _one_expression(fill)
        if why:
            # issue 25: a fill is one JML expression, nothing else (no '; requires false', no comment end)
            return CheckResult(False, {**details, "passed": False},
                               f"the fill is not one expression: {why}"[:300])
        filled = d["masked"].replace(PLACEHOLDER, fill)
        ok = normalize(filled) == normalize(d["ground_truth"])
        details["match"] = "syntactic" if ok else None
        if not ok and dynamic:
            # in parentheses (unless a bare name, e.g. a method's): the fill stays one expression at
            # its place whatever the operators around it
            program = inst.program.replace(PLACEHOLDER, fill if bare else f"({fill})", 1)
            check = validation.spec_holds(program, _tests(task), ctx, _admitted(self, task, ctx))
            ok = check.holds is True
            details.update({"match": "dynamic" if ok else None, "checker": check.summary,
                            **_test_strength(check.tests, check.branch_coverage)})
        return CheckResult(ok, {**details, "passed": ok}, "" if ok else f"filled {fill!r}: does not hold")

    def _generation(self, inst: Instance, text: str, base: dict, dynamic: bool, ctx: Any, task: Task) -> CheckResult:
        """Precision(P), Recall(P) (§3.2.4).  A ground-truth clause is *among* the
        generated ones when a generated clause at the same place (method, or
        loop by its ordinal in the method) with the same keyword is equal to it
        after normalisation (whitespace and outer parentheses removed).
        A generated clause holds: by the JML checker on the tests (dynamic), or
        (syntactic fallback) when it is such a ground-truth clause."""
        gt_blocks = spec_blocks(inst.data["ground_truth"])
        gt = {(b.location, c.keyword, normalize(c.expr)) for b in gt_blocks for c in b.clauses}
        program = prompts.parse_generation(text)
        details = {**base, "ground_truth_clauses": len(gt)}
        if program is None:
            return CheckResult(False, {**details, "precision": 0.0, "recall": 0.0, "all_hold": False},
                               "no Java program in the answer")
        try:
            # what every reader below (the clause reader, the checker, javac) gets: one text (issue 42)
            program = normalise_source(program)
        except LexicalError as exc:
            return CheckResult(False, {**details, "precision": 0.0, "recall": 0.0, "all_hold": False},
                               f"the answer is refused: {exc}"[:300])
        if has_syntax_error(program):
            return CheckResult(False, {**details, "precision": 0.0, "recall": 0.0, "all_hold": False},
                               "the answer is not parseable Java")
        blocks = spec_blocks(program)
        generated = [(b.location, c.keyword, normalize(c.expr)) for b in blocks for c in b.clauses]
        code_changed = _squash(strip_jml(program)) != _squash(inst.program)
        holds: list[bool] = [g in gt for g in generated]
        mode = "syntactic"
        if dynamic and not code_changed:
            verdicts = validation.clause_verdicts(program, _tests(task), ctx, _admitted(self, task, ctx))
            # a clause the checker could not decide (unsupported construct, a
            # crash no clause is named for) holds only if it is a ground-truth clause
            # a vacuous spec (no test call in its domain) decides nothing: its clauses do not hold
            holds = [v is True or (v is None and g in gt and not verdicts.vacuous)
                     for v, g in zip(verdicts.clauses, generated)]
            mode = "dynamic"
            details.update({"checker": verdicts.message, "undecided": sum(v is None for v in verdicts.clauses),
                            "vacuous": verdicts.vacuous,
                            **_test_strength(verdicts.tests, verdicts.branch_coverage)})
        precision = sum(holds) / len(generated) if generated else 0.0
        recall = len(gt & set(generated)) / len(gt) if gt else 0.0
        all_hold = bool(generated) and all(holds)
        details.update({"generated_clauses": len(generated), "holding": sum(holds), "precision": precision,
                        "recall": recall, "all_hold": all_hold, "code_changed": code_changed, "validation": mode})
        ok = precision > 0
        return CheckResult(ok, details, "" if ok else (
            "no specification generated" if not generated else "none of the generated specifications holds"))

    # --- metrics ---------------------------------------------------------------
    def aggregate(self, results: Mapping[str, Sequence[Mapping[str, Any]]], tasks: Mapping[str, Task],
                  settings: Any) -> dict[str, Any]:
        entries = _entries(results, tasks)
        cats = _option(settings, "speceval_perturbation")
        kinds = _option(settings, "speceval_task")
        out = M.compute(entries, cats, kinds)
        if all(k in kinds for k in M.TASK_ORDER):
            out["pcs_by_program"] = M.pcs_by_program(entries, "original")
        out.update(M.test_strength(entries))
        return out

    def metric_names(self, settings: Any) -> Sequence[str]:
        cats = _option(settings, "speceval_perturbation")
        kinds = _option(settings, "speceval_task")
        dynamic = validation.mode(_option(settings, "speceval_validation")) == "dynamic"
        names = []
        for cat in cats:
            for k in ("judgement", "selection", "infilling"):
                if k in kinds:
                    names.append(f"{k}_acc/{cat}")
            if "judgement" in kinds and dynamic:  # only dynamic validation drops mutants
                names.append(f"judgement_acc_all/{cat}")
            if "infilling" in kinds:
                names.append(f"infilling_pass/{cat}")
            if "generation" in kinds:
                names += [f"generation_avg_precision/{cat}", f"generation_avg_recall/{cat}",
                          f"generation_pass/{cat}"]
            if all(k in kinds for k in M.TASK_ORDER):
                names.append(f"pcs/{cat}")
            if cat != "original":
                names += [f"jaccard_{k}/{cat}" for k in ("judgement", "selection", "infilling") if k in kinds]
                if "generation" in kinds:
                    names += [f"variance_precision/{cat}", f"variance_recall/{cat}"]
        if dynamic:
            names += ["test_branch_coverage_mean", "weak_test_programs"]
        return names

    def figures(self, metrics: Mapping[str, Any], settings: Any) -> list[dict]:
        """Table 1 (the four tasks' scores and PCS by category) and Table 2 (robustness by
        perturbation) as grouped bars, shares drawn as percentages; the tests' branch
        coverage and PCS(P) per program as histograms over [0, 1]."""
        cats = [c for c in _option(settings, "speceval_perturbation")]
        figs = []
        table1 = [(k, label) for k, label in (("judgement_acc", "Judgement"), ("selection_acc", "Selection"),
                                               ("infilling_acc", "Infilling"), ("generation_avg_precision", "AvgPrecision"),
                                               ("generation_avg_recall", "AvgRecall"), ("pcs", "PCS"))
                  if any(metrics.get(f"{k}/{c}") is not None for c in cats)]
        if table1:
            figs.append({"title": "SpecEval: scores by category (Table 1)", "kind": "bar", "percent": True,
                         "x": [label for _, label in table1],
                         "series": {c: [metrics.get(f"{k}/{c}") for k, _ in table1] for c in cats},
                         "xlabel": "task (n/a drawn as 0)", "ylabel": "score"})
        pert = [c for c in cats if c != "original"]
        for prefix, kinds, title, percent in (
                ("jaccard", ("judgement", "selection", "infilling"), "Jaccard distance J by perturbation (Table 2)", True),
                ("variance", ("precision", "recall"), "average variance v by perturbation (Table 2)", False)):
            shown = [k for k in kinds if any(metrics.get(f"{prefix}_{k}/{c}") is not None for c in pert)]
            if pert and shown:
                figs.append({"title": f"SpecEval: {title}", "kind": "bar", "percent": percent,
                             "x": shown, "series": {c: [metrics.get(f"{prefix}_{k}/{c}") for k in shown] for c in pert},
                             "xlabel": f"{prefix}_* (n/a drawn as 0)", "ylabel": "J" if percent else "v"})
        coverage = metrics.get("test_branch_coverage_by_program") or {}
        if coverage:
            figs.append({"title": "SpecEval: branch coverage of each program's tests (SpecEval: 95.5% on average)",
                         "kind": "hist", "y": list(coverage.values()), "range": [0, 1], "bins": 10, "percent": True,
                         "xlabel": "branch coverage", "ylabel": "programs"})
        per_program = metrics.get("pcs_by_program") or {}
        if per_program:
            figs.append({"title": "SpecEval: PCS(P) per program, original (§3.4.2)", "kind": "hist",
                         "y": list(per_program.values()), "range": [0, 1], "bins": 8, "percent": True,
                         "xlabel": "PCS(P)", "ylabel": "programs"})
        return figs

    def metric_notes(self, metrics: Mapping[str, Any], settings: Any) -> dict[str, str]:
        """What n/a means for each breakdown (its prefix): the task kind was not evaluated in that category."""
        absent = ("no {what} of that category was evaluated (the perturbation does not apply to the "
                  "programs selected, or -k / --speceval-task left them out)")
        notes = {f"{k}_acc": absent.format(what=f"{k} task") for k in ("judgement", "selection", "infilling")}
        notes.update({k: absent.format(what="generation task") for k in
                      ("generation_avg_precision", "generation_avg_recall")})
        notes["pcs"] = "PCS needs all four task kinds of a program in that category (§3.4.2); " + \
            absent.format(what="program with all four")
        notes.update({f"jaccard_{k}": f"J (§3.3.2) needs a {k} task of a program both original and perturbed, "
                      "handled in one of them at least" for k in ("judgement", "selection", "infilling")})
        notes.update({f"variance_{k}": f"v (§3.3.2) needs generation pairs (original, perturbed) with a non-zero {k}"
                      for k in ("precision", "recall")})
        notes["judgement_acc"] = ("Judgement accuracy (§3.2.1) without the mutants the tests do not refute "
                                  "(judgement_dropped); " + notes["judgement_acc"])
        notes["judgement_acc_all"] = ("Judgement accuracy over every candidate, as §3.2.1 averages; a dropped "
                                      "mutant scores against its label as built (incorrect)")
        notes["test_branch_coverage_mean"] = "needs --speceval-validation=dynamic and a program's tests"
        return notes


def _admitted(adapter: "SpecEval", task: Task, ctx: Any) -> tuple:
    """The program's own test calls in its ground truth's domain (none when it could not be checked)."""
    gt = adapter.ground_truth(task, ctx)
    return gt.domain if gt is not None else ()


def _one_expression(fill: str) -> tuple[str, bool]:
    """("", bare) when ``fill`` parses as exactly one JML expression (``bare``: a plain or
    qualified name), else (the reason, False)."""
    from ...jml import expr as X

    if "\\u" in fill:
        return "Java unicode escapes (\\u) are not accepted", False
    try:
        p = X.Parser(fill)
        e = p.expr()
        if p.tok.kind != "eof":
            return f"unexpected {p.tok.text!r} after it", False
    except X.JmlSyntaxError as exc:
        return str(exc), False
    except RecursionError:
        return "nested too deeply", False
    node = e
    while isinstance(node, X.Field):
        node = node.obj
    return "", isinstance(node, X.Name)


def _entries(results, tasks) -> dict[tuple[str, str, str], list[dict]]:
    out: dict[tuple[str, str, str], list[dict]] = {}
    for task_id, samples in results.items():
        task = tasks.get(task_id) if tasks else None
        if task is not None:
            key = (task.data["program"], task.data["kind"], task.data["category"])
        else:  # the id says it: Program/kind/category
            parts = task_id.rsplit("/", 2)
            if len(parts) != 3:
                continue
            key = (parts[0], parts[1], parts[2])
        for s in samples:
            details = s["checks"].get(key[1])
            if details:
                out.setdefault(key, []).append({**details, "index": s.get("index", 0)})
    return out


_MUTANT_VERDICTS: dict = {}
# Beyond the paper: a verdict "holds" is only as good as the tests.  Flagged as weak:
# fewer in-domain test calls than WEAK_TESTS, or their branch coverage below
# WEAK_COVERAGE (SpecEval's own tests cover 95.5% of the branches on average, §4.1).
WEAK_TESTS = 5
WEAK_COVERAGE = 0.8


def _test_strength(tests: int, coverage: float | None) -> dict[str, Any]:
    """``tests`` (in-domain calls the spec was checked on), ``branch_coverage`` of
    those calls (None: the program has no branch), ``weak_tests``."""
    return {"tests": tests, "branch_coverage": coverage,
            "weak_tests": tests < WEAK_TESTS or (coverage is not None and coverage < WEAK_COVERAGE)}


def _tests(task: Task) -> str | None:
    path = task.data.get("tests")
    return Path(path).read_text(encoding="utf-8") if path and Path(path).is_file() else None


def _squash(s: str) -> str:
    import re
    return re.sub(r"\s+", "", s)


ADAPTER = SpecEval()
