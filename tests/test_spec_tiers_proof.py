"""Tiers 3 (CrossHair) and 4 (z3) of the Python-spec service (issue #47,
``pyspec/tiers/``): a bounded proof only from an exact translation, hostile
specs whose Python meaning differs from a naive translation never proved, and
every refutation replayed in the sandbox (a solver model or CrossHair's output
is a candidate only).  The solver runs in this process on parsed ASTs (no
spec code runs); the sandbox jobs are batched per check."""
from __future__ import annotations

import json
from dataclasses import replace

import pytest

from pytest_specbench.benchmarks.nl2postcond import tier_checks
from pytest_specbench.data.bundled import bundled_suite
from pytest_specbench.execution.command import CommandExecutor
from pytest_specbench.execution.limits import Limits
from pytest_specbench.execution.protocol import CommandResult
from pytest_specbench.pyspec.blocks import available
from pytest_specbench.pyspec.tiers import crosshair_tier, z3_tier
from pytest_specbench.pyspec.tiers.replay import TierServices, TierSettings
from pytest_specbench.pyspec.tiers.verdict import Relation, Status
from shared_data import SHARED_DATA

LIMITS = Limits(call_cpu=1.0, startup_cpu=2.0, memory_mb=512, processes=16, tmp_mb=16)
needs_seccomp = pytest.mark.skipif(available() is not None, reason=str(available()))

VOWELS = "sum(1 for c in s if c in 'aeiouAEIOU')"
R = f"assert return_value == {VOWELS}"  # the tests' reference spec (the bundled one lowercases first)
AC, RW = Relation.AC, Relation.RW


def _bundled(task_id: str) -> dict:
    rows = [json.loads(line) for line in (bundled_suite("nl2postcond") / "HumanEvalPlus-nl2postcond.jsonl")
            .read_text().splitlines() if line.strip()]
    return next(r for r in rows if r["task_id"] == task_id)


TASK_DATA = _bundled("HumanEval-N/0")  # count_vowels(s: str) -> int
TASK = tier_checks.tier_task(TASK_DATA)


def test_the_bundled_reference_spec_and_the_tests_r_are_proved_equivalent():
    """The tests' R counts ASCII vowels of s; the bundled task's reference spec
    counts those of ``s.lower()`` (as the reference does, which CrossHair showed
    differs on U+0130): on the bound's printable-ASCII strings z3 proves them
    equivalent, both ways."""
    refs = [json.loads(line) for line in (bundled_suite("nl2postcond") / "reference_postconditions.jsonl")
            .read_text().splitlines() if line.strip()]
    bundled = next(r for r in refs if r["task_id"] == "HumanEval-N/0")["postcondition"]
    searched = z3_tier.search(TASK, bundled, R, TierSettings(max_bound=3))
    assert searched.proved(AC) and searched.proved(RW)


def test_z3_proves_an_equivalent_rewording_and_finds_the_smallest_counterexample():
    reworded = "assert return_value == len([c for c in s.lower() if c in 'aeiou'])"
    searched = z3_tier.search(TASK, reworded, R, TierSettings(max_bound=3))
    assert searched.proved(AC) and searched.proved(RW) and searched.bound == 3
    lower_only = z3_tier.search(TASK, "assert return_value == sum(1 for c in s if c in 'aeiou')", R, TierSettings())
    (ac, *_), (rw, *_) = lower_only.candidates[AC], lower_only.candidates[RW]
    assert len(ac.inputs["s"]) == 1 and ac.inputs["s"] in "AEIOU"  # found at bound 1
    assert len(rw.inputs["s"]) == 1 and rw.inputs["s"] in "AEIOU" and rw.return_value == 0


