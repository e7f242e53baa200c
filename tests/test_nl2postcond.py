"""nl2postcond (docs/nl2postcond.md): answers, the corpus's selection, the
metrics from hand-checked verdicts, the spec service's confinement (hostile
postconditions, one class a test), and the plugin on the bundled suite."""
from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from pytest_specbench.benchmarks.nl2postcond import metrics
from pytest_specbench.benchmarks.nl2postcond.answers import AnswerError, postcondition_text
from pytest_specbench.benchmarks.nl2postcond import corpus
from pytest_specbench.benchmarks.nl2postcond.corpus import Candidate, distinct_programs, program_key, select
from pytest_specbench.benchmarks.nl2postcond.observe import Observation
from pytest_specbench.execution.command import CommandExecutor
from pytest_specbench.pyspec.blocks import BlockOutcome, available, batches_of, check_blocks, read_blocks
from shared_data import FULL, SHARED_DATA

WRAPPER = '''from typing import List

def has_close_elements_original(numbers: List[float], threshold: float) -> bool:
    return False


def has_close_elements(numbers: List[float], threshold: float) -> bool:


    return_value = has_close_elements_original(numbers, threshold)
    
    # Adding imports that might be useful for postconditions
    import re 
    
    # The result is a bool
    assert isinstance(return_value, bool)
    

    return return_value
'''


# ------------------------------------------------------------------ answers

def test_every_upstream_form_gives_the_same_block():
    sheet = "# The result is a bool\nassert isinstance(return_value, bool)"
    alone = "\n# The result is a bool\nassert isinstance(return_value, bool)\n"
    raw = "Here it is:\n```python\n# The result is a bool\nassert isinstance(return_value, bool)\n```\nDone."
    assert postcondition_text(sheet) == postcondition_text(alone) == postcondition_text(WRAPPER) \
        == postcondition_text(raw) == sheet
    crlf = "import re\r\nassert re.match('a', 'a')\r"
    assert postcondition_text(crlf) == "import re\nassert re.match('a', 'a')"


@pytest.mark.parametrize("answer, why", [
    ("", "empty"), ("   \n", "empty"), ("x = 1", "no assert"), ("assert (", "does not parse"),
    ("assert True\x00", "NUL"), ("assert '\ud800'", "surrogate"), ("assert 1\n" * 20_000, "characters"),
    ("(" * 5000 + "1" + ")" * 5000 + "\nassert 1", "does not parse"),
])
def test_answers_without_a_postcondition_are_one_line_refusals(answer, why):
    with pytest.raises(AnswerError, match=why):
        postcondition_text(answer)


# ------------------------------------------------------------------ corpus selection

def test_distinct_selection_keeps_programs_that_add_a_bad_output_in_response_order():
    task = {"task_id": "HumanEval-T/0", "entry_point": "f", "base_input": [[1], [2]], "plus_input": [[3]], "atol": 0}
    reference = [10, 20, 30]
    ok = lambda i, v: Observation(i, "ok", (i,), v)  # noqa: E731
    observations = {
        0: [ok(0, 10), ok(1, 20), ok(2, 30)],  # right everywhere: not kept
        1: [ok(0, 11), ok(1, 20), Observation(2, "raise", exc_type="ValueError")],  # one bad output
        2: [ok(0, 11), ok(1, 20), ok(2, 30)],  # the same bad output only: not distinct
        3: [ok(0, 11), ok(1, 21), Observation(2, "timeout")],  # adds (1, 21): kept, with both bad outputs
        250: [ok(0, 12), ok(1, 20), ok(2, 30)],
    }
    kept = select(task, reference, [Candidate("HumanEval-T/0", n, "") for n in (250, 3, 2, 1, 0)], observations)
    assert [(k.program, k.natural, [b.index for b in k.bopi]) for k in kept] == \
        [(1, True, [0]), (3, True, [0, 1]), (250, False, [0])]


def test_copies_of_a_program_share_a_key_and_programs_that_differ_do_not():
    plain = 'def f(x):\n    """Doc."""\n    return x + "a"\n'
    laid_out = "def f( x ):\n    '''Doc.'''\n    # a comment\n\n    return (x +  'a')\n"
    assert program_key(plain) == program_key(laid_out)
    for other in ('def f(x):\n    """Other doc."""\n    return x + "a"\n',  # a docstring is data
                  'def f(y):\n    """Doc."""\n    return y + "a"\n',
                  'def f(x):\n    """Doc."""\n    return x + "b"\n',
                  "def f(x:\n"):  # no syntax tree: the text decides
        assert program_key(other) != program_key(plain)
    assert program_key("def f(x:\n") != program_key("def f(x:\n ")
    groups = distinct_programs([Candidate("T", 7, laid_out), Candidate("T", 3, plain), Candidate("T", 5, "def f(x:\n")])
    assert sorted([c.program for c in g] for g in groups.values()) == [[3, 7], [5]]


def test_the_bundled_build_runs_each_distinct_program_once_in_two_sandboxes_and_gives_the_same_corpus(tmp_path):
    from pytest_specbench.benchmarks.contract.evalplus import EvalPlusData
    from pytest_specbench.data.bundled import bundled_suite
    from pytest_specbench.execution.limits import Limits
    from pytest_specbench.execution.python import PythonExecutor

    suite, limits = bundled_suite("nl2postcond"), Limits()
    data = EvalPlusData.load(suite)
    executors = [PythonExecutor(limits), PythonExecutor(limits)]
    try:
        figures = corpus.build({t: dict(v) for t, v in data.tasks.items()}, suite / "buggy_programs.jsonl",
                               tmp_path / "corpus.jsonl", executors, limits, "base+plus", log=lambda _: None,
                               oracle="exact")
    finally:
        for executor in executors:
            executor.close()
    # buggy_programs.jsonl holds a copy of HumanEval-N/0's program 0, laid out otherwise: run once.
    assert (figures["programs"], figures["runs"]) == (16, 15)
    assert (tmp_path / "corpus.jsonl").read_text() == (suite / "corpus.jsonl").read_text()


@pytest.mark.realdata
@pytest.mark.skipif(not FULL, reason="the real corpus's counts take minutes: SPECBENCH_TESTS_FULL=1")
@pytest.mark.skipif(not (SHARED_DATA / "nl2postcond" / "code_mutants").is_dir(),
                    reason="nl2postcond data not found beside the checkout (../shared/datasets/nl2postcond)")
def test_the_real_build_keeps_upstream_counts(tmp_path):
    """Last session's counts with one program after another in one sandbox
    (docs/nl2postcond.md): (kept programs, distinct (input, bad output) pairs)."""
    from pytest_specbench.benchmarks.contract.evalplus import EvalPlusData
    from pytest_specbench.benchmarks.nl2postcond.evaluate import bad_outputs
    from pytest_specbench.execution.limits import Limits
    from pytest_specbench.execution.python import PythonExecutor

    expected = {"HumanEval/0": (6, 1819), "HumanEval/2": (28, 24887), "HumanEval/4": (33, 22308)}
    data, limits = EvalPlusData.load(SHARED_DATA / "evalplus"), Limits()
    executors = [PythonExecutor(limits), PythonExecutor(limits)]
    try:
        corpus.build({t: dict(v) for t, v in data.tasks.items()},
                     SHARED_DATA / "nl2postcond" / "code_mutants" / "merged_codes_preprocessed.jsonl.zip",
                     tmp_path / "corpus.jsonl", executors, limits, "base+plus", only=tuple(expected),
                     log=lambda _: None, oracle="exact")
    finally:
        for executor in executors:
            executor.close()
    built = corpus.load(tmp_path / "corpus.jsonl")
    assert {t: (len(built[t]), len(bad_outputs(built[t])[0])) for t in expected} == expected


