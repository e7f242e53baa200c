"""Hostile JML answers (issue 25): a spec, a fill or an ``ensures`` clause is hostile
code that wants a pass.  Each variant below asserts the exact verdict it must get;
none may pass what it should not, and none may make the harness error (E): a
sample's fault is F with one line.  Classes, as in the issue:

1. injection through comments (javac decodes ``\\u`` escapes in comments; shadowing the
   runtime's package with a member type; model methods found by brace counting);
2. the spec reaching the checker's runtime (forged precondition failures, the runner's lock);
3. vacuity (a ``requires`` no test call satisfies) and impure spec expressions;
4. JDK threads running sample code outside the call (common pool, cleaners);
5. sample faults that became E (line separators in output, deep or huge expressions,
   misplaced ``\\old``, hostile ``getMessage``);
6. a sample holding the harness (the runtime's lock, the wall bound multiplied by retries).

SpecEval's side runs the JML checker (and the adapter for generation and infilling);
PostcondBench's Java side runs the bundled javalib project under the JML service's JUnitRunner.
Programs written here as *trusted* fixtures stand for what program code can do; the
answers stand for what a model can write.  tests/test_hostile_samples.py is the model
for the Python side.
"""
from __future__ import annotations

import shutil
from types import SimpleNamespace

import pytest

from pytest_specbench.jml.checker import JmlChecker
from pytest_specbench.jml.inputs import driver_from_calls
from fakes import FakeSettings, fake_context
from shared_runs import bundled_jvm, postcond_bundled_state  # noqa: F401  (fixtures: the session's executor, its class cache)

JAVA = bool(shutil.which("javac") and shutil.which("java"))
pytestmark = pytest.mark.skipif(not JAVA, reason="javac/java not found: apt-get install openjdk-17-jdk-headless")


@pytest.fixture(scope="module")
def jvm(bundled_jvm):
    """The session's executor (tests/shared_runs.py): its warm javac is shared with the other
    modules of the JML service and PostcondBench's Java side, and the warm javac, the JML
    runtime, the JUnit runner and the javalib project are trusted classes compiled once per
    content for every module and xdist worker.  Every spec, fill, answer and test program
    below is still compiled by this module and run in JVMs of its own."""
    return bundled_jvm


@pytest.fixture(scope="module")
def checker(jvm):
    return JmlChecker(jvm, call_seconds=2.0)


@pytest.fixture(scope="module")
def quick_checker(jvm):
    """A checker with a 1 s call budget on the module's executor (its runtime, runners and
    warm javac are shared; each check still starts JVMs of its own)."""
    return JmlChecker(jvm, call_seconds=1.0)


CALLS = driver_from_calls(["Hx.f(1)", "Hx.f(2)", "Hx.f(-3)"])


def program(spec: str, body: str = "return x;", extra: str = "", sig: str = "public static int f(int x)") -> str:
    return f"public class Hx {{\n{extra}\n{spec}\n    {sig} {{\n        {body}\n    }}\n}}\n"


# A member type that would shadow the package specbench.jml (JLS 6.4.2) and make every
# generated check call it instead of the runtime.
SHADOW = ("static class specbench { static class jml { static class JmlRt { "
          "static void enter() {} static void exit() {} static void check(boolean b, String k, int l, String c) {} "
          "static RuntimeException undefined(String k, int l, String c, Throwable t) { return null; } "
          "static boolean br(int i, boolean c) { return c; } static void hit(int i) {} "
          "static RuntimeException fail(String k, int l, String c, String d) { return null; } "
          "static void allowed() {} } } }")
FALSE = "    //@ ensures \\result == 424242;"


# ------------------------------------------------------------------ 1. injection through comments
INJECTIONS = {
    # \u000a ends the line comment for javac: the rest of the line is a member type
    "newline escape in a line comment": FALSE + "\n    //@ diverges \"\\u000a " + SHADOW + " //\";",
    # \u002a\u002f closes the block comment early
    "comment end escape in a block comment": FALSE + "\n    /*@ diverges \"\\u002a\\u002f " + SHADOW + " /\\u002a\"; @*/",
    # \u0022 closes a string literal for javac inside a clause
    "quote escape in a clause": "    //@ ensures \\result == 424242 || \"\\u0022.isEmpty() || true || \\u0022\".isEmpty();",
    "escape with several u's": FALSE + "\n    //@ diverges \"\\uuuu000a " + SHADOW + " //\";",
    # brace counting took the '{' in a string for an opening brace: the model method swallowed the type after it
    "model method: brace in a string": FALSE + "\n    /*@ model int m() { String s = \"{\"; return 1; } " + SHADOW
    + " static int n() { return '}'; @*/",
    # a model method, a ghost field or a model class named like the runtime
    "model method declaring the runtime's package": FALSE + "\n    /*@ model int m() { class specbench {} return 1; } @*/",
    "ghost field named like the runtime": FALSE + "\n    //@ ghost int specbench = 0;",
    "model method named like the runtime's class": FALSE + "\n    /*@ model int JmlRt() { return 1; } @*/",
}


@pytest.mark.parametrize("name", list(INJECTIONS))
def test_injection_through_comments_is_refused(checker, name):
    rep = checker.check(program(INJECTIONS[name]), CALLS)
    assert rep.status in ("syntax_error", "unsupported"), (name, rep.summary())
    assert rep.verdict != "holds" and rep.line > 0 and "\n" not in rep.summary()


def test_translated_program_keeps_no_jml_comment_text(checker):
    """Every JML comment is blanked in the output (line numbers kept), so no model text
    stays where javac could decode it into code."""
    from pytest_specbench.jml.translate import translate

    src = program("    //@ requires x > 0; // marker-one\n    /*@ ensures \\result == x;\n      @ marker-two */")
    src = src.replace("marker-two", "ensures true;")
    tr = translate(src)
    assert "marker-one" not in tr.source and "ensures true" not in tr.source
    assert tr.source.count("\n") >= src.count("\n")
    rep = checker.check(src, CALLS)
    assert rep.verdict == "holds", rep.summary()