# Each hostile spec: its text, and the relations that truly hold in Python (a proof of those
# is right; of any other it would be forged).  A naive translation would prove both for each
# (it reads the spec as R).
HOSTILE = {
    "floor division": (f"assert return_value == {VOWELS} + (-7 // 2) + 3", set()),  # -4, not -3
    "negative modulo": (f"assert return_value == {VOWELS} + (-7 % 3) + 1", set()),  # 2, not -1
    "bool is an int": (f"assert return_value == {VOWELS} + (True + 1) - 1", set()),
    "chained comparison": (f"assert return_value == {VOWELS} == True", {RW}),  # not (a == b) == True
    "shadowed builtin": ("len = lambda x: 0\nassert return_value == len([c for c in s if c in 'aeiouAEIOU'])",
                         set()),
    "NFKC identifier": ("\uff4c\uff45\uff4e = lambda x: 0\n"  # fullwidth 'len' is len to Python
                        "assert return_value == len([c for c in s if c in 'aeiouAEIOU'])", set()),
    "carriage return": (f"# a comment\rassert return_value == {VOWELS} + 1", set()),  # \r ends the comment
    "zero-width space": (f"assert return_value == {VOWELS}\u200b", set()),  # does not compile
    "raw string": ("assert return_value == sum(1 for c in s if c in r'aeiou\\x41EIOU')", set()),
    "escape": ("assert return_value == sum(1 for c in s if c in 'aeiou\\x41EIOU')", {AC, RW}),  # is 'A'
    "walrus": (f"assert (n := return_value) == {VOWELS}", {AC, RW}),
    "float rounding": (f"assert return_value == {VOWELS} + 0.1 + 0.2 - 0.3", set()),
    # kill=assertion: a ZeroDivisionError rejects nothing
    "statement that raises": (f"1 // 0\nassert return_value == {VOWELS}", set()),
    "one-shot generator": ("g = (1 for c in s if c in 'aeiouAEIOU')\nassert sum(g) >= 0 and return_value == sum(g)",
                           set()),
    # kill=assertion: on a wrong output the message raises ZeroDivisionError, not AssertionError
    "assert message": (f"assert return_value == {VOWELS}, 1 // 0", {AC}),
    "decorator": ("@(lambda f: lambda x: 0)\ndef n(x):\n    return sum(1 for c in x if c in 'aeiouAEIOU')\n"
                  "assert return_value == n(s)", set()),
    "annotation that raises": (f"def n(x: 1 // 0):\n    return {VOWELS}\nassert return_value == n(s)", set()),
    "raise after the asserts": (f"assert return_value == {VOWELS}\nx = 1 // 0", {RW}),
    "positional-only lambda": (f"f = lambda a, /: a\nassert return_value == f({VOWELS})", {AC, RW}),
    "recursion": ("f = lambda x: f(x)\nassert f(return_value)", set()),
    "isinstance object": (f"assert isinstance(return_value, object) and return_value == {VOWELS}", {AC, RW}),
    "long range": (f"assert return_value == {VOWELS} + len(range(100)) - 100", {AC, RW}),
    "string repetition": (f"assert return_value == {VOWELS} + len('ab' * 2) - 4", {AC, RW}),
}


def test_hostile_specs_are_never_proved_where_python_disagrees():
    """Each hostile spec, searched in this process: no relation that does not hold
    in Python is PROVED; where the translation is exact the solver finds the
    counterexample; a few where Python does agree are proved (not UNKNOWN by fiat)."""
    settings = TierSettings(max_bound=2)
    outcome = {}
    for name, (spec, holds) in HOSTILE.items():
        searched = z3_tier.search(TASK, spec, R, settings)
        outcome[name] = {r.value: "PROVED" if searched.proved(r) else "candidate" if r in searched.candidates
                         else "unknown" for r in (AC, RW)}
        for relation in (AC, RW):
            if relation not in holds:
                assert not searched.proved(relation), (name, relation, outcome[name])
    exact_and_wrong = ("floor division", "negative modulo", "bool is an int", "shadowed builtin", "NFKC identifier",
                       "carriage return", "raw string")
    assert all(outcome[n] == {"AC": "candidate", "RW": "candidate"} for n in exact_and_wrong), outcome
    assert outcome["escape"] == {"AC": "PROVED", "RW": "PROVED"}
    assert outcome["chained comparison"] == {"AC": "candidate", "RW": "PROVED"}
    assert outcome["raise after the asserts"] == {"AC": "candidate", "RW": "PROVED"}
    untranslatable = ("zero-width space", "walrus", "statement that raises", "one-shot generator", "assert message",
                      "decorator", "annotation that raises", "positional-only lambda", "recursion")
    assert all(outcome[n] == {"AC": "unknown", "RW": "unknown"} for n in untranslatable), outcome


def test_unhinted_parameters_and_return_take_the_observed_types():
    from pytest_specbench.pyspec.search import observed_type

    data = {**TASK_DATA, "prompt": TASK_DATA["prompt"].replace("(s: str) -> int", "(s)")}
    assert tier_checks.tier_task(data).observed_types == {"s": "str"}  # base_input's types; no outputs given
    typed = tier_checks.tier_task(data, [0, 2, 1])
    assert z3_tier.signature_shapes(typed) == z3_tier.signature_shapes(TASK)
    assert (observed_type([[1, 2], []]), observed_type([1, 2.5]), observed_type([True, 1])) == ("List[int]", "float", None)


