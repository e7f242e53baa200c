"""SpecEval end to end: the plugin on the bundled suite, dynamic validation through
the JML checker, and the real SpecGenBench data (``realdata``).

The plugin runs are made in this process (``runpytest_inprocess``): their checks run in
the sandbox and in the plugin's own executors either way."""
from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path

import pytest

from pytest_specbench.benchmarks.speceval.adapter import ADAPTER
from pytest_specbench.benchmarks.speceval.perturb import ALL_CATEGORIES, PERTURBATIONS, perturb, structure
from pytest_specbench.benchmarks.speceval.tasks import TASKS, build, instantiate, load_programs
from pytest_specbench.models.base import Completion
from shared_data import FULL, SHARED_DATA
from fakes import FakeSettings, fake_context
from shared_runs import session_jvm  # noqa: F401  (a fixture: the process's jvm executor)

HERE = Path(__file__).resolve()
SPECGEN = SHARED_DATA / "specgenbench" if (SHARED_DATA / "specgenbench" / "oracle").is_dir() else None
JAVA = shutil.which("javac") is not None and shutil.which("java") is not None


def test_plugin_runs_the_bundled_suite_with_the_reference(pytester):
    result = pytester.runpytest_inprocess("--specbench=speceval", "--model=reference", "-p", "no:cacheprovider",
                                          "--speceval-validation=syntactic", "--specbench-report=r.json")
    result.stdout.fnmatch_lines(["*specbench speceval (bundled sample suite; 16 tasks*",
                                 "*judgement_acc/original*100.00%*", "*pcs/original*100.00%*"])
    assert result.ret == 0
    report = json.loads((pytester.path / "r.json").read_text())
    metrics = report["benchmarks"]["speceval"]["metrics"]
    assert metrics["generation_avg_recall/original"] == 1.0


def test_items_are_readable_with_k(pytester):
    result = pytester.runpytest_inprocess("--specbench=speceval", "--model=reference", "-p", "no:cacheprovider",
                                          "--speceval-validation=syntactic", "--collect-only", "-q",
                                          "-k", "MaxOfTwo and infilling")
    result.stdout.fnmatch_lines(["*speceval::MaxOfTwo/infilling/original::0::infilling*"])


def _Settings(state, **options):
    return FakeSettings(state, options=options)


def _Ctx(settings, cache=None, jvm=None):
    """A check context whose jvm executor is made on first use (or ``jvm``, shared)."""
    from pytest_specbench.execution import make_executor

    return fake_context(settings, cache=cache or settings.state_dir,
                        executors={"jvm": jvm or (lambda: make_executor("jvm", settings, []))})


@pytest.fixture(scope="module")
def jvm(session_jvm):
    """The jvm executor of the module's in-process dynamic checks: the process's one
    (tests/shared_runs.py), whose warm javac the JML checker's tests and the hostile ones
    share, so that it starts once (~1.2 CPU s), not once per module.  Each test keeps state
    and cache folders of its own (the ground-truth verdicts are not shared); the trusted
    classes (JML runtime, the javac server's) come from the suite's store."""
    return session_jvm


