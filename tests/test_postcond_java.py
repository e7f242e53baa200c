"""PostcondBench, Java side: answer parsing, injection, PIT-default mutants, the JUnit
lookup, and runs of the bundled javalib tasks through the jvm executor's sandbox
(reference 100%, wrong and trivial specs, hostile answers are F; -n 2 == -n 0 is in
test_postcond_plugin.py)."""
import json
from pathlib import Path

import pytest

from pytest_specbench.benchmarks.postcond.adapter import ADAPTER, BUNDLED, load_tasks
from pytest_specbench.benchmarks.postcond.java import execute, mutate, source
from pytest_specbench.jml import junit
from pytest_specbench.errors import DataError, InfrastructureError
from pytest_specbench.execution.jvm import JvmExecutor
from pytest_specbench.models.base import Completion
from fakes import fake_context
from shared_runs import bundled_jvm, postcond_bundled_state  # noqa: F401  (fixtures: the session's executor, its classes)

ROOT = Path(__file__).resolve().parents[1]
JAVALIB = BUNDLED.parent / "javalib"


def java_tasks():
    return [t for t in load_tasks(BUNDLED)[0] if t.data["repo"]["language"] == "java"]


def java_task(name):
    return next(t for t in java_tasks() if t.task_id == f"javalib--{name}")


# ------------------------------------------------------------------ no JVM needed
def test_answers_are_read_through_fences_prose_and_comment_styles():
    text = ("Sure! Here are the postconditions:\n```java\n"
            "//@ ensures \\result >= 0; // never negative\n"
            "// @ ensures \\result <= hi;\n"
            "/*@ ensures x < lo\n  @     ==> \\result == lo;\n  @*/\n"
            "```\nThese cover the bounds.")
    assert source.parse_answer(text) == ["\\result >= 0", "\\result <= hi", "x < lo ==> \\result == lo"]
    # no fence, no //@ marker, no ';' at the end of the last clause
    assert source.parse_answer("ensures \\result == \\old(size()) + 1;\nensures \\result > 0") == \
        ["\\result == \\old(size()) + 1", "\\result > 0"]
    # a ';' inside a string does not end the clause; two clauses on one line
    assert source.parse_answer('//@ ensures s.equals("a;b");') == ['s.equals("a;b")']
    assert source.parse_answer("//@ ensures a > 0; ensures b > 0; // both") == ["a > 0", "b > 0"]


@pytest.mark.parametrize("answer,why", [
    ("I cannot help with that.", "no JML ensures clause"),
    ("//@ requires x > 0;", "no JML ensures clause"),
    ("//@ ensures \\result == (;", "does not parse"),
    ("//@ ensures \\result == 0 \\u000a static { System.exit(1); } //;", "unicode escapes"),
    ('//@ ensures "a\nstatic { } //".isEmpty();', "line break"),
    ("", "empty answer"),
])
def test_garbage_answers_are_parse_errors_with_a_reason(answer, why):
    with pytest.raises(source.AnswerError, match=why):
        source.parse_answer(answer)


def test_injection_goes_above_the_declaration_after_the_javadoc():
    text = (JAVALIB / "src/main/java/javalib/IntStack.java").read_text()
    task = java_task("push").data
    inj = source.inject(text, "push", task["start_line"], task["end_line"], ["\\result ==> size() > 0", "true"])
    lines = inj.text.splitlines()
    first = min(inj.clause_lines)
    assert lines[first - 1] == "    //@ ensures \\result ==> size() > 0;" and lines[first] == "    //@ ensures true;"
    assert lines[first - 2].strip() == "*/"  # the Javadoc's end
    assert lines[inj.decl_line - 1].strip().startswith("public boolean push(int v)")
    assert inj.site.binary_class == "javalib.IntStack"


