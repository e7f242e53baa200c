"""The JSON report and the end-of-run terminal table.

Report schema::

    {"specbench_version": ..., "manifest": {...},
     "benchmarks": {NAME: {"metrics": {...}, "errors": N, "checks": [...], "data": ...,
                           "headline": [METRIC, ...],            # what the terminal summary prints
                           "skipped": {REASON: N},                # items skipped (a missing toolchain, ...)
                           "skipped_items": {REASON: ["TASK::SAMPLE::CHECK", ...]},
                           "metric_notes": {METRIC: TEXT},        # what a metric means / why it is n/a
                           "figures": [{...}],                    # the adapter's plots, as data
                           "metrics_ci": {METRIC: [lo, hi]},      # 95% percentile bootstrap over tasks
                           "metrics_ci_method": {"level", "resamples", "seed", "unit"},
                           "metrics_error": "one line",           # only when the family's metrics raised
                           "roles": {ROLE: SPEC},                 # the models in roles (CIFE's judge)
                           "version": ..., "data_files": {FILE_NAME: sha256},
                           "tasks": {TASK_ID: {"samples": [{"index": i,
                                     "checks": {CHECK: {"passed": bool, ...details,
                                                        "message": "the failure's one line"}}}]}}}},
     "gate": {...}}   # with gate options or a baseline: see reports/gate.py

Results are kept by (benchmark, task, sample, check) and emitted in dataset
order, so the report does not depend on the order xdist finished items in.
"""
from __future__ import annotations

import json
import os
import traceback
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping

from .layout import Breakdown, fmt, is_undefined, layout, public, shown_path, tasks_line, undefined_notes


class ResultStore:
    def __init__(self) -> None:
        self._results: dict[str, dict[str, dict[int, dict[str, dict[str, Any]]]]] = {}
        self._errors: dict[str, int] = {}
        self._skips: dict[str, dict[str, int]] = {}  # benchmark -> reason -> items
        self._skipped_items: dict[str, dict[str, list[str]]] = {}  # benchmark -> reason -> item ids
        self.isolation: dict[str, Any] = {}

    def add(self, outcome: dict[str, Any]) -> None:
        checks = (self._results.setdefault(outcome["benchmark"], {}).setdefault(outcome["task_id"], {})
                  .setdefault(outcome["sample"], {}))
        entry = {**outcome["details"], "passed": outcome["passed"]}
        # The failure's one line (what the terminal prints after FAILED) goes to the
        # reports too: a failed CVT check says which input was accepted.
        if not outcome["passed"] and outcome.get("message") and "message" not in entry:
            entry["message"] = outcome["message"]
        checks[outcome["check"]] = entry
        if outcome.get("isolation") and not self.isolation:
            self.isolation = outcome["isolation"]

    def add_error(self, error: dict[str, Any]) -> None:
        checks = (self._results.setdefault(error["benchmark"], {}).setdefault(error["task_id"], {})
                  .setdefault(error["sample"], {}))
        checks[error["check"]] = {"error": error["error"]}
        self._errors[error["benchmark"]] = self._errors.get(error["benchmark"], 0) + 1

    def add_skip(self, benchmark: str, reason: str, nodeid: str | None = None) -> None:
        reasons = self._skips.setdefault(benchmark, {})
        reasons[reason] = reasons.get(reason, 0) + 1
        parts = (nodeid or "").split("::")
        if len(parts) == 5:  # specbench::BENCH::TASK::SAMPLE::CHECK
            self._skipped_items.setdefault(benchmark, {}).setdefault(reason, []).append("::".join(parts[2:]))

    def skips(self, benchmark: str) -> dict[str, int]:
        return dict(self._skips.get(benchmark, {}))

    def skipped_items(self, benchmark: str) -> dict[str, list[str]]:
        """``{reason: ["TASK::SAMPLE::CHECK", ...]}`` (sorted: independent of xdist's order)."""
        return {reason: sorted(items) for reason, items in self._skipped_items.get(benchmark, {}).items()}

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


def metrics_error_line(name: str, what: str, exc: BaseException) -> str:
    """One line saying which part of a family's metrics raised what, and where."""
    frames = traceback.extract_tb(exc.__traceback__)
    where = ""
    if frames:
        last = frames[-1]
        where = f" at {'/'.join(Path(last.filename).parts[-2:])}:{last.lineno}"
    text = " ".join(str(exc).split())[:200]
    return f"{name}: {what} raised {type(exc).__name__}{': ' + text if text else ''}{where}"


def metric_sections(name: str, adapter: Any, results: Mapping[str, Any], tasks: Mapping[str, Any] | None,
                    settings: Any, extras: Callable[[Mapping[str, Any]], Mapping[str, Any]]) -> dict[str, Any]:
    """The metric parts of one benchmark's report section: ``metrics``, ``figures``,
    ``warnings`` and ``extras(metrics)`` (bootstrap intervals, notes, version).

    A report is always written: a family whose ``aggregate`` raises (a KeyError on an
    outcome its metrics never met, say a refused answer's details) gets empty metrics
    and ``metrics_error``, one line naming the family, the part and where it raised;
    the items' verdicts (``tasks``), skips and errors are written as usual.  A part
    after ``aggregate`` that raises (figures, warnings, the bootstrap) is left out
    with its own line in ``metrics_error`` and the metrics kept.  For every family:
    this is the shared report code, not any adapter's."""
    errors: list[str] = []
    try:
        metrics = dict(adapter.aggregate(results, tasks, settings))
    except Exception as exc:  # noqa: BLE001 - any family's bug or unforeseen outcome: one line, the report written
        metrics = {}
        errors.append(metrics_error_line(name, "aggregate", exc) + " (metrics not computed; verdicts below)")
    out: dict[str, Any] = {"metrics": metrics}
    for part in ("figures", "warnings"):  # optional adapter methods, built from the metrics
        method = getattr(adapter, part, None)
        if metrics and callable(method):
            try:
                out[part] = list(method(metrics, settings))
            except Exception as exc:  # noqa: BLE001
                errors.append(metrics_error_line(name, part, exc))
    try:
        out.update(extras(metrics))
    except Exception as exc:  # noqa: BLE001 - without intervals, the metrics still stand
        out.update(metrics_ci={}, metrics_ci_method={})
        errors.append(metrics_error_line(name, "the bootstrap and notes", exc) + " (no confidence intervals)")
    if errors:
        out["metrics_error"] = "; ".join(errors)
    return out


