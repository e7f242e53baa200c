"""The ``verina`` adapter (VERINA: Lean 4 code, specification and proof
generation; paper §4.1-4.2, Appendix C.3/C.5).

Checks per task kind (:mod:`.kinds`): ``code`` (compiles with the ground-truth
precondition, then ``#guard`` on every positive test), ``precond_sound``,
``precond_complete``, ``postcond_sound``, ``postcond_complete`` (per case
``decide``, then ``plausible`` on R and ¬R), ``proof`` (compiles; ``#print axioms``
shows only Lean's standard axioms and those the task itself declares).

All checks of one sample that share a Lean file are put in one file (one Lean
process, Mathlib loaded once); the ``lean`` executor caches files by content,
so the sample's other checks read the same run.  Without Lean every item skips
with the executor's install hint.
"""
from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any, Mapping, Sequence

from ...data.bundled import bundled_suite
from ...errors import DataError, InfrastructureError, OptionError
from ...execution.lean import LeanJob, project_problem
from ..base import CheckResult, Message, Option, Prompt, Task, TaskSet
from . import assembly, metrics, prompts
from .audit import add_audit, audit_problem
from .answers import AnswerError, parse_answer
from .kinds import KINDS, SPEC_CHECKS, Kind
from .options import OPTIONS
from .screen import screen
from .loader import VerinaTask, load_tasks
from .verdicts import (STANDARD_AXIOMS, TO_PLAUSIBLE, FileReport, attribute, axioms_of, guard_outcome,
                       parse_messages, plausible_outcome, relation_outcome, relation_score)


def bundled_root() -> Path:
    return bundled_suite("verina")


_TASKS: dict[str, VerinaTask] = {}  # folder -> task, per process


PROJECT_FLAG = "--verina-lean-project"
BUILD_PROJECT = ("build a VERINA Lean project (git clone https://github.com/sunblaze-ucb/verina && cd verina "
                 "&& lake exe cache get && lake build) and pass --verina-lean-project=DIR (ini verina_lean_project)")


def lean_project(source: Any) -> Path | None:
    """The Lean project VERINA's files are checked in: the option
    ``verina_lean_project`` (command line, then ini; validated at start), else
    the environment variable ``SPECBENCH_LEAN_PROJECT``.  The lean executor
    gets it with each job (``LeanJob.project``)."""
    value = source.option("verina_lean_project") or os.environ.get("SPECBENCH_LEAN_PROJECT") or ""
    return Path(str(value)).expanduser().resolve() if str(value).strip() else None


def _option(source: Any, name: str) -> Any:
    """A declared option's validated value, from a check context (``ctx.option``)
    or the plugin's settings (``settings.option``): the plugin validates every
    declared :class:`Option` once, at start, with a one-line error naming it."""
    value = source.option(name)
    if value is None or value == "":
        return next(o for o in OPTIONS if o.name == name).default
    return value