# ------------------------------------------------------------------ 2. the spec reaches the runtime
REACHES = {
    # a model method recording a fake precondition failure: every refuting call would leave the domain
    "model method calls the runtime": ("    //@ requires m();\n" + FALSE +
                                       "\n    /*@ model static boolean m() { specbench.jml.JmlRt.check(false, "
                                       "\"requires\", 1, \"forged\"); return true; } @*/"),
    "model method reaches it by reflection": (
        "    //@ requires m();\n" + FALSE + "\n    /*@ model static boolean m() { try { Class.forName(\"specbench.jml.\" "
        "+ \"JmlRt\").getMethod(\"check\", boolean.class, String.class, int.class, String.class).invoke(null, false, "
        "\"requires\", 1, \"forged\"); } catch (ReflectiveOperationException e) { } return true; } @*/"),
    "clause reaches it by reflection": (
        "    //@ requires java.lang.Class.class.getName() != null && x.getClass() != null;\n" + FALSE),
    "clause names the runtime": "    //@ requires specbench.jml.JmlRt.forall(0, 1, i -> true);\n" + FALSE,
}


@pytest.mark.parametrize("name", list(REACHES))
def test_spec_and_model_code_cannot_reach_the_runtime(checker, name):
    src = program(REACHES[name])
    if "x.getClass" in src:
        src = src.replace("int x", "Integer x")
    rep = checker.check(src, CALLS)
    assert rep.status in ("syntax_error", "unsupported"), (name, rep.summary())
    assert rep.verdict != "holds"


# trusted program code forging a top-level precondition failure (the depth counter was public)
FORGER = """public class Hx {
    //@ ensures \\result == 424242;
    public static int f(int x) {
        return forge(x);
    }
    static int forge(int x) {
        try { Class.forName("specbench.jml.JmlRt").getMethod("exit").invoke(null); }
        catch (ReflectiveOperationException e) { }
        specbench.jml.JmlRt.check(false, "requires", 1, "forged");
        return x;
    }
}
"""


def test_a_forged_precondition_failure_from_inside_the_call_is_a_violation(checker):
    rep = checker.check(FORGER, CALLS)
    assert rep.status == "checked", rep.summary()
    assert [c.verdict for c in rep.calls] == ["violated"] * 3, rep.summary()
    assert rep.calls[0].kind == "requires" and rep.verdict == "violated"


# ------------------------------------------------------------------ 3. vacuity and side effects
IMPURE = {
    "increment in requires": ("    //@ requires a[0]++ >= 0;\n    //@ ensures \\result == 2;", "return a[0];"),
    "decrement in old": ("    //@ ensures \\result == \\old(a[0]--) - 1;", "return a[0];"),
    "prefix increment": ("    //@ requires ++a[0] > -1000;\n    //@ ensures \\result == 2;", "return a[0];"),
    "mutating library call": ("    //@ requires java.util.Arrays.asList(b).set(0, 2) != null;\n"
                              "    //@ ensures \\result == 2;", "return a[0];"),
    "thread construction": ("    //@ requires new java.lang.Thread() != null;\n    //@ ensures \\result == 2;",
                            "return a[0];"),
}


@pytest.mark.parametrize("name", list(IMPURE))
def test_impure_spec_expressions_are_refused(checker, name):
    spec, body = IMPURE[name]
    src = program(spec, body, sig="public static int f(int[] a, Integer[] b)")
    rep = checker.check(src, driver_from_calls(["Hx.f(new int[]{1}, new Integer[]{1})"]))
    assert rep.status == "syntax_error" and "pure" in rep.message, (name, rep.summary())


@pytest.fixture(scope="module")
def speceval(tmp_path_factory, jvm):
    from pytest_specbench.benchmarks.speceval.adapter import ADAPTER

    state = tmp_path_factory.mktemp("state")
    settings = FakeSettings(state, options={"speceval_task": "judgement,selection,infilling,generation"})
    tasks = {t.task_id: t for t in ADAPTER.load(None, settings).tasks}
    return SimpleNamespace(adapter=ADAPTER, tasks=tasks, ctx=fake_context(settings, cache=state, executors={"jvm": jvm}))


def _generate(se, task_id: str, answer: str):
    from pytest_specbench.models.base import Completion

    return se.adapter.run_check("generation", se.tasks[task_id], Completion(answer), se.ctx)


MAX_CODE = """public class MaxOfTwo {
SPEC
    public static int max(int x, int y) {
        int bigger = x;
        int other = y;
        if (bigger >= other) {
            return bigger;
        } else {
            return other;
        }
    }
}"""

VACUOUS = {
    "requires false": "    //@ requires false;\n    //@ ensures \\result == 424242;",
    "requires excluding every test": "    //@ requires x > 1000000;\n    //@ ensures \\result == 424242;",
    "contradictory requires": "    //@ requires x > y && y > x;\n    //@ ensures \\result == 424242;",
    "requires far out of range": "    //@ requires x < -1000 || y < -1000;\n    //@ ensures \\result == 424242;",
}


@pytest.mark.parametrize("name", list(VACUOUS))
def test_a_vacuous_generated_spec_does_not_hold(speceval, name):
    r = _generate(speceval, "MaxOfTwo/generation/original", MAX_CODE.replace("SPEC", VACUOUS[name]))
    assert r.details["validation"] == "dynamic", r.details
    assert r.details["holding"] == 0 and not r.passed and r.details["precision"] == 0.0, (name, r.details)


def test_a_requires_excluding_some_program_tests_is_refuted(speceval):
    """max(-5, -5), max(7, 7) are the program's own tests: a requires excluding them is false."""
    spec = "    //@ requires x != y;\n    //@ ensures \\result >= x && \\result >= y;"
    r = _generate(speceval, "MaxOfTwo/generation/original", MAX_CODE.replace("SPEC", spec))
    assert r.details["generated_clauses"] == 2 and r.details["holding"] == 1, r.details


def _infill(se, answer: str):
    from pytest_specbench.models.base import Completion

    task = next(t for tid, t in se.tasks.items() if tid.endswith("/infilling/original"))
    return se.adapter.run_check("infilling", task, Completion(answer), se.ctx), task


INFILLS = {
    "appended requires false": "true; requires false",
    "appended clauses": "true; requires false; ensures true",
    "statement separator only": "true;",
    "two expressions": "true, false",
    "comment end": "true @*/ /*@",
}


@pytest.mark.parametrize("name", list(INFILLS))
def test_infilling_accepts_one_expression_only(speceval, name):
    r, _ = _infill(speceval, f"Answer: `{INFILLS[name]}`")
    assert not r.passed and "one expression" in r.message, (name, r.message, r.details)


def test_infilling_reference_still_passes(speceval):
    r, task = _infill(speceval, "")
    ref = speceval.adapter.reference(task, "infilling")
    r, _ = _infill(speceval, ref)
    assert r.passed, r.message


