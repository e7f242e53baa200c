"""PostcondBench through the plugin: every check runs in ctx.executor("command")
(the sandbox), -n 2 equals -n 0, bad input is one line, a sample's faults are F,
and upstream's released verdicts are re-scored on the real slice."""
import json
import subprocess
import sys
from pathlib import Path

import pytest
from shared_data import FULL, REPO_MIRRORS, SHARED_DATA
from shared_runs import UNUSED_PLUGINS, postcond_bundled_state, postcond_real_state  # noqa: F401  (fixtures: state folders built once)

from pytest_specbench.jml import junit
from pytest_specbench.execution.jvm import JvmExecutor

ROOT = Path(__file__).resolve().parents[1]
TASKS = ROOT / "benchmarks" / "postcond" / "tasks"
DATA = SHARED_DATA / "postcondbench"
MIRROR = REPO_MIRRORS


def run_plugin(tmp_path, *args, name="run", state=None):
    report = tmp_path / f"{name}.json"
    proc = subprocess.run([sys.executable, "-m", "pytest", *UNUSED_PLUGINS, "-p", "no:randomly", "-q", "--specbench=postcond",
                           "--model=reference",
                           f"--specbench-report={report}", f"--specbench-dir={state or tmp_path / 'state'}",
                           "--specbench-result-cache=off", *args],
                          cwd=ROOT, capture_output=True, text=True, timeout=900)
    return proc, (json.loads(report.read_text()) if report.exists() else None)


def verdicts(report):
    return {(t, s["index"], c): (r.get("passed"), r.get("verdict"), r.get("kills"))
            for t, task in report["benchmarks"]["postcond"]["tasks"].items()
            for s in task["samples"] for c, r in s["checks"].items()}


def one_task(tmp_path, name="gcd"):
    """A copy of one bundled task whose checkout path still points at the bundled library."""
    data = json.loads((TASKS / f"minilib--{name}.json").read_text())
    data["repo"]["local"] = str((TASKS / data["repo"]["local"]).resolve())
    folder = tmp_path / "data"
    folder.mkdir()
    (folder / f"minilib--{name}.json").write_text(json.dumps(data))
    return folder


# The slice the xdist-equals-serial runs take: one Python task (a function; its one mutant
# keeps the mutant runs few) with the reference and a wrong spec, and one Java task (a method
# on an object) with the reference: 3 samples, 6 items per run (it took 4 tasks and 31 runs,
# then 6 samples and 14 runs, then 5 samples and 10 items).  The mechanism under test -- items
# spread over two workers, ``complete`` reading ``correct`` from whichever worker ran it, one
# verdict per equal answer -- is the same on 2 tasks as on all 12 and does not depend on the
# language: both languages pass and kill (the reference, whose ``complete`` reads a ``correct``
# that passed and runs every mutant), and the wrong spec fails (its ``complete`` reads a
# ``correct`` that failed, with the violation verdict).  Left to in-process tests (session 18,
# about 5 CPU s of the 13 of both runs): the Java wrong spec (a javac and a JVM per run; the
# same answer on javalib--push is jml_fail in tests/test_postcond_java.py::
# test_java_streams_lambdas_and_old_of_calls_run_as_java), and the trivially true specs of both languages (correct,
# kills nothing: tests/test_postcond_run.py::test_bad_answers_fail_with_one_line_reasons's weak
# spec, tests/test_postcond_java.py::test_a_trivially_true_spec_is_correct_but_not_complete);
# a ``complete`` that reads a ``correct`` that passed is the references'.
# What the larger slice added is checked elsewhere, in-process: the bundled tasks' references
# (correct, every mutant killed) by the family conformance test (test_family_conformance.py),
# minilib--push's (a Python method on an object) by tests/test_postcond_run.py's authors' tool
# test, which rebuilds that task and runs its reference on the original and on every mutant,
# and javalib--maxIndex's by tests/test_postcond_java.py's authors' tool test.
# Each task keeps its first mutant (XDIST_MUTANTS; every mutant with SPECBENCH_TESTS_FULL=1):
# a ``complete`` that runs one mutant reads ``correct`` and kills as one that runs three, and each
# of javalib--push's mutants is a javac and a JVM per run (session 23: 2 of its 3 left out, 4
# compiles and 4 JVMs of the two runs).  That the reference kills push's other two mutants
# (rule ones, as the first) is then the conformance test's with SPECBENCH_TESTS_FULL=1 (every
# task), as for the bundled tasks this test never took.
SLICE = {"minilib--running_max": "@icontract.ensure(lambda xs, result: len(result) < len(xs))",
         "javalib--push": None}  # task -> its wrong spec, if any