def test_upstreams_kill_counts_take_any_exception_and_a_programs_own_added_bad_outputs():
    """What upstream's sheet shows on HumanEval/2 (docs/nl2postcond.md, "Kill rule"):
    a bad output the postcondition raises on (``0 <= '0.5'``: TypeError) counts as
    killed, and a program counts as killed only on the bad outputs it added."""
    from pytest_specbench.benchmarks.nl2postcond.adapter import _kills
    from pytest_specbench.benchmarks.nl2postcond.corpus import Bopi, Kept
    from pytest_specbench.benchmarks.nl2postcond.evaluate import Evaluated, _pairs

    programs = [Kept("T/2", 1, True, (Bopi(0, (), 1.5), Bopi(1, (), 0.6))),  # adds both
                Kept("T/2", 2, True, (Bopi(1, (), 0.6), Bopi(2, (), 0.7))),  # adds (2, 0.7) only
                Kept("T/2", 3, False, (Bopi(0, (), "0.5"),))]  # a string: the assert raises TypeError
    pairs, members, added, _ = _pairs(programs)
    assert [p[0] for p in pairs] == [0, 1, 2, 0] and added == [[0, 1], [2], [3]] and members[1] == [1, 2]
    # the postcondition `assert 0 <= return_value < 1`, on each pair
    bad = [BlockOutcome("violated"), BlockOutcome("holds"), BlockOutcome("holds"), BlockOutcome("raised", "TypeError")]
    done = Evaluated([], bad, list(zip(programs, members)), added)
    counts = {(kill, codes): (k["codes_killed"], k["bopi_killed"], k["natural_codes_killed"])
              for kill in ("any", "assertion") for codes in ("added", "all") for k in [_kills(done, kill, codes)]}
    assert counts == {("any", "added"): (2, 2, 1), ("any", "all"): (2, 2, 1),
                      ("assertion", "added"): (1, 1, 1), ("assertion", "all"): (1, 1, 1)}
    # program 2 gives (1, 0.6), which program 1 added: rejected there, it kills program 2 only under "all"
    bad[1] = BlockOutcome("violated")
    assert _kills(done, "any", "added")["codes_killed"] == 2 and _kills(done, "any", "all")["codes_killed"] == 3



def test_the_reference_cases_decide_the_job_and_a_skipped_case_is_neither_a_failure_nor_a_kill(monkeypatch):
    """``evaluate`` names the reference's cases, wherever the shuffle put them, as the job's
    decisive ones (once one fails, the rest is skipped: a postcondition that is not test-set
    correct has no completeness); a skipped case is no kill under either rule."""
    from pytest_specbench.benchmarks.nl2postcond import evaluate as evaluation
    from pytest_specbench.benchmarks.nl2postcond.corpus import Bopi, Kept

    seen = {}

    def check_blocks(executor, preamble, block, cases, **kw):
        seen.update(cases=cases, **kw)
        return [BlockOutcome("holds")] * len(cases)

    monkeypatch.setattr(evaluation, "check_blocks", check_blocks)
    task = {"prompt": "def f(x):\n    pass\n", "entry_point": "f"}
    reference = [{"inputs": {"x": i}, "return_value": f"right {i}"} for i in range(3)]
    programs = [Kept("HumanEval-T/0", 1, True, tuple(Bopi(i, (i,), f"wrong {i}") for i in range(3)))]
    done = evaluation.evaluate(None, task, "assert True", "", reference, programs, 30.0, 0.2, "position")  # (no input list)
    assert sorted(seen["cases"][p]["return_value"] for p in seen["decisive"]) == ["right 0", "right 1", "right 2"]
    assert len(done.reference) == 3 and len(done.bad) == 3
    assert not evaluation.rejects(BlockOutcome("skipped"), "any") and not evaluation.rejects(BlockOutcome("skipped"), "assertion")


def test_a_program_that_sleeps_times_out_on_its_own_and_is_not_run_again_as_the_machines_load():
    """HumanEval/129's program 35 waits on an empty PriorityQueue: its wall-clock stops, with no
    CPU spent, were taken for the machine's load, so the build ran it again alone, and, stopped by the
    wall clock again, left the task out.  A wall stop of a call that ran under 1% of its bound is the
    program's time-out; one that ran (a starved call) is still the load's."""
    from types import SimpleNamespace

    from pytest_specbench.benchmarks.nl2postcond.observe import load_stop, observe
    from pytest_specbench.execution.limits import Limits
    from pytest_specbench.execution.python import PythonExecutor

    task = {"entry_point": "f"}
    code = ("import queue, time\n"
            "def f(x):\n"
            "    if x == 0:\n        queue.PriorityQueue().get()\n"
            "    if x == 1:\n        time.sleep(30)\n"
            "    if x == 2:\n        while True: pass\n"
            "    return x\n")
    executor = PythonExecutor(Limits())
    try:
        seen = observe(executor, code, task, "sleepers", [((i,), {}) for i in range(4)], 0.2, wall_factor=3.0)
    finally:
        executor.close()
    assert [(o.status, o.wall_stop) for o in seen] == [("timeout", False)] * 3 + [("ok", False)]
    assert load_stop(SimpleNamespace(wall_stop=True, cpu=0.3), 1.0, 20.0)  # ran 0.3 s of its 20.5 s: starved
    assert not load_stop(SimpleNamespace(wall_stop=True, cpu=0.001), 1.0, 20.0)  # slept
    assert not load_stop(SimpleNamespace(wall_stop=False, cpu=0.9), 1.0, 20.0)  # its CPU limit


def test_a_bad_output_on_an_input_listed_twice_is_one_pair_by_value_and_two_by_position(monkeypatch):
    """HumanEval+ lists some base inputs again among the plus inputs; upstream's counts key a pair
    by the input's value (docs/nl2postcond.md, "Which HumanEval+ upstream ran"), the default:
    a program whose only new pair was on the repeat adds nothing and is not run or counted.
    ``position`` keeps the corpus's own selection."""
    from pytest_specbench.benchmarks.nl2postcond import evaluate as evaluation
    from pytest_specbench.benchmarks.nl2postcond.adapter import _kills
    from pytest_specbench.benchmarks.nl2postcond.corpus import Bopi, Kept

    monkeypatch.setattr(evaluation, "check_blocks", lambda executor, preamble, block, cases, **kw:
                        [BlockOutcome("violated" if c["return_value"] == 9 else "holds") for c in cases])
    task = {"prompt": "def f(x):\n    pass\n", "entry_point": "f", "base_input": [[1], [2]], "plus_input": [[1], [3]]}
    programs = [Kept("HumanEval-T/0", 0, True, (Bopi(0, (1,), 9),)),  # input [1] (#0) -> 9
                Kept("HumanEval-T/0", 1, True, (Bopi(2, (1,), 9),)),  # input [1] again (#2) -> 9: new by position only
                Kept("HumanEval-T/0", 2, False, (Bopi(1, (2,), 5), Bopi(2, (1,), 9)))]
    counts = {}
    for pairs in ("value", "position"):
        done = evaluation.evaluate(None, task, "assert True", "", [], programs, 30.0, 0.2, pairs)
        counts[pairs] = {k: v for k, v in _kills(done, "any").items() if k != "killed_programs"}
    assert counts["value"] == {"codes_run": 2, "codes_killed": 1, "bopi_run": 2, "bopi_killed": 1,
                               "natural_codes_run": 1, "natural_codes_killed": 1}
    assert counts["position"] == {"codes_run": 3, "codes_killed": 2, "bopi_run": 3, "bopi_killed": 2,
                                  "natural_codes_run": 2, "natural_codes_killed": 2}
    from pytest_specbench.benchmarks.nl2postcond.tools.agreement import counts_by_input_value
    assert counts_by_input_value(programs, task) == (2, 2, 1)



