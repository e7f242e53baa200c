"""One run of PostcondBench (Java): a program (the original file or a mutant) with
a set of JML ``ensures`` clauses on the target method, under the project's JUnit 4
tests.

* The project (``src/main/java`` and ``src/test/java`` of the checkout, trusted
  benchmark material) is compiled once per content by the ``jvm`` executor's
  ``prepare`` (javac ``-proc:none``: no code runs) into a class folder A.
* The target file with the clauses injected (:mod:`.source`) is translated by the
  JML service's translator (:func:`pytest_specbench.jml.translate`; only the target
  method is instrumented, no non-null defaults) and compiled alone against A into a
  folder B: javac's errors map back to the clause through the helpers'
  ``/*@jml:LINE*/`` markers (``compile_failure``).
* The JML service's JUnit runner (``specbench.jml.JUnitRunner``,
  :mod:`pytest_specbench.jml.runners`) runs the cover tests one by one in a JVM started
  by the ``jvm`` executor, i.e. inside the ``command`` sandbox, with B before A on a
  class loader of its own; its records carry a nonce the tested code cannot read.

Verdicts (ranked as on the Python side, :mod:`..verdict`): ``timeout`` (the time
limit) > ``jml_fail`` (an ``ensures`` clause was violated during some test,
recorded by the JML runtime whether or not the code caught it; upstream's flag) >
``local_crash`` (a clause raised while being evaluated, a failure whose exception
passed through the target method and is not an assertion, or a run that ended
without its final record) > ``failed`` (another test failure) > ``passed``;
``compile_failure`` when the clauses do not translate or compile.
"""
from __future__ import annotations

import hashlib
import json
import secrets
from pathlib import Path
from typing import Any, Sequence

from ....errors import InfrastructureError
from ....execution.jvm import JavaJob
from ....execution.protocol import Environment
from ....jml import (JUNIT_RUNNER, JUnitToolchain, TranslationError, clause_line, first_javac_error, junit_toolchain,
                     read_records, runner_failure, translate)
from . import source

DEFAULT_TIMEOUT = 30.0  # upstream: 30 s per test-suite run
START_MARGIN = 15.0  # JVM start and class loading, on top of the tests' budget
LAYOUT = ("src/main/java", "src/test/java")
KILL = "jml_fail"


def project_sources(checkout: Path) -> dict[str, str]:
    out = {}
    for sub in LAYOUT:
        for f in sorted((checkout / sub).rglob("*.java")):
            out[f.relative_to(checkout).as_posix()] = f.read_text(encoding="utf-8")
    if not out:
        raise InfrastructureError(f"{checkout}: no Java sources under {' or '.join(LAYOUT)}")
    return out


def project_classes(jvm: Any, checkout: Path, tools: JUnitToolchain) -> Path:
    """Folder A: the project and its tests as written (compiled once per content)."""
    sources = project_sources(checkout)
    h = hashlib.sha256(json.dumps(sorted(sources.items())).encode()).hexdigest()[:16]
    prepared = jvm.prepare(Environment("classpath", f"postcond-java-{h}",
                                       {"sources": sources, "classpath": [str(tools.junit), str(tools.hamcrest)]}))
    return Path(prepared.info["classes"])


def tests_to_run(task_data: dict) -> list[str]:
    failing = set(task_data["repo"].get("failed_tests") or ())
    return [t for t in task_data["cover_tests"] if t not in failing]


def _clause_of(line: int, clause_lines: dict[int, int]) -> str:
    n = clause_lines.get(line)
    return f"clause {n}" if n else f"line {line}"


def run_program(jvm: Any, task_data: dict, checkout: Path, file_text: str, clauses: Sequence[str],
                timeout: float = DEFAULT_TIMEOUT, label: str = "original") -> dict[str, Any]:
    """``{"verdict", "reason", ...}`` for one program and one clause set (empty: the
    program as written, used by the authors' tool to filter mutants).  With clauses (a
    sample's), one guard around the whole path (inject, translate, compile, run, read;
    issue 42): an exception the clauses cause is ``compile_failure`` with one line; only
    the harness's faults (:class:`InfrastructureError`, ``OSError``, ``MemoryError``) are E."""
    if not clauses:
        return _run_program(jvm, task_data, checkout, file_text, clauses, timeout, label)
    try:
        return _run_program(jvm, task_data, checkout, file_text, clauses, timeout, label)
    except (InfrastructureError, OSError, MemoryError):
        raise
    except Exception as exc:  # noqa: BLE001 - the sample's fault, whatever it is
        what = " ".join(str(exc).split())[:200]
        return {"verdict": "compile_failure", "reason": f"the clauses could not be checked: {type(exc).__name__}: "
                                                        f"{what}"[:400]}


