"""The gate's pytest side: the hooks that collect what else went wrong (ordinary
tests, collection errors), the JUnit XML's global properties and the terminal
lines.  The gate's logic (thresholds, baseline comparison, readable reports) is
``reports/gate.py``, which imports nothing of pytest."""
from __future__ import annotations

from typing import Any

import pytest

from ..reports.gate import Gate, render_gate


class GatePlugin(Gate):
    """:class:`~pytest_specbench.reports.gate.Gate` as a pytest plugin (registered
    in the controller by ``plugin/session.py``)."""

    config: pytest.Config | None = None  # pytest_configure (historic: called at registration)

    def pytest_configure(self, config: pytest.Config) -> None:
        self.config = config

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        # Harness errors of benchmark items are counted by the run (and --specbench-max-errors);
        # here: anything else that went wrong (ordinary tests the user named, teardown, crashes).
        if not report.failed:
            return
        benchmark_item = report.nodeid.startswith("specbench::")
        if not benchmark_item or report.when not in ("setup", "call"):
            self.errors.append(report.nodeid)

    def pytest_collectreport(self, report) -> None:
        if report.failed:
            self.errors.append(report.nodeid or "collection")

    def finish(self) -> None:
        """The gate's verdict, then its JUnit properties into ``--junitxml``'s file
        (before ``pytest_sessionfinish`` writes it)."""
        if self.verdict is not None:
            return
        super().finish()
        xml = _logxml(self.config) if self.config is not None else None
        if xml is not None:
            for name, value in self.junit:
                xml.add_global_property(name, value)

    @pytest.hookimpl(trylast=True)  # after the metric table
    def pytest_terminal_summary(self, terminalreporter, exitstatus, config) -> None:
        if self.verdict is None:
            return
        for line in render_gate(self.verdict):
            terminalreporter.write_line(line)
        for label, path in (("Markdown summary", self.markdown), ("HTML report", self.html)):
            if path:
                terminalreporter.write_line(f"specbench: {label} written to {path}")


def _logxml(config: pytest.Config) -> Any:
    """``--junitxml``'s writer: pytest has no public handle on it (its stash key is private)."""
    try:
        from _pytest.junitxml import xml_key
    except ImportError:
        return None
    return config.stash.get(xml_key, None)
