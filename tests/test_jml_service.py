"""The JML service (pytest_specbench/jml/) is one service used by two families through
its public interface: PostcondBench imports nothing of SpecEval, no family imports a
private name or a module of the service other than its top level (and ``expr``, the
AST), the two in-JVM runners share their set-up instead of repeating it, and
PostcondBench's languages are two strategy objects.  In-process, no JVM."""
from __future__ import annotations

import ast
import json
from pathlib import Path
from types import SimpleNamespace

import pytest

import pytest_specbench.jml as jml
from pytest_specbench.benchmarks.postcond import sides
from pytest_specbench.benchmarks.postcond.adapter import ADAPTER, BUNDLED, load_tasks
from pytest_specbench.jml import runners

PACKAGE = Path(jml.__file__).resolve().parents[1]
FAMILIES = PACKAGE / "benchmarks"


def _imports(path: Path) -> list[tuple[str, list[str]]]:
    """(absolute module, imported names) of every import in ``path``."""
    here = path.relative_to(PACKAGE.parent).with_suffix("").parts
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = list(here[:-node.level])
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            out.append((module, [a.name for a in node.names]))
        elif isinstance(node, ast.Import):
            out.extend((a.name, []) for a in node.names)
    return out


def test_postcond_imports_nothing_of_speceval():
    found = [(p.relative_to(PACKAGE).as_posix(), m) for p in (FAMILIES / "postcond").rglob("*.py")
             for m, _ in _imports(p) if m.startswith("pytest_specbench.benchmarks.speceval")]
    assert found == []


def test_families_use_the_public_interface_only():
    uses = []
    for path in FAMILIES.rglob("*.py"):
        for module, names in _imports(path):
            if module == "pytest_specbench.jml":
                uses.extend((path.name, n) for n in names)
                assert all(n in jml.__all__ for n in names), (path, names)
            elif module.startswith("pytest_specbench.jml."):
                pytest.fail(f"{path.relative_to(PACKAGE)} imports {module} (use pytest_specbench.jml)")
    # both families are users (the check above is not vacuous)
    assert {"source.py", "execute.py"} <= {f for f, _ in uses} and ("validation.py", "translate") in uses


def test_the_two_runners_share_their_set_up_and_record_channel():
    java = Path(runners.__file__).with_name("java")
    support = (java / "runtime" / "specbench" / "jml" / "RunnerSupport.java").read_text()
    for runner in (java / "runtime" / "specbench" / "jml" / "JmlRunner.java",
                   java / "junit" / "specbench" / "jml" / "JUnitRunner.java"):
        text = runner.read_text()
        assert "RunnerSupport.main(args, " in text and "finish(channel, nonce)" in text, runner.name
        for repeated in ("FileDescriptor.out", "halt(", "NoPoolThreads.install", "Policy.setPolicy", 'done\\":true'):
            assert repeated not in text, (runner.name, repeated)
            assert repeated in support, repeated
    # the runtime compiles without JUnit: the JUnit runner lives in a folder of its own
    assert not any("org.junit" in p.read_text() for p in (java / "runtime").rglob("*.java"))


def test_records_carry_the_nonce_and_split_on_newlines_only():
    good = {"nonce": "n1", "test": "T#a\u2028x"}
    stdout = "\n".join([json.dumps({"nonce": "forged", "done": True}), "noise {", json.dumps(good, ensure_ascii=False),
                        '{"runner_error":"boom"}', json.dumps({"nonce": "n1", "done": True})])
    assert runners.read_records(stdout, "n1") == [good, {"nonce": "n1", "done": True}]
    assert runners.runner_failure(stdout) == {"runner_error": "boom"}
    assert runners.read_records(None, "n1") == [] and runners.runner_failure("") is None


def test_javac_errors_map_to_the_clause_marker():
    translated = ("class A {\n  boolean __jml_c1(int x) { /*@jml:7*/\n    return x > ;\n  }\n\n  int g;\n"
                  "  int f() { return y; }\n}\n")
    diag = "A.java:3: error: illegal start of expression\n    return x > ;\n"
    assert runners.first_javac_error(diag) == ("A.java", 3, "illegal start of expression")
    assert runners.clause_line(translated, 3) == 7
    assert runners.clause_line(translated, 4) == 7  # up to three lines into the helper
    assert runners.clause_line(translated, 7) == 0  # f's error is no clause's
    assert runners.first_javac_error("javac: no source files") is None


def _task(language):
    return next(t for t in load_tasks(BUNDLED)[0] if t.data["repo"].get("language", "python") == language)


def test_each_language_is_one_side():
    py, java = _task("python"), _task("java")
    assert isinstance(sides.side_of(py), sides.PythonSide) and isinstance(sides.side_of(java), sides.JavaSide)
    assert (sides.side_of(py).kill, sides.side_of(java).kill) == ("icontract_fail", "jml_fail")
    assert ADAPTER.reference(java, "correct").startswith("```java\n")
    assert ADAPTER.reference(py, "correct").startswith("```python\n")
    assert isinstance(sides.side_of(java).parse("//@ ensures \\result >= 0;", ""), list)
    # a Maven project skips with one line before any toolchain is looked for
    maven = SimpleNamespace(task_id="x", data=dict(java.data, repo=dict(java.data["repo"], env="maven")))
    reason = sides.side_of(java).missing_toolchain(maven, ctx=None)
    assert "Maven" in reason and "\n" not in reason
