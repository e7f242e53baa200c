"""Reports people read: a Markdown summary (GitHub step summary) and one
self-contained HTML file (inline CSS/JS; plots as inline SVG when the ``html``
extra, i.e. matplotlib, is installed).

Both take the JSON report with its ``gate`` section (see :mod:`.gate`).
"""
from __future__ import annotations

import html
import io
import re
from typing import Any, Mapping, Sequence

from .layout import (Breakdown, Layout, PerItem, cut, fmt, is_coefficient, is_undefined, layout, note_for,
                     shown_path, tasks_line, undefined_notes)
from .stats import is_number

TOP_FLIPS = 10
MD_FAILURES = 30  # failing items listed with their reason in the Markdown summary (all: JSON, HTML)
SKIP_EXAMPLES = 3  # item ids shown per skip reason (all of them are in the JSON report)


def _pct(value: Any, name: str | None = None) -> str:
    """A value as every report writes it (rates as %, undefined as n/a; see :func:`.layout.fmt`)."""
    return fmt(value, name=name)


def _where(section: Mapping[str, Any]) -> str:
    return "bundled sample suite" if section.get("data") == "bundled" else shown_path(section.get("data"))


def _layout(section: Mapping[str, Any]) -> Layout:
    return layout(section["metrics"], section.get("headline") or ())


def _skip_lines(section: Mapping[str, Any]) -> list[tuple[int, str, list[str]]]:
    """``(items, reason, example item ids)`` per skip reason, as the terminal lists them."""
    items = section.get("skipped_items") or {}
    return [(count, reason, list(items.get(reason, []))[:SKIP_EXAMPLES])
            for reason, count in (section.get("skipped") or {}).items()]


def _counts_line(section: Mapping[str, Any]) -> str:
    n_tasks = len(section["tasks"])
    skipped = sum((section.get("skipped") or {}).values())
    line = f"{tasks_line(section)} on {_where(section)}; {section.get('errors', 0)} harness errors"
    if skipped:
        line += f"; {skipped} item(s) skipped" + (" (every item: nothing was evaluated)" if not n_tasks else "")
    return line


def _part_label(b: Breakdown) -> str:
    """What the parts of a breakdown are, from its prefixes' names (``csr_by_source`` -> source)."""
    bys = {p.split("_by_", 1)[1] for p in b.prefixes if "_by_" in p}
    if len(bys) == 1 and all("_by_" in p for p in b.prefixes):
        return bys.pop()
    heads = {p.split("_", 1)[0] for p in b.prefixes}
    if len(heads) == 1 and len(b.prefixes) > 1:
        return heads.pop()
    return "group" if b.bracket else "part"


def _checks_label(checks: Sequence[str]) -> str:
    """Parametrised checks (CIFE's ``adherence[2-security-and-privacy]``, one
    per constraint) are listed once with their count: the full list can run to
    hundreds of names and is in the JSON report."""
    return ", ".join(col if len(members) == 1 else f"{col} ×{len(members)}"
                     for col, members in _check_columns(checks))


def _pp(value: Any, name: str | None = None) -> str:
    """A difference: in percentage points, or plain for a coefficient (kappa)."""
    if not is_number(value):
        return ""
    return f"{value:+.2f}" if is_coefficient(name) else f"{100 * value:+.2f} pp"


def _ci(ci: Any, fmt=_pct, name: str | None = None) -> str:
    if not ci:
        return ""
    return f"{fmt(ci[0], name)} – {fmt(ci[1], name)}" if fmt is _pct else f"{fmt(ci[0])} – {fmt(ci[1])}"


def _rate(value: Any) -> bool:
    return isinstance(value, float)


def _gate_status(gate: Mapping[str, Any] | None) -> str | None:
    if not gate or not gate.get("active"):
        return None
    return "passed" if gate["passed"] and not gate.get("errors") else "failed"


# ---------------------------------------------------------------- Markdown
def markdown_summary(report: Mapping[str, Any]) -> str:
    gate = report.get("gate") or {}
    model = report.get("manifest", {}).get("model", {}).get("spec")
    out = [f"## specbench: {', '.join(report['benchmarks'])} — model `{model}`", ""]
    status = _gate_status(gate)
    if status:
        out += [f"**Gate: {'✅ passed' if status == 'passed' else '❌ failed'}**", ""]
    for name, section in report["benchmarks"].items():
        comp = gate.get("comparison", {}).get(name)
        out += [f"### {name}", "", _counts_line(section) + "."
                + (f" Compared with baseline `{gate.get('baseline')}` on {comp['tasks_compared']} paired tasks."
                   if comp else ""), ""]
        out += _roles_and_error_lines(section)
        skips = _skip_lines(section)
        if skips:
            out += [f"- skipped {count} item(s): {reason}" + (f" (e.g. {', '.join(f'`{i}`' for i in ids)})" if ids else "")
                    for count, reason, ids in skips] + [""]
        if not section["tasks"]:
            continue
        grid = _layout(section)
        out += _md_metric_table(section, comp, grid.single) + [""]
        undefined = [m for m in _shown_keys(grid) if is_undefined(section["metrics"][m])]
        if undefined:
            out += [f"_{line.strip()}_" for line in undefined_notes(undefined, section.get("metric_notes") or {})] + [""]
        for b in grid.breakdowns:
            out += _md_breakdown(section, comp, b) + [""]
        for p in grid.per_item:
            out += [f"- `{n}`: {p.summary(n)} (each value in the JSON report)" for n in p.names] + [""]
        out += _md_failures(section)
        if comp:
            for check, f in comp["flips"].items():
                nf, np_ = f["newly_failing"], f["newly_passing"]
                if not nf and not np_:  # one line per check that changed (CIFE has one check per constraint)
                    continue
                out.append(f"**{check} flips:** {len(nf)} newly failing, {len(np_)} newly passing")
                bf, bp = f.get("newly_failing_borderline", []), f.get("newly_passing_borderline", [])
                if bf or bp:
                    out.append(f"- of which borderline (CPU time at the limit): {len(bf)} newly failing, "
                               f"{len(bp)} newly passing")
                if nf:
                    out.append(f"- newly failing: {_ids(nf)}")
                if np_:
                    out.append(f"- newly passing: {_ids(np_)}")
                out.append("")
    if gate.get("fingerprint_differences"):
        out += ["### What differs from the baseline's run (fingerprint)", ""]
        out += [f"- {_md_cell(line)}" for line in gate["fingerprint_differences"]] + [""]
    if gate.get("rules") or status:
        out += ["### Gate", ""]
        for r in gate.get("rules", []):
            out.append(f"- {'✅' if r['passed'] else '❌'} `{r['benchmark']}:{r['metric']}` "
                       f"{_rule_label(r)}: {r['why']}")
            if r["kind"] == "compare" and "beyond_tolerance" in r:
                out.append(f"  - beyond tolerance: **{'yes' if r['beyond_tolerance'] else 'no'}**, "
                           f"significant: **{'yes' if r['significant'] else 'no'}** → "
                           + ("regression" if not r["passed"] else "not a regression"))
        if gate.get("errors"):
            out.append(f"- ❌ {gate['errors']} harness/collection error(s): the run fails regardless")
        for note in gate.get("notes", []):
            out.append(f"- note: {note}")
        out.append("")
    return "\n".join(out)


