"""Large outputs are compared by a digest computed as they are produced
(Mbpp/255's canonical output on one plus input is 935 MB encoded): the wire
pieces, the sandbox round trip and the functional check."""
from __future__ import annotations

import hashlib
import itertools

import pytest

from pytest_specbench.benchmarks.contract import evalplus
from pytest_specbench.execution import wire
from pytest_specbench.execution.limits import Limits
from pytest_specbench.execution.python import CallsJob
from pytest_specbench.models.base import Completion
from fakes import FakeSettings, fake_context

LIMITS = Limits(call_cpu=2.0, startup_cpu=2.0, memory_mb=2048, tmp_mb=16)
COLOURS = [tuple(c) for c in itertools.combinations_with_replacement(["Red", "Green", "Blue"], 3)] * 1000


@pytest.mark.parametrize("value", [COLOURS, tuple(COLOURS), [1.5] * 5000, [{1, 2}] * 5000, [True] * 5000,
                                   [10 ** 2000] * 5000, [[1, "a", None, b"x"]] * 6000, [1, 2]])
def test_pieces_concatenate_to_the_encoding(value):
    assert "".join(wire.iter_dumps(value)) == wire.dumps(value)


def test_digest_is_of_the_very_bytes_and_only_for_exact_values():
    full = wire.dumps(COLOURS).encode()
    encoded, big = wire.encode_capped(COLOURS, 1000)
    assert encoded is None and big == (hashlib.blake2b(full, digest_size=16).hexdigest(), len(full), full[:100].decode())
    assert wire.encode_capped(COLOURS, len(full)) == (full.decode(), None)
    for inexact in ([1.5] * 5000, [True] * 5000, [{1, 2}] * 5000, [{"a": 1}] * 5000):
        assert wire.encode_capped(inexact, 100)[1] is None  # float tolerance, bool == 1, set/dict order


@pytest.fixture(scope="module")
def executor(python_executor):
    return python_executor


def test_sandbox_sends_the_digest_only(executor):
    code = ("import itertools\ndef f(n):\n    return [tuple(c) for c in itertools.combinations_with_replacement("
            "['Red', 'Green', 'Blue'], 3)] * n\n")
    result = executor.run(None, CallsJob(code, "f", "big", lambda: [((1000,), {}), ((1,), {})], [0, 1],
                                         encoded_digest_over=10_000))
    big, small = result.outcomes[0], result.outcomes[1]
    full = wire.dumps(COLOURS).encode()
    assert big.encoded is None and big.encoded_digest == hashlib.blake2b(full, digest_size=16).hexdigest()
    assert big.encoded_len == len(full)
    assert small.encoded_digest is None and small.value == COLOURS[:10]
    with pytest.raises(ValueError, match="digest"):
        big.value


TASK = {"task_id": "Mbpp/9255", "entry_point": "combinations_colors", "atol": 0,
        "canonical_solution": ("from itertools import combinations_with_replacement\n"
                               "def combinations_colors(l, n):\n"
                               "    return list(combinations_with_replacement(l, n))\n"),
        "base_input": [[["Red", "Green", "Blue"], 1]], "plus_input": [[[f"c{i}" for i in range(60)], 3]]}


@pytest.fixture
def ctx(executor, tmp_path, monkeypatch):
    monkeypatch.setattr(evalplus, "DIGEST_OUTPUTS_OVER", 10_000)

    return fake_context(FakeSettings(limits=LIMITS, details=True), cache=tmp_path, executors={"python": executor})


@pytest.mark.parametrize("body, passed, reason", [
    ("return list(combinations_with_replacement(l, n))", True, ""),
    ("return [tuple(c) for c in combinations_with_replacement(l, n)]", True, ""),
    ("return list(combinations_with_replacement(l, n))[:-1 if n == 3 else None]", False, "another output of"),
    ("return list(combinations_with_replacement(l, n)) if n == 1 else []", False, "got []"),
])
def test_functional_check_compares_large_outputs_by_digest(ctx, body, passed, reason):
    code = f"from itertools import combinations_with_replacement\ndef combinations_colors(l, n):\n    {body}\n"
    result = evalplus.functional_check(TASK, "d" * 64, Completion(code, {"trusted_reference": True}), ctx)
    assert result.passed is passed, result.message
    assert reason in result.message
    if not passed:
        assert "expected an output of" in result.message and "\n" not in result.message


# Issue #28 (1): any output the child digests is still judged by the task's oracle.
# Constructed tasks (5,000 elements: over the 4,096-element and 10,000-byte thresholds).
def _task(number: int, canonical: str, atol: float = 0) -> dict:
    return {"task_id": f"Mbpp/{number}", "entry_point": "f", "atol": atol, "canonical_solution": canonical,
            "base_input": [[3]], "plus_input": [[5000]]}


MIXED = _task(9901, "def f(n):\n    return [i if i % 3 else float(i) for i in range(n)]\n")  # ints and equal floats
EXACT = _task(9902, "def f(n):\n    return [i % 2 for i in range(n)]\n")  # kept as a digest only
NEAR = _task(9903, "def f(n):\n    return [10 ** 9 + i for i in range(n)]\n", atol=1e-6)  # allclose: rtol 1e-7


@pytest.mark.parametrize("task, body, passed", [
    # The expected output holds floats: the sample's all-int list (exact, so the child
    # could digest it) must come whole and be compared by == (EvalPlus: 2 == 2.0).
    (MIXED, "return list(range(n))", True),
    (MIXED, "return list(range(n - 1)) + [0]", False),
    (MIXED, "return tuple(range(n))", False),  # a tuple is not a list under ==
    # The expected output is known by its digest only: a sample's floats or bools equal to it pass.
    (EXACT, "return [float(i % 2) for i in range(n)]", True),
    (EXACT, "return [bool(i % 2) for i in range(n)]", True),
    (EXACT, "return [i % 2 for i in range(n)]", True),
    (EXACT, "return [(i % 2) + 0.5 for i in range(n)]", False),
    (EXACT, "return tuple(i % 2 for i in range(n))", False),
    (EXACT, "return [complex(i % 2, 0) for i in range(n)]", True),
    (EXACT, "return [float('nan')] * n", False),
    # A task with an atol: EvalPlus's allclose accepts an int off by 1 in 10**9 (rtol 1e-7); no digest decides there.
    (NEAR, "return [10 ** 9 + i + (i == 7) for i in range(n)]", True),
    (NEAR, "return [10 ** 9 + i + 1000 * (i == 7) for i in range(n)]", False),
])
def test_large_outputs_are_judged_by_the_oracle(ctx, task, body, passed):
    code = f"def f(n):\n    {body}\n"
    result = evalplus.functional_check(task, "e" * 64, Completion(code, {"trusted_reference": True}), ctx)
    assert result.passed is passed, result.message
    expected = evalplus._expected_outputs(task, "e" * 64, ctx)
    assert (1 in expected.digest_only) is (task is EXACT)
    assert expected.digest_over[1] == (10_000 if task is EXACT else None)


def test_exactness_of_an_encoding():
    for value, exact in (([1, 2, None], True), ([1, 2.0], False), ([True], False), ([float("inf")], False),
                         ((1, "a.e", b"x"), True), ({"a": 1}, False), ({1}, False), ([10 ** 2000], True),
                         (["NaN", "1.5e3"], True), ([[1], (2, [3.5])], False)):
        assert evalplus._exact_encoding(wire.dumps(value).encode()) is exact, value
