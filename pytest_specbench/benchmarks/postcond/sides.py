"""PostcondBench's two languages behind one interface: a task's :class:`Side` says how
its prompt is written, how an answer is read, how one program runs with a spec and
which verdict kills a mutant.  The adapter asks :func:`side_of` once per task and
never branches on the language itself.

* :class:`PythonSide`: icontract decorators under pytest (:mod:`.source`,
  :mod:`.execute`, in the ``command`` executor);
* :class:`JavaSide` (``repo.language == "java"``): JML ``ensures`` under JUnit 4
  (:mod:`.java`), through the JML service (:mod:`pytest_specbench.jml`) in the ``jvm``
  executor; only self-contained projects (``repo.env == "javac-junit4"``) run."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

from ...jml import junit_missing
from ..base import Task
from . import execute, metrics, source
from .java import execute as java_execute, source as java_source


class Side:
    """One language of PostcondBench.  ``spec`` is what :meth:`parse` returns (the
    decorator text for Python, the list of ``ensures`` clauses for Java)."""

    language: str  # repo.language
    fence: str  # the reference's code fence
    kill: str  # the verdict that kills a mutant (upstream's flag)

    def missing_toolchain(self, task: Task, ctx: Any) -> str | None:
        """One line saying why the task cannot run here (before its checkout is looked for), or None."""
        raise NotImplementedError

    def render_prompt(self, setting: str, file_text: str, d: Mapping[str, Any]) -> str:
        raise NotImplementedError

    def parse(self, text: str, file_text: str) -> Any:
        """The spec of an answer; raises :class:`.source.AnswerError` (one line)."""
        raise NotImplementedError

    def run(self, task: Task, ctx: Any, checkout: Path, spec: Any, program: execute.Program,
            timeout: float) -> dict:
        """``{"verdict", "reason", ...}`` of one program (original or mutant) with the spec."""
        raise NotImplementedError

    def is_standalone(self, file_text: str, d: Mapping[str, Any]) -> bool:
        """Table 3's Solo (§5.4): the method ``d`` (``name``, ``start_line``) of ``file_text``
        runs with built-ins and the standard library only."""
        raise NotImplementedError


class PythonSide(Side):
    language, fence, kill = "python", "python", "icontract_fail"

    def missing_toolchain(self, task: Task, ctx: Any) -> str | None:
        return ctx.executor("command").available()

    def render_prompt(self, setting: str, file_text: str, d: Mapping[str, Any]) -> str:
        return source.render_prompt(setting, file_text, d["content"], d["name"], d["start_line"])

    def parse(self, text: str, file_text: str) -> str:
        return source.parse_answer(text, file_text)

    def run(self, task: Task, ctx: Any, checkout: Path, spec: str, program: execute.Program,
            timeout: float) -> dict:
        ex = ctx.executor("command")
        prepared = ex.prepare(execute.environment_for(dict(task.data), checkout))
        return execute.run_program(ex, prepared, dict(task.data), checkout, program, spec,
                                   ctx.option("postcond_injection") or "fixed", timeout)

    def is_standalone(self, file_text: str, d: Mapping[str, Any]) -> bool:
        return metrics.is_standalone(file_text, d.get("name"), d.get("start_line"))


class JavaSide(Side):
    language, fence, kill = "java", "java", java_execute.KILL
    ENV = "javac-junit4"  # a self-contained project: javac + Debian's JUnit 4, no build tool

    def missing_toolchain(self, task: Task, ctx: Any) -> str | None:
        repo = task.data["repo"]
        if repo.get("env") != self.ENV:
            build = "Gradle" if "gradle" in (repo.get("env_config") or "").lower() else "Maven"
            return (f"{repo.get('github_path') or task.task_id}: a {build} project; its dependencies and "
                    f"plugins come from Maven Central, which this harness does not reach (only self-contained "
                    f"projects with repo.env = {self.ENV!r} run)")
        return ctx.executor("jvm").available() or junit_missing()

    def render_prompt(self, setting: str, file_text: str, d: Mapping[str, Any]) -> str:
        return java_source.render_prompt(setting, file_text, d["content"], d.get("header") or d["content"], d["name"])

    def parse(self, text: str, file_text: str) -> list[str]:
        return java_source.parse_answer(text)

    def run(self, task: Task, ctx: Any, checkout: Path, spec: list[str], program: execute.Program,
            timeout: float) -> dict:
        return java_execute.run_program(ctx.executor("jvm"), dict(task.data), checkout, program.file_text, spec,
                                        timeout, program.label)

    def is_standalone(self, file_text: str, d: Mapping[str, Any]) -> bool:
        return metrics.is_standalone_java(file_text, d.get("name"), d.get("start_line"))


SIDES: dict[str, Side] = {s.language: s for s in (PythonSide(), JavaSide())}
LANGUAGES = tuple(SIDES)


def side_of(task: Task) -> Side:
    """The task's side (``repo.language``, default python; :func:`.adapter.load_tasks` refuses others)."""
    return SIDES[task.data["repo"].get("language", "python")]
