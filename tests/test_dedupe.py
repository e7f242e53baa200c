"""Within-run deduplication (engine/dedupe.py): each distinct program is evaluated
once per task and check; every copy still is one item and one journal line with
the verdict it would have had on its own."""
from __future__ import annotations

import json
import re
from types import SimpleNamespace

import pytest

from pytest_specbench.benchmarks.cife.adapter import ADAPTER as CIFE
from pytest_specbench.benchmarks.contract.contract import ADAPTER as CONTRACT
from pytest_specbench.benchmarks.contract.evalplus import sample_code
from pytest_specbench.benchmarks.contract.sanitize import program_form
from pytest_specbench.models.base import Completion

WRONG = "def {entry}(*args, **kwargs):\n    return None\n"
RAISES = "def {entry}(*args):\n    raise ValueError('no')\n"


# The tasks of the module's runs: an EvalPlus-derived one with both checks, one whose
# contract check is skipped (no CVTs), and an MBPP one.  Each distinct program evaluated
# once, its copies taking its verdict, on one worker or across two: the same on 3 tasks
# (48 items a run) as on all 12 (192 items a run, each run evaluating them again).
DEDUPE_TASKS = ("HumanEval-S/2", "HumanEval-S/6", "Mbpp-S/2")


def duplicated_samples(path, tasks: tuple[str, ...] | None = None) -> list[dict]:
    """Every bundled ContractEval task (or those of ``tasks``), eight samples: the reference
    as it is, again, with a comment, and in a markdown fence (all one program); a wrong
    answer three ways (one program); an answer that raises."""
    rows = []
    for task in CONTRACT.load(None, None).tasks:
        if tasks is not None and task.task_id not in tasks:
            continue
        entry, ref = task.data["entry_point"], CONTRACT.reference(task, "contract")
        wrong = WRONG.format(entry=entry)
        variants = [ref, ref, ref.rstrip("\n") + "  # checked\n", "Here:\n```python\n" + ref + "```\n",
                    wrong, wrong, wrong + "# wrong\n", RAISES.format(entry=entry)]
        rows += [{"task_id": task.task_id, "sample_index": i, "solution": v} for i, v in enumerate(variants)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return rows


def distinct_programs(rows) -> int:
    """Programs (task, check, program form) the run must evaluate, computed here on its own."""
    tasks = {t.task_id: t for t in CONTRACT.load(None, None).tasks}
    keys = set()
    for row in rows:
        task = tasks[row["task_id"]]
        for check in CONTRACT.checks_for(task):
            if CONTRACT.skip_reason(check, task):
                continue
            keys.add((task.task_id, check, program_form(sample_code(Completion(row["solution"]), task.data["entry_point"]))))
    return len(keys)


ARGS = ("--specbench=contract", "--specbench-result-cache=off", "--model=reference")  # a later --model wins


def run_args(folder, samples, name, *extra) -> tuple[str, ...]:
    return (*ARGS, f"--model=replay:{samples}", f"--specbench-dir={folder / ('state-' + name)}",
            f"--specbench-report={folder / (name + '.json')}", *extra)


@pytest.fixture(scope="module")
def dups(module_runs, tmp_path_factory):
    """The duplicated samples and the module's runs over them, each made once: ``on-N``
    and ``off-N`` (dedupe on and off, under ``-n N``; the tests use on-0, on-2 and off-0).  ``on-0`` keeps pytest's cache
    provider (test_last_failed_... reruns its failures)."""
    private = tmp_path_factory.mktemp("dups") / "dups.jsonl"
    rows = duplicated_samples(private, DEDUPE_TASKS)
    samples = module_runs.write_once("dups.jsonl", private.read_text())

    def get(mode: str, workers: int):
        name = f"{mode}-{workers}"
        extra = ["-n", str(workers)] + (["--specbench-dedupe=off"] if mode == "off" else [])
        if name != "on-0":
            extra += ["-p", "no:cacheprovider"]
        return module_runs.once(name, *run_args(module_runs.path, samples, name, *extra))

    return SimpleNamespace(folder=module_runs.path, samples=samples, rows=rows, run=get)


def journal(folder, name) -> dict[str, dict]:
    (path,) = (folder / f"state-{name}" / "runs").glob("*/journal.jsonl")
    entries = [json.loads(line) for line in path.read_text().splitlines()[1:]]
    return {e["nodeid"]: {k: v for k, v in e.items() if k != "isolation"} for e in entries if "nodeid" in e}


def dedupe_line(result) -> tuple[int, int]:
    text = result.stdout.str()
    m = re.search(r"specbench: dedupe: (\d+) programs evaluated, (\d+) copies took their verdict", text)
    assert m, text[-2000:]
    return int(m.group(1)), int(m.group(2))


@pytest.mark.parametrize("workers", [0, 2], ids=["serial", "xdist-2"])
def test_verdicts_journal_and_report_are_the_same_with_dedupe_on_and_off(dups, workers):
    # Dedupe on (alone and under -n 2) against one run with dedupe off, alone: what an item
    # gets must not depend on dedupe, nor on xdist (a second run with dedupe off under -n 2
    # would show only the latter, which test_plugin_contract.py's xdist test shows).
    on, off = dups.run("on", workers), dups.run("off", 0)
    assert on.parseoutcomes() == off.parseoutcomes()
    assert on.ret == off.ret == 1  # the wrong answers fail
    report_on = json.loads((dups.folder / f"on-{workers}.json").read_text())
    report_off = json.loads((dups.folder / "off-0.json").read_text())
    assert report_on["benchmarks"] == report_off["benchmarks"]
    assert (report_on["manifest"]["dedupe"], report_off["manifest"]["dedupe"]) == ("on", "off")
    assert journal(dups.folder, f"on-{workers}") == journal(dups.folder, "off-0")
    # Each distinct program was evaluated once; every other item took a verdict.
    evaluated, copies = dedupe_line(on)
    items = sum(on.parseoutcomes().get(k, 0) for k in ("passed", "failed"))
    assert evaluated == distinct_programs(dups.rows) and evaluated + copies == items
    assert "specbench: dedupe:" not in off.stdout.str()


def test_under_xdist_no_program_is_evaluated_twice(dups):
    result = dups.run("on", 2)
    # Each item says how its verdict was reached; the controller counts the
    # evaluations: a program evaluated twice (on two workers) would count twice.
    # The verdicts of copies run on another worker than their representative
    # came from the controller (plugin/remote.py), not from a shared folder.
    evaluated, copies = dedupe_line(result)
    assert evaluated == distinct_programs(dups.rows)
    assert not list((dups.folder / "state-on-2" / "runs").glob("*/programs"))


def test_a_failing_representative_gives_every_copy_the_same_failure(dups):
    dups.run("on", 2)
    tasks = json.loads((dups.folder / "on-2.json").read_text())["benchmarks"]["contract"]["tasks"]
    for task_id, task in tasks.items():
        wrong = [s["checks"]["functional"] for s in task["samples"] if s["index"] in (4, 5, 6)]
        assert len(wrong) == 3 and not wrong[0]["passed"], task_id
        assert wrong[0] == wrong[1] == wrong[2], task_id  # same reason, same details
        assert wrong[0]["reason"]


def test_last_failed_and_k_select_copies_without_their_representative(dups, module_runs):
    # The serial dedupe-on run, cache provider on, recorded its failures for --lf.
    failed = dups.run("on", 0).parseoutcomes()["failed"]
    args = (*ARGS, f"--model=replay:{dups.samples}", f"--specbench-dir={dups.folder / 'state-lf'}")
    again = module_runs.run(*args, "--lf", "-n", "0")  # (xdist is not the subject: two workers were most of its cost)
    outcomes = again.parseoutcomes()
    assert outcomes["failed"] == failed and "passed" not in outcomes
    # A copy alone (sample 5: its representative, sample 4, is not selected) is evaluated itself.
    alone = module_runs.run(*args, "-k", "HumanEval-S/2 and 5 and functional")
    outcomes = alone.parseoutcomes()
    assert outcomes["failed"] == 1 and "passed" not in outcomes
    assert dedupe_line(alone) == (1, 0)


def test_bad_dedupe_value_is_one_line(pytester):
    result = pytester.runpytest_inprocess("--specbench=contract", "--specbench-dedupe=maybe", "-p", "no:cacheprovider",
                                          "--model=reference")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--specbench-dedupe: expected on or off, got 'maybe'*"])
    assert "Traceback" not in result.stderr.str()


def test_cife_opts_out_identical_answers_are_judged_each(pytester):
    # Two identical answers per task.  Deduplicated, sample 1 would copy sample 0's
    # verdicts; opted out, every item asks the judge (the bundled recorded judgments,
    # bound to the question, answer both: the same answer is the same question, issue
    # #43), with dedupe on as off: 30 items, 30 questions to the recorded judge.
    assert CIFE.program_key(CIFE.load(None, None).tasks[0], Completion("x"), "correctness") is None
    lines = [{"task_id": t.task_id, "sample_index": i, "solution": t.data["reference_answer"]}
             for t in CIFE.load(None, None).tasks[:3] for i in range(2)]
    (pytester.path / "answers.jsonl").write_text("".join(json.dumps(l) + "\n" for l in lines))
    outcomes, asked = {}, {}
    for mode in ("on", "off"):
        result = pytester.runpytest_inprocess("--specbench=cife", "--model=replay:answers.jsonl",
                                              f"--specbench-dedupe={mode}", "--specbench-result-cache=off",
                                              f"--specbench-report={mode}.json",
                                              f"--specbench-dir={pytester.path / mode}", "-p", "no:cacheprovider")
        # Without "warnings": an in-process run also counts ResourceWarnings of objects other
        # tests of this worker left to the garbage collector.
        outcomes[mode] = {k: v for k, v in result.parseoutcomes().items() if k != "warnings"}
        asked[mode] = json.loads((pytester.path / f"{mode}.json").read_text())["manifest"]["roles"]["judge"]["asked"]
        assert "specbench: dedupe:" not in result.stdout.str()
    assert outcomes["on"] == outcomes["off"] == {"passed": 30}
    assert asked["on"] == asked["off"] == 30
