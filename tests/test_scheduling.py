"""Dispatch order under xdist: costliest items first, short cost-bounded queues."""
from __future__ import annotations

import json
import random

import pytest

from pytest_specbench.engine.costs import MeasuredCosts, dispatch_costs
from pytest_specbench.plugin import scheduling
from pytest_specbench.plugin.scheduling import CostFirstScheduling


class FakeWorker:
    """What the scheduler sees of an xdist worker: items sent, steal requests, shutdown."""

    def __init__(self, name: str):
        self.gateway = type("Gateway", (), {"id": name})()
        self.sent: list[int] = []
        self.steals: list[list[int]] = []
        self.shutting_down = False

    def send_runtest_some(self, indices) -> None:
        self.sent.extend(indices)

    def send_steal(self, indices) -> None:
        self.steals.append(list(indices))

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


def make(costs: list[float], workers: int = 2, groups: list | None = None, errored: set | None = None):
    ids = [f"item{i}" for i in range(len(costs))]
    table = dict(zip(ids, costs))
    group_of = None if groups is None else (lambda nodeids: [dict(zip(ids, groups))[n] for n in nodeids])
    sched = CostFirstScheduling(FakeConfig(workers), log=None, cost_of=lambda nodeids: [table[n] for n in nodeids],
                                group_of=group_of,
                                verdict_known=lambda nodeid: int(nodeid[4:]) not in (errored or set()))
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


def test_no_cost_information_fills_queues_in_collection_order():
    sched, (a, b) = make([0.0] * 100)
    assert len(a.sent) == scheduling.MAX_QUEUE and len(b.sent) == scheduling.MAX_QUEUE
    assert a.sent[:3] == [0, 2, 4] and b.sent[:3] == [1, 3, 5]


def test_used_by_default_under_xdist(pytester):
    """`-n N` alone (xdist's --dist load) uses CostFirstScheduling; other --dist values keep xdist's.
    Either way the controller keeps what each item took (engine/costs.py), and the next run's
    CostFirstScheduling orders by it."""
    pytester.makeconftest("""
        import pytest
        @pytest.hookimpl(hookwrapper=True)
        def pytest_xdist_make_scheduler(config, log):
            outcome = yield
            sched = outcome.get_result()
            print("SCHEDULER", type(sched).__name__)
            if hasattr(sched, "_cost_of"):
                def cost_of(ids, inner=sched._cost_of):
                    costs = inner(ids)
                    print("COSTLIEST", max(zip(costs, ids))[1])
                    return costs
                sched._cost_of = cost_of
    """)
    # Result cache off: with every verdict cached, no workers (and no scheduler) would start.
    # Two tasks (4 items): the scheduler is chosen before any item runs, whatever their number.
    args = ("--specbench=contract", "--model=reference", "--specbench-result-cache=off",
            "-p", "no:cacheprovider", "-p", "no:benchmark", "-s", "-k", "HumanEval-S/0 or Mbpp-S/1")
    # What each item took is kept by any run's controller: here -n 0, without a worker (#45,
    # session 21: this run was -n 1 --dist worksteal, a worker for what the hook decides below).
    pytester.runpytest(*args, "-n", "0").assert_outcomes(passed=4)
    (path,) = (pytester.path / ".specbench" / "cache" / "costs").glob("*.json")
    seconds = json.loads(path.read_text())["seconds"]
    assert len(seconds) == 4 and all(s > 0 for s in seconds.values())
    cheapest = min(seconds, key=seconds.get)
    seconds[cheapest] = 1000.0  # it timed out last time, say: this run starts with it
    path.write_text(json.dumps({"format": 1, "seconds": seconds}))
    # One worker (#45): which scheduler xdist makes, and the order it asks for, do not depend on how many.
    result = pytester.runpytest(*args, "-n", "1")
    result.assert_outcomes(passed=4)
    result.stdout.fnmatch_lines(["*SCHEDULER CostFirstScheduling*", f"*COSTLIEST {cheapest}*"])
    # Another --dist: the run's hook makes no scheduler, so xdist makes its own.
    from session_items import configured_session

    run = configured_session(pytester, *args)
    dist = type("Config", (), {"getvalue": staticmethod({"dist": "worksteal"}.__getitem__)})()
    assert run.pytest_xdist_make_scheduler(dist, log=None) is None


