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


# Exceptions a call raises when the machine, not the code, ran short (#48): a failure
# of the harness's own work (a reference's run) with one of these may not recur.
LOAD_EXCEPTIONS = frozenset({"MemoryError"})


def lasting_failure(status: str, exc_type: str = "") -> bool:
    """Whether a call's failure of the harness's own work recurs under the same
    limits, so it may be remembered (a ``.failed`` file, the result cache): only
    an exception the code raised (``raise``) other than running out of memory.
    A time-out, a killed or lost job, or a machine fault may be the load of the
    machine: never remembered, the next run tries again (#48)."""
    return status == "raise" and exc_type not in LOAD_EXCEPTIONS
