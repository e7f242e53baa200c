#!/usr/bin/env python3
"""Regenerate the bundled ContractEval sample suite from the definitions below.

Usage::

    specbench contract build-suite          # rewrite the three data files
    specbench contract build-suite --check  # fail if they are out of date

The tasks, their wording and every input were written for pytest-specbench;
nothing here comes from HumanEval(+), MBPP(+) or ContractEval.  The files
follow the upstream formats (see README.md).  ``fired_individually`` is not
written by hand: it is measured by running each assert alone on the input (the
same probe ``validate.py`` uses), so run ``validate.py`` afterwards.
"""
from __future__ import annotations

import argparse
import ast
import json
import sys
from pathlib import Path
from ....data.bundled import bundled_suite

HERE = Path(__file__).resolve().parent
# The bundled suite these scripts write and check (the repository's benchmarks/contract/).
SUITE = bundled_suite("contract")
from . import validate

REQ = "{REQ}"

# ----------------------------------------------------------------------------
# Prompt templates (our own wording; same roles as the paper's CS and EAS).
# Models answer with one fenced Python code block.
# ----------------------------------------------------------------------------
CS_SYSTEM = """
You are a Python developer who writes defensive code.
You will be given:
  - Function Name: the function to write.
  - Specification: what the function does, the requirements its inputs must meet, and example calls.

Write the function so that it:
  1. does what the specification says and agrees with every example;
  2. checks the input requirements when it is called, with assert statements, so that an input that breaks a requirement raises AssertionError;
  3. keeps the given name and parameters.

Answer with code only.
"""

EAS_SYSTEM = """
You are a Python developer who writes defensive code.
You will be given:
  - Function Name: the function to write.
  - Specification: what the function does, the requirements its inputs must meet, and example calls that must work.
  - Rejected Inputs: calls that break a requirement, one per requirement where an example exists; the function must raise AssertionError on each of them.

Write the function so that it:
  1. does what the specification says and agrees with every example call;
  2. raises AssertionError on every rejected input, and on any other input that breaks a requirement, by checking the requirements with assert statements when it is called;
  3. keeps the given name and parameters.

Answer with code only.
"""

ANSWER_FORMAT = """
Reply with a single ```python code block that holds the complete function and the imports it needs. Write nothing outside the code block.
"""


def cs_user(ep: str, description: str) -> str:
    return f"Function Name: {ep}\nSpecification:\n{description}\n{ANSWER_FORMAT}"


def eas_user(ep: str, description: str, params: list, examples: dict) -> str:
    parts = [f"Function Name: {ep}\nSpecification:\n{description}\n",
             f"Rejected Inputs (one block per requirement: {', '.join(examples)}):\n"]
    for key, inp in examples.items():
        if inp is None:
            parts.append(f"{key}: no example\n")
        else:
            call = f"{ep}({', '.join(repr(inp[p]) for p in params)})"
            parts.append(f"{key}:\n>>> {call}\nAssertionError\n")
    return "\n".join(parts) + ANSWER_FORMAT


