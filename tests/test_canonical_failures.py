"""A canonical solution that fails is remembered only when it will fail again:
an exception is (a ``.failed`` file beside the expected outputs, read by the next
run), a time-out is not (the machine's load may have caused it; the next run tries
again).  Before, a canonical time-out on a loaded machine stayed an E in every
later run until someone deleted the file."""
from __future__ import annotations

import pytest

from pytest_specbench.benchmarks.contract import evalplus
from pytest_specbench.execution.limits import Limits
from fakes import FakeSettings, fake_context

LIMITS = Limits(call_cpu=0.2, startup_cpu=2.0, memory_mb=512, tmp_mb=16)


def _task(number: int, canonical: str) -> dict:
    return {"task_id": f"Mbpp/{number}", "entry_point": "f", "atol": 0, "canonical_solution": canonical,
            "base_input": [[3]], "plus_input": [[4]]}


@pytest.fixture
def ctx(python_executor, tmp_path, monkeypatch):
    monkeypatch.setattr(evalplus, "CANONICAL_CPU_FACTOR", 1)  # the reference gets 0.2 s, not 12 s
    return fake_context(FakeSettings(limits=LIMITS), cache=tmp_path, executors={"python": python_executor})


def _failed_files(ctx) -> list:
    return sorted(p.name for p in ctx.cache_dir("expected").rglob("*.failed"))


def test_a_canonical_that_raises_is_remembered(ctx):
    task = _task(9801, "def f(n):\n    if n == 4:\n        raise ValueError('no')\n    return n\n")
    with pytest.raises(evalplus.CanonicalFailure, match="input #1: ValueError") as first:
        evalplus._expected_outputs(task, "a" * 64, ctx)
    assert first.value.lasting and _failed_files(ctx) == ["Mbpp_9801.failed"]
    evalplus._expected_in_memory.clear()
    with pytest.raises(evalplus.CanonicalFailure) as again:  # read from the file: the same words
        evalplus._expected_outputs(task, "a" * 64, ctx)
    assert str(again.value) == str(first.value)


def test_a_canonical_that_times_out_is_tried_again_next_time(ctx):
    task = _task(9802, "def f(n):\n    while n == 4:\n        pass\n    return n\n")
    with pytest.raises(evalplus.CanonicalFailure, match="input #1") as first:
        evalplus._expected_outputs(task, "b" * 64, ctx)
    assert not first.value.lasting and _failed_files(ctx) == []