def failures(section: Mapping[str, Any]) -> list[tuple[str, str, str]]:
    """``(TASK::SAMPLE::CHECK, "F" or "E", its one-line reason)`` of each failed or errored item."""
    out = []
    for task_id, task in section.get("tasks", {}).items():
        for s in task.get("samples", []):
            for check, v in s.get("checks", {}).items():
                item = f"{task_id}::{s.get('index', '')}::{check}"
                if "error" in v:
                    out.append((item, "E", str(v["error"])))
                elif not v.get("passed"):
                    out.append((item, "F", str(v.get("message") or v.get("reason") or "")))
    return out


def _md_failures(section: Mapping[str, Any]) -> list[str]:
    """Each failure's one-line reason (the first MD_FAILURES; the HTML and JSON reports have all)."""
    found = failures(section)
    if not found:
        return []
    shown = found[:MD_FAILURES]
    more = f"; the first {len(shown)} here, all in the HTML and JSON reports" if len(found) > len(shown) else ""
    return ([f"**Failures and errors** ({len(found)} items{more}):", ""]
            + [f"- {kind} `{item}`: {_md_cell(reason) or '(no reason given)'}" for item, kind, reason in shown] + [""])


def _shown_keys(grid: Layout) -> list[str]:
    return list(grid.single) + [k for b in grid.breakdowns for k in b.cell.values()]


def _md_cell(text: str) -> str:
    return cut(text).replace("|", "\\|")


def _md_metric_table(section: Mapping[str, Any], comp: Mapping[str, Any] | None, keys: Sequence[str]) -> list[str]:
    head, rule = "| metric | value | 95% CI |", "|---|---:|---|"
    if comp:
        head += f" baseline | Δ | {_level(comp)} CI of Δ | McNemar p |"
        rule += "---:|---:|---|---:|"
    out = [head, rule]
    for m in keys:
        v = section["metrics"][m]
        row = (f"| {_md_cell(m)} | {_md_cell(_pct(v, m))} | "
               f"{_ci(section.get('metrics_ci', {}).get(m), name=m) if _rate(v) else ''} |")
        if comp:
            d = comp["metrics"].get(m, {})
            mc = d.get("mcnemar")
            row += (f" {_pct(d.get('baseline'), m) if d else ''} | {_pp(d.get('delta'), m) if _rate(v) else _delta_count(d)} | "
                    f"{_ci(d.get('ci'), _pp) if _rate(v) else ''} | {_p(mc)} |")
        out.append(row)
    return out


def _cell_text(section: Mapping[str, Any], comp: Mapping[str, Any] | None, key: str | None) -> tuple[str, str]:
    """``(value, detail)`` of one breakdown cell: the CI, and the delta against a baseline."""
    if key is None:
        return "–", ""
    v = section["metrics"][key]
    detail = []
    ci = section.get("metrics_ci", {}).get(key)
    if ci and _rate(v) and not is_undefined(v):
        detail.append(_ci(ci, name=key))
    d = (comp or {}).get("metrics", {}).get(key)
    if d and is_number(d.get("delta")):
        detail.append(f"Δ {_pp(d['delta'], key)}")
    return _pct(v, key), " · ".join(detail)


def _md_breakdown(section: Mapping[str, Any], comp: Mapping[str, Any] | None, b: Breakdown) -> list[str]:
    rows, cols, grid = b.grid()
    corner = "metric" if b.rows_are_prefixes else _part_label(b)
    body, details = [], False
    for r, keys in zip(rows, grid):
        cells = []
        for key in keys:
            value, detail = _cell_text(section, comp, key)
            details = details or bool(detail)
            cells.append(_md_cell(value + (f" [{detail}]" if detail else "")))
        body.append("| " + " | ".join([_md_cell(r)] + cells) + " |")
    return [f"**{_md_cell(b.title)}**" + (" (95% CI in brackets)" if details else ""), "",
            "| " + " | ".join([corner] + [_md_cell(c) for c in cols]) + " |",
            "|---|" + "---:|" * len(cols)] + body