XDIST_MUTANTS = None if FULL else 1  # the first mutants each task keeps (None: all)


@pytest.mark.slow
def test_xdist_equals_serial_on_python_and_java_tasks(pytester, tmp_path, postcond_bundled_state):
    folder = tmp_path / "data"
    folder.mkdir()
    rows = []
    for task_id, wrong in SLICE.items():
        data = json.loads((TASKS / f"{task_id}.json").read_text())
        data["repo"]["local"] = str((TASKS / data["repo"]["local"]).resolve())
        data.update({key: data[key][:XDIST_MUTANTS] for key in ("mutants", "mutant_tags", "ref_mutant_kill")})
        (folder / f"{task_id}.json").write_text(json.dumps(data))
        answers = [(kind, a) for kind, a in (("reference", data["ref_postcond"]), ("wrong", wrong)) if a]
        rows += [{"task_id": task_id, "sample_index": i, "solution": a, "kind": kind}
                 for i, (kind, a) in enumerate(answers)]
    answers = tmp_path / "answers.jsonl"
    answers.write_text("".join(json.dumps({k: v for k, v in r.items() if k != "kind"}) + "\n" for r in rows))
    common = (f"--model=replay:{answers}", f"--specbench-data={folder}")
    # Both runs in the session's state folder, whose Java toolchain and project are built
    # (tests/shared_runs.py): what is compiled once per content is not the subject here;
    # the result cache is off (run_plugin), so each run evaluates every verdict itself.
    # Both runs are made in this process (a Python of its own, the plugin's import and
    # collection, were ~4 s of CPU for the serial run, ~1.5 s for the -n 2 run's controller);
    # the -n 2 run's two workers are xdist's own processes, as in any run, without the pytest
    # plugins of our dependencies that no run here uses (UNUSED_PLUGINS: anyio's and
    # Hypothesis's, ~0.07 CPU s a worker's start).
    serial = pytester.runpytest_inprocess(*UNUSED_PLUGINS, "-p", "no:cacheprovider", "--specbench=postcond", *common,
                                          "-n", "0", f"--specbench-report={tmp_path / 'n0.json'}",
                                          f"--specbench-dir={postcond_bundled_state}", "--specbench-result-cache=off")
    rep0 = json.loads((tmp_path / "n0.json").read_text()) if (tmp_path / "n0.json").exists() else None
    parallel = pytester.runpytest_inprocess(*UNUSED_PLUGINS, "-p", "no:cacheprovider", "--specbench=postcond", *common,
                                            "-n", "2", f"--specbench-report={tmp_path / 'n2.json'}",
                                            f"--specbench-dir={postcond_bundled_state}", "--specbench-result-cache=off")
    rep2 = json.loads((tmp_path / "n2.json").read_text()) if (tmp_path / "n2.json").exists() else None
    assert rep0 is not None and rep2 is not None, serial.stdout.str()[-2000:] + parallel.stdout.str()[-2000:]
    assert "created: 2/2 workers" in parallel.stdout.str(), parallel.stdout.str()[-2000:]  # xdist, in this process too
    # the Java items skip without JUnit 4 or a JDK (one line saying how to install them)
    java = not (junit.missing() or JvmExecutor(tmp_path).available())
    v0 = verdicts(rep0)
    ran = [r for r in rows if java or r["task_id"].startswith("minilib--")]
    assert len(v0) == 2 * len(ran) and v0 == verdicts(rep2)
    assert rep0["benchmarks"]["postcond"]["errors"] == rep2["benchmarks"]["postcond"]["errors"] == 0
    for r in ran:
        key = (r["task_id"], r["sample_index"])
        if r["kind"] == "reference":  # correct and complete: it kills every mutant kept
            assert v0[key + ("correct",)][0] and v0[key + ("complete",)][0], (key, v0[key + ("complete",)])
            assert FULL or len(v0[key + ("complete",)][2]) == XDIST_MUTANTS, (key, v0[key + ("complete",)])
        else:  # wrong: fails correct with the language's violation verdict
            assert v0[key + ("correct",)][:2] == (False, "jml_fail" if "javalib" in key[0] else "icontract_fail"), key
    assert serial.ret == parallel.ret == 1  # the wrong sample fails


