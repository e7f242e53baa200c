"""The plugin end to end on the bundled ContractEval suite (pytester).

The runs are made in this process (``runpytest_inprocess``: samples still run in
the sandbox's own processes)."""
from __future__ import annotations

import json

import pytest

MERGE_OK = ("def merge_unique_sorted(a, b):\n"
            "    assert isinstance(a, list) and isinstance(b, list)\n"
            "    assert all(type(x) is int for x in a + b)\n"
            "    assert all(x < y for x, y in zip(a, a[1:])) and all(x < y for x, y in zip(b, b[1:]))\n"
            "    return sorted(set(a) | set(b))\n")
MERGE_NO_CONTRACT = "def merge_unique_sorted(a, b):\n    return sorted(set(a) | set(b))\n"
MERGE_WRONG = "def merge_unique_sorted(a, b):\n    return a + b\n"
CAESAR_FENCED = ("Sure! Here is the function:\n\n```python\ndef caesar_lower(text, shift):\n"
                 "    return ''.join(c if c == ' ' else chr((ord(c) - 97 + shift) % 26 + 97) for c in text)\n"
                 "\nprint(caesar_lower('abc', 1))\n```\nIt shifts each letter.")


def write_samples(pytester, rows, name="samples.jsonl"):
    path = pytester.path / name
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def run(pytester, *args):
    return pytester.runpytest_inprocess("--specbench=contract", "-p", "no:cacheprovider", "--model=reference", *args)


def load_report(path):
    return json.loads(path.read_text())


def test_reference_scores_100_percent_on_the_bundled_suite(pytester):
    result = run(pytester, "--model=reference", "--specbench-report=r.json")
    result.assert_outcomes(passed=23, skipped=1)
    result.stdout.fnmatch_lines(["*specbench contract (bundled sample suite; 12 tasks*", "*pass@1 *100.00%*",
                                 "*csr *100.00%*"])
    report = load_report(pytester.path / "r.json")
    contract = report["benchmarks"]["contract"]
    assert contract["metrics"]["pass@1"] == 1.0 and contract["metrics"]["csr"] == 1.0
    sample = contract["tasks"]["HumanEval-S/2"]["samples"][0]
    assert sample["index"] == 0
    assert sample["checks"]["functional"]["passed"] is True
    assert sample["checks"]["contract"] == {"passed": True, "rejected": 7, "total": 7}
    assert report["manifest"]["model"]["spec"] == "reference"
    assert report["manifest"]["sandbox"]["limits"]["call_cpu"] == 1.0


def test_replayed_samples_are_judged_per_check(pytester):
    samples = write_samples(pytester, [
        {"task_id": "HumanEval-S/2", "sample_index": 0, "solution": MERGE_OK},
        {"task_id": "HumanEval-S/2", "sample_index": 1, "solution": MERGE_NO_CONTRACT},
        {"task_id": "HumanEval-S/2", "sample_index": 2, "solution": MERGE_WRONG},
        {"task_id": "HumanEval-S/2", "sample_index": 3, "solution": "this is not python ((("},
        {"task_id": "HumanEval-S/6", "solution": CAESAR_FENCED},
    ])
    result = run(pytester, f"--model=replay:{samples}", "--specbench-report=r.json", "--specbench-k=1,2")
    report = load_report(pytester.path / "r.json")["benchmarks"]["contract"]
    merge = [s["checks"] for s in report["tasks"]["HumanEval-S/2"]["samples"]]
    assert [c["functional"]["passed"] for c in merge] == [True, True, False, False]
    assert [c["contract"]["passed"] for c in merge] == [True, False, False, False]
    assert merge[1]["contract"]["rejected"] == 0
    assert report["tasks"]["HumanEval-S/6"]["samples"][0]["checks"]["functional"]["passed"] is True
    # pass@1 over the two tasks with samples: (2/4 + 1/1) / 2
    assert report["metrics"]["pass@1"] == pytest.approx(0.75)
    assert set(report["tasks"]) == {"HumanEval-S/2", "HumanEval-S/6"}
    result.stdout.fnmatch_lines(["*10 of 12 contract tasks have no samples*"])
    assert result.ret == 1


def test_completion_format_and_directory_format(pytester):
    body = "    return sorted(set(a) | set(b))\n"
    samples = write_samples(pytester, [{"task_id": "HumanEval-S/2", "completion": body}])
    folder = pytester.path / "samples_dir" / "HumanEval-S_2"
    folder.mkdir(parents=True)
    (folder / "0.py").write_text(MERGE_OK)
    for spec in (f"replay:{samples}", f"replay:{folder.parent}"):
        result = run(pytester, f"--model={spec}", "--specbench-checks=functional", "-k", "HumanEval-S/2")
        result.assert_outcomes(passed=1)


