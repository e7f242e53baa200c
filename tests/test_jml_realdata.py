"""The JML checker on a slice of SpecGenBench (../shared/datasets/specgenbench; skipped when absent).
The full run of all 120 programs is `python -m pytest_specbench.benchmarks.speceval.tools.validate_jml`."""
from __future__ import annotations

import io
import shutil

import pytest

from pytest_specbench.jml.checker import JmlChecker
from pytest_specbench.benchmarks.speceval.tools.validate_jml import validate
from shared_data import FULL, SHARED_DATA
from shared_runs import session_jvm  # noqa: F401  (a fixture: the process's jvm executor)

pytestmark = pytest.mark.realdata
DATA = SHARED_DATA / "specgenbench"

# Picked for what they exercise: nested unparenthesised quantifiers and loop invariants (BinarySearch),
# \old on arrays under a quantifier (RotateArray), nested spec cases and old declarations (GCD), ghost/set
# (MoveZeroes), a class invariant and exceptional_behavior (Fibonacci), a model method (MyPower's
# generated negative exponent is an oracle finding), and one oracle bug (ContainsDuplicate).
SLICE = {"BinarySearch", "RotateArray", "GCD", "MoveZeroes", "Fibonacci", "ContainsDuplicate"}
# Mutants (one per operator) of three of the four holding oracles: 9 mutants, 8 caught (each a
# JVM run; RotateArray's 3 more were ~1 CPU s); of all four with SPECBENCH_TESTS_FULL=1.
MUTATED = {"BinarySearch", "GCD", "MoveZeroes", "RotateArray"} if FULL else {"BinarySearch", "GCD", "MoveZeroes"}


@pytest.mark.skipif(not DATA.is_dir(), reason=f"SpecGenBench not found at {DATA}")
@pytest.mark.skipif(not shutil.which("javac"), reason="javac not found: apt-get install openjdk-17-jdk-headless")
def test_oracle_specs_hold_and_mutants_are_caught(session_jvm):
    out = io.StringIO()
    # The process's executor (tests/shared_runs.py): its warm javac and the JML runtime are the
    # session's; every program and mutant below is compiled and run here.  It needs no
    # PostcondBench project: ``bundled_jvm`` made this test wait for that build (the JUnit
    # runner's and the javalib project's javac jobs), which the first test that needs it does.
    checker = JmlChecker(session_jvm)
    res = [validate(DATA, checker, per_operator=0, only=SLICE - MUTATED, out=out),
           validate(DATA, checker, per_operator=1, only=MUTATED, out=out)]
    assert sum(r["figures"].get("programs", 0) for r in res) == len(SLICE), out.getvalue()
    assert sum(r["figures"].get("translated", 0) for r in res) == sum(r["figures"].get("compiled", 0) for r in res) == len(SLICE), \
        out.getvalue()
    failing = sorted(f.split(":")[0] for r in res for f in r["ground_truth_failures"])
    assert failing == ["ContainsDuplicate", "Fibonacci"], out.getvalue()
    caught = sum(c for c, _ in res[1]["mutants"].values())
    total = sum(t for _, t in res[1]["mutants"].values())
    assert total >= 8 and caught / total >= 0.6, out.getvalue()
