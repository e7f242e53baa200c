"""The run's engine without pytest (engine/): the plan computes skips and prompts once,
the controller's ledger is the one reader and writer of verdicts, a worker's engine
evaluates only what the ledger does not know and writes no store, the context is a
plain dataclass.

In-process, with a counting toy adapter and the shared fakes.  Resume, the store of
earlier runs and dedupe are tested the way pytest-xdist tests its schedulers: the
controller's real :class:`ControllerLink` and each worker's real :class:`WorkerLink`
over a fake node whose channels deliver in-process (no subprocess, no socket); the
end-to-end runs that stay are the SIGKILL-and-resume (test_resume.py), the
multi-host one (test_distributed.py) and one per family."""
from __future__ import annotations

import dataclasses
import json
from collections import Counter
from pathlib import Path
from types import SimpleNamespace

import pytest

from pytest_specbench.benchmarks.base import CheckResult, Message, Prompt, Task, TaskSet
from pytest_specbench.engine.context import CheckContext
from pytest_specbench.engine.dedupe import Dedupe
from pytest_specbench.engine.ledger import CACHED, COPY, RESUMED, Known, Ledger, RunKey, VerdictStore
from pytest_specbench.engine.plan import ItemSpec, RunPlan, parse_node_id
from pytest_specbench.engine.verdicts import NothingKnown, VerdictEngine
from pytest_specbench.errors import RepeatableError
from pytest_specbench.models.base import Completion
from pytest_specbench.models.reference import ReferenceModel
from pytest_specbench.plugin.remote import CHANNEL_KEY, ControllerLink, PushedVerdicts, WorkerLink
from fakes import FakeSettings, fake_context


class Counting:
    """A toy family with two checks per task that counts what the engine asks it."""

    name, version = "toy", "1"

    def __init__(self, tasks=3):
        self.calls: Counter = Counter()
        self.tasks = [Task(f"t{i}", {"answer": f"x = {i}"}, Path(__file__), 1) for i in range(tasks)]

    def load(self, data_root, settings):
        return TaskSet(self.tasks, files=[], bundled=True)

    def checks_for(self, task):
        return ("first", "second")

    def skip_reason(self, check, task, ctx):
        self.calls["skip", task.task_id, check] += 1
        return "no toolchain" if task.task_id == "t2" and check == "second" else None

    def prompt(self, task, settings):
        self.calls["prompt", task.task_id] += 1
        return Prompt((Message("user", task.task_id),))

    def reference(self, task, check):
        return task.data["answer"]

    def run_check(self, check, task, sample, ctx):
        self.calls["run", task.task_id, check] += 1
        if check == "second":
            first = ctx.result_of("first")
            return CheckResult(first.passed, {"from_first": first.passed}, "")
        if check == "loop":
            return ctx.result_of("loop")
        return CheckResult(True, {"text": sample.text}, "")

    def program_key(self, task, sample, check):
        return sample.text


def _settings(tmp_path, **more):
    return FakeSettings(tmp_path, tasks=None, selected=lambda nodeid: True, selection=(), **more)


def _plan(tmp_path, adapter, model=None):
    settings = _settings(tmp_path)
    return RunPlan(settings, {"toy": adapter}, model or ReferenceModel(), fake_context(settings, cache=tmp_path))


class Copies:
    """A model of three samples per task; samples 0 and 2 are the same program."""

    answers_locally = True

    def sample_indices(self, benchmark, task_id, requested):
        return range(3)

    def generate(self, requests, progress=None):
        return None

    def completion(self, request):
        return Completion(f"x = {request.task.task_id} {request.sample_index % 2}")

    def manifest(self):
        return {"spec": "copies"}


def _engine(tmp_path, source=None, dedupe=True):
    """A process's engine over ``source`` (a ledger, or a worker's pushed verdicts)."""
    settings = _settings(tmp_path)
    return VerdictEngine(source or NothingKnown(), Dedupe(dedupe, str), fake_context(settings, cache=tmp_path))


class FakeChannel:
    """One end of an execnet channel whose messages are delivered in-process, at once."""

    def __init__(self):
        self.peer, self.callback, self.sent = None, None, []

    def setcallback(self, callback, endmarker=None):
        self.callback = callback

    def send(self, message):
        self.sent.append(message)
        self.peer.callback(message)

    def isclosed(self):
        return False