def _p(mc: Mapping[str, Any] | None) -> str:
    return f"{mc['p']:.3g}" if mc else ""


def _flipcount(mc: Mapping[str, Any] | None) -> str:
    return f"{mc['newly_failing']}/{mc['newly_passing']}" if mc else ""


def _level(comp: Mapping[str, Any]) -> str:
    for d in comp["metrics"].values():
        return f"{100 * d.get('level', 0.95):g}%"
    return "95%"


def _delta_count(d: Mapping[str, Any]) -> str:
    return f"{d['delta']:+g}" if is_number(d.get("delta")) else ""


def _ids(ids: list[str]) -> str:
    shown = ", ".join(f"`{t}`" for t in ids[:TOP_FLIPS])
    return shown + (f" … and {len(ids) - TOP_FLIPS} more" if len(ids) > TOP_FLIPS else "")


def _rule_label(r: Mapping[str, Any]) -> str:
    if r["kind"] == "threshold":
        return f"≥ {_pct(r['threshold'])}" if "threshold" in r else "threshold"
    return f"vs baseline (tolerance {r['tolerance']})"


# -------------------------------------------------------------------- HTML
_CSS = """
body{font:14px/1.45 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:24px auto;max-width:1180px;color:#1f2328;padding:0 16px}
h1{font-size:22px;margin:0 0 4px}h2{font-size:18px;margin:28px 0 8px;border-bottom:1px solid #d0d7de;padding-bottom:4px}
h3{font-size:15px;margin:18px 0 6px}.meta{color:#59636e;font-size:13px}
table{border-collapse:collapse;margin:6px 0 12px;font-size:13px}th,td{border:1px solid #d0d7de;padding:4px 8px;text-align:left;vertical-align:top}
th{background:#f6f8fa}td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
.banner{padding:10px 14px;border-radius:6px;font-weight:600;margin:14px 0}.ok{background:#dafbe1;color:#116329;border:1px solid #4ac26b}
.bad{background:#ffebe9;color:#a40e26;border:1px solid #ff8182}.info{background:#ddf4ff;border:1px solid #54aeff;color:#0a3069}
.pass{color:#116329;font-weight:600}.fail{color:#a40e26;font-weight:600}.err{color:#9a6700;font-weight:600}
.flip-bad{background:#fff0ee}.flip-good{background:#effff2}.msg{color:#59636e;max-width:640px;word-break:break-word}
.plots{display:flex;flex-wrap:wrap;gap:16px}.plots figure{margin:0;border:1px solid #d0d7de;border-radius:6px;padding:6px;background:#fff}
.plots svg{max-width:100%;height:auto;display:block}figcaption{font-size:12px;color:#59636e;text-align:center}
.controls{display:flex;gap:10px;align-items:center;margin:6px 0}.controls input{padding:5px 8px;width:320px;border:1px solid #d0d7de;border-radius:6px}
.controls select{padding:4px 6px}ul.rules li{margin:4px 0}code{background:#f6f8fa;padding:1px 4px;border-radius:4px}
.warn{background:#fff8c5;border:1px solid #d4a72c;color:#633c01}.scroll{overflow-x:auto;max-width:100%}
.scroll.tall{max-height:420px;overflow-y:auto}.ci{display:block;color:#59636e;font-size:11px;font-weight:400}
td{max-width:520px;overflow-wrap:anywhere}table.skips td.msg{max-width:760px;color:inherit}.notes{margin:-6px 0 12px}
details.per-item{margin:8px 0}details.per-item summary{cursor:pointer}td.skip{color:#59636e;font-style:italic}
"""

_JS = """
function sbFilter(el){
  var box=el.closest('.sb-per-task');
  var q=box.querySelector('.sb-q').value.toLowerCase().trim();
  var s=box.querySelector('.sb-s').value;var n=0,t=0;
  box.querySelectorAll('table.sb-tasks tbody tr').forEach(function(r){
    t++;var ok=(!q||r.textContent.toLowerCase().indexOf(q)>=0)&&(s==='all'||(' '+r.dataset.tags+' ').indexOf(' '+s+' ')>=0);
    r.style.display=ok?'':'none';if(ok)n++;});
  box.querySelector('.sb-n').textContent=n+' of '+t+' rows';
}
document.addEventListener('DOMContentLoaded',function(){
  document.querySelectorAll('.sb-per-task .sb-q').forEach(sbFilter);});
"""


def _e(value: Any) -> str:
    return html.escape(str(value), quote=True)


