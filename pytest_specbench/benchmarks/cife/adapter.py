"""The ``cife`` adapter: one item per constraint plus one ``correctness`` item per sample.

Items (``specbench::cife::TASK::SAMPLE::adherence[3-error-handling-and-robustness]``):
one per constraint, because a pytest user then sees *which* constraint failed
in the failure list, can select a category with ``-k error-handling`` or one
constraint with ``-k "adherence[3"``, and ``--lf`` re-runs exactly the failed
constraints.  The judge is still asked once per sample (paper §4.4: one
adherence vector per answer): every adherence item of a sample sends the same
prompt, which the judge role answers from its cache after the first.  The
``correctness`` item is the three-level label (paper §4.4, Figure 21); it
passes on *Completely Correct*.  An item's verdict is the judge's (paper);
the rule verdict, where a rule decides, is in its details and in the
``hybrid_*`` and ``rule_*`` metrics (ours).
"""
from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any, Mapping, Sequence

from ...data.bundled import bundled_suite
from ...errors import DataError, InfrastructureError
from ..base import CheckResult, CheckSkipped, Prompt, Task, TaskSet
from . import metrics as cife_metrics
from . import rules as cife_rules
from .data import DATA_FILE, constraints_of, read_tasks
from .extract import extract_code
from .judge import (NoJudgment, adherence_schema, ask_until_readable, correctness_schema, judge_text,
                    parse_adherence, parse_adherence_upstream, parse_correctness, parse_correctness_upstream)
from .options import OPTIONS
from .screen import addresses_the_judge
from .prompts import adherence_prompt, correctness_prompt, fence_token, generation_prompt, question_digest

_CHECK = re.compile(r"adherence\[(\d+)(?:-[\w-]*)?\]$")


