"""Benchmark authors' tool: turn a method of one's own repository into a
PostcondBench task in upstream's schema (§3.2.2 mutants and filtering, §3.2.4
coverage gate and validation of the reference).

Steps: locate the method (AST); coverage gate (line coverage of the method's
body by its covering tests >= 90%, coverage.py); mutants by rule
(:mod:`.mutate`) and optionally by model; filtering (a mutant must fail the
tests, must not crash (an exception raised in the method's own lines) or time
out, §3.2.2); the reference must pass on the original; mutants the reference
does not kill are dropped (upstream's experts refine or exclude them, §3.2.5)
unless ``keep_unkilled``.
"""
from __future__ import annotations

import ast
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

from ...execution.protocol import CommandJob
from . import execute, mutate, source

COVERAGE_GATE = 0.9


class TaskBuildError(Exception):
    """One line: why the method cannot become a task."""


@dataclass
class BuildReport:
    task: dict[str, Any]
    coverage: float
    generated: int
    dropped: dict[str, list[int]] = field(default_factory=dict)  # reason -> mutant numbers


def locate(file_text: str, qualname: str) -> ast.AST:
    """``name`` or ``Class.name``."""
    parts = qualname.split(".")
    scope: Sequence[ast.AST] = ast.parse(file_text).body
    node = None
    for i, part in enumerate(parts):
        want = (ast.FunctionDef, ast.AsyncFunctionDef) if i == len(parts) - 1 else (ast.ClassDef,)
        node = next((n for n in scope if isinstance(n, want) and n.name == part), None)
        if node is None:
            raise TaskBuildError(f"no {'method' if i == len(parts) - 1 else 'class'} {part!r} in the file")
        scope = node.body
    return node


def line_coverage(executor: Any, prepared: Any, repo: Path, rel_file: str, tests: Sequence[str], first: int, last: int,
                  timeout: float = 300) -> float:
    """Fraction of the method's executable lines (first..last) run by ``tests``: coverage.py
    over the tests, a job of ``executor``'s sandbox (the checkout read-only), its data file
    brought back and read here.

    The job starts warm (execution/warm.py) from the image the task's own runs start from
    (execute.WARM: pytest and the plugins every run imports, icontract), one image for both:
    coverage.py is imported by the job, and it measures what runs after it starts (the
    method's file is imported by the tests, in the job).  Exec'd (or, until session 23, a
    plain subprocess outside the sandbox), an interpreter's start and pytest's import were
    ~0.35 CPU s more a run; an image of its own (coverage.py imported too) cost more than it
    saved for the one or two coverage runs of a build."""
    python = (getattr(prepared, "executables", None) or {}).get("python") or sys.executable
    # (PYTEST_DISABLE_PLUGIN_AUTOLOAD: the harness's interpreter's pytest plugins are the harness's,
    # not the project's, and none is loaded, as in a run of a task in the harness's environment,
    # execute.build_job; the job's folder is its working directory: no configuration of the
    # checkout's is read, the data file is written there)
    job = CommandJob(
        argv=(python, "-m", "coverage", "run", "--include", str(repo / rel_file),
              "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:specbench", "--rootdir", str(repo),
              *[str(repo / t) for t in tests]),
        readonly=(repo,), env={"PYTHONPATH": str(repo), "COVERAGE_FILE": ".coverage", "PYTHONDONTWRITEBYTECODE": "1",
                               "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"},
        collect=(".coverage",), wall_seconds=timeout, cpu_seconds=timeout, memory_mb=4096, output_bytes=16 << 20,
        warm=execute.WARM)
    run = executor.run(prepared, job)
    if run.exit_code not in (0, 1):
        last_line = ((run.stdout or "") + (run.stderr or "")).strip().splitlines()[-1:]
        raise TaskBuildError(f"the covering tests did not run: {run.killed or last_line}")
    with tempfile.TemporaryDirectory(prefix="postcond-cov-") as tmp:
        data = Path(tmp, ".coverage")
        if ".coverage" in (run.files or {}):
            data.write_bytes(run.files[".coverage"])
        return _method_coverage(data, repo / rel_file, first, last)


