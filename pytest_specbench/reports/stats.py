"""Statistics for reports and gates: bootstrap confidence intervals over tasks,
paired bootstrap deltas, and the exact McNemar test.

Resampling is over *task clusters* (``Task.cluster``: tasks that are not
independent, such as a program and its perturbed variants, are drawn together;
by default every task is its own cluster);
a metric on a resampled task set is whatever the adapter's ``aggregate`` says
for that set, so every metric of every adapter gets an interval without
knowing what it means.  Two shortcuts keep this fast and change nothing in the
result:

* a metric that is a mean over tasks (pass@k, csr, contract_pass@1, ...) has
  its replicates computed as means of per-task values instead of ``aggregate``
  calls.  An adapter that declares its metrics as reducers
  (``declared_metrics(settings)``, :mod:`pytest_specbench.metrics.reducers`)
  says which metrics are means, grouped ones included, and their per-task
  values come from its scores; for the metrics it does not declare, a mean
  is detected by checking ``aggregate`` against the mean of its per-task
  values on the full set and on a few resamples;
* a metric that is a total over tasks (a count: ContractEval's cvt_tasks and
  cvts_run) is detected the same way, against the sum of its per-task values on
  the full set and on a few resamples, and its replicates are sums (the same
  draws, so the same interval as calling ``aggregate``: ~0.2 CPU s of every
  12-task ContractEval report went to 1,000 such calls, issue #45; in a run too
  large for the budget below, a total keeps every replicate);
* a pooled ratio of two such totals (CIFE's rule_decided_share, over its
  rule_decided and constraints_recorded) is found among the pairs of totals
  and confirmed the same way; its replicates are the drawn totals' ratio
  (1,000 calls of CIFE's aggregate were ~1.5 CPU s of a 12-task report);
* a metric the adapter declares as pooled (``pooled_metrics(results, tasks,
  settings)``: a function of totals over tasks of per-task parts the report
  does not show, such as CIFE's category micro averages and its rule-judge
  kappa over constraints) is confirmed the same way, against the function of
  its parts' totals on the full set and a few resamples; its replicates are
  that function of the drawn totals (1,000 calls of CIFE's aggregate were
  ~1.2 CPU s of a 12-task report, and scale with the tasks);
* the other metrics (pooled ratios whose parts the report does not
  show, such as csr_cvt) call ``aggregate`` once per replicate; for huge runs fewer replicates are drawn (never fewer
  than :data:`MIN_RESAMPLES`), by a budget on the size of the results, not on
  measured time, so the count is the same on every machine; the report says how many.

Every replicate draws its task indices from ``random.Random(seed)``, so
intervals are the same on every machine and every run.
"""
from __future__ import annotations

import math
import random
from typing import Any, Callable, Mapping, Sequence

from ..metrics import reducers

RESAMPLES = 1000
MIN_RESAMPLES = 200
SEED = 20240611
# Sample results the generic (non-task-mean) replicates of one benchmark may walk
# through in all (about 5 s on a 2-core CI machine).
GENERIC_WORK_BUDGET = 5_000_000

Results = Mapping[str, Sequence[Mapping[str, Any]]]
# A pooled metric: ``(reduce, parts)``, the metric being ``reduce(*totals)`` where each total
# is a part's per-task values ({task id: number}, 0 where absent) summed over the tasks.
Pooled = tuple[Callable[..., float], Sequence[Mapping[str, float]]]
# ``aggregate(results)``, or ``aggregate(results, tasks)`` when the caller passes ``tasks``.
Aggregate = Callable[..., Mapping[str, Any]]


