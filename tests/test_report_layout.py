"""What people read in the reports (issue 26, points 13-18), on report dicts built
by hand and in-process renderers: breakdowns are their own small tables, private
keys never show, skips and failure messages are there, plots draw what the values
are, and n/a is one word with a reason."""
from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest

from pytest_specbench.reports import layout as L
from pytest_specbench.reports.gate import section_extras
from pytest_specbench.reports.report import ResultStore, render_summary
from pytest_specbench.reports.summary import html_report, markdown_summary

ROOT = Path(__file__).resolve().parents[1]
LONGEST_CELL = L.CELL_LIMIT + 40  # a value, its CI and a delta


def _report(metrics, *, headline=(), tasks=None, skipped=None, skipped_items=None, notes=None, name="bench",
            ci=None, figures=None, checks=("check",)):
    section = {"metrics": metrics, "headline": list(headline), "errors": 0, "data": "bundled",
               "checks": list(checks), "tasks": {"t1": {"samples": [{"index": 0, "checks": {"check": {"passed": True}}}]}}
               if tasks is None else tasks, "skipped": skipped or {}, "skipped_items": skipped_items or {},
               "metrics_ci": ci or {}, "figures": figures or []}
    if notes:
        section["metric_notes"] = notes
    return {"specbench_version": "test", "manifest": {"model": {"spec": "reference"}}, "benchmarks": {name: section}}


def _breakdown_metrics():
    programs = {f"Program{i:03d}WithARatherLongName": i / 300 for i in range(300)}
    return {"csr": 0.5, "ssr": 0.25, "rule_judge_kappa": math.nan,
            "category_micro/Data Processing and Transformation": 0.5, "category_macro/Data Processing and Transformation": 0.4,
            "category_micro/Security and Privacy": 1.0, "category_macro/Security and Privacy": 0.9,
            "category_micro/Testing and Debugging": 0.0, "category_macro/Testing and Debugging": 0.0,
            "Corr@1[Java]": 1.0, "Comp@1[Java]": 0.5, "Corr@1[Python]": 0.75, "Comp@1[Python]": 0.25,
            "pcs_by_program": programs, "test_branch_coverage_by_program": dict(programs),
            "_gaps": {p: 0.0 for p in programs}}


def _md_cells(md: str) -> list[str]:
    return [c.strip() for line in md.splitlines() if line.startswith("|") for c in line.strip("|").split(" | ")]


def _html_cells_outside_folded_lists(page: str) -> list[str]:
    page = re.sub(r"<details.*?</details>", "", page, flags=re.S)
    page = re.sub(r"<svg.*?</svg>", "", page, flags=re.S)
    return [re.sub(r"<[^>]+>", "", c) for c in re.findall(r"<td[^>]*>(.*?)</td>", page, flags=re.S)]


# ---------------------------------------------------------------- 13: breakdowns
def test_breakdown_keys_are_grouped_into_tables_and_dicts_into_per_item_lists():
    grid = L.layout(_breakdown_metrics(), ["csr", "ssr", "rule_judge_kappa"])
    assert grid.single == ["csr", "ssr", "rule_judge_kappa"]
    tables = {tuple(b.prefixes): b for b in grid.breakdowns}
    cats = tables[("category_micro", "category_macro")]
    rows, cols, cells = cats.grid()
    assert rows == ["Data Processing and Transformation", "Security and Privacy", "Testing and Debugging"]
    assert cols == ["category_micro", "category_macro"]
    assert cells[1] == ["category_micro/Security and Privacy", "category_macro/Security and Privacy"]
    assert tables[("Corr@1", "Comp@1")].bracket
    assert [p.names for p in grid.per_item] == [["pcs_by_program", "test_branch_coverage_by_program"]]
    assert "_gaps" not in str(grid)


def test_prefixes_that_share_some_parts_form_one_table_with_dashes_for_the_missing_cells():
    metrics = {f"{m}/{c}": 1.0 for m in ("judgement_acc", "pcs") for c in ("original", "rename", "flip")}
    metrics.update({f"jaccard_judgement/{c}": None for c in ("rename", "flip")})
    (table,) = L.layout(metrics).breakdowns
    rows, cols, cells = table.grid()
    assert rows == ["judgement_acc", "pcs", "jaccard_judgement"] and cols == ["original", "rename", "flip"]
    assert cells[2][0] is None  # no jaccard of the original against itself