@pytest.mark.skipif(not JAVA, reason="javac/java not found: apt-get install openjdk-17-jdk-headless")
@pytest.mark.slow
def test_dynamic_validation_on_the_bundled_suite(tmp_path, jvm):
    """Reference 100% with the JML checker deciding; ground truth holds under a perturbation
    (every one: SPECBENCH_TESTS_FULL=1, and the real-data run below); a wrong generation and a
    wrong infill are refuted on the tests."""
    settings = _Settings(tmp_path, speceval_perturbation="all", speceval_task="infilling,generation")
    ctx = _Ctx(settings, jvm=jvm)
    ts = ADAPTER.load(None, settings)
    # Every program's original, and the perturbations of PERTURBED (SPECBENCH_TESTS_FULL=1: all
    # five on all four): MaxOfTwo's if/else flipped; and IsSorted's if-else-flip, a perturbation
    # that leaves its program unchanged (the memo below: checked as the original, no JVM of its
    # own).  Each generation item is a javac and a JVM; MaxOfTwo's four other perturbations
    # (session 19: 8 items, ~2 CPU s), CountAbove's and FindIndex's (8 more) and IsSorted's four
    # others (in and around a loop with its invariants) showed the same: the real-data run below
    # takes every perturbation with the checker deciding on BinarySearch (a loop with
    # invariants; each of the five changes it) and GCD, and
    # test_real_perturbed_programs_compile_and_keep_methods_and_loops compiles every one.
    tasks = [t for t in ts.tasks if FULL or t.data["category"] == "original"
             or (t.data["program"], t.data["category"]) in (PERTURBED, UNCHANGED)]
    results = {}
    from pytest_specbench.benchmarks.speceval import validation

    checker = validation._checker(ctx)
    checked = []
    checker.check = lambda source, *a, real=checker.check, **k: checked.append(source) or real(source, *a, **k)
    for t in tasks:
        (check,) = ADAPTER.checks_for(t)
        assert ADAPTER.skip_reason(check, t, ctx) is None
        r = ADAPTER.run_check(check, t, Completion(ADAPTER.reference(t, check)), ctx)
        assert r.passed, (t.task_id, r.message)
        if check == "generation":
            # the perturbation check: every ground-truth clause holds on the tests
            assert r.details["validation"] == "dynamic" and r.details["precision"] == 1.0, (t.task_id, r.details)
            assert r.details["tests"] > 0
            # beyond the paper: the branch coverage of the calls it was checked on, and the program's
            assert 0 < r.details["branch_coverage"] <= 1 and r.details["program_tests"]["branch_coverage"] > 0
        results[t.task_id] = [{"index": 0, "checks": {check: r.details}}]
    del checker.check
    # a perturbation that leaves its program unchanged (nothing to swap or flip) checks the
    # original's content again: no content is checked twice (validation._VERDICT_MEMO)
    assert any(not ADAPTER.instance(t).data["applied"] for t in tasks if t.data["category"] != "original")
    assert len(checked) == len(set(checked)) and len(results) == len(tasks) == (48 if FULL else 12), len(checked)
    m = ADAPTER.aggregate(results, {t.task_id: t for t in tasks}, settings)
    assert set(m["test_branch_coverage_by_program"]) == {"CountAbove", "FindIndex", "IsSorted", "MaxOfTwo"}
    assert m["test_branch_coverage_mean"] == pytest.approx(
        sum(m["test_branch_coverage_by_program"].values()) / 4)
    gen = next(t for t in ts.tasks if t.task_id == "MaxOfTwo/generation/original")
    wrong = ADAPTER.reference(gen, "generation").replace("\\result >= x && \\result >= y", "\\result > x")
    r = ADAPTER.run_check("generation", gen, Completion(wrong), ctx)
    assert r.details["holding"] == r.details["generated_clauses"] - 1 and not r.details["all_hold"]
    inf = next(t for t in ts.tasks if t.task_id.endswith("/infilling/original"))
    r = ADAPTER.run_check("infilling", inf, Completion("Answer: `zzz_not_a_name`"), ctx)
    assert not r.passed


PERTURBED = ("MaxOfTwo", "if-else-flip")  # the perturbation the dynamic test applies by default (it changes MaxOfTwo)
UNCHANGED = ("IsSorted", "if-else-flip")  # a perturbation that leaves its program as it was


def _suite_with_a_wrong_oracle(root: Path) -> Path:
    """The bundled suite, with MaxOfTwo's ground truth made wrong (``>`` where
    ``>=`` holds): its own test max(-5, -5) refutes it."""
    shutil.copytree(ADAPTER_BUNDLED(), root / "specgenbench")
    oracle = root / "specgenbench" / "oracle" / "MaxOfTwo" / "MaxOfTwo.java"
    text = oracle.read_text()
    assert "\\result >= x && \\result >= y" in text
    oracle.write_text(text.replace("\\result >= x && \\result >= y", "\\result > x || \\result > y"))
    return root


def ADAPTER_BUNDLED() -> Path:
    from pytest_specbench.benchmarks.speceval.adapter import bundled_root

    return bundled_root()


