"""nl2postcond's upstream rules that are pure logic (in-process, no sandbox):
``--nl2postcond-long-ints=upstream`` (docs/nl2postcond.md, "HumanEval/83")."""
from __future__ import annotations

from pytest_specbench.benchmarks.nl2postcond.evaluate import has_long_int, over_upstream_digits
from pytest_specbench.benchmarks.nl2postcond.tools import agreement
from pytest_specbench.pyspec.blocks import BlockOutcome


def test_an_output_with_an_int_past_cpythons_text_limit_fails_under_upstreams_rule_only():
    """HumanEval/83's reference returns 18 * 10 ** (n - 2): 4,300 digits is fine, 4,301 is past
    CPython's default int_max_str_digits, wherever the int sits in the output."""
    at_limit, past = 18 * 10 ** 4298, 18 * 10 ** 4299  # 4,300 and 4,301 digits
    assert not has_long_int(at_limit) and not has_long_int(-at_limit) and not has_long_int([True, 1.5, "9" * 9000])
    assert all(has_long_int(v) for v in (past, -past, [1, [2, (past,)]], {"k": {past}}, {past: 0}))
    holds, violated = BlockOutcome("holds"), BlockOutcome("violated", "AssertionError")
    cases = [{"return_value": at_limit}, {"return_value": past}, {"return_value": [past]}]
    got = over_upstream_digits([holds, holds, violated], cases)
    assert got[0] == holds and got[2] == violated  # an outcome that already fails keeps its own reason
    assert (got[1].kind, got[1].exc_type) == ("raised", "ValueError") and "4300 digits" in got[1].line


def test_the_agreement_script_names_the_long_int_cause():
    row = {"task_id": "HumanEval/83", "r_num": 5, "test_set_correct": False, "base_error": None}
    assert "4,300 digits" in agreement._known_cause(row)
