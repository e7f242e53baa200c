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


@pytest.fixture(scope="module")
def reference_caches(tmp_path_factory):
    """One state folder per threshold for the module's checks, as one run has: each task's
    reference outputs (several timed runs of the canonical solution) are made once, not
    once per test (session 21)."""
    return {name: tmp_path_factory.mktemp(f"large-outputs-{name}") for name in ("digest", "hash")}


@pytest.fixture
def ctx(executor, reference_caches, monkeypatch):
    monkeypatch.setattr(evalplus, "DIGEST_OUTPUTS_OVER", 10_000)

    return fake_context(FakeSettings(limits=LIMITS, details=True), cache=reference_caches["digest"],
                        executors={"python": executor})


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


# Issue #28 (2): lists of strings, or of tuples of strings, judged by their value hash
# (wire.value_hash: Python's C hash under the sandbox's fixed hash seed), no encoding.
def _plain(value):
    """The value as the harness would decode it (subclasses as their base values)."""
    return wire.loads(wire.dumps(value))


class _Str(str):
    pass


def _variants(base):
    first = base[0]
    yield [tuple(t) for t in base]  # equal, other objects
    yield tuple(base)  # a tuple is not a list
    yield [list(t) for t in base]  # tuples are not lists
    yield base[:-1]
    yield base + [first]
    yield [first] + base[1:-1] + [("Red",) * (len(first) - 1) + ("Rex",)]
    yield [tuple(_Str(s) for s in t) for t in base]  # str subclass: equal as its value
    yield [tuple(1 if s == "Red" else s for s in t) for t in base]  # an int among the strings
    yield [tuple(True if s == "Red" else s for s in t) for t in base]
    yield [tuple(s for s in t) + ("",) for t in base]  # an empty string: outside the domain
    yield base[:1] + ["Red"] + base[1:]


def test_value_hash_agrees_with_a_full_comparison():
    base = list(itertools.combinations_with_replacement(["Red", "Green", "Blue", "Cat"], 6))
    want = wire.value_hash(base)
    assert want and want[1] == 6 * len(base)
    for value in _variants(base):
        got = wire.value_hash(value)
        equal = _plain(value) == _plain(base)
        assert (got is not False and got[0] == want[0]) is equal, value[:2]
    strings = ["Red", "Green", "Blue"] * 1000
    for value, equal in ((list(strings), True), (tuple(strings), False), ([_Str(s) for s in strings], True),
                         (strings[:-1] + ["Rex"], False), (strings + [""], False)):
        got = wire.value_hash(value)
        assert (got is not False and got[0] == wire.value_hash(strings)[0]) is equal
    for outside in ([["a"], "b"], [("a",), ["b"]], [{"a"}], [("a", 1)], ["a", ""], [[("a",)]], [None], [b"a"],
                    [1, -1], [(2.5, float("nan"))], [float("inf")], [2 ** 61], [1j]):
        assert wire.value_hash(outside) is False, outside
    assert wire.value_hash({"a": 1}) is None and wire.value_hash("abc") is None


def test_value_hash_of_numbers_agrees_with_a_full_comparison():
    # ints, equal floats and bools are equal (EvalPlus's ==), and hash alike; -1 (hashed as -2),
    # NaN, infinities and numbers past 2**61 - 1 (hashed modulo it) are outside the domain.
    base = [(i % 7 - 3 if i % 7 != 2 else -2, bool(i % 2), float(i) + 0.25) for i in range(3000)]
    want = wire.value_hash(base)[0]
    variants = [
        [(a, int(b), c) for a, b, c in base],  # 1 for True
        [(float(a), b, c) for a, b, c in base],  # -2.0 for -2
        [(complex(a, 0), b, c) for a, b, c in base],  # a complex number equal to an int
        [(a, b, c + 2 ** -40) for a, b, c in base],
        [(a if a != -2 else -1, b, c) for a, b, c in base],  # off by one where the hash is not
        [(a, b, c) for a, b, c in base[:-1]] + [(0, False, 1e300)],
        [list(t) for t in base],
        tuple(base),
        [(a, b) for a, b, c in base],
    ]
    for value in variants:
        got = wire.value_hash(value)
        equal = _plain(value) == _plain(base)
        assert (got is not False and got[0] == want) is equal, value[:2]


def test_a_str_subclass_that_hashes_otherwise_is_never_trusted():
    base = list(itertools.combinations_with_replacement(["Red", "Green", "Blue"], 4))

    class Liar(str):  # hashes as the string it should have been
        def __new__(cls, text, claimed):
            self = super().__new__(cls, text)
            self.claimed = claimed
            return self

        def __hash__(self):
            return hash(self.claimed)

        def __eq__(self, other):
            return True

    forged = [tuple(Liar("X", s) for s in t) for t in base]
    assert hash(tuple(forged)) == hash(tuple(base))  # the forgery works on Python's hash...
    assert not wire._str_hashes_faithful()
    assert wire.value_hash(forged)[0] != wire.value_hash(base)[0]  # ...not on the value hash
    honest = [tuple(Liar(s, s) for s in t) for t in base]  # content right: equal, as the harness decodes it
    assert wire.value_hash(honest)[0] == wire.value_hash(base)[0]


