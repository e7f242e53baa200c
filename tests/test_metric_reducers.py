"""Metrics declared as reducers (``metrics/reducers.py``): what each reducer
computes, and that the reports' bootstrap takes a declared mean's per-task
values from its score instead of probing ``aggregate`` on single tasks."""
from __future__ import annotations

from types import SimpleNamespace

from pytest_specbench.metrics.reducers import Count, Declared, Derived, Grouped, Mean, PerItem, Summary, evaluate
from pytest_specbench.reports import stats


def _passed(samples):
    rows = [s["checks"]["c"]["verdict"] == "passed" for s in samples if "c" in s.get("checks", {})]
    return rows or None


def _rate(rows):
    return sum(rows) / len(rows)


DECLARED = Declared(item=_passed, reducers=(
    Mean("rate", _rate),
    Count("items"),
    Summary("max", _rate, lambda xs: max(xs) if xs else None),
    Derived("miss", ("rate",), lambda r: 1 - r),
    Grouped((Mean("rate", _rate), Count("items")), lambda _t, task: task.group, {"a": "A", "b": "B", "z": "Z"},
            keep_empty=True),
    Grouped((Mean("rate", _rate),), lambda _t, task: task.group, {"a": "A", "z": "Z"}),
    PerItem("by_item", _rate),
))


def _results(verdicts):
    return {t: [{"checks": {"c": {"verdict": "passed" if v else "failed"}}} for v in vs] for t, vs in verdicts.items()}


TASKS = {f"t{i}": SimpleNamespace(group="a" if i % 3 else "b", cluster=None) for i in range(12)}
RESULTS = _results({f"t{i}": [i % 2 == 0, i % 4 == 0] for i in range(12)})


def test_each_reducer_and_grouping():
    results = {**_results({"t0": [True, False], "t1": [True], "t2": [False]}), "t3": [{"checks": {}}]}
    tasks = {"t0": SimpleNamespace(group="a"), "t1": SimpleNamespace(group="b"), "t2": SimpleNamespace(group="a")}
    out = evaluate(DECLARED, results, tasks)
    assert out == {"rate": 0.5, "items": 3, "max": 1.0, "miss": 0.5,
                   "rate[A]": 0.25, "items[A]": 2, "rate[B]": 1.0, "items[B]": 1, "items[Z]": 0,
                   "by_item": {"t0": 0.5, "t1": 1.0, "t2": 0.0}}
    assert list(out) == ["rate", "items", "max", "miss", "rate[A]", "items[A]", "rate[B]", "items[B]", "items[Z]",
                         "by_item"]  # report order: as declared; t3 (no result counted) is no item
    plain = evaluate(DECLARED, results)  # compared without tasks: no groups at all
    assert not any("[" in k for k in plain) and plain["rate"] == 0.5
    assert evaluate(DECLARED, {}) == {"items": 0, "max": None, "by_item": {}}


def test_bootstrap_reads_declared_means_instead_of_probing_single_tasks():
    single = []

    class Probed:
        def __call__(self, results, tasks=None):
            if len(results) == 1:
                single.append(next(iter(results)))
            return evaluate(DECLARED, results, tasks)

    class Declaring(Probed):
        declared = DECLARED

    metrics = evaluate(DECLARED, RESULTS, TASKS)
    probed = stats.bootstrap_ci(Probed(), RESULTS, metrics, tasks=TASKS, resamples=300)
    probed_calls, single[:] = len(single), []
    declared = stats.bootstrap_ci(Declaring(), RESULTS, metrics, tasks=TASKS, resamples=300)
    assert probed == declared  # same intervals, same replicate counts
    assert probed_calls == len(RESULTS) and single == list(RESULTS)  # counts and `max` are still probed
    tv = stats.TaskValues(Declaring(), RESULTS, ["rate", "rate[A]", "rate[B]"], tasks=TASKS)
    assert tv.linear == {"rate", "rate[A]", "rate[B]"}
    assert tv.values["rate[B]"][0] == 1.0 and tv.values["rate[B]"][1] != tv.values["rate[B]"][1]  # NaN: not in B
    single[:] = []
    stats.TaskValues(Declaring(), RESULTS, ["rate", "rate[A]"], tasks=TASKS)
    assert single == []  # only declared means asked for: aggregate is never called on a single task


def test_a_mean_over_every_item_is_absent_when_one_item_has_no_score():
    declared = Declared(item=_passed, reducers=(Mean("rate", _rate, every=True),
                                                Mean("rate_if_two", lambda rows: _rate(rows) if len(rows) > 1 else None,
                                                     every=True)))
    out = evaluate(declared, _results({"t0": [True, False], "t1": [True]}))
    assert out == {"rate": 0.75}  # t1 has one sample: the second mean is left out, not taken over t0 alone
