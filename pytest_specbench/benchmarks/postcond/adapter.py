"""The ``postcond`` adapter: PostcondBench, generated postconditions checked on the
real method (correctness) and against mutants (completeness), §3.2.4, Appendix
D.2/D.3.  Python tasks: icontract decorators under pytest; Java tasks
(``repo.language == "java"``): JML ``ensures`` under JUnit 4 (:mod:`.java`).  The two
languages are two :class:`.sides.Side` objects; the checks here are the same for both."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Mapping, Sequence

from ...data.bundled import bundled_suite
from ...errors import DataError, InfrastructureError
from ...metrics.reducers import evaluate
from ..base import CheckResult, Message, Prompt, Task, TaskSet
from . import execute, metrics, pbt, repos, source
from .options import OPTIONS
from .sides import LANGUAGES, side_of

REQUIRED = ("name", "content", "file", "start_line", "end_line", "cover_tests", "repo", "mutants", "ref_postcond")


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
    # 3: Python postconditions run in a spec child apart from the verdict channel (#41); the Java side's
    # clauses normalised, purity observed, ranges that cannot wrap (#42); Dep/Solo per method (#49).
    # 4: the pbt tier (#47; a new check: the corpus checks' verdicts are unchanged).
    version = "4"
    options = OPTIONS


    def load(self, data_root: Path | None, settings: Any) -> TaskSet:
        root = _task_folder(Path(data_root)) if data_root else bundled_suite("postcond") / "tasks"
        tasks, files = load_tasks(root)
        checks = _selected_checks(_option(settings, "spec_tiers"))
        hints_file = _option(settings, "postcond_pbt_hints")
        hints = pbt.load_hints(hints_file) if "pbt" in checks else {}
        tasks = [Task(t.task_id, {**t.data, "_checks": checks, **({"_pbt_stub": hints[t.task_id]}
                                                                   if t.task_id in hints else {})},
                      t.source, line=t.line, group=t.group) for t in tasks]
        files = tuple(files) + ((Path(hints_file),) if hints_file and "pbt" in checks else ())
        other = [t for t in (_option(settings, "spec_tiers") or ()) if t not in ("corpus", "pbt")]
        warnings = (f"--spec-tiers: no {', '.join(other)} tier for postcond (it has: corpus, pbt); nothing runs "
                    f"for it",) if other else ()
        return TaskSet(tuple(tasks), files, bundled=data_root is None, warnings=warnings)

    def checks_for(self, task: Task) -> Sequence[str]:
        # --spec-tiers: corpus = the paper's two checks; pbt = the search tier (issue #47). Default: corpus.
        return tuple(task.data.get("_checks", CORPUS_CHECKS))

    def _checkout(self, task: Task, ctx: Any) -> Path | None:
        """The task's repository at its commit, exported into the cache on first use;
        while the xdist controller plans (``ctx.planning``) never exported (None when
        not there yet): the worker running the task's first item exports it (#28)."""
        repos_dir = ctx.option("postcond_repos") or _downloaded_repos(task.source)
        return repos.checkout_for(dict(task.data), task.source, Path(repos_dir) if repos_dir else None,
                                  ctx.cache_dir("postcond", "checkouts"), export=not ctx.planning)

    def skip_reason(self, check: str, task: Task, ctx: Any) -> str | None:
        if check == "pbt":
            if side_of(task).language != "python":
                return "pbt: Python tasks only (the Java side has no search tier)"
            planned = pbt.plan(task.data, _file_text_from_prompt(task.data), task.data.get("_pbt_stub"))
            if isinstance(planned, str):
                return planned
        missing = side_of(task).missing_toolchain(task, ctx)
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
        text = side_of(task).render_prompt(setting or "f2p", _file_text_from_prompt(d), d)
        return Prompt((Message("user", text),))

    def reference(self, task: Task, check: str) -> str:
        return f"```{side_of(task).fence}\n{task.data['ref_postcond']}\n```"

    # ------------------------------------------------------------ checks
    def _run(self, task: Task, ctx: Any, spec: Any, program: execute.Program) -> dict:
        """One program (the original or a mutant) with the spec, on the task's side."""
        return side_of(task).run(task, ctx, self._checkout(task, ctx), spec, program,
                                 float(ctx.option("postcond_timeout") or execute.DEFAULT_TIMEOUT))

    def _original(self, task: Task, ctx: Any) -> execute.Program:
        checkout = self._checkout(task, ctx)
        try:
            text = (checkout / task.data["file"]).read_text(encoding="utf-8")
        except OSError as exc:
            raise InfrastructureError(f"{task.task_id}: cannot read {task.data['file']} in {checkout}: {exc}") from None
        return execute.Program(text, "original")

    def _parse(self, task: Task, sample: Any):
        return side_of(task).parse(getattr(sample, "text", sample), _file_text_from_prompt(task.data))

    def _correct(self, task: Task, sample: Any, ctx: Any) -> CheckResult:
        try:
            spec = self._parse(task, sample)
        except source.AnswerError as exc:
            return CheckResult(False, {"verdict": "parse_error", "reason": str(exc)}, str(exc))
        run = self._run(task, ctx, spec, self._original(task, ctx))
        ok = run["verdict"] == "passed"
        return CheckResult(ok, dict(run), "" if ok else f"{run['verdict']}: {run['reason']}")

    def _pbt(self, task: Task, sample: Any, ctx: Any) -> CheckResult:
        """The ``pbt`` tier (:mod:`.pbt`): AC and RW on arguments Hypothesis draws, on the real method."""
        try:
            spec = self._parse(task, sample)
        except source.AnswerError as exc:
            return CheckResult(False, {"verdict": "parse_error", "reason": str(exc)}, str(exc))
        planned = pbt.plan(task.data, _file_text_from_prompt(task.data), task.data.get("_pbt_stub"))
        if isinstance(planned, str):
            raise InfrastructureError(planned)  # (skip_reason said so first)
        checkout = self._checkout(task, ctx)
        ex = ctx.executor("command")
        prepared = ex.prepare(execute.environment_for(dict(task.data), checkout))
        examples = int(ctx.option("spec_pbt_examples") or 100)
        found = pbt.run_search(ex, prepared, task.data, checkout, planned, spec, self._original(task, ctx).file_text,
                               examples)
        return pbt.result_of(pbt.verdicts(found, planned.params), planned, examples)

    def run_check(self, check: str, task: Task, sample: Any, ctx: Any) -> CheckResult:
        if check == "correct":
            return self._correct(task, sample, ctx)
        if check == "pbt":
            return self._pbt(task, sample, ctx)
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
        kills = [self._run(task, ctx, spec, p)["verdict"] for p in programs]
        kill = side_of(task).kill
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
    def declared_metrics(self, settings: Any):
        """The metrics as reducers over methods, Dep/Solo and languages as groupings
        (:func:`.metrics.declared`; the paper sections are cited there)."""
        return metrics.declared(_dependency_group, _language)

    def aggregate(self, results: Mapping[str, Sequence[Mapping[str, Any]]], tasks: Mapping[str, Task],
                  settings: Any) -> dict[str, Any]:
        return evaluate(self.declared_metrics(settings), results, tasks)

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


