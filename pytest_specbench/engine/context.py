"""The concrete :class:`CheckContext` a check receives (the interface is
``types.py``'s protocol of the same name).

A plain dataclass: the settings, the process's services (executors, model
roles, cache folders) and, per item, how to read another check's result on the
same sample.  No ``__getattr__``: what a check may use is what is written here,
so a test's fake context (``tests/fakes.py``) is this very class with fake
services, and an adapter never needs to ask whether its context has something.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Protocol


class ServicesLike(Protocol):
    """What a context needs of the process's services (``plugin/services.py``'s
    ``Services``; ``tests/fakes.py``'s ``FakeServices``)."""

    def executor(self, kind: str) -> Any: ...

    def model(self, role: str) -> Any: ...

    def cache_dir(self, *parts: str) -> Path: ...


def no_results(check: str) -> None:
    """``result_of`` outside an item (``skip_reason``, ``dispatch_cost``): no sample, no results."""
    return None


@dataclass(frozen=True)
class CheckContext:
    settings: Any  # plugin.options.Settings: limits, details, option(name), state_dir, ...
    services: ServicesLike
    results: Callable[[str], Any] = no_results  # check -> CheckResult | None, for this item's sample
    # True while the xdist controller plans a run (dispatch costs, dedupe groups, what
    # to generate for a model that answers locally): ``skip_reason`` then answers from
    # what is cached only and prepares nothing (a ground truth, a checkout); a skip it
    # cannot tell yet is None and the worker running the item decides.  So a first run
    # prepares what it selects, on the workers, in parallel (#28).
    planning: bool = False

    def option(self, name: str) -> Any:
        """The validated value of a declared adapter option."""
        return self.settings.option(name)

    def executor(self, kind: str) -> Any:
        """The sandboxed executor for ``kind`` (python, command, jvm, lean)."""
        return self.services.executor(kind)

    def python_executor(self) -> Any:
        return self.services.executor("python")

    def model(self, role: str) -> Any:
        """A model role (``judge``)."""
        return self.services.model(role)

    def cache_dir(self, *parts: str) -> Path:
        return self.services.cache_dir(*parts)

    def result_of(self, check: str) -> Any:
        """Another check's result on this item's sample (``VerdictEngine.result_of``)."""
        return self.results(check)

    def for_item(self, results: Callable[[str], Any]) -> "CheckContext":
        """This context for one item: ``result_of`` reads that item's sample."""
        return CheckContext(self.settings, self.services, results)

    def for_planning(self) -> "CheckContext":
        """This context as the controller's planning sees it (``planning`` True)."""
        return CheckContext(self.settings, self.services, self.results, planning=True)