# ------------------------------------------------------------------ 4. threads the call does not own
POOL = """public class Hx {
    static final java.util.concurrent.atomic.AtomicInteger C = new java.util.concurrent.atomic.AtomicInteger();
    //@ ensures \\result == 0;
    public static int f(int x) {
        BODY
    }
}
"""
THREADS = {
    # a parallel stream: no common-pool thread may run sample code
    "parallel stream": ("return java.util.stream.IntStream.range(0, 20000).parallel().map(i -> "
                        "Thread.currentThread() instanceof java.util.concurrent.ForkJoinWorkerThread ? 1 : 0).sum();",
                        "holds"),
    # an async task: the common pool has no thread, so it would need a thread of its own: refused
    "async task": ("java.util.concurrent.CompletableFuture.runAsync(() -> C.incrementAndGet()); "
                   "try { Thread.sleep(200); } catch (InterruptedException e) { } return C.get();", "crashed"),
    "async loop": ("java.util.concurrent.CompletableFuture.runAsync(() -> { while (true) { C.incrementAndGet(); } }); "
                   "return 0;", "crashed"),
    "async task joined": ("return java.util.concurrent.CompletableFuture.supplyAsync(() -> 1).join() - 1;",
                          "crashed"),
    "pool submit": ("return java.util.concurrent.ForkJoinPool.commonPool().submit(() -> 1).join() - 1;", "holds"),
    # a cleaner would start a JDK thread running program code: refused
    "cleaner thread": ("java.lang.ref.Cleaner.create(); return 0;", "crashed"),
}


def test_no_jdk_pool_thread_runs_sample_code_unseen(quick_checker):
    """Every case of THREADS is a method of one program, each called once, in one JVM: a case
    whose defence failed still shows in its own verdict (a thread it got would run its code
    unseen, or count in ``C``), and the runner denies each refused thread again for the cases
    after it (a JVM per case proved no more, at a JVM start each)."""
    cases = {name: ("    //@ ensures \\result == 0;", "public static int NAME(int x)", body)
             for name, (body, _) in THREADS.items()}
    got = _run_batch(quick_checker, cases, "1", extra=POOL.split("\n")[1])
    assert {n: v.verdict for n, v in got.items()} == {n: verdict for n, (_, verdict) in THREADS.items()}, \
        {n: (v.verdict, v.message[:80]) for n, v in got.items()}
    assert all("access denied" in got[n].message for n, (_, verdict) in THREADS.items() if verdict == "crashed"), got


# ------------------------------------------------------------------ 5. sample faults are F with one line
def _deep_parens(n: int) -> str:
    return "    //@ ensures " + "(" * n + "true" + ")" * n + ";"


SYNTAX = {
    "300 nested parentheses": _deep_parens(300),
    "1 MB conjunction": "    //@ ensures " + " && ".join(["true"] * 200_000) + ";",
    "100,000 negations": "    //@ ensures " + "!" * 100_000 + "true;",
    "old in requires": "    //@ requires \\old(x) > 0;",
    "nested old": "    //@ ensures \\result == \\old(\\old(x));",
    "2,000 nested quantifier bodies": "    //@ ensures " + "(\\forall int i; 0 <= i && i < 1; " * 2000 + "true"
    + ")" * 2000 + ";",
}


@pytest.mark.parametrize("name", list(SYNTAX))
def test_malformed_specs_are_syntax_errors_with_one_line(checker, name):
    rep = checker.check(program(SYNTAX[name]), CALLS)
    assert rep.status == "syntax_error", (name, rep.summary()[:300])
    assert "\n" not in rep.summary() and len(rep.summary()) < 400


OUTPUTS = {
    "line separator": "System.out.print((char) 0x2028); return x;",
    "next line": "System.out.print((char) 0x85); System.out.print('\\r'); return x;",
    "paragraph separator and a fake record": ("System.out.print(\"\\u2029{\\\"nonce\\\":1}\\u2028\"); return x;"),
}


def test_output_with_unicode_line_breaks_keeps_the_records(checker):
    """The cases of OUTPUTS as methods of one program, each called on the three inputs in one
    JVM: every record after each hostile output is still read."""
    cases = {name: ("    //@ ensures \\result == x;", "public static int NAME(int x)", body)
             for name, body in OUTPUTS.items()}
    src, calls = _batch(cases)
    rep = checker.check(src, driver_from_calls([c.replace("ARGS", a) for c in calls for a in ("1", "2", "-3")]))
    assert rep.status == "checked" and [c.verdict for c in rep.calls] == ["holds"] * 3 * len(OUTPUTS), rep.summary()


MESSAGES = {
    "getMessage exhausts the heap": "return new String(new char[1 << 30]);",
    "getMessage throws": "if (System.nanoTime() != 0) throw new IllegalStateException(\"no\"); return \"\";",
    "getMessage loops": "while (System.nanoTime() != 0) { } return \"\";",
    "getMessage returns null": "return null;",
}


def test_a_hostile_exception_message_cannot_crash_the_runner(quick_checker):
    """The cases of MESSAGES in one program (an exception class and a method each), each
    method called on 1, 2 and -3 (2 throws): one JVM until the looping ``getMessage`` times
    out its call, the calls after it in the next JVM (a JVM per case proved no more; a
    case's harm to the runner would show on every call after it)."""
    names = list(MESSAGES)
    exceptions = "".join(f"    static class E{i} extends RuntimeException {{\n"
                         f"        @Override public String getMessage() {{ {MESSAGES[n]} }}\n"
                         "        @Override public String toString() { return getMessage(); }\n    }\n"
                         for i, n in enumerate(names))
    methods = "".join(f"    //@ ensures \\result == x;\n    public static int m{i}(int x) {{\n"
                      f"        if (x == 2) throw new E{i}();\n        return x;\n    }}\n" for i in range(len(names)))
    src = "public class Hx {\n" + exceptions + methods + "}\n"
    rep = quick_checker.check(src, driver_from_calls([f"Hx.m{i}({a})" for i in range(len(names)) for a in (1, 2, -3)]))
    assert rep.status == "checked" and len(rep.calls) == 3 * len(names), rep.summary()
    assert "\n" not in rep.summary()
    for i, name in enumerate(names):
        first, thrown, last = rep.calls[3 * i:3 * i + 3]
        expected = "timeout" if name == "getMessage loops" else "crashed"
        assert [first.verdict, thrown.verdict, last.verdict] == ["holds", expected, "holds"], (name, rep.calls)
        assert f"Hx$E{i}" in thrown.message or thrown.verdict == "timeout", (name, thrown)