class VerinaBenchmark:
    name = "verina"
    version = "2"  # 2: the screen of issue #43; a case the time limit stopped is unknown (§4.1)
    options: Sequence[Option] = OPTIONS

    def __init__(self) -> None:
        self._examples: list[VerinaTask] = []
        self._kind: Kind | None = None  # set by load() from the declared option

    @staticmethod
    def kind(source: Any) -> Kind:
        """The ``--verina-task`` kind, from a check context or the settings."""
        return KINDS[_option(source, "verina_task")]

    # ------------------------------------------------------------ data
    def load(self, data_root: Path | None, settings: Any) -> TaskSet:
        self._kind = self.kind(settings)
        root = bundled_root() if data_root is None else (
            data_root / "verina" if (data_root / "verina").is_dir() else data_root)
        loaded = load_tasks(root)
        for t in loaded:
            _TASKS[str(t.folder)] = t
        self._examples = [t for t in loaded if t.fewshot]
        tasks = tuple(Task(t.task_id, {"folder": str(t.folder), "tests": len(t.tests),
                                       "reject_inputs": len(t.reject_inputs), "has_proof": t.has_proof},
                           t.folder / "task.lean") for t in loaded if not t.fewshot)
        files = tuple(f for t in loaded for f in (t.folder / "task.lean", t.folder / "test.json",
                                                   t.folder / "reject_inputs.json") if f.exists())
        warnings = () if len(self._examples) == 2 else (
            f"{root}: {len(self._examples)} few-shot example tasks found (expected 2)",)
        return TaskSet(tasks, files, bundled=data_root is None, warnings=warnings)

    @staticmethod
    def task(task: Task) -> VerinaTask:
        folder = task.data["folder"]
        if folder not in _TASKS:
            from .loader import load_task
            _TASKS[folder] = load_task(Path(folder))
        return _TASKS[folder]

    def checks_for(self, task: Task) -> Sequence[str]:
        # Every task is scored on every check of the kind; on ProofGen the reference's
        # answer is the task's own proof, a 'sorry' on the 141 tasks without one (it fails there).
        return self._loaded_kind().checks

    def _loaded_kind(self) -> Kind:
        if self._kind is None:
            raise InfrastructureError("VERINA: checks asked for before load()")
        return self._kind

    def skip_reason(self, check: str, task: Task, ctx: Any) -> str | None:
        # No lake/lean or no built project: one line saying how to install it (elan).
        missing = ctx.executor("lean").available()
        if missing:
            return f"{missing}, {BUILD_PROJECT}"
        project = lean_project(ctx)
        if project is None:
            return f"no VERINA Lean project given: {BUILD_PROJECT}"
        problem = project_problem(project, ("mathlib",))
        return f"{PROJECT_FLAG}={problem}" if problem else None

    # ------------------------------------------------------------ prompts and answers
    def prompt(self, task: Task, settings: Any) -> Prompt:
        system, user = prompts.render(self.task(task), self.kind(settings), self._examples)
        return Prompt(messages=(Message("system", system), Message("user", user)))

    def reference(self, task: Task, check: str) -> str:
        return prompts.answer_text(prompts.reference_fields(self.task(task), self._loaded_kind()))

    # ------------------------------------------------------------ checks
    def run_check(self, check: str, task: Task, sample: Any, ctx: Any) -> CheckResult:
        vt, kind = self.task(task), self.kind(ctx)
        text = getattr(sample, "text", sample)
        try:
            fields = parse_answer(text, kind.fields)
            screen(fields)
        except AnswerError as exc:
            # `cases` is the check's own count on this task, as for any other failed
            # sample: a refused answer on a task with reject inputs is a failure that
            # --verina-empty-relation=exclude keeps, not an untested relation.
            return CheckResult(False, {"score": "fail", "outcome": "unreadable", "cases": self._cases(check, vt),
                                       "pass_cases": 0}, f"unreadable answer: {exc}")
        settings = ctx  # options come from ctx.option (declared, validated)
        if check == "code":
            return self._code(vt, kind, fields, ctx, settings)
        if check in SPEC_CHECKS:
            return self._spec(check, vt, kind, fields, ctx, settings)
        if check == "proof":
            return self._proof(vt, kind, fields, ctx, settings)
        raise InfrastructureError(f"unknown VERINA check {check!r}")

    @staticmethod
    def _cases(check: str, vt: VerinaTask) -> int:
        if check in SPEC_CHECKS:
            return len(assembly.spec_relations(vt, check))
        return len(vt.tests) if check == "code" else 1

    def _lean(self, ctx: Any, file: assembly.LeanFile) -> FileReport:
        project = lean_project(ctx)  # None: skip_reason said so, and the executor refuses the job (E)
        job = LeanJob(file.text, project=str(project or ""), commands=max(1, len(file.cases)))
        result = ctx.executor("lean").run(None, job)
        stopped = ""
        if result.timed_out or result.killed:
            stopped = f"Lean stopped: {result.killed or 'time limit'}"
        elif result.signal:
            stopped = f"Lean ended by signal {result.signal}"
        elif result.output_truncated:
            # A flood of #eval output: the diagnostics after the cap are lost, so
            # unfinished checks fail (the sample caused it) rather than pass.
            stopped = "Lean output exceeded the output limit (flooding #eval?)"
        return attribute(file, parse_messages(result.stdout), stopped, timed_out=bool(result.timed_out))

    def code_file(self, vt: VerinaTask, kind: Kind, fields: dict[str, str], settings: Any) -> assembly.LeanFile:
        parts = assembly.merge(vt, fields, kind.writes, kind.given)
        # Code is checked against the ground-truth precondition (Appendix C.5).
        gt = assembly.ground_truth(vt)
        parts["precond"], parts["precond_aux"] = gt["precond"], gt["precond_aux"]
        header = assembly.check_program(vt, parts, "code")
        fb = assembly.FileBuilder(header, _option(settings, "verina_heartbeats"))
        self._audit_cases(fb, fields, settings)
        for i, test in enumerate(vt.tests):
            fb.add(f"code:{i}", assembly.code_test(vt, i, test))
        return fb.build()

    @staticmethod
    def _audit_cases(fb: assembly.FileBuilder, fields: dict[str, str], settings: Any) -> None:
        if _option(settings, "verina_audit") == "on":
            add_audit(fb, fields)

    @staticmethod
    def _audited(vt: VerinaTask, file: assembly.LeanFile, report: FileReport, cases: int) -> CheckResult | None:
        """A failed sample when the post-elaboration audit (:mod:`.audit`) found what
        the answer added; None when it is clean or was not in the file."""
        problem = audit_problem(report, [c.key for c in file.cases], task_axioms(vt))
        if not problem:
            return None
        return CheckResult(False, {"score": "fail", "outcome": "audit", "cases": cases, "pass_cases": 0}, problem)

    def _code(self, vt, kind, fields, ctx, settings) -> CheckResult:
        file = self.code_file(vt, kind, fields, settings)
        report = self._lean(ctx, file)
        if not report.compiled:
            return CheckResult(False, {"score": "fail", "outcome": "cannot_compile", "cases": len(vt.tests),
                                       "pass_cases": 0}, f"does not compile: {report.compile_error}")
        audited = self._audited(vt, file, report, len(vt.tests))
        if audited:
            return audited
        upstream = _option(settings, "verina_unfinished_tests") == "pass"
        outcomes = {}
        for i in range(len(vt.tests)):
            got, msg = guard_outcome(report, f"code:{i}")
            if got == "timed_out":
                got = "not_run"  # code tests have no unknown: a test the time limit stopped did not pass
            if got == "not_run" and upstream:
                got = "passed"
            outcomes[i] = (got, msg)
        failed = [(i, o, m) for i, (o, m) in outcomes.items() if o != "passed"]
        details = {"score": "fail" if failed else "pass", "cases": len(vt.tests),
                   "pass_cases": len(vt.tests) - len(failed),
                   "outcomes": {str(i): o for i, (o, _) in outcomes.items()}}
        if failed:
            i, o, m = failed[0]
            return CheckResult(False, details, f"test {i} {o.replace('_', ' ')}: {m}"[:300])
        return CheckResult(True, details)

    def spec_header(self, vt: VerinaTask, kind: Kind, fields: dict[str, str]) -> str:
        parts = assembly.merge(vt, fields, kind.writes, kind.given)
        parts["code"], parts["code_aux"] = "sorry", ""  # spec checks use test values, never the code
        return assembly.check_program(vt, parts, "spec")

    def spec_files(self, vt, kind, fields, settings, decided: dict[str, str] | None = None):
        """Pass 1: ``#guard decide`` for every case of the four relations (one
        file); pass 2: ``plausible`` on R and ¬R for the undecidable ones."""
        header = self.spec_header(vt, kind, fields)
        beats = _option(settings, "verina_heartbeats")
        fb = assembly.FileBuilder(header, beats)
        if decided is None:
            self._audit_cases(fb, fields, settings)
        budget, seed = _option(settings, "verina_plausible_budget"), _option(settings, "verina_plausible_seed")
        for check in SPEC_CHECKS:
            unfold = check.split("_")[0]
            for case, prop in assembly.spec_relations(vt, check):
                key = f"{check}:{case}"
                if decided is None:
                    fb.add(f"{key}:decide", f"#guard decide ({prop})")
                elif decided.get(key) in TO_PLAUSIBLE:
                    fb.add(f"{key}:plausible", assembly.plausible_tactic(vt, f"({prop})", budget, seed, unfold))
                    fb.add(f"{key}:plausible_neg", assembly.plausible_tactic(vt, f"¬ ({prop})", budget, seed, unfold))
        return fb.build()

    def _spec(self, check, vt, kind, fields, ctx, settings) -> CheckResult:
        first = self.spec_files(vt, kind, fields, settings)
        report = self._lean(ctx, first)
        cases = assembly.spec_relations(vt, check)
        if not report.compiled:
            return CheckResult(False, {"score": "fail", "outcome": "cannot_compile", "cases": len(cases),
                                       "pass_cases": 0}, f"does not compile: {report.compile_error}")
        audited = self._audited(vt, first, report, len(cases))
        if audited:
            return audited
        decided = {c.key.rsplit(":", 1)[0]: guard_outcome(report, c.key)[0] for c in first.cases
                   if not c.key.startswith("audit:")}
        second_report = None
        if any(v in TO_PLAUSIBLE for v in decided.values()):
            second_report = self._lean(ctx, self.spec_files(vt, kind, fields, settings, decided))
        outcomes: dict[str, str] = {}
        for case, _ in cases:
            key = f"{check}:{case}"
            d = decided[key]
            if d in TO_PLAUSIBLE and second_report is not None:
                outcomes[case] = relation_outcome("undecidable", plausible_outcome(second_report, f"{key}:plausible"),
                                                  plausible_outcome(second_report, f"{key}:plausible_neg"))
            else:
                outcomes[case] = relation_outcome(d, None, None)
        score = relation_score(list(outcomes.values()))
        passing = sum(o in ("proved", "might_hold") for o in outcomes.values())
        details = {"score": score, "cases": len(cases), "pass_cases": passing, "outcomes": outcomes}
        if score == "pass":
            return CheckResult(True, details)
        bad = next((c, o) for c, o in outcomes.items() if o in (("counterexample", "not_run") if score == "fail"
                                                                  else ("unknown",)))
        return CheckResult(False, details, f"{check} case {bad[0]}: {bad[1].replace('_', ' ')}")

    def proof_file(self, vt, kind, fields, settings) -> assembly.LeanFile:
        writes = kind.writes
        if kind.name == "code_spec_proof" and _option(settings, "verina_e2e_proof_target") == "ground_truth":
            fields = {k: v for k, v in fields.items() if not k.startswith(("precond", "postcond"))}
            writes = tuple(w for w in writes if w != "spec")
        parts = assembly.merge(vt, fields, writes, kind.given + (("precond", "postcond") if writes != kind.writes else ()))
        header = assembly.check_program(vt, parts, "proof")
        fb = assembly.FileBuilder(header, _option(settings, "verina_heartbeats"))
        self._audit_cases(fb, fields, settings)
        fb.add("axioms", f"#print axioms {vt.signature['name']}_spec_satisfied")
        return fb.build()

    def _proof(self, vt, kind, fields, ctx, settings) -> CheckResult:
        base = {"cases": 1, "pass_cases": 0}
        if _option(settings, "verina_proof_check") == "substring":
            if re.search(r"\b(sorry|admit)\b", fields.get("proof", "") + fields.get("proof_aux", "")):
                return CheckResult(False, {**base, "score": "fail", "outcome": "placeholder"},
                                   "proof uses sorry or admit")
        file = self.proof_file(vt, kind, fields, settings)
        report = self._lean(ctx, file)
        if not report.compiled:
            return CheckResult(False, {**base, "score": "fail", "outcome": "cannot_compile"},
                               f"does not compile: {report.compile_error}")
        audited = self._audited(vt, file, report, 1)
        if audited:
            return audited
        if _option(settings, "verina_proof_check") == "substring":
            return CheckResult(True, {**base, "score": "pass", "pass_cases": 1, "outcome": "compiles"})
        axioms, why = axioms_of(report, "axioms", f"{vt.signature['name']}_spec_satisfied")
        if axioms is None:
            return CheckResult(False, {**base, "score": "fail", "outcome": "no_axioms_report"}, why)
        allowed = STANDARD_AXIOMS | task_axioms(vt)
        extra = sorted(axioms - allowed)
        if extra:
            return CheckResult(False, {**base, "score": "fail", "outcome": "axioms", "axioms": sorted(axioms)},
                               f"proof depends on {', '.join(extra)}")
        return CheckResult(True, {**base, "score": "pass", "pass_cases": 1, "outcome": "proved",
                                  "axioms": sorted(axioms)})

    # ------------------------------------------------------------ metrics
    def aggregate(self, results: Mapping[str, Sequence[Mapping[str, Any]]], tasks: Mapping[str, Task],
                  settings: Any) -> dict[str, Any]:
        """Pure in its arguments (the report's bootstrap calls it again on resampled tasks)."""
        return metrics.aggregate(results, self.kind(settings).checks, list(settings.ks or [1]),
                                 _option(settings, "verina_upper_bound"), _option(settings, "verina_empty_relation"))

    def metric_names(self, settings: Any) -> Sequence[str]:
        return metrics.names(self.kind(settings).checks, list(settings.ks or [1]))

    def figures(self, metrics_: Mapping[str, Any], settings: Any) -> list[dict[str, Any]]:
        return metrics.figures(metrics_, self.kind(settings).checks)


def task_axioms(vt: VerinaTask) -> set[str]:
    """Axioms the task itself declares (``task_aux``: basic_63's Float axioms)."""
    return set(re.findall(r"(?m)^\s*axiom\s+([^\s:({\[]+)", vt.template.text("task_aux")))


ADAPTER = VerinaBenchmark()
