"""Unit tests of the pure parts: pass@k, the wire codec, EvalPlus comparison and inputs, the sanitizer."""
from __future__ import annotations

import collections
import math

import pytest

from pytest_specbench.benchmarks.contract.evalplus_data import mbpp_deserialize_inputs, outputs_match
from pytest_specbench.benchmarks.contract.sanitize import clean_sample, code_extract, extract_code_field, sanitize
from pytest_specbench.execution import wire
from pytest_specbench.metrics.passk import pass_at_k, pass_at_k_table


def test_pass_at_k_matches_the_closed_form():
    # 1 - C(n-c, k)/C(n, k)
    for n, c, k in [(10, 3, 1), (10, 3, 5), (200, 17, 100), (5, 0, 1), (5, 5, 3)]:
        expected = 1.0 if n - c < k else 1 - math.comb(n - c, k) / math.comb(n, k)
        assert pass_at_k(n, c, k) == pytest.approx(expected)


def test_pass_at_k_table_drops_k_larger_than_samples():
    table = pass_at_k_table({"a": (2, 1), "b": (2, 2)}, [1, 2, 10])
    assert table == {"pass@1": pytest.approx(0.75), "pass@2": pytest.approx(1.0)}


@pytest.mark.parametrize("value", [
    None, True, 3, -2.5, float("inf"), "x", [1, (2, 3)], (1,), {1: "a", (2, 3): [4]}, {1, 2}, frozenset({3}),
    b"\x00\xff", 1 + 2j, pytest.param(10 ** 5000, id="huge-int"), collections.Counter("abca"),
    collections.OrderedDict(a=1),
])
def test_wire_round_trip_gives_plain_equal_values(value):
    decoded = wire.loads(wire.dumps(value))
    assert decoded == value
    assert type(decoded).__module__ == "builtins"


def test_wire_never_decodes_to_an_object_equal_to_anything():
    class Liar:
        def __eq__(self, other):
            return True

    decoded = wire.loads(wire.dumps(Liar()))
    assert decoded != 1 and decoded != "anything"


def test_wire_rejects_garbage():
    for garbage in (b"{", b'{"zz": 1}', b"[" * 100000):
        with pytest.raises((ValueError, RecursionError)):
            wire.loads(garbage)


def test_outputs_match_float_tolerance_and_types():
    task = {"task_id": "HumanEval/2", "entry_point": "f", "atol": 1e-6}
    assert outputs_match(task, [1], 0.5000001, 0.5)
    assert not outputs_match(task, [1], 0.51, 0.5)
    assert not outputs_match(task, [1], "0.5", 0.5)
    plain = {"task_id": "HumanEval/9", "entry_point": "f", "atol": 0}
    assert outputs_match(plain, [1], [1.0000000001], [1.0])  # float outputs get atol 1e-6, as in EvalPlus
    assert not outputs_match(plain, [1], (1,), [1])  # a tuple is not a list


def test_outputs_match_special_oracles():
    find_zero = {"task_id": "HumanEval/32", "entry_point": "find_zero", "atol": 1e-4}
    assert outputs_match(find_zero, [[-6, 11, -6, 1]], 1.0, 2.0)  # any root passes
    assert not outputs_match(find_zero, [[-6, 11, -6, 1]], 1.5, 1.0)
    set_eq = {"task_id": "Mbpp/2", "entry_point": "similar_elements", "atol": 0}
    assert outputs_match(set_eq, [(1, 2), (2, 1)], (2, 1), (1, 2))
    not_none = {"task_id": "Mbpp/737", "entry_point": "check_str", "atol": 0}
    assert outputs_match(not_none, ["a"], "match", True)
    assert not outputs_match(not_none, ["a"], None, True)


def test_mbpp_inputs_get_their_tuples_back():
    assert mbpp_deserialize_inputs("Mbpp/2", [[[1, 2], [3]]]) == [[(1, 2), (3,)]]
    assert mbpp_deserialize_inputs("Mbpp/63", [[[[1, 2], [3, 4]]]]) == [[[(1, 2), (3, 4)]]]
    assert mbpp_deserialize_inputs("Mbpp/11", [["ab", "a"]]) == [["ab", "a"]]


def test_sanitizer_takes_code_out_of_markdown_and_prose():
    text = "Here you go:\n```python\nimport math\n\ndef f(x):\n    return helper(x)\n\ndef helper(x):\n    return math.sqrt(x)\n\nprint(f(4))\nassert f(4) == 2\n```\nThis works because..."
    code = sanitize(text, "f")
    assert code == "import math\ndef f(x):\n    return helper(x)\ndef helper(x):\n    return math.sqrt(x)"


def test_sanitizer_keeps_the_first_definition_and_drops_unreachable_ones():
    code = sanitize("def f():\n    return 1\ndef f():\n    return 2\ndef g():\n    return 3\n", "f")
    assert code == "def f():\n    return 1"


def test_code_extract_of_unparseable_text_is_its_first_line():
    assert code_extract("just words\nmore words here") == "just words"


def test_contract_eval_json_answers_are_unwrapped():
    text = "<think>short</think>\n```json\n{\n  \"code\": '''\ndef f(x):\n    assert x > 0\n    return x\n'''\n}\n```"
    assert extract_code_field(text).strip().startswith("def f(x):")
    assert clean_sample(text, "f") == "def f(x):\n    assert x > 0\n    return x"