# ------------------------------------------------------------------ 6. holding the harness
LOCKER = """public class Hx {
    //@ ensures \\result == x;
    public static int f(int x) {
        if (x == 2) {
            synchronized (specbench.jml.JmlRt.class) { java.util.concurrent.locks.LockSupport.parkNanos(60_000_000_000L); }
        }
        return x;
    }
}
"""


def test_parking_on_the_runtime_class_lock_only_times_out_its_own_call(quick_checker):
    rep = quick_checker.check(LOCKER, CALLS)
    assert [c.verdict for c in rep.calls] == ["holds", "timeout", "holds"], rep.calls
    assert rep.jvm_starts == 2  # the timeout stops its JVM; the last call runs in the next one


class _DyingJvm:
    """A jvm executor whose JVMs all die without a record: the checker's retries must
    stay within one wall budget for the whole check."""

    def __init__(self, real):
        self.real, self.walls, self.now = real, [], 1000.0

    def __getattr__(self, name):
        return getattr(self.real, name)

    def clock(self):
        return self.now

    def run(self, prepared, job):
        self.walls.append(job.wall_seconds)
        self.now += job.wall_seconds  # killed at its wall bound
        return SimpleNamespace(stdout="", stderr="", exit_code=None, signal=9, killed="wall time",
                               timed_out=True, wall=job.wall_seconds)


def test_retries_cannot_multiply_the_wall_bound_of_a_check(jvm):
    fake = _DyingJvm(jvm)
    ck = JmlChecker(fake, call_seconds=1.0)
    ck.clock = fake.clock
    calls = driver_from_calls([f"Hx.f({i})" for i in range(20)])
    rep = ck.check(program("    //@ ensures \\result == x;"), calls)
    assert rep.status == "checked" and len(rep.calls) == 20
    assert {c.verdict for c in rep.calls} <= {"timeout", "crashed"}
    assert sum(fake.walls) <= ck.check_wall(20) + 1e-6, fake.walls


# ------------------------------------------------------------------ PostcondBench (Java)
from pytest_specbench.benchmarks.postcond.adapter import ADAPTER as POSTCOND, BUNDLED  # noqa: E402
from pytest_specbench.benchmarks.postcond.java import execute  # noqa: E402
from pytest_specbench.jml import junit  # noqa: E402

JAVALIB = BUNDLED.parent / "javalib"
needs_junit = pytest.mark.skipif(bool(junit.missing()), reason=str(junit.missing()))


def _java_task(name):
    from pytest_specbench.benchmarks.postcond.adapter import load_tasks

    return next(t for t in load_tasks(BUNDLED)[0] if t.task_id == f"javalib--{name}")


def _pctx(tmp, jvm):
    return fake_context(cache=tmp, executors={"jvm": jvm}, postcond_timeout=6.0, postcond_complete="paper")


POSTCOND_ANSWERS = {
    "names the runtime": ("//@ ensures specbench.jml.JmlRt.forall(0, 1, i -> true) && \\result == 12345;",
                          "compile_failure"),
    "unicode escape": ("//@ ensures \\result == 12345 || \"\\u0022.isEmpty()\";", "parse_error"),
    "parallel stream": ("//@ ensures java.util.stream.IntStream.range(0, 1000).parallel().sum() >= 0 "
                        "&& \\result == 12345;", "compile_failure"),
    "async task": ("//@ ensures java.util.concurrent.CompletableFuture.runAsync(() -> java.lang.Thread.onSpinWait())"
                   " != null;", "compile_failure"),
    "300 nested parentheses": ("//@ ensures " + "(" * 300 + "true" + ")" * 300 + ";", "parse_error"),
    "thread construction": ("//@ ensures new java.lang.Thread() != null;", "compile_failure"),
    "impure increment": ("//@ ensures \\result++ > -100000;", "compile_failure"),
    "output with line separators and a false clause": (
        "//@ ensures java.lang.System.out.append((char) 0x2028).append((char) 0x85) != null && \\result == 12345;",
        "jml_fail"),
}


@needs_junit
@pytest.mark.parametrize("name", list(POSTCOND_ANSWERS))
def test_postcond_java_hostile_answers_get_their_exact_verdict(tmp_path, jvm, name):
    from pytest_specbench.models.base import Completion

    answer, verdict = POSTCOND_ANSWERS[name]
    r = POSTCOND.run_check("correct", _java_task("clamp"), Completion(answer), _pctx(tmp_path, jvm))
    assert not r.passed and r.details["verdict"] == verdict, (name, r.details, r.message)
    assert "\n" not in r.message


HOSTILE_TESTS = {
    # a cleaner would start a JDK thread running project code: refused, the test fails
    "cleaner thread": ("java.lang.ref.Cleaner.create(); javalib.Numbers.clamp(1, 0, 2);", "failed"),
    # an async task: the common pool has no thread, a thread of its own is refused: the test fails
    "async task": ("java.util.concurrent.atomic.AtomicInteger n = new java.util.concurrent.atomic.AtomicInteger(); "
                   "java.util.concurrent.CompletableFuture.runAsync(() -> n.set(javalib.Numbers.clamp(1, 0, 2))); "
                   "try { Thread.sleep(300); } catch (InterruptedException e) { } "
                   "if (n.get() != 0) throw new AssertionError(\"a pool thread ran the task\");", "failed"),
    "common pool": ("java.util.stream.IntStream.range(0, 20000).parallel().map(i -> javalib.Numbers.clamp(i, 0, 2))"
                    ".sum(); if (java.util.stream.IntStream.range(0, 20000).parallel().anyMatch(i -> "
                    "Thread.currentThread() instanceof java.util.concurrent.ForkJoinWorkerThread)) "
                    "throw new AssertionError(\"pool thread\");", "passed"),
    "hostile getMessage": ("throw new RuntimeException() { public String getMessage() { "
                           "return new String(new char[1 << 30]); } };", "failed"),
    "getMessage loops": ("throw new RuntimeException() { public String getMessage() { while (true) { } } };",
                         "timeout"),
    "line separators in output": ("System.out.print((char) 0x2028); System.out.print((char) 0x85); "
                                  "javalib.Numbers.clamp(1, 0, 2);", "passed"),
}


def _hostile_class(name: str) -> str:
    return f"Hostile{list(HOSTILE_TESTS).index(name)}Test"


