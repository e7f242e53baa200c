"""Dispatch order under xdist: costliest items first, short cost-bounded queues."""
from __future__ import annotations

from pytest_specbench.plugin import scheduling
from pytest_specbench.plugin.scheduling import CostFirstScheduling


class FakeWorker:
    """What the scheduler sees of an xdist worker: items sent, shutdown."""

    def __init__(self, name: str):
        self.gateway = type("Gateway", (), {"id": name})()
        self.sent: list[int] = []
        self.shutting_down = False

    def send_runtest_some(self, indices) -> None:
        self.sent.extend(indices)

    def shutdown(self) -> None:
        self.shutting_down = True


class FakeConfig:
    """The options xdist's LoadScheduling reads (``-n N`` becomes N ``popen`` tx specs)."""

    def __init__(self, workers: int):
        self.workers = workers

    def getvalue(self, name: str):
        return {"tx": [f"{self.workers}*popen"]}[name]

    def getoption(self, name: str):
        return {"maxschedchunk": None}[name]


def make(costs: list[float], workers: int = 2):
    ids = [f"item{i}" for i in range(len(costs))]
    table = dict(zip(ids, costs))
    sched = CostFirstScheduling(FakeConfig(workers), log=None, cost_of=lambda nodeids: [table[n] for n in nodeids])
    nodes = [FakeWorker(f"gw{i}") for i in range(workers)]
    for node in nodes:
        sched.add_node(node)
        sched.add_node_collection(node, ids)
    sched.schedule()
    return sched, nodes


def finish(sched, node, index: int) -> None:
    sched.mark_test_complete(node, index)


def test_costliest_items_go_out_first_to_different_workers():
    sched, (a, b) = make([1, 100, 5, 50, 2, 2, 2, 2, 2, 2])
    assert a.sent[0] == 1 and b.sent[0] == 3  # 100 and 50 start at once, on both workers
    assert all(len(n.sent) >= scheduling.MIN_QUEUE for n in (a, b))


def test_equal_costs_keep_collection_order():
    sched, (a, b) = make([3.0] * 40)
    dispatched = sorted(a.sent + b.sent)
    assert dispatched == list(range(len(dispatched)))  # a prefix of the collection, nothing skipped
    assert a.sent == sorted(a.sent) and b.sent == sorted(b.sent)


def test_a_dominant_item_does_not_hold_heavy_items_behind_it():
    # One item is a third of the run: its worker must not hoard the next heaviest.
    costs = [1000.0] + [20.0] * 100
    sched, (a, b) = make(costs)
    holder = a if 0 in a.sent else b
    assert len(holder.sent) == scheduling.MIN_QUEUE
    other = b if holder is a else a
    # The other worker keeps taking items as it finishes them; the holder gets nothing new.
    for _ in range(60):
        finish(sched, other, sched.node2pending[other][0])
    assert len(holder.sent) == scheduling.MIN_QUEUE
    assert len(other.sent) > 60


def test_every_item_runs_once_and_workers_shut_down():
    costs = [float(i % 7) for i in range(200)]
    sched, nodes = make(costs, workers=3)
    done = []
    while any(sched.node2pending[n] for n in nodes):
        for node in nodes:
            if sched.node2pending[node]:
                index = sched.node2pending[node][0]
                done.append(index)
                finish(sched, node, index)
    assert sorted(done) == list(range(200))
    assert sched.tests_finished and all(n.shutting_down for n in nodes)


def test_no_cost_information_fills_queues_in_collection_order():
    sched, (a, b) = make([0.0] * 100)
    assert len(a.sent) == scheduling.MAX_QUEUE and len(b.sent) == scheduling.MAX_QUEUE
    assert a.sent[:3] == [0, 2, 4] and b.sent[:3] == [1, 3, 5]


def test_used_by_default_under_xdist(pytester):
    """`-n 2` alone (xdist's --dist load) uses CostFirstScheduling; other --dist values keep xdist's."""
    pytester.makeconftest("""
        import pytest
        @pytest.hookimpl(hookwrapper=True)
        def pytest_xdist_make_scheduler(config, log):
            outcome = yield
            print("SCHEDULER", type(outcome.get_result()).__name__)
    """)
    # Result cache off: with every verdict cached, no workers (and no scheduler) would start.
    args = ("--specbench=contract", "--model=reference", "--specbench-result-cache=off", "-n", "2",
            "-p", "no:cacheprovider", "-s")
    result = pytester.runpytest(*args)
    result.assert_outcomes(passed=23, skipped=1)
    result.stdout.fnmatch_lines(["*SCHEDULER CostFirstScheduling*"])
    result = pytester.runpytest(*args, "--dist", "worksteal")
    result.stdout.fnmatch_lines(["*SCHEDULER WorkStealingScheduling*"])