@pytest.mark.skipif(not JAVA, reason="javac/java not found: apt-get install openjdk-17-jdk-headless")
def test_a_program_whose_ground_truth_fails_its_tests_is_skipped_with_its_clause(tmp_path, jvm):
    from pytest_specbench.benchmarks.speceval import validation

    data = _suite_with_a_wrong_oracle(tmp_path / "data")
    settings = _Settings(tmp_path / "state", speceval_perturbation="if-else-flip", speceval_validation="dynamic")
    ctx = _Ctx(settings, jvm=jvm)
    ts = ADAPTER.load(data, settings)
    # one check per program: the other tasks read the cache, and so does a fresh process (disk)
    checks = []
    real = validation._checker(ctx).check
    validation._checker(ctx).check = lambda *a, **k: checks.append(a) or real(*a, **k)
    try:
        validation._GROUND_TRUTH.clear()  # (another test's verdicts on the same programs are this process's)
        reasons = {t.task_id: ADAPTER.skip_reason(ADAPTER.checks_for(t)[0], t, ctx) for t in ts.tasks}
        assert len(checks) == 4  # one per program, none per item
        validation._GROUND_TRUTH.clear()
        again = {t.task_id: ADAPTER.skip_reason(ADAPTER.checks_for(t)[0], t, _Ctx(settings, jvm=ctx.executor("jvm")))
                 for t in ts.tasks}
        assert len(checks) == 4 and again == reasons
    finally:
        validation._checker(ctx).check = real
    skipped = {k for k, v in reasons.items() if v}
    # every task of that program (all four kinds, both categories), and no other
    assert skipped == {f"MaxOfTwo/{k}/{c}" for k in TASKS for c in ("original", "if-else-flip")}
    reason = reasons["MaxOfTwo/judgement/original"]
    assert reason.startswith("MaxOfTwo: the ground truth fails its own tests: ensures (line 2)"), reason
    assert "\\result > x || \\result > y" in reason and "\n" not in reason
    keep = _Settings(tmp_path / "state", speceval_perturbation="none", speceval_validation="dynamic",
                     speceval_oracle_refuted="keep")
    gen = next(t for t in ADAPTER.load(data, keep).tasks if t.task_id == "MaxOfTwo/generation/original")
    assert ADAPTER.skip_reason("generation", gen, _Ctx(keep, jvm=jvm)) is None
    r = ADAPTER.run_check("generation", gen, Completion(ADAPTER.reference(gen, "generation")), _Ctx(keep, jvm=jvm))
    assert r.details["precision"] < 1.0  # kept: the reference is scored, and loses


def test_a_ground_truth_refuted_by_a_timeout_is_named_with_its_call(tmp_path):
    """A ground truth whose test call times out (LCM's on the real data, found by a 2 s call
    limit in a fresh JVM per timeout) excludes its program like a violated clause, the
    reason naming the call; the checker's report is given here, so no JVM waits for it."""
    from pytest_specbench.benchmarks.speceval import validation
    from pytest_specbench.jml.checker import CallVerdict, SpecReport

    class Jvm:
        def available(self):
            return None

    class TimingOutChecker:
        call_seconds = 0.125  # a key of its own: no other test's ground truth verdict is met or left
        calls = []

        def check(self, source, driver):
            self.calls.append(source)
            return SpecReport("checked", calls=[CallVerdict(0, "new MaxOfTwo().max(1, 2)", "holds"),
                                                CallVerdict(1, "new MaxOfTwo().max(114, 514)", "timeout",
                                                            message="call time limit")])

    jvm, checker = Jvm(), TimingOutChecker()
    validation._CHECKERS[jvm] = checker
    settings = _Settings(tmp_path, speceval_validation="dynamic", speceval_task="judgement,generation")
    ctx = _Ctx(settings, jvm=jvm)
    tasks = ADAPTER.load(None, settings).tasks
    reasons = {t.task_id: ADAPTER.skip_reason(ADAPTER.checks_for(t)[0], t, ctx) for t in tasks}
    assert {k for k, v in reasons.items() if v} == {t.task_id for t in tasks}  # the fake times every program out
    reason = reasons["MaxOfTwo/generation/original"]
    assert reason.startswith("MaxOfTwo: the ground truth fails its own tests: timeout on call 1 "
                             "new MaxOfTwo().max(114, 514)"), reason
    assert "\n" not in reason and "--speceval-oracle-refuted=keep" in reason
    assert len(checker.calls) == 4  # once per program