class SimWorker(FakeWorker):
    """An xdist worker as its protocol goes (xdist/remote.py): it takes the item
    after the one it starts before starting it (pytest's teardown looks ahead),
    so it runs an item only once it holds another or was told to shut down; a
    steal returns all requested items still in its queue, or none."""

    SHUTDOWN = -1

    def __init__(self, name: str):
        super().__init__(name)
        self.torun: list[int] = []
        self.held: int | None = None  # taken from the queue, runs next
        self.running: tuple[int, float] | None = None  # (item, finish time)
        self.done = False
        self.starts: list | None = None

    def send_runtest_some(self, indices) -> None:
        super().send_runtest_some(indices)
        self.torun.extend(indices)

    def start_next(self, now: float, durations: list[float]) -> None:
        if self.running or self.done:
            return
        if self.held is None:
            if not self.torun:
                return
            self.held = self.torun.pop(0)
        if self.held == self.SHUTDOWN:
            self.done = True
            return
        if self.torun:
            following = self.torun.pop(0)
        elif self.shutting_down:
            following = self.SHUTDOWN
        else:
            return  # blocked until another item or shutdown arrives
        self.running, self.held = (self.held, now + durations[self.held]), following
        if self.starts is not None:
            self.starts.append((now, self.running[0], self.gateway.id, self.running[1]))


def simulate(costs: list[float], durations: list[float], workers: int = 2, groups: list | None = None,
             errored: set | None = None, starts: list | None = None) -> tuple[float, list[int]]:
    """Run the scheduler against simulated workers; returns (makespan, items in the order they finished).
    ``starts`` collects (time, item, worker, finish time) of every item started."""
    sched, nodes = make(costs, workers, groups, errored)
    nodes = list(sched.node2pending)
    for i, node in enumerate(nodes):  # make() built FakeWorkers: swap in simulated ones
        sim = SimWorker(f"gw{i}")
        sim.torun, sim.sent, sim.shutting_down = list(node.sent), list(node.sent), node.shutting_down
        sim.starts = starts
        sched.node2pending[sim] = sched.node2pending.pop(node)
        sched.node2collection[sim] = sched.node2collection.pop(node)
        nodes[i] = sim
    now, finished = 0.0, []
    while True:
        for node in nodes:
            node.start_next(now, durations)
        for node in nodes:  # answer steal requests as xdist/remote.py does
            while node.steals:
                wanted = node.steals.pop(0)
                given = wanted if set(wanted) <= set(node.torun) else []
                node.torun = [i for i in node.torun if i not in given]
                sched.remove_pending_tests_from_node(node, given)
        for node in nodes:
            node.start_next(now, durations)
        if all(node.done for node in nodes):
            return now, finished
        busy = [node for node in nodes if node.running]
        assert busy, f"deadlock: no worker can run (queues {[n.torun for n in nodes]}, held {[n.held for n in nodes]})"
        node = min(busy, key=lambda n: n.running[1])
        (item, now), node.running = node.running, None
        finished.append(item)
        sched.mark_test_complete(node, item)


@pytest.mark.parametrize("workers", [1, 2, 3])
@pytest.mark.parametrize("seed", range(5))
def test_every_item_runs_once_and_every_worker_stops(workers, seed):
    rng = random.Random(seed)
    n = rng.randint(1, 300)
    costs = [rng.choice([0.0, 0.001, 0.01, 0.1, 1.0, 20.0]) * rng.random() for _ in range(n)]
    durations = [c if rng.random() < 0.8 else rng.random() * 2 for c in costs]  # predictions are often wrong
    _, finished = simulate(costs, durations, workers)
    assert sorted(finished) == list(range(n))


def test_known_costs_give_a_near_optimal_schedule():
    rng = random.Random(7)
    costs = [rng.expovariate(1.0) ** 3 for _ in range(400)]
    makespan, _ = simulate(costs, costs, workers=2)
    lower_bound = max(sum(costs) / 2, max(costs))
    assert makespan <= 4 / 3 * lower_bound  # Graham's LPT bound