def test_a_bad_output_equal_to_the_references_under_python_eq_does_not_count_by_default(monkeypatch):
    """The corpus records an output unequal in value or type (``2.0`` or ``True`` for ``1``);
    upstream counted what Python's ``==`` rejects (EvalPlus's ``out == exp``):
    ``--nl2postcond-oracle=eq``, the default, drops the others and selects again, so a program
    whose bad outputs were all of another type only is neither run nor counted. A long string,
    or anything against a string reference, is never equal: it is not read."""
    from pytest_specbench.benchmarks.nl2postcond import evaluate as evaluation
    from pytest_specbench.benchmarks.nl2postcond.adapter import _kills
    from pytest_specbench.benchmarks.nl2postcond.corpus import Bopi, Kept
    from pytest_specbench.benchmarks.nl2postcond.observe import LongStr

    monkeypatch.setattr(evaluation, "check_blocks", lambda executor, preamble, block, cases, **kw:
                        [BlockOutcome("violated" if type(c["return_value"]) is int and c["return_value"] == 9
                                      else "holds") for c in cases])
    task = {"prompt": "def f(x):\n    pass\n", "entry_point": "f", "base_input": [[1], [2]], "plus_input": [[3]]}
    expected = [1, 2, [3]]
    programs = [Kept("HumanEval-T/0", 0, True, (Bopi(0, (1,), 1.0), Bopi(1, (2,), True))),  # 1.0 == 1 goes; True != 2 stays
                Kept("HumanEval-T/0", 1, True, (Bopi(2, (3,), [3.0]),)),  # [3.0] == [3]: nothing left, not run
                Kept("HumanEval-T/0", 2, False, (Bopi(0, (1,), 9), Bopi(2, (3,), (3,))))]  # (3,) != [3]: both stay
    counts = {}
    for oracle, given in (("eq", expected), ("exact", None)):
        done = evaluation.evaluate(None, task, "assert True", "", [], programs, 30.0, 0.2, "value", given)
        counts[oracle] = {k: v for k, v in _kills(done, "any").items() if k != "killed_programs"}
    assert counts["eq"] == {"codes_run": 2, "codes_killed": 1, "bopi_run": 3, "bopi_killed": 1,
                            "natural_codes_run": 1, "natural_codes_killed": 0}
    assert counts["exact"] == {"codes_run": 3, "codes_killed": 1, "bopi_run": 5, "bopi_killed": 1,
                               "natural_codes_run": 2, "natural_codes_killed": 0}
    assert not evaluation.equal_to_expected(LongStr("d" * 32, 70_000), "x" * 70_000)
    assert not evaluation.equal_to_expected(1, "1") and evaluation.equal_to_expected(True, 1)
    nested: list = []
    for _ in range(100_000):
        nested = [nested]
    assert not evaluation.equal_to_expected(nested, [[]])  # a RecursionError stays a bad output


def test_a_buggy_programs_own_parameter_names_are_recorded_and_bound_only_under_the_program_option(monkeypatch, tmp_path):
    """HumanEval/95: programs naming their parameter ``d`` where the reference says ``dict``; upstream's
    kill run bound the postcondition to each program's own signature (``len(dict)`` then raises on
    the builtin).  The corpus records a program's names where they differ (its line is otherwise
    the bytes it was); ``--nl2postcond-names=program`` binds a bad output to the names of the program
    that added it, ``reference`` (the default) to the task's, so a name tells the postcondition nothing."""
    from pytest_specbench.benchmarks.nl2postcond import evaluate as evaluation
    from pytest_specbench.benchmarks.nl2postcond.observe import Observation

    task = {"task_id": "HumanEval-T/0", "entry_point": "f", "prompt": "def f(dict):\n    \"\"\"doc\"\"\"\n",
            "canonical_solution": "    return len(dict)\n", "base_input": [[{}], [{"a": 1}]], "plus_input": []}
    cands = [corpus.Candidate("HumanEval-T/0", 1, "def f(dict):\n    return 7\n"),
             corpus.Candidate("HumanEval-T/0", 2, "def g(x):\n    return x\ndef f(d):\n    return -1\n"),
             corpus.Candidate("HumanEval-T/0", 3, "def f(*args):\n    return 5\n"),
             corpus.Candidate("HumanEval-T/0", 4, "def f(__builtins__):\n    return 4\n")]  # never bound over the builtins
    obs = {n: [Observation(i, "ok", ([{}] if i == 0 else [{"a": 1}],), out) for i in (0, 1)]
           for n, out in ((1, 7), (2, -1), (3, 5), (4, 4))}
    kept = corpus.select(task, [0, 1], cands, obs, "exact")
    assert [(k.program, k.params) for k in kept] == [(1, None), (2, ("d",)), (3, None), (4, None)]  # *args: not by name
    line = kept[1].line()
    assert '"params": ["d"]' in line and '"params"' not in kept[0].line()
    (tmp_path / "c.jsonl").write_text("".join(k.line() + "\n" for k in kept))
    assert [k.params for k in corpus.load(tmp_path / "c.jsonl")["HumanEval-T/0"]] == [None, ("d",), None, None]
    from pytest_specbench.errors import DataError
    for bad in ('"params": "d"', '"params": ["__builtins__"]'):
        (tmp_path / "bad.jsonl").write_text(line.replace('"params": ["d"]', bad) + "\n")
        with pytest.raises(DataError, match=r"bad\.jsonl.*1"):
            corpus.load(tmp_path / "bad.jsonl")["HumanEval-T/0"]
    seen = []
    monkeypatch.setattr(evaluation, "check_blocks", lambda executor, preamble, block, cases, **kw:
                        seen.append(cases) or [BlockOutcome("holds") for _ in cases])
    for names_by, want in (("reference", {("dict",)}), ("program", {("dict",), ("d",)})):
        seen.clear()
        evaluation.evaluate(None, task, "assert True", "", [], kept, 30.0, 0.2, "str", None, names_by)
        bound = [tuple(c["inputs"]) for c in seen[0]]
        assert set(bound) == want and len(bound) == 8, names_by
        if names_by == "program":  # program 2's two pairs, and no other
            assert sorted(bound).count(("d",)) == 2


# ------------------------------------------------------------------ metrics, hand-checked

def _sample(index, correct, bopi=(0, 0), codes=(0, 0), natural=(0, 0), killed=()):
    details = {"passed": correct, "test_set_correct": correct, "bopi_killed": bopi[0], "bopi_run": bopi[1], "codes_killed": codes[0],
               "codes_run": codes[1], "natural_codes_killed": natural[0], "natural_codes_run": natural[1],
               "killed_programs": list(killed)}
    complete = {"passed": correct and bopi[0] == bopi[1], "complete": correct and bopi[0] == bopi[1], "applicable": correct,
                "bug_complete": correct and codes[0] == codes[1]}
    return {"index": index, "checks": {"correct": details, "complete": complete}}


def test_metrics_from_hand_checked_verdicts():
    results = {
        # task A: 2 samples; one correct killing 3 of 4 bopi (2 of 2 programs), one incorrect
        "A": [_sample(0, True, (3, 4), (2, 2), (1, 1), killed=(0, 200)), _sample(1, False)],
        # task B: 2 samples, both correct: one kills everything, one half the programs
        "B": [_sample(0, True, (6, 6), (2, 2), (0, 0), killed=(5, 7)), _sample(1, True, (1, 6), (1, 2), (0, 0), killed=(5,))],
    }
    got = metrics.compute(results, [1, 2])
    assert got["accept@1"] == pytest.approx((1 / 2 + 1) / 2)
    assert got["accept@2"] == pytest.approx(1.0)
    assert got["complete@1"] == pytest.approx((0 + 1 / 2) / 2)  # A's correct one leaves a bopi
    assert got["bug_complete@1"] == pytest.approx((1 / 2 + 1 / 2) / 2)
    assert got["bopi_killed_share"] == pytest.approx((3 / 4 + (1 + 1 / 6) / 2) / 2)
    assert got["codes_killed_share"] == pytest.approx((1 + (1 + 1 / 2) / 2) / 2)
    assert got["natural_codes_killed_share"] == pytest.approx(1.0)  # only A has natural programs
    assert got["codes_killed_union"] == pytest.approx(1.0)


# ------------------------------------------------------------------ the spec service, attacked

pytestmark_seccomp = pytest.mark.skipif(available() is not None, reason=str(available()))
CASES = [{"inputs": {"xs": ["alpha-marker"]}, "return_value": 1},
         {"inputs": {"xs": ["beta-marker"]}, "return_value": 2}]


@pytest.fixture(scope="module")
def command_executor():
    ex = CommandExecutor()
    yield ex
    ex.close()


def _run(executor, source, cases=CASES, **kw):
    return [(o.kind, o.exc_type) for o in check_blocks(executor, "import re", source, cases, **kw)]