def _run_program(jvm: Any, task_data: dict, checkout: Path, file_text: str, clauses: Sequence[str],
                 timeout: float, label: str) -> dict[str, Any]:
    tools = junit_toolchain(jvm)
    base = project_classes(jvm, checkout, tools)
    rel = task_data["file"].removeprefix("./")
    name = task_data["name"]
    site = source.locate(file_text, name, task_data["start_line"], task_data["end_line"])
    if site is None:
        raise InfrastructureError(f"{label}: no method {name} in lines {task_data['start_line']}-"
                                  f"{task_data['end_line']} of {rel}")
    clause_lines: dict[int, int] = {}
    tr = None
    text = file_text
    if clauses:
        inj = source.inject(file_text, name, task_data["start_line"], task_data["end_line"], list(clauses))
        clause_lines = inj.clause_lines
        try:
            tr = translate(inj.text, probes=False, only_lines={inj.decl_line}, non_null=False)
        except TranslationError as exc:
            if exc.line in clause_lines:
                return {"verdict": "compile_failure", "reason": f"{_clause_of(exc.line, clause_lines)}: {exc}"}
            raise InfrastructureError(f"{label}: the JML translator cannot read {rel}: {exc}") from None
        if tr.unsupported:
            what, line = tr.unsupported[0]
            return {"verdict": "compile_failure", "reason": f"{_clause_of(line, clause_lines)}: unsupported: {what}"}
        text = tr.source
    res = jvm.compile({rel: text}, (base, tools.jml_runtime))
    if not res.ok:
        line, msg = map_javac(res.diagnostics, text)
        where = _clause_of(line, clause_lines) if line else "javac"
        return {"verdict": "compile_failure", "reason": f"{where}: {msg}"[:400]}
    tests = tests_to_run(task_data)
    nonce = secrets.token_hex(16)
    job = JavaJob(main=JUNIT_RUNNER,
                  args=(str(int(timeout * 1000)), "4096", site.binary_class, name, f"{res.classes}:{base}", *tests),
                  classpath=tools.classpath,
                  readonly=(res.classes, base), files={"nonce": nonce.encode()},
                  wall_seconds=timeout + START_MARGIN, cpu_seconds=timeout + START_MARGIN)
    result = jvm.run(None, job)
    out = decide(read_records(result.stdout, nonce), result, clause_lines, tests)
    out["reason"] = " ".join(str(out.get("reason", "")).splitlines())  # one line, whatever a message held
    out["tests"] = len(tests)
    out["wall"] = round(result.wall, 3)
    return out


def decide(records: list[dict], result: Any, clause_lines: dict[int, int], tests: Sequence[str]) -> dict[str, Any]:
    plain = runner_failure(result.stdout)
    runner_error = plain.get("runner_error") if plain else None
    missing = [r for r in records if r.get("outcome") == "missing"]
    if missing:
        raise InfrastructureError(f"test {missing[0]['test']} not found in the project: {missing[0].get('message', '')}")
    finished = any(r.get("done") is True for r in records)
    tests_done = [r for r in records if "test" in r]
    if runner_error and not tests_done:
        # before the first record only the runner's set-up ran (no project code yet): the harness's fault
        raise InfrastructureError(f"the JUnit runner failed: {runner_error}")
    viol = [(r, v) for r in tests_done for v in r.get("violations", ()) if v.get("kind") != "undefined"]
    undefined = [(r, v) for r in tests_done for v in r.get("violations", ()) if v.get("kind") == "undefined"]
    timed = [r for r in tests_done if r.get("outcome") == "timeout"]
    failures = [(r, f) for r in tests_done for f in r.get("failures", ())]
    if result.timed_out or timed:
        who = timed[0]["test"] if timed else "the run"
        return {"verdict": "timeout", "reason": f"{who} hit the time limit"}
    outlived = [r for r in tests_done if r.get("outlived")]
    if viol:
        r, v = viol[0]
        return {"verdict": "jml_fail", "reason": f"{r['test']}: {v['kind']} {_clause_of(v['line'], clause_lines)} "
                                                  f"violated: {v['clause']}"}
    if undefined:
        r, v = undefined[0]
        return {"verdict": "local_crash", "reason": f"{r['test']}: evaluating {_clause_of(v['line'], clause_lines)} "
                                                     f"raised: {v['message']}"}
    if outlived:
        return {"verdict": "local_crash", "reason": f"{outlived[0]['test']}: a thread the test did not own "
                                                     f"({str(outlived[0]['outlived'])[:60]}) was alive after it"}
    if not finished:
        why = runner_error or result.killed or (f"signal {result.signal}" if result.signal
                                                else f"exit status {result.exit_code}")
        return {"verdict": "local_crash", "reason": f"the test run ended without its final report ({why})"}
    errors = [r for r in tests_done if r.get("outcome") == "error"]
    if errors:
        return {"verdict": "failed", "reason": f"{errors[0]['test']}: JUnit could not run it: {errors[0].get('message')}"}
    crashes = [(r, f) for r, f in failures if f.get("through_target") and not f.get("assertion")]
    if crashes:
        r, f = crashes[0]
        return {"verdict": "local_crash", "reason": f"{r['test']}: {f['exception']}: {f['message']}"[:300]}
    if failures:
        r, f = failures[0]
        return {"verdict": "failed", "reason": f"{r['test']}: {f['exception']}: {f['message']}"[:300]}
    not_run = [r["test"] for r in tests_done if r.get("outcome") == "passed" and not r.get("run")]
    if not_run or len(tests_done) < len(tests):
        return {"verdict": "failed", "reason": f"no test ran for {(not_run or ['?'])[0]}"}
    return {"verdict": "passed", "reason": ""}


def map_javac(diagnostics: str, translated: str) -> tuple[int, str]:
    """(JML line, javac's first error): a generated clause helper carries its
    clause's line in a ``/*@jml:LINE*/`` marker on its first line."""
    found = first_javac_error(diagnostics)
    if found is None:
        return 0, (diagnostics.strip().splitlines() or ["javac failed"])[0]
    _file, line, msg = found
    clause = clause_line(translated, line)
    return (clause, msg) if clause else (0, f"{msg} (line {line} of the translated file)")