def html_report(report: Mapping[str, Any]) -> str:
    gate = report.get("gate") or {}
    manifest = report.get("manifest", {})
    model = manifest.get("model", {}).get("spec")
    parts = [f"<h1>specbench report: {_e(', '.join(report['benchmarks']))}</h1>",
             f"<div class='meta'>model <code>{_e(model)}</code>"
             + (f" · baseline <code>{_e(gate.get('baseline'))}</code>" if gate.get("comparison") else "")
             + f" · specbench {_e(report.get('specbench_version'))} · finished {_e(manifest.get('finished', ''))}</div>"]
    status = _gate_status(gate)
    if status:
        parts.append(f"<div class='banner {'ok' if status == 'passed' else 'bad'}'>Gate {status.upper()}</div>")
        parts.append(_rules_html(gate))
    if gate.get("fingerprint_differences"):
        parts.append("<div class='meta'>What differs from the baseline's run (fingerprint):<ul>"
                     + "".join(f"<li>{_e(n)}</li>" for n in gate["fingerprint_differences"]) + "</ul></div>")
    plotting = _plotting()
    for name, section in report["benchmarks"].items():
        comp = gate.get("comparison", {}).get(name)
        parts.append(f"<h2>{_e(name)}</h2>")
        parts.append(f"<div class='meta'>{_e(_counts_line(section))}; checks: {_e(_checks_label(section.get('checks', [])))}"
                     + (f"; {comp['tasks_compared']} tasks paired with the baseline" if comp else "") + "</div>")
        parts.append(_roles_and_error_html(section))
        parts.append(_skips_html(section))
        if not section["tasks"]:
            continue
        grid = _layout(section)
        parts.append(_metric_table(section, comp, grid.single))
        undefined = [m for m in _shown_keys(grid) if is_undefined(section["metrics"][m])]
        if undefined:
            notes = undefined_notes(undefined, section.get("metric_notes") or {})
            parts.append("<div class='meta notes'>" + "<br>".join(_e(n.strip()) for n in notes) + "</div>")
        parts += [_breakdown_html(section, comp, b) for b in grid.breakdowns]
        parts += [_per_item_html(p) for p in grid.per_item]
        if plotting is True:
            parts.append(_plots(name, section, comp, grid))
        if comp:
            parts.append(_flips_html(comp))
        parts.append(_tasks_html(name, section, comp))
    if plotting is not True:
        parts.append(f"<div class='banner info'>Plots are not included: {_e(plotting)}. "
                     "Install them with <code>pip install 'pytest-specbench[html]'</code> (matplotlib).</div>")
    body = "\n".join(parts)
    return (f"<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>"
            f"<meta name='viewport' content='width=device-width,initial-scale=1'>"
            f"<title>specbench: {_e(', '.join(report['benchmarks']))} — {_e(model)}</title>"
            f"<style>{_CSS}</style></head><body>\n{body}\n<script>{_JS}</script></body></html>\n")


def _roles_and_error_lines(section: Mapping[str, Any]) -> list[str]:
    """Markdown: the models in roles (the judge in use) and the family's ``metrics_error``."""
    out = [f"- {role}: `{spec}`" for role, spec in (section.get("roles") or {}).items()]
    if section.get("metrics_error"):
        out.append(f"- **metrics_error**: {section['metrics_error']}")
    return out + [""] if out else []


def _roles_and_error_html(section: Mapping[str, Any]) -> str:
    """HTML: the models in roles (the judge in use) and the family's ``metrics_error``."""
    html = "".join(f"<div class='meta role'>{_e(role)}: <code>{_e(spec)}</code></div>"
                   for role, spec in (section.get("roles") or {}).items())
    if section.get("metrics_error"):
        html += f"<div class='banner bad metrics-error'>metrics_error: {_e(section['metrics_error'])}</div>"
    return html


def _rules_html(gate: Mapping[str, Any]) -> str:
    items = []
    for r in gate.get("rules", []):
        extra = ""
        if r["kind"] == "compare" and "beyond_tolerance" in r:
            extra = (f"<br><span class='meta'>beyond tolerance: <b>{'yes' if r['beyond_tolerance'] else 'no'}</b>, "
                     f"significant: <b>{'yes' if r['significant'] else 'no'}</b> → "
                     f"{'regression' if not r['passed'] else 'not a regression'}</span>")
        items.append(f"<li><span class='{'pass' if r['passed'] else 'fail'}'>{'✔' if r['passed'] else '✘'}</span> "
                     f"<code>{_e(r['benchmark'])}:{_e(r['metric'])}</code> {_e(_rule_label(r))}: {_e(r['why'])}{extra}</li>")
    if gate.get("errors"):
        items.append(f"<li><span class='fail'>✘</span> {gate['errors']} harness/collection error(s): "
                     "the run fails regardless</li>")
    items += [f"<li class='meta'>note: {_e(n)}</li>" for n in gate.get("notes", [])]
    return f"<ul class='rules'>{''.join(items)}</ul>" if items else ""


def _metric_table(section: Mapping[str, Any], comp: Mapping[str, Any] | None, keys: Sequence[str]) -> str:
    if not keys:
        return ""
    head = "<tr><th>metric</th><th>value</th><th>95% CI</th>"
    if comp:
        head += f"<th>baseline</th><th>Δ</th><th>{_level(comp)} CI of Δ</th><th>McNemar p</th><th>flips −/+</th>"
    rows = [head + "</tr>"]
    notes = section.get("metric_notes") or {}
    headline = set(section.get("headline") or ())
    for m in keys:
        v = section["metrics"][m]
        rate = _rate(v)
        note = note_for(m, notes)
        label = f"<b>{_e(m)}</b>" if m in headline else _e(m)
        row = (f"<tr><td{_title(note)}>{label}</td><td class='num'>{_e(_pct(v, m))}</td>"
               f"<td class='num'>{_e(_ci(section.get('metrics_ci', {}).get(m), name=m) if rate else '')}</td>")
        if comp:
            d = comp["metrics"].get(m, {})
            mc = d.get("mcnemar") or {}
            row += (f"<td class='num'>{_e(_pct(d.get('baseline'), m) if d else '')}</td>"
                    f"<td class='num'>{_e(_pp(d.get('delta'), m) if rate else _delta_count(d))}</td>"
                    f"<td class='num'>{_e(_ci(d.get('ci'), _pp) if rate else '')}</td>"
                    f"<td class='num'>{_e(_p(mc))}</td><td class='num'>{_e(_flipcount(mc))}</td>")
        rows.append(row + "</tr>")
    return f"<div class='scroll'><table>{''.join(rows)}</table></div>"


def _title(text: str | None) -> str:
    return f" title='{_e(text)}'" if text else ""


