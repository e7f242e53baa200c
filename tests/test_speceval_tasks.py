"""SpecEval: spec extraction, task construction, perturbations, parsing and metrics (unit level)."""
from __future__ import annotations

import shutil
from types import SimpleNamespace

import pytest

from pytest_specbench.benchmarks.speceval import metrics as M
from pytest_specbench.benchmarks.speceval import prompts
from pytest_specbench.benchmarks.speceval.adapter import ADAPTER, parse_perturbations, parse_tasks
from pytest_specbench.benchmarks.speceval.jmlspec import normalize, spec_blocks, strip_jml
from pytest_specbench.benchmarks.speceval.perturb import PERTURBATIONS, perturb, structure
from pytest_specbench.benchmarks.speceval.tasks import TASKS, build, components, instantiate, mutate
from pytest_specbench.models.base import Completion
from shared_runs import session_jvm  # noqa: F401  (a fixture: the process's jvm executor)

PROGRAM = """public class Demo {
    //@ requires n >= 0;
    //@ ensures \\result >= 0 && \\result <= n;
    public static int clamp(int n, int lo) {
        int r = n;
        int s = lo;
        if (r > 100) {
            r = 100;
        } else {
            r = r + 0;
        }
        //@ maintaining 0 <= i && i <= n;
        //@ maintaining (\\forall int k; 0 <= k && k < i; k < n);
        //@ decreases n - i;
        for (int i = 0; i < n; i++) {
            s = s + 1;
        }
        return r;
    }
}
"""


def test_blocks_and_clauses_are_found_with_their_places():
    blocks = [b for b in spec_blocks(PROGRAM) if b.clauses]
    kinds = [(b.target, c.keyword) for b in blocks for c in b.clauses]
    assert kinds == [("method", "requires"), ("method", "ensures"), ("loop", "maintaining"),
                     ("loop", "maintaining"), ("loop", "decreases")]
    assert blocks[0].location == ("clamp", 0, "method", 0)
    assert blocks[2].location == ("clamp", 0, "loop", 0)
    assert "i" in blocks[2].variables and blocks[2].types["n"] == "int"
    src = PROGRAM.encode()
    c = blocks[1].clauses[0]
    assert src[c.start:c.end].decode() == c.expr == "\\result >= 0 && \\result <= n"


def test_unparenthesised_quantifier_owns_its_semicolons():
    src = "class Q {\n  //@ requires \\forall int j; 0 <= j && j < a.length; a[j] > 0;\n  void f(int[] a) {}\n}\n"
    (clause,) = [c for b in spec_blocks(src) for c in b.clauses]
    assert clause.expr == "\\forall int j; 0 <= j && j < a.length; a[j] > 0"


def test_strip_jml_removes_every_spec_comment():
    plain = strip_jml(PROGRAM)
    assert "//@" not in plain and "int r = n;" in plain


def test_mutation_changes_at_least_one_component_and_keeps_types():
    import random

    types = {"n": "int", "lo": "int", "a": "int[]"}
    for seed in range(30):
        out = mutate("0 <= n && n < a.length", ("n", "lo", "a"), random.Random(seed), types)
        assert out is not None and normalize(out) != normalize("0 <= n && n < a.length")
        assert "a.length" in out or "lo" not in out.split("&&")[1]  # 'a' is never swapped for an int
    comps = components("\\forall int k; 0 <= k; k < n", ("n", "lo"), {"n": "int", "lo": "int"})
    assert {k for _, _, k in comps} == {"variable", "operator", "quantifier"}


def test_tasks_are_deterministic_from_the_seed():
    for task in TASKS:
        assert build("Demo", PROGRAM, task, 7) == build("Demo", PROGRAM, task, 7)
    plans = {str(build("Demo", PROGRAM, "selection", s)) for s in range(10)}
    assert len(plans) > 1  # the seed matters


def test_selection_has_four_distinct_candidates_one_of_them_the_ground_truth():
    for seed in range(20):
        plan = build("Demo", PROGRAM, "selection", seed)
        cands = plan["candidates"]
        assert len({normalize(c) for c in cands}) == 4
        truth = [c for b in spec_blocks(PROGRAM) for c in b.clauses]
        assert cands[plan["answer"]] in [c.expr for c in truth]


