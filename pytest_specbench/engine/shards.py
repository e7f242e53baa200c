"""Shards for batch schedulers, pytest-free: which items shard I of N runs.

A Kubernetes Indexed Job or a Slurm array starts N copies of one command that
cannot talk to a controller; each copy runs ``--specbench-shard=I/N`` and
writes its own journal, and ``specbench merge`` builds the one report
(docs/distributed.md).  So the split must be the same on every host, with
nothing to agree on but the command line and the data:

* the unit is a task (all its samples and checks): within-run dedupe groups
  copies per task and check, and ``ctx.result_of`` reads another check of the
  same sample, so both keep working inside one shard;
* a unit's cost is the sum of its items' ``dispatch_cost`` as the adapter
  predicts it with **no caches** (a cost measured on one host, EvalPlus's
  expected outputs, would move tasks between shards on another) and without
  skip reasons (a missing toolchain on one host must not move work);
* longest-processing-time first: units by cost, highest first (ties by name),
  each to the shard with the least cost so far (ties: the lowest index).
  Every unit lands in exactly one shard.
"""
from __future__ import annotations

import heapq
import re
from typing import Iterable, Mapping

from ..errors import OptionError

SHARD_OPTION = "--specbench-shard"


def parse_shard(text: str | None) -> tuple[int, int] | None:
    """``"I/N"`` (0 <= I < N) as ``(I, N)``; None when not given.  A bad value is
    a one-line :class:`OptionError` naming the option."""
    if text is None or str(text).strip() == "":
        return None
    match = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", str(text))
    if not match:
        raise OptionError(SHARD_OPTION, f"expected I/N (shard I of N, counted from 0: 0/4 ... 3/4), got {text!r}")
    index, count = int(match.group(1)), int(match.group(2))
    if count < 1 or index >= count:
        raise OptionError(SHARD_OPTION, f"expected 0 <= I < N, got {text!r} (shards are counted from 0: "
                                        f"$JOB_COMPLETION_INDEX, $SLURM_ARRAY_TASK_ID with --array=0-{max(count, 1) - 1})")
    return index, count


def assign(costs: Mapping[str, float], count: int) -> dict[str, int]:
    """Each unit's shard: longest-processing-time first, deterministic.

    ``costs`` maps a unit's name to its predicted cost (negative or not-a-number
    costs count as 0)."""
    order = sorted(costs, key=lambda unit: (-_cost(costs[unit]), unit))
    loads = [(0.0, shard) for shard in range(count)]  # (cost so far, shard): a heap, least loaded first
    shard_of: dict[str, int] = {}
    for unit in order:
        load, shard = heapq.heappop(loads)
        shard_of[unit] = shard
        heapq.heappush(loads, (load + _cost(costs[unit]), shard))
    return shard_of


def _cost(value: float) -> float:
    return value if value == value and value > 0 else 0.0  # NaN and negatives: 0


def unit_of(benchmark: str, task_id: str) -> str:
    """The name of the unit an item belongs to (its benchmark and task)."""
    return f"{benchmark}::{task_id}"


def unit_costs(items: Iterable[tuple[str, str, float]]) -> dict[str, float]:
    """``{unit: summed cost}`` of ``(benchmark, task_id, item cost)`` rows."""
    costs: dict[str, float] = {}
    for benchmark, task_id, cost in items:
        unit = unit_of(benchmark, task_id)
        costs[unit] = costs.get(unit, 0.0) + _cost(cost)
    return costs