def run_plugin_inprocess(pytester, tmp_path, *args):
    """A run of the plugin in this process (pytester): for runs that end before any
    check runs, where a Python of its own, the plugin's import, were most of the cost, and
    runs of a few answers (each still checked in the sandbox).  An exception escaping the
    run is printed with its traceback into the captured output."""
    return pytester.runpytest_inprocess("-p", "no:cacheprovider", "-q", "--specbench=postcond", "--model=reference",
                                        f"--specbench-dir={tmp_path / 'state'}", "--specbench-result-cache=off", *args)


def test_malformed_task_file_is_one_line(pytester, tmp_path):
    folder = tmp_path / "data"
    folder.mkdir()
    (folder / "broken.json").write_text('{"name": "f", ')
    result = run_plugin_inprocess(pytester, tmp_path, "--model=reference", f"--specbench-data={folder}")
    output = result.stdout.str() + result.stderr.str()
    assert result.ret != 0
    assert "broken.json" in output and "Traceback" not in output, output[-2000:]


def test_missing_repository_skips_with_one_line(pytester, tmp_path):
    folder = one_task(tmp_path)
    f = folder / "minilib--gcd.json"
    data = json.loads(f.read_text())
    data["repo"] = {"github_path": "someone/nothing", "commit": "0" * 40, "language": "python", "env_config": ""}
    f.write_text(json.dumps(data))
    result = run_plugin_inprocess(pytester, tmp_path, "--model=reference", f"--specbench-data={folder}",
                                  f"--postcond-repos={tmp_path}", "-rs")
    assert "someone/nothing@000000000000" in result.stdout.str(), result.stdout.str()[-2000:]
    assert result.parseoutcomes().get("skipped") == 2, result.stdout.str()[-2000:]


MISBEHAVING = {
    # (sleeping is refused by the answer screen: an endless pure computation hangs instead)
    "hang": ("@icontract.ensure(lambda result: any(x < 0 for x in __import__('itertools').count()))", "timeout"),
    "flood": ("@icontract.ensure(lambda result: print('x' * 50_000_000) or True)", ""),
    "fork": ("@icontract.ensure(lambda result: [__import__('os').fork() for _ in range(40)] and True)", ""),
    "garbage": ("this is not a decorator", "parse_error"),
}


