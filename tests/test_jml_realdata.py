"""The JML checker on a slice of SpecGenBench (../shared/datasets/specgenbench; skipped when absent).
The full run of all 120 programs is `python -m pytest_specbench.benchmarks.speceval.tools.validate_jml`."""
from __future__ import annotations

import io
import shutil

import pytest

from pytest_specbench.jml.checker import JmlChecker
from pytest_specbench.benchmarks.speceval.tools.validate_jml import validate
from shared_data import SHARED_DATA
from shared_runs import bundled_jvm, postcond_bundled_state  # noqa: F401  (fixtures: the session's executor, its class cache)

pytestmark = pytest.mark.realdata
DATA = SHARED_DATA / "specgenbench"

# Picked for what they exercise: nested unparenthesised quantifiers and loop invariants (BinarySearch),
# \old on arrays under a quantifier (RotateArray), nested spec cases and old declarations (GCD), ghost/set
# (MoveZeroes), a class invariant and exceptional_behavior (Fibonacci), a model method (MyPower's
# generated negative exponent is an oracle finding), and one oracle bug (ContainsDuplicate).
SLICE = {"BinarySearch", "RotateArray", "GCD", "MoveZeroes", "Fibonacci", "ContainsDuplicate"}


@pytest.mark.skipif(not DATA.is_dir(), reason=f"SpecGenBench not found at {DATA}")
@pytest.mark.skipif(not shutil.which("javac"), reason="javac not found: apt-get install openjdk-17-jdk-headless")
def test_oracle_specs_hold_and_mutants_are_caught(bundled_jvm):
    out = io.StringIO()
    # The session's executor and class cache (tests/shared_runs.py): its warm javac and the
    # JML runtime are the session's; every program and mutant below is compiled and run here.
    checker = JmlChecker(bundled_jvm)
    res = validate(DATA, checker, per_operator=1, only=SLICE, out=out)
    fig = res["figures"]
    assert fig["translated"] == fig["compiled"] == len(SLICE), out.getvalue()
    failing = sorted(f.split(":")[0] for f in res["ground_truth_failures"])
    assert failing == ["ContainsDuplicate", "Fibonacci"], out.getvalue()
    caught = sum(c for c, _ in res["mutants"].values())
    total = sum(t for _, t in res["mutants"].values())
    assert total >= 8 and caught / total >= 0.6, out.getvalue()