# ----------------------------------------------------------------------------
# The tasks.  ``asserts`` are the contract expressions, in order (assert_0 ...).
# ``cvts`` pairs an input with the asserts it was written to violate; ``eas``
# gives the held-out example shown in the EAS prompt for each assert (or None).
# ----------------------------------------------------------------------------
TASKS = [
    dict(
        task_id="HumanEval-S/0",
        entry_point="clamped_mean",
        prompt='''from typing import List


def clamped_mean(values: List[float], low: float, high: float) -> float:
    """ Move every value into the closed interval [low, high]: a value below low
    counts as low and a value above high counts as high. Return the mean of the
    adjusted values.
    {REQ}
    >>> clamped_mean([1.0, 5.0, 9.0], 2.0, 6.0)
    4.333333333333333
    >>> clamped_mean([0.5, 0.5], 0.0, 1.0)
    0.5
    """
''',
        requirements="Input requirements: values is a non-empty list of ints or floats (booleans\n"
                     "    are not accepted), low and high are ints or floats, and low <= high.",
        solution='''    adjusted = [min(max(v, low), high) for v in values]
    return sum(adjusted) / len(adjusted)
''',
        asserts=[
            "assert isinstance(values, list)",
            "assert len(values) > 0",
            "assert all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values)",
            "assert isinstance(low, (int, float)) and isinstance(high, (int, float))",
            "assert low <= high",
        ],
        atol=1e-6,
        base=[[[1.0, 5.0, 9.0], 2.0, 6.0], [[0.5, 0.5], 0.0, 1.0], [[-3.0, 10.0, 2.5], -1.0, 3.0]],
        plus=[
            [[7.0], 0.0, 10.0],
            [[-5.0, -6.0], 0.0, 1.0],
            [[50.0, 60.0, 70.0], 0.0, 1.0],
            [[1.0, 2.0, 3.0], 2.0, 2.0],
            [[1, 2, 3, 4], 0, 10],
            [[-1.5, 0.0, 1.5], -1.0, 1.0],
            [[0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0], 0.25, 0.75],
            [[1000000.0, -1000000.0, 3.0], -100.0, 100.0],
            [[-0.0, 0.0], -1.0, 1.0],
            [[2.5], 2.5, 2.5],
            [[3, 4.5, 6], 4, 5.5],
            [[0.333, 0.666, 0.999], 0.5, 1.0],
            [[-10.0, -20.0, -30.0], -25.0, -15.0],
            [[9.99, 10.01, 10.0, 9.5, 10.5], 9.9, 10.1],
            [[123.456, 654.321], 200.0, 600.0],
        ],
        cvts=[
            ({"values": [], "low": 0.0, "high": 1.0}, [1]),
            ({"values": [1.0, True, 3.0], "low": 0.0, "high": 5.0}, [2]),
            ({"values": [2.5, "3"], "low": 1.0, "high": 4.0}, [2]),
            ({"values": [1.0, 2.0], "low": 5.0, "high": 1.0}, [4]),
            ({"values": [1.0], "low": "0", "high": 2.0}, [3]),
            ({"values": 4.5, "low": 0.0, "high": 10.0}, [0, 1, 2]),
            ({"values": [3.0, 1.0], "low": None, "high": 2.0}, [3, 4]),
        ],
        eas={
            0: {"values": "1.0", "low": 0.0, "high": 2.0},
            1: {"values": [], "low": -1.0, "high": 1.0},
            2: {"values": [None], "low": 0.0, "high": 1.0},
            3: {"values": [1.0], "low": 0.0, "high": [2.0]},
            4: {"values": [0.0], "low": 1.5, "high": -1.5},
        },
    ),
    dict(
        task_id="HumanEval-S/1",
        entry_point="alternating_digit_sum",
        prompt='''

def alternating_digit_sum(digits: str) -> int:
    """ Walk through a string of decimal digits from left to right, adding the
    digits at even positions (0, 2, 4, ...) and subtracting the digits at odd
    positions. Return the total.
    {REQ}
    >>> alternating_digit_sum("1234")
    -2
    >>> alternating_digit_sum("7")
    7
    """
''',
        requirements="Input requirements: digits is a non-empty string made only of the ASCII\n"
                     "    characters 0-9.",
        solution='''    total = 0
    for i, ch in enumerate(digits):
        if i % 2 == 0:
            total += int(ch)
        else:
            total -= int(ch)
    return total
''',
        asserts=[
            "assert isinstance(digits, str)",
            "assert len(digits) > 0",
            "assert digits.isascii() and digits.isdigit()",
        ],
        atol=0,
        base=[["1234"], ["7"], ["90817"]],
        plus=[
            ["0"], ["00"], ["11"], ["5050"], ["99999999999999999999"], ["1234567890"],
            ["0000001"], ["98765432109876543210"], ["10"], ["01"], ["999"], ["808"],
            ["1111111111111111111111111111111"], ["2468"], ["13579"],
        ],
        cvts=[
            ({"digits": ""}, [1, 2]),
            ({"digits": "12a4"}, [2]),
            ({"digits": "-15"}, [2]),
            ({"digits": "3.5"}, [2]),
            ({"digits": 1234}, [0, 2]),
            ({"digits": "\u0661\u0662\u0663"}, [2]),
            ({"digits": " 42"}, [2]),
        ],
        eas={
            0: {"digits": ["1", "2"]},
            1: None,
            2: {"digits": "9x"},
        },
    ),
    dict(
        task_id="HumanEval-S/2",
        entry_point="merge_unique_sorted",
        prompt='''from typing import List


def merge_unique_sorted(a: List[int], b: List[int]) -> List[int]:
    """ Both a and b are sorted in strictly increasing order. Return the strictly
    increasing list of every integer found in a, in b, or in both.
    {REQ}
    >>> merge_unique_sorted([1, 4, 9], [2, 4, 10])
    [1, 2, 4, 9, 10]
    >>> merge_unique_sorted([], [3])
    [3]
    """
''',
        requirements="Input requirements: a and b are lists of integers (booleans are not\n"
                     "    integers here), each strictly increasing, so without repeated values.",
        solution='''    i = j = 0
    merged = []
    while i < len(a) and j < len(b):
        if a[i] < b[j]:
            merged.append(a[i])
            i += 1
        elif b[j] < a[i]:
            merged.append(b[j])
            j += 1
        else:
            merged.append(a[i])
            i += 1
            j += 1
    merged.extend(a[i:])
    merged.extend(b[j:])
    return merged
''',
        asserts=[
            "assert isinstance(a, list) and isinstance(b, list)",
            "assert all(type(x) == int for x in a + b)",
            "assert all(a[k] < a[k + 1] for k in range(len(a) - 1))",
            "assert all(b[k] < b[k + 1] for k in range(len(b) - 1))",
        ],
        atol=0,
        base=[[[1, 4, 9], [2, 4, 10]], [[], [3]], [[-5, 0, 5], [-5, 0, 5]]],
        plus=[
            [[], []],
            [[1], []],
            [[], [-7]],
            [[-10, -3], [-4, 8]],
            [[0, 2, 4, 6, 8], [1, 3, 5, 7, 9]],
            [[1, 2, 3], [4, 5, 6]],
            [[4, 5, 6], [1, 2, 3]],
            [[-100, 100], [0]],
            [[1000000000000], [1000000000000, 1000000000001]],
            [[1, 3, 5, 7], [3, 5]],
            [[2], [2]],
            [[-3, -2, -1], [-2]],
            [[0, 10, 20, 30, 40, 50], [5, 15, 25, 35, 45, 55]],
            [[-1, 0, 1], []],
        ],
        cvts=[
            ({"a": [3, 1], "b": [2]}, [2]),
            ({"a": [1, 1, 2], "b": [0]}, [2]),
            ({"a": [0, 5], "b": [7, 7]}, [3]),
            ({"a": [1, 2.5], "b": [3]}, [1]),
            ({"a": [False, True], "b": [2]}, [1]),
            ({"a": [1, 2], "b": "34"}, [0, 1]),
            ({"a": [9, 4, 1], "b": [8, 6]}, [2, 3]),
        ],
        eas={
            0: {"a": None, "b": []},
            1: {"a": ["1"], "b": [2]},
            2: {"a": [5, 2], "b": []},
            3: {"a": [], "b": [4, 4]},
        },
    ),
    dict(
        task_id="HumanEval-S/3",
        entry_point="rotate_clockwise",
        prompt='''from typing import List


def rotate_clockwise(grid: List[List[int]]) -> List[List[int]]:
    """ A grid is given as a list of rows. Return the grid turned a quarter turn
    clockwise, again as a list of rows.
    {REQ}
    >>> rotate_clockwise([[1, 2], [3, 4]])
    [[3, 1], [4, 2]]
    >>> rotate_clockwise([[1, 2, 3]])
    [[1], [2], [3]]
    """
''',
        requirements="Input requirements: grid is a non-empty list of lists; all rows have the\n"
                     "    same, non-zero length; every entry is an integer (not a boolean).",
        solution='''    return [list(row) for row in zip(*grid[::-1])]
''',
        asserts=[
            "assert isinstance(grid, list) and len(grid) > 0",
            "assert all(isinstance(row, list) for row in grid)",
            "assert all(len(row) == len(grid[0]) for row in grid) and len(grid[0]) > 0",
            "assert all(type(x) == int for row in grid for x in row)",
        ],
        atol=0,
        base=[[[[1, 2], [3, 4]]], [[[1, 2, 3]]], [[[1], [2], [3]]]],
        plus=[
            [[[7]]],
            [[[1, 2, 3], [4, 5, 6], [7, 8, 9]]],
            [[[1, 2, 3, 4], [5, 6, 7, 8]]],
            [[[1, 2], [3, 4], [5, 6], [7, 8]]],
            [[[-1, -2], [-3, -4]]],
            [[[0, 0], [0, 0]]],
            [[[1, 2, 3, 4, 5]]],
            [[[1], [2], [3], [4], [5]]],
            [[[1000000, -1000000], [123456789, 0]]],
            [[[1, 0, 1], [0, 1, 0], [1, 0, 1], [0, 0, 0]]],
            [[[9, 8, 7, 6], [5, 4, 3, 2], [1, 0, -1, -2]]],
            [[[2, 4], [6, 8]]],
        ],
        cvts=[
            ({"grid": []}, [0]),
            ({"grid": [[1, 2], [3]]}, [2]),
            ({"grid": [[], []]}, [2]),
            ({"grid": [[1, 2], [3, "4"]]}, [3]),
            ({"grid": [[1.5]]}, [3]),
            ({"grid": [1, 2, 3]}, [1, 2, 3]),
            ({"grid": "12"}, [0, 1]),
            ({"grid": [[True, False], [False, True]]}, [3]),
        ],
        eas={
            0: {"grid": None},
            1: {"grid": [[1], 2]},
            2: {"grid": [[1, 2, 3], [4, 5]]},
            3: {"grid": [[None]]},
        },
    ),
    dict(
        task_id="HumanEval-S/4",
        entry_point="tally_votes",
        prompt='''from typing import Dict, List


def tally_votes(votes: List[str], candidates: List[str]) -> Dict[str, int]:
    """ Count ballots. candidates holds the names that stand, votes holds the name
    written on each ballot. Return a dictionary that maps every candidate, in the
    order of candidates and including those nobody voted for, to the number of
    ballots that name them.
    {REQ}
    >>> tally_votes(['ann', 'bo', 'ann'], ['ann', 'bo', 'cy'])
    {'ann': 2, 'bo': 1, 'cy': 0}
    """
''',
        requirements="Input requirements: candidates is a non-empty list of distinct non-empty\n"
                     "    strings; votes is a list and each of its entries is one of the candidates.",
        solution='''    counts = {name: 0 for name in candidates}
    for vote in votes:
        counts[vote] += 1
    return counts
''',
        asserts=[
            "assert isinstance(candidates, list) and len(candidates) > 0",
            "assert all(isinstance(c, str) and len(c) > 0 for c in candidates)",
            "assert len(set(candidates)) == len(candidates)",
            "assert isinstance(votes, list)",
            "assert all(v in candidates for v in votes)",
        ],
        atol=0,
        base=[[["ann", "bo", "ann"], ["ann", "bo", "cy"]], [[], ["solo"]], [["b", "b", "b"], ["a", "b"]]],
        plus=[
            [[], ["ann", "bo"]],
            [["x"], ["x"]],
            [["b", "a", "b", "c", "a", "b"], ["a", "b", "c"]],
            [["z", "z"], ["y", "z"]],
            [["Ann", "ann"], ["ann", "Ann"]],
            [["long name", "long name", "x y"], ["x y", "long name"]],
            [["\u00e9", "e"], ["e", "\u00e9"]],
            [["c", "c", "c", "c", "c"], ["a", "b", "c", "d"]],
            [["1", "2", "1"], ["1", "2", "3"]],
            [[" "], [" ", "  "]],
            [["q"], ["p", "q", "r", "s", "t"]],
            [["d", "c", "b", "a"], ["a", "b", "c", "d"]],
        ],
        cvts=[
            ({"votes": ["ann", "dee"], "candidates": ["ann", "bo"]}, [4]),
            ({"votes": ["ann"], "candidates": ["ann", "ann"]}, [2]),
            ({"votes": [], "candidates": []}, [0]),
            ({"votes": "ann", "candidates": ["ann"]}, [3]),
            ({"votes": ["Ann"], "candidates": ["ann"]}, [4]),
            ({"votes": [], "candidates": ["ann", ""]}, [1]),
            ({"votes": [1], "candidates": ["1", 1]}, [1]),
        ],
        eas={
            0: {"votes": [], "candidates": "ann"},
            1: {"votes": [], "candidates": [None]},
            2: {"votes": ["x"], "candidates": ["x", "y", "x"]},
            3: {"votes": None, "candidates": ["x"]},
            4: {"votes": ["x", "z"], "candidates": ["x", "y"]},
        },
    ),
    dict(
        task_id="HumanEval-S/5",
        entry_point="toggle_flag",
        prompt='''from typing import List


def toggle_flag(flags: List[bool], index: int) -> List[bool]:
    """ Return a new list equal to flags except that the flag at position index
    is inverted. flags itself must be left unchanged.
    {REQ}
    >>> toggle_flag([True, False, True], 1)
    [True, True, True]
    >>> toggle_flag([False], 0)
    [True]
    """
''',
        requirements="Input requirements: flags is a list of booleans; index is an int (a\n"
                     "    boolean is not an index) with 0 <= index < len(flags).",
        solution='''    result = list(flags)
    result[index] = not result[index]
    return result
''',
        asserts=[
            "assert isinstance(flags, list)",
            "assert all(isinstance(f, bool) for f in flags)",
            "assert isinstance(index, int) and not isinstance(index, bool)",
            "assert 0 <= index < len(flags)",
        ],
        atol=0,
        base=[[[True, False, True], 1], [[False], 0], [[True, True], 0]],
        plus=[
            [[True], 0],
            [[False, False, False], 2],
            [[True, True, True, True], 3],
            [[False, True], 0],
            [[True, False, True, False, True, False, True, False, True, False], 5],
            [[True, False, True, False, True, False, True, False, True, False], 9],
            [[False, True, False], 1],
            [[True, True], 1],
            [[False, False], 0],
            [[True, False, False, True], 2],
            [[False] * 12, 11],
        ],
        cvts=[
            ({"flags": [True, False], "index": 2}, [3]),
            ({"flags": [True], "index": -1}, [3]),
            ({"flags": [True, 0], "index": 0}, [1]),
            ({"flags": [False, True], "index": True}, [2]),
            ({"flags": [False, False], "index": 1.0}, [2]),
            ({"flags": [], "index": 0}, [3]),
            ({"flags": "TF", "index": 0}, [0, 1]),
        ],
        eas={
            0: {"flags": None, "index": 0},
            1: {"flags": ["yes"], "index": 0},
            2: {"flags": [True, True], "index": "1"},
            3: {"flags": [False], "index": 5},
        },
    ),
    dict(
        # Deliberately without CVTs, like the upstream tasks for which no
        # contract-violating test survived.
        task_id="HumanEval-S/6",
        entry_point="caesar_lower",
        prompt='''

def caesar_lower(text: str, shift: int) -> str:
    """ Move every letter of a lower-case message shift places forward in the
    alphabet, wrapping around from 'z' to 'a'. Spaces stay where they are.
    {REQ}
    >>> caesar_lower('abc xyz', 2)
    'cde zab'
    >>> caesar_lower('hello', 0)
    'hello'
    """
''',
        requirements="Input requirements: text is a string of the letters a-z and spaces only;\n"
                     "    shift is an int (not a boolean) with 0 <= shift < 26.",
        solution='''    out = []
    for ch in text:
        if ch == ' ':
            out.append(ch)
        else:
            out.append(chr((ord(ch) - ord('a') + shift) % 26 + ord('a')))
    return ''.join(out)
''',
        asserts=[
            "assert isinstance(text, str)",
            "assert all(ch == ' ' or 'a' <= ch <= 'z' for ch in text)",
            "assert isinstance(shift, int) and not isinstance(shift, bool)",
            "assert 0 <= shift < 26",
        ],
        atol=0,
        base=[["abc xyz", 2], ["hello world", 0], ["zzz", 1]],
        plus=[
            ["", 5],
            [" ", 7],
            ["a", 25],
            ["z", 25],
            ["the quick brown fox", 13],
            ["abcdefghijklmnopqrstuvwxyz", 1],
            ["  double  spaces  ", 4],
            ["hello", 0],
            ["xyz", 3],
            ["m", 13],
            ["spec bench", 20],
            ["aaaa bbbb", 24],
        ],
        cvts=[],
        eas={
            0: None,
            1: {"text": "Hello", "shift": 3},
            2: None,
            3: {"text": "abc", "shift": 26},
        },
    ),
    dict(
        # Takes a tuple.  JSON stores the argument as a list and EvalPlus only
        # converts for the upstream task ids it knows, so the contract and the
        # solution accept a list as well (see README: TUPLE_ARGS).
        task_id="Mbpp-S/1",
        entry_point="max_step",
        prompt='''"""
Write a function that takes a tuple of integers and returns the largest absolute difference between two neighbouring elements.
{REQ}
assert max_step((3, 8, 6)) == 5
"""
''',
        requirements="Input requirements: the argument is a tuple (a list is accepted too) of at least two integers; booleans do not count as integers.",
        solution='''
def max_step(test_tup):
    return max(abs(test_tup[i + 1] - test_tup[i]) for i in range(len(test_tup) - 1))
''',
        asserts=[
            "assert isinstance(test_tup, (tuple, list))",
            "assert len(test_tup) >= 2",
            "assert all(type(x) == int for x in test_tup)",
        ],
        atol=0,
        base=[[[3, 8, 6]], [[1, 1, 1, 1]], [[-4, 10, -4]]],
        plus=[
            [[0, 0]],
            [[1, 2]],
            [[2, 1]],
            [[5, 5, 5, 5, 5]],
            [[-10, 10]],
            [[1, 3, 6, 10, 15, 21]],
            [[100, 0, 100, 0]],
            [[-1, -2, -4, -8]],
            [[0, 1000000000]],
            [[7, 7, 8]],
            [[3, -3, 3, -3, 3]],
            [[1, 2, 4, 7, 11, 16, 22, 29, 37, 46]],
            [[-5, -5]],
            [[42, 41]],
        ],
        cvts=[
            ({"test_tup": [5]}, [1]),
            ({"test_tup": []}, [1]),
            ({"test_tup": [1, 2.0, 3]}, [2]),
            ({"test_tup": [1, "2"]}, [2]),
            ({"test_tup": "123"}, [0, 2]),
            ({"test_tup": 42}, [0, 1, 2]),
            ({"test_tup": [True, False, True]}, [2]),
        ],
        eas={
            0: {"test_tup": {"a": 1, "b": 2}},
            1: {"test_tup": [7]},
            2: {"test_tup": [None, 1]},
        },
    ),
    dict(
        task_id="Mbpp-S/2",
        entry_point="merge_counts",
        prompt='''"""
Write a function that combines two dictionaries of word counts into one, adding up the counts of words that occur in both.
{REQ}
assert merge_counts({"x": 1, "y": 2}, {"y": 3}) == {"x": 1, "y": 5}
"""
''',
        requirements="Input requirements: both arguments are dictionaries with string keys and non-negative integer values (booleans are not counts).",
        solution='''
def merge_counts(a, b):
    result = dict(a)
    for key, count in b.items():
        result[key] = result.get(key, 0) + count
    return result
''',
        asserts=[
            "assert isinstance(a, dict) and isinstance(b, dict)",
            "assert all(isinstance(k, str) for k in list(a) + list(b))",
            "assert all(type(v) == int and v >= 0 for v in list(a.values()) + list(b.values()))",
        ],
        atol=0,
        base=[[{"x": 1, "y": 2}, {"y": 3}], [{}, {}], [{"a": 5}, {"b": 0}]],
        plus=[
            [{"a": 1}, {}],
            [{}, {"b": 2}],
            [{"a": 0}, {"a": 0}],
            [{"x": 1, "y": 2, "z": 3}, {"x": 10, "y": 20, "z": 30}],
            [{"apple": 3}, {"pear": 4}],
            [{"a": 1000000}, {"a": 1}],
            [{"": 1}, {"": 2}],
            [{"Word": 1}, {"word": 1}],
            [{"k1": 5, "k2": 0}, {"k2": 7, "k3": 0}],
            [{"\u00e9": 2}, {"e": 2}],
            [{"one": 1, "two": 2}, {"two": 2, "one": 1}],
            [{"spaced key": 4}, {"spaced key": 6}],
        ],
        cvts=[
            ({"a": {"x": -1}, "b": {}}, [2]),
            ({"a": {"x": 1}, "b": {"y": 2.5}}, [2]),
            ({"a": {"x": True}, "b": {"x": 1}}, [2]),
            ({"a": [["x", 1]], "b": {}}, [0]),
            ({"a": {}, "b": None}, [0]),
            ({"a": {"k": "3"}, "b": {"k": 3}}, [2]),
        ],
        eas={
            0: {"a": "x=1", "b": {}},
            1: None,
            2: {"a": {"n": None}, "b": {}},
        },
    ),
    dict(
        task_id="Mbpp-S/3",
        entry_point="chunk_list",
        prompt='''"""
Write a function to cut a list into consecutive pieces that each hold exactly size elements.
{REQ}
assert chunk_list([1, 2, 3, 4, 5, 6], 2) == [[1, 2], [3, 4], [5, 6]]
"""
''',
        requirements="Input requirements: items is a list, size is a positive int (not a boolean), and the length of items is a multiple of size.",
        solution='''
def chunk_list(items, size):
    return [items[i:i + size] for i in range(0, len(items), size)]
''',
        asserts=[
            "assert isinstance(items, list)",
            "assert isinstance(size, int) and not isinstance(size, bool) and size > 0",
            "assert len(items) % size == 0",
        ],
        atol=0,
        base=[[[1, 2, 3, 4, 5, 6], 2], [[], 3], [["a", "b", "c"], 3]],
        plus=[
            [[1], 1],
            [[1, 2, 3, 4], 4],
            [[1, 2, 3, 4], 1],
            [[1, 2, 3, 4, 5, 6, 7, 8, 9], 3],
            [[], 1],
            [["x", "y"], 2],
            [[True, False, True, False], 2],
            [[[1], [2], [3], [4]], 2],
            [[0, 0, 0, 0, 0, 0], 3],
            [[1.5, 2.5], 1],
            [[None, None], 1],
            [[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12], 6],
            [["a", "b", "c", "d", "e", "f"], 6],
        ],
        cvts=[
            ({"items": [1, 2, 3], "size": 2}, [2]),
            ({"items": [1, 2], "size": 0}, [1]),
            ({"items": [1, 2, 3, 4], "size": -2}, [1]),
            ({"items": [1, 2], "size": True}, [1]),
            ({"items": "abcd", "size": 2}, [0]),
            ({"items": [1, 2, 3, 4, 5], "size": 4.0}, [1, 2]),
            ({"items": ["a"], "size": 3}, [2]),
        ],
        eas={
            0: {"items": None, "size": 1},
            1: {"items": [1], "size": "1"},
            2: {"items": [0, 0, 0, 0, 0], "size": 2},
        },
    ),
    dict(
        task_id="Mbpp-S/4",
        entry_point="is_isogram",
        prompt='''"""
Write a function to check whether a word uses no letter more than once, treating upper and lower case as the same letter.
{REQ}
assert is_isogram("Plough") == True
"""
''',
        requirements="Input requirements: word is a non-empty string of letters only (str.isalpha() holds).",
        solution='''
def is_isogram(word):
    lowered = word.lower()
    return len(set(lowered)) == len(lowered)
''',
        asserts=[
            "assert isinstance(word, str)",
            "assert word.isalpha()",
        ],
        atol=0,
        base=[["Plough"], ["letter"], ["Aa"]],
        plus=[
            ["a"], ["Z"], ["abcdefghijklmnopqrstuvwxyz"], ["alphabet"], ["background"],
            ["Mississippi"], ["\u00e9clair"], ["Noon"], ["xylophone"], ["QWERTY"],
            ["\u0391\u0392\u0393"], ["abcA"], ["Lamp"], ["bookkeeper"],
        ],
        cvts=[
            ({"word": ""}, [1]),
            ({"word": "six-year"}, [1]),
            ({"word": "abc1"}, [1]),
            ({"word": "two words"}, [1]),
            ({"word": ["a", "b"]}, [0, 1]),
        ],
        eas={
            0: {"word": None},
            1: {"word": "it's"},
        },
    ),
    dict(
        task_id="Mbpp-S/5",
        entry_point="grade_for",
        prompt='''"""
Write a function that turns a percentage score into a letter grade: "A" from 90 up, "B" from 80, "C" from 70, "D" from 60, and "F" below 60.
{REQ}
assert grade_for(85) == "B"
"""
''',
        requirements="Input requirements: score is an int or a float (not a boolean) between 0 and 100 inclusive.",
        solution='''
def grade_for(score):
    for bound, letter in ((90, "A"), (80, "B"), (70, "C"), (60, "D")):
        if score >= bound:
            return letter
    return "F"
''',
        asserts=[
            "assert isinstance(score, (int, float)) and not isinstance(score, bool)",
            "assert 0 <= score <= 100",
        ],
        atol=0,
        base=[[85], [90], [59.9]],
        plus=[
            [0], [100], [60], [59], [69.99], [70], [79.5], [80], [89.999], [0.0],
            [100.0], [45], [95.5], [1e-09], [90.0],
        ],
        cvts=[
            ({"score": -1}, [1]),
            ({"score": 100.5}, [1]),
            ({"score": 101}, [1]),
            ({"score": "95"}, [0]),
            ({"score": True}, [0]),
            ({"score": None}, [0]),
            ({"score": -0.01}, [1]),
        ],
        eas={
            0: {"score": [90]},
            1: {"score": 250},
        },
    ),
]


