"""Shared fixtures for pytest-specbench's own tests."""
from __future__ import annotations

from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "datasets"


@pytest.fixture
def shared_data() -> Path:
    """The real upstream data beside the checkout; tests using it skip without it."""
    if not (SHARED_DATA / "contracteval").is_dir():
        pytest.skip(f"real data not found at {SHARED_DATA}")
    return SHARED_DATA