# Each hostile block: its text, and its outcome on each of CASES (alpha, beta).
HOSTILE_BLOCKS = {
    # Controls: an honest postcondition, one that fails, one that raises.
    "honest": ("assert return_value in (1, 2)", [("holds", ""), ("holds", "")]),
    "fails": ("assert return_value == 1", [("holds", ""), ("violated", "AssertionError")]),
    "raises": ("assert xs[5]", [("raised", "IndexError"), ("raised", "IndexError")]),
    # The keeper, the zygote and the other cases are out of reach: no file, process, signal or IPC.
    "file": ("open('/tmp/specbench-leak', 'w')", [("raised", "PermissionError")] * 2),
    "signal": ("import os\nos.kill(os.getppid(), 9)", [("raised", "PermissionError")] * 2),
    "channel": ("import os\nos.write(3, b'{\"case\": 1, \"kind\": \"holds\"}')", [("raised", "PermissionError")] * 2),
    "fork": ("import os\nos.fork()", [("raised", "PermissionError")] * 2),
    "thread": ("import threading\nthreading.Thread(target=print).start()", [("raised", "RuntimeError")] * 2),
    "socket": ("import socket\nsocket.socket()", [("raised", "PermissionError")] * 2),
    # Nothing of another case is in memory (its inputs' list), and nothing outlives a case.
    "other case": ("import gc\nassert not any('beta-marker' in o for o in gc.get_objects() if type(o) is list) "
                   "or xs == ['beta-marker']", [("holds", "")] * 2),
    "outlives": ("import builtins\nbuiltins.seen = getattr(builtins, 'seen', 0) + 1\nassert builtins.seen == 1",
                 [("holds", "")] * 2),
    # A block may write its own answer line (it runs where the answer is written): that is the
    # same as a block that says ``holds``, for this case and no other.
    "forged answer": ("import os\nos.write(9, b'{\"kind\": \"holds\"}\\n' * 5)\nassert xs == ['alpha-marker']",
                      [("holds", ""), ("holds", "")]),
    # Ending without an answer is never a pass.
    "exit": ("import os\nos._exit(0)", [("raised", "")] * 2),
    "SystemExit": ("raise SystemExit(0)", [("raised", "SystemExit")] * 2),
}


@pytestmark_seccomp
def test_a_postcondition_reaches_nothing_but_its_own_case(command_executor):
    """Every hostile block of HOSTILE_BLOCKS in one job (they were a job each: ~0.2 CPU s a
    job's start): one block that runs the ``which``-th of them, on both CASES for each,
    every case still in a confined child of its own.  A block that does not compile is
    a job of its own (the whole block would not)."""
    names = list(HOSTILE_BLOCKS)
    block = "".join(f"{'if' if i == 0 else 'elif'} which == {i}:\n" + textwrap.indent(HOSTILE_BLOCKS[n][0], "    ")
                    + "\n" for i, n in enumerate(names))
    cases = [{**case, "inputs": {**case["inputs"], "which": i}} for i in range(len(names)) for case in CASES]
    got = _run(command_executor, block, cases=cases)
    assert {n: got[2 * i:2 * i + 2] for i, n in enumerate(names)} == {n: e for n, (_, e) in HOSTILE_BLOCKS.items()}
    assert _run(command_executor, "def f(:") == [("raised", "CompileError")] * 2


@pytestmark_seccomp
def test_a_postcondition_that_never_ends_is_stopped_per_case(command_executor):
    assert _run(command_executor, "while True: pass", cases=CASES[:1], case_seconds=0.2) == [("raised", "")]


@pytestmark_seccomp
def test_each_case_reports_the_cpu_seconds_it_took_and_upstreams_rule_fails_the_slow_ones(command_executor):
    """Upstream's per-input rule (--nl2postcond-time=upstream): the postcondition may
    take max(0.2 s, 2x the reference's time) less the reference's time on each input."""
    from pytest_specbench.benchmarks.nl2postcond.evaluate import over_upstream_time, upstream_time_limit

    block = "n = 0\nwhile n < inputs_n: n += 1\nassert return_value >= 0"  # spends CPU in proportion to inputs_n
    cases = [{"inputs": {"inputs_n": n}, "return_value": 1} for n in (10, 3_000_000)]
    fast, slow = check_blocks(command_executor, "", block, cases, case_seconds=5.0, timeout=60)
    assert fast.kind == slow.kind == "holds"
    assert 0 <= fast.cpu < 0.05 < slow.cpu, (fast, slow)
    assert upstream_time_limit(0.01) == pytest.approx(0.19) and upstream_time_limit(1.0) == pytest.approx(1.0)
    kept, failed = over_upstream_time([fast, slow], [0.01, 0.01])
    assert kept == fast and (failed.kind, failed.exc_type) == ("raised", "TimeLimit")
    # a reference slow enough on that input leaves room for the slow postcondition
    assert over_upstream_time([slow], [slow.cpu + 1.0]) == [slow]
    assert over_upstream_time([BlockOutcome("violated", cpu=9.0)], [0.0])[0].kind == "violated"  # already failing


@pytestmark_seccomp
def test_an_iterator_a_program_returns_reaches_the_postcondition_as_an_iterator_of_its_items(command_executor):
    """HumanEval/22's programs return ``filter(...)`` where a list is due (956 bad outputs); upstream's
    postcondition ran on the object, and ``all(isinstance(i, int) for i in return_value)`` held on
    it.  The observer reads the items in the program's process (our own text, run here as the random
    test's is) and the spec process hands the postcondition a fresh ``filter`` over them, used up
    once read, as the object was.  Too many items, or an iterator that raises, stays opaque."""
    from pytest_specbench.benchmarks.nl2postcond.corpus import pair_key, stable_text
    from pytest_specbench.benchmarks.nl2postcond.evaluate import equal_to_expected, str_pair_key
    from pytest_specbench.benchmarks.nl2postcond.observe import ITERATED_ITEMS, OBSERVER, observed_program
    from pytest_specbench.execution import wire

    namespace: dict = {}
    exec(compile(observed_program(
        "import itertools\n"
        "def f(xs, how):\n"
        "    if how == 'endless':\n        return itertools.count()\n"
        "    if how == 'raises':\n        return (1 // x for x in xs)\n"
        "    if how == 'view':\n        return {x: str(x) for x in xs}.items()\n"
        "    return filter(lambda x: isinstance(x, int), xs)\n", "f"), "<observed>", "exec"), namespace)
    observe = namespace[OBSERVER]
    args, out = wire.loads(wire.dumps(observe([1, "a", 2], "filter")))
    assert type(out) is wire.Iterated and (out.kind, out.items) == ("filter", [1, 2])
    assert type(wire.loads(wire.dumps(observe([], "endless")))[1]) is wire.Opaque  # over ITERATED_ITEMS
    assert ITERATED_ITEMS >= 1_000
    assert type(wire.loads(wire.dumps(observe([0], "raises")))[1]) is wire.Opaque
    view = wire.loads(wire.dumps(observe([3], "view")))[1]
    assert (view.kind, view.items) == ("dict_items", [(3, "3")])
    # never equal to the reference's list, and a pair of its own program's under both keys
    assert not equal_to_expected(out, [1, 2])
    assert pair_key(1, 0, out) != pair_key(2, 0, out) and str_pair_key(1, 0, out) != str_pair_key(2, 0, out)
    assert stable_text(out) == '{"g":["filter",[1,2]]}'
    blocks = {"assert all(isinstance(i, int) for i in return_value)": ("holds", ""),
              "assert isinstance(return_value, filter) and not isinstance(return_value, list)": ("holds", ""),
              "assert all(isinstance(i, int) for i in return_value)\nassert list(return_value) == [1, 2]":
                  ("violated", "AssertionError"),  # used up by the first assert, as upstream's object was
              "assert isinstance(return_value, list)": ("violated", "AssertionError")}
    for block, want in blocks.items():
        assert _run(command_executor, block, cases=[{"inputs": {"xs": [1, "a", 2]}, "return_value": out}]) == [want], block
    assert _run(command_executor, "assert dict(return_value) == {3: '3'} and len(return_value) == 1",
                cases=[{"inputs": {"xs": [3]}, "return_value": view}]) == [("holds", "")]


