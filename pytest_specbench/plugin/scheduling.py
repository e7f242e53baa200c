"""xdist dispatch for specbench items: costliest first, handed out as workers free up.

xdist's ``load`` scheduling sends each worker long runs of consecutive items
(an eighth of the collection each, to start).  Benchmark items differ in cost by
four orders of magnitude (HumanEval/15's huge inputs against a one-liner), so
one worker can end up alone on a late run of heavy tasks while the other idles:
on ContractEval with the reference model, ``-n 2`` was only 1.4x ``-n 0``.

:class:`CostFirstScheduling` is ``load`` with two changes: items are dispatched
in decreasing order of predicted cost (longest-processing-time first, Graham
1969: within 4/3 of the best schedule when costs are known), and each worker is
kept only a short queue, refilled as items finish.  Item order, the collection
xdist checks across workers, and the results are unchanged; only which worker
runs an item, and when, differs.  Used when ``-n`` is given with ``--dist load``
(xdist's default); any other ``--dist`` keeps xdist's own scheduler.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from itertools import cycle

from xdist.scheduler import LoadScheduling

# A worker needs the next item before it can finish the current one (pytest's
# teardown looks ahead), so it always holds at least MIN_QUEUE.  More hides the
# controller's round trip when items are small, but every queued item is
# committed to that worker before it is known to be free: ContractEval's
# Mbpp/599 (16 s of a 50 s run) once held 16 of the heaviest items behind it.  So
# a worker's queue (beyond the item it runs) holds at most QUEUE_SHARE of the
# run's predicted cost per worker, and at most MAX_QUEUE items.
MIN_QUEUE = 2
MAX_QUEUE = 16
QUEUE_SHARE = 0.01


class CostFirstScheduling(LoadScheduling):
    """``--dist load`` dispatching the costliest items first (see the module docstring)."""

    def __init__(self, config, log, cost_of: Callable[[Sequence[str]], list[float]]):
        super().__init__(config, log)
        self._cost_of = cost_of  # node ids -> predicted cost of each (any unit; only ratios matter)
        self._costs: list[float] = []
        self._budget = 0.0

    def schedule(self) -> None:
        assert self.collection_is_completed
        if self.collection is not None:  # a node joined later: top every node up
            for node in self.nodes:
                self.check_schedule(node)
            return
        if not self._check_nodes_have_same_collection():
            self.log("**Different tests collected, aborting run**")
            return
        self.collection = next(iter(self.node2collection.values()))
        self._costs = [max(float(c), 0.0) for c in self._cost_of(self.collection)]
        self._budget = QUEUE_SHARE * sum(self._costs) / max(len(self.nodes), 1)
        # sorted() is stable: equal costs (a task's samples) keep collection order, together.
        self.pending[:] = sorted(range(len(self.collection)), key=lambda i: -self._costs[i])
        if not self.collection:
            return
        # Deal one item at a time so the heaviest items land on different workers.
        dealing = True
        while dealing and self.pending:
            dealing = False
            for node in self.nodes:
                if self.pending and self._wants_more(node):
                    self._send_tests(node, 1)
                    dealing = True
        if not self.pending:
            for node in self.nodes:
                node.shutdown()

    def check_schedule(self, node, duration: float = 0) -> None:
        if node.shutting_down:
            return
        if not self.pending:
            node.shutdown()
            return
        count = 0
        while count < len(self.pending) and self._wants_more(node, extra=self.pending[:count]):
            count += 1
        if count:
            self._send_tests(node, count)

    def _wants_more(self, node, extra: Sequence[int] = ()) -> bool:
        queue = list(self.node2pending[node]) + list(extra)
        if len(queue) < MIN_QUEUE:
            return True
        if len(queue) >= MAX_QUEUE:
            return False
        # queue[0] is the item the worker runs (or will run next); the rest wait.
        waiting = sum(self._costs[i] for i in queue[1:]) + self._costs[self.pending[len(extra)]]
        return waiting <= self._budget
