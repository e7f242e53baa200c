"""The ``nl2postcond`` adapter (Endres et al., FSE 2024, the EvalPlus half;
arXiv 2310.01831v2): checks ``correct`` (test-set correctness) and ``complete``
(the corpus's bad outputs rejected), metrics in :mod:`.metrics`
(docs/nl2postcond.md)."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping, Sequence

from ...data.corpus_pin import read_parts
from ...errors import DataError
from ..base import CheckResult, Prompt, Task, TaskSet
from ..contract.evalplus import EvalPlusData
from . import corpus, metrics, observe, tasks, tier_checks, tiers
from .answers import AnswerError, postcondition_text
from .evaluate import evaluate, over_upstream_digits, over_upstream_time, rejects
from .options import OPTIONS
from ...metrics.reducers import evaluate as evaluate_metrics

CHECKS = ("correct", "complete")
JOB_SECONDS = 30.0  # per evaluation job, plus PER_CASE_SECONDS per case
PER_CASE_SECONDS = 0.2  # upstream's floor per input (2x the reference's time, at least 0.2 s)


class Nl2PostcondBenchmark:
    name = "nl2postcond"
    version = "1"
    options = OPTIONS

    def load(self, data_root: Path | None, settings: Any) -> TaskSet:
        taskset = tasks.load_tasks(data_root, settings)
        path = self._corpus_path(data_root, settings)
        digests = read_parts(path).digests if path else {}  # one pass: the pin's check and which tasks have a part
        pin_rule = _option(settings, "nl2postcond_corpus_pin") or "check"
        pin_warnings = corpus.check_pinned(path, warn=pin_rule == "warn", digests=digests) \
            if path and data_root is not None and pin_rule != "off" else ()
        with_part = corpus.tasks_with_part(digests)
        files = taskset.files + ((path,) if path else ())
        tagged = tuple(Task(t.task_id, {**dict(t.data), "_corpus": str(path) if path else None,
                                        "_has_part": t.task_id in with_part,
                                        "_data_root": str(data_root) if data_root else None,
                                        "_checks": tiers.checks(_option(settings, "spec_tiers"))}, t.source)
                       for t in taskset.tasks)
        return TaskSet(tagged, files, taskset.bundled,
                       taskset.warnings + tuple(pin_warnings) + tiers.unbuilt(_option(settings, "spec_tiers")))

    @staticmethod
    def _corpus_path(data_root: Path | None, settings: Any) -> Path | None:
        given = _option(settings, "nl2postcond_corpus")
        if given:
            path = Path(given).expanduser()
            if not path.is_file():
                raise DataError(path, None, "no corpus file here (--nl2postcond-corpus)")
            return path
        return corpus.default_path(data_root)

    def checks_for(self, task: Task) -> Sequence[str]:
        return tuple(task.data["_checks"]) if "_checks" in task.data else CHECKS  # the selected tiers' (--spec-tiers)

    def skip_reason(self, check: str, task: Task, ctx: Any) -> str | None:
        if getattr(ctx.settings, "model_spec", "") == "reference" and not task.data.get("reference_postcondition"):
            return "no reference postcondition for this task (upstream has none; the bundled suite has one per task)"
        if check == "crosshair":
            from ...pyspec.tiers.crosshair_tier import available
            return available()
        if check == "complete" and not task.data.get("_corpus"):
            return ("no buggy-program corpus for this data: build it with `specbench nl2postcond build-corpus "
                    "--specbench-data ROOT` (or pass --nl2postcond-corpus=FILE)")
        if check == "complete" and not task.data.get("_has_part"):
            # without its part a task would count as complete with nothing to reject (complete@k inflated)
            return (f"the corpus has no part for {task.task_id}: build it with `specbench nl2postcond build-corpus "
                    f"--specbench-data ROOT --tasks {task.task_id}`")
        return None

    def prompt(self, task: Task, settings: Any) -> Prompt:
        root = task.data.get("_data_root")
        return tasks.prompt(task, settings, _option(settings, "nl2postcond_prompt") or "simple",
                            (_option(settings, "nl2postcond_reference") or "with") == "with",
                            Path(root) if root else None)

    def reference(self, task: Task, check: str) -> str:
        return task.data.get("reference_postcondition") or ""

    def run_check(self, check: str, task: Task, sample: Any, ctx: Any) -> CheckResult:
        if check == "complete":
            return self._complete(task, ctx)
        if check == "pbt":
            return tiers.pbt_check(task, sample, ctx)
        if check in tier_checks.TIER_CHECKS:
            try:
                block = postcondition_text(sample.text)
            except AnswerError as exc:
                return CheckResult(False, {"parse_error": str(exc)}, f"no postcondition: {exc}")
            return tier_checks.run_tier(check, task, block, ctx)
        return self._correct(task, sample, ctx)

    def _correct(self, task: Task, sample: Any, ctx: Any) -> CheckResult:
        try:
            block = postcondition_text(sample.text)
        except AnswerError as exc:
            return CheckResult(False, {"parse_error": str(exc)}, f"no postcondition: {exc}")
        digest = EvalPlusData.load(task.source.parent).digest[task.task_id]
        cases = observe.reference_cases(task.data, digest, ctx.option("nl2postcond_inputs"), ctx)
        programs = corpus.load(Path(task.data["_corpus"])).get(task.task_id, []) if task.data.get("_corpus") else []
        expected = None
        if programs and (ctx.option("nl2postcond_oracle") or "eq") == "eq":  # the corpus's indices: base then plus
            every = cases if ctx.option("nl2postcond_inputs") != "base" else \
                observe.reference_cases(task.data, digest, "base+plus", ctx)
            expected = [case["return_value"] for case in every]
        done = evaluate(ctx.executor("command"), task.data, block, tasks.preamble(task.data), cases, programs,
                        JOB_SECONDS, PER_CASE_SECONDS, ctx.option("nl2postcond_pairs") or "str", expected,
                        ctx.option("nl2postcond_names") or "reference")
        reference = done.reference
        if ctx.option("nl2postcond_time") == "upstream":
            reference = over_upstream_time(reference, observe.reference_seconds(
                task.data, digest, ctx.option("nl2postcond_inputs"), ctx))
        if ctx.option("nl2postcond_long_ints") == "upstream":
            reference = over_upstream_digits(reference, cases)
        # a skipped case was not evaluated: another reference case had already failed
        failing = [(i, o) for i, o in enumerate(reference) if o.kind not in ("holds", "skipped")]
        details: dict[str, Any] = {"cases": len(cases), "test_set_correct": True,
                                   **_kills(done, ctx.option("nl2postcond_kill"), ctx.option("nl2postcond_codes")),
                                   # every rule's counts, to calibrate --nl2postcond-kill/-codes (tools/agreement.py)
                                   "killed_by_rule": _every_rule(done)}
        if failing:
            i, outcome = failing[0]
            details.update(failed_case=i, failed_cases=len(failing), failure=outcome.kind, test_set_correct=False)
            what = "does not hold" if outcome.kind == "violated" else "raised"
            return CheckResult(False, details, f"{what} on the reference's output for test input #{i}"
                                               f"{': ' + outcome.line if outcome.line else ''}")
        return CheckResult(True, details)

    def _complete(self, task: Task, ctx: Any) -> CheckResult:
        correct = ctx.result_of("correct")
        if correct is None or not correct.passed or "bopi_run" not in correct.details:
            return CheckResult(False, {"applicable": False, "complete": False, "bug_complete": False},
                               "not test-set correct: completeness counts correct postconditions only (as upstream)")
        d = {k: correct.details[k] for k in metrics.KILL_FIELDS}
        d["applicable"] = True
        d["bug_complete"] = d["codes_killed"] == d["codes_run"]
        d["complete"] = d["bopi_killed"] == d["bopi_run"]
        if d["bopi_killed"] == d["bopi_run"]:
            return CheckResult(True, d)
        return CheckResult(False, d, f"accepts {d['bopi_run'] - d['bopi_killed']} of {d['bopi_run']} bad outputs "
                                     f"({d['codes_run'] - d['codes_killed']} of {d['codes_run']} buggy programs not rejected)")

    def metric_names(self, settings: Any) -> list[str]:
        return [r.name for r in self.declared_metrics(settings).reducers]

    def declared_metrics(self, settings: Any):
        return tiers.declared(metrics.declared(settings.ks), _option(settings, "spec_tiers"))

    def aggregate(self, results: Mapping[str, Sequence[Mapping[str, Any]]], tasks_by_id, settings: Any) -> dict:
        return evaluate_metrics(self.declared_metrics(settings), results)


def _option(settings: Any, name: str) -> Any:
    return settings.option(name) if hasattr(settings, "option") else None


KILL_RULES = ("assertion", "any")
CODE_RULES = ("added", "all")
RULE_FIELDS = ("codes_killed", "bopi_killed", "natural_codes_killed")


def _every_rule(done) -> dict[str, dict[str, int]]:
    return {f"{rule}/{codes}": {k: v for k, v in _kills(done, rule, codes).items() if k in RULE_FIELDS}
            for rule in KILL_RULES for codes in CODE_RULES}


def _kills(done, kill: str, codes: str = "added") -> dict[str, Any]:
    """upstream's columns: distinct bad outputs (bopi) and programs run and rejected, all and natural ones.
    A program is rejected when one of its bad outputs is: of those it added (``codes=added``,
    upstream's run, which tries each program on its ``unique_bopi``) or of all it gives (``all``)."""
    rejected = [rejects(o, kill) for o in done.bad]
    out = {"codes_run": 0, "codes_killed": 0, "bopi_run": len(rejected), "bopi_killed": sum(rejected),
           "natural_codes_run": 0, "natural_codes_killed": 0, "killed_programs": []}
    for n, (kept, members) in enumerate(done.programs):
        if codes == "added" and done.added:
            members = done.added[n]
        out["codes_run"] += 1
        out["natural_codes_run"] += kept.natural
        if any(rejected[i] for i in members):
            out["codes_killed"] += 1
            out["natural_codes_killed"] += kept.natural
            out["killed_programs"].append(kept.program)
    return out


ADAPTER = Nl2PostcondBenchmark()