def test_batches_never_hold_two_cases_of_one_input():
    keys = [3, 3, 1, 3, 2, 1, 4, 4, 4, 0]
    batches = batches_of(keys, 3)
    assert sorted(i for b in batches for i in b) == list(range(len(keys)))
    assert all(len(b) <= 3 and len({keys[i] for i in b}) == len(b) for b in batches)
    assert batches[0] == [0, 2, 4]  # filled in order, a repeated input deferred to the next batch


@pytestmark_seccomp
def test_a_batch_answers_each_of_its_cases_from_fresh_names(command_executor):
    """Cases that share a process still start from the preamble's names; an end
    without an answer ends the batch's remaining cases, never as passes."""
    cases = [{"inputs": {"xs": [i]}, "return_value": i} for i in range(4)]
    got = check_blocks(command_executor, "import re", "assert 'seen' not in dir()\nseen = 1\nassert return_value != 2",
                       cases, batches=[[0, 1], [2, 3]])
    assert [o.kind for o in got] == ["holds", "holds", "violated", "holds"]
    ended = check_blocks(command_executor, "", "import os\nif return_value == 1: os._exit(0)", cases,
                         batches=[[0, 1, 2], [3]])
    assert [o.kind for o in ended] == ["holds", "raised", "raised", "holds"]


def test_records_are_read_by_nonce_and_a_missing_case_is_raised():
    records = [{"event": "start", "nonce": "n"}, {"case": 0, "kind": "holds", "nonce": "n"},
               {"case": 1, "kind": "holds", "nonce": "forged"}, "junk", {"case": 7, "kind": "holds", "nonce": "n"}]
    assert read_blocks(records, "n", 2, timed_out=True) == [BlockOutcome("holds"), BlockOutcome("raised", "", "timeout (the whole evaluation)")]


# ------------------------------------------------------------------ the plugin, bundled suite

def _replay(folder: Path, answers: dict[str, str]) -> Path:
    path = folder / "answers.jsonl"
    path.write_text("".join(json.dumps({"task_id": t, "sample_index": 0, "postcondition": a}) + "\n"
                            for t, a in answers.items()))
    return path


@pytestmark_seccomp
def test_bundled_suite_reference_is_complete_and_weak_or_lying_answers_are_not(pytester):
    answers = {
        "HumanEval-N/0": "assert True",  # correct, kills nothing
        "HumanEval-N/1": "assert len(return_value) == len(xs)",  # correct, kills some
        "HumanEval-N/2": "assert return_value == sorted(xs)",  # wrong on duplicates
        # Writes its own "holds" line before its assert fails: it speaks for its own batch
        # only (the lines it adds shift that batch's answers), and cannot tell a bad output
        # from a right one: never complete.
        "HumanEval-N/3": "import os\nos.write(9, b'{\"kind\": \"holds\"}\\n')\nassert False",
    }
    # in this process (the answers run in the sandbox either way; a Python of its own and the
    # plugin's import were ~1.5 CPU s)
    result = pytester.runpytest_inprocess("--specbench=nl2postcond", f"--model=replay:{_replay(pytester.path, answers)}",
                                          "--spec-tiers=corpus", "--specbench-report=r.json", "-p", "no:cacheprovider",
                                          "-q", "-n", "0")
    report = json.loads((pytester.path / "r.json").read_text())["benchmarks"]["nl2postcond"]
    verdicts = {(t, c): s["samples"][0]["checks"][c]["passed"] for t, s in report["tasks"].items()
                for c in ("correct", "complete")}
    assert verdicts == {("HumanEval-N/0", "correct"): True, ("HumanEval-N/0", "complete"): False,
                        ("HumanEval-N/1", "correct"): True, ("HumanEval-N/1", "complete"): False,
                        ("HumanEval-N/2", "correct"): False, ("HumanEval-N/2", "complete"): False,
                        ("HumanEval-N/3", "correct"): verdicts[("HumanEval-N/3", "correct")],
                        ("HumanEval-N/3", "complete"): False}, result.stdout.str()[-3000:]
    n1 = report["tasks"]["HumanEval-N/1"]["samples"][0]["checks"]["complete"]
    assert 0 < n1["bopi_killed"] < n1["bopi_run"]
    assert report["errors"] == 0


@pytestmark_seccomp
def test_a_task_the_corpus_has_no_part_for_skips_complete_never_passes_it(pytester):
    """A corpus without a task's lines (a build that has not reached it, a hanging task left out)
    gave that task nothing to reject: ``complete`` passed with 0 of 0 bad outputs, inflating
    complete@k.  It skips now, with the line that builds the part; the other tasks are as before."""
    from pytest_specbench.data.bundled import bundled_suite

    lines = (bundled_suite("nl2postcond") / "corpus.jsonl").read_text().splitlines(True)
    partial = pytester.path / "partial.jsonl"
    partial.write_text("".join(line for line in lines if '"HumanEval-N/3"' not in line))
    result = pytester.runpytest_inprocess("--specbench=nl2postcond", "--model=reference", "--spec-tiers=corpus",
                                          f"--nl2postcond-corpus={partial}", "--specbench-report=r.json",
                                          "-p", "no:cacheprovider", "-q", "-n", "0", "-rs")
    report = json.loads((pytester.path / "r.json").read_text())["benchmarks"]["nl2postcond"]
    checks = {t: s["samples"][0]["checks"] for t, s in report["tasks"].items()}
    assert all(checks[t]["complete"]["passed"] for t in ("HumanEval-N/0", "HumanEval-N/1", "HumanEval-N/2")), checks
    assert checks["HumanEval-N/3"]["correct"]["passed"] and "complete" not in checks["HumanEval-N/3"], checks
    result.stdout.fnmatch_lines(["*the corpus has no part for HumanEval-N/3: build it with `specbench nl2postcond "
                                 "build-corpus --specbench-data ROOT --tasks HumanEval-N/3`*"])


# ------------------------------------------------------------------ upstream's verdicts (real data)

@pytest.mark.realdata
@pytest.mark.skipif(not (SHARED_DATA / "nl2postcond" / "annotated_postconditions.jsonl").is_file(),
                    reason="nl2postcond data not found beside the checkout (../shared/datasets/nl2postcond)")
def test_test_set_correct_agrees_with_upstream_on_a_slice(pytester):
    from pytest_specbench.benchmarks.nl2postcond.tools import agreement

    # Three of HumanEval/0's ten rows by default: both of upstream's verdicts (#8, the one not
    # test-set correct; #7, a correct one that kills every bad output; #1, a correct one that
    # guards the True branch only); the seven others repeat a kind of #1 or #7 or are type
    # checks (#0, #2, #6), each a sandbox job (~0.2 CPU s; session 20).  SPECBENCH_TESTS_FULL=1:
    # all ten, and HumanEval/2 and /4's (float outputs; every row correct upstream), 30 rows.
    tasks = {"HumanEval/0", "HumanEval/2", "HumanEval/4"} if FULL else {"HumanEval/0"}
    rows = [r for r in agreement.sheet_rows(SHARED_DATA, tasks) if FULL or r["r_num"] in (1, 7, 8)]
    assert {bool(r["test_set_correct"]) for r in rows} == {True, False}
    # The tool's own run (agreement.plugin_args), made in this process: every row is still
    # checked in the sandbox; a Python of its own and the plugin's import were ~1.5 CPU s.
    pytester.runpytest_inprocess(*agreement.plugin_args(SHARED_DATA, rows, pytester.path, "base+plus", None, 0))
    result = agreement.compare(rows, agreement.run_report(pytester.path))
    assert result["rows"] == len(rows) == (30 if FULL else 3)
    assert result["table"].get("agree", 0) == result["rows"], result["disagreements"]


