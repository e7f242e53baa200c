"""pytest hooks of pytest-specbench (the ``pytest11`` entry point).

Hooks only: options come from :mod:`.options`; once ``--specbench`` is given,
a :class:`~.session.SpecbenchRun` is registered and its hooks do the work.
"""
from __future__ import annotations

import pytest

from ..errors import SpecbenchError
from .options import Settings, addoption, remember_model, take_node_ids


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
    try:
        take_node_ids(config)
        # Imports the selected adapters (a broken one: one line here); the others stay unimported.
        settings = Settings.from_config(config)
        if settings is None:  # no --specbench: the run (and its start-up) is pytest's own
            return
        from .session import SpecbenchRun

        config.pluginmanager.register(SpecbenchRun(config, settings), "specbench-run")
        if not hasattr(config, "workerinput"):
            if settings.model_origin:
                from ..models.endpoints import redact_url

                url = settings.option("model_base_url")
                where = f" at {redact_url(str(url))}" if url else ""
                config.get_terminal_writer().line(f"specbench: --model not given: using {settings.model_spec}{where}, "
                                                  "the last run's model", yellow=True)
            remember_model(config, settings.model_spec)
    except SpecbenchError as exc:
        channel = (getattr(config, "workerinput", None) or {}).get("specbench_link")
        if channel is not None:
            # An xdist worker (maybe on another host): the controller says why in one
            # line and stops the run; this worker collects nothing meanwhile.
            channel.send(("refused", str(exc)))
            config.pluginmanager.register(_CollectNothing(), "specbench-refused")
            return
        raise pytest.UsageError(f"specbench: {exc}") from None


def wire_safe(value):
    """``value`` with every string encodable as UTF-8: a lone surrogate (in a
    sample's exception text, a judge's reason) becomes its escape (``\\ud800``).
    Containers are rebuilt only when something inside changed."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
            return value
        except UnicodeEncodeError:
            return value.encode("utf-8", "backslashreplace").decode("utf-8")
    if isinstance(value, dict):
        items = [(wire_safe(k), wire_safe(v)) for k, v in value.items()]
        return value if all(a is k and b is v for (a, b), (k, v) in zip(items, value.items())) else dict(items)
    if isinstance(value, (list, tuple)):
        items = [wire_safe(v) for v in value]
        return value if all(a is b for a, b in zip(items, value)) else type(value)(items)
    return value


@pytest.hookimpl(wrapper=True)
def pytest_report_to_serializable(config: pytest.Config, report):
    """The one place a worker's results are serialized for the controller
    (pytest-xdist calls this hook for every report it sends): execnet refuses a
    string that is not valid UTF-8, and one such string in an item's outcome,
    details, message, longrepr or captured output would kill the worker and
    abort the run (INTERNALERROR), whatever the family."""
    data = yield
    return wire_safe(data) if data is not None else data


class _CollectNothing:
    """A worker that could not start its run collects nothing while the controller stops."""

    @pytest.hookimpl(tryfirst=True)
    def pytest_ignore_collect(self, collection_path, config):
        return True


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    report = yield
    from .items import one_line_setup_error

    one_line_setup_error(item, call, report)
    return report
