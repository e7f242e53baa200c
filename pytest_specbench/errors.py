"""Errors that reach the user as one line, never as a traceback."""
from __future__ import annotations

from pathlib import Path


class SpecbenchError(Exception):
    """A user-facing problem (bad option, bad data, unreachable endpoint).

    ``str(err)`` is the whole message: one line that names the option, file or line.
    """


class DataError(SpecbenchError):
    def __init__(self, path: Path | str, line: int | None, problem: str):
        where = f"{path}:{line}" if line else f"{path}"
        super().__init__(f"{where}: {problem}")
        self.path, self.line, self.problem = path, line, problem


class OptionError(SpecbenchError):
    def __init__(self, option: str, problem: str):
        super().__init__(f"{option}: {problem}")
        self.option = option


class InfrastructureError(Exception):
    """The harness could not do its job (sandbox, toolchain, journal): reported as E, not F."""


class RepeatableError(InfrastructureError):
    """An error that recurs, word for word, with the same data, sample and limits
    (say, the benchmark's own solution over a CPU limit): the result cache keeps
    it like a verdict, so an identical re-run reports it without redoing the work."""