def test_the_agreement_table_counts_rows_per_column_and_names_known_causes():
    from pytest_specbench.benchmarks.nl2postcond.tools import agreement

    def row(task, r, correct, **cols):
        return {"task_id": task, "r_num": r, "test_set_correct": correct, "base_error": cols.pop("base_error", ""),
                **{f"num_{k}": v for k, v in cols.items()}}

    def sample(r, passed, **kills):
        rules = {"any/added": {"codes_killed": 2, "bopi_killed": 5, "natural_codes_killed": 1},
                 "assertion/added": {"codes_killed": 1, "bopi_killed": 4, "natural_codes_killed": 1}}
        counts = {"codes_run": 3, "bopi_run": 9, "natural_codes_run": 1, **kills}
        return {"index": r, "checks": {"correct": {"passed": passed, "killed_by_rule": rules},
                                       "complete": {"applicable": passed, **counts}}}

    up = dict(codes_run=3, bopi_run=9, natural_codes_run=1, codes_killed=2, bopi_killed=5, natural_codes_killed=1)
    rows = [row("HumanEval/2", 0, True, **up), row("HumanEval/2", 1, True, **up),
            row("HumanEval/35", 0, False), row("HumanEval/9", 0, False, base_error="!!BASE ERROR!!invalid syntax")]
    bench = {"tasks": {"HumanEval/2": {"samples": [sample(0, True, codes_killed=2, bopi_killed=5, natural_codes_killed=1),
                                                   sample(1, True, codes_killed=1, bopi_killed=5, natural_codes_killed=1)]},
                       "HumanEval/35": {"samples": [sample(0, True)]}}}
    result = agreement.compare(rows, bench)
    assert result["table"] == {"agree": 2, "differ": 1, "not evaluated (E or skipped)": 1}
    assert result["run_table"] == {"codes_run agree": 1, "bopi_run agree": 1, "natural_codes_run agree": 1}
    assert result["kills"]["codes_killed differ"] == 1 and result["kills"]["bopi_killed agree"] == 2
    assert result["by_rule"]["any/added"]["bopi_killed agree"] == 2
    assert result["by_rule"]["assertion/added"]["bopi_killed differ"] == 2
    causes = {(t, r): note for t, r, _, _, note in result["disagreements"]}
    assert causes[("HumanEval/35", 0)].startswith("reference changed") and causes[("HumanEval/9", 0)].startswith("base_error")
    assert result["no_part"] == {}
    # a task the corpus has no part for: its complete check skipped, its kill columns not compared, and said
    bench["tasks"]["HumanEval/3"] = {"samples": [{"index": 0, "checks": {"correct": {"passed": True}}}]}
    result = agreement.compare(rows + [row("HumanEval/3", 0, True, **up)], bench)
    assert result["no_part"] == {"HumanEval/3": 1} and result["kills"]["bopi_killed agree"] == 2


def test_a_long_task_says_how_many_of_its_programs_have_run_while_they_run():
    import threading
    from concurrent.futures import ThreadPoolExecutor

    release = threading.Event()
    lines = []
    with ThreadPoolExecutor(max_workers=2) as threads:
        futures = {"quick": threads.submit(lambda: 1), "slow": threads.submit(lambda: release.wait(5) and 2)}
        timer = threading.Timer(0.35, release.set)
        timer.start()
        results = corpus._results_with_progress(futures, "HumanEval/163", __import__("time").monotonic(),
                                                lines.append, 0.1)
    assert results == {"quick": 1, "slow": 2}
    assert lines and all(line.startswith("HumanEval/163: 1 of 2 distinct programs run (") for line in lines)
    assert len(lines) <= 4  # one a period, not one a wait


