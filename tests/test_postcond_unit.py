"""PostcondBench (Python): pure functions (no subprocess)."""
import json

import pytest

from pytest_specbench.benchmarks.postcond import metrics, mutate, source, verdict
from pytest_specbench.benchmarks.postcond.adapter import ADAPTER, BUNDLED, load_tasks
from pytest_specbench.errors import DataError
from shared_data import SHARED_DATA

FILE = '''"""doc"""
from x import (
    a,
)
import os


class K:
    @staticmethod
    def f(n):
        """Doc of f."""
        # comment
        return n + 1


async def g(n):
    return n
'''


def test_parse_answer_takes_last_fence_and_checks_decorators():
    text = "here\n```python\n@icontract.ensure(lambda r: r)\n```\nand\n```\n@icontract.ensure(lambda result: result > 0)\n```"
    assert source.parse_answer(text) == "@icontract.ensure(lambda result: result > 0)"
    for bad, why in [("", "empty"), ("the answer is 4", "not decorator lines"),
                     ("@icontract.ensure(lambda result: (", "do not parse"), ("@functools.cache", "not an icontract")]:
        with pytest.raises(source.AnswerError, match=why):
            source.parse_answer(bad)


def test_multiline_decorator_is_kept_whole():
    dec = "@icontract.ensure(\n    lambda result: result > 0,\n    'positive')"
    assert source.parse_answer(dec) == dec


def test_inject_fixed_puts_decorators_after_other_decorators_at_indent():
    dec = "@icontract.ensure(lambda result: result > 0)"
    start = FILE.splitlines().index("    def f(n):") + 1
    inj = source.inject(FILE, "f", start, start + 3, dec, "fixed")
    lines = inj.text.splitlines()
    i = lines.index("    " + dec)
    assert lines[i - 1] == "    @staticmethod" and lines[i + 1] == "    def f(n):"
    assert lines[1] == source.HEAD  # after the docstring, not inside the multi-line import
    assert inj.first_line == i + 1 and lines[inj.last_line - 1].strip() == "return n + 1"
    compile(inj.text, "m.py", "exec")


def test_inject_faithful_reproduces_upstream_import_and_async_bugs():
    dec = "@icontract.ensure(lambda result: result > 0)"
    inj = source.inject(FILE, "f", 9, 13, dec, "faithful")
    assert inj.text.splitlines()[2] == source.HEAD  # inside `from x import (`: does not compile
    with pytest.raises(SyntaxError):
        compile(inj.text, "m.py", "exec")
    start = FILE.splitlines().index("async def g(n):") + 1
    assert not source.inject(FILE, "g", start, start + 1, dec, "faithful").injected
    assert source.inject(FILE, "g", start, start + 1, dec, "fixed").injected


def test_prompts_three_settings():
    content = "    def f(n):\n        \"\"\"Doc of f.\"\"\"\n        # comment\n        return n + 1"
    f2p = source.render_prompt("f2p", FILE, content, "f", 9)
    c2p = source.render_prompt("c2p", FILE, content, "f", 9)
    n2p = source.render_prompt("n2p", FILE, content, "f", 9)
    assert "# comment" in f2p and "Doc of f" in f2p
    assert "# comment" not in c2p and "Doc of f" not in c2p and "return n + 1" in c2p
    assert "Doc of f" in n2p and "return n + 1" not in n2p and "..." in n2p
    assert all("generate icontract format postconditions for this method `f`" in p for p in (f2p, c2p, n2p))


def test_replace_method():
    text = "a\ndef f():\n    return 1\nb\n"
    assert source.replace_method(text, 2, 3, "def f():\n    return 2") == "a\ndef f():\n    return 2\nb\n"


def test_rule_mutants_keep_indent_and_leave_docstring():
    content = "    def f(self, n):\n        \"\"\"Doc.\"\"\"\n        if n < 0:\n            return -n\n        return n * 2"
    muts = mutate.rule_mutants(content)
    families = {f for f, _ in muts}
    assert {"comparison", "arithmetic", "return", "number"} <= families
    for _, m in muts:
        assert m.startswith("    def f(self, n):") and "Doc." in m and "XXDoc" not in m
    assert len({m for _, m in muts}) == len(muts)