def test_pit_default_operators_on_a_method():
    method = ("    public static int f(int a, int b) {\n        if (a < b) {\n            return a + b;\n        }\n"
              "        log(a);\n        return -a;\n    }")
    got = {(op, m.replace(method, "")) for op, m in mutate.rule_mutants(method)}
    ops = {op for op, _ in got}
    assert {"conditionals_boundary", "negate_conditionals", "math", "void_method_calls", "invert_negs",
            "primitive_returns"} <= ops
    texts = [m for _, m in mutate.rule_mutants(method)]
    assert any("if (a <= b)" in t for t in texts) and any("if (a >= b)" in t for t in texts)
    assert any("return a - b;" in t for t in texts) and any("return a;" in t for t in texts)
    assert any("log(a)" not in t for t in texts) and any("return 0;" in t for t in texts)
    assert len(texts) == len(set(texts))
    boolean = "    boolean g(Object o) {\n        return o != null;\n    }"
    assert {op for op, _ in mutate.rule_mutants(boolean)} >= {"true_returns", "false_returns", "negate_conditionals"}
    obj = "    String h() {\n        return name;\n    }"
    assert {m.split("return ")[1].split(";")[0] for _, m in mutate.rule_mutants(obj)} == {'""', "null"}


def test_junit_lookup_says_how_to_install(monkeypatch, tmp_path):
    monkeypatch.delenv("SPECBENCH_JUNIT_JAR", raising=False)
    monkeypatch.setattr(junit, "DEBIAN", tmp_path)
    assert "apt-get install junit4" in junit.missing()
    monkeypatch.setenv("SPECBENCH_JUNIT_JAR", str(tmp_path / "nothing.jar"))
    assert "SPECBENCH_JUNIT_JAR" in junit.missing()
    (tmp_path / "junit4.jar").write_bytes(b"")
    (tmp_path / "hamcrest.jar").write_bytes(b"")
    monkeypatch.setenv("SPECBENCH_JUNIT_JAR", str(tmp_path / "junit4.jar"))
    assert junit.jars() == ((tmp_path / "junit4.jar").resolve(), (tmp_path / "hamcrest.jar").resolve())


def SkipCtx(tmp_path):
    return fake_context(cache=tmp_path, executors={"jvm": lambda: JvmExecutor(tmp_path)})


def test_missing_junit_skips_java_items_with_the_install_line(monkeypatch, tmp_path):
    monkeypatch.delenv("SPECBENCH_JUNIT_JAR", raising=False)
    monkeypatch.setattr(junit, "DEBIAN", tmp_path)
    reason = ADAPTER.skip_reason("correct", java_task("clamp"), SkipCtx(tmp_path))
    assert reason and ("apt-get install junit4" in reason or "openjdk" in reason)
    assert "\n" not in reason


def test_maven_projects_skip_because_they_need_maven_central(tmp_path):
    task = java_task("clamp")
    data = json.loads(json.dumps(task.data))
    data["repo"] = {"github_path": "TheAlgorithms/Java", "commit": "b" * 40, "language": "java",
                    "env_config": "<project><modelVersion>4.0.0</modelVersion></project>", "failed_tests": []}
    (tmp_path / "TheAlgorithms--Java--clamp.json").write_text(json.dumps(data))
    (maven,) = load_tasks(tmp_path)[0]
    reason = ADAPTER.skip_reason("correct", maven, SkipCtx(tmp_path))
    assert "Maven Central" in reason and "TheAlgorithms/Java" in reason


def test_unknown_language_is_a_data_error(tmp_path):
    data = dict(java_task("clamp").data, repo={"language": "kotlin"})
    (tmp_path / "k.json").write_text(json.dumps(data))
    with pytest.raises(DataError, match="repo.language 'kotlin'"):
        load_tasks(tmp_path)


