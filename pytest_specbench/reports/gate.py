"""CI gating: metric thresholds and paired comparison against a baseline report.

Options (each also an ini key: dashes become underscores)::

    --specbench-fail-under=[BENCH:]METRIC=VALUE,...     e.g. contract:csr=0.45,pass@1=70%
    --specbench-baseline=REPORT.json                     a JSON report of an earlier run
    --specbench-compare-fail=[BENCH:]METRIC:TOL,...      TOL: -2% (relative) or -0.02 (absolute)
    --specbench-alpha=0.05                               significance level of the comparison
    --specbench-compare-force                            compare even if data/version/checks differ
    --specbench-markdown=PATH / --specbench-html=PATH    summaries people read

A comparison pairs the two runs by task.  A compared metric *regresses* (and the
gate fails) only when its drop is beyond the tolerance **and** statistically
significant at ``alpha``: an exact McNemar test on the per-task outcomes when
the metric's per-task values are pass/fail (pass@1 with one sample per task),
otherwise the paired bootstrap interval at level ``1 - alpha`` lying below 0.

Flips (tasks that newly fail or newly pass) of items marked ``borderline`` in
either run (a verdict decided by CPU time at the limit, measured again: see
docs/timing.md) are counted apart from the others and said so; a regression
whose newly failing tasks are *all* borderline does not fail the gate by itself
(the rule reports it, passed).  One solid newly failing task is enough for the
usual rule to apply.

With any of fail-under, baseline or compare-fail set, the exit status is the
gate's: 0 when met, 1 when not; benchmark failures (F) stay visible but do not
change it.  Harness errors (E), collection errors and failures of ordinary tests
make it 1 regardless.  Without gate options pytest's usual exit status stands.

This module is the gate's logic and imports nothing of pytest (its hooks, the
errors they collect and the JUnit XML are ``plugin/gate.py``'s).
"""
from __future__ import annotations

import hashlib
import json
import math
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping

from ..errors import DataError, OptionError
from . import fingerprint, layout, stats
from .gate_options import addoption  # noqa: F401 - the gate's options, declared apart (every process lists them)
from .report import metrics_error_line

GATE_OPTIONS = ("specbench_fail_under", "specbench_baseline", "specbench_compare_fail")


# ------------------------------------------------------------------ parsing
@dataclass(frozen=True)
class Threshold:
    bench: str | None
    metric: str
    value: float
    text: str


@dataclass(frozen=True)
class Tolerance:
    bench: str | None
    metric: str
    amount: float  # the drop allowed (>= 0)
    relative: bool
    text: str

    def allowed(self, baseline: float) -> float:
        return self.amount * abs(baseline) if self.relative else self.amount

    def describe(self) -> str:
        return f"-{self.amount * 100:g}% relative" if self.relative else f"-{self.amount:g} absolute"


def _number(text: str, option: str, what: str) -> tuple[float, bool]:
    """``(value, was_percent)``."""
    raw = text.strip()
    percent = raw.endswith("%")
    try:
        value = float(raw[:-1] if percent else raw)
    except ValueError:
        raise OptionError(option, f"{what}: expected a number like 0.7 or 70%, got {text!r}") from None
    if not math.isfinite(value):
        raise OptionError(option, f"{what}: expected a finite number, got {text!r}")
    return (value / 100 if percent else value), percent


def _target(text: str, option: str, benchmarks: list[str]) -> tuple[str | None, str]:
    bench, sep, metric = text.strip().partition(":")
    if not sep:
        bench, metric = None, text.strip()
    if bench is not None and bench not in benchmarks:
        raise OptionError(option, f"benchmark {bench!r} is not in this run (running: {', '.join(benchmarks)})")
    if not metric or not re.fullmatch(r"[A-Za-z0-9_@.\-]+", metric):
        raise OptionError(option, f"expected [BENCH:]METRIC, got {text.strip()!r}")
    return bench, metric


def parse_thresholds(text: str, benchmarks: list[str], option: str = "--specbench-fail-under") -> list[Threshold]:
    rules = []
    for part in (p for p in str(text or "").split(",") if p.strip()):
        target, sep, value = part.partition("=")
        if not sep:
            raise OptionError(option, f"expected [BENCH:]METRIC=VALUE, got {part.strip()!r}")
        bench, metric = _target(target, option, benchmarks)
        number, percent = _number(value, option, f"{metric}")
        if (percent or metric.startswith("pass@")) and not 0 <= number <= 1:
            # A rate runs 0-100%: such a gate could never pass (or never fail).
            raise OptionError(option, f"{part.strip()}: {metric} is a rate between 0 and 100% (0 to 1), "
                                      f"so {value.strip()} can never be {'met' if number > 1 else 'missed'}")
        rules.append(Threshold(bench, metric, number, part.strip()))
    return rules


