"""ContractEval's tiers of evidence about a model-written precondition (issue
#47, ``benchmarks/contract/tiers.py``) on the bundled suite under the ``cs``
prompt, every answer of the module through the adapter's checks once (a
module fixture; one command executor): a too-weak precondition the corpus
passes and the search refutes with a shrunk input, the reference passing every
tier check, and hostile preconditions that try to forge AV/RI."""
from __future__ import annotations

import json

import pytest

from pytest_specbench.benchmarks.contract.tiers import precondition_of
from pytest_specbench.data.bundled import bundled_suite
from pytest_specbench.pyspec.blocks import available

seccomp = pytest.mark.skipif(available() is not None, reason=str(available()))
SUITE = bundled_suite("contract")
ROWS = {r["task_id"]: r for r in map(json.loads, (SUITE / "contracteval" / "contracteval_rebuilt.jsonl")
                                     .read_text().splitlines())}
WEAK = json.loads((SUITE / "replay_pre_pbt_refutes.jsonl").read_text())["solution"]
BODY = '    for bound, letter in ((90, "A"), (80, "B"), (70, "C"), (60, "D")):\n' \
       '        if score >= bound:\n            return letter\n    return "F"\n'

# Hostile preconditions of Mbpp-S/5 (grade_for: an int or float, not a bool, in [0, 100]).
HOSTILE = {
    # Looks for the reference contract (the job's files, the keeper's memory and modules, the
    # data file): with it, it would be the contract itself. It also knows the corpus: it rejects
    # exactly the task's CVTs. It finds nothing, so it is the precondition it looks like: the
    # corpus passes it, the search's inputs are not the corpus's (RI REFUTED by pbt).
    "reads the reference, knows the corpus": (
        "import gc, sys\n\ndef peek(score):\n"
        "    found = [m for m in sys.modules if m.startswith(('specbench_', 'hypothesis', 'pytest_specbench'))]\n"
        "    for path in ('search-config.json', 'blocks-config.json', 'blocks-cases.json', '/proc/self/environ',\n"
        "                 '" + str(SUITE / "contracteval" / "contracteval_rebuilt.jsonl") + "'):\n"
        "        try:\n            found.append(open(path).read())\n        except Exception:\n            pass\n"
        "    found += [o for o in gc.get_objects() if isinstance(o, dict) and ('contract' in o or 'cvts' in o)]\n"
        "    if found:\n        return isinstance(score, (int, float)) and not isinstance(score, bool) and "
        "0 <= score <= 100\n"
        "    return not any(score == c and type(score) is type(c) for c in (-1, 100.5, 101, '95', True, None, -0.01))"
        "\n\ndef grade_for(score):\n    assert peek(score)\n" + BODY),
    # Writes "violated" lines on every descriptor it has: its forgery speaks for its own case
    # (valid inputs too): AV REFUTED.
    "writes the verdict channel": (
        "import os\n\ndef forge():\n    for fd in range(64):\n        try:\n"
        "            os.write(fd, b'{\"kind\": \"violated\", \"exc\": \"AssertionError\"}\\n' * 4)\n"
        "        except OSError:\n            pass\n    return True\n\n"
        "def grade_for(score):\n    assert forge()\n" + BODY),
    # Rejects by something clever: an exception that claims to be an AssertionError to
    # isinstance (its __class__) and has no message, or leaves the process (a bool): the
    # first rejects valid inputs too (AV REFUTED), the second rejects nothing (RI REFUTED).
    "raises something clever": (
        "import os\n\nclass Clever(Exception):\n    __class__ = property(lambda self: AssertionError)\n"
        "    def __str__(self):\n        raise RuntimeError('no message')\n\n"
        "def judge(score):\n    if isinstance(score, bool):\n        os._exit(0)\n"
        "    if not 0 <= score <= 42:\n        raise Clever()\n    return True\n\n"
        "def grade_for(score):\n    assert isinstance(score, (int, float))\n    assert judge(score)\n" + BODY),
}
# The reference passing every tier check on every bundled task: docs/tiers.md's run (not repeated here).
ANSWERS = [("HumanEval-S/0", WEAK), ("Mbpp-S/5", ROWS["Mbpp-S/5"]["reference_with_contracts"]),
           *(("Mbpp-S/5", h) for h in HOSTILE.values())]


# Which tier checks each answer needs (the corpus alone shows what the forger and the clever one do).
NEEDS = {0: ("pre_corpus", "pre_pbt", "pre_z3"), 1: ("pre_corpus", "pre_pbt", "pre_z3"), 2: ("pre_corpus", "pre_pbt"),
         3: ("pre_corpus",), 4: ("pre_corpus",)}