def test_java_prompts_follow_the_three_settings():
    task = java_task("push")

    class S:
        def __init__(self, setting):
            self.setting = setting

        def option(self, name):
            return self.setting

    f2p, c2p, n2p = (ADAPTER.prompt(task, S(s)).messages[0].content for s in ("f2p", "c2p", "n2p"))
    for p in (f2p, c2p, n2p):
        assert p.startswith("## Code Context\n```\n") and "JML format postconditions" in p and "`push`" in p
    assert "Pushes a value unless" in f2p and "Pushes a value unless" not in c2p
    assert "items[size] = v;" in f2p and "items[size] = v;" in c2p and "items[size] = v;" not in n2p
    assert "{ ... }" in n2p and "Pushes a value unless" in n2p  # N2P keeps the target's Javadoc (its header)


JAVA_DEPENDENCY_FILE = """\
package demo;

import java.util.List;
import com.google.common.base.Strings;

public class Account {
    private long balance;

    /** Doc. */
    public static int clamp(int x, int lo, int hi) {
        return Math.max(lo, Math.min(x, hi));
    }

    public boolean withdraw(long amount) {
        if (amount > balance) { return false; }
        balance -= amount;
        return true;
    }

    public long twice() { return this.total() * 2; }

    public long total() { return total(3); }

    public long total(int n) { return n <= 0 ? 0 : total(n - 1) + 1; }

    public static int sum(List<Integer> xs) {
        int s = 0;
        for (int x : xs) { s += x; }
        return s;
    }

    public static String pad(String s) { return Strings.padStart(s, 3, ' '); }

    public static Helper make() { return new Helper(); }

    public static <T> T first(T[] xs) { return xs[0]; }
}
"""

JAVA_EXPECTED = {"clamp": "builtin", "withdraw": "class", "twice": "class", "sum": "stdlib", "pad": "third-party",
                 "make": "file", "first": "builtin"}


def test_java_dependency_level_is_what_the_method_reaches():
    """§5.4 after Yu et al., at the method's level: the file imports Guava, yet clamp, sum and first
    reach only java.lang / java.util (Solo); withdraw and twice use their class, make a type of the
    file's package (Helper, not imported), pad a third-party name (Dep)."""
    from pytest_specbench.benchmarks.postcond.dependency import is_standalone_java, java_dependency_level

    lines = JAVA_DEPENDENCY_FILE.splitlines()
    at = {name: next(i + 1 for i, line in enumerate(lines) if f" {name}(" in line and "public" in line)
          for name in JAVA_EXPECTED}
    at["clamp"] -= 1  # the task's span starts at its Javadoc
    assert {n: java_dependency_level(JAVA_DEPENDENCY_FILE, n, at[n]) for n in JAVA_EXPECTED} == JAVA_EXPECTED
    assert not is_standalone_java(JAVA_DEPENDENCY_FILE)  # the file's imports alone: Guava makes it Dep
    assert {n for n in JAVA_EXPECTED if is_standalone_java(JAVA_DEPENDENCY_FILE, n, at[n])} == {"clamp", "sum", "first"}


def test_bundled_tasks_are_labelled_by_what_their_method_reaches():
    from pytest_specbench.benchmarks.postcond.adapter import _dependency_group

    groups = {t.task_id: _dependency_group(t.task_id, t) for t in load_tasks(BUNDLED)[0]}
    assert {t for t, g in groups.items() if g == "Dep"} == {"javalib--push", "javalib--withdraw", "minilib--push"}


def test_java_metrics_group_by_language_and_dependency():
    results = {"javalib--clamp": [{"checks": {"correct": {"verdict": "passed"}, "complete": {"complete": False}}}],
               "minilib--gcd": [{"checks": {"correct": {"verdict": "passed"}, "complete": {"complete": True}}}]}
    tasks = {t.task_id: t for t in load_tasks(BUNDLED)[0]}
    m = ADAPTER.aggregate(results, tasks, None)
    assert m["Corr@1[Java]"] == 1.0 and m["Comp@1[Java]"] == 0.0 and m["Comp@1[Python]"] == 1.0
    assert m["methods[Java]"] == 1 and m["methods[Solo]"] == 2