def test_collection_is_stable_and_selectable(pytester):
    first = run(pytester, "--collect-only", "-q")
    second = run(pytester, "--collect-only", "-q")
    ids = [line for line in first.outlines if line.startswith("specbench::")]
    assert len(ids) == 24 and ids == [line for line in second.outlines if line.startswith("specbench::")]
    assert ids[0] == "specbench::contract::HumanEval-S/0::0::functional"
    chosen = run(pytester, "-k", "Mbpp-S/3 and functional")
    chosen.assert_outcomes(passed=1)
    chosen.stdout.fnmatch_lines(["*collected 24 items / 23 deselected / 1 selected*"])


def test_last_failed_reruns_only_failures(pytester):
    samples = write_samples(pytester, [{"task_id": "HumanEval-S/2", "solution": MERGE_WRONG}])
    args = ("--specbench=contract", f"--model=replay:{samples}")
    pytester.runpytest_inprocess(*args).assert_outcomes(failed=2)
    pytester.runpytest_inprocess(*args, "--lf").assert_outcomes(failed=2)
    pytester.runpytest_inprocess(*args, "--lf", "--specbench-checks=functional").assert_outcomes(failed=1)


# -n 2 reports what -n 0 does (passing, failing and contract-only-failing answers, with copies):
# tests/test_dedupe.py::test_under_xdist_the_report_is_the_serial_one_and_no_program_is_evaluated_twice,
# the one xdist run of ContractEval, which asserts the dedupe, model and gate properties of
# three other runs too (#45, session 21).


@pytest.mark.parametrize("args, message", [
    (("--specbench=nosuch",), "*specbench: --specbench: unknown benchmark 'nosuch'; known: *contract*"),
    (("--specbench=contract", "--model=gpt9"), "*--model: unknown model 'gpt9'; known kinds: *replay*"),
    (("--specbench=contract", "--model=replay:missing.jsonl"), "*--model: replay file or directory not found*"),
    (("--specbench=contract", "--model=reference", "--specbench-data=nowhere"), "*--specbench-data: data root not found*"),
    (("--specbench=contract", "--model=reference", "--specbench-checks=speed"), "*--specbench-checks: unknown check 'speed'*"),
    (("--specbench=contract", "--model=reference", "--specbench-call-cpu=-1"), "*--specbench-call-cpu: must be a positive number*"),
    (("--specbench=contract", "--model=reference", "--specbench-k=0"), "*--specbench-k: expected positive whole numbers*"),
])
def test_bad_options_are_one_line_errors(pytester, args, message):
    result = pytester.runpytest_inprocess(*args)
    assert result.ret != 0
    result.stderr.fnmatch_lines([message])
    assert "Traceback" not in result.stderr.str() + result.stdout.str()


def test_bad_sample_files_are_one_line_errors(pytester):
    bad = pytester.path / "bad.jsonl"
    bad.write_text('{"task_id": "HumanEval-S/2", "solution": "x"}\n{"task_id": oops}\n')
    result = run(pytester, f"--model=replay:{bad}")
    result.stderr.fnmatch_lines([f"*{bad}:2: malformed JSON*"])
    empty = pytester.path / "empty.jsonl"
    empty.write_text("")
    run(pytester, f"--model=replay:{empty}").stderr.fnmatch_lines([f"*{empty}: no samples in this file*"])
    nofield = pytester.path / "nofield.jsonl"
    nofield.write_text('{"task_id": "HumanEval-S/2"}\n')
    run(pytester, f"--model=replay:{nofield}").stderr.fnmatch_lines(["*:1: missing field 'solution' or 'completion'*"])


def test_samples_for_unknown_tasks_are_a_warning(pytester):
    samples = write_samples(pytester, [{"task_id": "HumanEval-S/2", "solution": MERGE_OK},
                                       {"task_id": "Mbpp/9999", "solution": "x"}])
    result = run(pytester, f"--model=replay:{samples}")
    result.stdout.fnmatch_lines(["*1 sample task ids are not in the contract data and are ignored: Mbpp/9999*"])
    result.assert_outcomes(passed=2)


def test_malformed_data_line_names_file_and_line(pytester):
    root = pytester.path / "data"
    (root / "contracteval").mkdir(parents=True)
    (root / "evalplus").mkdir()
    (root / "evalplus" / "HumanEvalPlus.jsonl").write_text("")
    (root / "contracteval" / "contracteval_rebuilt.jsonl").write_text("{}\n")
    result = run(pytester, f"--specbench-data={root}")
    result.stderr.fnmatch_lines(["*contracteval_rebuilt.jsonl:1: missing field 'task_id'*"])