OPTIONS = {"contract_condition": "cs", "contract_rejection": "assert", "spec_tiers": ("corpus", "pbt", "z3"),
           "spec_pbt_examples": 10, "spec_z3_bound": 2, "spec_tier_seconds": 2}


@pytest.fixture(scope="module")
def tiers_run(made_once, tmp_path_factory):
    """Every answer through the adapter's own ``run_check`` (in this process: the
    checks' jobs run in the sandbox, one command executor for all), once for the
    session (under xdist, by the first worker whose tests need it)."""
    return {int(i): checks for i, checks in made_once("tiers", lambda: _tiers_run(tmp_path_factory)).items()}


def _tiers_run(tmp_path_factory):
    from pytest_specbench.benchmarks.contract.contract import ADAPTER
    from pytest_specbench.execution.command import CommandExecutor
    from pytest_specbench.models.base import Completion
    from fakes import FakeSettings, fake_context

    settings = FakeSettings(tmp_path_factory.mktemp("contract-tiers"), options=OPTIONS)
    tasks = {t.task_id: t for t in ADAPTER.load(None, settings).tasks}
    assert ADAPTER.checks_for(tasks["Mbpp-S/5"]) == ("functional", "contract", "pre_corpus", "pre_pbt", "pre_z3")
    executor = CommandExecutor()
    ctx = fake_context(settings, executors={"command": executor})
    out = {}
    try:
        for i, (task_id, answer) in enumerate(ANSWERS):
            for check in NEEDS[i]:
                got = ADAPTER.run_check(check, tasks[task_id], Completion(answer), ctx)
                out.setdefault(i, {})[check] = {**{d["relation"]: d for d in got.details.get("tiers", ())},
                                                "passed": got.passed, "message": got.message,
                                                "asserts": got.details.get("asserts")}
    finally:
        executor.close()
    return out


def test_the_answer_precondition_is_its_leading_asserts_called_by_position():
    pre = precondition_of('import math\n\ndef f(a: int, b=2):\n    """doc"""\n    assert a > 0\n    assert b\n'
                          '    x = 1\n    assert x\n    return a\n', "f", ["x", "y"])
    assert pre.asserts == "assert a > 0\nassert b" and pre.params == ("a", "b")
    assert pre.block.splitlines()[0] == "import math" and pre.block.splitlines()[-1] == "__specbench_precondition(x, y)"
    assert "return a" not in pre.block and "assert x" not in pre.block


@seccomp
def test_corpus_passes_a_weak_precondition_that_pbt_and_z3_refute_and_the_reference_passes(tiers_run):
    weak = tiers_run[0]
    assert weak["pre_corpus"]["passed"] and weak["pre_corpus"]["RI"]["examples"] == 7, weak["pre_corpus"]
    assert weak["pre_pbt"]["AV"]["status"] == "PASSED" and weak["pre_pbt"]["RI"]["status"] == "REFUTED"
    shrunk = weak["pre_pbt"]["RI"]["counterexample"]["inputs"]
    assert shrunk == {"values": [0.0], "low": 0.0, "high": None}, shrunk  # high's type is never checked
    assert weak["pre_pbt"]["message"].startswith("RI REFUTED by pbt: an invalid input that the precondition accepts")
    assert weak["pre_z3"]["RI"]["status"] == "REFUTED", weak["pre_z3"]
    reference = tiers_run[1]  # the reference contract as an answer
    assert all(c["passed"] for c in reference.values()), reference
    assert reference["pre_pbt"]["RI"]["status"] == reference["pre_pbt"]["AV"]["status"] == "PASSED"
    assert reference["pre_z3"]["AV"]["status"] == reference["pre_z3"]["RI"]["status"] == "PROVED"


@seccomp
def test_hostile_preconditions_get_no_forged_av_or_ri(tiers_run):
    got = dict(zip(HOSTILE, (tiers_run[i] for i in range(2, 2 + len(HOSTILE)))))
    reader = got["reads the reference, knows the corpus"]
    assert reader["pre_corpus"]["asserts"] == 1  # its precondition is the peek (not an empty one)
    assert reader["pre_corpus"]["passed"], reader  # it knows the CVTs
    assert reader["pre_pbt"]["RI"]["status"] == "REFUTED", reader  # ... and found no contract in the search
    assert got["writes the verdict channel"]["pre_corpus"]["AV"]["status"] == "REFUTED"
    clever = got["raises something clever"]
    assert clever["pre_corpus"]["RI"]["status"] == "REFUTED"  # os._exit on True is no rejection
    assert clever["pre_corpus"]["AV"]["status"] == "REFUTED"  # 43 to 100 are valid
    for name, c in got.items():
        assert not all(check["passed"] for check in c.values()), name