# ------------------------------------------------------------------ runs (javac, java, JUnit 4)
def _toolchain_missing():
    return JvmExecutor(Path("/tmp")).available() or junit.missing()


needs_jvm = pytest.mark.skipif(bool(_toolchain_missing()), reason=str(_toolchain_missing()))


def JavaCtx(tmp_path, jvm, **opts):
    return fake_context(cache=tmp_path, executors={"jvm": jvm},
                        **{"postcond_timeout": 10.0, "postcond_complete": "paper", **opts})


@pytest.fixture(scope="module")
def jvm(bundled_jvm):
    """The session's jvm executor (tests/shared_runs.py), as a plugin process has one: its
    warm javac starts once, not once per test or module.  Its class cache is the session's:
    the runtime, runner and project compile once for every test and xdist worker that runs
    the bundled Java tasks.  Every check still compiles its own program and runs its own JVM."""
    return bundled_jvm


@pytest.fixture
def ctx(tmp_path, jvm):
    return JavaCtx(tmp_path, jvm)


def check(ctx, task, answer, name="correct"):
    ctx.results.clear()
    return ADAPTER.run_check(name, task, Completion(answer), ctx)


# The reference of every Java task is correct and kills every mutant:
# tests/test_family_conformance.py (with the Python tasks and every other family; a spread
# of the tasks by default, all of them with SPECBENCH_TESTS_FULL=1).


@needs_jvm
def test_java_streams_lambdas_and_old_of_calls_run_as_java(ctx):
    """Upstream's Java prompt asks for streams instead of quantifiers; \\old(call()) is
    evaluated at entry (a snapshot of no variable would read the post-state)."""
    streams = ("//@ ensures java.util.stream.IntStream.range(0, a.length).allMatch(i -> a[i] <= a[\\result]);\n"
               "//@ ensures java.util.stream.IntStream.range(0, \\result).allMatch((int i) -> a[i] < a[\\result]);")
    assert check(ctx, java_task("maxIndex"), streams).passed
    wrong = "//@ ensures java.util.stream.IntStream.range(0, a.length).allMatch(i -> a[i] < a[\\result]);"
    assert check(ctx, java_task("maxIndex"), wrong).details["verdict"] == "jml_fail"
    push = java_task("push")
    assert check(ctx, push, "//@ ensures \\result ==> size() == \\old(size()) + 1;").passed
    r = check(ctx, push, "//@ ensures \\result ==> size() == \\old(size());")
    assert r.details["verdict"] == "jml_fail", r.details
    r = check(ctx, push, "//@ ensures \\old(peek()) >= 0 || true;")  # peek() on an empty stack throws at entry
    assert r.details["verdict"] == "local_crash" and "IllegalStateException" in r.message


@needs_jvm
def test_a_wrong_spec_fails_correct_naming_the_clause(ctx):
    r = check(ctx, java_task("clamp"), "//@ ensures \\result >= lo;\n//@ ensures \\result == 0;")
    assert not r.passed and r.details["verdict"] == "jml_fail"
    assert "clause 2" in r.message and "\\result == 0" in r.message and "NumbersTest#" in r.message


@needs_jvm
def test_a_trivially_true_spec_is_correct_but_not_complete(ctx):
    task = java_task("maxIndex")  # 3 mutants, the fewest of a Java task: each is a JVM run
    correct = check(ctx, task, "```java\n//@ ensures true;\n```")
    assert correct.passed, correct.message
    ctx.results["correct"] = correct
    complete = ADAPTER.run_check("complete", task, Completion("//@ ensures true;"), ctx)
    assert not complete.passed and complete.details["killed"] == 0
    assert complete.details["total"] == len(task.data["mutants"]) and "survive" in complete.message


