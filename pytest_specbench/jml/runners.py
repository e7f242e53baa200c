"""The in-JVM runners of the JML service and what their Python callers share.

Two runners, both in package ``specbench.jml`` beside the JML runtime (``JmlRt``,
``JmlViolation``) so that they read the violations it records whether or not the
program caught them; their common Java part is ``RunnerSupport`` (set-up, confinement,
output capture, the record channel):

* ``specbench.jml.JmlRunner`` (:data:`JML_RUNNER`, ``java/runtime/``): calls of a
  translated program through a driver class, one record per call
  (:class:`~.checker.JmlChecker`, SpecEval's dynamic validation);
* ``specbench.jml.JUnitRunner`` (:data:`JUNIT_RUNNER`, ``java/junit/``): a project's
  JUnit 4 tests one by one, one record per test (PostcondBench's Java side); it needs
  the JUnit 4 jars (:mod:`.junit`), so it is compiled apart from the runtime.

Both are trusted code compiled once per content by the ``jvm`` executor's
``prepare`` and write JSON records carrying a nonce (read from the job's file
``nonce`` and deleted before any program class loads) to the JVM's real stdout;
:func:`read_records` keeps the records that carry it."""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import InfrastructureError
from ..execution.protocol import Environment
from . import junit

JAVA_DIR = Path(__file__).with_name("java")
RUNTIME_DIR = JAVA_DIR / "runtime"  # JmlRt, JmlViolation, NoPoolThreads, RunnerSupport, JmlRunner
JUNIT_DIR = JAVA_DIR / "junit"  # JUnitRunner (compiled against the runtime and JUnit 4)
JML_RUNNER = "specbench.jml.JmlRunner"
JUNIT_RUNNER = "specbench.jml.JUnitRunner"


def _sources(root: Path) -> dict[str, str]:
    return {f"specbench/jml/{p.name}": p.read_text() for p in sorted((root / "specbench" / "jml").glob("*.java"))}


def runtime_classes(jvm: Any) -> Path:
    """The compiled JML runtime and :data:`JML_RUNNER` (trusted; compiled once per content)."""
    prepared = jvm.prepare(Environment("classpath", "jml-runtime", {"sources": _sources(RUNTIME_DIR)}))
    classes = Path(prepared.info["classes"])
    # javac and java run in other working folders: a relative or missing class folder would
    # make every check fail to compile, which the checker reports as the *specification's*
    # fault (undecided clauses); it is the harness's, so the item is an error instead.
    if not classes.is_absolute() or not classes.is_dir():
        raise InfrastructureError(f"the JML runtime's compiled classes are not an existing absolute folder: {classes}")
    return classes


@dataclass(frozen=True)
class JUnitToolchain:
    """The class folders a run of :data:`JUNIT_RUNNER` needs: JUnit jars, the JML runtime, the runner."""

    junit: Path
    hamcrest: Path
    jml_runtime: Path
    runner: Path

    @property
    def classpath(self) -> tuple[Path, ...]:
        return (self.runner, self.jml_runtime, self.junit, self.hamcrest)


_TOOLCHAINS: dict[str, JUnitToolchain] = {}


def junit_toolchain(jvm: Any) -> JUnitToolchain:
    """JUnit 4 (:func:`.junit.jars`; one line saying how to install it when missing,
    as an :class:`InfrastructureError`), the runtime and the compiled JUnit runner."""
    key = str(getattr(jvm, "cache_dir", id(jvm)))  # class folders live in the executor's cache
    if key not in _TOOLCHAINS:
        found = junit.jars()
        if isinstance(found, str):
            raise InfrastructureError(found)
        jar, ham = found
        runtime = runtime_classes(jvm)
        prepared = jvm.prepare(Environment("classpath", "jml-junit-runner",
                                           {"sources": _sources(JUNIT_DIR),
                                            "classpath": [str(runtime), str(jar), str(ham)]}))
        _TOOLCHAINS[key] = JUnitToolchain(jar, ham, runtime, Path(prepared.info["classes"]))
    return _TOOLCHAINS[key]


def read_records(stdout: str | None, nonce: str) -> list[dict]:
    """The runner's records: JSON objects carrying ``nonce``, in order.

    Split on ``"\\n"`` only: the runners escape everything else outside printable
    ASCII, and ``str.splitlines`` would split a record on a U+2028 or U+0085 the
    program printed."""
    records = []
    for line in (stdout or "").split("\n"):
        try:
            rec = json.loads(line)
        except ValueError:
            continue
        if isinstance(rec, dict) and rec.get("nonce") == nonce:
            records.append(rec)
    return records


def runner_failure(stdout: str | None) -> dict | None:
    """The runner's own failure line (``{"runner_error": ...}``, printed before any
    program class loads, hence without the nonce), or None."""
    for line in (stdout or "").split("\n"):
        if line.startswith('{"runner_error"'):
            try:
                return json.loads(line)
            except ValueError:
                return None
    return None


_JAVAC_ERROR = re.compile(r"^(?P<file>[^\s:]+\.java):(?P<line>\d+): error: (?P<msg>.*)$", re.M)
_CLAUSE_MARK = re.compile(r"/\*@jml:(\d+)\*/")


def first_javac_error(diagnostics: str) -> tuple[str, int, str] | None:
    """``(file, line, message)`` of javac's first error, or None when it names none."""
    m = _JAVAC_ERROR.search(diagnostics)
    return (m.group("file"), int(m.group("line")), m.group("msg")) if m else None


def clause_line(translated: str, line: int) -> int:
    """The JML line of the clause whose generated code is at ``line`` of the translated
    source (0: none).  A clause's helper carries its clause's line in a ``/*@jml:LINE*/``
    marker on its first line; an error up to three lines into a helper (``__jml_c``)
    maps to it."""
    lines = translated.splitlines()
    for i in range(min(line, len(lines)) - 1, max(line - 4, 0) - 1, -1):
        mk = _CLAUSE_MARK.search(lines[i])
        if mk and (i == line - 1 or "__jml_c" in lines[i]):
            return int(mk.group(1))
    return 0
