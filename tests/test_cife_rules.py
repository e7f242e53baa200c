"""CIFE rule checks: selection by constraint text, AST verdicts, sandboxed verdicts."""
from __future__ import annotations

from pathlib import Path

import pytest

from pytest_specbench.benchmarks.cife import rules
from pytest_specbench.benchmarks.cife.adapter import _runner
from pytest_specbench.execution.limits import Limits
from pytest_specbench.execution.python import PythonExecutor

PROJECT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def run():
    ex = PythonExecutor(Limits(), hide=[str(PROJECT)])
    yield _runner(type("Ctx", (), {"executor": lambda self, kind: ex})())
    ex.close()


def verdict(text, code, run=None, instruction=""):
    v = rules.check(text, rules.Code.parse(code), run, instruction)
    return (v.rule, v.verdict) if v else None


@pytest.mark.parametrize("text, rule", [
    ("The function should be named `mean_of`.", "name_defined"),
    ("Create a subclass of `BotModule` called `EchoModule`.", "inherits"),
    ("The class should have the methods `push`, `pop` and `is_empty`.", "members_defined"),
    ("Raise ValueError if the password is empty.", "raises_on_input"),
    ("The function should return an empty list if the input list is empty.", "returns_on_empty"),
    ("You are not allowed to use the modulus operator (%).", "forbidden_operator"),
    ("Implement the solution using a recursive function instead of a loop.", "recursion"),
    ("The function should not use recursion.", "recursion"),
    ("You are not allowed to use any loops.", "loops"),
    ("Do not use the `sorted` function.", "forbidden_call"),
    ("Include unit tests.", "tests_present"),
    ("Include a docstring that describes the function.", "docstrings"),
    ("Use type hints.", "type_hints"),
    ("Use pandas for data manipulation.", "uses_library"),
    ("Utilize seaborn's `pairplot` function to create the pair plot.", "uses_call"),
    ("Accept a city name as a command-line argument.", "command_line"),
    ("If the age is negative, print 'Age: Invalid' instead.", "required_literal"),
    ("You are not allowed to use any external libraries or modules.", "no_imports"),
    ("The function should take two arguments: `token_id` and `network`.", "parameters"),
    ("Set random_state=0 when sampling.", "random_seed"),
    ("Do not use any built-in sorting functions.", "no_sorting"),
    ("Do not use slicing.", "no_slicing"),
    ("The base configuration should be defined in a dictionary named `BASE_CONFIG`.", "name_assigned"),
    ("The function should return an empty list when n is 0 or negative.", "returns_on_empty"),
])
def test_selection(text, rule):
    chosen = rules.select(text)
    assert chosen is not None and chosen[0].name == rule


@pytest.mark.parametrize("text", [
    "The function should have a time complexity of O(n).",
    "Prevent the registration of a class that does not inherit from `Test`.",
    "Do not use .sum() to count even and odd values.",
    "The final output must include columns for 'Country' and 'year'.",
    "The solution must utilize the pandas library and must not rely on any external libraries.",
    "Recursively remove directories matching certain patterns.",
    "Handle the recursion depth for deep inputs.",
])
def test_not_applicable(text):
    chosen = rules.select(text)
    assert chosen is None or chosen[0].name not in {"inherits", "forbidden_call", "required_literal", "no_imports", "recursion"}


def test_ast_verdicts():
    code = "import pandas as pd\n\ndef mean_of(xs):\n    '''Mean.'''\n    return sum(xs) / len(xs)\n"
    assert verdict("The function should be named `mean_of`.", code) == ("name_defined", True)
    assert verdict("The function should be named `average`.", code) == ("name_defined", False)
    assert verdict("Do not use the `sum` function.", code) == ("forbidden_call", False)
    assert verdict("Use pandas.", code) == ("uses_library", True)
    assert verdict("Use numpy.", code) == ("uses_library", False)
    assert verdict("Include unit tests.", code) == ("tests_present", False)
    assert verdict("Include unit tests.", code + "\nassert mean_of([2]) == 2\n") == ("tests_present", True)
    assert verdict("Include unit tests that cover empty lists.", code + "\nassert mean_of([2]) == 2\n") == ("tests_present", None)
    assert verdict("Do not use any arithmetic operators.", code) == ("forbidden_operator", False)
    assert verdict("Use recursion.", code) == ("recursion", False)
    assert verdict("Include a docstring.", code) == ("docstrings", True)
    assert verdict("Use type hints.", code) == ("type_hints", False)
    # DS-1000 answers that use the prompt's alias without importing it still use the library
    assert verdict("Use pandas.", "df['b'] = pd.to_numeric(df['a'])\n") == ("uses_library", True)