def _skips_html(section: Mapping[str, Any]) -> str:
    skips = _skip_lines(section)
    if not skips:
        return ""
    rows = "".join(f"<tr><td class='num'>{count}</td><td class='msg'>{_e(reason)}</td>"
                   f"<td>{', '.join(f'<code>{_e(i)}</code>' for i in ids)}"
                   f"{' …' if count > len(ids) else ''}</td></tr>" for count, reason, ids in skips)
    kind = "warn" if not section["tasks"] else "info"
    title = ("Nothing was evaluated: every item was skipped" if not section["tasks"]
             else "Skipped items (not counted in the metrics)")
    return (f"<div class='banner {kind}'>{title}</div><div class='scroll'><table class='skips'>"
            f"<tr><th>items</th><th>reason</th><th>e.g.</th></tr>{rows}</table></div>")


def _breakdown_html(section: Mapping[str, Any], comp: Mapping[str, Any] | None, b: Breakdown) -> str:
    rows, cols, grid = b.grid()
    notes = section.get("metric_notes") or {}
    corner = "metric" if b.rows_are_prefixes else _part_label(b)
    head = f"<tr><th>{_e(corner)}</th>" + "".join(
        f"<th{_title(None if b.rows_are_prefixes else note_for(c, notes))}>{_e(c)}</th>" for c in cols) + "</tr>"
    body = []
    for r, keys in zip(rows, grid):
        cells = []
        for key in keys:
            value, detail = _cell_text(section, comp, key)
            cells.append(f"<td class='num{' meta' if key is None else ''}'>{_e(value)}"
                         + (f"<span class='ci'>{_e(detail)}</span>" if detail else "") + "</td>")
        label = _title(note_for(r, notes) if b.rows_are_prefixes else None)
        body.append(f"<tr><td{label}>{_e(r)}</td>{''.join(cells)}</tr>")
    return (f"<h3>{_e(b.title)}</h3><div class='scroll'><table class='breakdown'>{head}{''.join(body)}</table></div>")


def _per_item_html(p: PerItem) -> str:
    summary = "; ".join(f"<b>{_e(n)}</b>: {_e(p.summary(n))}" for n in p.names)
    head = "<tr><th>item</th>" + "".join(f"<th>{_e(n)}</th>" for n in p.names) + "</tr>"
    rows = "".join(f"<tr><td>{_e(cut(k))}</td>" + "".join(
        f"<td class='num'>{_e(_pct(p.values[n].get(k)) if k in p.values[n] else '–')}</td>" for n in p.names)
        + "</tr>" for k in p.keys)
    return (f"<details class='per-item'><summary>{summary} (click to list them)</summary>"
            f"<div class='scroll tall'><table>{head}{rows}</table></div></details>")


def _flips_html(comp: Mapping[str, Any]) -> str:
    out = ["<h3>Flips against the baseline</h3>"]
    for check, f in comp["flips"].items():
        nf, np_ = f["newly_failing"], f["newly_passing"]
        if not nf and not np_:  # only the checks that changed (CIFE has one check per constraint)
            continue
        out.append(f"<div><b>{_e(check)}</b>: <span class='fail'>{len(nf)} newly failing</span>"
                   + (": " + ", ".join(f"<code>{_e(t)}</code>" for t in nf) if nf else "")
                   + f"<br><span class='pass'>{len(np_)} newly passing</span>"
                   + (": " + ", ".join(f"<code>{_e(t)}</code>" for t in np_) if np_ else "")
                   + _borderline_html(f) + "</div>")
    if len(out) == 1:
        out.append("<div class='meta'>no task changed its verdict on any check</div>")
    return "\n".join(out)


def _borderline_html(f: Mapping[str, Any]) -> str:
    bf, bp = f.get("newly_failing_borderline", []), f.get("newly_passing_borderline", [])
    if not bf and not bp:
        return ""
    return (f"<br>of which borderline (CPU time at the limit, measured again): {len(bf)} newly failing, "
            f"{len(bp)} newly passing")


def _check_columns(checks: Sequence[str]) -> list[tuple[str, list[str]]]:
    """One column per check, but one column per *family* of parametrised checks
    (CIFE's ``adherence[0-...]``, ``adherence[1-...]``: one per constraint, so
    hundreds of distinct names over a full run), showing how many passed."""
    columns: dict[str, list[str]] = {}
    for check in checks:
        columns.setdefault(check.split("[", 1)[0] if "[" in check else check, []).append(check)
    return [(members[0] if len(members) == 1 else f"{col}[…]", members) for col, members in columns.items()]


def _of(n: int, present: Sequence[Any]) -> str:
    return f" {n}/{len(present)}" if len(present) > 1 else ""