def parse_tolerances(text: str, benchmarks: list[str], option: str = "--specbench-compare-fail") -> list[Tolerance]:
    rules = []
    for part in (p for p in str(text or "").split(",") if p.strip()):
        target, sep, tol = part.rpartition(":")
        if not sep or not target.strip():
            raise OptionError(option, f"expected [BENCH:]METRIC:TOLERANCE (e.g. pass@1:-2%), got {part.strip()!r}")
        bench, metric = _target(target, option, benchmarks)
        amount, percent = _number(tol, option, f"{metric} tolerance")
        if amount > 0:
            raise OptionError(option, f"{metric} tolerance is the drop allowed: write -{tol.strip()}, not {tol.strip()}")
        rules.append(Tolerance(bench, metric, -amount, percent, part.strip()))
    return rules


def parse_alpha(text: Any) -> float:
    try:
        alpha = float(text)
    except (TypeError, ValueError):
        raise OptionError("--specbench-alpha", f"expected a number in (0, 1), got {text!r}") from None
    if not 0 < alpha < 1:
        raise OptionError("--specbench-alpha", f"expected a number in (0, 1), got {text!r}")
    return alpha


# ---------------------------------------------------------- report helpers
def results_from_section(section: Mapping[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """A report's ``tasks`` as the ``results`` an adapter aggregates (errored checks left out)."""
    return {task_id: [{"index": s.get("index", i),
                       "checks": {c: v for c, v in s.get("checks", {}).items() if "error" not in v}}
                      for i, s in enumerate(task.get("samples", []))]
            for task_id, task in section.get("tasks", {}).items()}


def benchmark_version(adapter: Any) -> str:
    from .. import __version__

    version = getattr(adapter, "version", None)
    return str(version) if version else "specbench " + ".".join(__version__.split(".")[:2])


def section_extras(adapter: Any, results: Mapping[str, Any], metrics: Mapping[str, Any], settings: Any,
                   data_files: Mapping[str, str], cache_dir: Path | None = None,
                   tasks: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """What a report section carries beside its metrics: bootstrap CIs, version, data hashes,
    the adapter's ``metric_notes`` (optional), and the metrics without private keys.

    The intervals are a pure function of the results (fixed seed, fixed counts), so
    with ``cache_dir`` an identical re-run reads them instead of resampling again.
    """
    version = benchmark_version(adapter)
    cached = None
    if cache_dir is not None:
        clusters = {t: str(getattr(task, "cluster", t)) for t, task in (tasks or {}).items() if t in results}
        key = hashlib.sha256(json.dumps([adapter.name, version, results, metrics, clusters], sort_keys=True,
                                        default=str).encode()).hexdigest()
        cached = cache_dir / f"{key}.json"
    if cached is not None and cached.exists():
        ci = json.loads(cached.read_text())
    else:
        ci = dict(stats.bootstrap_ci(stats.AdapterAggregate(adapter, settings), results, metrics,
                                     tasks=_tasks_of(results, tasks)))
        if cached is not None:
            tmp = cached.with_name(f"{cached.name}.{os.getpid()}.tmp")
            tmp.write_text(json.dumps(ci))
            os.replace(tmp, cached)
    extras = {"metrics_ci": ci.pop("metrics_ci"), "metrics_ci_method": ci, "version": version,
              "data_files": dict(data_files)}
    notes = getattr(adapter, "metric_notes", None)  # optional: what a metric means, why it is n/a
    if callable(notes):
        extras["metric_notes"] = {str(k): str(v) for k, v in (notes(metrics, settings) or {}).items()}
    if any(layout.is_private(k) for k in metrics):
        # ``_``-prefixed metrics are data an adapter hands to its own ``figures``
        # (drawn before this): they never reach a report.
        extras["metrics"] = layout.public(metrics)
    return extras


def _probe_metrics(adapter: Any, checks: list[str], settings: Any) -> set[str] | None:
    """The metric names ``adapter`` reports (``Benchmark.metric_names``, required by the interface)."""
    return set(adapter.metric_names(settings))


# ------------------------------------------------------------------ the gate
class Gate:
    """Thresholds, baseline comparison and the readable reports of one run
    (``plugin/gate.py``'s ``GatePlugin`` adds the pytest hooks; the controller
    registers it, ``plugin/session.py``).

    Takes plain things: ``plan`` (the run's :class:`~pytest_specbench.engine.plan.RunPlan`:
    adapters, settings, checks, tasks, data digests), ``report`` (a callable
    giving the run's report once every result is in) and ``errors`` (a callable
    giving the run's harness errors and the number tolerated).
    """

    def __init__(self, plan: Any, report: Callable[[], dict[str, Any]], errors: Callable[[], tuple[int, int]]):
        self.plan, self._report, self._run_errors = plan, report, errors
        settings = plan.settings
        benchmarks = list(plan.adapters)
        self.thresholds = parse_thresholds(settings.option("specbench_fail_under"), benchmarks)
        self.tolerances = parse_tolerances(settings.option("specbench_compare_fail"), benchmarks)
        self.alpha = parse_alpha(settings.option("specbench_alpha") or 0.05)
        self.force = bool(settings.option("specbench_compare_force"))
        baseline = str(settings.option("specbench_baseline") or "")
        self.markdown = _path(settings, settings.option("specbench_markdown"))
        self.html = _path(settings, settings.option("specbench_html"))
        self.active = bool(self.thresholds or self.tolerances or baseline)
        self.known = {name: _probe_metrics(a, plan.checks_of(name), settings) for name, a in plan.adapters.items()}
        for rule in [*self.thresholds, *self.tolerances]:
            self._check_metric(rule, "--specbench-fail-under" if isinstance(rule, Threshold) else "--specbench-compare-fail")
        if self.tolerances and not baseline:
            raise OptionError("--specbench-compare-fail", "needs --specbench-baseline=REPORT.json to compare with")
        self.baseline_path = _path(settings, baseline)
        self.baseline = load_baseline(self.baseline_path) if self.baseline_path else None
        self.notes: list[str] = []
        if self.baseline is not None:
            self._check_baseline()
        self.errors: list[str] = []  # node ids of what else went wrong (the plugin's hooks collect them)
        self.verdict: dict[str, Any] | None = None
        self.junit: list[tuple[str, str]] = []  # the verdict as JUnit global properties (once finished)

    def _targets(self, rule) -> list[str]:
        if rule.bench:
            return [rule.bench]
        known = [b for b, names in self.known.items() if names is None or rule.metric in names]
        return known or list(self.plan.adapters)

    def _check_metric(self, rule, option: str) -> None:
        benches = [rule.bench] if rule.bench else list(self.plan.adapters)
        known = {b: self.known[b] for b in benches if self.known[b] is not None}
        if len(known) < len(benches):
            return  # an adapter we cannot probe: checked when the metrics exist
        if not any(rule.metric in names for names in known.values()):
            listing = "; ".join(f"{b}: {', '.join(sorted(n))}" for b, n in known.items())
            raise OptionError(option, f"unknown metric {rule.metric!r} (known: {listing})")

    def _check_baseline(self) -> None:
        base = self.baseline["benchmarks"]
        path = self.baseline_path
        common = [b for b in self.plan.adapters if b in base]
        if not common:
            raise DataError(path, None, f"baseline is a report of {', '.join(base) or 'no benchmark'}, "
                                        f"this run is {', '.join(self.plan.adapters)}")
        for rule in self.tolerances:
            for b in self._targets(rule):
                if b not in base:
                    raise DataError(path, None, f"baseline has no {b} results to compare {rule.metric} with "
                                                f"(it has: {', '.join(base)})")
                if rule.metric not in base[b]["metrics"]:
                    raise OptionError("--specbench-compare-fail",
                                      f"baseline {path} has no metric {rule.metric!r} for {b} "
                                      f"(it has: {', '.join(base[b]['metrics']) or 'none'})")
        problems = []
        for b in common:
            section = base[b]
            checks = self.plan.checks_of(b)
            if list(section.get("checks", [])) != checks:
                problems.append(f"{b} checks differ (baseline {','.join(section.get('checks', []))}; "
                                f"this run {','.join(checks)})")
            version = benchmark_version(self.plan.adapters[b])
            if section.get("version") and section["version"] != version:
                problems.append(f"{b} benchmark version differs (baseline {section['version']}; this run {version})")
            mine = self.plan.file_digests(b)
            theirs = section.get("data_files") or {Path(k).name: v for k, v in
                                                   self.baseline.get("manifest", {}).get("data_files", {}).items()}
            differ = sorted(n for n in mine if theirs.get(n) != mine[n])
            if differ:
                problems.append(f"{b} data hashes differ ({', '.join(differ)})")
        if problems and not self.force:
            raise DataError(path, None, "refusing to compare: " + "; ".join(problems)
                            + " (--specbench-compare-force compares anyway)")
        self.notes.extend(f"compared despite: {p}" for p in problems)

    def finish(self) -> None:
        """Verdict, JUnit properties, Markdown and HTML: once, before any other
        ``pytest_sessionfinish`` writes the JSON report or the JUnit XML."""
        if self.verdict is not None:
            return
        report = self._report()
        self.verdict = evaluate(report, self.baseline, self.thresholds, self.tolerances, self.alpha,
                                self.plan.adapters, self.active, self.notes, self.plan.settings)
        harness, tolerated = self._run_errors()
        self.verdict["errors"] = len(self.errors) + (harness if harness > tolerated else 0)
        self.verdict["harness_errors"] = harness
        self.junit = junit_properties(report, self.verdict)
        full = dict(report, gate=self.verdict)
        from .summary import html_report, markdown_summary

        text = markdown_summary(full)
        if self.markdown:
            _write(self.markdown, text)
        step = os.environ.get("GITHUB_STEP_SUMMARY")
        if step:
            with open(step, "a", encoding="utf-8") as fh:
                fh.write(text + "\n")
        if self.html:
            _write(self.html, html_report(full))

    def annotate(self, report: dict[str, Any]) -> None:
        if self.verdict is not None:
            report["gate"] = self.verdict


def _path(settings: Any, value: Any) -> Path | None:
    if not value:
        return None
    path = Path(str(value)).expanduser()
    return path if path.is_absolute() else Path(settings.config.invocation_params.dir) / path


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def load_baseline(path: Path) -> dict[str, Any]:
    if not path.is_file():
        raise OptionError("--specbench-baseline", f"file not found: {path}")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as exc:
        raise DataError(path, None, f"not a specbench JSON report (not JSON: {str(exc).splitlines()[0]})") from None
    benches = data.get("benchmarks") if isinstance(data, dict) else None
    if (not isinstance(benches, dict) or not benches
            or not all(isinstance(s, dict) and isinstance(s.get("metrics"), dict) and isinstance(s.get("tasks"), dict)
                       for s in benches.values())):
        raise DataError(path, None, "not a specbench JSON report (expected 'benchmarks' with 'metrics' and "
                                    "'tasks'; write one with --specbench-report)")
    return data


# --------------------------------------------------------------- verdicts
def _task_passed(samples: list[dict[str, Any]], check: str) -> bool | None:
    verdicts = [s["checks"][check].get("passed") for s in samples if check in s.get("checks", {})
                and "error" not in s["checks"][check]]
    return all(verdicts) if verdicts else None


def _task_borderline(samples: list[dict[str, Any]], check: str) -> bool:
    """Was a verdict of this task decided by CPU time at its limit (details ``borderline``:
    the call was measured again; see docs/timing.md)?"""
    return any(s.get("checks", {}).get(check, {}).get("borderline") for s in samples)


def flips(base: Mapping[str, Any], cand: Mapping[str, Any], checks: list[str]) -> dict[str, dict[str, list[str]]]:
    """Per check: tasks that newly fail / newly pass (a task passes when all its samples pass),
    and, of those, the ones whose items are marked borderline in either run (a verdict
    on CPU time at its limit), counted apart: ``newly_failing_borderline`` / ``newly_passing_borderline``."""
    out = {}
    for check in checks:
        newly_failing, newly_passing = [], []
        for task_id, samples in cand.items():
            if task_id not in base:
                continue
            was, now = _task_passed(base[task_id], check), _task_passed(samples, check)
            if was is True and now is False:
                newly_failing.append(task_id)
            elif was is False and now is True:
                newly_passing.append(task_id)
        timing = {t for t in newly_failing + newly_passing
                  if _task_borderline(base[t], check) or _task_borderline(cand[t], check)}
        out[check] = {"newly_failing": newly_failing, "newly_passing": newly_passing,
                      "newly_failing_borderline": [t for t in newly_failing if t in timing],
                      "newly_passing_borderline": [t for t in newly_passing if t in timing]}
    return out


def only_borderline_failing(flip_table: Mapping[str, Any] | None) -> int:
    """The number of newly failing tasks when every one of them is marked borderline
    (0 when there are none, or when any is not): a drop made only of timing at the
    limit, which does not fail the gate by itself."""
    failing = borderline = 0
    for f in (flip_table or {}).values():
        failing += len(f.get("newly_failing", []))
        borderline += len(f.get("newly_failing_borderline", []))
    return failing if failing and borderline == failing else 0


def evaluate(report: Mapping[str, Any], baseline: Mapping[str, Any] | None, thresholds: list[Threshold],
             tolerances: list[Tolerance], alpha: float, adapters: Mapping[str, Any], active: bool,
             notes: list[str] | None = None, settings: Any = None) -> dict[str, Any]:
    """The gate's verdict: every rule with its outcome, plus the comparison (if a baseline is given)."""
    benches = report["benchmarks"]
    rules: list[dict[str, Any]] = []
    for t in thresholds:
        for b in ([t.bench] if t.bench else [b for b in benches if t.metric in benches[b]["metrics"]] or list(benches)):
            value = benches.get(b, {}).get("metrics", {}).get(t.metric)
            ci = benches.get(b, {}).get("metrics_ci", {}).get(t.metric)
            if not stats.is_number(value):
                rules.append({"kind": "threshold", "rule": t.text, "benchmark": b, "metric": t.metric, "passed": False,
                              "why": f"{t.metric} was not computed in this run "
                                     f"(computed: {', '.join(benches.get(b, {}).get('metrics', {})) or 'none'})"})
                continue
            ok = value >= t.value - 1e-12
            rules.append({"kind": "threshold", "rule": t.text, "benchmark": b, "metric": t.metric, "value": value,
                          "ci": ci, "threshold": t.value, "passed": ok,
                          "why": f"{_pct(value)} {'>=' if ok else '<'} {_pct(t.value)}"})
    comparison: dict[str, Any] = {}
    notes = list(notes or [])
    if baseline is not None:
        for b, section in benches.items():
            if b not in baseline["benchmarks"]:
                continue
            if section.get("metrics_error"):  # its metrics raised: nothing to compare (the report says why)
                notes.append(f"{b}: not compared with the baseline: its metrics were not computed (metrics_error)")
                continue
            try:
                comparison[b] = compare_section(baseline["benchmarks"][b], section, adapters[b], alpha, settings)
            except Exception as exc:  # noqa: BLE001 - a family's aggregate on the baseline: one line, the report written
                notes.append(metrics_error_line(b, "the baseline comparison", exc) + " (not compared)")
        for tol in tolerances:
            targets = [tol.bench] if tol.bench else [b for b in comparison if tol.metric in benches[b]["metrics"]
                                                     or tol.metric in baseline["benchmarks"][b]["metrics"]]
            for b in targets:
                rules.append(_compare_rule(tol, b, comparison.get(b, {}).get("metrics", {}).get(tol.metric), alpha,
                                           comparison.get(b, {}).get("flips")))
    passed = all(r["passed"] for r in rules)
    # What else changed between the two runs (a JDK, a limit, a package, a data file), beside the deltas.
    fingerprint_differences = (fingerprint.differences(baseline.get("manifest", {}).get("fingerprint"),
                                                       report.get("manifest", {}).get("fingerprint"))
                               if baseline is not None else [])
    return {"active": active, "passed": passed, "alpha": alpha, "rules": rules, "comparison": comparison,
            "baseline": (baseline or {}).get("manifest", {}).get("model", {}).get("spec") if baseline else None,
            "notes": notes, "fingerprint_differences": fingerprint_differences}


def _tasks_of(results: Mapping[str, Any], tasks: Mapping[str, Any] | None) -> dict[str, Any]:
    """The tasks of the results (a baseline report compared without its data has none:
    each task is then its own cluster and ``aggregate`` gets no task data)."""
    return {t: tasks[t] for t in results if t in tasks} if tasks else {}


def compare_section(base_section: Mapping[str, Any], section: Mapping[str, Any], adapter: Any,
                    alpha: float, settings: Any, tasks: Mapping[str, Any] | None = None) -> dict[str, Any]:
    base, cand = results_from_section(base_section), results_from_section(section)
    # Rates only (floats); counts such as cvts_run describe the run, not the model.
    metrics = [m for m, v in section["metrics"].items()
               if isinstance(v, float) and stats.is_number(base_section["metrics"].get(m))]
    deltas = stats.paired_deltas(stats.AdapterAggregate(adapter, settings), base, cand, metrics, level=1 - alpha,
                                 tasks=_tasks_of({**base, **cand}, tasks))
    for m, d in deltas.items():
        per_task = d.pop("per_task", None)
        if d.get("binary") and per_task:
            pairs = list(zip(per_task["baseline"], per_task["candidate"]))
            nf = sum(1 for x, y in pairs if x == 1.0 and y == 0.0)
            np_ = sum(1 for x, y in pairs if x == 0.0 and y == 1.0)
            d["mcnemar"] = {"newly_failing": nf, "newly_passing": np_, "p": stats.mcnemar_exact(nf, np_)}
    checks = [c for c in section.get("checks", []) if c in base_section.get("checks", [])]
    only_base = [t for t in base if t not in cand]
    only_cand = [t for t in cand if t not in base]
    return {"metrics": deltas, "flips": flips(base, cand, checks), "tasks_compared": len([t for t in cand if t in base]),
            "only_in_baseline": len(only_base), "only_in_candidate": len(only_cand)}


def _compare_rule(tol: Tolerance, bench: str, d: Mapping[str, Any] | None, alpha: float,
                  flip_table: Mapping[str, Any] | None = None) -> dict[str, Any]:
    rule = {"kind": "compare", "rule": tol.text, "benchmark": bench, "metric": tol.metric,
            "tolerance": tol.describe()}
    if not d or d.get("delta") is None:
        return {**rule, "passed": False, "why": f"{tol.metric} is missing from this run or the baseline"}
    allowed = tol.allowed(d["baseline"])
    beyond = d["delta"] < -allowed - 1e-12
    if d.get("mcnemar"):
        p = d["mcnemar"]["p"]
        significant = p < alpha and d["delta"] < 0
        test = f"McNemar exact p={p:.3g} ({d['mcnemar']['newly_failing']} newly failing, " \
               f"{d['mcnemar']['newly_passing']} newly passing)"
    else:
        significant = d["ci"] is not None and d["ci"][1] < 0
        p = None
        test = f"paired bootstrap {100 * (1 - alpha):g}% CI {'below 0' if significant else 'includes 0 or above'}"
    regression = beyond and significant
    # A drop whose newly failing tasks are all borderline (CPU time at the limit,
    # measured again and still over it, or under it in the baseline) says more
    # about the machine than the model: reported, but not a regression by itself.
    timing_only = only_borderline_failing(flip_table) if regression else 0
    parts = [f"delta {_signed(d['delta'])} (baseline {_pct(d['baseline'])} -> {_pct(d['candidate'])}, "
             f"{100 * (1 - alpha):g}% CI {_ci(d['ci'])})",
             f"beyond tolerance ({tol.describe()} = {_signed(-allowed)}): {'yes' if beyond else 'no'}",
             f"significant at alpha={alpha:g}: {'yes' if significant else 'no'} [{test}]"]
    if timing_only:
        parts.append(f"all {timing_only} newly failing task(s) are borderline (CPU time at the limit): "
                     "not failing the gate by itself")
    return {**rule, "passed": not regression or bool(timing_only), "beyond_tolerance": beyond,
            "significant": significant, "p": p, "delta": d["delta"], "ci": d["ci"], "allowed": allowed,
            "only_borderline": bool(timing_only), "why": "; ".join(parts)}


def _pct(value: Any) -> str:
    if isinstance(value, float):
        return f"{100 * value:.2f}%"
    return str(value)


def _signed(value: float) -> str:
    return f"{100 * value:+.2f} pp"


def _ci(ci: Any) -> str:
    return f"[{_signed(ci[0])}, {_signed(ci[1])}]" if ci else "n/a"


def render_gate(verdict: Mapping[str, Any]) -> list[str]:
    lines = []
    for b, comp in verdict.get("comparison", {}).items():
        lines.append(f"specbench {b} vs baseline {verdict.get('baseline')} ({comp['tasks_compared']} paired tasks"
                     + (f"; {comp['only_in_baseline']} only in baseline" if comp["only_in_baseline"] else "")
                     + (f"; {comp['only_in_candidate']} only in this run" if comp["only_in_candidate"] else "") + ")")
        for m, d in comp["metrics"].items():
            if d.get("delta") is None:
                continue
            extra = ""
            if d.get("mcnemar"):
                mc = d["mcnemar"]
                extra = f"  McNemar p={mc['p']:.3g} (-{mc['newly_failing']} / +{mc['newly_passing']})"
            lines.append(f"  {m}: {_pct(d['baseline'])} -> {_pct(d['candidate'])}  delta {_signed(d['delta'])} "
                         f"{100 * d['level']:g}% CI {_ci(d['ci'])}{extra}")
        for check, f in comp["flips"].items():
            if f["newly_failing"] or f["newly_passing"]:
                lines.append(f"  {check} flips: {len(f['newly_failing'])} newly failing"
                             f" ({_few(f['newly_failing'])}), {len(f['newly_passing'])} newly passing"
                             f" ({_few(f['newly_passing'])})")
            bf, bp = f.get("newly_failing_borderline", []), f.get("newly_passing_borderline", [])
            if bf or bp:
                lines.append(f"    of which borderline (CPU time at the limit, measured again): {len(bf)} newly failing"
                             f" ({_few(bf)}), {len(bp)} newly passing ({_few(bp)})")
    differences = verdict.get("fingerprint_differences") or []
    if differences:
        lines.append(f"specbench fingerprint vs baseline: {len(differences)} difference{'s' * (len(differences) > 1)}")
        lines.extend(f"  {line}" for line in differences)
    if not verdict.get("active"):
        return lines
    status = "PASSED" if verdict["passed"] and not verdict.get("errors") else "FAILED"
    lines.append(f"specbench gate: {status}")
    for r in verdict["rules"]:
        mark = "ok  " if r["passed"] else "FAIL"
        what = (f">= {_pct(r['threshold'])}" if r["kind"] == "threshold" and "threshold" in r else
                "minimum" if r["kind"] == "threshold" else f"vs baseline, tolerance {r['tolerance']}")
        lines.append(f"  [{mark}] {r['benchmark']}:{r['metric']} {what}: {r['why']}")
        if r["kind"] == "compare" and "beyond_tolerance" in r:
            held = [w for w, ok in (("beyond tolerance", r["beyond_tolerance"]), ("significant", r["significant"])) if ok]
            if len(held) == 2 and r.get("only_borderline"):
                lines.append("         -> beyond tolerance and significant, but made only of borderline flips "
                             "(timing at the limit): not failing the gate by itself")
            else:
                lines.append("         -> " + ("regression: beyond tolerance and significant" if len(held) == 2 else
                                               f"not a regression ({'only ' + held[0] if held else 'neither beyond tolerance nor significant'})"))
    if verdict.get("errors"):
        lines.append(f"  [FAIL] {verdict['errors']} error(s) (E: harness beyond --specbench-max-errors, collection, "
                     "ordinary tests): the run fails regardless of the gate")
    lines.extend(f"  note: {n}" for n in verdict.get("notes", []))
    return lines


def _few(ids: list[str], n: int = 5) -> str:
    return ", ".join(ids[:n]) + (" ..." if len(ids) > n else "") if ids else "-"


def junit_properties(report: Mapping[str, Any], verdict: Mapping[str, Any]) -> list[tuple[str, str]]:
    props = []
    for b, section in report["benchmarks"].items():
        for m, v in section["metrics"].items():
            props.append((f"specbench.{b}.{m}", f"{v:.6g}" if isinstance(v, float) else str(v)))
            ci = section.get("metrics_ci", {}).get(m)
            if ci:
                props.append((f"specbench.{b}.{m}.ci95", f"{ci[0]:.6g},{ci[1]:.6g}"))
        props.append((f"specbench.{b}.errors", str(section.get("errors", 0))))
    if verdict.get("active"):
        props.append(("specbench.gate", "passed" if verdict["passed"] and not verdict.get("errors") else "failed"))
    for b, comp in verdict.get("comparison", {}).items():
        for m, d in comp["metrics"].items():
            if d.get("delta") is not None:
                props.append((f"specbench.{b}.{m}.delta", f"{d['delta']:.6g}"))
    return props
