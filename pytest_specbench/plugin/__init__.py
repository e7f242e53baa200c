"""pytest hooks of pytest-specbench (the ``pytest11`` entry point).

Hooks only: options come from :mod:`.options`; once ``--specbench`` is given,
a :class:`~.session.SpecbenchRun` is registered and its hooks do the work.
"""
from __future__ import annotations

import pytest

from ..errors import SpecbenchError
from .options import Settings, addoption


def pytest_addoption(parser: pytest.Parser) -> None:
    addoption(parser)


@pytest.hookimpl(trylast=True)
def pytest_configure(config: pytest.Config) -> None:
    from .session import SpecbenchRun

    try:
        settings = Settings.from_config(config)
        if settings is None:
            return
        config.pluginmanager.register(SpecbenchRun(config, settings), "specbench-run")
    except SpecbenchError as exc:
        raise pytest.UsageError(f"specbench: {exc}") from None