# Tests that exit, halt or flood the output (test_exit_and_floods_in_the_project_cannot_fake_a_pass).
EXITS_AND_FLOODS = ("package javalib;\nimport org.junit.Test;\npublic class HostileTest {\n"
                    "  @Test public void exits() { System.exit(0); }\n"
                    "  @Test public void halts() { Runtime.getRuntime().halt(0); }\n"
                    "  @Test public void floods() { for (int i = 0; i < 200000; i++) System.out.println(\"x\" + i); "
                    "javalib.Numbers.clamp(1, 0, 2); }\n}\n")


@pytest.fixture(scope="module")
def hostile_project(tmp_path_factory):
    """The javalib project with one test class per case of HOSTILE_TESTS (``Hostile<N>Test#t``)
    and ``HostileTest`` (EXITS_AND_FLOODS), written once for the module: its project classes
    compile once per content, not once per case (a project copy per case compiled the whole
    project again for each, ~1 s of CPU).  Each case still runs only its own class's test (and
    clampInside) in a JVM of its own: the JUnit runner loads the test classes it is given, so
    another case's class is never loaded."""
    lib = tmp_path_factory.mktemp("hostile") / "javalib"
    shutil.copytree(JAVALIB, lib)
    for name, (body, _verdict) in HOSTILE_TESTS.items():
        (lib / f"src/test/java/javalib/{_hostile_class(name)}.java").write_text(
            f"package javalib;\nimport org.junit.Test;\npublic class {_hostile_class(name)} {{\n"
            f"  @Test public void t() {{ {body} }}\n}}\n")
    (lib / "src/test/java/javalib/HostileTest.java").write_text(EXITS_AND_FLOODS)
    return lib


@needs_junit
@pytest.mark.parametrize("name", list(HOSTILE_TESTS))
def test_postcond_java_runner_withstands_what_tests_do(hostile_project, jvm, name):
    verdict = HOSTILE_TESTS[name][1]
    lib = hostile_project
    data = dict(_java_task("clamp").data)
    data["cover_tests"] = [f"javalib.{_hostile_class(name)}#t", "javalib.NumbersTest#clampInside"]
    text = (lib / data["file"]).read_text()
    # (a test that loops burns CPU until the limit: a short one, 1 s, the JML side's call budget;
    # the others keep room to end on their own)
    run = execute.run_program(jvm, data, lib, text, ["lo <= \\result && \\result <= hi"], 1.0 if verdict == "timeout" else 5.0)
    assert run["verdict"] == verdict, (name, run)
    assert "\n" not in run["reason"]


@needs_junit
def test_exit_and_floods_in_the_project_cannot_fake_a_pass(hostile_project, jvm):
    """Tests that call System.exit/halt or flood the output: the run still ends with per-test
    records (the exits fail with a SecurityException).  (From tests/test_postcond_java.py:
    here it runs on this module's copy of the project, compiled once for both tests.)"""
    lib = hostile_project
    data = dict(_java_task("clamp").data)
    data["cover_tests"] = ["javalib.HostileTest#floods", "javalib.HostileTest#exits", "javalib.HostileTest#halts",
                           "javalib.NumbersTest#clampInside"]
    text = (lib / data["file"]).read_text()
    run = execute.run_program(jvm, data, lib, text, ["lo <= \\result && \\result <= hi"], 10.0)
    assert run["verdict"] == "failed" and "exitVM" in run["reason"], run
    data["cover_tests"] = ["javalib.HostileTest#floods"]
    assert execute.run_program(jvm, data, lib, text, ["\\result == 5"], 10.0)["verdict"] == "jml_fail"


# ================================================================== issue 42: round two
# Each class below is one test, its cases batched: refusals in-process (no JVM), accepted
# programs as one class with one method per case and one JVM for all of them.
def _batch(cases: dict[str, tuple[str, str, str]], cls: str = "Bx") -> tuple[str, object]:
    """One program with a method per case (``spec``, ``sig`` with the name ``NAME``, ``body``)
    and a driver calling each once with ``args``: (source, driver)."""
    methods, calls = [], []
    for i, (name, (spec, sig, body)) in enumerate(cases.items()):
        methods.append(f"    // case: {name}\n{spec}\n    {sig.replace('NAME', f'm{i}')} {{\n        {body}\n    }}\n")
        calls.append(f"{cls}.m{i}(ARGS)" if " static " in f" {sig} " else f"new {cls}().m{i}(ARGS)")
    return f"public class {cls} {{\n" + "\n".join(methods) + "}\n", calls


def _run_batch(checker, cases, args: str, cls: str = "Bx", extra: str = "", line_end: str = "\n"):
    src, calls = _batch(cases, cls)
    src = src.replace(f"public class {cls} {{\n", f"public class {cls} {{\n{extra}\n", 1)
    rep = checker.check(src.replace("\n", line_end), driver_from_calls([c.replace("ARGS", args) for c in calls]))
    assert rep.status == "checked", rep.summary()
    return {name: rep.calls[i] for i, name in enumerate(cases)}


# ------------------------------------------------------------------ 7. lexical disagreements
ZWJ, BOM = "\u200d", "\ufeff"
LEXICAL_REFUSED = {
    # javac drops a zero-width joiner from identifiers: the name check saw another name (issue 42)
    "zero-width joiner in a runtime name": FALSE + "\n    //@ ensures spec" + ZWJ + "bench.jml.Jml" + ZWJ + "Rt.t(1);",
    "zero-width space in a clause": "    //@ ensures \\result\u200b == 424242;",
    "byte order mark inside the program": FALSE + "\n    //@ ensures " + BOM + "true;",
    "right-to-left override": "    //@ ensures \\result == 424242 \u202e|| true;",
    "soft hyphen in a name": "    //@ ensures \\result == x\u00ad;",
    "mongolian vowel separator": "    //@ ensures \\result == 4242\u180e42;",
    "next line (U+0085) in a clause": "    //@ ensures \\result == 424242;\u0085 ensures true;",
    "line separator (U+2028)": "    //@ ensures true;\u2028 " + SHADOW,
    "raw NUL": "    //@ ensures \\result == 424242\x00;",
    "vertical tab": "    //@ ensures\x0b\\result == 424242;",
    "lone surrogate in a clause": "    //@ ensures \"\ud800\".isEmpty() || \\result == 424242;",
    "newline escape in a plain comment": FALSE + "\n    // \\u000a " + SHADOW,
    "quote escape in the program's string": FALSE.replace("424242", "424242 || \"\\u0022.isEmpty()\" != null"),
    "escape of a backslash spelling an escape": FALSE + "\n    // \\u005cu000a " + SHADOW,
    "escape in code": FALSE + "\n    static int \\u0061b = 1;",
    "model method: carriage return ends its // comment for javac only": (
        FALSE + "\n    /*@ model static int m() { return 1; // c\r " + SHADOW + " } @*/"),
}