# ----------------------------------------------------------------------------
# Assembly
# ----------------------------------------------------------------------------

def fill(prompt: str, requirements: str | None) -> str:
    """The prompt without the requirements line, or with it filled in."""
    out = []
    for line in prompt.splitlines(keepends=True):
        if REQ in line:
            if requirements is not None:
                out.append(line.replace(REQ, requirements))
        else:
            out.append(line)
    return "".join(out)


def contract_block(asserts: list, indent: str = "    ") -> str:
    return "\n" + "".join(f'{indent}{a}, "invalid inputs"{validate.MARKER}\n' for a in asserts)


def params_of(source: str, ep: str) -> list:
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FunctionDef) and node.name == ep:
            return [a.arg for a in node.args.args]
    raise ValueError(f"{ep} not defined")


def with_contracts(program: str, ep: str, contract: str) -> str:
    """Insert the contract right after the entry point's ``def`` line; drop its docstring."""
    lines = program.splitlines(keepends=True)
    k = next(i for i, ln in enumerate(lines) if ln.startswith(f"def {ep}("))
    rest = lines[k + 1:]
    if rest and rest[0].strip().startswith('"""'):
        end = next(i for i, ln in enumerate(rest) if ln.rstrip().endswith('"""') and (i > 0 or ln.count('"""') == 2))
        rest = rest[end + 1:]
    return "".join(lines[:k + 1]) + contract + "".join(rest)