# One file, hand-labelled at the method's level (§5.4 after Yu et al.: standalone = built-ins and the
# standard library only): what each method's body reaches, not what the file imports.
DEPENDENCY_FILE = """\
import math
import numpy as np
from collections import deque
from .graph import Node

LIMIT = 10


def helper(x):
    return x + 1


def pure(xs, k=3):
    total = 0
    for i, x in enumerate(sorted(xs)):
        total += abs(x) * k
    return [y for y in range(total) if y % 2], len(xs)


def uses_stdlib(n):
    q = deque([n])
    return math.sqrt(q.pop())


def uses_file_function(n):
    return helper(n)


def uses_file_constant(n):
    return n < LIMIT


def uses_numpy(a):
    return np.sum(a)


def uses_relative_import():
    return Node()


def recursive(n):
    import itertools
    return 1 if n < 1 else recursive(n - 1) + len(list(itertools.repeat(0, n)))


def third_party_inside(n):
    import requests
    return requests


class Box:
    def __init__(self):
        self.items = []

    def add(self, item):
        self.items.append(item)

    def size_of(self, other):  # a method that never touches its instance
        return len(other)

    @staticmethod
    def twice(x):
        return 2 * x

    @staticmethod
    def make():
        return Box()


class Crate(Box):
    def __init__(self):
        super().__init__()
"""

EXPECTED_LEVELS = {"pure": "builtin", "uses_stdlib": "stdlib", "uses_file_function": "file",
                   "uses_file_constant": "file", "uses_numpy": "third-party", "uses_relative_import": "file",
                   "recursive": "stdlib", "third_party_inside": "third-party", "add": "class",
                   "size_of": "builtin", "twice": "builtin", "make": "class",
                   "__init__": "class"}


def test_dependency_level_is_what_the_method_reaches():
    import ast

    # the def line of each name (of two __init__, the later one: Crate's, which reaches only super())
    lines = {n.name: n.lineno for n in ast.walk(ast.parse(DEPENDENCY_FILE)) if isinstance(n, ast.FunctionDef)}
    levels = {name: metrics.dependency_level(DEPENDENCY_FILE, name, lines[name]) for name in EXPECTED_LEVELS}
    assert levels == EXPECTED_LEVELS
    solo = {name for name in EXPECTED_LEVELS if metrics.is_standalone(DEPENDENCY_FILE, name, lines[name])}
    # the file imports numpy and a relative module: by the file's imports every method was Dep
    assert solo == {"pure", "uses_stdlib", "recursive", "size_of", "twice"}


def test_gap_median_of_an_even_count_is_the_mean_of_the_middle_two():
    # gaps (Figure 3, methods with Corr > 0): a 0, b 0.4, c 0.2, d 0.6 -> median (0.2 + 0.4) / 2
    out = _metrics_of({"a": [(True, True)] * 5, "b": [(True, False), (False, False)] * 2 + [(True, True)],
                       "c": [(True, True)] * 4 + [(True, False)], "d": [(True, False)] * 3 + [(False, False)] * 2})
    assert out["gap_by_method"] == {"a": 0.0, "b": pytest.approx(0.4), "c": pytest.approx(0.2),
                                    "d": pytest.approx(0.6)}
    assert out["gap_median"] == pytest.approx(0.3)


def test_at_k_unbiased_and_metrics():
    assert metrics.at_k(5, 0, 1) == 0.0 and metrics.at_k(5, 5, 3) == 1.0
    assert metrics.at_k(5, 1, 1) == pytest.approx(0.2)
    assert metrics.at_k(5, 1, 3) == pytest.approx(1 - 4 * 3 * 2 / (5 * 4 * 3))
    out = _metrics_of({"a": [(True, True)] * 5, "b": [(True, False), (False, False)] * 2 + [(True, True)]})
    assert out["Corr@1"] == pytest.approx((1 + 0.6) / 2) and out["Comp@1"] == pytest.approx((1 + 0.2) / 2)
    assert out["Delta@1"] == pytest.approx(out["Corr@1"] - out["Comp@1"])
    assert out["rho@1"] == pytest.approx(out["Comp@1"] / out["Corr@1"])
    assert out["Corr@5"] == pytest.approx((1 + 1) / 2) and out["Comp@5"] == pytest.approx((1 + 1) / 2)
    # two gaps, 0 and 0.4: their median is 0.2 (the upper middle value, 0.4, before issue 49)
    assert out["gap_by_method"] == {"a": 0.0, "b": pytest.approx(0.4)} and out["gap_median"] == pytest.approx(0.2)
    assert out["methods"] == 2