# accepted: normalised, then re-printed; each has a false ``ensures`` the checker must evaluate
LEXICAL_ACCEPTED = {
    "tabs and form feeds": ("    //@\tensures\f\\result ==\t424242;", "public static int NAME(int x)", "return x;"),
    "carriage return in a model method's // comment": (
        "    /*@ model static int two() { int v = 1; // v stays 1 for the parser\r v = 2;\n return v; } @*/\n"
        "    //@ ensures \\result == two();", "public static int NAME(int x)", "return 1;"),
    "nested comment markers in a model method": (
        "    /*@ model static int one() { // /* a\n return 1; } @*/\n    //@ ensures \\result == one() + 424241;",
        "public static int NAME(int x)", "return x;"),
    "escape inside the program's own string": (
        "    //@ ensures \\result == 424242;", "public static int NAME(int x)", "return \"\\u2029\".length();"),
    "non-ASCII letters in a string of a clause": (
        "    //@ ensures \"é\".length() == 1 && \\result == 424242;", "public static int NAME(int x)", "return x;"),
}


def test_lexical_disagreements_are_refused_or_normalised_and_javac_gets_the_reprint(checker):
    """Issue 42: the checker and javac read the same program: every character two lexers read
    differently is refused with its line and column (in-process), and what is accepted is
    normalised and re-printed (no ``\\r``, no comment of a model method reaches javac), then
    checked: each accepted case's false ``ensures`` is evaluated and violated (one JVM)."""
    from pytest_specbench.jml.translate import TranslationError, translate

    for name, spec in LEXICAL_REFUSED.items():
        with pytest.raises(TranslationError) as err:
            translate(program(spec))
        assert err.value.line > 0 and "\n" not in str(err.value), (name, str(err.value))
    rep = checker.check(program(LEXICAL_REFUSED["zero-width joiner in a runtime name"]), CALLS)
    assert rep.status == "syntax_error" and "ZERO WIDTH JOINER" in rep.message and rep.line == 4, rep.summary()
    src, _ = _batch(LEXICAL_ACCEPTED)
    tr = translate(src.replace("\n", "\r\n"))
    assert "\r" not in tr.source and "// v stays" not in tr.source and "/* a" not in tr.source
    assert "v = 2 ;" in tr.source  # the model method re-printed from its tokens
    # the batch with CR line ends (javac's and the checker's lines agree): each false ensures is
    # evaluated, and a violation names its clause's own line
    verdicts = _run_batch(checker, LEXICAL_ACCEPTED, "7", line_end="\r")
    assert {n: v.verdict for n, v in verdicts.items()} == {n: "violated" for n in LEXICAL_ACCEPTED}, verdicts
    lines = src.replace("{\n", "{\n\n", 1).split("\n")  # as _run_batch ran it (an empty extra line)
    assert lines[verdicts["tabs and form feeds"].line - 1].lstrip().startswith("//@\tensures"), verdicts


# ------------------------------------------------------------------ 8. sample faults on every path
DEEP = "(" * 4000 + "1" + ")" * 4000
CYRILLIC_A = "\u0430"  # looks like the parameter a
FAULTS = {"lone surrogate": "\ud800", "4,000 nested parentheses": DEEP, "Cyrillic homoglyph": CYRILLIC_A}


def test_sample_faults_are_f_with_one_line_on_every_path(speceval, checker, tmp_path, jvm):
    """Issue 42: a lone surrogate, 4,000 nested parentheses and a Cyrillic homoglyph for a
    parameter, on every SpecEval task path and PostcondBench Java, and in the checker itself:
    F (or the checker's one-line status), never an exception (E)."""
    from pytest_specbench.models.base import Completion

    se = speceval
    task_of = {k: next(t for tid, t in se.tasks.items() if tid.startswith("MaxOfTwo/") and f"/{k}/" in tid)
               for k in ("judgement", "selection", "infilling", "generation")}
    seen = []
    for fault, text in FAULTS.items():
        answers = {
            "judgement": f"I think {text}",
            "selection": f"I pick {text}",
            "infilling": f"Answer: `x >= {text}`",
            "generation": "```java\n" + MAX_CODE.replace(
                "SPEC", f"    /*@ model static int m(int x) {{ return {text}; }} @*/\n"
                        f"    //@ ensures \\result >= m(x) && \\result == 424242 || {text} == 1;") + "\n```",
        }
        for kind, answer in answers.items():
            r = se.adapter.run_check(kind, task_of[kind], Completion(answer), se.ctx)
            assert not r.passed and "\n" not in r.message, (fault, kind, r.message, r.details)
            seen.append((fault, kind, r.message[:60]))
        # the checker itself, on a program whose clause and model method hold the fault
        rep = checker.check(program(f"    //@ ensures \\result == m({text});\n"
                                    f"    /*@ model static int m(int y) {{ return {text}; }} @*/"), CALLS)
        assert rep.status in ("syntax_error", "sample_error", "compile_error"), (fault, rep.summary())
        assert "\n" not in rep.summary() and rep.verdict != "holds"
    assert len(seen) == 12
    # the guard itself: what the path raises for a sample is a one-line report, the harness's faults propagate
    from pathlib import Path

    from pytest_specbench.errors import InfrastructureError

    class Raising:
        def __init__(self, exc):
            self.exc = exc

        def compile(self, *_a, **_k):
            raise self.exc

    for exc, expect in ((ValueError("a\nb"), "sample_error"), (RecursionError(), "syntax_error")):
        ck = JmlChecker(Raising(exc))
        ck._runtime = Path("/nonexistent")
        rep = ck.check(program(FALSE), CALLS)
        assert rep.status == expect and "\n" not in rep.summary(), rep.summary()
    ck = JmlChecker(Raising(InfrastructureError("javac died")))
    ck._runtime = Path("/nonexistent")
    with pytest.raises(InfrastructureError):
        ck.check(program(FALSE), CALLS)
    # PostcondBench Java: the answer's ensures clause holds the fault
    answers = [f"//@ ensures \\result == {text};" for text in FAULTS.values()]
    answers.append(f"//@ ensures \"{FAULTS['lone surrogate']}\".isEmpty() || \\result == 12345;")
    for answer in answers:
        r = POSTCOND.run_check("correct", _java_task("clamp"), Completion(answer), _pctx(tmp_path, jvm))
        assert not r.passed and "\n" not in r.message, (answer[:40], r.details, r.message)