def test_unpredicted_timeouts_are_shared_by_stealing():
    # W4 HumanEval in miniature, in work units: two heavy tasks, then cheap ones,
    # six of whose samples hit their limit (66 units) on tasks whose reference
    # is cheap.  They sit in one worker's queue when the other runs dry; without
    # stealing that worker ran them alone (602 units here instead of 405).
    costs = [150.0, 100.0] + [1.5] * 100 + [0.25] * 60
    durations = list(costs)
    for i in (150, 152, 154, 156, 158, 160):
        durations[i] = 66.0
    makespan, _ = simulate(costs, durations, workers=2)
    lower_bound = max(sum(durations) / 2, max(durations))
    assert makespan <= lower_bound + 2


# ------------------------------------------------------- within-run dedupe (engine/dedupe.py)

def evaluations(starts, groups, errored=frozenset()):
    """Per group: how many of its items ran before any item of it had finished
    with a verdict (each of those evaluated the program), and whether two of
    those ever ran at the same time (copies that start later only read the verdict)."""
    evaluated: dict = {}
    evaluating = []
    for t, item, worker, end in starts:
        key = groups[item]
        if key is None:
            continue
        done_before = [e for (t2, i2, _, e) in starts if groups[i2] == key and i2 not in errored and e <= t and i2 != item]
        if not done_before:
            evaluated[key] = evaluated.get(key, 0) + 1
            evaluating.append((t, item, end))
    overlap = any(groups[i] == groups[j] and i != j and t1 < e2 and t2 < e1
                  for (t1, i, e1) in evaluating for (t2, j, e2) in evaluating)
    return evaluated, overlap


@pytest.mark.parametrize("workers", [1, 2, 3])
@pytest.mark.parametrize("seed", range(6))
def test_each_program_runs_once_and_never_on_two_workers_at_once(workers, seed):
    rng = random.Random(seed)
    n = rng.randint(1, 200)
    tasks = [rng.randrange(12) for _ in range(n)]
    costs = [float(1 + t * t) for t in tasks]  # a task's samples cost the same
    groups = [None if rng.random() < 0.1 else f"t{t}-p{rng.randrange(3)}" for t in tasks]
    durations = [c * rng.choice([0.5, 1.0, 3.0]) for c in costs]
    starts: list = []
    _, finished = simulate(costs, durations, workers, groups=groups, starts=starts)
    assert sorted(finished) == list(range(n))  # every item (every copy) still runs, once
    evaluated, overlap = evaluations(starts, groups)
    assert set(evaluated.values()) <= {1}, evaluated
    assert not overlap


@pytest.mark.parametrize("others", [0, 4], ids=["copy-queued-behind", "copies-held"])
@pytest.mark.parametrize("workers", [1, 2])
def test_a_representative_without_a_verdict_hands_its_group_to_the_next_copy(workers, others):
    costs = [5.0] * 6 + [1.0] * others
    groups = ["a"] * 6 + [None] * others
    errored = {0}  # the first one dispatched errs (E): its copies must still get an evaluation
    starts: list = []
    _, finished = simulate(costs, list(costs), workers, groups=groups, errored=errored, starts=starts)
    assert sorted(finished) == list(range(6 + others))
    evaluated, overlap = evaluations(starts, groups, errored)
    assert evaluated == {"a": 2} and not overlap  # the erring one, then exactly one successor


def test_copies_wait_for_their_representative():
    sched, (a, b) = make([3.0] * 8, groups=["x"] * 8)
    assert sorted(a.sent + b.sent) == [0, 1]  # one representative, and one copy behind it on its worker
    holder = a if 0 in a.sent else b
    assert holder.sent == [0, 1]
    sched.mark_test_complete(holder, 0)
    assert sorted(a.sent + b.sent) == list(range(8))  # then every copy goes out


def test_a_worker_that_dies_on_a_representative_hands_its_group_on():
    sched, (a, b) = make([3.0] * 4 + [1.0] * 4, groups=["x"] * 4 + [None] * 4)
    holder = a if 0 in a.sent else b
    other = b if holder is a else a
    sched.remove_node(holder)
    assert not sched.tests_finished
    sent_before = list(other.sent)
    # The copy that sat behind it is now the representative; the others stay held.
    for i in list(sched.node2pending[other]):
        sched.mark_test_complete(other, i)
    for _ in range(20):
        for i in list(sched.node2pending[other]):
            sched.mark_test_complete(other, i)
    # Every copy reaches the surviving worker, the next one first (as the group's new
    # representative), the others only after it.
    resent = other.sent[len(sent_before):]
    assert {1, 2, 3} <= set(resent), (sent_before, other.sent)
    assert resent.index(1) < min(resent.index(2), resent.index(3)), resent
    assert sched.tests_finished