@pytest.mark.slow
@pytest.mark.parametrize("names", [("hang",), ("flood", "fork", "garbage")], ids=["hang", "flood+fork+garbage"])
def test_a_sample_that_misbehaves_is_F_with_a_reason(pytester, tmp_path, names):
    # The misbehaving answers are samples of one run (a plugin run's start and collection
    # cost more CPU than the check of a garbage answer), each its own item in its own sandbox
    # job, each asserted on alone.  The endless computation burns CPU until the limit: a run
    # of its own with a short one; the others keep room to fail on their own.  The runs are
    # made in this process: the answers run in the sandbox either way, and a Python of its
    # own and the plugin's import were ~1 s of CPU per run.
    folder = one_task(tmp_path)
    answers = tmp_path / "answers.jsonl"
    answers.write_text("".join(json.dumps({"task_id": "minilib--gcd", "sample_index": i, "solution": MISBEHAVING[n][0]})
                               + "\n" for i, n in enumerate(names)))
    timeout = 1 if names == ("hang",) else 5
    report = tmp_path / "run.json"
    result = run_plugin_inprocess(pytester, tmp_path, f"--model=replay:{answers}", f"--specbench-data={folder}",
                                  f"--postcond-timeout={timeout}", "--specbench-checks=correct",
                                  f"--specbench-report={report}")
    output = result.stdout.str()
    rep = json.loads(report.read_text()) if report.exists() else None
    assert rep is not None, output[-2000:]
    samples = rep["benchmarks"]["postcond"]["tasks"]["minilib--gcd"]["samples"]
    assert [s["index"] for s in samples] == list(range(len(names)))
    for name, sample in zip(names, samples):
        result = sample["checks"]["correct"]
        assert result["passed"] is False and result["verdict"] != "passed", (name, result)
        assert MISBEHAVING[name][1] in result["verdict"], (name, result)
    assert rep["benchmarks"]["postcond"]["errors"] == 0
    assert f"{len(names)} failed" in output


# The task of the upstream slice the default test run replays for each model, which of its
# five samples, and which of its mutants (SPECBENCH_TESTS_FULL=1: all 8 tasks, all five
# samples, every mutant, for both).  gpt-5 on decode_rle: #0, a failed set (local_crash here),
# and #2, a correct set whose mutants are all killed (icontract_fail), kills compared mutant
# by mutant; claude on contains_cycle: #0, a correct set whose mutants all survive (failed),
# and #4, a parse_error for us where upstream says compile_failure (both fail).  Every kind of
# verdict of those two tasks is kept: the samples left out repeat a kind (gpt-5 #1, #3, #4 are
# failed sets like #0; claude #1 is a failed set that crashes here as gpt-5 #0 does, #2 a
# correct set whose mutants survive, like #0, and #3 a failed set).  Of each task's mutants
# (9 and 8) the first is kept, a rule mutant (upstream's ``mutant_tags``; its kills and the
# reference's cut alike): every mutant is the method's text put in the checkout the same way,
# one sandboxed run each, and that one still shows both outcomes (killed on decode_rle,
# survived on contains_cycle); an LLM mutant is test_postcond_run.py's hailstone one.  That is
# 5 sandboxed runs (one per set checked for correctness, one per mutant of a correct set; a
# parse_error runs nothing), where every mutant and claude #1 made 21, then two mutants 7
# (session 18: ~2 CPU s less).  What the rest of the slice adds
# is shown on the bundled suite too: a violation icontract cannot render (gpt-5
# contains_cycle) and an icontract_fail set (claude decode_rle) are cases of
# tests/test_postcond_run.py::test_bad_answers_fail_with_one_line_reasons.
# By default both models' tasks are replayed in one plugin run (one data folder holding
# each model's task file of the slice, cut to the samples kept -- ``postconds`` and upstream's
# ``postcond_corr`` and ``mutant_kill`` alike, so a sample is compared with its own upstream
# verdicts -- with that model's answers; the two tasks differ): the same items and
# comparisons as a run per model, one pytest start and one collection less.  With
# SPECBENCH_TESTS_FULL=1 each model's whole folder is a run.
REAL_SLICE = {"gpt-5--v2-all": ("keon--algorithms--decode_rle", (0, 2)),
              "claude-sonnet-4-5--v2-all": ("keon--algorithms--contains_cycle", (0, 4))}
PER_SAMPLE = ("postconds", "postcond_corr", "mutant_kill")  # upstream's lists with one entry per sample
KEPT_MUTANTS = (0,)  # on both tasks a rule mutant
PER_MUTANT = ("mutants", "mutant_tags", "ref_mutant_kill")  # upstream's lists with one entry per mutant
REPLAYS = [(model,) for model in REAL_SLICE] if FULL else [tuple(REAL_SLICE)]


