"""The JML parser and translator, without a JVM."""
from __future__ import annotations

import pytest

from pytest_specbench.jml import expr as X
from pytest_specbench.jml.inputs import driver_from_daikon
from pytest_specbench.jml.translate import TranslationError, spec_cases, translate, ClauseScanner


def test_jml_operators_have_jml_precedence():
    e = X.parse_expr(r"a ==> b <==> c || d")
    assert isinstance(e, X.Binary) and e.op == "<==>"
    assert e.left.op == "==>" and e.right.op == "||"
    assert X.to_java(X.parse_expr("a ==> b ==> c"), ) == "(!(a) || ((!(b) || (c))))"  # right-associative


def test_unparenthesised_quantifier_body_extends_to_the_end():
    e = X.parse_expr(r"\forall int j; 0 <= j && j < a.length; \forall int i; 0 <= i && i < j; a[i] <= a[j]")
    assert isinstance(e, X.Quant) and isinstance(e.body, X.Quant)
    assert X.bounds(e.body) is not None


def test_chained_comparison_and_multi_variable_quantifier():
    e = X.parse_expr(r"(\forall int j; 0 <= j < n - 2; a[j] > 0)")
    lo, lo_strict, hi, hi_inclusive = X.bounds(e)
    assert X.to_jml(lo) == "0" and X.to_jml(hi) == "(n - 2)" and not lo_strict and not hi_inclusive
    q = X.parse_expr(r"(\forall int i,j; 0 <= i && i < n && 0 <= j && j < n && i != j; a[i] != a[j])")
    assert q.var == "i" and q.body.var == "j"
    assert "j" not in X.free_names(q.range)  # the outer range mentions only i


def test_unbounded_quantifier_is_unsupported_not_passed():
    src = "class A {\n //@ ensures (\\forall int i; i > 0; i != 0);\n int f() { return 1; }\n}"
    t = translate(src)
    assert t.unsupported and t.unsupported[0][1] == 2 and "bound" in t.unsupported[0][0]


def test_syntax_error_names_the_jml_line():
    src = "class A {\n  int x;\n  //@ ensures \\result == ;\n  int f() { return 1; }\n}"
    with pytest.raises(TranslationError) as err:
        translate(src)
    assert err.value.line == 3


def test_nested_spec_cases_get_the_common_prefix():
    text = "requires p;\n{|\n requires a;\n ensures x;\nalso\n requires b;\n ensures y;\n|}"
    cases, _ = spec_cases(ClauseScanner(text, 10).items())
    assert [[c.text for c in case.of("requires")] for case in cases] == [["p", "a"], ["p", "b"]]
    assert cases[1].of("ensures")[0].line == 16


def test_class_invariant_is_checked_and_constraint_is_unsupported():
    src = "class A {\n int[] f;\n //@ public invariant f.length > 0;\n int g() { return 1; }\n}"
    t = translate(src)
    assert t.ok and '"invariant", 3,' in t.source
    src = "class A {\n int x;\n //@ public constraint x >= \\old(x);\n int g() { return 1; }\n}"
    assert translate(src).unsupported == [("class-level constraint", 3)]


def test_translation_shape():
    src = """public class S {
    //@ requires 0 <= n;
    //@ ensures \\result == n * (n + 1) / 2;
    public static int sum(int n) {
        int s = 0;
        //@ maintaining 0 <= i && i <= n + 1;
        //@ decreases n - i + 1;
        for (int i = 0; i <= n; i++) { s += i; }
        //@ assert s >= 0;
        return s;
    }
}"""
    t = translate(src)
    assert t.ok and sorted(c.kind for c in t.clauses) == ["assert", "decreases", "ensures", "maintaining", "requires"]
    assert "specbench.jml.JmlRt.inv(" in t.source and "__jml_body" in t.source
    assert t.methods["sum"][0]["params"] == [("int", "n")]


def test_driver_maps_renamed_methods_and_permuted_parameters():
    oracle = translate("class L {\n public static int find(int key, int[] a) { return -1; }\n}")
    daikon = """class L {
    public static int search(int[] a, int key) { return -1; }
    public static void main(String[] args) {
        int[] a = new int[]{1, 2};
        search(a, 2);
        a = new int[]{};
        search(a, 5);
    }
}"""
    d = driver_from_daikon(daikon, oracle, "L", generate=False)
    assert [c.text for c in d.calls] == ["L.find(2, a)", "L.find(5, a)"]
    assert "a = new int[]{};" in d.source
    g = driver_from_daikon(daikon, oracle, "L")
    assert len(g.calls) > 2 and all(c.generated for c in g.calls[2:])