@needs_jvm
def test_a_spec_that_does_not_compile_is_F_with_javacs_message_on_its_clause(ctx):
    r = check(ctx, java_task("clamp"), "//@ ensures \\result >= lo;\n//@ ensures \\result == nosuchname;")
    assert not r.passed and r.details["verdict"] == "compile_failure"
    assert "clause 2" in r.message and "cannot find symbol" in r.message


@needs_jvm
@pytest.mark.parametrize("answer,verdicts", [
    # System.exit is void: javac refuses it in an expression
    ("//@ ensures java.lang.System.exit(3) == null;", {"compile_failure"}),
    # a spec method call that never returns (CPU loop): the time limit
    ("//@ ensures java.util.stream.LongStream.range(0, java.lang.Long.MAX_VALUE).sum() != 1;", {"timeout"}),
    # a call that blocks forever (CompletableFuture: refused in a clause since issue 25)
    ("//@ ensures new java.util.concurrent.CompletableFuture().join() != null;", {"compile_failure"}),
    # fake records on System.out (the project's output is captured, records need the nonce) with a false clause
    ('//@ ensures java.lang.System.out.printf("{\\"nonce\\":\\"x\\",\\"test\\":\\"t\\",\\"outcome\\":\\"passed\\","'
     '+ "\\"violations\\":[]}%n{\\"done\\":true}%n") != null && \\result == -12345;', {"jml_fail"}),
    # the real stdout and the process are out of reach: a SecurityException, the clause is undefined
    ("//@ ensures new java.io.PrintStream(new java.io.FileOutputStream(java.io.FileDescriptor.out)) != null;",
     {"local_crash"}),
    ("//@ ensures java.lang.Runtime.getRuntime().availableProcessors() > 0 && "
     "java.lang.Runtime.getRuntime().exec(\"true\") != null;", {"compile_failure"}),
    ("//@ ensures java.lang.System.getenv(\"HOME\") == null || \\result >= 0;", {"local_crash"}),
    # threads are refused in a clause (issue 25: not pure)
    ("//@ ensures new java.lang.Thread().getName() != null;", {"compile_failure"}),
    # memory: the JVM's heap limit, an OutOfMemoryError through the method
    ("//@ ensures new long[1 << 30].length > 0;", {"local_crash"}),
], ids=["exit", "loop", "block", "fake-records", "real-stdout", "exec", "getenv", "thread", "memory"])
def test_hostile_answers_are_F_not_pass_not_E(ctx, answer, verdicts):
    # (the endless loop burns CPU until the limit: a short one, 1 s, as test_hostile_jml's looping
    # test gets; the others keep room to fail on their own)
    ctx.settings.options["postcond_timeout"] = 1.0 if verdicts == {"timeout"} else 4.0
    r = check(ctx, java_task("clamp"), answer)
    assert not r.passed and r.details["verdict"] in verdicts, r.details


# Tests that call System.exit/halt or flood the output cannot fake a pass:
# tests/test_hostile_jml.py::test_exit_and_floods_in_the_project_cannot_fake_a_pass (on that
# module's copy of the project with hostile tests, compiled once for both).


# -n 2 == -n 0 on a Java task (the reference and a wrong answer; the trivially true spec is
# test_a_trivially_true_spec_is_correct_but_not_complete above) runs together with the Python
# side's: tests/test_postcond_plugin.py::test_xdist_equals_serial_on_python_and_java_tasks.


class FakeResult:
    def __init__(self, stdout="", timed_out=False, killed=None, exit_code=0, signal=None):
        self.stdout, self.timed_out, self.killed, self.exit_code, self.signal = stdout, timed_out, killed, exit_code, signal


