"""The speed-ups keep verdicts and reports: outputs judged by digest or by value,
and an identical re-run under xdist that reads every verdict from the result cache."""
from __future__ import annotations

import json

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
    result = pytester.runpytest_subprocess("--specbench=contract", "-p", "no:cacheprovider", f"--model=replay:{samples}",
                                           "--specbench-checks=functional", "--specbench-report=r.json")
    result.assert_outcomes(passed=3, failed=1)
    tasks = json.loads((pytester.path / "r.json").read_text())["benchmarks"]["contract"]["tasks"]
    merge = tasks["HumanEval-S/2"]["samples"][0]["checks"]["functional"]
    assert merge["failed_input"] == 0
    assert merge["reason"] == "base input #0: expected [1, 2, 4, 9, 10], got (1, 2, 4, 9, 10)"


def test_identical_rerun_under_xdist_reads_the_cache_without_workers(pytester):
    first = pytester.runpytest_subprocess("--specbench=contract", "-p", "no:cacheprovider", "--model=reference",
                                          "-n", "2", "--specbench-report=a.json")
    first.assert_outcomes(passed=23, skipped=1)
    first.stdout.fnmatch_lines(["*created: 2/2 workers*"])
    second = pytester.runpytest_subprocess("--specbench=contract", "-p", "no:cacheprovider", "--model=reference",
                                           "-n", "2", "--specbench-report=b.json")
    second.assert_outcomes(passed=23, skipped=1)
    second.stdout.fnmatch_lines(["*specbench: all 23 results are in the result cache*no xdist workers started*"])
    second.stdout.no_fnmatch_line("*created: 2/2 workers*")
    a, b = (json.loads((pytester.path / n).read_text())["benchmarks"] for n in ("a.json", "b.json"))
    assert a == b
    # One sample the cache has not seen brings the workers back.
    samples = pytester.path / "s.jsonl"
    samples.write_text(json.dumps({"task_id": "HumanEval-S/2", "solution": MERGE_AS_TUPLE}) + "\n")
    third = pytester.runpytest_subprocess("--specbench=contract", "-p", "no:cacheprovider", f"--model=replay:{samples}",
                                          "-n", "2", "--specbench-report=c.json")
    third.stdout.fnmatch_lines(["*created: 2/2 workers*"])
    third.stdout.no_fnmatch_line("*results are in the result cache*")
