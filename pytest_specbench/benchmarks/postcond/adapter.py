"""The ``postcond`` adapter: PostcondBench, generated postconditions checked on the
real method (correctness) and against mutants (completeness), §3.2.4, Appendix
D.2/D.3.  Python tasks: icontract decorators under pytest; Java tasks
(``repo.language == "java"``): JML ``ensures`` under JUnit 4 (:mod:`.java`)."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Mapping, Sequence

from ...data.bundled import bundled_suite
from ...errors import DataError, InfrastructureError
from ..base import CheckResult, Message, Option, Prompt, Task, TaskSet, existing_folder, positive_seconds
from . import execute, metrics, repos, source
from .java import execute as java_execute, junit as java_junit, source as java_source

REQUIRED = ("name", "content", "file", "start_line", "end_line", "cover_tests", "repo", "mutants", "ref_postcond")
LANGUAGES = ("python", "java")
JAVA_ENV = "javac-junit4"  # a self-contained project: javac + Debian's JUnit 4, no build tool
KILLS = {"python": "icontract_fail", "java": java_execute.KILL}  # upstream's kill flags


def load_tasks(root: Path) -> tuple[list[Task], list[Path]]:
    files = sorted(root.glob("*.json")) if root.is_dir() else [root]
    tasks = []
    for f in files:
        try:
            data = json.loads(f.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise DataError(f, None, f"not a PostcondBench task file: {exc}") from None
        if not isinstance(data, dict):
            raise DataError(f, None, "not a PostcondBench task (a JSON object expected)")
        missing = [k for k in REQUIRED if k not in data]
        if missing:
            raise DataError(f, None, f"missing field(s) {', '.join(missing)}")
        if not isinstance(data["repo"], dict):
            raise DataError(f, None, "field repo must be an object")
        if data["repo"].get("language", "python") not in LANGUAGES:
            raise DataError(f, None, f"repo.language {data['repo'].get('language')!r}: expected python or java")
        tasks.append(Task(task_id=f.stem, data=data, source=f, group=f.stem))
    return tasks, files


def _task_folder(root: Path) -> Path:
    """A data root laid out like ``specbench data download``'s (``postcondbench/<model>--<prompting>/``,
    the same tasks in each, with that model's answers): its first model folder.  Else ``root`` itself."""
    folders = sorted(f for f in (root / "postcondbench").glob("*") if f.is_dir() and any(f.glob("*.json")))
    return folders[0] if folders else root


def _downloaded_repos(task_file: Path) -> str | None:
    """``postcondbench/repos/`` beside a downloaded task folder (``specbench data download postcond``)."""
    repos = task_file.parent.parent / "repos"
    return str(repos) if task_file.parent.parent.name == "postcondbench" and repos.is_dir() else None