def test_parameters_seed_and_sorting():
    code = "import random\n\ndef f(token_id, network):\n    return sorted([token_id, network])\n"
    assert verdict("The function should take two arguments: `token_id` and `network`.", code) == ("parameters", True)
    assert verdict("The function should take two arguments: `token` and `net`.", code) == ("parameters", False)
    assert verdict("Set a random seed for reproducibility.", code) == ("random_seed", False)
    assert verdict("Set a random seed for reproducibility.", code + "random.seed(42)\n") == ("random_seed", None)
    assert verdict("Do not use any built-in sorting functions.", code) == ("no_sorting", False)


def test_code_that_does_not_parse_leaves_ast_rules_undecided():
    assert verdict("The function should be named `f`.", "Here is my answer: def f(") == ("name_defined", None)


def test_loops_rule_leaves_comprehensions_to_the_judge():
    assert verdict("You are not allowed to use any loops.", "def f(xs):\n    return [x for x in xs]\n") == ("loops", None)
    assert verdict("You are not allowed to use any loops.", "def f(xs):\n    for x in xs:\n        pass\n") == ("loops", False)


def test_starter_code_rule_reads_the_instruction():
    instruction = "Do it. You should write self-contained code starting with:\n```\nimport hashlib\ndef task_func(text, n=1):\n```"
    text = "You should write self-contained code starting with the provided starter code."
    good = "import hashlib\ndef task_func(text, n=1):\n    return hashlib.sha256(text.encode()).hexdigest()\n"
    assert verdict(text, good, instruction=instruction) == ("starter_code", True)
    assert verdict(text, good.replace("n=1", "count=1"), instruction=instruction) == ("starter_code", False)
    assert verdict(text, good.replace("import hashlib\n", ""), instruction=instruction) == ("starter_code", False)


def test_sandboxed_raises_and_returns(run):
    raises = "def f(xs):\n    if not xs:\n        raise ValueError('empty')\n    return xs[0]\n"
    silent = "def f(xs):\n    return xs[0] if xs else None\n"
    assert verdict("Raise a ValueError if the list is empty.", raises, run) == ("raises_on_input", True)
    assert verdict("Raise a ValueError if the list is empty.", silent, run) == ("raises_on_input", False)
    assert verdict("Return None if the list is empty.", silent, run) == ("returns_on_empty", True)
    assert verdict("Return an empty list if the list is empty.", silent, run) == ("returns_on_empty", False)
    typed = "def g(n):\n    if not isinstance(n, int):\n        raise TypeError('int')\n    return n\n"
    assert verdict("Raise a TypeError if n is not an integer.", typed, run) == ("raises_on_input", True)
    assert verdict("Raise a TypeError if n is not an integer.", "def g(n):\n    return int(n)\n", run) == ("raises_on_input", False)


def test_slicing_assignment_and_non_positive_inputs(run):
    assert verdict("Do not use slicing.", "def f(s):\n    return s[::-1]\n") == ("no_slicing", False)
    assert verdict("Do not use slicing.", "def f(s):\n    return s[0]\n") == ("no_slicing", True)
    assert verdict("Use a dictionary named `BASE_CONFIG`.", "BASE_CONFIG = {}\n")[1] is True
    fib = "def fib(n):\n    if n <= 0:\n        return []\n    return list(range(n))\n"
    assert verdict("The function should return an empty list when n is 0 or negative.", fib, run) == ("returns_on_empty", True)
    half = "def fib(n):\n    if n < 0:\n        return []\n    return [0] * n or None\n"
    assert verdict("The function should return an empty list when n is 0 or negative.", half, run) == ("returns_on_empty", False)


def test_sandboxed_rules_stay_undecided_when_they_cannot_tell(run):
    two = "def f(a, b):\n    raise ValueError\n"
    assert verdict("Raise a ValueError if the list is empty.", two, run) == ("raises_on_input", None)
    broken = "x = input()\ndef f(xs):\n    raise ValueError\n"  # stdin is empty in the sandbox: load fails
    assert verdict("Raise a ValueError if the list is empty.", broken, run) == ("raises_on_input", None)
    hostile = "import os\ndef f(xs):\n    os._exit(0)\n"
    assert verdict("Raise a ValueError if the list is empty.", hostile, run) == ("raises_on_input", None)


def test_every_rule_documents_when_it_applies():
    for rule in rules.RULES:
        assert rule.name and len(rule.applies) > 20, rule


@pytest.mark.parametrize("code", ["class A(" + "x." * 50000 + "y): pass\n", "x = " + "[" * 100000 + "]" * 100000 + "\n",
                                  "\x00", "def f(:\n", ""])
def test_hostile_or_broken_code_never_raises_out_of_a_rule(code):
    for text in ("Include unit tests.", "Include docstrings.", "The class should inherit from `Base`.", "Use pandas.",
                 "Do not use slicing.", "Add comments."):
        v = rules.check(text, rules.Code.parse(code), None)
        assert v is not None and v.verdict in (True, False, None)
