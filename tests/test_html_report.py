"""The HTML report's layout decisions, on a report dict built by hand: the
parametrised-check columns (one per CIFE constraint) fold into one column per
family, undefined metrics read n/a, long category labels get horizontal bars."""
from __future__ import annotations

import math
import re

import pytest

from pytest_specbench.reports.summary import _check_columns, html_report


def _report(checks, samples, metrics=None, figures=None):
    return {"specbench_version": "test", "manifest": {"model": {"spec": "m"}},
            "benchmarks": {"cife": {"checks": checks, "errors": 0, "data": "bundled",
                                    "metrics": metrics or {"csr": 0.5}, "headline": ["csr"],
                                    "figures": figures or [],
                                    "tasks": {"t1": {"samples": samples}}}}}


def test_parametrised_checks_fold_into_one_column_with_counts():
    checks = ["adherence[0-a]", "adherence[1-b]", "adherence[2-c]", "correctness", "solo[x]"]
    assert _check_columns(checks) == [("adherence[…]", checks[:3]), ("correctness", ["correctness"]),
                                      ("solo[x]", ["solo[x]"])]
    sample = {"index": 0, "checks": {"adherence[0-a]": {"passed": True},
                                     "adherence[1-b]": {"passed": False, "reason": "no docstring"},
                                     "correctness": {"passed": True}}}
    page = html_report(_report(checks, [sample]))
    header = re.search(r"<thead>(.*?)</thead>", page).group(1)
    assert re.findall(r"<th>(.*?)</th>", header) == ["task", "sample", "adherence[…]", "correctness",
                                                     "solo[x]", "message"]
    assert "1/2 pass" in page                      # the constraint that failed is counted, not hidden
    assert "adherence[1-b]: no docstring" in page  # and its reason is in the message column
    assert "checks: adherence[…] ×3, correctness, solo[x]" in page


def test_an_error_in_a_folded_column_shows_as_error():
    checks = ["adherence[0-a]", "adherence[1-b]"]
    sample = {"index": 0, "checks": {"adherence[0-a]": {"passed": True},
                                     "adherence[1-b]": {"error": "judge unreadable"}}}
    page = html_report(_report(checks, [sample]))
    assert "<td class='err'>error 1/2</td>" in page and "judge unreadable" in page


def test_undefined_metric_reads_n_a_not_nan_percent():
    page = html_report(_report(["correctness"], [], metrics={"csr": 1.0, "rule_judge_kappa": math.nan}))
    assert "nan%" not in page
    assert re.search(r"rule_judge_kappa</td><td[^>]*>n/a<", page)


def test_long_category_labels_get_horizontal_bars():
    pytest.importorskip("matplotlib")
    from matplotlib.figure import Figure

    from pytest_specbench.reports.summary import _adapter_figure

    long = {"kind": "bar", "x": ["Data Processing and Transformation", "Security and Privacy"], "y": [0.5, 1.0]}
    short = {"kind": "bar", "x": ["3", "4"], "y": [0.5, 1.0]}
    assert _adapter_figure(Figure, long).axes[0].patches[0].get_height() < 1  # barh: bars are thin rows
    assert [p.get_width() for p in _adapter_figure(Figure, long).axes[0].patches] == [1.0, 0.5]
    assert [p.get_height() for p in _adapter_figure(Figure, short).axes[0].patches] == [0.5, 1.0]


def test_a_cvt_count_says_rejected_and_a_run_of_errors_says_0_evaluated():
    """#44: "fail 0/13" read as "0 failures" where it meant "0 of 13 CVTs rejected"; a run
    whose every item errored said "12 tasks evaluated"."""
    from pytest_specbench.reports.report import render_summary
    from pytest_specbench.reports.summary import markdown_summary

    cvt = {"index": 0, "checks": {"contract": {"passed": False, "rejected": 0, "total": 13,
                                               "message": "accepted the CVT f(-1)"}}}
    page = html_report(_report(["contract"], [cvt]))
    assert "<td class='fail'>fail (0/13 rejected)</td>" in page

    errored = _report(["correctness"], [{"index": 0, "checks": {"correctness": {"error": "generation failed"}}}])
    errored["benchmarks"]["cife"]["errors"] = 1
    for text in (html_report(errored), markdown_summary(errored), "\n".join(render_summary(errored))):
        assert "0 of 1 tasks evaluated (1 with harness errors only)" in text
        assert "1 tasks evaluated" not in text.replace("0 of 1 tasks evaluated", "")


def test_the_markdown_summary_gives_each_failure_its_reason():
    from pytest_specbench.reports.summary import MD_FAILURES, markdown_summary

    samples = [{"index": 0, "checks": {"adherence[0-a]": {"passed": False, "reason": "no | docstring"},
                                       "correctness": {"error": "judge unreadable"}}}]
    text = markdown_summary(_report(["adherence[0-a]", "correctness"], samples))
    assert "- F `t1::0::adherence[0-a]`: no \\| docstring" in text  # a | would end the table cell
    assert "- E `t1::0::correctness`: judge unreadable" in text
    many = [{"index": i, "checks": {"correctness": {"passed": False, "message": f"wrong {i}"}}}
            for i in range(MD_FAILURES + 5)]
    text = markdown_summary(_report(["correctness"], many))
    assert f"({MD_FAILURES + 5} items; the first {MD_FAILURES} here, all in the HTML and JSON reports)" in text
    ends = [line.rsplit(": ", 1)[-1] for line in text.splitlines()]
    assert f"wrong {MD_FAILURES - 1}" in ends and f"wrong {MD_FAILURES}" not in ends
