"""The HTML report's per-task filter in a real headless browser (issue #44, point 3).

A report of two benchmarks has a filter box, a row selector and a row counter above
each benchmark's table; each must filter its own table and count its own rows.  The
page is opened in Debian's Chromium (``apt-get install chromium``) driven by
Playwright for Python (``pip install playwright``; no browser download: the system
browser is launched by path).  Without either the test skips with one line.
The controls are found as a user sees them (the search boxes, selectors and counters
in page order), not by the report's class names.
"""
from __future__ import annotations

import os
import shutil

import pytest

from pytest_specbench.reports.summary import html_report

CHROMIUM = os.environ.get("SPECBENCH_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")


def _browser():
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.skip("no Playwright: pip install playwright (and apt-get install chromium) to run the browser test")
    if not CHROMIUM:
        pytest.skip("no Chromium: apt-get install chromium (or SPECBENCH_CHROMIUM=PATH) to run the browser test")
    return sync_playwright


def _section(tasks: int, fail_every: int, checks: list[str]) -> dict:
    samples = {}
    for i in range(tasks):
        passed = i % fail_every != 0
        check = {"passed": passed, **({} if passed else {"message": f"wrong answer on input {i}"})}
        # A CVT check ("contract") also counts the inputs it rejected.
        cvt = {"rejected": 13 if passed else 0, "total": 13}
        samples[f"HumanEval-S/{i}" if tasks > 5 else f"task-{i}"] = {
            "samples": [{"index": 0, "checks": {c: {**check, **(cvt if c == "contract" else {})} for c in checks}}]}
    return {"checks": checks, "errors": 0, "data": "bundled", "metrics": {"pass@1": 0.5}, "headline": ["pass@1"],
            "tasks": samples}


def _report() -> dict:
    return {"specbench_version": "test", "manifest": {"model": {"spec": "python:mod:generate"}},
            "benchmarks": {"contract": _section(12, 4, ["functional", "contract"]),
                           "cife": _section(3, 2, ["correctness"])}}


def test_each_benchmark_s_filter_filters_its_own_table_in_a_real_browser(tmp_path):
    sync_playwright = _browser()
    page_file = tmp_path / "report.html"
    page_file.write_text(html_report(_report()), encoding="utf-8")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            page = browser.new_page(viewport={"width": 1100, "height": 1400})
            page.goto(page_file.as_uri())
            boxes, selects = page.locator("input[type=search]"), page.locator("div.controls select")
            counters = page.locator("div.controls span")
            bodies = page.locator("tbody:has(tr[data-tags])")
            assert boxes.count() == selects.count() == counters.count() == bodies.count() == 2

            def visible(i: int) -> list[str]:
                """The task cells of the rows of table i the browser lays out (one round trip)."""
                return page.evaluate("""i => [...document.querySelectorAll('tbody')]
                    .filter(b => b.querySelector('tr[data-tags]'))[i].querySelectorAll('tr')
                    .values().filter(r => r.getClientRects().length > 0).map(r => r.cells[0].innerText)
                    .toArray()""", i)

            # Each counter counts its own table from the start.
            assert [counters.nth(i).inner_text() for i in range(2)] == ["12 of 12 rows", "3 of 3 rows"]

            boxes.nth(0).fill("HumanEval-S/1")  # substring: also S/10 and S/11
            assert visible(0) == ["HumanEval-S/1", "HumanEval-S/10", "HumanEval-S/11"]
            assert counters.nth(0).inner_text() == "3 of 12 rows"
            assert visible(1) == ["task-0", "task-1", "task-2"] and counters.nth(1).inner_text() == "3 of 3 rows"

            selects.nth(1).select_option("fail")  # the second benchmark's selector: its failing rows only
            assert visible(1) == ["task-0", "task-2"] and counters.nth(1).inner_text() == "2 of 3 rows"
            assert visible(0) == ["HumanEval-S/1", "HumanEval-S/10", "HumanEval-S/11"]

            boxes.nth(1).fill("input 2")  # text of the message column
            assert visible(1) == ["task-2"] and counters.nth(1).inner_text() == "1 of 3 rows"
            boxes.nth(0).fill("")
            assert len(visible(0)) == 12 and counters.nth(0).inner_text() == "12 of 12 rows"
            # The CVT column says what its count is.
            assert "fail (0/13 rejected)" in bodies.nth(0).inner_text()
            if os.environ.get("SPECBENCH_SCREENSHOT"):  # a picture of the filtered page, to look at
                page.screenshot(path=os.environ["SPECBENCH_SCREENSHOT"], full_page=True)
        finally:
            browser.close()