def _method_coverage(data_file: Path, file: Path, first: int, last: int) -> float:
    """Fraction of the executable lines first..last of ``file`` that the coverage data
    records as run.  Read here with coverage.py's API (the data and the file are the
    author's own; nothing of them runs): a ``coverage json`` process of its own was a
    second interpreter start and coverage import per task built."""
    from coverage import Coverage
    from coverage.exceptions import CoverageException

    if not data_file.exists():
        return 0.0
    cov = Coverage(data_file=str(data_file), config_file=False)
    try:
        cov.load()
        if not cov.get_data().measured_files():
            return 0.0
        _name, statements, _excluded, missing, _text = cov.analysis2(str(file))
    except CoverageException:
        return 0.0
    lines = {ln for ln in statements if first <= ln <= last}
    run = lines - set(missing)
    return len(run) / len(lines) if lines else 0.0


def build_task(repo: Path, rel_file: str, qualname: str, tests: Sequence[str], ref_postcond: str,
               executor: Any, *, extra_mutants: Sequence[str] = (), keep_unkilled: bool = False,
               repo_meta: dict | None = None, timeout: float = execute.DEFAULT_TIMEOUT,
               progress: Callable[[str], None] = lambda _m: None) -> BuildReport:
    file_text = (repo / rel_file).read_text(encoding="utf-8")
    node = locate(file_text, qualname)
    name = node.name
    start, end = node.lineno, node.end_lineno
    lines = file_text.splitlines()
    content = "\n".join(lines[start - 1:end])
    doc = node.body[0] if (isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant)
                           and isinstance(node.body[0].value.value, str)) else None
    body_start = (doc.end_lineno + 1) if doc is not None else node.body[0].lineno
    if doc is not None and len(node.body) == 1:
        raise TaskBuildError("the method has no body besides its docstring")
    # (coverage.py is the harness's: the run takes the harness's interpreter, whatever the task's)
    harness = executor.prepare(execute.environment_for({"repo": {"env": "harness"}}, repo))
    coverage = line_coverage(executor, harness, repo, rel_file, tests, body_start, end)
    progress(f"coverage of {qualname}: {coverage:.0%}")
    if coverage < COVERAGE_GATE:
        raise TaskBuildError(f"line coverage of {qualname} by its tests is {coverage:.0%} < {COVERAGE_GATE:.0%} (§3.2.4)")
    decorators = source.parse_answer(ref_postcond)
    data = {
        "rlid": name, "name": name, "file": rel_file, "start_line": start, "end_line": end,
        "body_start_line": body_start, "content": content,
        "header": "\n".join(lines[start - 1:body_start - 1]),
        "comment": "\n".join(lines[doc.lineno - 1:doc.end_lineno]).strip() if doc is not None else "",
        "cover_tests": list(tests), "line_cov": coverage, "lines": end - start + 1,
        "repo": {"github_path": "", "commit": "", "language": "python", "env_config": "", "failed_tests": [],
                 **(repo_meta or {})},
        "mutants": [], "mutant_tags": [], "ref_source": "human", "ref_postcond": decorators, "ref_mutant_kill": [],
    }
    checkout = repo
    env = execute.environment_for(data, checkout)
    prepared = executor.prepare(env)
    original = execute.run_program(executor, prepared, data, checkout, execute.Program(file_text, "original"),
                                   decorators, "fixed", timeout)
    if original["verdict"] != "passed":
        raise TaskBuildError(f"the reference postconditions are not correct: {original['verdict']}: {original['reason']}")
    candidates = [(fam, m) for fam, m in mutate.rule_mutants(content)] + [("llm", m) for m in extra_mutants]
    report = BuildReport(data, coverage, len(candidates))
    for i, (family, mutant) in enumerate(candidates):
        program = execute.Program(source.replace_method(file_text, start, end, mutant), f"mutant {i}")
        try:
            compile(program.file_text, rel_file, "exec")
        except SyntaxError:
            report.dropped.setdefault("does not compile", []).append(i)
            continue
        plain = execute.run_program(executor, prepared, data, checkout, program, "", "fixed", timeout)
        if plain["verdict"] == "passed":
            report.dropped.setdefault("passes the tests", []).append(i)
            continue
        if plain["verdict"] != "failed":  # local_crash (an exception in the method), timeout, compile_failure
            report.dropped.setdefault(f"crashes under normal execution ({plain['verdict']})", []).append(i)
            continue
        kill = execute.run_program(executor, prepared, data, checkout, program, decorators, "fixed", timeout)["verdict"]
        if kill != "icontract_fail" and not keep_unkilled:
            report.dropped.setdefault("not killed by the reference", []).append(i)
            continue
        data["mutants"].append(mutant)
        data["mutant_tags"].append(["rule" if family != "llm" else "llm", family] if family != "llm" else ["llm"])
        data["ref_mutant_kill"].append(kill)
    data["prompt"] = source.render_prompt("f2p", file_text, content, name, start)
    return report