def _fmt(value: Any, name: str | None = None) -> str:
    return fmt(value, name=name)


def _shown_metrics(bench: dict[str, Any]) -> tuple[list[str], int]:
    """The metrics the terminal summary prints: the adapter's headline
    (``metric_names``) when the report has it, else every scalar metric;
    breakdowns (dicts, lists, ``_``-prefixed keys) stay in the JSON report."""
    metrics = public(bench["metrics"])
    scalar = [k for k, v in metrics.items() if v is None or isinstance(v, (int, float, str))]
    headline = bench.get("headline")
    shown = [k for k in headline if k in scalar] if headline else scalar
    return shown, len(metrics) - len(shown)


# The terminal draws a breakdown as a grid (metric by part) only when it has this
# many cells; a smaller one is a few lines with the full metric names.
GRID_MIN_CELLS = 6


def render_summary(report: dict[str, Any]) -> list[str]:
    lines = []
    for name, bench in report["benchmarks"].items():
        where = "bundled sample suite" if bench["data"] == "bundled" else shown_path(bench["data"])
        n_tasks = len(bench["tasks"])
        lines.append(f"specbench {name} ({where}; {tasks_line(bench)}; model "
                     f"{report['manifest']['model'].get('spec')})")
        skipped = bench.get("skipped") or {}
        if bench.get("metrics_error"):
            lines.append(f"  metrics_error: {bench['metrics_error']}")
        for role, spec in (bench.get("roles") or {}).items():
            lines.append(f"  {role}: {spec}")
        if (not bench["metrics"] and not bench.get("metrics_error")) or not n_tasks:
            lines.append("  no results" + (f": all {sum(skipped.values())} item(s) were skipped (below)"
                                           if skipped and not n_tasks else ""))
        shown, hidden = _shown_metrics(bench) if n_tasks else ([], 0)
        metrics = bench["metrics"]
        cis = bench.get("metrics_ci", {})
        grid = layout({k: metrics[k] for k in shown}, shown)
        as_lines = list(grid.single)
        grids = []
        for b in grid.breakdowns:
            if len(b.prefixes) > 1 and len(b.parts) > 1 and len(b.cell) >= GRID_MIN_CELLS:
                grids.append(b)
            else:
                as_lines += list(b.cell.values())
        as_lines.sort(key=shown.index)
        width = max((len(k) for k in as_lines), default=0)
        for key in as_lines:
            value = metrics[key]
            ci = cis.get(key)
            text = (f"{_fmt(value, key)}  [95% CI {_fmt(ci[0], key)}, {_fmt(ci[1], key)}]"
                    if ci and isinstance(value, float) and not is_undefined(value) else _fmt(value, key))
            lines.append(f"  {key.ljust(width)}  {text}")
        for b in grids:
            lines += _grid_lines(b, metrics)
        if any(len(b.cell) < len(b.prefixes) * len(b.parts) for b in grids):
            lines.append("  (–: the metric does not exist for that part)")
        if hidden:
            lines.append(f"  (+{hidden} more metric(s) in the JSON, markdown and HTML reports)")
        undefined = [k for k in shown if is_undefined(metrics[k])]
        if undefined:
            lines += [f"  {line}" for line in undefined_notes(undefined, bench.get("metric_notes") or {})]
        if bench["errors"]:
            lines.append(f"  {'errors'.ljust(width)}  {bench['errors']} (harness errors, not counted as model failures)")
        for reason, count in skipped.items():
            lines.append(f"  skipped {count} item(s): {reason}")
        for warning in bench.get("warnings") or ():
            lines.append(f"  warning: {warning}")
    return lines


def _grid_lines(b: Breakdown, metrics: dict[str, Any]) -> list[str]:
    """``metric/part`` keys as a grid: one row per metric, one column per part
    (split into several blocks when the parts do not fit in ~110 columns)."""
    corner = "metric[part]" if b.bracket else "metric/part"
    label_w = max(len(corner), *(len(p) for p in b.prefixes))
    cells = {(p, q): (_fmt(metrics[k], k) if k in metrics else "–") for (p, q), k in b.cell.items()}
    widths = {q: max(len(q), *(len(cells.get((p, q), "–")) for p in b.prefixes)) for q in b.parts}
    blocks, block, used = [], [], label_w
    for q in b.parts:
        if block and used + 2 + widths[q] > 110:
            blocks.append(block)
            block, used = [], label_w
        block.append(q)
        used += 2 + widths[q]
    blocks.append(block)
    out = []
    for block in blocks:
        out.append("  " + corner.ljust(label_w) + "".join("  " + q.rjust(widths[q]) for q in block))
        for p in b.prefixes:
            out.append("  " + p.ljust(label_w) + "".join("  " + cells.get((p, q), "–").rjust(widths[q])
                                                         for q in block))
    return out
