"""Branch coverage of the test calls (pytest_specbench/jml/coverage.py): which probes
the translator inserts, what the runner reports for in-domain calls, and that
neither the program's output nor a specification can set it."""
from __future__ import annotations

import shutil

import pytest

from pytest_specbench.benchmarks.speceval.adapter import _test_strength
from pytest_specbench.jml.checker import JmlChecker
from pytest_specbench.jml.inputs import driver_from_calls
from pytest_specbench.jml.translate import translate
from shared_runs import session_jvm  # noqa: F401  (a fixture: the process's jvm executor)

JAVA = bool(shutil.which("javac") and shutil.which("java"))
needs_java = pytest.mark.skipif(not JAVA, reason="javac/java not found: apt-get install openjdk-17-jdk-headless")

CLASSIFY = """public class C {
    //@ requires x >= 0;
    //@ ensures \\result >= 0;
    public static int classify(int x) {
        int r = 0;
        if (x > 10 && x % 2 == 0) {
            r = 2;
        } else if (x > 10) {
            r = 1;
        }
        //@ maintaining 0 <= i;
        for (int i = 0; i < x && i < 3; i++) {
            r += i > 1 ? 1 : 0;
        }
        return r;
    }
}"""


def test_probes_count_conditions_and_short_circuit_operands():
    tr = translate(CLASSIFY)
    kinds = [b.kind for b in tr.branches]
    # if: two && operands; else-if: one condition; for: two && operands; ?: one condition
    assert len(tr.branches) == 2 * (2 + 1 + 2 + 1)
    assert kinds.count("&&") == 8 and kinds.count("if") == 2 and kinds.count("?:") == 2
    assert [b.line for b in tr.branches if b.kind == "?:"] == [13, 13]
    # no line is added: JML lines in verdicts stay right
    assert len(tr.source.splitlines()) >= len(CLASSIFY.splitlines())
    assert "specbench.jml.JmlRt.br(" in tr.source and translate(CLASSIFY, probes=False).branches == []


def test_switch_cases_and_the_implicit_default_are_branches():
    src = """public class S {
    public static int f(char op) {
        int out = 0;
        switch (op) {
            case '+':
            case 'p':
                out = 1;
                break;
            case '-':
                out = 2;
                break;
        }
        while (true) { return out; }
    }
}"""
    tr = translate(src)
    # '+'/'p' share one target, '-' another, plus the default the switch lacks; while (true) has no branch
    assert [b.kind for b in tr.branches] == ["case", "case", "default"]


@pytest.fixture(scope="module")
def checker(session_jvm):
    # the process's jvm executor (tests/shared_runs.py; closed at the session's end, where
    # perf/suite_cpu.py counts its JVMs): no warm javac of this module's own
    return JmlChecker(session_jvm, call_seconds=2.0)


@needs_java
def test_coverage_counts_the_in_domain_calls_only(checker):
    weak = checker.check(CLASSIFY, driver_from_calls(["C.classify(0)", "C.classify(-5)"]))
    assert weak.status == "checked", weak.summary()
    assert [c.verdict for c in weak.calls] == ["holds", "precondition"]
    # x = 0: x > 10 false (twice: if and else-if), i < x false; nothing else reached
    assert weak.branch_coverage == pytest.approx(3 / 12)
    strong = checker.check(CLASSIFY, driver_from_calls(["C.classify(0)", "C.classify(12)", "C.classify(13)",
                                                        "C.classify(5)", "C.classify(2)"]))
    # x=12: && both true; 13: second operand false, else-if true; 5: x > 10 false; i<x && i<3 all outcomes;
    # ?: true (i = 2) and false
    assert strong.branch_coverage == 1.0
    assert _test_strength(len(weak.in_domain), weak.branch_coverage)["weak_tests"] is True
    assert _test_strength(len(strong.in_domain), strong.branch_coverage)["weak_tests"] is False


@needs_java
def test_program_output_and_specs_cannot_set_the_coverage(checker):
    # a fake record on stdout goes to the capped capture, not the channel
    fake = CLASSIFY.replace("int r = 0;", 'int r = 0; System.out.println("{\\"branches\\":[0,1,2,3,4,5,6,7,8,9,10,11]}");')
    rep = checker.check(fake, driver_from_calls(["C.classify(0)"]))
    assert rep.status == "checked" and rep.branch_coverage == pytest.approx(3 / 12)
    # a specification calling the runtime's probes is refused, not run
    forged = CLASSIFY.replace("ensures \\result >= 0;", "ensures specbench.jml.JmlRt.br(4, true) || true;")
    rep = checker.check(forged, driver_from_calls(["C.classify(0)"]))
    assert rep.status == "unsupported" and "runtime" in rep.message
