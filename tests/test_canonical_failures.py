"""A canonical solution that fails is remembered only when it will fail again:
an exception is (a ``.failed`` file beside the expected outputs, read by the next
run), a time-out is not (the machine's load may have caused it; the next run tries
again).  Before, a canonical time-out on a loaded machine stayed an E in every
later run until someone deleted the file.  Session 15 (#48): a time-out is not a
RepeatableError either (the result cache keeps those as verdicts), a MemoryError is
not remembered, and a ``.failed`` file of the older format is not read; the other
caches of the harness's own work (javac's, SpecEval's ground truth, nl2postcond's
reference) keep no load-caused failure either."""
from __future__ import annotations

import pytest

from pytest_specbench.benchmarks.contract import evalplus
from pytest_specbench.errors import InfrastructureError, RepeatableError
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
    with pytest.raises(evalplus.CanonicalTimeout, match="input #1") as first:
        evalplus._expected_outputs(task, "b" * 64, ctx)
    assert not first.value.lasting and _failed_files(ctx) == []
    # The result cache (engine/verdicts.py) keeps a RepeatableError as the item's verdict
    # for every later identical run: a time-out must not be one.
    assert not isinstance(first.value, RepeatableError)


def test_a_canonical_out_of_memory_is_not_remembered_and_an_old_failed_file_is_not_read(ctx):
    task = _task(9803, "def f(n):\n    if n == 4:\n        return len(bytearray(1 << 34))\n    return n\n")
    with pytest.raises(evalplus.CanonicalTimeout, match="input #1: MemoryError") as first:
        evalplus._expected_outputs(task, "c" * 64, ctx)
    assert not isinstance(first.value, RepeatableError) and _failed_files(ctx) == []
    # A .failed file the older format wrote (limits, then a time-out's reason) for a canonical
    # solution that runs: read before, an E in every run; now ignored, and the outputs computed.
    fine = _task(9804, "def f(n):\n    return n\n")
    path = evalplus._expected_index_path(fine, "d" * 64, ctx)
    limits = evalplus.json.dumps(evalplus.asdict(LIMITS), sort_keys=True)
    path.with_suffix(".failed").write_text(limits + "\nMbpp/9804: canonical solution failed on input #0: timeout")
    assert evalplus._expected_outputs(fine, "d" * 64, ctx).value(1) == 4


def test_javac_remembers_errors_in_the_sources_only(tmp_path):
    """The class cache keeps javac's verdict on sources that do not compile (exit 1),
    not a javac that was killed or crashed (out of memory under load)."""
    from pytest_specbench.execution.jvm import JvmExecutor

    # (no class-data sharing: a stand-in `java` makes no archive for a javac job to start from,
    # and the warm javac's own classes, compiled first for that, would be the stand-in's too)
    jvm = JvmExecutor(tmp_path / "jvm", isolate=False, class_sharing=False)
    jvm.java = jvm.javac = str(tmp_path / "javac")  # a stand-in: the outcome is all that matters here
    jvm._jdk = "stand-in"
    fake = tmp_path / "javac"
    fake.write_text("#!/bin/sh\necho 'java.lang.OutOfMemoryError' >&2\nkill -9 $$\n")
    fake.chmod(0o755)
    killed = jvm.compile({"A.java": "class A {}"}, use_server=False)
    fake.write_text("#!/bin/sh\necho 'An exception has occurred in the compiler' >&2\nexit 4\n")
    crashed = jvm.compile({"B.java": "class B {}"}, use_server=False)
    assert not killed.ok and not crashed.ok and list((tmp_path / "jvm" / "classes").glob("*.failed")) == []
    fake.write_text("#!/bin/sh\necho 'C.java:1: error: class, interface, enum, or record expected' >&2\nexit 1\n")
    bad = jvm.compile({"C.java": "clas C {}"}, use_server=False)
    assert not bad.ok and [p.name for p in (tmp_path / "jvm" / "classes").glob("*.failed")] == [bad.key + ".failed"]
    assert jvm.compile({"C.java": "clas C {}"}, use_server=False).cached


def test_speceval_ground_truth_keeps_no_load_caused_verdict_on_disk(tmp_path):
    from pytest_specbench.benchmarks.speceval import validation
    from pytest_specbench.jml.checker import CallVerdict, SpecReport

    source = "class P {\n  //@ ensures \\result == 1;\n  static int f() { return 1; }\n}\n"
    reports = {
        "timeout": SpecReport("checked", calls=[CallVerdict(0, "P.f()", "timeout", message="over 2 s")]),
        "killed": SpecReport("checked", calls=[CallVerdict(0, "P.f()", "crashed", message="JVM ended: signal 9")]),
        "runner": SpecReport("runner_error", "java.lang.OutOfMemoryError"),
        "raised": SpecReport("checked", calls=[CallVerdict(0, "P.f()", "crashed", message="ArithmeticException")]),
    }

    class Checker:  # the report a JML checker gave: what is cached is the question here
        call_seconds = 2.0

        def __init__(self, report):
            self.report = report

        def check(self, source, driver):
            return self.report

    written = {}
    for name, report in reports.items():
        path = tmp_path / f"{name}.json"
        gt = validation._check_ground_truth(source, None, Checker(report), f"k-{name}", path)
        written[name] = (path.exists(), gt.verdict)
    assert written == {"timeout": (False, "timeout"), "killed": (False, "crashed"),
                       "runner": (False, "runner_error"), "raised": (True, "crashed")}


def test_nl2postcond_reference_time_out_is_not_repeatable(ctx, monkeypatch):
    from pytest_specbench.benchmarks.nl2postcond import observe

    task = {**_task(9805, "def f(n):\n    return n\n"), "prompt": "def f(n):\n    pass\n"}  # the parameters' names
    for status, exc_type, error in (("timeout", "", observe.ReferenceTimeout),
                                    ("raise", "MemoryError", observe.ReferenceTimeout),
                                    ("raise", "ValueError", observe.ReferenceFailure)):
        monkeypatch.setattr(observe, "observe", lambda *a, **k: [observe.Observation(0, "ok", (3,), 3),
                                                                 observe.Observation(1, status, exc_type=exc_type)])
        with pytest.raises(InfrastructureError, match="input #1") as got:
            observe.reference_cases(task, status + exc_type, "plus", ctx)
        assert type(got.value) is error and isinstance(got.value, RepeatableError) == (error is observe.ReferenceFailure)