CORPUS_CHECKS = ("correct", "complete")


def _option(settings: Any, name: str) -> Any:
    return settings.option(name) if hasattr(settings, "option") else None


def _selected_checks(tiers: Sequence[str] | None) -> tuple[str, ...]:
    """The checks of ``--spec-tiers`` (PostcondBench's default: corpus only)."""
    chosen = tuple(tiers) if tiers else ("corpus",)
    out: list[str] = []
    for tier in chosen:
        out += CORPUS_CHECKS if tier == "corpus" else ("pbt",) if tier == "pbt" else ()
    return tuple(dict.fromkeys(out))


def _quantile(sorted_values: Sequence[float], p: float) -> float:
    """Linear-interpolation quantile (numpy's default), as the paper's violins mark them."""
    pos = p * (len(sorted_values) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (pos - lo)


def _dependency_group(task_id: str, task: Task) -> str:
    """Table 3 / §5.4: ``Solo`` for a standalone method, else ``Dep`` (a task's own
    ``standalone`` field wins over the label its side derives from the file).

    Decided once per task: the bootstrap evaluates the metrics on ~1,000 resamples of
    the same tasks, and deriving the label parses the method's file (a Java file's
    dependency level: 3 CPU s of the bundled suite's intervals, issue #45)."""
    known = _GROUPS.get(id(task))
    if known is not None and known[0] is task:
        return known[1]
    d = task.data
    solo = d["standalone"] if "standalone" in d else side_of(task).is_standalone(_file_text_from_prompt(d), d)
    group = "Solo" if solo else "Dep"
    _GROUPS[id(task)] = (task, group)  # the task kept: its id cannot be another task's while cached
    return group


_GROUPS: dict[int, tuple[Task, str]] = {}


def _language(task_id: str, task: Task) -> str:
    return side_of(task).language


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