def test_the_agreement_script_reads_rows_kept_aside_from_a_sheet_of_their_own_and_names_a_bad_row(tmp_path, capsys):
    """The rows kept aside (HumanEval/110-163) come as a file in the sheet's format: ``--sheet``
    reads them (no data root needed with ``--report``); a row that is not one is one line."""
    from pytest_specbench.benchmarks.nl2postcond.tools import agreement

    sheet = tmp_path / "kept_aside.jsonl"
    sheet.write_text(json.dumps({"task_id": "HumanEval/150", "r_num": 3, "postcondition": "assert True",
                                 "test_set_correct": True}) + "\n")
    report = tmp_path / "report.json"
    report.write_text(json.dumps({"benchmarks": {"nl2postcond": {"tasks": {"HumanEval/150": {"samples": [
        {"index": 3, "checks": {"correct": {"passed": False}}}]}}}}}))
    assert agreement.main([str(tmp_path / "no-root"), "--sheet", str(sheet), "--report", str(report)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("rows: 1  differ: 1") and "HumanEval/150 r_num=3: ours False, upstream True" in out
    sheet.write_text(json.dumps({"task_id": "HumanEval/150", "r_num": "3", "postcondition": "assert True",
                                 "test_set_correct": True}) + "\n{not json\n")
    with pytest.raises(SystemExit, match=r"kept_aside\.jsonl:1: not a sheet row: r_num missing or of another type"):
        agreement.main([str(tmp_path), "--sheet", str(sheet), "--report", str(report)])
    sheet.write_text("\n{not json\n")
    with pytest.raises(SystemExit, match=r"kept_aside\.jsonl:2: not a sheet row \(a JSON object per line\)"):
        agreement.main([str(tmp_path), "--sheet", str(sheet), "--report", str(report)])
    with pytest.raises(SystemExit, match=r"absent\.jsonl: cannot read the sheet"):
        agreement.main([str(tmp_path), "--sheet", str(tmp_path / "absent.jsonl"), "--report", str(report)])


def test_a_build_stopped_within_a_task_resumes_without_running_its_finished_programs_again(tmp_path, monkeypatch):
    """A task's programs can take an hour (HumanEval/163): each distinct program's runs go to the
    task's journal as it finishes, and a resumed build runs only the others, with the same corpus."""
    from pytest_specbench.benchmarks.contract.evalplus import EvalPlusData
    from pytest_specbench.data.bundled import bundled_suite
    from pytest_specbench.execution.limits import Limits
    from pytest_specbench.execution.python import PythonExecutor

    class Stopped(Exception):
        pass

    suite, limits = bundled_suite("nl2postcond"), Limits()
    tasks = {t: dict(v) for t, v in EvalPlusData.load(suite).tasks.items()}
    real, ran = corpus.observe_bad, []

    def observe_bad(executor, code, task, *args):
        ran.append(task["task_id"])
        if stop_at and len(ran) == stop_at:
            raise Stopped  # as a build stopped while this program ran
        return real(executor, code, task, *args)

    monkeypatch.setattr(corpus, "observe_bad", observe_bad)
    out, executor = tmp_path / "corpus.jsonl", PythonExecutor(limits)
    try:
        stop_at = 4  # HumanEval-N/0's fourth of its five distinct programs
        with pytest.raises(Stopped):
            corpus.build(tasks, suite / "buggy_programs.jsonl", out, [executor], limits, "base+plus",
                         log=lambda _: None, oracle="exact")
        journal = out.with_name("corpus.jsonl.parts") / "HumanEval-N_0.runs"
        assert len(corpus.TaskRunsJournal(journal, None).read()) == 0 and journal.stat().st_size > 0  # (another run's limits)
        assert len(_records(journal)) == 4  # the fifth ran too: one pool, its futures all submitted
        with journal.open("ab") as fh:
            fh.write((1000).to_bytes(8, "big") + b"\x80\x05")  # a record a stop cut short is not taken
        stop_at, ran[:], lines = 0, [], []
        corpus.build(tasks, suite / "buggy_programs.jsonl", out, [executor], limits, "base+plus",
                     log=lines.append, oracle="exact")
    finally:
        executor.close()
    assert ran.count("HumanEval-N/0") == 1 and ran.count("HumanEval-N/1") >= 1
    assert any(line.startswith("HumanEval-N/0: 4 of 5 distinct programs' runs taken from HumanEval-N_0.runs")
               for line in lines)
    assert out.read_text() == (suite / "corpus.jsonl").read_text() and not journal.exists()
    # a journal of other limits (another run's per-call limits) is not taken
    other = corpus.TaskRunsJournal(tmp_path / "t.runs", [[1.0], [10, 30]])
    other.add("k", [])
    assert corpus.TaskRunsJournal(tmp_path / "t.runs", [[2.0], [10, 30]]).read() == {}
    assert corpus.TaskRunsJournal(tmp_path / "t.runs", [[1.0], [10, 30]]).read() == {"k": []}


def test_the_task_runs_journal_gives_back_each_observation_as_the_sandbox_sent_it(tmp_path):
    """What the selection reads of an observation (types included: ``exact`` compares them) is
    the same after the journal as before it: the values are the wire's, a long string its digest."""
    from pytest_specbench.benchmarks.nl2postcond.observe import LongStr, Observation
    from pytest_specbench.execution import wire

    values = [(1, [2, (3,)]), {1, 2}, frozenset({"a"}), float("nan"), -0.0, 10 ** 400, b"\x00\xff", {"k": {1: None}},
              "\r\u200b\\u0041", True, None, [1.5, float("inf")], wire.loads(wire.dumps((i for i in ()))),
              wire.Iterated("filter", [1, {2}])]
    sent = [Observation(i, "ok", (wire.loads(wire.dumps(v)), [i]), wire.loads(wire.dumps(v)), cpu=0.25)
            for i, v in enumerate(values)]
    sent += [Observation(20, "ok", ("x",), LongStr("ab" * 16, 70_000)), Observation(21, "timeout", wall_stop=True),
             Observation(22, "raise", exc_type="ZeroDivisionError"), Observation(23, "good"),
             Observation(24, "ok", ("y",), corpus.StoredValue("cd" * 16, 80_000, True))]  # stored as observed
    journal = corpus.TaskRunsJournal(tmp_path / "T.runs", [[1.0] * 25, [10, 30]])
    journal.add("key", sent)
    back = journal.read()["key"]
    assert [(o.index, o.status, o.exc_type, o.cpu, o.wall_stop) for o in back] == \
           [(o.index, o.status, o.exc_type, o.cpu, o.wall_stop) for o in sent]
    for got, want in zip(back, sent):
        assert type(got.result) is type(want.result) and type(got.args_after) is tuple
        if isinstance(want.result, (LongStr, corpus.StoredValue)):
            assert got.result == want.result and got.result.opaque if isinstance(want.result, corpus.StoredValue) \
                else got.result == want.result
        else:
            assert corpus.stable_text(got.result) == corpus.stable_text(want.result), want.index
        assert corpus.stable_text(list(got.args_after)) == corpus.stable_text(list(want.args_after))


def _records(path):
    data, at, out = path.read_bytes(), 0, []
    while at + 8 <= len(data):
        size = int.from_bytes(data[at:at + 8], "big")
        out.append(data[at + 8:at + 8 + size])
        at += 8 + size
    return out


def test_a_task_runs_journal_makes_no_object_but_observations_and_plain_data(tmp_path):
    """A journal lies in the build's folder: a record that would make another object (a
    tampered file) is not taken, that program runs again."""
    import pickle

    journal = corpus.TaskRunsJournal(tmp_path / "T.runs", None)

    class Exploit:
        def __reduce__(self):
            return (__import__("os").system, ("touch " + str(tmp_path / "pwned"),))

    record = pickle.dumps((journal.limits, "key", [Exploit()]), protocol=5)
    (tmp_path / "T.runs").write_bytes(len(record).to_bytes(8, "big") + record)
    assert journal.read() == {} and not (tmp_path / "pwned").exists()


def test_an_answers_invalid_escape_is_no_warning_of_the_run():
    """GPT-4's HumanEval/124 postconditions hold ``'\\d'`` in plain strings: parsing them warned
    (DeprecationWarning, listed by pytest against the item as ``<unknown>:2``)."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert postcondition_text("assert re.match('\\d+-\\d+', return_value)\n").startswith("assert re.match")


def test_the_agreement_script_reads_several_kept_runs_as_one_and_refuses_a_task_in_two(tmp_path, capsys):
    """Kill runs are made in batches as the corpus's parts are built; ``--report`` takes each
    batch's kept report and compares them as one run. A task in two reports is one line, not a guess."""
    from pytest_specbench.benchmarks.nl2postcond.tools import agreement

    sheet = tmp_path / "sheet.jsonl"
    sheet.write_text("".join(json.dumps({"task_id": t, "r_num": 0, "postcondition": "assert True",
                                         "test_set_correct": True}) + "\n" for t in ("HumanEval/1", "HumanEval/2")))

    def report(name, task_id, passed):
        path = tmp_path / name
        path.write_text(json.dumps({"benchmarks": {"nl2postcond": {"tasks": {task_id: {"samples": [
            {"index": 0, "checks": {"correct": {"passed": passed}}}]}}}}}))
        return str(path)

    one, two = report("one.json", "HumanEval/1", True), report("two.json", "HumanEval/2", False)
    assert agreement.main([str(tmp_path), "--sheet", str(sheet), "--report", one]) == 0
    assert capsys.readouterr().out.startswith("rows: 2  agree: 1  not evaluated (E or skipped): 1")
    assert agreement.main([str(tmp_path), "--sheet", str(sheet), "--report", one, two]) == 0
    out = capsys.readouterr().out
    assert out.startswith("rows: 2  agree: 1  differ: 1") and "HumanEval/2 r_num=0: ours False, upstream True" in out
    again = report("again.json", "HumanEval/2", True)
    with pytest.raises(SystemExit, match=r"again\.json: HumanEval/2 is also in .*two\.json \(one run a task\)"):
        agreement.main([str(tmp_path), "--sheet", str(sheet), "--report", one, two, again])
    with pytest.raises(SystemExit, match=r"absent\.json: cannot read the report"):
        agreement.main([str(tmp_path), "--sheet", str(sheet), "--report", str(tmp_path / "absent.json")])
    (tmp_path / "bad.json").write_text("{}")
    with pytest.raises(SystemExit, match=r"bad\.json: not a report with an nl2postcond section"):
        agreement.main([str(tmp_path), "--sheet", str(sheet), "--report", str(tmp_path / "bad.json")])


@pytest.mark.skipif(not (SHARED_DATA / "evalplus").is_dir(),
                    reason="EvalPlus data not found beside the checkout (../shared/datasets/evalplus)")
def test_a_corpus_line_the_scripts_cannot_read_is_one_line_naming_it_not_a_traceback(tmp_path):
    """A corpus whose line is cut, or names a long output its folder lacks (a parts folder
    joined without its ``long/``), ends the researchers' scripts with one line: file, line, why."""
    from pytest_specbench.benchmarks.nl2postcond.tools import agreement, causes

    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text('{"task_id": "HumanEval/0", "program": 0, "natural": true, "bopi": "[[0,[3],[3,\n')
    for main, name in ((agreement.main, "agreement"), (causes.main, "causes")):
        args = [str(SHARED_DATA), "--corpus", str(corpus), "--tasks", "HumanEval/0"]
        with pytest.raises(SystemExit, match=rf"^{name}: .*corpus\.jsonl:1: not a corpus line"):
            main(args + (["--runs-only"] if name == "agreement" else []))


@pytest.mark.skipif(not (SHARED_DATA / "evalplus").is_dir(),
                    reason="EvalPlus data not found beside the checkout (../shared/datasets/evalplus)")
def test_the_run_columns_straight_from_a_corpus_count_what_the_evaluation_counts(tmp_path, capsys):
    """``agreement --runs-only`` is the researchers' quick look at a corpus's run columns. Under
    ``--oracle eq`` (the evaluation's default) a recorded output that ``==`` takes for the
    reference's (``1.0`` for ``sum_to_n(1) == 1``) is no bad output, and a program left with none
    is not counted: it printed the corpus's ``exact`` counts before, which a user compared with
    upstream's and read as a disagreement (HumanEval/60: 19 programs where the evaluation has 18)."""
    from pytest_specbench.benchmarks.nl2postcond.tools import agreement

    corpus_file = tmp_path / "corpus.jsonl"
    lines = [{"task_id": "HumanEval/60", "program": 200, "natural": False, "bopi": "[[0,[1],1.0],[1,[6],21.0]]"},
             {"task_id": "HumanEval/60", "program": 201, "natural": False, "bopi": "[[0,[1],0],[1,[6],6],[2,[11],66.5]]"}]
    corpus_file.write_text("".join(json.dumps(line) + "\n" for line in lines))
    args = [str(SHARED_DATA), "--corpus", str(corpus_file), "--tasks", "HumanEval/60", "--runs-only",
            "--corpus-pin", "off"]
    counts = {}
    for oracle in ("eq", "exact"):
        assert agreement.main(args + ["--oracle", oracle]) == 0
        line = next(x for x in capsys.readouterr().out.splitlines() if "HumanEval/60 runs" in x)
        counts[oracle] = line.split("ours ")[1].split(", upstream")[0]
    assert counts == {"eq": "(1, 3, 0)", "exact": "(2, 5, 0)"}


def test_a_program_recurses_as_deep_as_upstreams_evalplus_let_it():
    """Upstream's candidates ran under EvalPlus 0.1.5, Python's default limit of 1000 frames, 29
    of them the harness's: a probe that recursed until RecursionError reached 970 there.  The
    sandbox's own limit is 3000, under which HumanEval/60's recursive ``sum_to_n`` programs return
    on its inputs 990-1005 where upstream's raised (16 bad outputs upstream never had).  The
    observer gives the entry point upstream's depth, whatever the sandbox's frames below it, on
    every call (a program that changes the limit changes it for its own later calls only)."""
    from pytest_specbench.benchmarks.nl2postcond.observe import CALL_DEPTH, observe
    from pytest_specbench.execution.limits import Limits
    from pytest_specbench.execution.python import PythonExecutor

    code = ("import sys\n"
            "def probe(k):\n"
            "    try:\n        return probe(k + 1)\n"
            "    except RecursionError:\n        return k\n"
            "def sum_to_n(n):\n"
            "    if n == -1:\n        sys.setrecursionlimit(100000)\n        return probe(1)\n"
            "    if n < 0:\n        return probe(1)\n"
            "    return n if n <= 1 else n + sum_to_n(n - 1)\n")
    executor = PythonExecutor(Limits())
    try:
        seen = observe(executor, code, {"entry_point": "sum_to_n"}, "depth",
                       [((n,), {}) for n in (-2, 970, 971, 972, -1, -2, 1000)], 1.0)
    finally:
        executor.close()
    assert CALL_DEPTH == 970
    assert [(o.status, o.result) for o in seen[:2]] == [("ok", 970), ("ok", sum(range(971)))]
    # sum_to_n(n) needs n frames: its entry frame and the 970 above it that upstream's probe reached
    assert (seen[2].status, seen[2].result) == ("ok", sum(range(972)))
    assert (seen[3].status, seen[3].exc_type) == ("raise", "RecursionError")
    assert seen[4].status == "ok" and seen[4].result > 10_000  # the program's own limit, within its call
    assert [(o.status, o.result) for o in seen[5:6]] == [("ok", 970)]  # and the observer's again at the next
    assert (seen[6].status, seen[6].exc_type) == ("raise", "RecursionError")


def test_candidates_run_on_the_inputs_the_reference_left_only_on_request(tmp_path):
    """Upstream's EvalPlus 0.1.5 called the reference on the task's own input lists, no copy, before
    its candidates ran on them: HumanEval/20's reference sorts ``numbers`` in place, and on its 4
    unsorted base inputs upstream's candidates saw the sorted lists (25 programs, 2 natural ones:
    upstream's figures; 29 and 3 on the lists as stored).  ``--candidate-inputs after-reference``
    builds so; the default, ``fresh``, gives each candidate the inputs as stored, and its rules are
    those of every folder built before the option."""
    from pytest_specbench.benchmarks.nl2postcond.corpus import build, build_rules, inputs_after_reference
    from pytest_specbench.benchmarks.nl2postcond.observe import Observation
    from pytest_specbench.execution.limits import Limits

    calls = [(([3.0, 1.0, 2.0],), {}), (([1.0, 2.0],), {})]
    ref = [Observation(0, "ok", ([1.0, 2.0, 3.0],), (1.0, 2.0)), Observation(1, "ok", ([1.0, 2.0],), (1.0, 2.0))]
    after, key = inputs_after_reference(calls, ref, "k")
    assert after == [(([1.0, 2.0, 3.0],), {}), (([1.0, 2.0],), {})] and key == "k:after-reference"
    assert after[1] is calls[1]  # an input the reference left as it was stays the task's own
    same = [Observation(0, "ok", ([3.0, 1.0, 2.0],), None), ref[1]]
    assert inputs_after_reference(calls, same, "k") == (calls, "k")

    candidates = tmp_path / "c.jsonl"
    candidates.write_text(json.dumps({"task_id": "HumanEval-T/0", "response_num": 0, "solution":
                                      "def first_two(xs):\n    return (xs[0], xs[1])\n"}) + "\n")
    task = {"task_id": "HumanEval-T/0", "entry_point": "first_two", "prompt": "def first_two(xs):\n",
            "canonical_solution": "    xs.sort()\n    return (xs[0], xs[1])\n",
            "base_input": [[[3.0, 1.0, 2.0]], [[1.0, 2.0]]], "plus_input": [], "atol": 0}
    limits = Limits()
    from pytest_specbench.execution.python import PythonExecutor
    kept = {}
    for how in ("fresh", "after-reference"):
        executor = PythonExecutor(limits)
        try:
            build({"HumanEval-T/0": task}, candidates, tmp_path / how / "corpus.jsonl", executor, limits, "base+plus",
                  log=lambda _: None, oracle="exact", candidate_inputs=how)
        finally:
            executor.close()
        kept[how] = (tmp_path / how / "corpus.jsonl").read_text()
        rules = json.loads((tmp_path / how / "corpus.jsonl.parts" / "rules.json").read_text())
        assert ("candidate_inputs" in rules) == (how != "fresh")
    assert '"program": 0' in kept["fresh"]  # (3.0, 1.0) on the list as stored: a bad output
    assert kept["after-reference"] == ""  # (1.0, 2.0) on the sorted list: right
    assert "candidate_inputs" not in build_rules(candidates, limits, "base+plus", "exact")


def test_the_build_corpus_command_builds_the_bundled_suite_and_refuses_a_folder_of_other_candidate_inputs(tmp_path):
    """The command as a user runs it (``specbench nl2postcond build-corpus``), without data: the
    bundled suite's corpus, byte for byte; the same ``--out`` under ``--candidate-inputs
    after-reference`` is a folder of other rules, refused in one line."""
    import subprocess
    import sys

    from pytest_specbench.data.bundled import bundled_suite

    out = tmp_path / "corpus.jsonl"
    command = [sys.executable, "-m", "pytest_specbench.cli", "nl2postcond", "build-corpus", "--out", str(out),
               "--jobs", "1"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert out.read_text() == (bundled_suite("nl2postcond") / "corpus.jsonl").read_text()
    again = subprocess.run(command + ["--candidate-inputs", "after-reference"], capture_output=True, text=True,
                           timeout=300)
    assert again.returncode != 0 and "candidate_inputs" in again.stderr and "Traceback" not in again.stderr
    other = tmp_path / "other" / "corpus.jsonl"  # and the other way round: a key only the folder has
    assert subprocess.run(command[:-4] + ["--out", str(other), "--jobs", "1", "--candidate-inputs", "after-reference"],
                          capture_output=True, text=True, timeout=300).returncode == 0
    back = subprocess.run(command[:-4] + ["--out", str(other), "--jobs", "1"], capture_output=True, text=True,
                          timeout=300)
    assert back.returncode != 0 and "candidate_inputs differ" in back.stderr
    # a stop rule of 0 time-outs would end every program at its first call: refused in one line,
    # before anything runs (it once built a corpus of 15 programs ended by the rule)
    zero = subprocess.run(command[:-4] + ["--out", str(tmp_path / "zero.jsonl"), "--stop-after-timeouts", "0", "0"],
                          capture_output=True, text=True, timeout=300)
    assert zero.returncode != 0 and not (tmp_path / "zero.jsonl.parts").exists()
    assert zero.stderr.strip().splitlines() == [
        "specbench: error: --stop-after-timeouts: two positive counts (IN_A_ROW IN_ALL) or off, got '0 0'"], zero.stderr
