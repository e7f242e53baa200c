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
runs an item, and when, differs.  When nothing is left to hand out, an idle
worker takes back half of the unstarted items queued on the busiest one (the
``steal`` command of xdist's ``worksteal``): a sample's timeout (1 s on a task
whose reference takes 1 ms) cannot be predicted from the reference.  A run before
knows it: the session's ``cost_of`` gives what an item took when it last ran here
(``engine/costs.py``), which puts such an item among the first.  Used when ``-n`` is
given with ``--dist load`` (xdist's default); any other ``--dist`` keeps xdist's own
scheduler.

Within-run deduplication (:mod:`.dedupe`): items with the same program key
form a group.  Only its first item in dispatch order (the representative) is
dispatched; the others (its copies) are held here until it has finished, then
go out first (they only read its verdict).  Keys are asked for as items near the
head of the dispatch order (:data:`KEY_BATCH` at a time, growing), not for the
whole collection before the first dispatch: the first items go out as soon as
their own keys are known, and the rest are keyed while workers run (in dispatch
order, the first item of a key is its representative either way; a copy met
while it runs is held, one met after its verdict goes out).  So no program runs
on two workers at once.  Two cases keep the run moving: a worker whose only queued item is a
representative (xdist runs an item only once it holds the next one, or is
told to shut down) gets one of its copies right behind it, on the same worker,
which reads the verdict after it; and a representative that ended without a
verdict (an error, a crashed worker) hands the group to its next copy.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence

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
# Program keys are computed for this many items of the dispatch order at a time, then
# twice as many each time (up to KEY_BATCH_MAX): the first dispatch waits for a few
# keys only, and a later batch does not hold the controller for long (~1.7 ms a key:
# workers' queues hold a few items, so a long pause would idle them).
KEY_BATCH = 16
KEY_BATCH_MAX = 64
# A worker's look-ahead slot behind a long item takes one of the cheapest pending items
# (CostFirstScheduling._filler): this many are tried from the end of the dispatch order.
FILLER_TRIES = 8


class CostFirstScheduling(LoadScheduling):
    """``--dist load`` dispatching the costliest items first (see the module docstring)."""

    def __init__(self, config, log, cost_of: Callable[[Sequence[str]], list[float]],
                 group_of: Callable[[Sequence[str]], list[str | None]] | None = None,
                 verdict_known: Callable[[str], bool] | None = None,
                 before_send: Callable[[object, list[str]], None] | None = None):
        super().__init__(config, log)
        # Called with (node, node ids) just before items go to a worker: the session
        # pushes what they need over that worker's gateway (plugin/remote.py).
        self._before_send = before_send
        self._cost_of = cost_of  # node ids -> predicted cost of each (any unit; only ratios matter)
        self._group_of = group_of  # node ids -> program key of each (None: not deduplicated)
        self._verdict_known = verdict_known or (lambda nodeid: True)
        self._held: dict[int, list[int]] = {}  # representative -> its copies not yet dispatched
        self._behind: dict[int, int] = {}  # representative -> the copy queued right behind it
        self._keys: dict[int, str | None] = {}  # item -> program key, for the items keyed so far
        self._order: list[int] = []  # the dispatch order, in which items are keyed
        self._keyed = 0  # items of _order keyed so far
        self._rep_of: dict[str, int] = {}  # program key -> its representative (the item evaluating it)
        self._ended: dict[int, bool] = {}  # a finished representative -> whether it left a verdict
        self._costs: list[float] = []
        self._budget = 0.0
        self._steal_from = None  # the worker a steal request is out to (one at a time)
        self._last_request: list[int] = []
        self._refused: tuple | None = None

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
        if self._group_of is not None:
            self._order = list(self.pending)
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
        for node in self.nodes:
            self._feed_behind(node)
        if not self.pending and not self._held:
            for node in self.nodes:
                node.shutdown()

    def _key(self, index: int) -> str | None:
        """The program key of item ``index``; the next batch of the dispatch order is
        keyed when it is not known yet."""
        while index not in self._keys and self._keyed < len(self._order):
            batch = self._order[self._keyed:self._keyed + min(max(KEY_BATCH, self._keyed), KEY_BATCH_MAX)]
            self._keyed += len(batch)
            for i, key in zip(batch, self._group_of([self.collection[i] for i in batch])):
                self._keys[i] = key
        return self._keys.get(index)

    def _running_rep(self, index: int) -> bool:
        """Whether ``index`` is the representative of its key and has not finished."""
        key = self._keys.get(index)
        return key is not None and self._rep_of.get(key) == index and index not in self._ended

    def _sendable(self) -> bool:
        """Whether the head of ``pending`` may go out now; copies whose representative
        is still running are moved from it to their representative's held list."""
        while self.pending and self._group_of is not None:
            i = self.pending[0]
            key = self._key(i)
            if self._may_go(i, key):
                return True
            del self.pending[0]
            self._held.setdefault(self._rep_of[key], []).append(i)
        return bool(self.pending)

    def _may_go(self, i: int, key: str | None) -> bool:
        """Whether item ``i`` (program key ``key``) may go out now: False for a copy whose
        representative is still running."""
        rep = self._rep_of.get(key) if key is not None else None
        if key is None or rep == i:
            return True
        if rep is None or self._ended.get(rep) is False:
            # The first item of its key, or the one after a representative that left
            # no verdict (an error, a crashed worker): it evaluates the program.
            self._rep_of[key] = i
            return True
        if rep in self._ended:  # the verdict is in: a copy only reads it
            self._costs[i] = 0.0
            return True
        return False

    def _finish_group(self, rep: int) -> None:
        """``rep`` finished: its copies go out first, or, without a verdict, the next copy is the representative."""
        copies = self._held.pop(rep, [])
        behind = self._behind.pop(rep, None)
        known = self._verdict_known(self.collection[rep])
        self._ended[rep] = known
        if not known:
            if behind is not None:  # already queued after it on its worker
                successor = behind
            elif copies:
                successor = copies.pop(0)
                self.pending.insert(0, successor)
            else:
                return  # a copy not keyed yet becomes the representative when its turn comes
            self._rep_of[self._keys[rep]] = successor
            if copies:
                self._held[successor] = copies
            return
        for i in copies:
            self._costs[i] = 0.0  # it reads a verdict: about a pytest item's own overhead
        self.pending[:0] = copies

    def _feed_behind(self, node) -> None:
        """A worker holding only a representative waits for a next item that may be
        one of its held copies: give it one, to run after it on the same worker."""
        if self.pending or node.shutting_down:
            return
        queue = self.node2pending[node]
        if len(queue) == 1 and self._held.get(queue[0]) and queue[0] not in self._behind:
            rep = queue[0]
            copy = self._held[rep].pop(0)
            if not self._held[rep]:
                del self._held[rep]
            self._behind[rep] = copy
            queue.append(copy)
            self._push(node, [copy])
            node.send_runtest_some([copy])

    def _push(self, node, indices: Sequence[int]) -> None:
        if self._before_send is not None:
            self._before_send(node, [self.collection[i] for i in indices])

    def _send_tests(self, node, num: int) -> None:
        if not self._sendable():
            return
        filler = self._filler(node) if num == 1 else None
        if filler is not None:
            tests = [self.pending.pop(filler)]
        else:
            tests = self.pending[:num]
            del self.pending[:num]
        if tests:
            self.node2pending[node].extend(tests)
            self._push(node, tests)
            node.send_runtest_some(tests)

    def _filler(self, node) -> int | None:
        """The position in ``pending`` of the item to hold behind a long item, or None
        for the head.  A worker must hold its next item before it starts one (xdist's
        look-ahead, :data:`MIN_QUEUE`), so that item waits the whole of the one before
        it: behind Mbpp/599 (32 s of a 45 s run) the next costliest item waited 6-8 s
        while the other worker ran dry (docs/timing.md, session 19).  When the running
        item is over the queue's budget and so is the head, the slot takes the cheapest
        pending item that may go out now instead (the last of the dispatch order; a
        copy of a program still running elsewhere is skipped), and the head goes out
        as the next worker frees up."""
        queue = self.node2pending[node]
        if len(queue) != MIN_QUEUE - 1 or len(self.pending) < 2:
            return None
        head = self._costs[self.pending[0]]
        if self._costs[queue[0]] <= self._budget or head <= self._budget:
            return None
        for position in range(len(self.pending) - 1, max(len(self.pending) - 1 - FILLER_TRIES, 0), -1):
            i = self.pending[position]
            if self._costs[i] >= head:
                return None
            if self._group_of is None:
                return position
            if i not in self._keys:  # keyed alone: the batches follow the dispatch order
                self._keys[i] = self._group_of([self.collection[i]])[0]
            if self._may_go(i, self._keys[i]):
                return position
        return None

    @property
    def tests_finished(self) -> bool:
        return super().tests_finished and not self._held

    @property
    def has_pending(self) -> bool:
        return super().has_pending or bool(self._held)

    def check_schedule(self, node, duration: float = 0) -> None:
        if node.shutting_down:
            return
        if self._sendable():
            while self._sendable() and self._wants_more(node):
                self._send_tests(node, 1)
            self._feed_behind(node)
            return
        self._feed_behind(node)
        if len(self.node2pending[node]) >= MIN_QUEUE or self._steal_from is not None:
            return  # it has work; or wait for the steal in flight, which tops everyone up
        victim, items = self._steal_candidates(node)
        if items and (victim, tuple(items)) == self._refused:
            return  # the same request just failed (the report that explains why is on its way)
        if items:
            # Nothing left to hand out, yet another worker holds items it has not
            # started: a timeout nobody could predict (a sample's 1 s limit on a
            # task whose reference takes 1 ms) otherwise runs them alone at the end.
            victim.send_steal(items)
            self._steal_from, self._last_request = victim, items
        elif not self._held:  # held copies go out when their representatives finish
            node.shutdown()  # lets it run its last item (a worker waits for a next one or shutdown)

    def _steal_candidates(self, thief) -> tuple[object, list[int]]:
        """The worker whose queued, unstarted items cost most, and the tail half of them.
        The first two of a queue are the running item and the next one, which the
        worker has already taken; the worker returns all requested items or none."""
        best, best_cost = None, -1.0
        behind = set(self._behind.values())  # a copy behind its running representative stays there
        for node, queue in self.node2pending.items():
            if node is thief or node.shutting_down or len(queue) <= MIN_QUEUE:
                continue
            cost = sum(self._costs[i] for i in queue[MIN_QUEUE:] if i not in behind)
            if cost > best_cost:
                best, best_cost = node, cost
        if best is None:
            return None, []
        waiting = [i for i in self.node2pending[best][MIN_QUEUE:] if i not in behind]
        return best, waiting[len(waiting) // 2:]

    def remove_pending_tests_from_node(self, node, indices: Sequence[int]) -> None:
        """The answer to a steal request: ``indices`` left ``node``'s queue (possibly none)."""
        if not indices:  # it had started one of them already: ask again once its queue moved on
            self._refused = (node, tuple(self._last_request))
        self._steal_from = None
        taken = set(indices)
        self.node2pending[node] = [i for i in self.node2pending[node] if i not in taken]
        # Nothing else is pending when we steal; the worker returns them in its queue's (cost) order.
        self.pending[:0] = indices
        # Shortest queue first: the idle worker that asked gets them, not the one they came from.
        for other in sorted(self.nodes, key=lambda n: len(self.node2pending[n])):
            self.check_schedule(other)

    def mark_test_complete(self, node, item_index: int, duration: float = 0) -> None:
        if self._refused is not None and self._refused[0] is node:
            self._refused = None  # its queue moved on: a new request may succeed
        released = item_index in self._held or item_index in self._behind
        if self._running_rep(item_index):
            self._finish_group(item_index)
        super().mark_test_complete(node, item_index, duration)
        if released or not self.pending:  # idle workers may now take copies, steal from this one, or stop
            for other in sorted(self.nodes, key=lambda n: len(self.node2pending[n])):
                if other is not node:
                    self.check_schedule(other)

    def remove_node(self, node):
        if node is self._steal_from:
            self._steal_from = None  # a dead worker does not answer
        queue = list(self.node2pending.get(node, ()))
        if queue and self._running_rep(queue[0]):
            # Its worker died running it: the next copy (one queued behind it goes
            # back to pending with the rest of that worker's queue) takes the group.
            rep = queue[0]
            copies, behind = self._held.pop(rep, []), self._behind.pop(rep, None)
            successor = behind if behind is not None else copies.pop(0) if copies else None
            self._ended[rep] = False
            if successor is not None:
                self._rep_of[self._keys[rep]] = successor
            if successor is not None and behind is None:
                self.pending.insert(0, successor)
            if successor is not None and copies:
                self._held[successor] = copies
        return super().remove_node(node)

    def _wants_more(self, node) -> bool:
        """Whether ``node`` should also get the next pending item."""
        queue = self.node2pending[node]
        if len(queue) < MIN_QUEUE:
            return True
        if len(queue) >= MAX_QUEUE:
            return False
        # queue[0] is the item the worker runs (or will run next); the rest wait.
        waiting = sum(self._costs[i] for i in queue[1:]) + self._costs[self.pending[0]]
        return waiting <= self._budget