class FakeNode:
    """An xdist worker node as the controller sees it (``node.gateway``, ``workerinput``)."""

    def __init__(self, name):
        self.workerinput, self.near, self.far = {}, FakeChannel(), FakeChannel()
        self.near.peer, self.far.peer = self.far, self.near
        self.gateway = SimpleNamespace(id=name, spec=SimpleNamespace(popen=True, via=None), newchannel=lambda: self.near)


class Run:
    """One run: the controller's ledger and link, and workers, each with its own engine
    (a worker's process: its context's folder is its own disk, apart from the controller's)."""

    def __init__(self, tmp_path, adapter, model=None, workers=2, finished=None, store=True, dedupe=True):
        self.adapter, self.journal, self.report = adapter, [], Report()
        self.plan = _plan(tmp_path / "controller", adapter, model)
        self.finished = dict(finished or {})
        self.dedupe = Dedupe(dedupe, lambda: "verdict part")
        key = RunKey.of(["verdict part"], {"model": "toy"})
        self.ledger = Ledger(key, VerdictStore(tmp_path / "controller" / "results" if store else None), self.finished,
                             self.dedupe, lambda nodeid, outcome: self.journal.append({"nodeid": nodeid, **outcome}),
                             self.report, self.plan.completion)
        self.specs = {s.nodeid: s for s in self.plan.all_specs()}
        self.link = ControllerLink(self.plan, None, lambda remote: {}, lambda: {}, True, self.known_of,
                                   self.ledger.computed_program_key)
        self.workers = []
        for i in range(workers):
            node = FakeNode(f"gw{i}")
            self.link.configure_node(node)
            worker_link = WorkerLink(node.far)
            assert node.workerinput[CHANNEL_KEY] is node.near
            folder = tmp_path / f"worker{i}"
            self.workers.append(SimpleNamespace(node=node, link=worker_link, folder=folder, plan=_plan(folder, adapter, model),
                                                engine=_engine(folder, PushedVerdicts(worker_link), dedupe)))
        self.reached: dict[str, str | None] = {}

    def known_of(self, nodeid):  # the session's: the journal, then the alias and the store with the sample
        spec = self.specs[nodeid]
        return self.ledger.known(spec) or self.ledger.known(spec, self.plan.completion(spec))

    def dispatch(self, worker, nodeids, record=True):
        """The scheduler's send (the push first), the worker's items, their reports."""
        w = self.workers[worker]
        self.link.before_send(w.node, list(nodeids))
        for nodeid in nodeids:
            spec = next(s for s in w.plan.all_specs() if s.nodeid == nodeid)  # the worker's own plan
            outcome, reached = run_item(w.engine, w.plan, spec)
            self.reached[nodeid] = reached
            if record:
                self.record(nodeid, outcome, reached)

    def record(self, nodeid, outcome, reached):
        self.ledger.record(self.specs[nodeid], outcome, None if reached in ("evaluated", RESUMED) else reached)


def files(folder):
    return [p for p in folder.rglob("*") if p.is_file()] if folder.exists() else []


class Report:
    def __init__(self):
        self.outcomes = []

    def add(self, outcome):
        self.outcomes.append(outcome)


def run_item(engine, plan, spec):
    """What ``SpecbenchItem.setup`` does: a resumed outcome as it was, else the engine's verdict."""
    resumed = engine.resumed(spec)
    if resumed is not None:
        return resumed, RESUMED
    completion = plan.completion(spec)
    evaluation = engine.evaluate(spec, completion)
    outcome = {"benchmark": "toy", "task_id": spec.task.task_id, "sample": spec.sample, "check": spec.check,
               **evaluation.verdict}
    return outcome, CACHED if evaluation.from_result_cache else (evaluation.reached or "evaluated")