def sliced_task(model: str, folder: Path) -> None:
    """``model``'s task of the slice in ``folder``, with the samples of REAL_SLICE only."""
    name, keep = REAL_SLICE[model]
    data = json.loads((DATA / model / f"{name}.json").read_text())
    assert all(len(data[key]) == 5 for key in PER_SAMPLE), name
    data.update({key: [data[key][i] for i in keep] for key in PER_SAMPLE})
    assert [data["mutant_tags"][i] for i in KEPT_MUTANTS] == [["rule"]], name
    data.update({key: [data[key][i] for i in KEPT_MUTANTS] for key in PER_MUTANT})
    data["mutant_kill"] = [[kills[i] for i in KEPT_MUTANTS] if kills else kills for kills in data["mutant_kill"]]
    (folder / f"{name}.json").write_text(json.dumps(data))


@pytest.mark.realdata
@pytest.mark.slow
@pytest.mark.parametrize("models", REPLAYS, ids=["+".join(m) for m in REPLAYS])
def test_replay_of_upstream_answers_agrees_sample_by_sample(pytester, tmp_path, postcond_real_state, models):
    if not all((DATA / m).is_dir() for m in models) or not (MIRROR / "keon+algorithms").exists():
        pytest.skip("needs ../shared/datasets/postcondbench and a keon/algorithms mirror (fetch github:keon/algorithms)")
    from pytest_specbench.benchmarks.postcond.tools.agreement import compare
    from pytest_specbench.benchmarks.postcond.cli import export_answers

    if FULL:
        (model,) = models
        folder = DATA / model
    else:
        folder = tmp_path / "slice"
        folder.mkdir()
        for model in models:
            sliced_task(model, folder)
    tasks = sorted(f.stem for f in folder.glob("*.json"))
    assert FULL or tasks == sorted(REAL_SLICE[m][0] for m in models)
    answers = tmp_path / "answers.jsonl"
    answers.write_text("".join(json.dumps(r) + "\n" for r in export_answers(folder)))
    common = (f"--model=replay:{answers}", f"--specbench-data={folder}", f"--postcond-repos={MIRROR}")
    if FULL:  # the whole slice on two workers, as docs/postcond.md's figures were made
        proc, rep = run_plugin(tmp_path, *common, "-n", "2", state=postcond_real_state)
        output = proc.stdout
    else:
        # -n 0 (xdist is not the subject: test_xdist_equals_serial_on_python_and_java_tasks), run in
        # this process (what is under test is each sample's verdict, made in the sandbox either
        # way; a Python of its own and the plugin's import were ~1.5 s of CPU)
        report = tmp_path / "replay.json"
        result = pytester.runpytest_inprocess("-p", "no:cacheprovider", "-q", "--specbench=postcond", *common, "-n", "0",
                                              f"--specbench-report={report}", f"--specbench-dir={postcond_real_state}",
                                              "--specbench-result-cache=off")
        output = result.stdout.str()
        rep = json.loads(report.read_text()) if report.exists() else None
    assert rep is not None, output[-2000:]
    assert sorted(rep["benchmarks"]["postcond"]["tasks"]) == tasks
    counts = compare(rep, folder, out=print)
    upstream = [json.loads((folder / f"{t}.json").read_text()) for t in tasks]
    samples = 5 * len(tasks) if FULL else sum(len(REAL_SLICE[m][1]) for m in models)
    assert counts["errors"] == 0 and counts["corr_total"] == samples == sum(len(u["postcond_corr"]) for u in upstream)
    assert counts["corr_agree"] == counts["corr_total"]
    # the kept samples still hold every kind of upstream verdict named above
    assert FULL or {v for u in upstream for v in u["postcond_corr"]} == {"passed", "failed", "compile_failure"}
    # and both outcomes of a mutant (killed on decode_rle, survived on contains_cycle)
    assert FULL or {v for u in upstream for k in u["mutant_kill"] for v in k} == {"icontract_fail", "failed"}
    # every sample upstream found correct has its kills compared, mutant by mutant
    assert counts["kill_agree"] == counts["kill_total"] == sum(len(k) for u in upstream for k in u["mutant_kill"] if k) > 0
