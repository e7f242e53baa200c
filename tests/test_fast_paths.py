"""The speed-ups keep verdicts and reports: outputs judged by digest or by value,
and an identical re-run under xdist that reads every verdict from the result cache."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_specbench.benchmarks.contract import evalplus
from pytest_specbench.benchmarks.contract.evalplus import EvalPlusData, bundled_folder
from pytest_specbench.execution.limits import Limits
from pytest_specbench.execution.python import CallsJob, PythonExecutor
from pytest_specbench.execution.wire import string_digest
from pytest_specbench.models.base import Completion
from fakes import FakeSettings, fake_context
from session_items import configured_session

CLAMPED_MEAN_NOISY = ("def clamped_mean(values, low, high):\n"
                      "    adjusted = [min(max(v, low), high) for v in values]\n"
                      "    return sum(adjusted) / len(adjusted) + 1e-9\n")
DIGIT_SUM_AS_FLOAT = ("def alternating_digit_sum(digits):\n"
                      "    return float(sum(int(c) if i % 2 == 0 else -int(c) for i, c in enumerate(digits)))\n")
MERGE_AS_TUPLE = "def merge_unique_sorted(a, b):\n    return tuple(sorted(set(a) | set(b)))\n"
MERGE_COUNTS_OTHER_ORDER = ("def merge_counts(a, b):\n"
                            "    result = {}\n"
                            "    for key in reversed(list(a) + [k for k in b if k not in a]):\n"
                            "        result[key] = a.get(key, 0) + b.get(key, 0)\n"
                            "    return result\n")


def test_outputs_equal_but_encoded_differently_are_judged_by_value(pytester):
    """A digest match settles a verdict; a mismatch falls back to EvalPlus's comparison."""
    rows = [{"task_id": "HumanEval-S/0", "solution": CLAMPED_MEAN_NOISY},  # within atol
            {"task_id": "HumanEval-S/1", "solution": DIGIT_SUM_AS_FLOAT},  # -2.0 == -2, as in EvalPlus
            {"task_id": "Mbpp-S/2", "solution": MERGE_COUNTS_OTHER_ORDER},  # dicts equal, keys reordered
            {"task_id": "HumanEval-S/2", "solution": MERGE_AS_TUPLE}]  # a tuple is not a list
    samples = pytester.path / "s.jsonl"
    samples.write_text("".join(json.dumps(r) + "\n" for r in rows))
    result = pytester.runpytest_inprocess("--specbench=contract", "-p", "no:cacheprovider", f"--model=replay:{samples}",
                                          "--specbench-checks=functional", "--specbench-report=r.json")
    result.assert_outcomes(passed=3, failed=1)
    tasks = json.loads((pytester.path / "r.json").read_text())["benchmarks"]["contract"]["tasks"]
    merge = tasks["HumanEval-S/2"]["samples"][0]["checks"]["functional"]
    assert merge["failed_input"] == 0
    assert merge["reason"] == "base input #0: expected [1, 2, 4, 9, 10], got (1, 2, 4, 9, 10)"


@pytest.mark.slow
def test_identical_rerun_under_xdist_reads_the_cache_without_workers(pytester):
    # The first run only fills the result cache, in this process and without xdist (the cache
    # is keyed by content, not by how the run was spread; a Python and two workers were most
    # of its cost); the rerun under xdist is the subject.
    first = pytester.runpytest_inprocess("--specbench=contract", "-p", "no:cacheprovider", "--model=reference",
                                         "-n", "0", "--specbench-report=a.json")
    first.assert_outcomes(passed=23, skipped=1)
    # (in this process too: whether workers start is the controller's decision, and its output says it)
    second = pytester.runpytest_inprocess("--specbench=contract", "-p", "no:cacheprovider", "--model=reference",
                                          "-n", "2", "--specbench-report=b.json")
    second.assert_outcomes(passed=23, skipped=1)
    second.stdout.fnmatch_lines(["*specbench: all 23 results are in the result cache*no xdist workers started*"])
    second.stdout.no_fnmatch_line("*created: 2/2 workers*")
    a, b = (json.loads((pytester.path / n).read_text())["benchmarks"] for n in ("a.json", "b.json"))
    assert a == b
    # One sample the cache has not seen brings the workers back (one is enough to show it): the
    # controller's decision, made when the run is configured, leaves xdist's -n as it was, and
    # xdist then starts its workers (#45, session 21: that run's worker only showed this).
    samples = pytester.path / "s.jsonl"
    samples.write_text(json.dumps({"task_id": "HumanEval-S/2", "solution": MERGE_AS_TUPLE}) + "\n")
    # (what xdist's own command-line hook makes of -n 1, which configuring alone does not run)
    one_worker = ("--dist", "load", "--tx", "popen")
    run = configured_session(pytester, "--specbench=contract", "-p", "no:cacheprovider", f"--model=replay:{samples}",
                             *one_worker)
    assert run.workers_skipped == 0 and run.config.option.dist == "load" and run.config.option.tx
    # ... and the same session over the answers the cache has seen runs here, without workers.
    cached = configured_session(pytester, "--specbench=contract", "-p", "no:cacheprovider", "--model=reference",
                                *one_worker)
    assert cached.workers_skipped == 23 and cached.config.option.dist == "no"