def build_task(t: dict) -> tuple[dict, dict]:
    ep, style = t["entry_point"], ("humaneval" if t["task_id"].startswith("HumanEval") else "mbpp")
    prompt = fill(t["prompt"], None)
    cad = fill(t["prompt"], t["requirements"])
    contract = contract_block(t["asserts"])
    keys = [f"assert_{k}" for k in range(len(t["asserts"]))]
    if style == "humaneval":
        program = prompt + t["solution"]
        reference = with_contracts(program, ep, contract + "\n").rstrip("\n")
        fp = {"task_id": t["task_id"], "prompt": prompt, "entry_point": ep,
              "canonical_solution": t["solution"], "test": "", "contract": contract,
              "base_input": t["base"], "atol": t["atol"], "plus_input": t["plus"]}
    else:
        program = t["solution"]
        reference = with_contracts(program, ep, contract)
        fp = {"task_id": t["task_id"], "prompt": prompt, "entry_point": ep,
              "canonical_solution": t["solution"], "base_input": t["base"], "atol": t["atol"],
              "plus_input": t["plus"], "contract": contract, "assertion": ""}
    params = params_of(program, ep)
    eas = {f"assert_{k}": t["eas"].get(k) for k in range(len(keys))}
    cvts, counters = [], {}
    for inp, violated in t["cvts"]:
        iv = [keys[k] for k in sorted(violated)]
        sec = validate.smt_section(keys, iv)
        cvts.append({"input": inp, "intended_violated": iv, "fired_individually": None,
                     "smt_section": sec, "case_index": counters.setdefault(sec, 0)})
        counters[sec] += 1
    ce = {
        "task_id": t["task_id"],
        "entry_point": ep,
        "original_prompt": prompt,
        "contract": contract,
        "contracts": validate.upstream_contracts(contract),
        "reference_with_contracts": reference,
        "cs_system": CS_SYSTEM,
        "cs_user": cs_user(ep, cad),
        "eas_system": EAS_SYSTEM,
        "eas_user": eas_user(ep, cad, params, eas),
        "contract_aware_description": cad,
        "eas_examples": eas,
        "cvts": cvts,
    }
    # Measure which asserts fire alone on each CVT (the same probe validate.py runs).
    res = validate.run_probe(validate.make_job(ce, fp, style, 5.0), timeout=60)
    if res["problems"]:
        raise SystemExit(f"{t['task_id']}: " + "; ".join(res["problems"]))
    for c, r in zip(cvts, res["cvts"]):
        if r["problem"]:
            raise SystemExit(f"{t['task_id']}: CVT {c['input']!r}: {r['problem']}")
        c["fired_individually"] = r["fired"]
    return ce, fp