def _metrics_of(per_method, groups=None):
    """PostcondBench's declared metrics on ``method -> [(correct, complete)]`` (``groups``: a
    method's Dep/Solo group, given as its task)."""
    from dataclasses import replace

    from pytest_specbench.metrics.reducers import evaluate

    declared = replace(metrics.declared(lambda _t, task: task, lambda _t, task: None), item=list)
    return evaluate(declared, per_method, groups)


def test_verdict_order():
    viol = {"event": "phase", "nodeid": "t", "when": "call", "outcome": "failed", "violation": True, "text": "x",
            "private_lines": []}
    crash = {"event": "phase", "nodeid": "t", "when": "call", "outcome": "failed", "violation": False,
             "exc_type": "TypeError", "private_lines": [5], "text": ""}
    fail = dict(crash, private_lines=[50])
    fin = {"event": "finish", "exitstatus": 1}
    col = {"event": "collected", "nodeids": ["t"]}
    ok = {"event": "phase", "nodeid": "t", "when": "call", "outcome": "passed"}
    assert verdict.decide([col, viol, fin], True, 1, 9)["verdict"] == "timeout"
    assert verdict.decide([col, fail, viol, fin], False, 1, 9)["verdict"] == "icontract_fail"
    assert verdict.decide([col, crash, fin], False, 1, 9)["verdict"] == "local_crash"
    assert verdict.decide([col, fail, fin], False, 1, 9)["verdict"] == "failed"
    assert verdict.decide([{"event": "collect_error", "nodeid": "m", "longrepr": "E  SyntaxError"}], False, 1, 9)["verdict"] \
        == "compile_failure"
    assert verdict.decide([], False, 1, 9)["verdict"] == "local_crash"
    assert verdict.decide([col, ok, {"event": "finish", "exitstatus": 0}], False, 1, 9)["verdict"] == "passed"
    # exit status 0 alone is never a pass: every collected test needs its passed call record
    assert verdict.decide([{"event": "finish", "exitstatus": 0}], False, 1, 9)["verdict"] == "local_crash"
    assert verdict.decide([col, {"event": "finish", "exitstatus": 0}], False, 1, 9)["verdict"] == "failed"
    assert verdict.decide([col, fail, fin], False, 1, 9, "icontract.errors.ViolationError")["text_verdict"] == "icontract_fail"


def test_bundled_tasks_load_and_bad_file(tmp_path):
    tasks, _ = load_tasks(BUNDLED)
    assert len(tasks) == 12 and all(t.data["mutants"] for t in tasks)
    assert sorted(t.data["repo"]["language"] for t in tasks) == ["java"] * 6 + ["python"] * 6
    assert max(len(t.data["mutants"]) for t in tasks) >= 5
    (tmp_path / "x.json").write_text(json.dumps({"name": "f"}))
    with pytest.raises(DataError, match="x.json: missing field"):
        load_tasks(tmp_path)
    (tmp_path / "x.json").write_text("{")
    with pytest.raises(DataError, match="not a PostcondBench task file"):
        load_tasks(tmp_path)


def test_reference_answer_parses_for_every_bundled_task():
    for task in load_tasks(BUNDLED)[0]:
        assert ADAPTER._parse(task, ADAPTER.reference(task, "correct"))


def test_figures_gap_counts_per_bin():
    figs = ADAPTER.figures({"gap_by_method": {"a": 0.0, "b": 0.4, "c": 1.0}}, None)
    assert figs[0]["kind"] == "binned" and sum(figs[0]["counts"]) == 3
    assert figs[0]["counts"][0] == figs[0]["counts"][4] == figs[0]["counts"][9] == 1