def _tasks_html(name: str, section: Mapping[str, Any], comp: Mapping[str, Any] | None) -> str:
    checks = list(section.get("checks", []))
    flipped: dict[tuple[str, str], str] = {}
    for check, f in (comp or {}).get("flips", {}).items():
        for t in f["newly_failing"]:
            flipped[(t, check)] = "newly-failing"
        for t in f["newly_passing"]:
            flipped[(t, check)] = "newly-passing"
    skipped: dict[tuple[str, str], dict[str, str]] = {}  # (task, sample) -> check -> reason
    for reason, ids in (section.get("skipped_items") or {}).items():
        for item in ids:
            parts = item.rsplit("::", 2)
            if len(parts) == 3:
                skipped.setdefault((parts[0], parts[1]), {})[parts[2]] = reason
    columns = _check_columns(checks)
    head = ("<tr><th>task</th><th>sample</th>" + "".join(f"<th>{_e(col)}</th>" for col, _ in columns)
            + "<th>message</th></tr>")
    rows = []
    for task_id, task in section["tasks"].items():
        for s in task.get("samples", []):
            tags, cells, messages, row_class = [], [], [], ""
            for col, members in columns:
                present = [(c, s.get("checks", {}).get(c)) for c in members]
                present = [(c, v) for c, v in present if v is not None]
                if not present:
                    why = skipped.get((task_id, str(s.get("index", ""))), {})
                    reasons = [(c, why[c]) for c in members if c in why]
                    if reasons:
                        cells.append(f"<td class='skip'{_title(reasons[0][1])}>skipped</td>")
                        messages += [f"{c}: skipped: {r}" for c, r in reasons[:1]]
                        tags.append("skip")
                    else:
                        cells.append("<td class='meta'>–</td>")
                    continue
                errors = [c for c, v in present if "error" in v]
                failed = [c for c, v in present if "error" not in v and not v.get("passed")]
                for c, v in present:
                    if "error" in v:
                        messages.append(f"{c}: {v['error']}")
                    elif not v.get("passed") and (v.get("message") or v.get("reason")):
                        messages.append(f"{c}: {v.get('message') or v['reason']}")
                if len(members) == 1 and not errors:
                    v = present[0][1]
                    # A CVT check's count is of inputs rejected, not of failures ("fail 0/13" read as none).
                    extra = f" ({v['rejected']}/{v['total']} rejected)" if "total" in v and "rejected" in v else ""
                    word = "fail" if failed else "pass"
                    cells.append(f"<td class='{word}'>{word}{_e(extra)}</td>")
                elif errors:
                    cells.append(f"<td class='err'>error{_e(_of(len(errors), present))}</td>")
                else:
                    word = "fail" if failed else "pass"
                    passed = len(present) - len(failed)
                    title = _e(", ".join(f"{c}: {'fail' if c in failed else 'pass'}" for c, _ in present))
                    cells.append(f"<td class='{word}' title='{title}'>{passed}/{len(present)} pass</td>")
                tags.append("error" if errors else "fail" if failed else "pass")
                flips = [flipped[(task_id, c)] for c, _ in present if (task_id, c) in flipped]
                if flips:
                    flip = "newly-failing" if "newly-failing" in flips else "newly-passing"
                    tags += sorted(set(flips)) + ["flip"]
                    row_class = "flip-bad" if flip == "newly-failing" else "flip-good"
                    cells[-1] = cells[-1].replace("</td>", f" <span class='meta'>({flip.replace('-', ' ')})</span></td>")
            rows.append(f"<tr class='{row_class}' data-tags='{_e(' '.join(sorted(set(tags))))}'>"
                        f"<td>{_e(task_id)}</td><td class='num'>{s.get('index', '')}</td>{''.join(cells)}"
                        f"<td class='msg'>{_e('; '.join(messages)[:400])}</td></tr>")
    options = [("all", "all rows"), ("fail", "failing"), ("pass", "passing"), ("error", "errors")]
    if skipped:
        options.append(("skip", "with skipped checks"))
    if comp:
        options += [("flip", "flips"), ("newly-failing", "newly failing"), ("newly-passing", "newly passing")]
    select = "".join(f"<option value='{v}'>{label}</option>" for v, label in options)
    # Each benchmark's box filters its own table (classes, not ids: a page has one box per benchmark).
    return (f"<section class='sb-per-task' data-benchmark='{_e(name)}'><h3>Per-task results</h3>"
            f"<div class='controls'><input class='sb-q' type='search' aria-label='filter {_e(name)} rows' "
            f"placeholder='filter: task id, message…' oninput='sbFilter(this)'>"
            f"<select class='sb-s' aria-label='show {_e(name)} rows' onchange='sbFilter(this)'>{select}</select>"
            f"<span class='sb-n meta'></span></div>"
            f"<table class='sb-tasks'><thead>{head}</thead><tbody>{''.join(rows)}</tbody></table></section>")


# ------------------------------------------------------------------- plots
def _plotting() -> Any:
    """True, or why plots are unavailable."""
    try:
        import matplotlib  # noqa: F401
        from matplotlib.figure import Figure  # noqa: F401
    except ImportError:
        return "matplotlib is not installed"
    return True


def _svg(fig) -> str:
    import matplotlib

    buf = io.StringIO()
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": "specbench"}):
        fig.savefig(buf, format="svg", bbox_inches="tight", metadata={"Date": None})
    text = buf.getvalue()
    text = re.sub(r"<metadata>.*?</metadata>", "", text[text.index("<svg"):], flags=re.S)
    return text


# A rate drawn on a 0-100 axis gets this margin, so a dot at 0 or 100 is a whole dot.
EDGE = 3