def test_sandbox_hash_seed_is_fixed(executor, tmp_path):
    from pytest_specbench.execution.python import PythonExecutor
    code = "import sys\ndef f():\n    return [hash('Red'), sys.flags.hash_randomization]\n"
    job = CallsJob(code, "f", "seed", lambda: [((), {})], [0])
    other = PythonExecutor(LIMITS)  # another zygote: another process, as another run or host would be
    try:
        first, second = executor.run(None, job).outcomes[0].value, other.run(None, job).outcomes[0].value
        assert first == second and first[1] == 0
        code = ("import itertools\ndef f():\n    return list(itertools.combinations_with_replacement(['Red', 'Green'], 5))\n")
        job = CallsJob(code, "f", "vh", lambda: [((), {})], [0], value_hash_over=10)
        a, b = executor.run(None, job).outcomes[0], other.run(None, job).outcomes[0]  # (the same other zygote)
    finally:
        other.close()
    assert a.value_hash and a.value_hash == b.value_hash and a.hash_leaves == 30
    with pytest.raises(ValueError, match="value hash"):
        a.value


HASHED = {"task_id": "Mbpp/9256", "entry_point": "combinations_colors", "atol": 0,
          "canonical_solution": TASK["canonical_solution"],
          "base_input": [[["Red", "Green", "Blue", "Cat"], 6]], "plus_input": [[["Red", "Green", "Blue", "Cat", "Dog"], 5]]}
_CWR = "from itertools import combinations_with_replacement\n"


@pytest.fixture
def hctx(executor, reference_caches, monkeypatch):
    monkeypatch.setattr(evalplus, "VALUE_HASH_OVER", 100)  # 84 tuples of 6 strings, 126 of 5
    return fake_context(FakeSettings(limits=LIMITS, details=True), cache=reference_caches["hash"],
                        executors={"python": executor})


def _check(ctx, code):
    return evalplus.functional_check(HASHED, "h" * 64, Completion(code, {"trusted_reference": True}), ctx)


@pytest.mark.parametrize("body, passed", [
    ("return list(combinations_with_replacement(l, n))", True),
    ("return [tuple(c) for c in combinations_with_replacement(l, n)]", True),
    ("return [tuple(str(s) + '' for s in c) for c in combinations_with_replacement(l, n)]", True),
    ("class S(str): pass\n    return [tuple(S(s) for s in c) for c in combinations_with_replacement(l, n)]", True),
    # The sample has a str subclass hashing its own way, yet returns plain strings: exact check, passes.
    ("class S(str):\n        __hash__ = lambda self: 0\n    S('x')\n"
     "    return list(combinations_with_replacement(l, n))", True),
    # A namedtuple is a tuple as the harness decodes it (read through tuple's own iterator).
    ("import collections\n    P = collections.namedtuple('P', [f'f{i}' for i in range(n)])\n"
     "    return [P(*c) for c in combinations_with_replacement(l, n)]", True),
    ("return tuple(combinations_with_replacement(l, n))", False),
    ("return [list(c) for c in combinations_with_replacement(l, n)]", False),
    ("return [tuple(s.encode() for s in c) for c in combinations_with_replacement(l, n)]", False),  # hash(b'a') == hash('a')
    ("return list(combinations_with_replacement(l, n))[1:]", False),
    ("return list(combinations_with_replacement(l, n))[::-1]", False),
    ("return [c + ('',) for c in combinations_with_replacement(l, n)]", False),
    ("return [tuple(1 if s == 'Red' else s for s in c) for c in combinations_with_replacement(l, n)]", False),
    ("return None", False),
    ("return {'Red': 1}", False),
    ("return 'Red' * 100000", False),
])
def test_functional_check_judges_string_outputs_by_value_hash(hctx, body, passed):
    result = _check(hctx, f"{_CWR}def combinations_colors(l, n):\n    {body}\n")
    assert result.passed is passed, result.message
    expected = evalplus._expected_outputs(HASHED, "h" * 64, hctx)
    assert set(expected.hashed) == {0, 1} and expected.hash_over == [0, 0] and not expected.digest_only
    if not passed:
        assert "\n" not in result.message and "expected an output of 504 values" in result.message