@pytest.mark.parametrize("kind", PERTURBATIONS)
def test_each_perturbation_changes_the_demo_keeps_structure_and_is_deterministic(kind):
    out = perturb(PROGRAM, kind, 3)
    assert out.applied and out.source != PROGRAM
    assert structure(out.source) == structure(PROGRAM)
    assert perturb(PROGRAM, kind, 3).source == out.source
    # specs travel with the program: the same number of clauses, still in JML comments
    assert sum(len(b.clauses) for b in spec_blocks(out.source)) == 5


def test_name_perturbations_rename_specs_with_the_code():
    out = perturb(PROGRAM, "name-random", 0).source
    assert "int r = n" not in out and "\\result <= n;" not in out
    m = [c for b in spec_blocks(out) for c in b.clauses][1]
    param = out.split("clamp(int ")[1].split(",")[0]
    assert m.expr == f"\\result >= 0 && \\result <= {param}"


@pytest.mark.skipif(shutil.which("javac") is None, reason="javac not found: apt-get install openjdk-17-jdk-headless")
def test_perturbed_demo_compiles(session_jvm):
    # harness-generated, trusted code: compiled at once by the process's warm javac (a javac of
    # its own, a JVM start, was ~1.3 CPU s): each perturbation's Demo in a package of its own,
    # so that the names do not clash
    sources = {}
    for kind in PERTURBATIONS:
        package = "perturbed_" + kind.replace("-", "_")
        sources[f"{package}/Demo.java"] = f"package {package};\n" + perturb(PROGRAM, kind, 1).source
    res = session_jvm.compile(sources)
    assert res.ok, res.diagnostics
    assert len(list(res.classes.glob("perturbed_*/Demo.class"))) == len(PERTURBATIONS)


@pytest.mark.parametrize("kind", ("original",) + PERTURBATIONS)
def test_instances_carry_the_task_through_the_perturbation(kind):
    for task in TASKS:
        plan = build("Demo", PROGRAM, task, 5)
        inst = instantiate(PROGRAM, plan, kind, 5)
        if task == "infilling":
            assert "<FILL>" in inst.program and inst.data["masked"].count("<FILL>") == 1
            filled = inst.data["masked"].replace("<FILL>", inst.data["answer"])
            assert normalize(filled) == normalize(inst.data["ground_truth"])
        if task == "generation":
            assert "//@" not in inst.program
        if task == "selection":
            assert "<CANDIDATE>" in inst.program and len(inst.data["candidates"]) == 4


def test_answer_parsing_is_tolerant():
    assert prompts.parse_judgement("Let me think... The spec is **incorrect** because x.") is False
    assert prompts.parse_judgement("Answer: correct") is True
    assert prompts.parse_judgement("I cannot tell") is None
    assert prompts.parse_selection("The strongest is (C).", ["a", "b", "c", "d"]) == 2
    assert prompts.parse_selection("Answer: b", ["a", "b", "c", "d"]) == 1
    masked = "ensures a[<FILL>] == x;"
    assert prompts.parse_infilling("```jml\nensures a[i + 1] == x;\n```", masked) == "i+1"
    assert prompts.parse_infilling("Answer: `k`", masked) == "k"
    assert prompts.parse_generation("Here:\n```java\nclass A {}\n```\nDone") == "class A {}"


def test_pcs_scores_the_longest_run():
    assert M.pcs([True] * 4) == 1.0
    assert M.pcs([False, True, True, True]) == 0.5
    assert M.pcs([True, True, False, False]) == 0.25
    assert M.pcs([True, False, True, True]) == 0.25
    assert M.pcs([True, False, False, True]) == 0.0


def test_jaccard_and_average_variance():
    assert M.jaccard_distance({"a", "b"}, {"b", "c"}) == pytest.approx(2 / 3)
    assert M.jaccard_distance(set(), set()) is None
    assert M.average_variance([(0.5, 1.0), (0.0, 0.0), (1.0, 0.0)]) == pytest.approx(0.75)