class PostcondBenchmark:
    name = "postcond"
    # 2: answers screened (source.screen), verdicts from nonce records with every test's call (#29);
    # the Java side refuses hostile clauses, checks threads and escapes its records (#25).
    version = "2"
    options = (
        Option("postcond_setting", "input setting (Appendix D.2)", default="f2p", choices=source.SETTINGS),
        Option("postcond_repos", "folder of repository checkouts (one per repository)", default=None,
               parse=existing_folder),
        Option("postcond_injection", "where import/decorators go: fixed, or faithful to upstream",
               default="fixed", choices=("fixed", "faithful")),
        Option("postcond_complete", "paper: kill every mutant; upstream: every mutant the reference kills",
               default="paper", choices=("paper", "upstream")),
        Option("postcond_timeout", "seconds per test run (upstream: 30)", default=execute.DEFAULT_TIMEOUT,
               parse=positive_seconds),
    )


    def load(self, data_root: Path | None, settings: Any) -> TaskSet:
        root = _task_folder(Path(data_root)) if data_root else bundled_suite("postcond") / "tasks"
        tasks, files = load_tasks(root)
        return TaskSet(tuple(tasks), tuple(files), bundled=data_root is None)

    def checks_for(self, task: Task) -> Sequence[str]:
        return ("correct", "complete")

    def _checkout(self, task: Task, ctx: Any) -> Path:
        repos_dir = ctx.option("postcond_repos") or _downloaded_repos(task.source)
        return repos.checkout_for(dict(task.data), task.source, Path(repos_dir) if repos_dir else None,
                                  ctx.cache_dir("postcond", "checkouts"))

    def skip_reason(self, check: str, task: Task, ctx: Any) -> str | None:
        if _is_java(task):
            repo = task.data["repo"]
            if repo.get("env") != JAVA_ENV:
                build = "Gradle" if "gradle" in (repo.get("env_config") or "").lower() else "Maven"
                return (f"{repo.get('github_path') or task.task_id}: a {build} project; its dependencies and "
                        f"plugins come from Maven Central, which this harness does not reach (only self-contained "
                        f"projects with repo.env = {JAVA_ENV!r} run)")
            missing = ctx.executor("jvm").available() or java_junit.missing()
        else:
            missing = ctx.executor("command").available()
        if missing:
            return missing
        try:
            self._checkout(task, ctx)
        except repos.CheckoutMissing as exc:
            return str(exc)
        return None

    def prompt(self, task: Task, settings: Any) -> Prompt:
        d = task.data
        setting = settings.option("postcond_setting") if hasattr(settings, "option") else "f2p"
        file_text = _file_text_from_prompt(d)
        if _is_java(task):
            text = java_source.render_prompt(setting or "f2p", file_text, d["content"], d.get("header") or d["content"],
                                             d["name"])
            return Prompt((Message("user", text),))
        text = source.render_prompt(setting or "f2p", file_text, d["content"], d["name"], d["start_line"])
        return Prompt((Message("user", text),))

    def reference(self, task: Task, check: str) -> str:
        return f"```{'java' if _is_java(task) else 'python'}\n{task.data['ref_postcond']}\n```"

    # ------------------------------------------------------------ checks
    def _run(self, task: Task, ctx: Any, decorators: str, program: execute.Program) -> dict:
        checkout = self._checkout(task, ctx)
        ex = ctx.executor("command")
        prepared = ex.prepare(execute.environment_for(dict(task.data), checkout))
        return execute.run_program(ex, prepared, dict(task.data), checkout, program, decorators,
                                   ctx.option("postcond_injection") or "fixed",
                                   float(ctx.option("postcond_timeout") or execute.DEFAULT_TIMEOUT))

    def _original(self, task: Task, ctx: Any) -> execute.Program:
        checkout = self._checkout(task, ctx)
        try:
            text = (checkout / task.data["file"]).read_text(encoding="utf-8")
        except OSError as exc:
            raise InfrastructureError(f"{task.task_id}: cannot read {task.data['file']} in {checkout}: {exc}") from None
        return execute.Program(text, "original")

    def _run_java(self, task: Task, ctx: Any, clauses: list[str], file_text: str, label: str) -> dict:
        return java_execute.run_program(ctx.executor("jvm"), dict(task.data), self._checkout(task, ctx), file_text,
                                        clauses, float(ctx.option("postcond_timeout") or execute.DEFAULT_TIMEOUT),
                                        label)

    def _parse(self, task: Task, sample: Any):
        text = getattr(sample, "text", sample)
        if _is_java(task):
            return java_source.parse_answer(text)
        return source.parse_answer(text, _file_text_from_prompt(task.data))

    def _correct(self, task: Task, sample: Any, ctx: Any) -> CheckResult:
        try:
            spec = self._parse(task, sample)
        except source.AnswerError as exc:
            return CheckResult(False, {"verdict": "parse_error", "reason": str(exc)}, str(exc))
        if _is_java(task):
            run = self._run_java(task, ctx, spec, self._original(task, ctx).file_text, "original")
        else:
            run = self._run(task, ctx, spec, self._original(task, ctx))
        ok = run["verdict"] == "passed"
        return CheckResult(ok, dict(run), "" if ok else f"{run['verdict']}: {run['reason']}")

    def run_check(self, check: str, task: Task, sample: Any, ctx: Any) -> CheckResult:
        if check == "correct":
            return self._correct(task, sample, ctx)
        if check != "complete":
            raise InfrastructureError(f"postcond has no check {check!r}")
        correct = ctx.result_of("correct") or self._correct(task, sample, ctx)
        mutants = list(task.data.get("mutants") or ())
        if not correct.passed:
            return CheckResult(False, {"correct": False, "complete": False, "killed": 0, "total": len(mutants), "kills": []},
                               "not correct: mutants not run")
        spec = self._parse(task, sample)
        original = self._original(task, ctx)
        programs = execute.mutant_programs(dict(task.data), original.file_text)
        if _is_java(task):
            kills = [self._run_java(task, ctx, spec, p.file_text, p.label)["verdict"] for p in programs]
        else:
            kills = [self._run(task, ctx, spec, p)["verdict"] for p in programs]
        kill = KILLS["java" if _is_java(task) else "python"]
        ref_kills = task.data.get("ref_mutant_kill") or [kill] * len(mutants)
        if ctx.option("postcond_complete") == "upstream":
            required = [i for i, v in enumerate(ref_kills) if v == kill]
        else:
            required = list(range(len(mutants)))
        killed = [i for i, v in enumerate(kills) if v == kill]
        survivors = [i for i in required if kills[i] != kill]
        ok = not survivors
        details = {"correct": True, "complete": ok, "killed": len(killed), "total": len(mutants), "kills": kills,
                   "required": len(required)}
        msg = "" if ok else f"{len(survivors)} mutant(s) survive: " + ", ".join(f"#{i} {kills[i]}" for i in survivors[:8])
        return CheckResult(ok, details, msg)

    # ------------------------------------------------------------ metrics
    def aggregate(self, results: Mapping[str, Sequence[Mapping[str, Any]]], tasks: Mapping[str, Task],
                  settings: Any) -> dict[str, Any]:
        per_method = {}
        for task_id, samples in results.items():
            rows = []
            for s in samples:
                checks = s.get("checks", {})
                if "correct" not in checks and "complete" not in checks:
                    continue
                corr = bool(checks.get("correct", {}).get("verdict") == "passed") if "correct" in checks \
                    else bool(checks["complete"].get("correct"))
                comp = bool(checks.get("complete", {}).get("complete"))
                rows.append((corr, corr and comp))
            if rows:
                per_method[task_id] = rows
        out = metrics.summarize(per_method)
        groups, languages = {}, {}
        for task_id in per_method:
            task = tasks.get(task_id) if tasks else None
            if task is not None:
                d = task.data
                standalone = metrics.is_standalone_java if _is_java(task) else metrics.is_standalone
                solo = d["standalone"] if "standalone" in d else standalone(_file_text_from_prompt(d))
                groups[task_id] = "Solo" if solo else "Dep"
                languages[task_id] = d["repo"].get("language", "python")
        gaps = out.pop("gaps")
        out["methods"] = len(per_method)
        out["gap_median"] = sorted(gaps.values())[len(gaps) // 2] if gaps else None
        if groups:
            out.update(metrics.by_group(per_method, groups))
        if languages:
            out.update(metrics.by_language(per_method, languages))
        out["gap_by_method"] = gaps  # per-method gap (Figure 3): a per-item breakdown in the reports
        return out

    def metric_names(self, settings: Any) -> Sequence[str]:
        """Appendix D.3 (Corr@k, Comp@k, Δ@k eq. 1, ρ@k eq. 2), Table 2 (Corr@1, Comp@1 per language) and Table 3 / §5.4
        (Corr@1, Comp@1 for non-standalone ``Dep`` and standalone ``Solo`` methods)."""
        return [f"{m}@{k}" for k in metrics.KS for m in ("Corr", "Comp", "Delta", "rho")] + \
            [f"{m}@1[{g}]" for g in ("Dep", "Solo") for m in ("Corr", "Comp")] + \
            [f"{m}@1[{g}]" for g in metrics.LANGUAGES.values() for m in ("Corr", "Comp")]

    def figures(self, metrics_: Mapping[str, Any], settings: Any) -> list[dict]:
        """Figure 3: the per-method gap corr_rate - comp_rate (methods with Corr > 0), as counts
        per bin of 0.1 (the paper draws violins with quartiles and the mean: those are in the caption)."""
        gaps = sorted((metrics_.get("gap_by_method") or {}).values())
        if not gaps:
            return []
        edges = [i / 10 for i in range(11)]
        counts = [sum(1 for g in gaps if lo <= g < hi or (hi == 1.0 and g == 1.0)) for lo, hi in zip(edges, edges[1:])]
        q = [_quantile(gaps, p) for p in (0.25, 0.5, 0.75)]
        return [{"title": "Per-method correctness-completeness gap (PostcondBench Figure 3)", "kind": "binned",
                 "edges": edges, "counts": counts,
                 "caption": (f"{len(gaps)} methods with Corr > 0; gap quartiles {q[0]:.2f} / {q[1]:.2f} / {q[2]:.2f}, "
                             f"mean {sum(gaps) / len(gaps):.2f}"),
                 "xlabel": "gap = corr_rate - comp_rate (bins of 0.1)", "ylabel": "methods"}]


def _quantile(sorted_values: Sequence[float], p: float) -> float:
    """Linear-interpolation quantile (numpy's default), as the paper's violins mark them."""
    pos = p * (len(sorted_values) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (pos - lo)


def _is_java(task: Task) -> bool:
    return task.data["repo"].get("language", "python") == "java"


def _file_text_from_prompt(d: Mapping[str, Any]) -> str:
    """The method's file as upstream's prompt shows it (F2P context), from the
    task's own ``prompt`` field when present, else the ``file_text`` field of a
    bundled task."""
    if d.get("file_text"):
        return d["file_text"]
    prompt = d.get("prompt") or ""
    if prompt.startswith("## Code Context\n```\n"):
        return prompt[len("## Code Context\n```\n"):].split("\n```\n## Target Method", 1)[0]
    return d["content"]


ADAPTER = PostcondBenchmark()


def __getattr__(name: str):
    """``BUNDLED``: the bundled tasks folder, looked up in the installed package when asked for."""
    if name == "BUNDLED":
        return bundled_suite("postcond") / "tasks"
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