def test_the_plan_asks_each_skip_once_per_task_and_check_and_each_prompt_once_per_task(tmp_path):
    adapter = Counting()
    plan = _plan(tmp_path, adapter)
    specs = plan.item_specs("toy")
    assert [s.nodeid for s in specs[:2]] == ["specbench::toy::t0::0::first", "specbench::toy::t0::0::second"]
    # what the items, the generation phase, the scheduler and the controller's checks all ask
    for _ in range(4):
        for spec in specs:
            plan.skip_reason(spec)
            plan.completion(spec)
        plan.generation_requests([parse_node_id(s.nodeid) for s in specs], lambda nodeid: None)
        plan.dispatch_costs([s.nodeid for s in specs])
        list(plan.runnable())
    assert {k: v for k, v in adapter.calls.items() if k[0] == "skip"} == {
        ("skip", f"t{i}", c): 1 for i in range(3) for c in ("first", "second")}
    assert {k: v for k, v in adapter.calls.items() if k[0] == "prompt"} == {("prompt", f"t{i}"): 1 for i in range(3)}
    assert plan.item_specs("toy") is specs
    assert len(list(plan.runnable())) == 5  # t2's second check is skipped


def test_generation_requests_leave_out_skipped_and_finished_items(tmp_path):
    plan = _plan(tmp_path, Counting())
    selected = [("toy", "t2", 0, "second"), ("toy", "t1", 0, "first"), ("toy", "t0", 0, "first"),
                ("toy", "t0", 0, "second"), ("toy", "nope", 0, "first"), ("other", "t0", 0, "first")]
    finished = {"specbench::toy::t1::0::first": {"passed": True}}
    requests = plan.generation_requests(selected, finished.get)
    assert [(r.task.task_id, r.sample_index) for r in requests] == [("t0", 0)]


def test_the_ledger_knows_from_the_journal_then_the_program_alias_then_the_store(tmp_path):
    adapter = Counting()
    run = Run(tmp_path, adapter, Copies(), workers=0)
    first, copy, other = (run.specs[f"specbench::toy::t0::{i}::first"] for i in (0, 2, 1))
    completion = run.plan.completion
    assert run.ledger.known(first, completion(first)) is None
    run.ledger.record(first, {"passed": True, "details": {"n": 1}, "message": ""})
    # the copy (same program) by the alias; another run over the same store by the store
    assert run.ledger.known(copy, completion(copy)) == Known(COPY, {"passed": True, "details": {"n": 1}, "message": ""})
    assert run.ledger.known(other, completion(other)) is None
    later = Run(tmp_path, adapter, Copies(), workers=0, finished={other.nodeid: {"passed": False, "message": "j"}})
    assert later.ledger.known(first, completion(first)).how == CACHED
    assert later.ledger.known(copy, completion(copy)).how == CACHED  # its own store entry, written as a copy
    assert later.ledger.known(other) == Known(RESUMED, {"passed": False, "message": "j"})  # no sample needed
    assert run.journal == [{"nodeid": first.nodeid, "passed": True, "details": {"n": 1}, "message": ""}]
    # a store left by other settings (another verdict part) is not read
    other_key = Ledger(RunKey.of(["other"], {}), VerdictStore(tmp_path / "controller" / "results"), {},
                       Dedupe(True, str), lambda *a: None, Report(), completion)
    assert other_key.known(first, completion(first)) is None


def test_copies_on_another_worker_take_the_pushed_verdict_and_a_copy_behind_its_representative_the_memo(tmp_path):
    adapter = Counting(tasks=2)
    run = Run(tmp_path, adapter, Copies())
    ids = [f"specbench::toy::t{t}::{s}::first" for t in range(2) for s in range(3)]
    # t0: the representative (sample 0) on gw0, its copy (sample 2) dispatched after it finished, to gw1
    run.dispatch(0, [ids[0], ids[1]])
    run.dispatch(1, [ids[2]])
    # t1: the copy queued behind its representative on the same worker (the scheduler's
    # _feed_behind): pushed as unknown, the worker's in-job memo gives it
    run.dispatch(0, [ids[3], ids[5]])
    run.dispatch(1, [ids[4]])
    assert [run.reached[i] for i in ids] == ["evaluated", "evaluated", COPY, "evaluated", "evaluated", COPY]
    assert adapter.calls["run", "t0", "first"] == adapter.calls["run", "t1", "first"] == 2
    pushed = json.loads(run.workers[1].node.near.sent[0][1])["known"]
    assert pushed == {ids[2]: [COPY, {"passed": True, "details": {"text": "x = t0 0"}, "message": ""}]}
    assert [e["nodeid"] for e in run.journal] == [ids[0], ids[1], ids[2], ids[3], ids[5], ids[4]]
    # every item's report reached the ledger, which alone wrote a store: no worker holds a file
    assert len(run.report.outcomes) == 6
    assert not any(files(w.folder) for w in run.workers)
    assert len(files(tmp_path / "controller" / "results")) == 4  # a copy's text is its representative's: one key