def test_a_name_the_preamble_binds_is_not_the_builtin():
    task = replace(TASK, preamble="import re\ndef len(x):\n    return 0")
    searched = z3_tier.search(task, "assert return_value == len([c for c in s if c in 'aeiouAEIOU'])", R,
                              TierSettings(max_bound=1))
    assert not searched.candidates and "preamble" in searched.unknown[AC]


def test_a_translation_that_explodes_costs_its_child_not_the_harness(monkeypatch):
    """Four nested comprehensions over range(60): the search's forked child hits
    its CPU or memory limit; the verdict is UNKNOWN, and this process goes on.
    The child's margin beyond the solver's budget is 1 CPU s here, not the default 3
    (the explosion spent all of it: ~2.8 CPU s a run; #45, session 22)."""
    nested = "all(all(all(all(a + b + c + d == 1 for a in range(60)) for b in range(60)) for c in range(60)) " \
             "for d in range(60))"
    monkeypatch.setattr(z3_tier, "CPU_MARGIN_SECONDS", 1)
    searched = z3_tier.search_confined(TASK, f"{R} or {nested}", R, TierSettings(seconds=0.5))
    assert not searched.candidates and "exceeded its limits (1 CPU s" in searched.unknown[AC]
    monkeypatch.undo()
    assert z3_tier.search_confined(TASK, R, R, TierSettings(max_bound=1)).proved(AC)


@pytest.fixture(scope="module")
def services(python_executor):
    ex = CommandExecutor()
    yield TierServices(ex, tier_checks.reference_runner(TASK_DATA, python_executor, 2.0))
    ex.close()


@needs_seccomp
def test_z3_refutes_only_what_replays_in_the_sandbox(services):
    """A model of an exact translation replays (REFUTED with the reference's
    output); a model of a loose one does not (UNKNOWN); R itself is PROVED."""
    settings = TierSettings(max_bound=2)
    wrong = z3_tier.check(services, TASK, HOSTILE["floor division"][0], R, settings)
    assert [v.status for v in wrong] == [Status.REFUTED, Status.REFUTED]
    ac, rw = wrong[0].counterexample, wrong[1].counterexample
    count = sum(1 for c in ac["inputs"]["s"] if c in "aeiouAEIOU")
    assert ac["return_value"] == count and ac["why"] == "the reference's output; the spec violated"
    assert rw["return_value"] == sum(1 for c in rw["inputs"]["s"] if c in "aeiouAEIOU") - 1  # Python's -7 // 2
    assert "that the spec accepts" in wrong[1].line()
    loose = z3_tier.check(services, TASK, HOSTILE["string repetition"][0], R, settings)
    assert [v.status for v in loose] == [Status.UNKNOWN, Status.UNKNOWN]
    assert "did not replay" in loose[0].reason
    same = z3_tier.check(services, TASK, R, R, settings)
    assert [(v.status, v.bound) for v in same] == [(Status.PROVED, 2), (Status.PROVED, 2)]


class ForgedCrossHair:
    """The command executor, except that a CrossHair job 'finds' what we say."""

    def __init__(self, real, stdout):
        self.real, self.stdout = real, stdout

    def run(self, env, job):
        if crosshair_tier.TARGET in job.files:
            return CommandResult(exit_code=1, stdout=self.stdout)
        return self.real.run(env, job)


@needs_seccomp
def test_what_crosshair_prints_is_a_candidate_only(services):
    """A correct spec with forged CrossHair output: the 'counterexamples' do not
    replay (the proposed wrong output is the reference's own; the spec holds on
    the reference's output) and a line that is not a literal call is ignored."""
    forged = ("t.py:3: error: AssertionError: when calling _specbench_reference_vs_spec('aE')\n"
              "t.py:9: error: AssertionError: when calling _specbench_q_implies_r('aE', 2)\n"
              "t.py:9: error: AssertionError: when calling _specbench_q_implies_r(__import__('os').getcwd(), 1)\n")
    shown = TierServices(ForgedCrossHair(services.spec_executor, forged), services.run_reference)
    got = crosshair_tier.check(shown, TASK, R, R, TierSettings(seconds=2))
    assert [v.status for v in got] == [Status.UNKNOWN, Status.UNKNOWN]
    assert "holds on the reference's output" in got[0].reason and "is the reference's" in got[1].reason


@needs_seccomp
@pytest.mark.skipif(crosshair_tier.available() is not None, reason=str(crosshair_tier.available()))
def test_crosshair_finds_a_wrong_output_the_spec_accepts(services):
    """One real CrossHair job (a few CPU seconds): ``return_value >= 0`` lets
    wrong counts through; the candidate replays; AC stays UNKNOWN, never PASSED."""
    got = crosshair_tier.check(services, TASK, "assert return_value >= 0", R, TierSettings(seconds=3))
    assert got[0].status is Status.UNKNOWN
    assert got[1].status is Status.REFUTED, got[1].line()
    ce = got[1].counterexample
    assert ce["return_value"] != sum(1 for c in ce["inputs"]["s"] if c in "aeiouAEIOU") and ce["return_value"] >= 0


