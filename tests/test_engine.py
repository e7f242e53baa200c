"""The run's engine without pytest (engine/): the plan computes skips and prompts once,
the verdict engine reaches each verdict once and keeps its own memo, the context is a
plain dataclass.  In-process, with a counting toy adapter and the shared fakes."""
from __future__ import annotations

import dataclasses
from collections import Counter
from pathlib import Path

import pytest

from pytest_specbench.benchmarks.base import CheckResult, Message, Prompt, Task, TaskSet
from pytest_specbench.engine.context import CheckContext
from pytest_specbench.engine.dedupe import Dedupe
from pytest_specbench.engine.plan import ItemSpec, RunPlan, parse_node_id
from pytest_specbench.engine.verdicts import ResultCache, VerdictEngine
from pytest_specbench.errors import RepeatableError
from pytest_specbench.models.reference import ReferenceModel
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


def _plan(tmp_path, adapter):
    settings = _settings(tmp_path)
    return RunPlan(settings, {"toy": adapter}, ReferenceModel(), fake_context(settings, cache=tmp_path))


def _engine(tmp_path, adapter, finished=None, dedupe=True, cache=True):
    settings = _settings(tmp_path)
    return VerdictEngine(lambda: "fingerprint", ResultCache(tmp_path / "results" if cache else None),
                         finished or {}, Dedupe(dedupe, lambda: "fingerprint"), fake_context(settings, cache=tmp_path))


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


def test_the_engine_evaluates_a_program_once_and_copies_take_its_verdict(tmp_path):
    adapter = Counting()
    plan, engine = _plan(tmp_path, adapter), _engine(tmp_path, adapter)
    spec = plan.item_specs("toy")[0]
    first = engine.evaluate(spec, plan.completion(spec))
    again = engine.evaluate(spec, plan.completion(spec))
    assert first.verdict == again.verdict == {"passed": True, "details": {"text": "x = 0"}, "message": ""}
    assert (first.reached, again.reached) == ("evaluated", "copy")
    assert adapter.calls["run", "t0", "first"] == 1
    # a new process (another engine) reads the result cache
    other = _engine(tmp_path, adapter, dedupe=False)
    cached = other.evaluate(spec, plan.completion(spec))
    assert cached.from_result_cache and cached.reached is None and adapter.calls["run", "t0", "first"] == 1


def test_result_of_is_computed_once_per_engine_and_a_cycle_is_an_error(tmp_path):
    adapter = Counting()
    plan = _plan(tmp_path, adapter)
    engine = _engine(tmp_path, adapter, dedupe=False, cache=False)
    second = plan.item_specs("toy")[1]
    assert engine.evaluate(second, plan.completion(second)).verdict["details"] == {"from_first": True}
    engine.evaluate(second, plan.completion(second))
    assert adapter.calls["run", "t0", "first"] == 1  # the memo belongs to the engine ...
    fresh = _engine(tmp_path, adapter, dedupe=False, cache=False)
    fresh.evaluate(second, plan.completion(second))
    assert adapter.calls["run", "t0", "first"] == 2  # ... not to a class shared by every engine
    loop = ItemSpec(adapter, second.task, 0, "loop")
    adapter.checks_for = lambda task: ("first", "second", "loop")
    with pytest.raises(RuntimeError, match="result_of cycle"):
        fresh.evaluate(loop, plan.completion(loop))


def test_a_journaled_verdict_is_read_before_the_cache_or_the_check(tmp_path):
    adapter = Counting()
    plan = _plan(tmp_path, adapter)
    finished = {"specbench::toy::t0::0::first": {"passed": False, "details": {}, "message": "journaled"}}
    engine = _engine(tmp_path, adapter, finished=finished, dedupe=False, cache=False)
    assert engine.journal_result("specbench::toy::t0::0::first")["message"] == "journaled"
    second = plan.item_specs("toy")[1]
    assert engine.evaluate(second, plan.completion(second)).verdict["passed"] is False
    assert adapter.calls["run", "t0", "first"] == 0


def test_a_repeatable_error_is_cached_and_raised_again_under_its_name(tmp_path):
    class Flaky(Counting):
        def run_check(self, check, task, sample, ctx):
            self.calls["run", task.task_id, check] += 1
            raise type("ToolchainBroken", (RepeatableError,), {})("javac crashed")

    adapter = Flaky()
    plan, engine = _plan(tmp_path, adapter), _engine(tmp_path, adapter, dedupe=False)
    spec = plan.item_specs("toy")[0]
    for _ in range(2):
        with pytest.raises(RepeatableError, match="javac crashed") as info:
            engine.evaluate(spec, plan.completion(spec))
        assert type(info.value).__name__ == "ToolchainBroken"
    assert adapter.calls["run", "t0", "first"] == 1


def test_the_check_context_is_a_plain_dataclass():
    assert dataclasses.is_dataclass(CheckContext) and "__getattr__" not in vars(CheckContext)
    ctx = fake_context(results={"first": CheckResult(True)}, some_option=3)
    assert ctx.option("some_option") == 3 and ctx.result_of("first").passed and ctx.result_of("x") is None
    with pytest.raises(AttributeError):
        ctx.anything_else  # noqa: B018
    with pytest.raises(AssertionError, match="no 'jvm' executor"):
        ctx.executor("jvm")