def test_project_tests_are_not_collected_with_specbench(pytester):
    pytester.makepyfile(test_mine="def test_x():\n    assert False\n")
    run(pytester, "-k", "Mbpp-S/1 and functional").assert_outcomes(passed=1)
    pytester.runpytest_inprocess("test_mine.py").assert_outcomes(failed=1)


# Sleeps 25 ms on each of its ~20 functional inputs: a run that executes it takes over 0.25 s
# on that item, one that reads the result cache a few milliseconds.
MERGE_SLOW = ("import time\n\ndef merge_unique_sorted(a, b):\n    time.sleep(0.025)\n"
              "    return sorted(set(a) | set(b))\n")


def _item_times(path):
    import xml.etree.ElementTree as ET

    return {f"{case.get('classname')}.{case.get('name')}": float(case.get("time"))
            for case in ET.parse(path).iter("testcase")}


def test_an_identical_second_run_reuses_results_and_reports_the_same(pytester):
    samples = write_samples(pytester, [{"task_id": "HumanEval-S/2", "solution": MERGE_SLOW},
                                       {"task_id": "HumanEval-S/6", "solution": CAESAR_FENCED}])
    args = (f"--model=replay:{samples}", "-k", "HumanEval-S/2 or HumanEval-S/6")
    run(pytester, *args, "--specbench-report=first.json", "--junitxml=first.xml")
    second_run = run(pytester, *args, "--specbench-report=second.json", "--junitxml=second.xml")
    first, second = (load_report(pytester.path / n)["benchmarks"] for n in ("first.json", "second.json"))
    assert first == second
    slow = [name for name in _item_times(pytester.path / "first.xml") if "HumanEval-S/2" in name and "functional" in name]
    assert slow
    # The slow sample sleeps on every one of its many inputs the first time only.
    assert all(_item_times(pytester.path / "first.xml")[n] > 0.25 for n in slow)
    # The second time every verdict is read from the result cache (the mechanism, not a time:
    # a loaded machine must not fail this).
    second_run.stdout.fnmatch_lines(["specbench: all * results came from the result cache*no check was run*"])
    # Off means executed again.
    third = run(pytester, *args, "--specbench-result-cache=off", "--junitxml=third.xml")
    assert all(_item_times(pytester.path / "third.xml")[n] > 0.25 for n in slow)
    assert "came from the result cache" not in third.stdout.str()


def test_bad_result_cache_mode_is_a_one_line_error(pytester):
    result = run(pytester, "--specbench-result-cache=maybe")
    result.stderr.fnmatch_lines(["*--specbench-result-cache: expected readwrite or off, got 'maybe'*"])


def test_an_answer_without_code_says_so_and_accepts_no_contract_violating_input(pytester):
    """Issue #32, point 8: a small model's prose-only answer is "the answer has no code
    block", not the SyntaxError of its first sentence, and no CVT counts as "accepted"
    (none ran; it rejects none, as upstream scores a sample that does not load)."""
    samples = write_samples(pytester, [
        {"task_id": "HumanEval-S/2", "sample_index": 0, "solution": "I do not know this task."},
        {"task_id": "HumanEval-S/2", "sample_index": 1, "solution": "Sure! Merge them, then sort the result."},
        {"task_id": "HumanEval-S/2", "sample_index": 2, "solution": "Here:\n```python\ndef merge_unique_sorted(a, b:\n```"},
    ])
    result = run(pytester, f"--model=replay:{samples}", "--specbench-report=r.json")
    merge = [s["checks"] for s in load_report(pytester.path / "r.json")["benchmarks"]["contract"]["tasks"]
             ["HumanEval-S/2"]["samples"]]
    for checks in merge[:2]:
        assert checks["functional"]["reason"] == "the answer has no code block"
        assert checks["contract"].pop("message").startswith("the answer has no code block")
        assert checks["contract"] == {"passed": False, "rejected": 0, "total": 7, "no_code": True}
    # Code with a syntax error is code: its error is reported, and still nothing is "accepted".
    assert "SyntaxError" in merge[2]["functional"]["reason"]
    assert "accepted" not in merge[2]["contract"] and merge[2]["contract"]["rejected"] == 0
    result.stdout.fnmatch_lines(["*the answer has no code block: none of the 7 contract-violating inputs could be tried*",
                                 "*the program does not load: SyntaxError*none of the 7 contract-violating inputs ran*"])
    assert "accepted" not in result.stdout.str()
