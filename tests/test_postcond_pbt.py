"""PostcondBench Python's ``pbt`` tier (issue #47; docs/tiers.md, "PostcondBench"): the plan
read from the method's hints and simple conditions (in-process), the bundled task where the
repository's tests pass a weak postcondition and the search refutes it with a shrunk input,
the reference passing wherever the check runs, and hostile postconditions (one job each)."""

import pytest

from pytest_specbench.benchmarks.postcond import execute, pbt
from pytest_specbench.benchmarks.postcond.adapter import ADAPTER, BUNDLED, load_tasks
from pytest_specbench.errors import DataError
from pytest_specbench.execution.command import CommandExecutor
from pytest_specbench.models.base import Completion
from fakes import fake_context

SOURCE = '''
import icontract
from typing import List


def hinted(xs: List[int], k: int, flag=False):
    """Doc."""
    assert 0 <= k < 10 and len(xs) >= 2
    assert xs == sorted(xs)
    return xs[:k]


@icontract.require(lambda n: n > 0)
@icontract.require(lambda n, items: all(1 <= v <= 9 for v in items))
def required(n, items: List[int]):
    assert isinstance(n, int)
    return n


def bare(x):
    return x


class Box:
    def put(self, item: int):
        return item
'''


def _task(name, line):
    return {"name": name, "file": "./pkg/mod.py", "start_line": line, "end_line": line + 1}


def _line(name):
    return next(i for i, ln in enumerate(SOURCE.splitlines(), 1) if f"def {name}(" in ln)


def test_plan_reads_hints_and_simple_conditions():
    p = pbt.plan(_task("hinted", _line("hinted")), SOURCE)
    assert p.module == "pkg.mod" and p.params == ("xs", "k")  # flag keeps its default
    assert p.types == {"xs": ["list", "int"], "k": "int"}
    assert p.bounds == {"k": {"min": 0, "max": 9}, "xs": {"min_size": 2, "sorted": True}}
    assert p.require == ("assert 0 <= k < 10 and len(xs) >= 2", "assert xs == sorted(xs)")
    q = pbt.plan(_task("required", _line("required")), SOURCE)
    assert q.types == {"n": "int", "items": ["list", "int"]}  # n's type from its isinstance
    assert q.origin == {"n": "isinstance", "items": "hint"}
    assert q.bounds == {"n": {"min": 1}, "items": {"items": {"min": 1, "max": 9}}}
    assert q.require[0] == "assert n > 0"
    # No hint: one line saying why, or a stub from the hints file.
    assert "parameter 'x' of bare has no type hint" in pbt.plan(_task("bare", _line("bare")), SOURCE)
    assert pbt.plan(_task("bare", _line("bare")), SOURCE, "def bare(x: str):\n    assert len(x) <= 3\n").bounds \
        == {"x": {"max_size": 3}}
    assert "method of class Box" in pbt.plan(_task("put", _line("put")), SOURCE)


def test_hints_file_errors_name_the_file(tmp_path):
    bad = tmp_path / "hints.json"
    for text, said in (("[1]", "JSON object"), ('{"t": "def f(:"}', "t: the stub does not parse"),
                       ('{"t": "x = 1"}', "one def"), ("{", "not a pbt hints file")):
        bad.write_text(text)
        with pytest.raises(DataError, match=said) as info:
            pbt.load_hints(str(bad))
        assert "hints.json" in str(info.value)


@pytest.fixture(scope="module")
def executor(tmp_path_factory):
    """The module's command executor: both tests' jobs in one zygote, from the same warm
    images (the search's, pytest's: execution/warm.py), as a run's checks are; each test is
    still charged what its jobs spend (perf/suite_cpu.py reads the live processes per test)."""
    ex = CommandExecutor(state_dir=tmp_path_factory.mktemp("postcond-pbt-state"))
    yield ex
    ex.close()


def _ctx(tmp_path, executor, examples):
    return fake_context(cache=tmp_path, executors={"command": executor}, postcond_injection="fixed",
                        postcond_timeout=30.0, postcond_complete="paper", spec_pbt_examples=examples)


@pytest.mark.slow
def test_bundled_weak_postcondition_passes_the_tests_and_pbt_refutes_it_shrunk(tmp_path, executor):
    """minilib--running_max: the repository's tests pass ``all(r >= -5 ...)`` (their
    smallest value is -5); the search refutes it on the shrunk input ``[-6]``.  The
    reference passes the pbt check on every bundled task where it runs (the others
    skip with one line)."""
    ctx = _ctx(tmp_path, executor, 15)
    tasks = load_tasks(BUNDLED)[0]
    ran = []
    for task in tasks:
        reason = ADAPTER.skip_reason("pbt", task, ctx)
        if reason is None:
            ran.append(task.task_id)
            result = ADAPTER.run_check("pbt", task, Completion(ADAPTER.reference(task, "pbt")), ctx)
            assert result.passed, (task.task_id, result.message)
        else:
            assert reason.startswith("pbt: ") and "\n" not in reason
    assert ran == ["minilib--running_max"]
    task = next(t for t in tasks if t.task_id == "minilib--running_max")
    weak = Completion("```python\n@icontract.ensure(lambda xs, result: all(r >= -5 for r in result))\n```")
    assert ADAPTER.run_check("correct", task, weak, ctx).passed
    result = ADAPTER.run_check("pbt", task, weak, _ctx(tmp_path, executor, 40))
    assert not result.passed
    assert result.message.startswith("AC REFUTED by pbt: does not hold on the method's result")
    assert '"inputs": {"xs": [-6]}' in result.message  # shrunk: the smallest list below the tests' floor
    assert _verdicts(result) == {"AC": "REFUTED", "RW": "REFUTED"}