def test_markdown_and_html_show_breakdowns_as_small_tables_and_never_a_private_key():
    report = _report(_breakdown_metrics(), headline=["csr", "ssr", "rule_judge_kappa"])
    md, page = markdown_summary(report), html_report(report)
    for text in (md, page):
        assert "_gaps" not in text
        assert "Program000WithARatherLongName': 0.0" not in text  # no dict printed as one cell
    assert max(map(len, _md_cells(md))) <= LONGEST_CELL
    assert max(map(len, _html_cells_outside_folded_lists(page))) <= LONGEST_CELL
    assert "| category | category_micro | category_macro |" in md
    assert "| Security and Privacy | 100.00% | 90.00% |" in md
    assert "`pcs_by_program`: 300 values: mean 49.83%, min 0.00%, max 99.67%" in md
    # the per-program values are listed in the HTML, folded
    assert re.search(r"<details class='per-item'><summary><b>pcs_by_program</b>: 300 values", page)
    assert "<td>Program299WithARatherLongName</td>" in page


def test_a_long_value_is_cut_in_a_table_cell():
    report = _report({"note": "x" * 500, "score": 0.5})
    md, page = markdown_summary(report), html_report(report)
    assert "x" * (L.CELL_LIMIT + 1) not in md and "x" * (L.CELL_LIMIT + 1) not in page
    assert "…" in md


def test_report_sections_carry_no_private_metric():
    class Adapter:
        name, version = "toy", "1"

        def aggregate(self, results, tasks, settings):
            return {"score": 1.0, "_for_figures": {"a": 1}}

    extras = section_extras(Adapter(), {"t": [{"index": 0, "checks": {}}]}, Adapter().aggregate(0, 0, 0), None, {})
    assert extras["metrics"] == {"score": 1.0}


def test_terminal_grid_for_a_breakdown_over_several_parts_and_n_a_for_undefined_values():
    cats = ["original", "rename", "flip"]
    metrics = {f"{m}/{c}": 1.0 for m in ("judgement_acc", "selection_acc") for c in cats}
    metrics.update({"jaccard_judgement/rename": None, "jaccard_judgement/flip": 0.5, "weak": 0})
    report = _report(metrics, headline=list(metrics),
                     notes={"jaccard_judgement": "needs a task handled in one version at least"})
    lines = render_summary(report)
    text = "\n".join(lines)
    assert "None" not in text
    header = next(line for line in lines if "metric/part" in line)
    assert header.split()[1:] == cats
    assert re.search(r"jaccard_judgement +– +n/a +50\.00%", text)
    assert "(–: the metric does not exist for that part)" in text
    assert "n/a: not defined on these results:" in text
    assert "jaccard_judgement/rename: needs a task handled in one version at least" in text
    # a grid: one row per metric prefix, not one line per metric and category
    assert not [line for line in lines if "/" in line.split()[0] and line.split()[0] in metrics]
    assert sum(1 for line in lines if line.split()[0] in ("judgement_acc", "selection_acc", "jaccard_judgement")) == 3


def test_small_breakdowns_keep_their_full_names_in_the_terminal():
    report = _report({"judgement_acc/original": 1.0, "pcs/original": 0.5}, headline=["judgement_acc/original", "pcs/original"])
    text = "\n".join(render_summary(report))
    assert "judgement_acc/original" in text and "pcs/original" in text


# ---------------------------------------------------------------- 15: skips
LEAN = "Lean 4 not found: install elan (https://github.com/leanprover/elan) and pass --verina-lean-project=DIR"


def test_a_section_with_every_item_skipped_says_why_in_every_report():
    report = _report({}, tasks={}, skipped={LEAN: 4},
                     skipped_items={LEAN: [f"basic_{i}::0::code" for i in range(4)]}, name="verina")
    md, page, term = markdown_summary(report), html_report(report), "\n".join(render_summary(report))
    for text in (md, page, term):
        assert "Lean 4 not found" in text
    assert "4 item(s) skipped (every item: nothing was evaluated)" in md
    assert "Nothing was evaluated: every item was skipped" in page
    assert "<th>metric</th>" not in page and "Per-task results" not in page  # no empty tables
    assert "no results: all 4 item(s) were skipped" in term
    assert "`basic_0::0::code`" in md


