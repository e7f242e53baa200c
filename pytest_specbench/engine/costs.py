"""What each item cost when it last ran: dispatch costs the scheduler can trust (issue #48).

The scheduler hands out the costliest items first (``plugin/scheduling.py``, LPT),
by the adapters' predicted costs (``dispatch_cost``: for EvalPlus, the reference's
own measured work on every input).  A prediction from the reference cannot see a
sample that times out: on a task whose reference takes a millisecond, a sample
runs to twice its 1 s limit (docs/timing.md, "Why a margin of 2").  Dispatched
with the cheap items at the end of the run, two such items held by one worker
(it holds the next item before it starts the current one) leave the other idle:
2.3 s at the end of the quiet W4-HumanEval run of 29 Nov (HumanEval/55 and /39).

:class:`MeasuredCosts` keeps, per run (the run part of the run key: model,
samples, checks, data, limits; ``engine/ledger.py``), the seconds each item's
evaluation took when it last ran here (its setup, where the check runs, and its
call), measured by the controller from the items' reports.  Only items that were
evaluated count: a copy (within-run dedupe), a result-cache hit or a resumed item
did no work.  :func:`dispatch_costs` puts them in place of the predictions, on the
predictions' scale; an item never measured keeps its prediction.  Nothing here
reaches a verdict: only which worker runs an item, and when.  The order is a
function of the file, so it is deterministic for the same state folder; a first
run of a set (no file) is scheduled by the predictions alone, as before.
"""
from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path

FORMAT = 1
FOLDER = "costs"  # under the state folder's cache/


class MeasuredCosts:
    """Seconds per node id of one run part, read once and written at the run's end."""

    def __init__(self, folder: Path | None, run_part: str):
        name = hashlib.sha256(run_part.encode()).hexdigest()[:24]
        self.path = None if folder is None else folder / f"{name}.json"
        self._earlier: dict[str, float] | None = None
        self.new: dict[str, float] = {}

    @property
    def earlier(self) -> dict[str, float]:
        """What the last runs of this run part measured (empty: none, or unreadable)."""
        if self._earlier is None:
            self._earlier = {}
            if self.path is not None:
                try:
                    data = json.loads(self.path.read_text(encoding="utf-8"))
                except (OSError, ValueError):
                    data = None
                if isinstance(data, dict) and data.get("format") == FORMAT and isinstance(data.get("seconds"), dict):
                    self._earlier = {k: float(v) for k, v in data["seconds"].items()
                                     if isinstance(v, (int, float)) and v >= 0}
        return self._earlier

    def record(self, nodeid: str, seconds: float) -> None:
        self.new[nodeid] = max(float(seconds), 0.0)

    def save(self) -> None:
        """This run's figures over the earlier ones (items not run now keep theirs);
        atomic, and a state folder that cannot be written only costs the order."""
        if self.path is None or not self.new:
            return
        seconds = {**self.earlier, **{k: round(v, 4) for k, v in self.new.items()}}
        tmp = self.path.with_name(f"{self.path.name}.{os.getpid()}.tmp")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            tmp.write_text(json.dumps({"format": FORMAT, "seconds": seconds}, sort_keys=True), encoding="utf-8")
            os.replace(tmp, self.path)
        except OSError:
            pass


def dispatch_costs(nodeids: Sequence[str], predicted: Sequence[float], measured: Mapping[str, float]) -> list[float]:
    """Each item's cost for the scheduler: its measured seconds where known, converted
    to the predictions' unit by the ratio of the two over the items that have both
    (a prediction is in the adapter's own unit: only ratios matter); else its prediction.
    When no item has both (adapters that predict nothing), an unmeasured item gets the
    median of the measured figures: an average item, neither first nor last."""
    seen = [measured.get(n) for n in nodeids]
    if not any(s is not None for s in seen):
        return [float(p) for p in predicted]
    pairs = [(float(p), s) for p, s in zip(predicted, seen) if s is not None and p > 0]
    total_predicted = sum(p for p, _ in pairs)
    if total_predicted > 0 and sum(s for _, s in pairs) > 0:
        per_second = total_predicted / sum(s for _, s in pairs)
        return [float(p) if s is None else s * per_second for p, s in zip(predicted, seen)]
    known = sorted(s for s in seen if s is not None)
    typical = known[len(known) // 2]
    return [typical if s is None else s for s in seen]