def _verdicts(result):
    return {t["relation"]: t["status"] for t in result.details["tiers"]}


HOSTILE_MODULE = '''from typing import List

_LAST = []


def total(xs: List[int]) -> int:
    r = sum(xs)
    _LAST[:] = [r]
    return r


def sort_in_place(xs: List[int]) -> List[int]:
    xs.sort()
    return xs
'''

# Run in the case child as the postcondition's body (a helper, so a test can write statements):
PROBE = '''
def probe(result, xs):
    import gc, sys
    seen = [m for m in ("hypothesis", "specbench_pbt", "specbench_search_config") if m in sys.modules]
    frame = sys._getframe()
    while frame is not None:
        if {"expected", "outs", "order", "coin"} & set(frame.f_locals):
            seen.append(frame.f_code.co_name)
        frame = frame.f_back
    for obj in gc.get_objects():
        if type(obj) is dict and {"AC", "RW"} <= set(obj):
            seen.append("cases")
    return not seen
'''

FORGE = '''
def forge(result, xs):
    import os
    forged = b'{"event": "search", "relation": "AC", "status": "passed", "tried": 100, "nonce": "0"}\\n'
    for fd in range(0, 40):
        try:
            os.write(fd, forged)
            os.write(fd, b'{"kind": "violated", "exc": "", "line": "forged"}\\n')
        except OSError:
            pass
    return True
'''


def _helper(source, name):
    return (f"@icontract.ensure(lambda result, xs: (lambda g: (exec({source!r}, g), g[{name!r}](result, xs))[1])"
            f"(dict(__builtins__=__import__('builtins'))))")


@pytest.mark.slow
def test_hostile_postconditions_learn_nothing_and_forge_nothing(tmp_path, executor):
    """Screen bypassed (the decorators go to the job as written).  (1) A postcondition that
    looks for the search in its process (Hypothesis, the keeper's frames, a dict of both
    cases) finds nothing: it is ``True``, so AC passes and RW is refuted.  (2) One that
    reads the module state the real method writes (``_LAST``) to forge a pass sees the
    import's state (the method never ran in its process): AC refuted.  (3) One that writes
    forged records and a forged "violated" answer on every descriptor speaks for its own
    case only: every case says violated, so AC is refuted, never passed."""
    checkout = tmp_path / "repo"
    (checkout / "pkg").mkdir(parents=True)
    (checkout / "pkg" / "__init__.py").write_text("")
    (checkout / "pkg" / "state.py").write_text(HOSTILE_MODULE)
    task = {"name": "total", "file": "pkg/state.py", "start_line": 6, "end_line": 9, "repo": {"env": "harness"}}
    the_plan = pbt.plan(task, HOSTILE_MODULE)
    ex = executor

    prepared = ex.prepare(execute.environment_for(task, checkout))
    answers = {
        "probe": (_helper(PROBE, "probe"), {"AC": "PASSED", "RW": "REFUTED"}),
        "module state": ("@icontract.ensure(lambda result: bool(_LAST) and result == _LAST[-1])",
                         {"AC": "REFUTED", "RW": "PASSED"}),
        "forge": (_helper(FORGE, "forge"), {"AC": "REFUTED", "RW": "PASSED"}),
    }
    for name, (decorators, expected) in answers.items():
        found = pbt.run_search(ex, prepared, task, checkout, the_plan, decorators, HOSTILE_MODULE, 8)
        got = {rel: v.status.value for rel, v in zip(pbt.RELATIONS, pbt.verdicts(found, the_plan.params))}
        assert got == expected, (name, found)
    # Not hostile, the same job's machinery: a method that sorts its argument in place and returns
    # it is judged as icontract judges it (OLD taken before the call, ``result is xs``): AC and RW pass.
    sort_task = {**task, "name": "sort_in_place", "start_line": 12, "end_line": 14}
    full = ("@icontract.snapshot(lambda xs: list(xs), name='xs')\n"
            "@icontract.ensure(lambda OLD, xs, result: result is xs and result == sorted(OLD.xs))")
    found = pbt.run_search(ex, prepared, sort_task, checkout, pbt.plan(sort_task, HOSTILE_MODULE), full,
                           HOSTILE_MODULE, 8)
    assert {rel: f.status for rel, f in found.items()} == {"AC": "passed", "RW": "passed"}, found


def test_spec_tiers_select_postcond_checks_and_postcond_defaults_to_its_corpus():
    """--spec-tiers: PostcondBench runs its corpus (correct, complete) by default, the pbt
    check only when asked (a search job per sample); a tier it lacks is one warning."""
    from fakes import FakeSettings

    def loaded(**options):
        return ADAPTER.load(None, FakeSettings(options=options))

    default = loaded()
    assert {ADAPTER.checks_for(t) for t in default.tasks} == {("correct", "complete")} and not default.warnings
    assert {ADAPTER.checks_for(t) for t in loaded(spec_tiers=["pbt"]).tasks} == {("pbt",)}
    both = loaded(spec_tiers=["corpus", "pbt", "z3"])
    assert {ADAPTER.checks_for(t) for t in both.tasks} == {("correct", "complete", "pbt")}
    assert both.warnings == ("--spec-tiers: no z3 tier for postcond (it has: corpus, pbt); nothing runs for it",)