def test_a_program_a_perturbation_left_unchanged_is_checked_once(tmp_path):
    """The generation and judgement checks of a category whose perturbation did not apply
    (CountAbove has nothing ``independent-swap`` swaps) check the original's program again:
    the checker runs once per content (validation._VERDICT_MEMO), and each item still gets
    its verdict; a changed program, or the same program with other tests, is checked anew."""
    from pytest_specbench.benchmarks.speceval import validation
    from pytest_specbench.jml.checker import CallVerdict, SpecReport

    class Jvm:
        def available(self):
            return None

    class HoldingChecker:
        call_seconds = 0.25  # a key of its own (the ground truth's cache key holds it too)

        def __init__(self):
            self.sources = []

        def check(self, source, driver):
            self.sources.append(source)
            return SpecReport("checked", calls=[CallVerdict(0, "call()", "holds")])

    jvm, checker = Jvm(), HoldingChecker()
    validation._CHECKERS[jvm] = checker
    settings = _Settings(tmp_path, speceval_validation="dynamic", speceval_perturbation="all",
                         speceval_task="generation")
    ctx = _Ctx(settings, jvm=jvm)
    tasks = {t.task_id: t for t in ADAPTER.load(None, settings).tasks}
    same = ["CountAbove/generation/original", "CountAbove/generation/independent-swap"]
    assert not ADAPTER.instance(tasks[same[1]]).data["applied"]
    for tid in same + ["CountAbove/generation/if-else-flip"]:
        r = ADAPTER.run_check("generation", tasks[tid], Completion(ADAPTER.reference(tasks[tid], "generation")), ctx)
        assert r.passed and r.details["validation"] == "dynamic" and r.details["precision"] == 1.0, (tid, r.details)
    assert len(checker.sources) == 1 + 2  # the ground truth; original and its unchanged copy once; if-else-flip
    assert len(set(checker.sources)) == len(checker.sources)
    program = checker.sources[1]
    validation.clause_verdicts(program, "class Other {}", ctx)  # other tests: checked
    validation.spec_holds(program, None, ctx)  # a whole-spec check of it: checked
    validation.spec_holds(program, None, ctx)
    assert len(checker.sources) == 5


@pytest.mark.realdata
@pytest.mark.skipif(SPECGEN is None, reason="SpecGenBench not found at ../shared/datasets/specgenbench")
def test_real_data_builds_every_task_under_every_perturbation_deterministically():
    programs = load_programs(SPECGEN)
    assert len(programs) == 120
    built = {t: 0 for t in TASKS}
    labels = []
    for p in programs:
        for task in TASKS:
            plan = build(p.name, p.source, task, 0)
            if plan is None:
                continue
            assert plan == build(p.name, p.source, task, 0)
            built[task] += 1
            if task == "judgement":
                labels.append(plan["label"])
    # 4 programs have no JML at all (Inverse, MatrixAdd, MatrixMul, SolveQuadraticEquation)
    assert built == {t: 116 for t in TASKS}
    assert 0.35 < sum(labels) / len(labels) < 0.65


@pytest.mark.realdata
@pytest.mark.skipif(SPECGEN is None or not JAVA, reason="needs SpecGenBench and javac")
def test_real_perturbed_programs_compile_and_keep_methods_and_loops(jvm):
    # harness-generated, trusted code (perturbations of the oracle); the programs the syntactic
    # test checks (SPECBENCH_TESTS_FULL=1: all 120)
    programs = load_programs(SPECGEN)
    checked = checked_programs(p.name for p in programs)
    programs = [p for p in programs if p.name in checked]
    assert len(programs) == len(checked) >= (120 if FULL else 15)
    sources = {}
    for kind in PERTURBATIONS:
        for p in programs:
            src = p.source
            out = perturb(src, kind, 0).source
            assert structure(out) == structure(src), (kind, p.name)
            sources.update([_in_package(kind, p.name, out)])
    # one compile for every perturbation, by the process's warm javac (a javac of its own,
    # a JVM start and its warm-up, was ~1.5 CPU s more): each perturbation's programs in a
    # package of their own, so that the same class names do not clash
    res = jvm.compile(sources)
    assert res.ok, res.diagnostics[-2000:]
    assert len(list(res.classes.glob("perturbed_*/*.class"))) >= len(sources)