DATA = SHARED_DATA / "postcondbench"


@pytest.mark.realdata
def test_shared_tasks_dependency_labels():
    """docs/postcond.md's table: the labels of the shared keon/algorithms tasks (§5.4)."""
    folder = DATA / "gpt-5--v2-all"
    if not folder.is_dir():
        pytest.skip(f"shared data absent: {folder}")
    from pytest_specbench.benchmarks.postcond.adapter import _dependency_group

    groups = {t.data["name"]: _dependency_group(t.task_id, t) for t in load_tasks(folder)[0]}
    assert groups == {"contains_cycle": "Dep", "push": "Dep", "count": "Solo", "decode_rle": "Solo",
                      "get_factors_iterative1": "Solo", "hailstone": "Solo", "search_insert": "Solo",
                      "search_rotate": "Solo"}


@pytest.mark.realdata
def test_export_answers_and_prompts_match_upstream():
    folder = DATA / "gpt-5--v2-all"
    if not folder.is_dir():
        pytest.skip(f"shared data absent: {folder}")
    from pytest_specbench.benchmarks.postcond.cli import export_answers

    rows = export_answers(folder)
    by_id = {t.task_id: t for t in load_tasks(folder)[0]}
    assert len(rows) == 40 and all(ADAPTER._parse(by_id[r["task_id"]], r["solution"]) for r in rows[:3])
    same = 0
    for task in load_tasks(folder)[0]:
        d = task.data
        file_text = d["prompt"][len("## Code Context\n```\n"):].split("\n```\n## Target Method", 1)[0]
        same += source.render_prompt("f2p", file_text, d["content"], d["name"], d["start_line"]) == d["prompt"]
    assert same == 8  # upstream's own F2P prompts, character for character


def test_table3_groups_standalone_by_imports_and_reports_corr_comp_per_group():
    from pytest_specbench.benchmarks.postcond import metrics

    # no method named: the file's imports decide
    assert metrics.is_standalone("import math\nfrom collections import deque\ndef f(): pass\n")
    assert not metrics.is_standalone("import numpy\ndef f(): pass\n")
    assert not metrics.is_standalone("from .graph import Node\ndef f(): pass\n")
    out = _metrics_of({"a": [(True, True)], "b": [(True, False)], "c": [(False, False)]},
                      {"a": "Solo", "b": "Dep", "c": "Dep"})
    assert {k: v for k, v in out.items() if "[" in k} == {
        "Corr@1[Dep]": 0.5, "Comp@1[Dep]": 0.0, "methods[Dep]": 2,
        "Corr@1[Solo]": 1.0, "Comp@1[Solo]": 1.0, "methods[Solo]": 1}
    only_dep = _metrics_of({"b": [(True, False)]}, {"b": "Dep"})
    assert only_dep["methods[Solo]"] == 0 and "Corr@1[Solo]" not in only_dep  # an empty group: its count only
    assert not any("[" in k for k in _metrics_of({"b": [(True, False)]}))  # no tasks: no groups


def test_keeper_text_holds_no_byte_of_the_answer_and_keeps_the_lines():
    dec = "@icontract.snapshot(lambda n: n, name='n0')\n@icontract.ensure(lambda OLD, result: result > OLD.n0)"
    start = FILE.splitlines().index("    def f(n):") + 1
    inj = source.inject(FILE, "f", start, start + 3, dec, "fixed")
    keeper = inj.keeper_text("0")
    assert "lambda" not in keeper and "OLD" not in keeper and f"@{source.GUARD_NAME}('0')" in keeper
    assert len(keeper.splitlines()) == len(inj.text.splitlines())
    assert keeper.splitlines()[inj.last_line - 1] == inj.text.splitlines()[inj.last_line - 1].rstrip("\n")
    assert inj.decorators_text() == "".join(f"    {ln}\n" for ln in dec.splitlines())
    plain = source.inject(FILE, "f", start, start + 3, "", "fixed")  # the authors' tool's run without a spec
    assert plain.keeper_text("0") == plain.text and source.GUARD_NAME + "(" not in plain.text