def test_a_worker_takes_each_program_key_from_the_push_and_sanitizes_nothing_for_it(tmp_path):
    # The controller keyed every item to know its verdict; a worker that keyed it again
    # spent ~1.4 ms an item sanitizing the sample (issue #48, docs/timing.md "Session 18").
    adapter = Counting(tasks=2)
    run = Run(tmp_path, adapter, Copies())
    asked = []
    for w in run.workers:
        key = w.engine.dedupe.key
        w.engine.dedupe.key = lambda *args, _key=key: asked.append(args[1].task_id) or _key(*args)
    ids = [f"specbench::toy::t{t}::{s}::first" for t in range(2) for s in range(3)]
    run.dispatch(0, [ids[0], ids[2]])  # a copy behind its representative: the memo, by the pushed key
    run.dispatch(1, [ids[1]])
    assert [run.reached[i] for i in ids[:3]] == ["evaluated", "evaluated", COPY]
    assert adapter.calls["run", "t0", "first"] == 2
    assert asked == []
    push = json.loads(run.workers[0].node.near.sent[0][1])
    assert push["keys"] == {i: run.ledger.computed_program_key(i)[1] for i in (ids[0], ids[2])}
    assert push["keys"][ids[0]] == push["keys"][ids[2]] != run.ledger.computed_program_key(ids[1])[1]
    # An item that came without a key (result_of's other check, another --dist mode) is keyed by the worker.
    run.workers[1].link.keys.clear()
    spec = next(s for s in run.workers[1].plan.all_specs() if s.nodeid == ids[3])
    run.workers[1].link.known[ids[3]] = None
    run_item(run.workers[1].engine, run.workers[1].plan, spec)
    assert asked == ["t1"]


def test_a_rerun_on_fresh_workers_takes_every_known_verdict_from_the_controllers_store(tmp_path):
    adapter = Counting()
    first = Run(tmp_path, adapter, workers=1)
    ids = [s.nodeid for s in first.plan.all_specs() if not first.plan.skip_reason(s)]
    first.dispatch(0, ids[:2])  # a run of part of the items
    runs = dict(adapter.calls)
    # the next run of all of them, its workers on hosts with fresh disks (new folders)
    again = Run(tmp_path / "next", adapter, workers=2)
    again.ledger.store = VerdictStore(tmp_path / "controller" / "results")  # the controller's own
    again.dispatch(0, ids[::2])
    again.dispatch(1, ids[1::2])
    assert {i: again.reached[i] for i in ids[:2]} == {i: CACHED for i in ids[:2]}
    assert {again.reached[i] for i in ids[2:]} == {"evaluated"}
    assert sum(v for k, v in adapter.calls.items() if k[0] == "run") - sum(v for k, v in runs.items() if k[0] == "run") \
        == len(ids) - 2  # t1's second read t1's first (run on the other worker) through result_of: asked the controller
    assert [e["nodeid"] for e in again.journal] == ids[::2] + ids[1::2]
    assert not files(tmp_path / "worker0") and not files(tmp_path / "next") and files(tmp_path / "controller")


def test_a_resumed_run_reports_what_the_uninterrupted_run_reports(tmp_path):
    adapter = Counting()
    whole = Run(tmp_path / "whole", adapter, Copies(), workers=1, store=False)
    ids = [s.nodeid for s in whole.plan.all_specs() if not whole.plan.skip_reason(s)]
    whole.dispatch(0, ids)
    # killed after 5 items; resumed: those come from the journal (nothing runs), the rest run
    cut = Run(tmp_path / "cut", adapter, Copies(), workers=2, store=False)
    cut.dispatch(0, ids[:5])
    finished = {e["nodeid"]: {k: v for k, v in e.items() if k != "nodeid"} for e in cut.journal}
    resumed = Run(tmp_path / "cut", adapter, Copies(), workers=2, finished=finished, store=False)
    resumed.dispatch(1, ids[:5])
    resumed.dispatch(0, ids[5:])
    assert {resumed.reached[i] for i in ids[:5]} == {RESUMED}
    assert cut.journal + resumed.journal == whole.journal  # nothing journaled twice, nothing lost
    assert sorted(map(json.dumps, resumed.report.outcomes)) == sorted(map(json.dumps, whole.report.outcomes))


