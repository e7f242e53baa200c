"""Benchmark authors' tool, Java: turn a method of one's own self-contained Java
project (Maven layout, JUnit 4 tests) into a PostcondBench task in upstream's
schema.

Steps (§3.2.2, §3.2.4): locate the method (tree-sitter; the task's lines start at
its Javadoc, as upstream's); the covering tests must pass on the original and the
reference ``ensures`` clauses must hold while they run; rule mutants
(:mod:`.mutate`, PIT's default operators); filtering: a mutant must fail the tests
with a test failure (not time out, not throw from its own method other than an
assertion, and compile); the reference must kill it (``jml_fail``) unless
``keep_unkilled``.  Every run goes through the ``jvm`` executor's sandbox.

Not done for Java: the line-coverage gate (no coverage tool is installed here:
JaCoCo comes from Maven Central); ``line_cov`` is left ``null``.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

from ....jml import parse_java
from ..author import TaskBuildError
from . import execute, mutate, source


@dataclass
class BuildReport:
    task: dict[str, Any]
    generated: int
    dropped: dict[str, list[int]] = field(default_factory=dict)


def _method_span(file_text: str, qualname: str) -> tuple[int, int, int, str]:
    """(first line incl. Javadoc, last line, line of the body's ``{``, name)."""
    parts = qualname.split(".")
    name = parts[-1]
    src = file_text.encode("utf-8")
    tree = parse_java(src)
    found = []

    def walk(n, classes):
        if n.type in ("class_declaration", "interface_declaration", "enum_declaration", "record_declaration"):
            classes = classes + [src[n.child_by_field_name("name").start_byte:n.child_by_field_name("name").end_byte]
                                 .decode()]
        if n.type in ("method_declaration", "constructor_declaration"):
            nm = n.child_by_field_name("name")
            if src[nm.start_byte:nm.end_byte].decode() == name and (
                    len(parts) == 1 or classes[-(len(parts) - 1):] == parts[:-1]):
                found.append(n)
        for c in n.children:
            walk(c, classes)

    walk(tree.root_node, [])
    if not found:
        raise TaskBuildError(f"no method {qualname!r} in the file")
    if len(found) > 1:
        raise TaskBuildError(f"{len(found)} methods named {qualname!r} (overloads): not supported")
    node = found[0]
    start = node.start_point[0] + 1
    prev = node.prev_sibling
    if prev is not None and prev.type == "block_comment" and src[prev.start_byte:prev.end_byte].startswith(b"/**") \
            and node.start_point[0] - prev.end_point[0] <= 1:
        start = prev.start_point[0] + 1
    body = node.child_by_field_name("body")
    if body is None:
        raise TaskBuildError(f"{qualname} has no body")
    return start, node.end_point[0] + 1, body.start_point[0] + 1, name


def build_task(repo: Path, rel_file: str, qualname: str, tests: Sequence[str], ref_postcond: str, jvm: Any, *,
               keep_unkilled: bool = False, repo_meta: dict | None = None, timeout: float = execute.DEFAULT_TIMEOUT,
               progress: Callable[[str], None] = lambda _m: None) -> BuildReport:
    file_text = (repo / rel_file).read_text(encoding="utf-8")
    start, end, brace, name = _method_span(file_text, qualname)
    lines = file_text.splitlines()
    content = "\n".join(lines[start - 1:end])
    header = "\n".join(lines[start - 1:brace])
    comment = "\n".join(lines[start - 1:brace - 1]).strip() if lines[start - 1].lstrip().startswith("/**") else ""
    if comment:
        comment = comment[:comment.rfind("*/") + 2]
    clauses = source.parse_answer(ref_postcond)
    data = {
        "rlid": name, "name": name, "file": rel_file, "start_line": start, "end_line": end,
        "body_start_line": brace + 1, "content": content, "header": header, "comment": comment,
        "cover_tests": list(tests), "line_cov": None, "lines": end - start + 1,
        "repo": {"github_path": "", "commit": "", "language": "java", "env_config": "", "failed_tests": [],
                 **(repo_meta or {})},
        "mutants": [], "mutant_tags": [], "ref_source": "human",
        "ref_postcond": "\n".join(f"//@ ensures {c};" for c in clauses), "ref_mutant_kill": [],
    }
    plain = execute.run_program(jvm, data, repo, file_text, [], timeout)
    if plain["verdict"] != "passed":
        raise TaskBuildError(f"the covering tests do not pass on the original: {plain['verdict']}: {plain['reason']}")
    original = execute.run_program(jvm, data, repo, file_text, clauses, timeout)
    if original["verdict"] != "passed":
        raise TaskBuildError(f"the reference postconditions are not correct: {original['verdict']}: {original['reason']}")
    candidates = mutate.rule_mutants(content)
    report = BuildReport(data, len(candidates))
    for i, (operator, mutant) in enumerate(candidates):
        program = source.replace_method(file_text, start, end, mutant)
        plain = execute.run_program(jvm, data, repo, program, [], timeout, label=f"mutant {i}")
        if plain["verdict"] == "compile_failure":
            report.dropped.setdefault("does not compile", []).append(i)
            continue
        if plain["verdict"] == "passed":
            report.dropped.setdefault("passes the tests", []).append(i)
            continue
        if plain["verdict"] != "failed":
            report.dropped.setdefault(f"crashes under normal execution ({plain['verdict']})", []).append(i)
            continue
        kill = execute.run_program(jvm, data, repo, program, clauses, timeout, label=f"mutant {i}")["verdict"]
        if kill != execute.KILL and not keep_unkilled:
            report.dropped.setdefault("not killed by the reference", []).append(i)
            continue
        data["mutants"].append(mutant)
        data["mutant_tags"].append(["rule", operator])
        data["ref_mutant_kill"].append(kill)
        progress(f"mutant {i} ({operator}) kept")
    data["prompt"] = source.render_prompt("f2p", file_text, content, header, name)
    return report
