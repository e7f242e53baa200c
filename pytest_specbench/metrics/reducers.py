"""Metrics declared as reducers over per-item scores, with optional groupings.

Shaped like Inspect AI's scorer metrics (``mean()``, ``stderr(cluster=...)``,
``grouped(metric, key)``): an adapter says *what* each metric is (the mean
over items of a score, a count, a per-item table, a function of other metrics)
instead of only handing over a function that computes them all.  Two uses:

* :func:`evaluate` computes the metrics (an adapter's ``aggregate`` may be
  just that);
* the reports' bootstrap (:mod:`pytest_specbench.reports.stats`) knows from
  the declaration which metrics are means over items, and takes their
  per-item values from the scores, instead of probing ``aggregate`` on single
  tasks and resamples to find out.

An *item* is a task with its samples' results; :attr:`Declared.item` turns
those results into the value the scores read (``None``: the task has no
result these metrics count, and is left out, as an empty task is today).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

Item = Any  # what Declared.item made of one task's sample results
Score = Callable[[Item], "float | None"]  # None: the item does not count for this metric
GroupKey = Callable[[str, Any], "str | None"]  # (task id, Task or None) -> group label, or None


@dataclass(frozen=True)
class Mean:
    """The mean of ``score`` over the items it is defined for (absent when none;
    with ``every``, absent unless it is defined for every item, as pass@k is
    left out when a task has fewer than k samples)."""

    name: str
    score: Score
    every: bool = False


@dataclass(frozen=True)
class Count:
    """How many items there are."""

    name: str


@dataclass(frozen=True)
class PerItem:
    """``{task id: score}`` over the items the score is defined for (a per-item
    breakdown in the reports)."""

    name: str
    score: Score


@dataclass(frozen=True)
class Summary:
    """``reduce`` of the scores of the items the score is defined for (a median,
    say); ``reduce`` gets the list, empty when no item has a score."""

    name: str
    score: Score
    reduce: Callable[[list[float]], Any]


@dataclass(frozen=True)
class Derived:
    """A function of the metrics computed before it (``Delta@k = Corr@k - Comp@k``);
    ``needs`` must all be present, else the metric is absent."""

    name: str
    needs: tuple[str, ...]
    compute: Callable[..., Any]


@dataclass(frozen=True)
class Grouped:
    """``reducers`` over each group's items, named ``NAME[LABEL]``.

    ``key`` gives an item's group from its task (no task, or ``None``: in no
    group).  ``groups`` maps a group to its label, in report order.  With
    ``keep_empty``, a group without items still gets its counts (its means are
    absent); without, it gets nothing.  Nothing at all is reported when no item
    has a group (results compared without their tasks)."""

    reducers: tuple[Mean | Count, ...]
    key: GroupKey
    groups: Mapping[str, str]
    keep_empty: bool = False

    def names(self) -> list[str]:
        return [f"{r.name}[{label}]" for label in self.groups.values() for r in self.reducers]


Reducer = Mean | Count | PerItem | Summary | Derived | Grouped


@dataclass(frozen=True)
class Declared:
    """An adapter's metrics: ``item`` makes an item of a task's sample results,
    ``reducers`` compute the metrics from the items, in report order."""

    item: Callable[[Sequence[Mapping[str, Any]]], Item]
    reducers: tuple[Reducer, ...] = field(default_factory=tuple)

    def items(self, results: Mapping[str, Sequence[Mapping[str, Any]]]) -> dict[str, Item]:
        made = {}
        for task_id, samples in results.items():
            item = self.item(samples)
            if item is not None:
                made[task_id] = item
        return made


def _mean(values: list[float]) -> float:
    return sum(values) / len(values)


def _reduce(reducer: Mean | Count | PerItem | Summary, items: Mapping[str, Item]) -> tuple[bool, Any]:
    """(present, value) of one plain reducer over ``items``."""
    if isinstance(reducer, Count):
        return True, len(items)
    scores = {t: reducer.score(item) for t, item in items.items()}
    kept = {t: v for t, v in scores.items() if v is not None}
    if isinstance(reducer, PerItem):
        return True, kept
    if isinstance(reducer, Summary):
        return True, reducer.reduce(list(kept.values()))
    if not kept or (reducer.every and len(kept) < len(scores)):
        return False, None
    return True, _mean(list(kept.values()))


def _group_of(grouping: Grouped, task_id: str, tasks: Mapping[str, Any] | None) -> str | None:
    task = tasks.get(task_id) if tasks else None
    return grouping.key(task_id, task) if task is not None else None


def evaluate(declared: Declared, results: Mapping[str, Sequence[Mapping[str, Any]]],
             tasks: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The declared metrics of ``results`` (``tasks``: the Task of each task id, for groupings)."""
    items = declared.items(results)
    out: dict[str, Any] = {}
    for reducer in declared.reducers:
        if isinstance(reducer, Derived):
            if all(n in out for n in reducer.needs):
                out[reducer.name] = reducer.compute(*(out[n] for n in reducer.needs))
        elif isinstance(reducer, Grouped):
            keys = {t: _group_of(reducer, t, tasks) for t in items}
            if not any(k is not None for k in keys.values()):
                continue
            for group, label in reducer.groups.items():
                members = {t: item for t, item in items.items() if keys[t] == group}
                if not members and not reducer.keep_empty:
                    continue
                for inner in reducer.reducers:
                    present, value = _reduce(inner, members)
                    if present:
                        out[f"{inner.name}[{label}]"] = value
        else:
            present, value = _reduce(reducer, items)
            if present:
                out[reducer.name] = value
    return out


def item_means(declared: Declared, results: Mapping[str, Sequence[Mapping[str, Any]]],
               tasks: Mapping[str, Any] | None, task_ids: Sequence[str]) -> dict[str, list[float]]:
    """Per-task values of every declared mean (grouped ones included), in
    ``task_ids`` order, NaN where a task does not count: each such metric is the
    mean of its non-NaN values over any set of tasks (what the bootstrap needs)."""
    items = declared.items(results)
    nan = float("nan")
    out: dict[str, list[float]] = {}

    def score(reducer: Mean, task_id: str) -> float:
        item = items.get(task_id)
        value = reducer.score(item) if item is not None else None
        return nan if value is None else float(value)

    for reducer in declared.reducers:
        if isinstance(reducer, Mean):
            out[reducer.name] = [score(reducer, t) for t in task_ids]
        elif isinstance(reducer, Grouped):
            keys = {t: _group_of(reducer, t, tasks) for t in task_ids}
            for group, label in reducer.groups.items():
                for inner in reducer.reducers:
                    if isinstance(inner, Mean):
                        out[f"{inner.name}[{label}]"] = [score(inner, t) if keys[t] == group else nan
                                                         for t in task_ids]
    return out