# ------------------------------------------------------- long string results
PROJECT = Path(__file__).resolve().parents[1]
LIMITS = Limits(call_cpu=1.0, startup_cpu=2.0, memory_mb=512, processes=16, tmp_mb=16)


@pytest.fixture(scope="module")
def executor():
    ex = PythonExecutor(LIMITS, hide=[str(PROJECT)])
    ex.ensure_started()
    yield ex
    ex.close()


def test_a_long_string_result_comes_back_as_its_digest_only_when_asked(executor):
    code = "def f(n):\n    return 'ab' * n\n"
    calls = [((3,), {}), ((60,), {})]
    asked = executor.run(None, CallsJob(code, "f", "strings", lambda: calls, [0, 1], str_digest_over=10))
    short, long = asked.outcomes[0], asked.outcomes[1]
    assert short.str_digest is None and short.value == "ababab"
    assert long.str_digest == string_digest("ab" * 60) and long.str_len == 120 and long.str_prefix == "ab" * 50
    with pytest.raises(ValueError, match="only the digest of a 120-character string"):
        long.value
    plain = executor.run(None, CallsJob(code, "f", "strings", lambda: calls, [1]))
    assert plain.outcomes[1].str_digest is None and plain.outcomes[1].value == "ab" * 60


def test_string_digests_settle_the_functional_check_both_ways(executor, tmp_path, monkeypatch):
    monkeypatch.setattr(evalplus, "DIGEST_STRINGS_OVER", 3)  # every bundled caesar_lower output is longer
    data = EvalPlusData.load(bundled_folder("contract") / "evalplus")
    task, digest = data.tasks["HumanEval-S/6"], data.digest["HumanEval-S/6"]
    ctx = fake_context(FakeSettings(limits=LIMITS), cache=tmp_path, executors={"python": executor})
    right = ("def caesar_lower(text, shift):\n"
             "    return ''.join(c if c == ' ' else chr((ord(c) - 97 + shift) % 26 + 97) for c in text)\n")
    wrong = "def caesar_lower(text, shift):\n    return text.upper()\n"
    ok = evalplus.functional_check(task, digest, Completion(right, {"trusted_reference": True}), ctx)
    assert ok.passed, ok.message
    bad = evalplus.functional_check(task, digest, Completion(wrong, {"trusted_reference": True}), ctx)
    assert not bad.passed
    assert bad.message == "base input #0: expected 'cde zab', got another string (7 characters, starting 'ABC XYZ')"


def test_sample_annotations_are_evaluated_as_plain_python_does(executor):
    """The harness's own ``from __future__ import annotations`` must not reach the
    sample: EvalPlus fails a solution that annotates with ``List`` but never
    imports it (NameError when the function is defined), and so must we."""
    calls = [((1,), {})]
    missing = executor.run(None, CallsJob("def f(x) -> List[int]:\n    return [x]\n", "f", "annot", lambda: calls, [0]))
    assert missing.load_error and "NameError" in missing.load_error and not missing.outcomes
    imported = executor.run(None, CallsJob("from typing import List\ndef f(x) -> List[int]:\n    return [x]\n", "f",
                                              "annot", lambda: calls, [0]))
    assert imported.outcomes[0].value == [1]