def _adapter_figure(Figure, spec: Mapping[str, Any]):
    """One ``Benchmark.figures`` entry, as plain data:

    * ``bar``: ``x`` category labels, ``y`` values, or ``series`` {name: values} for grouped bars;
    * ``errorbar``: ``x``, ``y``, ``lo``/``hi`` (the interval's ends);
    * ``hist``: raw values in ``y`` (or ``x``), ``bins``, ``range`` [lo, hi] (e.g. [0, 1] for a share);
    * ``binned``: counts already made: ``edges`` (n+1 bin edges) and ``counts`` (n), drawn as bars.

    ``percent: true``: the values are shares in [0, 1], drawn as 0-100 %; the axis says so.
    """
    kind = spec["kind"]
    percent = bool(spec.get("percent"))
    scale = 100.0 if percent else 1.0
    x = list(spec.get("x", []))
    labels = [str(v) for v in x]
    series = dict(spec.get("series") or {})
    if kind == "bar" and not series:
        series = {"": list(spec.get("y", []))}
    # Long category names (CIFE's "Data Processing and Transformation") overlap
    # as column labels: such bars are drawn horizontally, one readable row each.
    # Grouped bars stay vertical unless a label is long (many short rows would make a tall plot).
    horizontal = kind == "bar" and bool(labels) and (max(len(v) for v in labels) > 14
                                                     or (sum(len(v) for v in labels) > 40 and len(series) <= 1))
    n_bars = len(labels) * max(1, len(series))
    if horizontal:
        size = (5.6, 0.8 + 0.32 * n_bars)
    else:
        size = (min(11.0, max(4.8, 2.0 + 0.28 * n_bars)) if kind == "bar" else 4.8, 3.0)
    fig = Figure(figsize=size, layout="constrained")
    ax = fig.add_subplot()
    value_label = str(spec.get("ylabel", "")) + (" (%)" if percent else "")
    if kind == "bar":
        width = 0.8 / max(1, len(series))
        for j, (label, ys) in enumerate(series.items()):
            if len(ys) != len(labels):
                raise ValueError(f"series {label or 'y'!r} has {len(ys)} values for {len(labels)} labels")
            vals = [0.0 if is_undefined(y) else scale * y for y in ys]
            pos = [i + (j - (len(series) - 1) / 2) * width for i in range(len(labels))]
            color = "#0969da" if len(series) == 1 else None
            if horizontal:
                ax.barh([len(labels) - 1 - p for p in pos][::-1], vals[::-1], height=width, label=label or None,
                        color=color)  # drawn bottom-up: the first label is the top row
            else:
                ax.bar(pos, vals, width=width, label=label or None, color=color)
        ticks = list(range(len(labels)))
        # values >= 0 get no negative half-axis (all zeros would otherwise be centred on -0.05..0.05)
        nonnegative = all(not is_undefined(y) and y >= 0 for ys in series.values() for y in ys)
        top = max((scale * y for ys in series.values() for y in ys if not is_undefined(y)), default=0)
        if horizontal:
            ax.set_yticks([len(labels) - 1 - t for t in ticks], labels)
            ax.set_xlabel(value_label)
            ax.set_ylabel(str(spec.get("xlabel", "")))
            ax.grid(alpha=0.3, axis="x")
            if percent:
                ax.set_xlim(0, 100 + EDGE)
            elif nonnegative:
                ax.set_xlim(0, top * 1.05 if top > 0 else 1)
        else:
            ax.set_xticks(ticks, labels, rotation=30 if sum(len(v) for v in labels) > 24 else 0,
                          ha="right" if sum(len(v) for v in labels) > 24 else "center")
            ax.set_xlabel(str(spec.get("xlabel", "")))
            ax.set_ylabel(value_label)
            ax.grid(alpha=0.3, axis="y")
            if percent:
                ax.set_ylim(0, 100 + EDGE)
            elif nonnegative:
                ax.set_ylim(0, top * 1.05 if top > 0 else 1)
        if len(series) > 1 or any(series):  # below the axes: inside, it would cover bars at 100%
            fig.legend(*ax.get_legend_handles_labels(), loc="outside lower center", fontsize=7,
                       ncols=min(4, len(series)))
        ax.set_title(str(spec.get("title", "")), fontsize=10)
        return fig
    if kind == "errorbar":
        ys = [scale * v for v in spec["y"]]
        lo, hi = spec.get("lo"), spec.get("hi")
        err = ([[y - scale * a for y, a in zip(ys, lo)], [scale * b - y for y, b in zip(ys, hi)]]
               if lo and hi else None)
        pos = list(range(len(labels)))
        ax.errorbar(pos, ys, yerr=err, fmt="o", capsize=4, color="#0969da")
        ax.set_xticks(pos, labels)
        ax.set_xlim(-0.6, len(labels) - 0.4)
        if percent:
            ax.set_ylim(-EDGE, 100 + EDGE)
        ax.set_ylabel(value_label)
    elif kind == "hist":
        values = [scale * v for v in (spec.get("y") or x) if not is_undefined(v)]
        rng = spec.get("range")
        rng = (scale * rng[0], scale * rng[1]) if rng else None
        ax.hist(values, bins=spec.get("bins", 10), range=rng, color="#0969da")
        ax.set_ylabel(str(spec.get("ylabel", "")))
        ax.set_xlabel(str(spec.get("xlabel", "")) + (" (%)" if percent else ""))
    elif kind == "binned":
        edges, counts = [scale * e for e in spec["edges"]], list(spec["counts"])
        if len(edges) != len(counts) + 1:
            raise ValueError(f"{len(edges)} edges for {len(counts)} counts (want one more edge than counts)")
        ax.bar(edges[:-1], counts, width=[b - a for a, b in zip(edges, edges[1:])], align="edge",
               color="#0969da", edgecolor="white")
        ax.set_xlim(edges[0], edges[-1])
        ax.set_ylabel(str(spec.get("ylabel", "")))
        ax.set_xlabel(str(spec.get("xlabel", "")) + (" (%)" if percent else ""))
    else:
        raise ValueError(f"unknown figure kind {kind!r}")
    if kind != "errorbar":
        from matplotlib.ticker import MaxNLocator

        ax.yaxis.set_major_locator(MaxNLocator(integer=True))  # counts of items
    else:
        ax.set_xlabel(str(spec.get("xlabel", "")))
    ax.set_title(str(spec.get("title", "")), fontsize=10)
    ax.grid(alpha=0.3)
    return fig