# ------------------------------------------------------------------ 9. ghost code, quantifier ranges, \old of a call
INT = "public static int NAME(int x)"
GHOST_AND_RANGES = {
    # ghost code is spec code: its exception is an undefined clause, never the program's for signals
    "ghost initialiser divides by zero": ("    //@ signals (ArithmeticException e) true;\n" + FALSE, INT,
                                          "//@ ghost int z = 1 / 0;\n        return x;"),
    "set divides by zero": ("    //@ signals (RuntimeException e) true;\n" + FALSE, INT,
                            "//@ ghost int z = 0;\n        //@ set z = x / (x - x);\n        return x;"),
    "ghost array initialiser out of bounds": ("    //@ signals_only ArrayIndexOutOfBoundsException;\n" + FALSE, INT,
                                              "//@ ghost int[] e = new int[0];\n        //@ ghost int z = e[x];\n        return x;"),
    # ranges cannot wrap: beyond the cap is unsupported, never empty
    "int range up to MAX_VALUE": (
        "    //@ ensures (\\forall int k; 0 <= k && k <= Integer.MAX_VALUE; \\result == 424242);", INT, "return x;"),
    "long range up to MAX_VALUE": (
        "    //@ ensures (\\forall long k; 0 <= k && k <= Long.MAX_VALUE; \\result == 424242);", INT, "return x;"),
    "exists with a strict lower bound at MAX_VALUE": (
        "    //@ ensures !(\\exists int k; Integer.MAX_VALUE - 1 < k && k <= Integer.MAX_VALUE; k > 0) "
        "|| \\result == 424242;", INT, "return x;"),
    "int range from MIN_VALUE, strict": (
        "    //@ ensures (\\forall int k; Integer.MIN_VALUE < k && k < Integer.MIN_VALUE + 3; \\result == 424242);",
        INT, "return x;"),
    "long bound wider than the int variable": (
        "    //@ ensures (\\forall int k; 2147483646L <= k && k <= 4000000000L; \\result == 424242);", INT, "return x;"),
    "char range below zero": (
        "    //@ ensures (\\forall char c; -5 <= c && c <= 2; \\result == 424242);", INT, "return x;"),
}
GHOST_AND_RANGES_HOLD = {
    "top of the int range": ("    //@ ensures (\\forall int k; Integer.MAX_VALUE - 2 < k && k <= Integer.MAX_VALUE; "
                             "k > 0) && \\result == x;", INT, "return x;"),
    "top of the long range": ("    //@ ensures (\\exists long k; Long.MAX_VALUE - 1 <= k && k <= Long.MAX_VALUE; "
                              "k == Long.MAX_VALUE) && \\result == x;", INT, "return x;"),
    "char range clamped to the type": ("    //@ ensures (\\forall char c; -5 <= c && c <= 2; c >= 0) && \\result == x;",
                                       INT, "return x;"),
    "old of a call on a parameter": ("    //@ ensures \\result == \\old(twice(x));", INT, "return x + x;"),
    "ghost and set as written": ("    //@ ensures \\result == x;", INT,
                                 "//@ ghost int g = x * 2;\n        //@ set g = g + 1;\n        return x;"),
}


def test_ghost_code_is_spec_code_and_quantifier_ranges_cannot_wrap(checker):
    """Issue 42: an exception in ghost code is an undefined clause (violated), never an exception
    ``signals`` allows; quantifier bounds are counted in long without wrapping (beyond the cap:
    ``unsupported``, never an empty range); ``\\old(f(a))`` is accepted.  One program, one JVM."""
    both = _run_batch(checker, {**GHOST_AND_RANGES, **GHOST_AND_RANGES_HOLD}, "7",
                      extra="    static int twice(int y) { return y + y; }")
    got = {n: (v.verdict, v.kind) for n, v in both.items()}
    for name in list(GHOST_AND_RANGES)[:3]:
        assert got[name] == ("violated", "undefined"), (name, got[name])
    for name in ("int range up to MAX_VALUE", "long range up to MAX_VALUE"):
        assert got[name] == ("violated", "unsupported"), (name, got[name])
    for name in list(GHOST_AND_RANGES)[5:len(GHOST_AND_RANGES)]:
        assert got[name] == ("violated", "ensures") or name.startswith("exists") and got[name][0] == "violated", \
            (name, got[name])
    assert {n: got[n][0] for n in GHOST_AND_RANGES_HOLD} == {n: "holds" for n in GHOST_AND_RANGES_HOLD}, got


# ------------------------------------------------------------------ 10. purity by observation
ARR = "public static int NAME(int[] a)"
ZERO_MODEL = ("    /*@ model static boolean zero(int[] b) { for (int i = 0; i < b.length; i++) b[i] = 0; return true; } @*/\n"
              "    /*@ model static int bump() { count = count + 1; return 0; } @*/\n"
              "    static int count = 0;\n    int field = 5;\n"
              "    //@ pure\n    static boolean clear(int[] b) { b[0] = 0; return true; }\n"
              "    /*@ model boolean clearField() { field = 0; return true; } @*/\n")
