"""Large outputs are compared by a digest computed as they are produced
(Mbpp/255's canonical output on one plus input is 935 MB encoded): the wire
pieces, the sandbox round trip and the functional check."""
from __future__ import annotations

import hashlib
import itertools
from types import SimpleNamespace

import pytest

from pytest_specbench.benchmarks.contract import evalplus
from pytest_specbench.execution import wire
from pytest_specbench.execution.limits import Limits
from pytest_specbench.models.base import Completion

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
    result = executor.run(code, "f", "big", lambda: [((1000,), {}), ((1,), {})], [0, 1], digest_over_bytes=10_000)
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

    class Context:
        settings = SimpleNamespace(limits=LIMITS, details=True, option=lambda name: None)

        def python_executor(self):
            return executor

        def cache_dir(self, *parts):
            path = tmp_path.joinpath(*parts)
            path.mkdir(parents=True, exist_ok=True)
            return path

    return Context()


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