def _plots(name: str, section: Mapping[str, Any], comp: Mapping[str, Any] | None,
           grid: Layout | None = None) -> str:
    from matplotlib.figure import Figure

    grid = grid or _layout(section)
    figures = []
    metrics, cis = section["metrics"], section.get("metrics_ci", {})
    # pass@k curves (candidate and baseline), with the bootstrap interval as error bars;
    # a curve needs two k at least (one k is a value in the table and the metrics plot)
    for suffix, label in (("", "base + extra"), ("_base", "base")):
        ks = sorted(int(m[5:len(m) - len(suffix)]) for m in metrics
                    if re.fullmatch(r"pass@\d+" + re.escape(suffix), m) and is_number(metrics[m]))
        if len(ks) < 2:
            continue
        fig = Figure(figsize=(4.2, 3.0))
        ax = fig.add_subplot()
        series = [("this run", metrics, cis, "#0969da")]
        if comp:
            base = {m: d.get("baseline") for m, d in comp["metrics"].items()}
            series.append(("baseline", base, {}, "#8c959f"))
        for lab, vals, ci, color in series:
            xs = [k for k in ks if is_number(vals.get(f"pass@{k}{suffix}"))]
            ys = [100 * vals[f"pass@{k}{suffix}"] for k in xs]
            if not xs:
                continue
            err = None
            if ci and all(ci.get(f"pass@{k}{suffix}") for k in xs):
                err = [[y - 100 * ci[f"pass@{k}{suffix}"][0] for k, y in zip(xs, ys)],
                       [100 * ci[f"pass@{k}{suffix}"][1] - y for k, y in zip(xs, ys)]]
            dodge = 1.0 if not comp else (0.93 if lab == "this run" else 1.07)  # keep overlapping points visible
            ax.errorbar([x * dodge for x in xs], ys, yerr=err, marker="o", capsize=4, label=lab, color=color)
        ax.set_xscale("log")
        ax.set_xticks(ks, [str(k) for k in ks])
        ax.minorticks_off()
        ax.set_ylim(-EDGE, 100 + EDGE)
        ax.set_xlabel("k")
        ax.set_ylabel("pass@k (%)")
        ax.set_title(f"{name}: pass@k ({label})", fontsize=10)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8, loc="lower right")
        figures.append((_svg(fig), "pass@k with 95% bootstrap CI over tasks"))
    # per-metric deltas with CIs (or the metrics with CIs when there is no baseline):
    # the single-value rates (breakdowns have their own tables), the adapter's headline first
    rates = [m for m in grid.single if _rate(metrics[m]) and not is_undefined(metrics[m]) and not is_coefficient(m)]
    headline = [m for m in section.get("headline") or [] if m in rates]
    if comp:
        rows = [(m, comp["metrics"][m]) for m in rates if m in comp["metrics"] and comp["metrics"][m].get("ci")]
        if rows:
            fig = Figure(figsize=(5.2, 0.5 + 0.45 * len(rows)))
            ax = fig.add_subplot()
            ys = list(range(len(rows)))[::-1]
            for y, (m, d) in zip(ys, rows):
                lo, hi = d["ci"]
                color = "#cf222e" if hi < 0 else "#1a7f37" if lo > 0 else "#57606a"
                ax.errorbar([100 * d["delta"]], [y], xerr=[[100 * (d["delta"] - lo)], [100 * (hi - d["delta"])]],
                            fmt="o", capsize=4, color=color)
            ax.axvline(0, color="#8c959f", lw=1, ls="--")
            ax.set_yticks(ys, [m for m, _ in rows])
            ax.set_ylim(-0.7, len(rows) - 0.3)
            ax.set_xlabel("candidate − baseline (percentage points)")
            ax.set_title(f"{name}: deltas with {_level(comp)} paired bootstrap CI", fontsize=10)
            ax.grid(alpha=0.3, axis="x")
            figures.append((_svg(fig), "red: CI below 0 · green: CI above 0 · grey: includes 0"))
    elif len(headline or rates) >= 2:
        # the adapter's headline metrics when it names them: the table lists every breakdown
        rates = headline if len(headline) >= 2 else rates
        fig = Figure(figsize=(5.2, 0.5 + 0.45 * len(rates)))
        ax = fig.add_subplot()
        ys = list(range(len(rates)))[::-1]
        for y, m in zip(ys, rates):
            ci = cis.get(m) or [metrics[m], metrics[m]]
            ax.errorbar([100 * metrics[m]], [y], xerr=[[100 * (metrics[m] - ci[0])], [100 * (ci[1] - metrics[m])]],
                        fmt="o", capsize=4, color="#0969da")
        ax.set_yticks(ys, rates)
        ax.set_xlim(-EDGE, 100 + EDGE)
        ax.set_ylim(-0.7, len(rates) - 0.3)
        ax.set_xlabel("%")
        ax.set_title(f"{name}: metrics with 95% bootstrap CI", fontsize=10)
        ax.grid(alpha=0.3, axis="x")
        figures.append((_svg(fig), "95% percentile bootstrap over tasks"))
    # the adapter's own plots (Benchmark.figures), drawn from plain data
    for spec in section.get("figures") or []:
        try:
            figures.append((_svg(_adapter_figure(Figure, spec)), str(spec.get("caption", spec.get("title", "")))))
        except (KeyError, TypeError, ValueError) as exc:  # a malformed figure costs that figure only
            figures.append(("", f"{spec.get('title', 'figure')}: not drawn ({exc})"))
    if not figures:
        return ""
    return "<div class='plots'>" + "".join(f"<figure>{svg}<figcaption>{_e(cap)}</figcaption></figure>"
                                           for svg, cap in figures) + "</div>"