def test_result_of_reads_the_known_verdict_of_another_check_and_computes_once_per_process(tmp_path):
    adapter = Counting()
    run = Run(tmp_path, adapter, workers=1)
    first, second = "specbench::toy::t0::0::first", "specbench::toy::t0::0::second"
    run.dispatch(0, [first])
    # a fresh worker: second's result_of("first") asks the controller, whose ledger has it
    other = Run(tmp_path, adapter, workers=1)
    other.dispatch(0, [second])
    assert adapter.calls["run", "t0", "first"] == 1 and adapter.calls["run", "t0", "second"] == 1
    assert other.journal[0]["details"] == {"from_first": True}
    # with nothing known, a worker computes it once and its own item takes it from the in-job memo
    engine, plan = _engine(tmp_path / "w"), _plan(tmp_path / "w", adapter)
    t1 = [s for s in plan.all_specs() if s.task.task_id == "t1"]
    for spec in reversed(t1):
        engine.evaluate(spec, plan.completion(spec))
    assert adapter.calls["run", "t1", "first"] == 1
    fresh = _engine(tmp_path / "w")
    fresh.evaluate(t1[1], plan.completion(t1[1]))
    assert adapter.calls["run", "t1", "first"] == 2  # the memo belongs to the engine, not to a class
    loop = ItemSpec(adapter, t1[0].task, 0, "loop")
    adapter.checks_for = lambda task: ("first", "second", "loop")
    with pytest.raises(RuntimeError, match="result_of cycle"):
        fresh.evaluate(loop, plan.completion(loop))


def test_without_a_program_key_equal_texts_of_two_samples_are_evaluated_each(tmp_path):
    # CIFE asks its judge per sample index (no program key): the in-job memo is one item's
    adapter = Counting()
    plan, engine = _plan(tmp_path, adapter, Copies()), _engine(tmp_path, dedupe=False)
    same = [s for s in plan.all_specs() if s.task.task_id == "t0" and s.check == "first" and s.sample in (0, 2)]
    assert plan.completion(same[0]).text == plan.completion(same[1]).text
    for spec in same:
        assert engine.evaluate(spec, plan.completion(spec)).reached is None
    assert adapter.calls["run", "t0", "first"] == 2


def test_a_repeatable_error_is_kept_by_the_ledger_and_raised_again_under_its_name(tmp_path):
    class Flaky(Counting):
        def run_check(self, check, task, sample, ctx):
            self.calls["run", task.task_id, check] += 1
            raise type("ToolchainBroken", (RepeatableError,), {})("javac crashed")

    adapter = Flaky()
    for attempt in range(2):  # the second run: a fresh worker, the controller's store
        run = Run(tmp_path, adapter, Copies(), workers=1)
        spec = run.specs["specbench::toy::t0::0::first"]
        run.link.before_send(run.workers[0].node, [spec.nodeid])
        with pytest.raises(RepeatableError, match="javac crashed") as info:
            run_item(run.workers[0].engine, run.workers[0].plan, spec)
        assert type(info.value).__name__ == "ToolchainBroken"
        # what the item puts on its setup report (plugin/items.py), recorded by the controller
        run.ledger.record_repeatable(spec, {"repeatable_error": str(info.value), "error_type": "ToolchainBroken"})
        copy = run.specs["specbench::toy::t0::2::first"]
        assert run.ledger.known(copy, run.plan.completion(copy)).verdict["error_type"] == "ToolchainBroken"
        assert run.journal == []  # an error's line is the session's, not a verdict
    assert adapter.calls["run", "t0", "first"] == 1


def test_the_check_context_is_a_plain_dataclass():
    assert dataclasses.is_dataclass(CheckContext) and "__getattr__" not in vars(CheckContext)
    ctx = fake_context(results={"first": CheckResult(True)}, some_option=3)
    assert ctx.option("some_option") == 3 and ctx.result_of("first").passed and ctx.result_of("x") is None
    with pytest.raises(AttributeError):
        ctx.anything_else  # noqa: B018
    with pytest.raises(AssertionError, match="no 'jvm' executor"):
        ctx.executor("jvm")
