"""VERINA on the real upstream data (``../shared/datasets/verina``; skipped when absent).

Nothing here runs Lean: these are the loader's counts, byte-for-byte reassembly
of every ``task.lean`` and the Lean rendering of every test value.
"""
from __future__ import annotations


import pytest

from pytest_specbench.benchmarks.verina.loader import load_tasks, reassemble
from pytest_specbench.benchmarks.verina.values import render
from shared_data import SHARED_DATA

pytestmark = pytest.mark.realdata

CANDIDATES = [SHARED_DATA / "verina"]


@pytest.fixture(scope="module")
def tasks():
    for root in CANDIDATES:
        if root.is_dir():
            return load_tasks(root)
    pytest.skip("VERINA data not found at ../shared/datasets/verina")


def test_counts_match_the_issue(tasks):
    assert len(tasks) == 189
    assert sum(len(t.tests) for t in tasks) == 1114
    assert sum(len(x["unexpected"]) for t in tasks for x in t.tests) == 2392
    assert sum(len(t.reject_inputs) for t in tasks) == 123
    assert sum(t.has_proof for t in tasks) == 46
    assert sum(not t.reject_inputs for t in tasks) == 112
    assert [t.task_id for t in tasks if t.fewshot] == ["verina_basic_15", "verina_basic_44"]


def test_every_task_lean_reassembles_byte_for_byte(tasks):
    for t in tasks:
        assert reassemble(t.template).encode("utf-8") == (t.folder / "task.lean").read_bytes(), t.task_id


def test_every_test_value_renders_as_lean(tasks):
    rendered = 0
    for t in tasks:
        types = {p["param_name"]: p["param_type"] for p in t.signature["parameters"]}
        for row in t.tests + t.reject_inputs:
            for name, value in row["input"].items():
                assert render(types[name], value).strip()
                rendered += 1
            for value in ([row["expected"]] + row["unexpected"]) if "expected" in row else []:
                assert render(t.signature["return_type"], value).strip()
                rendered += 1
    assert rendered > 5000


class _Settings:
    ks = [1]

    def __init__(self, **options):
        self.options = options

    def option(self, name):
        return self.options.get(name)


@pytest.fixture(scope="module")
def adapter_tasks(tasks):
    from pytest_specbench.benchmarks.verina.adapter import VerinaBenchmark
    b = VerinaBenchmark()
    root = tasks[0].folder.parent
    return b, b.load(root, _Settings()).tasks


def test_sections_come_in_the_order_the_cut_points_assume(tasks):
    order = ["precond_aux", "precond", "code_aux", "code", "postcond_aux", "postcond", "proof_aux", "proof"]
    for t in tasks:
        names = [s.name for s in t.template.segments if not isinstance(s, str) and s.name in order]
        assert names == order, t.task_id


def test_reference_proof_file_is_the_task_file_itself(adapter_tasks):
    """The reference's ProofGen file, Lean-free: ``task.lean`` with Mathlib and
    Plausible imported first (whitespace aside), for all 187 scored tasks."""
    import re

    from pytest_specbench.benchmarks.verina import prompts
    from pytest_specbench.benchmarks.verina.answers import parse_answer
    from pytest_specbench.benchmarks.verina.kinds import KINDS
    b, tasks = adapter_tasks
    kind = KINDS["proofgen"]
    squash = lambda s: re.sub(r"\s+", "", s)  # noqa: E731
    for task in tasks:
        vt = b.task(task)
        fields = parse_answer(prompts.answer_text(prompts.reference_fields(vt, kind)), kind.fields)
        file = b.proof_file(vt, kind, fields, _Settings())
        body = file.text.split("#print \"specbench:")[0]
        body = body.replace("import Mathlib\nimport Plausible\n", "", 1)
        original = vt.lean_text.replace("import Mathlib\n", "", 1)
        assert squash(body) == squash(original), task.task_id


@pytest.mark.parametrize("kind_name", ["codegen", "specgen", "proofgen", "code_spec", "code_proof", "spec_proof",
                                       "code_spec_proof", "codegen_with_spec", "specgen_with_code"])
def test_every_kind_prompts_and_assembles_on_all_tasks(adapter_tasks, kind_name):
    from pytest_specbench.benchmarks.verina import prompts
    from pytest_specbench.benchmarks.verina.answers import parse_answer
    from pytest_specbench.benchmarks.verina.screen import screen
    from pytest_specbench.benchmarks.verina.kinds import KINDS
    b, tasks = adapter_tasks
    kind = KINDS[kind_name]
    examples = b._examples
    assert [e.task_id for e in examples] == ["verina_basic_15", "verina_basic_44"]
    for task in tasks:
        vt = b.task(task)
        system, user = prompts.render(vt, kind, examples)
        assert user.count("[[ ## task_template ## ]]") == 3
        fields = parse_answer(prompts.answer_text(prompts.reference_fields(vt, kind)), kind.fields)
        screen(fields)
        # the check commands, without the post-elaboration audit's cases (#43)
        checks = lambda file: [c for c in file.cases if not c.key.startswith("audit:")]  # noqa: E731
        if "code" in kind.checks:
            assert len(checks(b.code_file(vt, kind, fields, _Settings()))) == len(vt.tests)
        if "precond_sound" in kind.checks:
            n = len(vt.tests) * 2 + len(vt.reject_inputs) + sum(len(t["unexpected"]) for t in vt.tests)
            assert len(checks(b.spec_files(vt, kind, fields, _Settings()))) == n
        if "proof" in kind.checks:
            proof = b.proof_file(vt, kind, fields, _Settings())
            assert proof.text.count("#print axioms") >= 1 and len(proof.cases) - len(checks(proof)) >= 1
