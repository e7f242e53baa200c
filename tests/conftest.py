"""Shared fixtures for pytest-specbench's own tests."""
from __future__ import annotations

from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

from shared_data import SHARED_DATA  # noqa: E402  (tests/ is on sys.path)


@pytest.fixture
def shared_data() -> Path:
    """The real upstream data beside the checkout; tests using it skip without it."""
    if not (SHARED_DATA / "contracteval").is_dir():
        pytest.skip(f"real data not found at {SHARED_DATA}")
    return SHARED_DATA


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    # The fault tests record what each hostile sample got and how long it took;
    # show that as a table at the end of the run.
    import sys

    module = next((m for name, m in sys.modules.items() if name.endswith("test_sandbox_faults")), None)
    rows = getattr(module, "OBSERVED", None)
    if not rows:
        return
    terminalreporter.section("sandbox faults: verdict and time")
    width = max(len(r[0]) for r in rows)
    for fault, verdict, seconds in rows:
        terminalreporter.write_line(f"{fault.ljust(width)}  {seconds:6.2f} s  {verdict}")
