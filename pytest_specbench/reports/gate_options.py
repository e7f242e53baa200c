"""The gate's options (:mod:`.gate`), declared apart from its logic: every pytest process
lists them (``plugin/options.py``), and an xdist worker, which never gates, then does not
import the gate with the statistics it pulls in (docs/timing.md, session 21)."""
from __future__ import annotations

from typing import Any


def addoption(group, addini) -> None:
    def opt(name: str, dest: str, text: str, default: Any = "", **kw: Any) -> None:
        group.addoption(name, dest=dest, default=None, help=text.replace("%", "%%"), **kw)  # argparse %-formats help
        addini(dest, text, default=default, **({"type": "bool"} if kw.get("action") == "store_true" else {}))

    opt("--specbench-fail-under", "specbench_fail_under",
        "gate: fail unless each metric reaches its value, [BENCH:]METRIC=VALUE,... (e.g. contract:csr=0.45,pass@1=70%)")
    opt("--specbench-baseline", "specbench_baseline",
        "gate: compare with this earlier JSON report, paired by task (flips, deltas with 95% CIs, McNemar)")
    opt("--specbench-compare-fail", "specbench_compare_fail",
        "gate: fail on a significant drop beyond the tolerance, [BENCH:]METRIC:TOL,... (TOL -2% relative or -0.02 absolute)")
    opt("--specbench-alpha", "specbench_alpha", "significance level of the baseline comparison (default 0.05)", "0.05")
    group.addoption("--specbench-compare-force", dest="specbench_compare_force", action="store_true", default=None,
                    help="compare with the baseline even when data hashes, benchmark versions or checks differ")
    addini("specbench_compare_force", "compare even when data, versions or checks differ", type="bool", default=False)
    opt("--specbench-markdown", "specbench_markdown",
        "write a Markdown summary here (it is also appended to $GITHUB_STEP_SUMMARY when that is set)")
    opt("--specbench-html", "specbench_html", "write a self-contained HTML report here (plots need the 'html' extra)")
