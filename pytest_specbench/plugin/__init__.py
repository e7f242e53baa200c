"""pytest hooks of pytest-specbench (the ``pytest11`` entry point).

Hooks only: options come from :mod:`.options`; once ``--specbench`` is given,
a :class:`~.session.SpecbenchRun` is registered and its hooks do the work.
"""
from __future__ import annotations

import pytest

from ..errors import SpecbenchError
from .options import Settings, addoption, take_node_ids


def pytest_addoption(parser: pytest.Parser) -> None:
    addoption(parser)


@pytest.hookimpl(trylast=True)
def pytest_configure(config: pytest.Config) -> None:
    from .session import SpecbenchRun

    try:
        take_node_ids(config)
        settings = Settings.from_config(config)
        if settings is None:
            return
        config.pluginmanager.register(SpecbenchRun(config, settings), "specbench-run")
    except SpecbenchError as exc:
        raise pytest.UsageError(f"specbench: {exc}") from None


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    report = yield
    from .items import one_line_setup_error

    one_line_setup_error(item, call, report)
    return report