def is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def percentile(sorted_values: Sequence[float], q: float) -> float:
    """Linear-interpolation percentile (numpy's default), ``q`` in [0, 1]."""
    if not sorted_values:
        return float("nan")
    pos = q * (len(sorted_values) - 1)
    lo = math.floor(pos)
    hi = min(lo + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (pos - lo)


def _interval(values: list[float], level: float) -> list[float] | None:
    values = sorted(v for v in values if v is not None and not math.isnan(v))
    if not values:
        return None
    tail = (1 - level) / 2
    return [percentile(values, tail), percentile(values, 1 - tail)]


def _draws(n_units: int, resamples: int, seed: int) -> list[list[int]]:
    rng = random.Random(seed)
    population = range(n_units)
    return [rng.choices(population, k=n_units) for _ in range(resamples)]


class Resampler:
    """Draws clusters of tasks with replacement (``Task.cluster``: a SpecEval
    program with its perturbed variants, a PostcondBench method with its
    mutants; by default each task is its own cluster) and builds the resampled
    results and task mapping that ``aggregate`` is called with."""

    def __init__(self, task_ids: Sequence[str], tasks: Mapping[str, Any] | None = None):
        self.task_ids = list(task_ids)
        self.tasks = tasks
        units: dict[str, list[int]] = {}
        for i, task_id in enumerate(self.task_ids):
            task = (tasks or {}).get(task_id)
            units.setdefault(str(getattr(task, "cluster", None) or task_id), []).append(i)
        self.units = list(units.values())
        self.unit = "task" if len(self.units) == len(self.task_ids) else "cluster"

    def draws(self, resamples: int, seed: int) -> list[list[int]]:
        return _draws(len(self.units), resamples, seed)

    def resampled(self, results: Results, draw: Sequence[int]) -> tuple[dict[str, Any], dict[str, Any]]:
        # Keys must stay distinct when a cluster is drawn twice.
        res: dict[str, Any] = {}
        tks: dict[str, Any] = {}
        for j, u in enumerate(draw):
            for i in self.units[u]:
                task_id = self.task_ids[i]
                key = f"{task_id}#{j}"
                res[key] = results[task_id]
                if self.tasks is not None and task_id in self.tasks:
                    tks[key] = self.tasks[task_id]
        return res, tks

    def sum_over(self, values: Sequence[float], draw: Sequence[int]) -> float:
        """The total over the tasks of the drawn clusters (a cluster drawn twice counts twice)."""
        return sum(values[i] for u in draw for i in self.units[u])

    def mean_over(self, values: Sequence[float], draw: Sequence[int]) -> float:
        """The mean over the tasks of the drawn clusters (NaN values left out)."""
        total = count = 0
        for u in draw:
            for i in self.units[u]:
                v = values[i]
                if v == v:  # not NaN
                    total += v
                    count += 1
        return total / count if count else float("nan")


class AdapterAggregate:
    """``aggregate(results, tasks)`` of an adapter under ``settings``, with the
    adapter's declared reducers (``declared_metrics(settings)``, optional) as
    ``declared`` for the bootstrap."""

    def __init__(self, adapter: Any, settings: Any):
        self.adapter, self.settings = adapter, settings
        declare = getattr(adapter, "declared_metrics", None)
        self.declared = declare(settings) if callable(declare) else None
        self._pooled = getattr(adapter, "pooled_metrics", None)

    def pooled(self, results: Mapping[str, Any], tasks: Mapping[str, Any] | None) -> Mapping[str, Pooled]:
        """The adapter's pooled metrics (``pooled_metrics``), or none."""
        return self._pooled(results, tasks, self.settings) if callable(self._pooled) else {}

    def __call__(self, results: Mapping[str, Any], tasks: Mapping[str, Any] | None = None) -> Mapping[str, Any]:
        return self.adapter.aggregate(results, tasks, self.settings)


def _call(aggregate: Callable[..., Mapping[str, Any]], results: Mapping[str, Any],
          tasks: Mapping[str, Any] | None) -> Mapping[str, Any]:
    """``aggregate(results)`` or, when the caller has the tasks, ``aggregate(results, tasks)``."""
    return aggregate(results) if tasks is None else aggregate(results, tasks)


def _resampled(task_ids: Sequence[str], results: Results, draw: Sequence[int]) -> dict[str, Any]:
    """Task-level resample (each task its own cluster)."""
    return {f"{task_ids[i]}#{j}": results[task_ids[i]] for j, i in enumerate(draw)}


def _nanmean(values: Sequence[float]) -> float:
    kept = [v for v in values if not math.isnan(v)]
    return sum(kept) / len(kept) if kept else float("nan")


def _close(a: Any, b: float) -> bool:
    if a is None or not is_number(a):
        return math.isnan(b)
    return not math.isnan(b) and abs(a - b) <= 1e-9 * max(1.0, abs(a))


class TaskValues:
    """Per-task values of one report's metrics, and which metrics are task means."""

    def __init__(self, aggregate: Aggregate, results: Results, metrics: Sequence[str], seed: int = SEED,
                 tasks: Mapping[str, Any] | None = None):
        self.task_ids = list(results)
        self.resampler = Resampler(self.task_ids, tasks)
        declared = getattr(aggregate, "declared", None)
        means = {} if declared is None else {
            m: v for m, v in reducers.item_means(declared, results, tasks, self.task_ids).items() if m in metrics}
        probed = [m for m in metrics if m not in means]
        self.values: dict[str, list[float]] = {m: [] for m in probed}
        # The report's other numbers, read on the same calls: the parts a pooled ratio may be of
        # (a comparison asks for the ratio alone; its parts are totals the report shows too).
        parts: dict[str, list[float]] = {}
        pooled: dict[str, tuple[Callable[..., float], list[str]]] = {}
        if probed:
            for k, task_id in enumerate(self.task_ids):
                one = _call(aggregate, {task_id: results[task_id]},
                            None if tasks is None else {task_id: tasks[task_id]} if task_id in tasks else {})
                for m in probed:
                    v = one.get(m)
                    self.values[m].append(float(v) if is_number(v) else float("nan"))
                for m, v in one.items():  # a key some tasks lack is never a total (NaN there)
                    if m not in self.values and (k == 0 or m in parts):
                        parts.setdefault(m, []).append(float(v) if is_number(v) else float("nan"))
                for m in [m for m, seen in parts.items() if len(seen) < k + 1]:
                    del parts[m]
            full = _call(aggregate, results, tasks)
            linear = {m for m in probed if _close(full.get(m), _nanmean(self.values[m]))}
            totals = {m for m in probed if m not in linear and not any(math.isnan(v) for v in self.values[m])
                      and _close(full.get(m), sum(self.values[m]))}
            self.values.update({m: v for m, v in parts.items() if not any(math.isnan(x) for x in v)
                                and _close(full.get(m), sum(v))})
            part_totals = set(self.values) - set(probed)
            # A pooled ratio of two totals (CIFE's rule_decided_share: rule_decided /
            # constraints_recorded), candidates checked on the full set here, on resamples below.
            ratios = {(m, num, den) for m in probed if m not in linear and m not in totals
                      for num in totals | part_totals for den in totals | part_totals
                      if num != den and sum(self.values[den]) > 0
                      and _close(full.get(m), sum(self.values[num]) / sum(self.values[den]))}
            # Pooled metrics the aggregate declares by their parts (``AdapterAggregate.pooled``).
            declared_pooled = getattr(aggregate, "pooled", None)
            for m, (reduce, pooled_parts) in (declared_pooled(results, tasks) if declared_pooled else {}).items():
                if m not in probed or m in linear or m in totals:
                    continue
                keys = [f"{m}\0part {i}" for i in range(len(pooled_parts))]
                for key, part in zip(keys, pooled_parts):
                    self.values[key] = [float(part.get(t, 0)) for t in self.task_ids]
                if _close(full.get(m), reduce(*(sum(self.values[k]) for k in keys))):
                    pooled[m] = (reduce, keys)
        else:
            linear, totals, ratios, part_totals = set(), set(), set(), set()
        # Confirm on a few resamples (a pooled ratio can equal the task mean by chance on the
        # full set); a total and a ratio are kept only when confirmed.
        if (linear or totals or ratios or pooled) and len(self.resampler.units) > 1:
            for draw in self.resampler.draws(3, seed + 7):
                got = _call(aggregate, *self._both(results, draw, tasks))
                for m in list(linear):
                    if not _close(got.get(m), self.resampler.mean_over(self.values[m], draw)):
                        linear.discard(m)
                for m in list(totals) + list(part_totals):
                    if not _close(got.get(m), self.resampler.sum_over(self.values[m], draw)):
                        totals.discard(m)
                        part_totals.discard(m)
                for ratio in list(ratios):
                    if not _close(got.get(ratio[0]), self._ratio_over(ratio[1:], draw)):
                        ratios.discard(ratio)
                for m, (reduce, keys) in list(pooled.items()):
                    if not _close(got.get(m), reduce(*(self.resampler.sum_over(self.values[k], draw) for k in keys))):
                        del pooled[m]
        else:
            totals, ratios, part_totals, pooled = set(), set(), set(), {}
        # Metrics whose replicates are sums of per-task values (never means: see ``linear``).
        self.totals = totals
        # Metric -> (numerator, denominator): both totals, confirmed; the first pair found
        # when two pairs agree everywhere they were checked.
        self.ratios: dict[str, tuple[str, str]] = {}
        for m, num, den in sorted(ratios):
            if {num, den} <= totals | part_totals:
                self.ratios.setdefault(m, (num, den))
        # Metric -> (reduce, its parts' keys in ``values``): declared pooled metrics, confirmed.
        self.pooled = pooled
        # Declared means need no probe: the declaration says what they are.
        self.values.update(means)
        self.linear = linear | set(means)

    def _ratio_over(self, pair: Sequence[str], draw: Sequence[int]) -> float:
        """A pooled ratio's replicate: the drawn total of its numerator over that of its denominator."""
        den = self.resampler.sum_over(self.values[pair[1]], draw)
        return self.resampler.sum_over(self.values[pair[0]], draw) / den if den else float("nan")

    def replicate(self, metric: str, draw: Sequence[int]) -> float:
        """``metric`` on the drawn tasks, from per-task values (a mean, a total, a ratio of totals or a
        declared pooled metric)."""
        if metric in self.linear:
            return self.resampler.mean_over(self.values[metric], draw)
        if metric in self.totals:
            return self.resampler.sum_over(self.values[metric], draw)
        if metric in self.pooled:
            reduce, keys = self.pooled[metric]
            return reduce(*(self.resampler.sum_over(self.values[k], draw) for k in keys))
        return self._ratio_over(self.ratios[metric], draw)

    def fast(self, metric: str) -> bool:
        """Whether :meth:`replicate` gives ``metric`` without calling ``aggregate``."""
        return metric in self.linear or metric in self.totals or metric in self.ratios or metric in self.pooled

    def _both(self, results: Results, draw: Sequence[int], tasks: Mapping[str, Any] | None):
        res, tks = self.resampler.resampled(results, draw)
        return res, (None if tasks is None else tks)

    def binary(self, metric: str) -> bool:
        return all(v in (0.0, 1.0) for v in self.values[metric] if not math.isnan(v))


def bootstrap_ci(aggregate: Aggregate, results: Results, metrics: Mapping[str, Any], *,
                 resamples: int = RESAMPLES, seed: int = SEED, level: float = 0.95,
                 tasks: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """``{"metrics_ci": {metric: [lo, hi]}, "resamples": n, ...}``: percentile
    bootstrap over task clusters (``tasks`` given: ``Task.cluster``, and
    ``aggregate(results, tasks)`` is called with the resampled tasks too)."""
    names = [m for m, v in metrics.items() if is_number(v)]
    info: dict[str, Any] = {"level": level, "resamples": resamples, "seed": seed, "unit": "task"}
    if not names or len(results) < 2:
        return {"metrics_ci": {m: [float(metrics[m]), float(metrics[m])] for m in names}, **info}
    tv = TaskValues(aggregate, results, names, seed, tasks)
    info["unit"] = tv.resampler.unit
    if tv.resampler.unit == "cluster":
        info["clusters"] = len(tv.resampler.units)
    if len(tv.resampler.units) < 2:
        return {"metrics_ci": {m: [float(metrics[m]), float(metrics[m])] for m in names}, **info}
    draws = tv.resampler.draws(resamples, seed)
    ci: dict[str, Any] = {}
    for m in names:
        if tv.fast(m):
            ci[m] = _interval([tv.replicate(m, d) for d in draws], level)
    generic = [m for m in names if not tv.fast(m)]
    if generic:
        n = _generic_resamples(results, resamples)
        reps: dict[str, list[float]] = {m: [] for m in generic}
        for d in draws[:n]:
            got = _call(aggregate, *tv._both(results, d, tasks))
            for m in generic:
                v = got.get(m)
                reps[m].append(float(v) if is_number(v) else float("nan"))
        for m in generic:
            ci[m] = _interval(reps[m], level)
        if n < resamples:
            info["resamples_reduced"] = {"resamples": n, "metrics": generic,
                                         "why": f"results too large for {resamples} replicates within the work budget"}
    info["metrics_ci"] = {m: ci[m] for m in names if ci.get(m) is not None}
    return info


def _generic_resamples(results: Results, wanted: int) -> int:
    """Replicates that fit the work budget; decided by the results' size alone."""
    size = max(1, sum(len(samples) for samples in results.values()))
    return max(MIN_RESAMPLES, min(wanted, GENERIC_WORK_BUDGET // size))


def paired_deltas(aggregate: Aggregate, base: Results, cand: Results, metrics: Sequence[str], *,
                  resamples: int = RESAMPLES, seed: int = SEED, level: float = 0.95,
                  tasks: Mapping[str, Any] | None = None) -> dict[str, dict[str, Any]]:
    """Candidate minus baseline for each metric on the tasks both have, with a paired
    bootstrap interval (the same resampled task clusters on both sides).

    For a task-mean metric the per-task values are kept (``per_task``: baseline and
    candidate lists over ``task_ids``) and ``binary`` says whether they are all 0/1,
    i.e. whether McNemar's test applies.
    """
    common = [t for t in cand if t in base]
    b = {t: base[t] for t in common}
    c = {t: cand[t] for t in common}
    common_tasks = None if tasks is None else {t: tasks[t] for t in common if t in tasks}
    full_b, full_c = _call(aggregate, b, common_tasks), _call(aggregate, c, common_tasks)
    out: dict[str, dict[str, Any]] = {}
    for m in metrics:
        vb, vc = full_b.get(m), full_c.get(m)
        out[m] = {"tasks": len(common), "baseline": vb, "candidate": vc, "level": level, "resamples": resamples,
                  "delta": vc - vb if is_number(vb) and is_number(vc) else None, "ci": None, "binary": False}
    wanted = [m for m in metrics if out[m]["delta"] is not None]
    if not wanted:
        return out
    if len(common) < 2:
        for m in wanted:
            out[m]["ci"] = [out[m]["delta"], out[m]["delta"]]
        return out
    tb = TaskValues(aggregate, b, wanted, seed, common_tasks)
    tc = TaskValues(aggregate, c, wanted, seed, common_tasks)
    sampler = tb.resampler
    draws = sampler.draws(resamples, seed)
    generic = []
    for m in wanted:
        if m in tb.linear and m in tc.linear:
            reps = [sampler.mean_over(tc.values[m], d) - sampler.mean_over(tb.values[m], d) for d in draws]
            out[m].update(ci=_interval(reps, level), binary=tb.binary(m) and tc.binary(m), unit=sampler.unit,
                          per_task={"task_ids": common, "baseline": tb.values[m], "candidate": tc.values[m]})
        elif tb.fast(m) and tc.fast(m):  # each side as its aggregate gives it, on the same draws
            reps = [tc.replicate(m, d) - tb.replicate(m, d) for d in draws]
            out[m].update(ci=_interval(reps, level), unit=sampler.unit)
        else:
            generic.append(m)
    if generic:
        n = _generic_resamples(b, resamples)
        reps_g: dict[str, list[float]] = {m: [] for m in generic}
        for d in draws[:n]:
            gb = _call(aggregate, *tb._both(b, d, common_tasks))
            gc = _call(aggregate, *tc._both(c, d, common_tasks))
            for m in generic:
                x, y = gb.get(m), gc.get(m)
                reps_g[m].append(y - x if is_number(x) and is_number(y) else float("nan"))
        for m in generic:
            out[m].update(ci=_interval(reps_g[m], level), resamples=n, unit=sampler.unit)
    return out


def mcnemar_exact(newly_failing: int, newly_passing: int) -> float:
    """Two-sided exact McNemar p-value: a binomial test of the discordant pairs against 1/2."""
    b, c = newly_failing, newly_passing
    n = b + c
    if n == 0:
        return 1.0
    try:
        from scipy.stats import binomtest
    except ImportError:
        k = min(b, c)
        tail = sum(math.comb(n, i) for i in range(k + 1)) / 2 ** n
        return min(1.0, 2 * tail)
    return float(binomtest(min(b, c), n, 0.5, alternative="two-sided").pvalue)