def dump(rows: list) -> str:
    return "".join(json.dumps(r) + "\n" for r in rows)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description="Regenerate the bundled ContractEval sample suite.")
    ap.add_argument("--check", action="store_true", help="do not write; exit 1 if the files differ")
    args = ap.parse_args(argv)
    ce_rows, he_rows, mbpp_rows = [], [], []
    for t in TASKS:
        ce, fp = build_task(t)
        ce_rows.append(ce)
        (he_rows if t["task_id"].startswith("HumanEval") else mbpp_rows).append(fp)
    outputs = {
        SUITE / validate.CONTRACTEVAL: dump(ce_rows),
        SUITE / validate.HUMANEVAL: dump(he_rows),
        SUITE / validate.MBPP: dump(mbpp_rows),
    }
    stale = [p for p, text in outputs.items() if not p.is_file() or p.read_text(encoding="utf-8") != text]
    if args.check:
        for p in stale:
            print(f"out of date: {p.relative_to(SUITE)}", file=sys.stderr)
        print("bundled suite is up to date" if not stale else f"{len(stale)} file(s) out of date")
        return 1 if stale else 0
    for p, text in outputs.items():
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
    print(f"wrote {len(ce_rows)} tasks ({len(he_rows)} HumanEval-style, {len(mbpp_rows)} MBPP-style); "
          f"now run specbench contract validate-suite")
    return 0


if __name__ == "__main__":
    sys.exit(main())
