"""Within-run deduplication (engine/dedupe.py): each distinct program is evaluated
once per task and check; every copy still is one item and one journal line with
the verdict it would have had on its own."""
from __future__ import annotations

import json
import re
from collections import Counter
from types import SimpleNamespace

import pytest

from pytest_specbench.benchmarks.cife.adapter import ADAPTER as CIFE
from pytest_specbench.benchmarks.contract.contract import ADAPTER as CONTRACT
from pytest_specbench.benchmarks.contract.evalplus import sample_code
from pytest_specbench.benchmarks.contract.sanitize import program_form
from pytest_specbench.models.base import Completion
from session_items import configured_session, counted_checks, evaluate_all

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
        variants = [ref, ref, ref.rstrip("\n") + "  # checked\n", "Here:\n```python\n" + ref.rstrip("\n") + "\n```\n",
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


def journal(folder, name) -> dict[str, dict]:
    (path,) = (folder / f"state-{name}" / "runs").glob("*/journal.jsonl")
    entries = [json.loads(line) for line in path.read_text().splitlines()[1:]]
    return {e["nodeid"]: {k: v for k, v in e.items() if k != "isolation"} for e in entries if "nodeid" in e}


def dedupe_line(result) -> tuple[int, int]:
    text = result.stdout.str()
    m = re.search(r"specbench: dedupe: (\d+) programs evaluated, (\d+) copies took their verdict", text)
    assert m, text[-2000:]
    return int(m.group(1)), int(m.group(2))


@pytest.fixture
def dups(pytester, monkeypatch):
    """The duplicated samples, a counter of the checks the adapter executes, and
    ``session(name, *extra)``: the real session of a run over them in this process
    (``tests/session_items.py``; issue #45: what dedupe decides is the ledger's and the
    engine's, a whole pytest run only adds its start-up)."""
    samples = pytester.path / "dups.jsonl"
    rows = duplicated_samples(samples, DEDUPE_TASKS)
    calls = counted_checks(monkeypatch, CONTRACT)

    def session(name, *extra):
        return configured_session(pytester, *run_args(pytester.path, samples, name, "-p", "no:cacheprovider", *extra))

    return SimpleNamespace(folder=pytester.path, samples=samples, rows=rows, calls=calls, session=session)


def test_verdicts_journal_and_report_are_the_same_with_dedupe_on_and_off(dups):
    # What an item gets must not depend on dedupe.  Under xdist (copies on another worker
    # than their representative take its verdict from the controller): the -n 2 run below,
    # test_distributed.py's contract run with copies over two hosts' workers (equals -n 0,
    # dedupe counts included) and test_engine.py's copies on another worker.
    on = dups.session("on")
    reached_on = evaluate_all(on)
    evaluated_on = sum(dups.calls.values())
    off = dups.session("off", "--specbench-dedupe=off")
    reached_off = evaluate_all(off)
    assert {n: v for n, (v, _) in reached_on.items()} == {n: v for n, (v, _) in reached_off.items()}
    assert journal(dups.folder, "on") == journal(dups.folder, "off")
    report_on, report_off = on.report(), off.report()
    assert report_on["benchmarks"] == report_off["benchmarks"]
    assert (report_on["manifest"]["dedupe"], report_off["manifest"]["dedupe"]) == ("on", "off")
    # Each distinct program was evaluated once (its check executed once); every other item
    # took its verdict; with dedupe off each item executed its check.
    hows = Counter(how for _, how in reached_on.values())
    assert hows["evaluated"] == evaluated_on == distinct_programs(dups.rows)
    assert hows["evaluated"] + hows["copy"] == len(reached_on) == len(reached_off) == 40  # 8 skipped: no CVTs
    assert sum(dups.calls.values()) - evaluated_on == len(reached_off)
    assert not any(how == "copy" for _, how in reached_off.values())
    assert not list((dups.folder / "state-on" / "runs").glob("*/programs"))
    # A failing representative gives every copy the same failure (reason and details).
    tasks = report_on["benchmarks"]["contract"]["tasks"]
    assert sorted(tasks) == sorted(DEDUPE_TASKS)
    for task_id, task in tasks.items():
        wrong = [s["checks"]["functional"] for s in task["samples"] if s["index"] in (4, 5, 6)]
        assert len(wrong) == 3 and not wrong[0]["passed"], task_id
        assert wrong[0] == wrong[1] == wrong[2], task_id
        assert wrong[0]["reason"]


# An answer that passes the functional check and has no contract: the contract check alone fails.
MERGE_NO_CONTRACT = "def merge_unique_sorted(a, b):\n    return sorted(set(a) | set(b))\n"


def test_under_xdist_the_report_is_the_serial_one_and_no_program_is_evaluated_twice(pytester):
    """The one ``-n 2`` run of ContractEval (the controller in this process, its two workers
    xdist's), asserting what each earlier xdist run of its own asserted (#45: one run, several
    properties; each took a controller and two or one workers):

    * -n 2 reports what -n 0 does (was test_plugin_contract.py's xdist test: passing, failing
      and contract-only-failing answers, now with copies too);
    * each distinct program is evaluated once, the copies on the other worker given their
      verdict by the controller, no folder of programs (the one end-to-end dedupe run across
      real workers where test_distributed's private host cannot start: a checkout under /tmp);
    * without ``--model`` the run takes the last run's model and its workers evaluate with it
      (was test_model_choice.py's ``--lf -n 1`` run);
    * the gate's JUnit properties are the controller's (was test_gate.py's ``-n 1`` run).
    Then ``--lf`` and ``-k`` in one process select copies alone."""
    samples = pytester.path / "dups.jsonl"
    rows = duplicated_samples(samples, DEDUPE_TASKS[:1])
    rows.append({"task_id": DEDUPE_TASKS[0], "sample_index": len(rows), "solution": MERGE_NO_CONTRACT})
    samples.write_text("".join(json.dumps(r) + "\n" for r in rows))
    # The result cache off: else the serial run's verdicts would be read back by the
    # controller, no worker would start (its one line says so) and xdist would prove nothing.
    common = ("--specbench=contract", "--specbench-result-cache=off", f"--specbench-dir={pytester.path / 'state'}")
    args = (*common, f"--model=replay:{samples}")
    serial = pytester.runpytest_inprocess(*args, "-n", "0", "--specbench-report=serial.json")
    assert serial.ret == 1
    xml = pytester.path / "j.xml"
    first = pytester.runpytest_inprocess(*common, "-n", "2", "--specbench-report=parallel.json", f"--junitxml={xml}",
                                         "--specbench-fail-under=pass@1=0.4")
    first.stdout.fnmatch_lines([f"specbench: --model not given: using replay:{samples}, the last run's model*",
                                f"*2 workers [[]{2 * len(rows)} items[]]*"])
    assert "no xdist workers started" not in first.stdout.str()
    serial_report, parallel_report = (json.loads((pytester.path / name).read_text())
                                      for name in ("serial.json", "parallel.json"))
    assert parallel_report["manifest"]["model"]["spec"] == f"replay:{samples}"
    assert serial_report["benchmarks"] == parallel_report["benchmarks"]
    outcomes = first.parseoutcomes()
    evaluated, copies = dedupe_line(first)
    assert evaluated == distinct_programs(rows) and evaluated + copies == outcomes["passed"] + outcomes["failed"]
    assert not list((pytester.path / "state" / "runs").glob("*/programs"))
    # The gate passed (pass@1 5/9 >= 0.4: the reference four ways and the contract-less answer): exit 0 despite the failing items, and its properties
    # are in the controller's JUnit XML.
    assert first.ret == 0
    text = xml.read_text()
    assert '<property name="specbench.contract.pass@1" value="0.555556" />' in text
    assert 'name="specbench.contract.pass@1.ci95"' in text
    assert '<property name="specbench.gate" value="passed" />' in text
    # A copy whose representative is not selected is evaluated itself.
    failed = outcomes["failed"]
    assert failed >= 9  # the wrong answers (4, 5, 6: one program) and the raising one, both checks; 8's contract
    again = pytester.runpytest_inprocess(*args, "--lf")
    outcomes = again.parseoutcomes()
    assert outcomes["failed"] == failed and "passed" not in outcomes
    # A copy alone (sample 5: its representative, sample 4, is not selected) is evaluated itself.
    alone = pytester.runpytest_inprocess(*args, "-k", "HumanEval-S/2 and 5 and functional", "-p", "no:cacheprovider")
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
    # #43), with dedupe on: 30 items, 30 questions to the recorded judge (a run with
    # dedupe off asks the same 30, which the on run's count alone already proves).
    assert CIFE.program_key(CIFE.load(None, None).tasks[0], Completion("x"), "correctness") is None
    lines = [{"task_id": t.task_id, "sample_index": i, "solution": t.data["reference_answer"]}
             for t in CIFE.load(None, None).tasks[:3] for i in range(2)]
    (pytester.path / "answers.jsonl").write_text("".join(json.dumps(l) + "\n" for l in lines))
    result = pytester.runpytest_inprocess("--specbench=cife", "--model=replay:answers.jsonl", "--specbench-dedupe=on",
                                          "--specbench-result-cache=off", "--specbench-report=on.json",
                                          f"--specbench-dir={pytester.path / 'on'}", "-p", "no:cacheprovider")
    # Without "warnings": an in-process run also counts ResourceWarnings of objects other
    # tests of this worker left to the garbage collector.
    assert {k: v for k, v in result.parseoutcomes().items() if k != "warnings"} == {"passed": 30}
    assert json.loads((pytester.path / "on.json").read_text())["manifest"]["roles"]["judge"]["asked"] == 30
    assert "specbench: dedupe:" not in result.stdout.str()