def _in_package(kind: str, name: str, source: str) -> tuple[str, str]:
    """``source`` (no package of its own) as ``NAME.java`` of a package named after ``kind``:
    (its path, its text)."""
    package = "perturbed_" + kind.replace("-", "_")
    assert "\npackage " not in "\n" + source, name
    return f"{package}/{name}/{name}.java", f"package {package};\n" + source


@pytest.mark.realdata
@pytest.mark.skipif(SPECGEN is None, reason="SpecGenBench not found")
def test_real_reference_scores_100_percent_syntactically():
    settings = _Settings(Path(tempfile.gettempdir()), speceval_perturbation="all", speceval_validation="syntactic")
    ctx = fake_context(settings)
    ts = ADAPTER.load(SPECGEN, settings)
    assert len(ts.tasks) == 116 * 4 * len(ALL_CATEGORIES)  # every task is built (loading is cheap)
    # Checking them all is not: by default every eighth program in name order and those of
    # SLICE (below), each with every kind and perturbation; SPECBENCH_TESTS_FULL=1: all 116.
    checked = checked_programs({t.data["program"] for t in ts.tasks})
    tasks = [t for t in ts.tasks if t.data["program"] in checked]
    assert len(tasks) == len(checked) * 4 * len(ALL_CATEGORIES) and len(checked) >= (116 if FULL else 15)
    results = {}
    for t in tasks:
        (check,) = ADAPTER.checks_for(t)
        r = ADAPTER.run_check(check, t, Completion(ADAPTER.reference(t, check)), ctx)
        assert r.passed, (t.task_id, r.message)
        results[t.task_id] = [{"index": 0, "checks": {check: r.details}}]
    m = ADAPTER.aggregate(results, {t.task_id: t for t in tasks}, settings)
    assert all(m[f"pcs/{c}"] == 1.0 for c in ALL_CATEGORIES)


def checked_programs(programs) -> set:
    """The programs the default run checks: every eighth in name order and those of SLICE
    (below); SPECBENCH_TESTS_FULL=1: all."""
    programs = sorted(programs)
    return set(programs) if FULL else set(programs[::8]) | set(SLICE)


# The programs whose ground truth fails its own tests (docs/speceval.md, "Oracle-refuted tasks").
ORACLE_REFUTED = {"CheckABeforeB", "ContainsDuplicate", "IsOneBitCharacter", "LCM", "MyPower", "MySqrt",
                  "NextGreaterElem"}
# The slice the syntactic real-data tests take besides every eighth program (SPECBENCH_TESTS_FULL=1:
# all 116 programs): a loop over an array (BinarySearch), a string (ReverseString), arithmetic
# (GCD), and a program whose ground truth fails its own tests (LCM).
SLICE = ["BinarySearch", "GCD", "LCM", "ReverseString"]
# The slice the default test run takes through the plugin with dynamic validation (its two
# runs below; SPECBENCH_TESTS_FULL=1: all 116): a loop over an array with loop invariants and
# quantifiers whose judgement tasks show the ground truth (BinarySearch), arithmetic whose
# judgement tasks show mutants, refuted or dropped (GCD), and a program whose ground truth
# fails its own tests (MySqrt: a loop invariant violated on its first test call).  Every kind
# and every perturbation runs on each; the mechanisms the runs assert (validation, oracle
# exclusion, mutant refutation, the perturbation metrics, the always-correct judge's score
# being the label balance of what is left) are the same on 3 programs as on 116.
# ReverseString added checks and showed nothing more (the JML checker on each real program's
# constructs is test_jml_realdata.py's, the perturbations' structure on SLICE and every
# eighth program test_real_perturbed_programs_compile_and_keep_methods_and_loops'); LCM's
# ground truth is refuted by call timeouts, each a fresh JVM after a 2 s call limit (about
# 13 s of waiting): a ground truth refuted by a timeout is named in its skip reason as
# test_a_ground_truth_refuted_by_a_timeout_is_named_with_its_call shows without a JVM.
DYNAMIC_SLICE = ["BinarySearch", "GCD", "MySqrt"]
# The always-"correct" judge on the whole benchmark (SPECBENCH_TESTS_FULL=1; docs/speceval.md quotes them):
# (right answers, candidates scored) without the dropped mutants, and over every candidate.
ALWAYS_CORRECT_ACC = (52, 100)
ALWAYS_CORRECT_ALL = (52, 109)


