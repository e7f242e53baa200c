"""The contract-cvt benchmark (ContractEval §6.2: a model writes contract-violating inputs),
end to end through pytest, the sandbox and a real local OpenAI-compatible HTTP server."""
from __future__ import annotations

import json
import re

import pytest

from openai_server import StubOpenAIServer
from pytest_specbench.benchmarks.contract.contract_cvt import AnswerError, parse_answer
from pytest_specbench.data.jsonl import read_jsonl
from pytest_specbench.benchmarks.contract.cvt_metrics import set_metrics

MERGE = "HumanEval-S/2"  # merge_unique_sorted(a, b): 0 both lists, 1 all ints, 2 a increasing, 3 b increasing

# Every input violates exactly its intended assert (tuples and None: Python literals, not JSON).
GOOD = """<think>Break one assert at a time.</think>
```python
{"assert_0": [{"input": [(1, 2), [3]]}, {"input": [None, [1]]}],
 "assert_1": [{"input": [[1, 2.5], [3]]}, {"input": [[1], [True]]}],
 "assert_2": [{"input": [[2, 1], [3]]}],
 "assert_3": [{"input": [[1], [5, 5]]}]}
```"""

# Two inputs satisfy the whole contract; one violates an assert besides its intended one.
MIXED = """```json
{"assert_0": [{"input": [[1], [2]]}, {"input": ["ab", [1]]}],
 "assert_2": [{"input": [[1, 2, 3], [4]]}, {"input": [[3, 1], [4]]}],
 "assert_3": [{"input": [[1, 1.5], [2, 2]]}],
 "assert_0,assert_3": [{"input": [7, [2, 2]]}]}
```"""


def answering(table):
    def answer(request):
        user = request["messages"][-1]["content"]
        name = re.search(r"Method Name: (\w+)", user).group(1)
        return table.get(name, "no idea")
    return answer


def run(pytester, *args):
    # In this process: the stub server's answers and the report are what these runs show, not
    # a Python of their own (the module's reference runs below are in one each).
    return pytester.runpytest_inprocess("--specbench=contract-cvt", "-p", "no:cacheprovider", "--model=reference", *args)


def metrics(pytester, name="r.json"):
    return json.loads((pytester.path / name).read_text())["benchmarks"]["contract-cvt"]


def stub_run(pytester, table, *args):
    with StubOpenAIServer(answering(table)) as server:
        result = run(pytester, "--model=openai:stub", f"--model-base-url={server.url}",
                     "--specbench-report=r.json", *args)
        return result, server


@pytest.fixture(scope="module")
def _reference_runs_memo():
    return {}


@pytest.fixture
def reference_runs(pytester, _reference_runs_memo):
    """The reference on the bundled suite, made once for the module (by the first test that
    asks, in its folder): serially (``-v``), under xdist (``-n 2``, evaluating every check
    again) and resumed from the last run's journal, in one folder.  The serial and resumed runs are made in this
    process (``pytester`` is function-scoped, hence the module's memo): what they show is
    their report and output, the sandbox runs the samples either way, and a Python of its
    own with the plugin's import was ~1.5 CPU s a run; the -n 2 run's controller too (session
    22; its two workers are xdist's own Pythons, whose channel is what it tests, as
    test_dedupe's -n 2 run)."""
    if not _reference_runs_memo:
        folder = pytester.path
        args = ("--specbench=contract-cvt", "-p", "no:cacheprovider", "--model=reference")
        serial = pytester.runpytest_inprocess(*args, "--specbench-report=serial.json", "-v")
        # (the result cache off: else the serial run's results are read back by the
        # controller and no worker starts -- the run's one line says so)
        parallel = pytester.runpytest_inprocess(*args, "--specbench-report=parallel.json", "-n", "2",
                                                "--specbench-result-cache=off")
        resumed = pytester.runpytest_inprocess(*args, "--specbench-report=resumed.json", "--specbench-resume")
        _reference_runs_memo["runs"] = folder, serial, parallel, resumed
    return _reference_runs_memo["runs"]


def section_of(folder, name):
    return json.loads((folder / name).read_text())["benchmarks"]["contract-cvt"]


@pytest.mark.slow  # (three whole runs, one under xdist)
def test_reference_answers_score_avc_100_on_the_bundled_suite(reference_runs):
    folder, result, _, _ = reference_runs
    result.assert_outcomes(passed=11, skipped=1)
    result.stdout.fnmatch_lines(["*specbench::contract-cvt::HumanEval-S/2::0::violations PASSED*",
                                 "*specbench contract-cvt (bundled sample suite; 11 tasks*", "*avc *100.00%*"])
    section = section_of(folder, "serial.json")
    assert section["metrics"]["avc"] == 1.0 and section["metrics"]["all_rejected"] == 1.0
    # The sandbox's per-assert outcomes reproduce the suite's own fired_individually labels:
    # the TS figures equal those computed from the data file alone.
    from pytest_specbench.benchmarks.contract.evalplus import bundled_folder

    rows = [row for _, row in read_jsonl(bundled_folder("contract") / "contracteval" / "contracteval_rebuilt.jsonl")]
    for key, mode in (("ts", "jaccard"), ("ts_exact", "exact"), ("ts_upstream", "upstream")):
        assert section["metrics"][key] == pytest.approx(set_metrics(rows, mode)[1]["ts"])
    assert section["metrics"]["cvts_proposed"] == sum(len(r["cvts"]) for r in rows)