def test_mean_is_statistics_mean_in_value_and_type():
    """metrics/exact_mean.py's mean (SpecEval's and CIFE's metrics) skips statistics.mean's
    fractions where a float sum is exact: the same value, sign and type on what the metrics
    average (shares, PCS steps, differences of shares, counts, CIFE's bools beside floats)
    and on what falls back (bools alone, bools and ints, ints beyond 2**53 beside floats,
    sums fsum rounds or overflows, inf and nan)."""
    import random
    import statistics

    from pytest_specbench.metrics.exact_mean import mean

    assert M.mean is mean
    rng = random.Random(21)
    cases = [[0.1] * 10, [1e308, 1e308], [-0.0], [0.0, -0.0], [float("inf"), 1.0], [float("inf"), float("-inf")],
             [True, False], [True, True], [1, True], [1, 0.5, True], [3, 4], [2, 2], [2 ** 60 + 100, -2.0 ** 60],
             [1e16, 1.0, -1e16], [1 / 3, 2 / 3, 1 / 7]]
    for _ in range(300):
        n = rng.randint(1, 12)
        cases.append([rng.randint(0, 5) / rng.randint(1, 7) for _ in range(n)])
        cases.append([abs(rng.randint(0, 5) / rng.randint(1, 7) - rng.randint(0, 5) / rng.randint(1, 7))
                      for _ in range(n)])
        cases.append([rng.choice([0.0, 0.25, 0.5, 1.0, True, False, 1, 0]) for _ in range(n)])
        cases.append([rng.choice([True, False, rng.randint(0, 5) / rng.randint(1, 7)]) for _ in range(n)])
        cases.append([rng.random() * 10.0 ** rng.randint(-300, 300) for _ in range(n)])
    for xs in cases:
        got, want = mean(xs), statistics.mean(xs)
        assert type(got) is type(want) and repr(got) == repr(want), (xs, got, want)


def test_judgement_accuracy_with_and_without_dropped_mutants():
    """§3.2.1 averages over every candidate: a dropped (unrefuted) mutant counts in
    judgement_acc_all, scored against its label as built; judgement_acc leaves it out."""
    def judged(program, label, answer, dropped=False):
        d = {"index": 0, "label": label, "answer": answer}
        d.update({"dropped": True, "passed": None} if dropped else {"passed": answer == label})
        return (program, "judgement", "original"), [d]

    entries = dict([judged("A", True, True), judged("B", False, True), judged("C", False, False),
                    judged("D", False, True, dropped=True),    # "correct" for a mutant: wrong
                    judged("E", False, False, dropped=True),   # "incorrect" for a mutant: right
                    judged("F", False, None, dropped=True)])   # no verdict: wrong
    m = M.compute(entries, ["original"], ["judgement"])
    assert m["judgement_acc/original"] == pytest.approx(2 / 3)       # A, C of A, B, C
    assert m["judgement_acc_all/original"] == pytest.approx(3 / 6)   # A, C, E of all six
    assert m["judgement_dropped/original"] == 3


def test_options_parse_and_reject_bad_values():
    assert parse_tasks("all") == TASKS
    assert parse_perturbations("name-random")[0] == "original"
    with pytest.raises(ValueError, match="unknown value 'nope'"):
        parse_perturbations("nope")


class _Settings:
    def __init__(self, **kw):
        self.kw = kw

    def option(self, name):
        return self.kw.get(name)


def _run(settings, answer_for):
    ctx = SimpleNamespace(settings=settings)
    ts = ADAPTER.load(None, settings)
    results = {}
    for t in ts.tasks:
        (check,) = ADAPTER.checks_for(t)
        ADAPTER.prompt(t, settings)
        r = ADAPTER.run_check(check, t, Completion(answer_for(t, check)), ctx)
        results[t.task_id] = [{"index": 0, "checks": {check: r.details}}]
    return ts, ADAPTER.aggregate(results, {t.task_id: t for t in ts.tasks}, settings)


def test_reference_scores_100_percent_on_the_bundled_suite_syntactically():
    settings = _Settings(speceval_perturbation="all", speceval_validation="syntactic")
    ts, m = _run(settings, ADAPTER.reference)
    assert len(ts.tasks) == 4 * 4 * 6
    for cat in ("original",) + PERTURBATIONS:
        for name in ("judgement_acc", "selection_acc", "infilling_acc", "generation_avg_precision",
                     "generation_avg_recall", "pcs"):
            assert m[f"{name}/{cat}"] == 1.0, (name, cat)
    assert m["jaccard_judgement/name-random"] == 0.0


def test_always_correct_judge_scores_the_label_balance():
    settings = _Settings(speceval_task="judgement", speceval_perturbation="none", speceval_validation="syntactic")
    _, m = _run(settings, lambda t, c: "Answer: correct")
    assert m["judgement_acc/original"] == m["judgement_label_correct/original"]
