"""Adapters' own figures (Benchmark.figures) are drawn in the HTML report by generic code."""
from __future__ import annotations

import pytest

from pytest_specbench.reports.summary import _plots


def test_adapter_figures_are_drawn_and_a_bad_one_costs_only_itself():
    pytest.importorskip("matplotlib")  # here, not at module load: every xdist worker collects this file
    section = {"metrics": {"score": 0.5, "other": 0.25}, "figures": [
        {"title": "per constraint", "kind": "bar", "x": ["a", "b"], "y": [1, 2]},
        {"title": "with CI", "kind": "errorbar", "x": [1, 2], "y": [0.5, 0.6], "lo": [0.4, 0.5], "hi": [0.6, 0.7]},
        {"title": "sizes", "kind": "hist", "y": [1, 2, 2, 3]},
        {"title": "bad", "kind": "pie"}]}
    html = _plots("toy", section, None)
    assert html.count("<svg") == 1 + 3  # the generic metrics plot, then the adapter's three
    # the figure that cannot be drawn is named with its reason (escaped for HTML), and costs only itself
    assert "bad: not drawn (unknown figure kind &#x27;pie&#x27;)" in html