def test_the_first_items_go_out_before_every_key_is_computed():
    # Program keys were computed for the whole collection before the first dispatch:
    # workers idled 2-3 s (W4-HumanEval) to 9 s (W4-MBPP) while the controller parsed
    # every sample.  Now only a batch near the head of the dispatch order is keyed.
    n = 640
    costs = [float(n - i) for i in range(n)]
    groups = [f"p{i % (n // 2)}" for i in range(n)]  # every program twice
    asked: list[list[str]] = []
    table = dict(zip([f"item{i}" for i in range(n)], groups))

    def group_of(nodeids):
        asked.append(list(nodeids))
        return [table[x] for x in nodeids]

    sched = CostFirstScheduling(FakeConfig(2), log=None, cost_of=lambda ids: [costs[int(x[4:])] for x in ids],
                                group_of=group_of)
    nodes = [FakeWorker("gw0"), FakeWorker("gw1")]
    for node in nodes:
        sched.add_node(node)
        sched.add_node_collection(node, list(table))
    sched.schedule()
    assert nodes[0].sent and nodes[1].sent
    assert sum(map(len, asked)) <= 32  # a batch (scheduling.KEY_BATCH), not the collection
    # Keyed in dispatch order as the run goes; each program still evaluated once.
    _, finished = simulate(costs, costs, 2, groups=groups, starts=(starts := []))
    assert sorted(finished) == list(range(n))
    evaluated, overlap = evaluations(starts, groups)
    assert set(evaluated.values()) == {1} and len(evaluated) == n // 2 and not overlap


# ------------------------------------------- costs measured when an item last ran (engine/costs.py)

def test_measured_costs_put_unpredicted_timeouts_first():
    # The quiet W4-HumanEval run of 29 Nov in miniature (reference work units, 12 ms a
    # unit): two samples of cheap tasks time out (2 s: twice their 1 s limit) and come
    # last in the predicted order, on one worker, the second held as its next item
    # (nothing to steal): the other worker idled 2.3 s.  With the costs they took when
    # they last ran, they go out among the heavy items.  (Not the very last two: those
    # now go out early anyway, held behind the heavy items in their workers' look-ahead
    # slots: test_the_item_held_behind_a_long_one_is_a_cheap_one.)
    costs = [800.0, 350.0, 310.0, 200.0] + [1.5] * 100 + [0.25] * 60
    durations = [c * 0.012 for c in costs]
    durations[141] = durations[143] = 2.0
    ids = [f"item{i}" for i in range(len(costs))]
    lower_bound = max(sum(durations) / 2, max(durations))
    predicted_only, _ = simulate(costs, durations)
    assert predicted_only > lower_bound + 1.5  # the idle tail
    measured = dispatch_costs(ids, costs, dict(zip(ids, durations)))
    with_measured, _ = simulate(measured, durations)
    assert with_measured <= lower_bound + 0.5
    assert sorted(range(len(ids)), key=lambda i: -measured[i])[4:6] == [141, 143]


def test_the_item_held_behind_a_long_one_is_a_cheap_one():
    # W4-MBPP's quiet run of 29 Nov in miniature (seconds, the costs its items took):
    # Mbpp/599 (31.5 s), then /160, /255, /271, four time-outs and ~370 small items.
    # A worker holds its next item before it starts one (xdist's look-ahead), so the
    # worker that started /599 held /255 for 31.5 s while the other ran dry.  Now that
    # slot takes one of the cheapest items, on every worker whose running item is long;
    # each worker holds two items at most, with or without program keys.
    costs = [31.5, 14.3, 6.5, 6.2, 2.0, 2.0, 2.0, 2.0, 1.4, 1.3, 0.75, 0.6] + [0.007] * 370
    for groups in (None, [f"p{i}" for i in range(len(costs))]):
        sched, nodes = make(costs, groups=groups)
        assert [n.sent[0] for n in nodes] == [0, 1]  # the two longest start at once
        assert all(len(n.sent) == scheduling.MIN_QUEUE and costs[n.sent[1]] < 0.01 for n in nodes)
        makespan, _ = simulate(costs, costs, groups=groups, starts=(starts := []))
        lower_bound = max(sum(costs) / 2, max(costs))
        assert makespan <= lower_bound + 0.1  # was 38.0: /599 and /255 one after the other (lower bound 36.5)
        after_599 = [item for t, item, worker, _ in starts if worker == "gw0" and t >= costs[0]]
        assert costs[after_599[0]] < 0.01