def test_verdicts_from_records_rank_as_on_the_python_side():
    t = ["p.T#a", "p.T#b"]
    ok = {"test": "p.T#a", "outcome": "passed", "run": 1, "failures": [], "violations": []}
    ok_b = dict(ok, test="p.T#b")
    done = {"done": True}
    viol = dict(ok_b, outcome="failed", violations=[{"kind": "ensures", "line": 7, "clause": "\\result > 0"}],
                failures=[{"exception": "specbench.jml.JmlViolation", "violation": True}])
    undef = dict(ok_b, violations=[{"kind": "undefined", "line": 7, "clause": "x", "message": "NPE"}])
    crash = dict(ok_b, outcome="failed", failures=[{"exception": "java.lang.ArithmeticException", "message": "/ by zero",
                                                    "through_target": True, "assertion": False}])
    fail = dict(ok_b, outcome="failed", failures=[{"exception": "java.lang.AssertionError", "message": "x",
                                                   "through_target": True, "assertion": True}])
    decide = execute.decide
    assert decide([ok, ok_b, done], FakeResult(), {}, t)["verdict"] == "passed"
    assert decide([ok, viol, done], FakeResult(), {7: 2}, t) == {
        "verdict": "jml_fail", "reason": "p.T#b: ensures clause 2 violated: \\result > 0"}
    assert decide([ok, undef, done], FakeResult(), {7: 1}, t)["verdict"] == "local_crash"
    assert decide([ok, crash, done], FakeResult(), {}, t)["verdict"] == "local_crash"
    assert decide([ok, fail, done], FakeResult(), {}, t)["verdict"] == "failed"
    assert decide([ok, viol], FakeResult(timed_out=True), {}, t)["verdict"] == "timeout"
    assert decide([ok], FakeResult(exit_code=1), {}, t)["verdict"] == "local_crash"  # no final record
    assert decide([ok, dict(ok_b, run=0), done], FakeResult(), {}, t)["verdict"] == "failed"  # nothing ran
    with pytest.raises(InfrastructureError, match="not found in the project"):
        decide([dict(test="p.T#zz", outcome="missing", message="ClassNotFound")], FakeResult(), {}, t)
    with pytest.raises(InfrastructureError, match="the JUnit runner failed"):
        decide([], FakeResult(stdout='{"runner_error":"boom"}'), {}, t)


@needs_jvm
@pytest.mark.slow
def test_authors_tool_rebuilds_a_bundled_task(tmp_path, monkeypatch):
    from pytest_specbench.benchmarks.postcond import cli
    import argparse

    # the tool keeps its state in the user's cache folder: the test's own, not the machine's
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))

    parser = argparse.ArgumentParser(prog="specbench")
    cli.register(parser.add_subparsers(dest="group"))
    # maxIndex: the tool runs every candidate mutant twice (without and with the reference),
    # each a JVM; its candidates are the fewest of the bundled Java tasks.
    out = tmp_path / "maxIndex.json"
    args = parser.parse_args(["postcond", "make-java-task", "--repo", str(JAVALIB), "--file",
                              "src/main/java/javalib/Seqs.java", "--method", "Seqs.maxIndex", "--tests",
                              "javalib.SeqsTest#maxIndexFindsTheLargest", "javalib.SeqsTest#maxIndexTakesTheFirstOfEqualMaxima",
                              "--ref", str(BUNDLED.parent / "refs" / "java" / "maxIndex.txt"), "--out", str(out),
                              "--github-path", "specbench/javalib", "--local-checkout", "../javalib", "--timeout", "10"])
    assert args.func(args) == 0
    built, bundled = json.loads(out.read_text()), java_task("maxIndex").data
    for key in ("start_line", "end_line", "body_start_line", "content", "header", "mutants", "mutant_tags",
                "ref_postcond", "ref_mutant_kill", "prompt", "repo"):
        assert built[key] == bundled[key], key
    bad = parser.parse_args(["postcond", "make-java-task", "--repo", str(JAVALIB), "--file",
                             "src/main/java/javalib/Account.java", "--method", "Account.nothing", "--tests", "x#y",
                             "--ref", str(BUNDLED.parent / "refs" / "java" / "withdraw.txt"), "--out", str(out)])
    assert bad.func(bad) == 2
    assert (tmp_path / "cache" / "pytest-specbench" / "postcond-author").is_dir()