def test_crosshair_lines_are_parsed_never_evaluated():
    out = ('t.py:9: error: AssertionError:  when calling _specbench_q_implies_r("a", float("inf"))\n'
           "t.py:9: error: when calling _specbench_q_implies_r(__import__('os').getcwd(), 1)\n"
           "t.py:9: error: when calling _specbench_q_implies_r('a')\n"  # a missing argument
           "t.py:3: error: IndexError: when calling _specbench_reference_vs_spec(s='b')\n"
           "t.py:3: info: when calling _specbench_reference_vs_spec('c')\n")  # not an error line
    got = [(c.relation, c.inputs, c.return_value) for c in crosshair_tier.candidates_from(out, TASK)]
    assert got == [(RW, {"s": "a"}, float("inf")), (AC, {"s": "b"}, None)]


def test_the_crosshair_target_keeps_the_spec_out_of_the_harness():
    """The module is built from parsed ASTs; a spec that is not a module's
    statements (a top-level return would mean something else in a function) is
    refused before any job."""
    module = crosshair_tier.target_module(TASK, "assert return_value >= 0", R, "assertion")
    assert "def _specbench_q_implies_r(s: str, return_value: int):" in module
    with pytest.raises(crosshair_tier.NotBuilt, match="Return"):
        crosshair_tier.target_module(TASK, "return\nassert False", R, "assertion")


class Ctx:
    """What tier_checks.run_tier reads of a CheckContext."""

    def __init__(self, services, python, folder):
        self._services, self._python, self._folder = services, python, folder
        self.settings = type("S", (), {"limits": LIMITS})()

    def executor(self, kind):
        return self._services.spec_executor

    def python_executor(self):
        return self._python

    def cache_dir(self, *parts):
        path = self._folder.joinpath(*parts)
        path.mkdir(parents=True, exist_ok=True)
        return path

    def option(self, name):
        return "assertion" if name == "nl2postcond_kill" else None


@needs_seccomp
def test_the_nl2postcond_z3_check_proves_the_bundled_reference_and_refutes_in_one_line(services, python_executor,
                                                                                      tmp_path):
    """The bundled task with its own reference postcondition: z3 proves AC and RW at
    the default bound (the reference's answer); a weaker answer is F, one line."""
    from pytest_specbench.benchmarks.nl2postcond.tasks import load_tasks

    task = next(t for t in load_tasks(None, None).tasks if t.task_id == "HumanEval-N/0")
    ctx = Ctx(services, python_executor, tmp_path)
    bundled_r = tier_checks.reference_spec(task)
    ok = tier_checks.run_tier("z3", task, bundled_r, ctx)
    assert ok.passed and ok.details["AC"] == ok.details["RW"] == "PROVED"
    assert {v["bound"] for v in ok.details["tiers"]} == {3}
    bad = tier_checks.run_tier("z3", task, "assert return_value >= 0", ctx)
    assert not bad.passed and bad.details == {**bad.details, "AC": "PROVED", "RW": "REFUTED"}
    assert "\n" not in bad.message and "RW REFUTED" in bad.message and "z3" in bad.message
    (refuted,) = [v for v in bad.details["tiers"] if v["status"] == "REFUTED"]
    assert refuted["counterexample"]["inputs"] == {"s": ""} and refuted["counterexample"]["return_value"] == 1


@pytest.mark.realdata
@pytest.mark.skipif(not (SHARED_DATA / "nl2postcond" / tier_checks.SHEET).is_file(),
                    reason="nl2postcond data not found beside the checkout (../shared/datasets/nl2postcond)")
def test_upstream_reference_spec_is_a_row_the_sheet_shows_correct_and_complete():
    refs = tier_checks._upstream_references(str(SHARED_DATA / "nl2postcond" / tier_checks.SHEET))
    rows = [json.loads(line) for line in (SHARED_DATA / "nl2postcond" / tier_checks.SHEET).read_text().splitlines()]
    assert len(refs) == 31
    for task_id, text in refs.items():
        row = min((r for r in rows if r["task_id"] == task_id and r["postcondition"] == text), key=lambda r: r["r_num"])
        assert row["test_set_correct"] is True and row["num_bopi_killed"] == row["num_bopi_run"] > 0
