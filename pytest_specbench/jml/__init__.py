"""The JML service: Java programs annotated with JML (the Java Modeling Language)
checked at run time, shared by SpecEval (whole specs on test calls) and
PostcondBench's Java side (``ensures`` clauses under a project's JUnit 4 tests).
docs/jml.md describes the semantics, the inputs and the sandbox.

Its parts (each a module of this package):

* :mod:`.lexical`: the source's characters made unambiguous before any parse (``normalise_source``);
* :mod:`.parser`: Java syntax (tree-sitter-java) and the tree walks callers share;
* :mod:`.expr`: JML expressions (tokens, the parser, the AST, printing back to JML or Java);
* :mod:`.translate`: an annotated class translated into plain Java with runtime checks;
* :mod:`.inputs`, :mod:`.coverage`: test calls (drivers) and branch probes;
* :mod:`.checker`: translate, compile and run calls in the ``jvm`` executor, verdicts per call;
* :mod:`.runners`, :mod:`.junit`: the in-JVM runners (Java sources under ``java/``:
  the runtime with ``JmlRunner``, and ``JUnitRunner``), the JUnit 4 jars, records.

Families import from here, the names below (and :mod:`.expr` for the AST)."""
from __future__ import annotations

from . import expr
from .checker import CHECKER_VERSION, CallVerdict, JmlChecker, SpecReport
from .expr import JmlSyntaxError, parse_expr, tokenize
from .inputs import Driver, driver_from_calls, driver_from_daikon
from .junit import INSTALL_HINT as JUNIT_INSTALL_HINT
from .junit import jars as junit_jars
from .junit import missing as junit_missing
from .lexical import LexicalError, normalise_source
from .parser import node_text, parse_java, walk
from .runners import (JML_RUNNER, JUNIT_RUNNER, JUnitToolchain, clause_line, first_javac_error, junit_toolchain,
                      read_records, runner_failure, runtime_classes)
from .translate import Clause, Translation, TranslationError, translate

__all__ = [
    "expr", "CHECKER_VERSION", "CallVerdict", "JmlChecker", "SpecReport", "JmlSyntaxError", "parse_expr", "tokenize",
    "Driver", "driver_from_calls", "driver_from_daikon", "LexicalError", "normalise_source", "JUNIT_INSTALL_HINT",
    "junit_jars", "junit_missing",
    "node_text", "parse_java", "walk", "JML_RUNNER", "JUNIT_RUNNER", "JUnitToolchain", "clause_line",
    "first_javac_error", "junit_toolchain", "read_records", "runner_failure", "runtime_classes", "Clause",
    "Translation", "TranslationError", "translate",
]