# A sample that knows the expected output and returns another value that hashes like it:
# each must be F (the value hash follows the value as the harness decodes it).
HOSTILE_HASHES = {
    "str subclass hashing as the right string": (
        "class S(str):\n    def __new__(c, text, claimed):\n        s = str.__new__(c, text)\n"
        "        s.claimed = claimed\n        return s\n    def __hash__(self):\n        return hash(self.claimed)\n"
        "    def __eq__(self, other):\n        return True\n"
        "def combinations_colors(l, n):\n"
        "    return [tuple(S('X', s) for s in c) for c in combinations_with_replacement(l, n)]\n"),
    "str subclass hashing through C code only (functools.partial)": (
        "import functools\ncache = {}\n"
        "def forged(s):\n    if s not in cache:\n"
        "        cache[s] = type('S', (str,), {'__hash__': functools.partial(getattr, hash(s), 'real')})\n"
        "    return cache[s]('X')\n"
        "def combinations_colors(l, n):\n"
        "    return [tuple(forged(s) for s in c) for c in combinations_with_replacement(l, n)]\n"),
    "tuple subclass hashing as the right tuple": (
        "class T(tuple):\n    def __new__(c, items, claimed):\n        t = tuple.__new__(c, items)\n"
        "        t.claimed = claimed\n        return t\n    def __hash__(self):\n        return hash(self.claimed)\n"
        "def combinations_colors(l, n):\n"
        "    return [T(('X',) * len(c), c) for c in combinations_with_replacement(l, n)]\n"),
    "list subclass lying about its items and length": (
        "class L(list):\n    def __init__(self, shown):\n        super().__init__(shown[:-1])\n"
        "        self.shown = shown\n    def __iter__(self):\n        return iter(self.shown)\n"
        "    def __len__(self):\n        return len(self.shown)\n    def __getitem__(self, k):\n"
        "        return self.shown[k]\n"
        "def combinations_colors(l, n):\n    return L(list(combinations_with_replacement(l, n)))\n"),
    "not a str, hashing as one": (
        "class O:\n    def __init__(self, s):\n        self.s = s\n    def __hash__(self):\n        return hash(self.s)\n"
        "    def __eq__(self, other):\n        return True\n"
        "def combinations_colors(l, n):\n"
        "    return [tuple(O(s) for s in c) for c in combinations_with_replacement(l, n)]\n"),
    "builtins.hash, tuple and set replaced before returning": (
        "import builtins\n"
        "def combinations_colors(l, n):\n    right = list(combinations_with_replacement(l, n))\n"
        "    real_hash, real_tuple = builtins.hash, builtins.tuple\n"
        "    builtins.hash = lambda v: real_hash(real_tuple(right))\n"
        "    builtins.tuple = lambda v=(): real_tuple(right)\n"
        "    builtins.set = lambda v=(): {real_tuple}\n"
        "    return [('X',) * len(c) for c in right]\n"),
    "str subclass's __hash__ set after its strings were checked (thread)": (
        "import threading, time\n"
        "class S(str):\n    pass\n"
        "def flip():\n    end = time.time() + 5\n    while time.time() < end:\n"
        "        S.__hash__ = lambda self: hash('Red')\n        del S.__hash__\n"
        "def combinations_colors(l, n):\n    threading.Thread(target=flip, daemon=True).start()\n"
        "    return [tuple(S('Blue') for s in c) for c in combinations_with_replacement(l, n)]\n"),
}


@pytest.mark.parametrize("name", sorted(HOSTILE_HASHES))
def test_hostile_value_hashes_fail(hctx, name):
    result = _check(hctx, _CWR + HOSTILE_HASHES[name])
    assert result.passed is False, name
    assert result.message and "\n" not in result.message
    assert _check(hctx, f"{_CWR}def combinations_colors(l, n):\n    return list(combinations_with_replacement(l, n))\n"
                  ).passed  # the harness is healthy afterwards


NUMBERS = {"task_id": "Mbpp/9257", "entry_point": "combinations_colors", "atol": 0,
           "canonical_solution": TASK["canonical_solution"],
           "base_input": [[[2, True, 7, -44], 6]], "plus_input": [[[57.25, 96.5, 7.125, -2], 5]]}
FLAT_FLOATS = _task(9258, "def f(n):\n    return [i + 0.5 for i in range(n)]\n")


@pytest.mark.parametrize("body, passed", [
    ("return list(combinations_with_replacement(l, n))", True),
    ("return [tuple(float(x) for x in c) for c in combinations_with_replacement(l, n)]", True),
    ("return [tuple(int(x) if x == int(x) else x for x in c) for c in combinations_with_replacement(l, n)]", True),
    ("return [tuple(-1 if x == -2 else x for x in c) for c in combinations_with_replacement(l, n)]", False),
    ("return [tuple(x + 1e-9 for x in c) for c in combinations_with_replacement(l, n)]", False),  # atol 0: ==
    ("return [tuple(str(x) for x in c) for c in combinations_with_replacement(l, n)]", False),
])
def test_functional_check_judges_number_outputs_by_value_hash(hctx, body, passed):
    code = f"{_CWR}def combinations_colors(l, n):\n    {body}\n"
    result = evalplus.functional_check(NUMBERS, "n" * 64, Completion(code, {"trusted_reference": True}), hctx)
    assert result.passed is passed, result.message
    assert set(evalplus._expected_outputs(NUMBERS, "n" * 64, hctx).hashed) == {0, 1}


def test_a_flat_list_of_floats_is_not_hashed(hctx):
    # EvalPlus compares a flat float sequence with a tolerance (atol 1e-6): no hash can.
    code = "def f(n):\n    return [i + 0.5 + 1e-9 for i in range(n)]\n"
    result = evalplus.functional_check(FLAT_FLOATS, "f" * 64, Completion(code, {"trusted_reference": True}), hctx)
    assert result.passed, result.message
    assert not evalplus._expected_outputs(FLAT_FLOATS, "f" * 64, hctx).hashed