IMPURE_OBSERVED = {
    # a library method off the name list zeroes the input before the body runs (issue 42)
    "IntBuffer.get in requires": ("    //@ requires java.nio.IntBuffer.allocate(a.length).get(a) != null;\n"
                                  "    //@ ensures \\result == 0;", ARR, "return a[0];"),
    "model method zeroing the input from requires": ("    //@ requires zero(a);\n    //@ ensures \\result == 0;", ARR,
                                                     "return a[0];"),
    "model method zeroing the result in ensures": ("    //@ ensures zero(\\result) && \\result[0] == 0;",
                                                   "public static int[] NAME(int[] a)", "return a;"),
    "model method in \\old": ("    //@ ensures \\old(zero(a)) && \\result == 0;", ARR, "return a[0];"),
    "model method in a loop invariant": ("", ARR, "int s = 0;\n        //@ maintaining zero(a) && 0 <= i;\n"
                                         "        for (int i = 0; i < 1; i++) { s += a[i]; }\n        return s;"),
    "model method in assert": ("    //@ ensures \\result == 0;", ARR, "//@ assert zero(a);\n        return a[0];"),
    "model method in a ghost initialiser": ("    //@ ensures \\result == 0;", ARR,
                                            "//@ ghost boolean g = zero(a);\n        return a[0];"),
    "model method changing a static field": ("    //@ ensures bump() == 0 && \\result == a[0];", ARR, "return a[0];"),
    "model method clearing the receiver's field": ("    //@ ensures clearField() && \\result == a[0];",
                                                   "public int NAME(int[] a)", "return a[0];"),
    # a program method declared pure is not snapshotted around: its own frame check catches it
    "program method declared pure writing its argument": ("    //@ requires clear(a);\n    //@ ensures \\result == 0;",
                                                           ARR, "return a[0];"),
    "model method in an old declaration": ("    //@ old boolean z = zero(a);\n    //@ ensures \\result == 0;", ARR,
                                           "return a[0];"),
    "IntBuffer.wrap(a).compact()": ("    //@ requires java.nio.IntBuffer.wrap(a).position(1).compact() != null;\n"
                                    "    //@ ensures \\result == 6;", ARR, "return a[0];"),
}
PURE_ACCEPTED = {
    "a pure model method": ("    /*@ model static int first(int[] b) { return b[0]; } @*/\n"
                            "    //@ ensures \\result == first(a);", ARR, "return a[0];"),
    "an array copy in a ghost": ("    //@ ensures \\result == a[0];", ARR,
                                 "//@ ghost int[] c = a.clone();\n        //@ set c = new int[]{1};\n        return a[0];"),
    "the program changes its input": ("    //@ ensures a[0] == 9 && \\result == 9;", ARR, "a[0] = 9;\n        return a[0];"),
    # spec code calling the program's other methods reaches their branches: not the tests' coverage
    "requires calling the program's branches": ("    //@ requires sign(1) + sign(-1) + sign(0) == 0;\n"
                                                "    //@ ensures \\result == a[0];", ARR, "return a[0];"),
}
SIGN = "    static int sign(int v) { if (v > 0) return 1; else if (v < 0) return -1; return 0; }\n"


def test_spec_code_changing_the_programs_state_fails_the_call(checker):
    """Issue 42: purity is observed, not guessed from names: the receiver, the reference arguments
    and the class's static fields are snapshotted before spec code runs (clauses, model methods,
    ghost initialisers, ``set``, ``\\old``) and a change fails the call (``impure``); pure specs
    and a program changing its own input still hold, and the branches spec code reaches are not
    the tests' coverage (issue 42: a spec forged the coverage figures).  ``set`` through an alias
    is refused."""
    from pytest_specbench.jml.translate import TranslationError, translate

    both = _run_batch(checker, {**IMPURE_OBSERVED, **PURE_ACCEPTED}, "new int[]{5, 6}", extra=ZERO_MODEL + SIGN)
    got = {n: (v.verdict, v.kind) for n, v in both.items() if n in IMPURE_OBSERVED}
    assert all(v[0] == "violated" for v in got.values()), got
    assert all(v[1] == ("assignable" if "declared pure" in n else "impure") for n, v in got.items()), got
    assert {n: both[n].verdict for n in PURE_ACCEPTED} == {n: "holds" for n in PURE_ACCEPTED}, both
    assert both["requires calling the program's branches"].branches == frozenset(), both
    with pytest.raises(TranslationError, match="whole ghost variable"):
        translate(program(FALSE, "//@ ghost int[] g = a;\n        //@ set g[0] = 0;\n        return a[0];",
                          sig="public static int f(int[] a)"))


# ------------------------------------------------------------------ 11. the JVM's verdict state, route by route
# Trusted program code standing for what code in the call can do; each route tries to silence or forge
# the record of the false ``ensures`` and swallows what it gets: the clause must still be violated.
RT = 'Class.forName("specbench.jml.JmlRt")'
ROUTES = {
    "reflection": f"java.lang.reflect.Field f = {RT}.getDeclaredField(\"active\"); f.setAccessible(true); "
                  "f.set(null, null);",
    "method handles": f"java.lang.invoke.MethodHandles.privateLookupIn({RT}, java.lang.invoke.MethodHandles.lookup())"
                      f".findStaticSetter({RT}, \"active\", Class.forName(\"specbench.jml.JmlRt$Call\")).invoke(null);",
    "ServiceLoader": "java.util.ServiceLoader.load(Runnable.class, ClassLoader.getSystemClassLoader())"
                     ".forEach(Runnable::run);",
    "serialisation": "java.io.ByteArrayOutputStream b = new java.io.ByteArrayOutputStream(); "
                     "try { specbench.jml.JmlRt.check(false, \"requires\", 1, \"x\"); } catch (Error e) { "
                     "new java.io.ObjectOutputStream(b).writeObject(e); } throw (Error) new java.io.ObjectInputStream("
                     "new java.io.ByteArrayInputStream(b.toByteArray())).readObject();",
    "static initialiser": "Object o = Init.VALUE;",
    "threads": "Thread t = new Thread(() -> { }); t.start(); t.join();",
    "System.setOut": "System.setOut(new java.io.PrintStream(new java.io.FileOutputStream(java.io.FileDescriptor.out)));"
                     " System.out.println(\"{\\\"call\\\":0,\\\"verdict\\\":\\\"holds\\\"}\");",
}
INIT = ("    static class Init { static final Object VALUE; static { Object v = null; try { "
        f"java.lang.reflect.Field f = {RT}.getDeclaredField(\"active\"); f.setAccessible(true); v = f.get(null); "
        "} catch (Throwable t) { } VALUE = v; } }\n")


def test_program_code_cannot_reach_the_verdict_state_by_any_route(checker):
    """Issue 42: the runner's records and JmlRt's per-call state are out of reach by construction
    (package-private, the runner's own class loader, reflection and setAccessible denied by the
    security manager), route by route; a route that raises inside the call is swallowed, so the
    call goes on to its false ``ensures`` (``serialisation`` throws a deserialised copy of a
    real violation: never the recorded one, which the runner knows by identity)."""
    cases = {name: (FALSE, INT, f"try {{ {body} }} catch (Throwable t) {{ }}\n        return x;")
             for name, body in ROUTES.items()}
    got = _run_batch(checker, cases, "7", extra=INIT)
    assert {n: v.verdict for n, v in got.items()} == {n: "violated" for n in ROUTES}, \
        {n: (v.verdict, v.kind, v.message[:80]) for n, v in got.items()}