def slug(category: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", category.lower()).strip("-")


def setting(source: Any, name: str, default: Any) -> Any:
    """An option's value from a check context (``ctx.option``) or settings (``settings.options``)."""
    getter = getattr(source, "option", None)
    if callable(getter):
        try:
            value = getter(name)
            return default if value is None else value
        except (KeyError, LookupError, AttributeError):
            pass
    options = getattr(source, "options", None)
    if isinstance(options, Mapping) and options.get(name) is not None:
        return options[name]
    value = getattr(source, name, None)
    if value is None and hasattr(source, "settings"):
        return setting(source.settings, name, default)
    return default if value is None else value


class CifeBenchmark:
    """CIFE (paper §4-§6); metrics in :mod:`.metrics`, rules in :mod:`.rules`."""

    name = "cife"
    # the rule verdicts in each item's details are cached with it; 2: judge answers with
    # disagreeing verdicts or duplicate keys are unreadable, reasons one line
    # 3: answers that speak to the judge are refused before it is asked (--cife-injection)
    # 4: typed records in every outcome's details; strict reading of judge replies (one verdict
    #    object, exact keys); the answer fenced for the judge; recorded judgments bound to questions
    version = f"4.rules{cife_rules.VERSION}"
    checks = ("adherence", "correctness")  # check kinds (pre-i19 plugin); the items come from checks_for
    options = OPTIONS


    # --- tasks ---------------------------------------------------------------------------------

    def load(self, data_root: Path | None, settings: Any) -> TaskSet:
        path = (Path(data_root) / DATA_FILE) if data_root else bundled_suite("cife") / "benchmark_data.jsonl"
        if data_root and not path.is_file():
            raise DataError(path, None, "CIFE data not found (expected <data>/cife/benchmark_data.jsonl from IBM/CIFE)")
        tasks = []
        for line, row, constraints in read_tasks(path):
            data = dict(row)
            data["_constraints"] = tuple(constraints)
            tasks.append(Task(str(row["id"]), data, path, line))
        return TaskSet(tuple(tasks), (path,), bundled=not data_root)

    def checks_for(self, task: Task) -> Sequence[str]:
        return [f"adherence[{c.index}-{slug(c.category)}]" for c in constraints_of(task.data)] + ["correctness"]

    def metric_names(self, settings: Any) -> Sequence[str]:
        return ("csr", "ssr", "c2a", "completely_correct", "hybrid_csr", "rule_judge_kappa")

    def skip_reason(self, check: str, task: Task, ctx: Any = None) -> str | None:
        if str(ctx.settings.model_spec) == "reference" and not task.data.get("reference_answer"):
            return "the released CIFE data has no reference answers (--model=reference runs on the bundled suite only)"
        return None

    def prompt(self, task: Task, settings: Any) -> Prompt:
        return generation_prompt(task.data["instruction"], setting(settings, "cife_prompts", "paper"))

    def reference(self, task: Task, check: str) -> str:
        answer = task.data.get("reference_answer")
        if not answer:
            raise DataError(task.source, task.line, "no reference_answer for this task")
        return answer

    roles = ("judge",)  # model roles the checks ask (for the plugin: fail early when one is missing)

    def default_roles(self, taskset: TaskSet) -> dict[str, str]:
        """Role specs used when the user gives none: the bundled suite's recorded judgments."""
        return {"judge": f"replay:{bundled_suite('cife') / 'judgments.jsonl'}"} if taskset.bundled else {}

    def program_key(self, task: Task, sample: Any, check: str) -> None:
        """No within-run deduplication (``engine/dedupe.py``): the judge is asked
        once per sample index (a ``replay:`` judge answers by index), so two
        identical answers still get two judgments, as upstream does."""
        return None

    # --- checks --------------------------------------------------------------------------------

    def _judge(self, ctx: Any, task: Task) -> Any:
        """The judge role (``--judge-model``; on the bundled suite, by default, its recorded judgments)."""
        return ctx.model("judge")

    def _constraint(self, check: str, task: Task) -> tuple[int, Any]:
        m = _CHECK.match(check)
        constraints = constraints_of(task.data)
        if not m or int(m.group(1)) >= len(constraints):
            raise InfrastructureError(f"cife: unknown check {check!r} for task {task.task_id}")
        return int(m.group(1)), constraints[int(m.group(1))]

    def run_check(self, check: str, task: Task, sample: Any, ctx: Any) -> CheckResult:
        """One item's verdict; every outcome writes its typed record (``metrics.Adherence``,
        ``metrics.Correctness``): judged, refused, rule-decided.  A question no judge
        answers is a skip with the usage line (a rule decides its constraint if one can)."""
        text = getattr(sample, "text", sample)
        meta = getattr(sample, "meta", {}) or {}
        index = int(meta.get("sample_index", 0))
        style = setting(ctx, "cife_prompts", "paper")
        parse_mode = setting(ctx, "cife_parse", "strict")
        retries = 0 if parse_mode == "upstream" else int(setting(ctx, "cife_judge_retries", 2))
        extraction = extract_code(text if isinstance(text, str) else "")
        code = extraction.code
        shown = judge_text(code)  # what the judge reads: encodable whatever the model wrote
        constraints = constraints_of(task.data)
        info = cife_metrics.TaskInfo(str(task.data.get("source_dataset", "")),
                                     str(task.data.get("instruction_difficulty", "")), len(constraints))
        instruction = task.data["instruction"]
        where = {"extraction": extraction.how}
        if check != "correctness":
            i, constraint = self._constraint(check, task)
        steering = addresses_the_judge(code) if setting(ctx, "cife_injection", "refuse") == "refuse" else ""
        if steering:
            # Not asked: a verdict the answer tried to dictate is no verdict (and costs nothing).
            if check == "correctness":
                details = cife_metrics.correctness_details(cife_metrics.Correctness(cife_metrics.REFUSED, None, info))
            else:
                details = cife_metrics.adherence_details(cife_metrics.Adherence(
                    cife_metrics.REFUSED, i, constraint.category, False, None, info))
            return CheckResult(False, {**details, "injection": steering, **where},
                               f"the answer speaks to the judge ({steering}): not judged")
        judge = self._judge(ctx, task)
        purpose = "correctness" if check == "correctness" else "adherence"
        question = question_digest(purpose, style, instruction, constraints if purpose == "adherence" else (), shown)
        token = fence_token(question, shown) if style == "paper" else None
        if check == "correctness":
            make = lambda err: correctness_prompt(instruction, shown, style, err, token)  # noqa: E731
            try:
                if parse_mode == "upstream":
                    asked = ask_until_readable(judge, self.name, task, index, "correctness", make,
                                               lambda a: (parse_correctness_upstream(a), ""), 0, question)
                else:
                    asked = ask_until_readable(judge, self.name, task, index, "correctness", make,
                                               lambda a: parse_correctness(a, token), retries, question,
                                               correctness_schema())
            except NoJudgment as exc:
                self._no_judge(ctx, exc)
            label, reason = asked.value
            details = {**cife_metrics.correctness_details(cife_metrics.Correctness(cife_metrics.JUDGED, label, info)),
                       "reason": reason, "attempts": len(asked.answers), **where}
            passed = label == cife_metrics.COMPLETELY
            return CheckResult(passed, details, "" if passed else f"judge: {label or 'no label'}: {reason}"[:300])
        rule = None
        if setting(ctx, "cife_rules", "on") == "on":
            rule = cife_rules.check(constraint.text, cife_rules.Code.parse(code), _runner(ctx), instruction)
        rule_shown = {"rule": rule.rule if rule else None, "rule_reason": rule.reason if rule else ""}
        make = lambda err: adherence_prompt(instruction, constraints, shown, style, err, token)  # noqa: E731
        vector = None
        try:
            if parse_mode == "upstream":
                asked = ask_until_readable(judge, self.name, task, index, "adherence", make,
                                           parse_adherence_upstream, 0, question)
                vector = asked.value
                verdict, reason = (vector[i], "") if i < len(vector) else (
                    True, "no verdict at this position (upstream: not counted)")
            else:
                asked = ask_until_readable(judge, self.name, task, index, "adherence", make,
                                           lambda a: parse_adherence(a, len(constraints), indexed=style == "paper",
                                                                     list_ok=style == "upstream", token=token),
                                           retries, question, adherence_schema(len(constraints), indexed=style == "paper"))
                verdict, reason = asked.value[i]
        except NoJudgment as exc:
            if rule is None or rule.verdict is None:
                self._no_judge(ctx, exc)
            # No judge for this question, and a rule decides the constraint: the rule's verdict.
            details = {**cife_metrics.adherence_details(cife_metrics.Adherence(
                cife_metrics.RULE_DECIDED, i, constraint.category, None, rule.verdict, info)), **rule_shown, **where}
            message = "" if rule.verdict else (f"constraint {i + 1} ({constraint.category}) not satisfied per rule "
                                               f"{rule.rule} (no judge for this answer): {rule.reason}")
            return CheckResult(bool(rule.verdict), details, message[:400])
        details = {**cife_metrics.adherence_details(cife_metrics.Adherence(
            cife_metrics.JUDGED, i, constraint.category, bool(verdict), rule.verdict if rule else None, info,
            tuple(vector) if vector is not None else None)),
            "judge_reason": reason, "attempts": len(asked.answers), **rule_shown, **where}
        message = ""
        if not verdict:
            message = f"constraint {i + 1} ({constraint.category}) not satisfied per judge: {reason}"
            if details["rule_verdict"] is not None:
                message += f" [rule {details['rule']}: {'pass' if details['rule_verdict'] else 'fail'}]"
        return CheckResult(bool(verdict), details, message[:400])

    @staticmethod
    def _no_judge(ctx: Any, exc: NoJudgment) -> None:
        """No judge answers this question: with the user's own judge (a ``replay:`` file
        without it) the harness's fault, E; with none given (the bundled suite's recorded
        judgments, made for its reference answers only) a skip with the usage line."""
        if str(setting(ctx, "judge_model", "") or "").strip():
            raise exc
        raise CheckSkipped("no judge for this answer (the bundled suite's recorded judgments answer only the "
                           "answers they were recorded for): give one with --judge-model=openai:NAME (with "
                           "--judge-model-base-url=URL for a local server) or --judge-model=replay:FILE.jsonl")

    def manifest(self, settings: Any) -> dict[str, Any]:
        """Provenance for the report: prompt style and template hashes, parsing, retries, rules version."""
        from . import prompts as p

        style = setting(settings, "cife_prompts", "paper")
        templates = {"adherence": p.UPSTREAM_ADHERENCE_SYSTEM if style == "upstream" else p.PAPER_ADHERENCE_SYSTEM,
                     "correctness": p.UPSTREAM_CORRECTNESS if style == "upstream" else p.PAPER_CORRECTNESS}
        return {"prompts": style, "parse": setting(settings, "cife_parse", "strict"),
                "judge_retries": setting(settings, "cife_judge_retries", 2), "rules": setting(settings, "cife_rules", "on"),
                "denominator": setting(settings, "cife_n", "all"), "answer_fenced": style == "paper",
                "rules_version": cife_rules.VERSION,
                "prompt_sha256": {k: hashlib.sha256(v.encode()).hexdigest()[:16] for k, v in templates.items()},
                "generation_parameters": dict(p.GENERATION_PARAMETERS[style]),
                # What the prompts ask the judge for; --judge-model-temperature/-max-tokens override it.
                # What was sent is manifest.roles.judge.parameters (and each judge cache entry).
                "judge_parameters_asked": {k: dict(p.JUDGE_PARAMETERS[(style, k)]) for k in ("adherence", "correctness")}}

    # --- metrics -------------------------------------------------------------------------------

    def aggregate(self, results: Mapping[str, Sequence[Mapping[str, Any]]], tasks: Any = None,
                  settings: Any = None) -> dict[str, Any]:
        return cife_metrics.compute(results, setting(settings, "cife_n", "all"), tasks)

    def pooled_metrics(self, results: Mapping[str, Sequence[Mapping[str, Any]]], tasks: Any = None,
                       settings: Any = None) -> dict[str, Any]:
        return cife_metrics.pooled(results, setting(settings, "cife_n", "all"), tasks)

    def figures(self, metrics: Mapping[str, Any], settings: Any = None) -> list[dict[str, Any]]:
        return cife_metrics.figures(metrics)

    def warnings(self, metrics: Mapping[str, Any], settings: Any = None) -> list[str]:
        return cife_metrics.warnings(metrics)

    def metric_notes(self, metrics: Mapping[str, Any], settings: Any = None) -> dict[str, str]:
        return cife_metrics.metric_notes(metrics)


def _runner(ctx: Any) -> cife_rules.Runner | None:
    """Calls of the answer's function on generic inputs, in the sandbox (``ctx.executor("python")``)."""
    def run(code: str, name: str, inputs: Sequence[tuple]):
        ex = ctx.executor("python")
        from ...execution.python import CallsJob

        calls = [(tuple(args), {}) for args in inputs]
        key = "cife-generic:" + hashlib.sha256(json.dumps([repr(c) for c in calls]).encode()).hexdigest()[:16]
        result = ex.run(None, CallsJob(code, name, key, lambda: calls, list(range(len(calls)))))
        if result.load_error:
            return result.load_error
        out = []
        for i in range(len(calls)):
            o = result.outcomes.get(i)
            if o is None:
                return result.failure_reason() or "no outcome"
            if o.status == "ok":
                try:
                    out.append(("ok", o.value))
                except ValueError as exc:
                    out.append(("raise", f"unreadable: {exc}"))
            elif o.status == "raise":
                out.append(("raise", o.exc_type))
            else:
                out.append((o.status, None))
        return out

    return run


ADAPTER = CifeBenchmark()


def __getattr__(name: str):
    """``BUNDLED`` (the bundled suite) and ``BUNDLED_JUDGMENTS`` (its recorded judge),
    looked up in the installed package when asked for."""
    if name == "BUNDLED":
        return bundled_suite("cife")
    if name == "BUNDLED_JUDGMENTS":
        return bundled_suite("cife") / "judgments.jsonl"
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