def test_measured_costs_take_the_predictions_unit_and_fill_gaps():
    ids = ["a", "b", "c", "d"]
    # a and b: 12 units took 1 s, d 3 s (a time-out; its prediction 1): 25 units in 5 s;
    # c (never measured) keeps its prediction
    assert dispatch_costs(ids, [12.0, 12.0, 30.0, 1.0], {"a": 1.0, "b": 1.0, "d": 3.0}) == [5.0, 5.0, 30.0, 15.0]
    assert dispatch_costs(ids, [3.0, 2.0, 1.0, 0.0], {}) == [3.0, 2.0, 1.0, 0.0]  # no file: as predicted
    # adapters that predict nothing: an unmeasured item is an average one (the median)
    assert dispatch_costs(ids, [0.0] * 4, {"a": 1.0, "b": 5.0, "c": 2.0}) == [1.0, 5.0, 2.0, 2.0]


def test_measured_costs_are_kept_per_run_and_merged(tmp_path):
    folder = tmp_path / "costs"
    first = MeasuredCosts(folder, '{"model": "m"}')
    assert first.earlier == {}
    first.record("x", 1.5)
    first.record("y", 0.25)
    first.save()
    second = MeasuredCosts(folder, '{"model": "m"}')
    assert second.earlier == {"x": 1.5, "y": 0.25}
    second.record("y", 3.0)
    second.save()  # y measured again; x not run this time: kept
    assert MeasuredCosts(folder, '{"model": "m"}').earlier == {"x": 1.5, "y": 3.0}
    assert MeasuredCosts(folder, '{"model": "other"}').earlier == {}  # another run's items
    second.path.write_text("{not json")
    assert MeasuredCosts(folder, '{"model": "m"}').earlier == {}  # unreadable: predictions only


def test_a_recorded_run_replayed_through_xdists_schedulers_shows_the_tail(tmp_path, capsys):
    """perf/suite_tail.py: xdist's own schedulers over recorded wall times.  Eight tests:
    ``load`` sends two at a time, so one worker ends with both 5 s tests queued and the other
    sits idle for 7.9 s; ``worksteal`` gives each worker half, and the first to run low
    (at 2.1 s) takes the last 5 s test from the other's queue: both end at about 8 s."""
    from pytest_specbench.perf import suite_tail

    walls = [1, 1, 0.1, 1, 2, 5, 1, 5]
    order = [f"tests/test_t.py::test_{i}" for i in range(len(walls))]
    records = tmp_path / "records"
    records.mkdir()
    lines = [json.dumps({"test": test, "cpu": 0.0, "wall": wall}) for test, wall in zip(order, walls)]
    (records / "gw0-1.jsonl").write_text("\n".join(lines[:5] + ['{"process": "gw0", "cpu_total": 1.0}']) + "\n")
    (records / "gw1-2.jsonl").write_text("\n".join(lines[5:]) + "\n")
    (records / "nested-3.jsonl").write_text(json.dumps({"nested": order[0], "wall": 99.0}) + "\n")
    assert suite_tail.recorded_walls(records) == dict(zip(order, map(float, walls)))
    ends = {mode: suite_tail.replay(order, dict(zip(order, walls)), 2, mode) for mode in ("load", "worksteal")}
    assert [round(end, 1) for end in ends["load"]] == [12.0, 4.1]
    assert [round(end, 1) for end in ends["worksteal"]] == [8.1, 8.0]  # (13.0 each without the steal)
    (tmp_path / "order.txt").write_text("\n".join(order) + "\n")
    assert suite_tail.main([str(records), "--order", str(tmp_path / "order.txt")]) == 0
    out = capsys.readouterr().out
    assert "the first idle 7.9 s at the end" in out and "the first idle 0.1 s at the end" in out, out