@pytest.fixture(scope="module")
def specgen_state(request, tmp_path_factory):
    """One state folder for the module's dynamic runs on the real data: the ground truth of
    each program is checked once (the next run reads the verdict from disk, as a later
    run does) and the JML runtime and programs compile once.  Under xdist, one for the
    session (the workers' common temporary root): the two runs may land on two workers,
    and the checks and compilations wait on each other's file locks instead of repeating."""
    from shared_runs import session_folder

    return session_folder(request.config, tmp_path_factory, "specgen-state")


@pytest.mark.realdata
@pytest.mark.skipif(SPECGEN is None or not JAVA, reason="needs SpecGenBench and javac")
def test_real_reference_scores_100_percent_with_dynamic_validation(pytester, specgen_state):
    """The command the note quotes: every task and perturbation at 100%, the
    programs whose ground truth fails its tests skipped with their clause.  In one
    process (-n 0): what xdist changes (planning without checking a ground truth, the
    verdicts of one worker read by the other) has tests of its own
    (test_first_run_selection.py, and the file locks of validation.ground_truth), and two
    workers would each start a warm javac and compile the JML runtime for this slice.
    The run is made in this process (its checks run in the plugin's own jvm executor either
    way, a warm javac and JVMs of its own; a Python of its own and the plugin's import were
    ~1.5 CPU s)."""
    result = pytester.runpytest_inprocess(
        "--specbench=speceval", "--model=reference", f"--specbench-data={SHARED_DATA}", "-p", "no:cacheprovider",
        "--speceval-perturbation=all", "--speceval-validation=dynamic", "-n", "0", "--specbench-report=r.json",
        f"--specbench-dir={specgen_state}",
        # the slice by exact ids: the 2,784 items of the whole set are not made and deselected
        *([] if FULL else ["--specbench-tasks=" + ",".join(f"{p}/{k}/{c}" for p in DYNAMIC_SLICE for k in TASKS
                                                          for c in ALL_CATEGORIES)]))
    assert (pytester.path / "r.json").is_file(), result.stdout.str()[-3000:]
    bench = json.loads((pytester.path / "r.json").read_text())["benchmarks"]["speceval"]
    metrics = bench["metrics"]
    refuted = ORACLE_REFUTED if FULL else ORACLE_REFUTED & set(DYNAMIC_SLICE)
    kept = (116 if FULL else len(DYNAMIC_SLICE)) - len(refuted)
    for cat in ALL_CATEGORIES:
        for name in ("judgement_acc", "selection_acc", "infilling_acc", "generation_avg_precision",
                     "generation_avg_recall", "pcs"):
            assert metrics[f"{name}/{cat}"] == 1.0, (name, cat, metrics[f"{name}/{cat}"])
        assert metrics[f"generation_pass/{cat}"] == metrics[f"infilling_pass/{cat}"] == kept
        if cat != "original":
            assert metrics[f"jaccard_judgement/{cat}"] == 0.0 and metrics[f"variance_precision/{cat}"] == 0.0
    skipped = bench["skipped"]
    programs = {reason.split(":", 1)[0] for reason in skipped}
    assert programs == refuted, skipped
    assert all(n == 4 * len(ALL_CATEGORIES) and "the ground truth fails its own tests" in r for r, n in skipped.items())
    assert result.ret == 0


