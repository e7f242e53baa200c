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
    from .hosts import addoption as hosts_options

    hosts_options(parser.getgroup("specbench"), None)


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config: pytest.Config) -> None:
    # Before xdist's own hook reads --tx/--px: --specbench-hosts expands into them.
    from .hosts import apply

    try:
        apply(config)
    except SpecbenchError as exc:
        raise pytest.UsageError(f"specbench: {exc}") from None


@pytest.hookimpl(trylast=True)
def pytest_configure(config: pytest.Config) -> None:
    from .session import SpecbenchRun

    try:
        settings = Settings.from_config(config)
        if settings is None:
            return
        config.pluginmanager.register(SpecbenchRun(config, settings), "specbench-run")
    except SpecbenchError as exc:
        channel = (getattr(config, "workerinput", None) or {}).get("specbench_link")
        if channel is not None:
            # An xdist worker (maybe on another host): the controller says why in one
            # line and stops the run; this worker collects nothing meanwhile.
            channel.send(("refused", str(exc)))
            config.pluginmanager.register(_CollectNothing(), "specbench-refused")
            return
        raise pytest.UsageError(f"specbench: {exc}") from None


class _CollectNothing:
    """A worker that could not start its run collects nothing while the controller stops."""

    @pytest.hookimpl(tryfirst=True)
    def pytest_ignore_collect(self, collection_path, config):
        return True