def test_good_cvts_from_a_model(pytester):
    result, server = stub_run(pytester, {"merge_unique_sorted": GOOD}, "-k", MERGE)
    result.assert_outcomes(passed=1)
    assert server.chat_count == 1
    prompt = server.chat_requests()[0]["body"]["messages"][-1]["content"]
    assert "assert_2: assert all((a[k] < a[k + 1] for k in range(len(a) - 1)))" in prompt
    m = metrics(pytester)["metrics"]
    assert (m["avc"], m["ts"], m["ts_exact"], m["ts_upstream"], m["cvts_proposed"]) == (1.0, 1.0, 1.0, 1.0, 6)


def test_inputs_that_do_not_violate_lower_avc_exactly(pytester):
    result, _ = stub_run(pytester, {"merge_unique_sorted": MIXED}, "-k", MERGE)
    result.assert_outcomes(failed=1)
    assert ("2 of 6 proposed inputs do not violate the contract; "
            "first: merge_unique_sorted([1], [2]) passes the contract") in result.stdout.str()
    m = metrics(pytester)["metrics"]
    assert m["avc"] == pytest.approx(4 / 6)          # [1],[2] and [1,2,3],[4] are valid inputs
    # The paper's TS (§3.4) averages the Jaccard of fired and intended asserts over the 4 inputs
    # that fire one (the two valid inputs lower AVC, not TS): 1 + 1 + 1/2 ([1,1.5],[2,2] also
    # fires assert_1) + 1 ([7],[2,2] fires both of its intended asserts).
    assert m["ts"] == pytest.approx(3.5 / 4)
    assert m["ts_exact"] == pytest.approx(3 / 6)     # exact, over all 6 inputs
    assert m["ts_upstream"] == pytest.approx(5 / 7)  # 5 of 7 (input, intended assert) pairs fire
    assert m["all_rejected"] == 0.0


def test_garbage_answers_fail_with_one_line(pytester):
    deep = "```json\n" + "[" * 50000 + "]" * 50000 + "\n```"
    result, _ = stub_run(pytester, {"merge_unique_sorted": "I'm sorry, I can't help with that.", "max_step": deep},
                         "-k", f"{MERGE} or Mbpp-S/1")
    result.assert_outcomes(failed=2)
    result.stdout.fnmatch_lines(["*HumanEval-S/2 sample 0 violations*",  # the section header names the item,
                                 "unusable answer: no JSON object of test cases*"])  # its one line, the reason
    assert "Traceback" not in result.stdout.str() + result.stderr.str()
    m = metrics(pytester)["metrics"]
    assert m["answers_parsed"] == 0.0 and "avc" not in m


@pytest.mark.slow  # (three whole runs, one under xdist)
def test_xdist_and_resume_give_the_same_report(reference_runs):
    folder, _, parallel, resumed = reference_runs
    parallel.stdout.fnmatch_lines(["*2 workers [[]12 items[]]*"])  # the checks ran on xdist's workers
    assert "no xdist workers started" not in parallel.stdout.str()
    resumed.stdout.fnmatch_lines(["*resuming run*11 items already finished*"])
    serial, parallel, again = (section_of(folder, n) for n in ("serial.json", "parallel.json", "resumed.json"))
    assert serial == parallel
    assert serial["metrics"] == again["metrics"] and serial["tasks"] == again["tasks"]


def test_parse_answer_units():
    names, params = ["assert_0", "assert_1"], ["a", "b"]
    cases, notes = parse_answer('{"assert_1,assert_9": [{"input": {"b": 1, "a": 2}}, {"input": 5}],'
                                ' "assert_0": {"input": [1, 2]}}', names, params)
    assert [c.intended for c in cases] == [["assert_1"], ["assert_1"], ["assert_0"]]
    assert cases[0].call == ((2, 1), {}) and cases[1].call is None and cases[2].call == ((1, 2), {})
    assert "unknown assert 'assert_9'" in notes[0]
    for bad in ("", "```json\n[1, 2]\n```", "{}", "x" * 500_001):
        with pytest.raises(AnswerError):
            parse_answer(bad, names, params)
    many = json.dumps({"assert_0": [{"input": [i, i]} for i in range(600)]})
    cases, notes = parse_answer(many, names, params)
    assert len(cases) == 500 and "600 inputs proposed" in notes[0]


def test_replayed_answers_tuple_and_list_inputs_are_not_confused(pytester):
    # Same task, same process: (1, 2) violates "a is a list", [1, 2] does not; the sandbox
    # input sets of the two samples must not be shared.
    rows = [{"task_id": MERGE, "sample_index": 0, "solution": '{"assert_0": [{"input": [[1, 2], [3]]}]}'},
            {"task_id": MERGE, "sample_index": 1, "solution": '```python\n{"assert_0": [{"input": [(1, 2), [3]]}]}\n```'},
            {"task_id": MERGE, "sample_index": 2, "solution": '{"assert_0": [{"input": 5}]}'}]
    samples = pytester.path / "s.jsonl"
    samples.write_text("".join(json.dumps(r) + "\n" for r in rows))
    result = run(pytester, f"--model=replay:{samples}", "--specbench-report=r.json")
    result.assert_outcomes(passed=1, failed=2)
    assert "merge_unique_sorted(<5>) input is not a list of arguments" in result.stdout.str()
    checks = [s["checks"]["violations"] for s in metrics(pytester)["tasks"][MERGE]["samples"]]
    assert [c["rejected"] for c in checks] == [0, 1, 0]
