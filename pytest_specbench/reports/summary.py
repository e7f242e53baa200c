"""Reports people read: a Markdown summary (GitHub step summary) and one
self-contained HTML file (inline CSS/JS; plots as inline SVG when the ``html``
extra, i.e. matplotlib, is installed).

Both take the JSON report with its ``gate`` section (see :mod:`.gate`).
"""
from __future__ import annotations

import html
import math
import io
import re
from typing import Any, Mapping, Sequence

from .stats import is_number

TOP_FLIPS = 10


def _pct(value: Any) -> str:
    if isinstance(value, float):
        # nan: undefined on these results (as in the terminal summary)
        return "n/a" if math.isnan(value) else f"{100 * value:.2f}%"
    return "" if value is None else str(value)


def _checks_label(checks: Sequence[str]) -> str:
    """Parametrised checks (CIFE's ``adherence[2-security-and-privacy]``, one
    per constraint) are listed once with their count: the full list can run to
    hundreds of names and is in the JSON report."""
    return ", ".join(col if len(members) == 1 else f"{col} ×{len(members)}"
                     for col, members in _check_columns(checks))


def _pp(value: Any) -> str:
    return f"{100 * value:+.2f} pp" if is_number(value) else ""


def _ci(ci: Any, fmt=_pct) -> str:
    return f"{fmt(ci[0])} – {fmt(ci[1])}" if ci else ""


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
        where = "bundled sample suite" if section.get("data") == "bundled" else section.get("data")
        out += [f"### {name}", "", f"{len(section['tasks'])} tasks evaluated on {where}; "
                                   f"{section.get('errors', 0)} harness errors."
                + (f" Compared with baseline `{gate.get('baseline')}` on {comp['tasks_compared']} paired tasks."
                   if comp else ""), ""]
        head = "| metric | value | 95% CI |"
        rule = "|---|---:|---|"
        if comp:
            level = _level(comp)
            head += f" baseline | Δ | {level} CI of Δ | McNemar p |"
            rule += "---:|---:|---|---:|"
        out += [head, rule]
        for m, v in section["metrics"].items():
            row = f"| {m} | {_pct(v)} | {_ci(section.get('metrics_ci', {}).get(m)) if _rate(v) else ''} |"
            if comp:
                d = comp["metrics"].get(m, {})
                mc = d.get("mcnemar")
                row += (f" {_pct(d.get('baseline'))} | {_pp(d.get('delta')) if _rate(v) else _delta_count(d)} | "
                        f"{_ci(d.get('ci'), _pp) if _rate(v) else ''} | {_p(mc)} |")
            out.append(row)
        out.append("")
        if comp:
            for check, f in comp["flips"].items():
                nf, np_ = f["newly_failing"], f["newly_passing"]
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
"""

_JS = """
function sbFilter(){
  var q=document.getElementById('sb-q').value.toLowerCase().trim();
  var s=document.getElementById('sb-s').value;var n=0,t=0;
  document.querySelectorAll('#sb-tasks tbody tr').forEach(function(r){
    t++;var ok=(!q||r.textContent.toLowerCase().indexOf(q)>=0)&&(s==='all'||(' '+r.dataset.tags+' ').indexOf(' '+s+' ')>=0);
    r.style.display=ok?'':'none';if(ok)n++;});
  document.getElementById('sb-n').textContent=n+' of '+t+' rows';
}
document.addEventListener('DOMContentLoaded',sbFilter);
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
    plotting = _plotting()
    for name, section in report["benchmarks"].items():
        comp = gate.get("comparison", {}).get(name)
        parts.append(f"<h2>{_e(name)}</h2>")
        where = "bundled sample suite" if section.get("data") == "bundled" else section.get("data")
        parts.append(f"<div class='meta'>{len(section['tasks'])} tasks evaluated on {_e(where)}; "
                     f"{section.get('errors', 0)} harness errors; checks: {_e(_checks_label(section.get('checks', [])))}"
                     + (f"; {comp['tasks_compared']} tasks paired with the baseline" if comp else "") + "</div>")
        parts.append(_metric_table(section, comp))
        if plotting is True:
            parts.append(_plots(name, section, comp))
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


def _metric_table(section: Mapping[str, Any], comp: Mapping[str, Any] | None) -> str:
    head = "<tr><th>metric</th><th>value</th><th>95% CI</th>"
    if comp:
        head += f"<th>baseline</th><th>Δ</th><th>{_level(comp)} CI of Δ</th><th>McNemar p</th><th>flips −/+</th>"
    rows = [head + "</tr>"]
    for m, v in section["metrics"].items():
        rate = _rate(v)
        row = (f"<tr><td>{_e(m)}</td><td class='num'>{_e(_pct(v))}</td>"
               f"<td class='num'>{_e(_ci(section.get('metrics_ci', {}).get(m)) if rate else '')}</td>")
        if comp:
            d = comp["metrics"].get(m, {})
            mc = d.get("mcnemar") or {}
            row += (f"<td class='num'>{_e(_pct(d.get('baseline')))}</td>"
                    f"<td class='num'>{_e(_pp(d.get('delta')) if rate else _delta_count(d))}</td>"
                    f"<td class='num'>{_e(_ci(d.get('ci'), _pp) if rate else '')}</td>"
                    f"<td class='num'>{_e(_p(mc))}</td><td class='num'>{_e(_flipcount(mc))}</td>")
        rows.append(row + "</tr>")
    return f"<table>{''.join(rows)}</table>"