def test_a_skipped_check_of_an_evaluated_sample_shows_in_its_row():
    tasks = {"HumanEval-S/6": {"samples": [{"index": 0, "checks": {"functional": {"passed": True}}}]}}
    reason = "task has no contract-violating tests"
    report = _report({"pass@1": 1.0}, tasks=tasks, checks=("functional", "contract"), skipped={reason: 1},
                     skipped_items={reason: ["HumanEval-S/6::0::contract"]})
    page = html_report(report)
    assert f"<td class='skip' title='{reason}'>skipped</td>" in page
    assert f"contract: skipped: {reason}" in page
    assert f"- skipped 1 item(s): {reason} (e.g. `HumanEval-S/6::0::contract`)" in markdown_summary(report)


def test_the_store_keeps_skipped_item_ids_sorted():
    store = ResultStore()
    store.add_skip("contract", "no CVTs", "specbench::contract::Mbpp-S/2::0::contract")
    store.add_skip("contract", "no CVTs", "specbench::contract::HumanEval-S/6::0::contract")
    assert store.skips("contract") == {"no CVTs": 2}
    assert store.skipped_items("contract") == {"no CVTs": ["HumanEval-S/6::0::contract", "Mbpp-S/2::0::contract"]}


# ---------------------------------------------------------------- 16: failure messages
def test_a_failed_checks_message_reaches_the_json_and_the_html():
    store = ResultStore()
    message = "2 of 7 contract-violating inputs accepted; first: f(x=-1) returned None"
    store.add({"benchmark": "contract", "task_id": "t1", "sample": 0, "check": "contract", "passed": False,
               "details": {"rejected": 5, "total": 7}, "message": message})
    store.add({"benchmark": "contract", "task_id": "t2", "sample": 0, "check": "contract", "passed": True,
               "details": {"rejected": 7, "total": 7}, "message": ""})
    tasks = store.tasks_section("contract", ["t1", "t2"])
    assert tasks["t1"]["samples"][0]["checks"]["contract"]["message"] == message
    assert "message" not in tasks["t2"]["samples"][0]["checks"]["contract"]
    json.dumps(tasks)
    page = html_report(_report({"csr": 0.5}, tasks=tasks, checks=("contract",)))
    assert f"contract: {message}" in page


# ---------------------------------------------------------------- 14, 17: plots
from pytest_specbench.reports.summary import _adapter_figure, _plots  # noqa: E402


@pytest.fixture
def Figure():  # noqa: N802  (the class)
    """matplotlib's Figure, imported by the tests that draw: importing it at module load cost
    every xdist worker ~0.3 CPU s at collection (tests/test_house_figures.py likewise)."""
    pytest.importorskip("matplotlib")
    from matplotlib.figure import Figure

    return Figure


def test_postcond_gap_counts_are_drawn_as_bars_not_histogrammed_again(Figure):
    from pytest_specbench.benchmarks.postcond.adapter import ADAPTER

    (spec,) = ADAPTER.figures({"gap_by_method": {f"m{i}": 0.0 for i in range(12)}}, None)
    assert spec["kind"] == "binned" and spec["counts"][0] == 12 and sum(spec["counts"]) == 12
    heights = [p.get_height() for p in _adapter_figure(Figure, spec).axes[0].patches]
    assert heights == [12] + [0] * 9  # 12 methods at gap 0, as the paper's Figure 3 counts them


def test_a_single_k_is_no_pass_at_k_curve_and_dots_at_100_are_inside_the_axes(Figure):  # drawn
    one = _plots("evalplus", {"metrics": {"pass@1": 1.0, "pass@1_base": 1.0}}, None)
    assert "pass@k" not in one
    two = {"metrics": {"pass@1": 1.0, "pass@10": 1.0}, "metrics_ci": {}}
    assert one.count("<svg") == 1 and "pass@k (base + extra)" in _plots("evalplus", two, None)


def test_percent_figures_run_0_to_100_and_say_percent(Figure):
    spec = {"kind": "bar", "percent": True, "x": ["Judgement", "PCS"], "series": {"original": [1.0, 0.5]},
            "ylabel": "score"}
    ax = _adapter_figure(Figure, spec).axes[0]
    assert [p.get_height() for p in ax.patches] == [100.0, 50.0]
    assert ax.get_ylabel() == "score (%)" and ax.get_ylim()[1] > 100


