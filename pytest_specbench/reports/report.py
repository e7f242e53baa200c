"""The JSON report and the end-of-run terminal table.

Report schema::

    {"specbench_version": ..., "manifest": {...},
     "benchmarks": {NAME: {"metrics": {...}, "errors": N, "checks": [...], "data": ...,
                           "metrics_ci": {METRIC: [lo, hi]},      # 95% percentile bootstrap over tasks
                           "metrics_ci_method": {"level", "resamples", "seed", "unit"},
                           "version": ..., "data_files": {FILE_NAME: sha256},
                           "tasks": {TASK_ID: {"samples": [{"index": i,
                                     "checks": {CHECK: {"passed": bool, ...details}}}]}}}},
     "gate": {...}}   # with gate options or a baseline: see reports/gate.py

Results are kept by (benchmark, task, sample, check) and emitted in dataset
order, so the report does not depend on the order xdist finished items in.
"""
from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any, Iterable


class ResultStore:
    def __init__(self) -> None:
        self._results: dict[str, dict[str, dict[int, dict[str, dict[str, Any]]]]] = {}
        self._errors: dict[str, int] = {}
        self._skips: dict[str, dict[str, int]] = {}  # benchmark -> reason -> items
        self.isolation: dict[str, Any] = {}

    def add(self, outcome: dict[str, Any]) -> None:
        checks = (self._results.setdefault(outcome["benchmark"], {}).setdefault(outcome["task_id"], {})
                  .setdefault(outcome["sample"], {}))
        checks[outcome["check"]] = {**outcome["details"], "passed": outcome["passed"]}
        if outcome.get("isolation") and not self.isolation:
            self.isolation = outcome["isolation"]

    def add_error(self, error: dict[str, Any]) -> None:
        checks = (self._results.setdefault(error["benchmark"], {}).setdefault(error["task_id"], {})
                  .setdefault(error["sample"], {}))
        checks[error["check"]] = {"error": error["error"]}
        self._errors[error["benchmark"]] = self._errors.get(error["benchmark"], 0) + 1

    def add_skip(self, benchmark: str, reason: str) -> None:
        reasons = self._skips.setdefault(benchmark, {})
        reasons[reason] = reasons.get(reason, 0) + 1

    def skips(self, benchmark: str) -> dict[str, int]:
        return dict(self._skips.get(benchmark, {}))

    def error_count(self, benchmark: str) -> int:
        return self._errors.get(benchmark, 0)

    def results(self, benchmark: str, order: Iterable[str]) -> dict[str, list[dict[str, Any]]]:
        """``{task_id: [{"index": i, "checks": {...}}]}`` without errored checks (for metrics)."""
        out = {}
        tasks = self._results.get(benchmark, {})
        for task_id in order:
            if task_id in tasks:
                out[task_id] = [{"index": i, "checks": {c: v for c, v in checks.items() if "error" not in v}}
                                for i, checks in sorted(tasks[task_id].items())]
        return out

    def tasks_section(self, benchmark: str, order: Iterable[str]) -> dict[str, Any]:
        tasks = self._results.get(benchmark, {})
        return {task_id: {"samples": [{"index": i, "checks": dict(sorted(checks.items()))}
                                      for i, checks in sorted(tasks[task_id].items())]}
                for task_id in order if task_id in tasks}

    @staticmethod
    def write(report: dict[str, Any], path: Path) -> None:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(json.dumps(report, indent=1, sort_keys=False) + "\n", encoding="utf-8")
        os.replace(tmp, path)


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        # nan: the metric is undefined on these results (e.g. an agreement with no item judged by both)
        return "n/a" if math.isnan(value) else f"{100 * value:.2f}%"
    return str(value)


def _shown_metrics(bench: dict[str, Any]) -> tuple[list[str], int]:
    """The metrics the terminal summary prints: the adapter's headline
    (``metric_names``) when the report has it, else every scalar metric;
    breakdowns (dicts, lists, ``_``-prefixed keys) stay in the JSON report."""
    metrics = bench["metrics"]
    scalar = [k for k, v in metrics.items()
              if not k.startswith("_") and (v is None or isinstance(v, (int, float, str)))]
    headline = bench.get("headline")
    shown = [k for k in headline if k in scalar] if headline else scalar
    return shown, len(metrics) - len(shown)


def render_summary(report: dict[str, Any]) -> list[str]:
    lines = []
    for name, bench in report["benchmarks"].items():
        where = "bundled sample suite" if bench["data"] == "bundled" else bench["data"]
        n_tasks = len(bench["tasks"])
        lines.append(f"specbench {name} ({where}; {n_tasks} tasks evaluated; model "
                     f"{report['manifest']['model'].get('spec')})")
        if not bench["metrics"]:
            lines.append("  no results")
        shown, hidden = _shown_metrics(bench)
        width = max((len(k) for k in shown), default=0)
        cis = bench.get("metrics_ci", {})
        for key in shown:
            value = bench["metrics"][key]
            ci = cis.get(key)
            text = f"{_fmt(value)}  [95% CI {_fmt(ci[0])}, {_fmt(ci[1])}]" if ci and isinstance(value, float) else _fmt(value)
            lines.append(f"  {key.ljust(width)}  {text}")
        if hidden:
            lines.append(f"  (+{hidden} breakdown metric(s) in the JSON report)")
        if bench["errors"]:
            lines.append(f"  {'errors'.ljust(width)}  {bench['errors']} (harness errors, not counted as model failures)")
        for reason, count in (bench.get("skipped") or {}).items():
            lines.append(f"  skipped {count} item(s): {reason}")
        for warning in bench.get("warnings") or ():
            lines.append(f"  warning: {warning}")
    return lines