def _flips_html(comp: Mapping[str, Any]) -> str:
    out = ["<h3>Flips against the baseline</h3>"]
    for check, f in comp["flips"].items():
        nf, np_ = f["newly_failing"], f["newly_passing"]
        out.append(f"<div><b>{_e(check)}</b>: <span class='fail'>{len(nf)} newly failing</span>"
                   + (": " + ", ".join(f"<code>{_e(t)}</code>" for t in nf) if nf else "")
                   + f"<br><span class='pass'>{len(np_)} newly passing</span>"
                   + (": " + ", ".join(f"<code>{_e(t)}</code>" for t in np_) if np_ else "")
                   + _borderline_html(f) + "</div>")
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
                    cells.append("<td class='meta'>–</td>")
                    continue
                errors = [c for c, v in present if "error" in v]
                failed = [c for c, v in present if "error" not in v and not v.get("passed")]
                for c, v in present:
                    if "error" in v:
                        messages.append(f"{c}: {v['error']}")
                    elif not v.get("passed") and v.get("reason"):
                        messages.append(f"{c}: {v['reason']}")
                if len(members) == 1 and not errors:
                    v = present[0][1]
                    extra = f" {v['rejected']}/{v['total']}" if "total" in v and "rejected" in v else ""
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
    if comp:
        options += [("flip", "flips"), ("newly-failing", "newly failing"), ("newly-passing", "newly passing")]
    select = "".join(f"<option value='{v}'>{label}</option>" for v, label in options)
    # Only the first benchmark's table gets the filter ids (one filter box per page).
    return (f"<h3>Per-task results</h3><div class='controls'><input id='sb-q' type='search' "
            f"placeholder='filter: task id, message…' oninput='sbFilter()'>"
            f"<select id='sb-s' onchange='sbFilter()'>{select}</select><span id='sb-n' class='meta'></span></div>"
            f"<table id='sb-tasks'><thead>{head}</thead><tbody>{''.join(rows)}</tbody></table>")


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


def _adapter_figure(Figure, spec: Mapping[str, Any]):
    """One ``Benchmark.figures`` entry: kind bar | errorbar | hist, x, y, lo/hi (errorbar), labels."""
    kind, x, y = spec["kind"], list(spec.get("x", [])), list(spec.get("y", []))
    labels = [str(v) for v in x]
    # Long category names (CIFE's "Data Processing and Transformation") overlap
    # as column labels: such bars are drawn horizontally, one readable row each.
    horizontal = kind == "bar" and sum(len(v) for v in labels) > 40
    fig = Figure(figsize=(5.6, 0.8 + 0.32 * len(labels)) if horizontal else (4.8, 3.0), layout="constrained")
    ax = fig.add_subplot()
    if horizontal:
        ax.barh(labels[::-1], y[::-1], color="#0969da")
        ax.set_title(str(spec.get("title", "")), fontsize=10)
        ax.set_xlabel(str(spec.get("ylabel", "")))
        ax.set_ylabel(str(spec.get("xlabel", "")))
        ax.grid(alpha=0.3, axis="x")
        return fig
    if kind == "bar":
        ax.bar(labels, y, color="#0969da")
    elif kind == "errorbar":
        lo, hi = spec.get("lo"), spec.get("hi")
        err = [[a - b for a, b in zip(y, lo)], [b - a for a, b in zip(y, hi)]] if lo and hi else None
        ax.errorbar(x, y, yerr=err, fmt="o", capsize=4, color="#0969da")
    elif kind == "hist":
        ax.hist(y or x, bins=spec.get("bins", 10), color="#0969da")
    else:
        raise ValueError(f"unknown figure kind {kind!r}")
    ax.set_title(str(spec.get("title", "")), fontsize=10)
    ax.set_xlabel(str(spec.get("xlabel", "")))
    ax.set_ylabel(str(spec.get("ylabel", "")))
    ax.grid(alpha=0.3)
    return fig


def _plots(name: str, section: Mapping[str, Any], comp: Mapping[str, Any] | None) -> str:
    from matplotlib.figure import Figure

    figures = []
    metrics, cis = section["metrics"], section.get("metrics_ci", {})
    # pass@k curves (candidate and baseline), with the bootstrap interval as error bars
    for suffix, label in (("", "base + extra"), ("_base", "base")):
        ks = sorted(int(m[5:len(m) - len(suffix)]) for m in metrics
                    if re.fullmatch(r"pass@\d+" + re.escape(suffix), m))
        if not ks:
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
        ax.set_xscale("log") if len(ks) > 1 else None
        ax.set_xticks(ks, [str(k) for k in ks])
        if len(ks) == 1:
            ax.set_xlim(ks[0] * 0.5, ks[0] * 1.5)
        ax.set_ylim(0, 100)
        ax.set_xlabel("k")
        ax.set_ylabel("pass@k (%)")
        ax.set_title(f"{name}: pass@k ({label})", fontsize=10)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8, loc="lower right")
        figures.append((_svg(fig), "pass@k with 95% bootstrap CI over tasks"))
    # per-metric deltas with CIs (or the metrics with CIs when there is no baseline)
    rates = [m for m, v in metrics.items() if _rate(v)]
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
    elif rates:
        # the adapter's headline metrics when it names them: the table lists every breakdown
        rates = headline or rates
        fig = Figure(figsize=(5.2, 0.5 + 0.45 * len(rates)))
        ax = fig.add_subplot()
        ys = list(range(len(rates)))[::-1]
        for y, m in zip(ys, rates):
            ci = cis.get(m) or [metrics[m], metrics[m]]
            ax.errorbar([100 * metrics[m]], [y], xerr=[[100 * (metrics[m] - ci[0])], [100 * (ci[1] - metrics[m])]],
                        fmt="o", capsize=4, color="#0969da")
        ax.set_yticks(ys, rates)
        ax.set_xlim(0, 100)
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