def test_a_histogram_of_shares_spans_0_to_1_even_when_every_value_is_the_same(Figure):
    spec = {"kind": "hist", "y": [1.0] * 4, "range": [0, 1], "percent": True, "xlabel": "branch coverage"}
    ax = _adapter_figure(Figure, spec).axes[0]
    lo, hi = ax.get_xlim()
    assert lo <= 0 and 100 <= hi <= 110  # not 0.6-1.4 around the one value
    assert max(p.get_height() for p in ax.patches) == 4


def test_speceval_figures_are_percent_bars_and_histograms_over_0_1():
    from fakes import FakeSettings
    from pytest_specbench.benchmarks.speceval.adapter import ADAPTER

    figs = ADAPTER.figures({"judgement_acc/original": 1.0, "pcs/original": 1.0,  # default options: original
                            "pcs_by_program": {"A": 1.0, "B": 1.0}}, FakeSettings())
    assert all(f.get("percent") for f in figs)
    assert {f["kind"] for f in figs} == {"bar", "hist"}
    assert next(f for f in figs if f["kind"] == "hist")["range"] == [0, 1]
    assert not any("(%)" in f.get("ylabel", "") for f in figs)  # the drawing adds it, with the scale


def test_cife_explains_an_undefined_kappa():
    from pytest_specbench.benchmarks.cife.metrics import metric_notes

    notes = metric_notes({"rule_judge_kappa": math.nan, "rule_decided": 32})
    assert "undefined here" in notes["rule_judge_kappa"] and "32" in notes["rule_judge_kappa"]
    page = html_report(_report({"csr": 1.0, "rule_judge_kappa": math.nan, "rule_decided": 32}, notes=notes))
    assert "n/a: not defined on these results" in page and "undefined here" in page


# ---------------------------------------------------------------- 18: docs and paths
def test_paths_are_shown_normalised():
    assert L.shown_path("/work/p/../shared/datasets") == "/work/shared/datasets"
    report = _report({"csr": 1.0})
    report["benchmarks"]["bench"]["data"] = "/work/p/../shared/datasets"
    for text in (markdown_summary(report), html_report(report), "\n".join(render_summary(report))):
        assert "/work/shared/datasets" in text and "/../" not in text


def test_docs_match_the_commands():
    from _pytest.config.argparsing import Parser

    from pytest_specbench.plugin.options import addoption

    parser = Parser(_ispytest=True)
    addoption(parser)
    group = parser.getgroup("specbench")
    title = group._arggroup.title  # the section name `pytest --help` prints
    assert title == "specification benchmarks (pytest-specbench)" and title in (ROOT / "README.md").read_text()
    model = next(o for o in group.options if "--model" in o.names())
    assert "default" in model.attrs()["help"] and "reference" in model.attrs()["help"]
    cife = (ROOT / "docs" / "cife.md").read_text()
    assert "once the" not in cife and "specbench cife rules" in cife
    from pytest_specbench import cli

    with pytest.raises(SystemExit) as done:
        cli.main(["cife", "--help"])
    assert done.value.code == 0


def test_a_kappa_is_a_coefficient_not_a_percentage():
    report = _report({"csr": 0.5, "rule_judge_kappa": 0.6765}, headline=["csr", "rule_judge_kappa"],
                     ci={"rule_judge_kappa": [0.4974, 0.8247], "csr": [0.4, 0.6]})
    term = "\n".join(render_summary(report))
    assert "rule_judge_kappa  0.68  [95% CI 0.50, 0.82]" in term
    assert "| rule_judge_kappa | 0.68 | 0.50 – 0.82 |" in markdown_summary(report)
    assert "67.65%" not in html_report(report)


def test_grouped_bars_stay_vertical_and_values_at_or_above_0_get_no_negative_axis(Figure):
    spec = {"kind": "bar", "x": ["precision", "recall"], "series": {"rename": [0.0, 0.0], "flip": [0.0, 0.0]}}
    ax = _adapter_figure(Figure, spec).axes[0]
    assert ax.get_ylim() == (0.0, 1.0)
    assert all(p.get_width() < 1 for p in ax.patches)  # vertical bars: narrow, not rows