def test_a_judge_that_always_says_correct_gets_the_label_balance(pytester):
    settings = _Settings(Path(tempfile.gettempdir()), speceval_task="judgement", speceval_validation="syntactic")
    tasks = ADAPTER.load(None, settings).tasks
    rows = [{"task_id": t.task_id, "solution": "After reading it carefully: **correct**."} for t in tasks]
    (pytester.path / "s.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    result = pytester.runpytest_inprocess("--specbench=speceval", "--model=replay:s.jsonl", "-p", "no:cacheprovider",
                                          "--speceval-task=judgement", "--speceval-validation=syntactic",
                                          "--specbench-report=r.json")
    assert (pytester.path / "r.json").is_file(), result.stdout.str()[-2000:]
    metrics = json.loads((pytester.path / "r.json").read_text())["benchmarks"]["speceval"]["metrics"]
    assert metrics["judgement_acc/original"] == metrics["judgement_label_correct/original"]
    labels = [instantiate(t.source.read_text(), t.data["plan"], "original", 0).data["label"] for t in tasks]
    assert metrics["judgement_acc/original"] == sum(labels) / len(labels)


@pytest.mark.realdata
@pytest.mark.skipif(SPECGEN is None or not JAVA, reason="needs SpecGenBench and javac")
def test_real_judge_that_always_says_correct_gets_the_predicted_label_balance(specgen_state, jvm):
    """The deliberately wrong model on the real data (dynamic validation): its accuracy is the
    share of correct labels among the judgement tasks left after oracle exclusion and dropping.

    Through the adapter in this process, on the module's warm JVM executor and its state
    folder (the ground truth of each program is checked once there, by whichever of this
    test and the reference's run comes first): the items' verdicts, the skip reasons and
    ``aggregate`` are the adapter's, as a plugin run calls them.  What a run adds on top --
    the answers read from a ``replay:`` file, skipped items kept out of ``aggregate``, the
    report -- is test_a_judge_that_always_says_correct_gets_the_label_balance's (the bundled
    suite, the plugin in this process) and the reference's dynamic run above (a Python of
    its own on this slice); a run of its own here was a Python, the plugin, a warm javac and
    a JVM more."""
    settings = _Settings(specgen_state, speceval_task="judgement", speceval_validation="dynamic")
    ctx = _Ctx(settings, jvm=jvm)  # its caches in the state folder, where a plugin run keeps them
    tasks = [t for t in ADAPTER.load(SPECGEN, settings).tasks if FULL or t.data["program"] in DYNAMIC_SLICE]
    skipped, results = {}, {}
    for t in tasks:
        (check,) = ADAPTER.checks_for(t)
        reason = ADAPTER.skip_reason(check, t, ctx)
        if reason:
            skipped[reason] = skipped.get(reason, 0) + 1
            continue
        r = ADAPTER.run_check(check, t, Completion("Answer: correct"), ctx)
        results[t.task_id] = [{"index": 0, "checks": {check: r.details}}]
    metrics = ADAPTER.aggregate(results, {t.task_id: t for t in tasks if t.task_id in results}, settings)
    excluded = {reason.split(":", 1)[0] for reason in skipped}
    assert excluded == (ORACLE_REFUTED if FULL else ORACLE_REFUTED & set(DYNAMIC_SLICE))
    dropped = {tid for tid, samples in results.items() if samples[0]["checks"]["judgement"].get("dropped")}
    assert len(dropped) == metrics["judgement_dropped/original"]
    assert dropped or not FULL  # the whole benchmark has dropped tasks; a slice may have none
    labels = [instantiate(t.source.read_text(), t.data["plan"], "original", 0).data["label"] for t in tasks
              if t.data["program"] not in excluded and t.task_id not in dropped]
    assert 0 < sum(labels) < len(labels), labels  # correct and incorrect specifications both scored
    assert metrics["judgement_acc/original"] == pytest.approx(sum(labels) / len(labels))
    assert metrics["judgement_acc/original"] == metrics["judgement_label_correct/original"]
    # every candidate (§3.2.1): a dropped mutant answered "correct" is a wrong answer
    assert metrics["judgement_acc_all/original"] == pytest.approx(sum(labels) / (len(labels) + len(dropped)))
    if FULL:  # the figures docs/speceval.md quotes, from this run
        doc = (Path(__file__).parents[1] / "docs" / "speceval.md").read_text()
        for name, (right, total) in (("judgement_acc", ALWAYS_CORRECT_ACC), ("judgement_acc_all", ALWAYS_CORRECT_ALL)):
            assert metrics[f"{name}/original"] == pytest.approx(right / total)
            assert f"`{name}` **{100 * right / total:.2f}%** ({right}/{total})" in doc
