"""Sandbox limits: the one place their names, defaults and checks live."""
from __future__ import annotations

from dataclasses import dataclass, fields

from ..errors import OptionError


@dataclass(frozen=True)
class Limits:
    """Limits for one sandboxed job (one sample on one input set).

    ``call_cpu`` is CPU time, not wall time, so verdicts do not change with the
    machine's load; an input on which the reference itself is slow gets
    ``reference_factor`` times the reference's cost instead (measured in units of
    :func:`machine_speed`, so the same on any machine).  ``wall_factor`` bounds
    wall time per call (a sample that sleeps) as ``limit * wall_factor + 0.5`` s.
    """

    call_cpu: float = 1.0  # CPU seconds per call (per input): the floor
    reference_factor: float = 4.0  # ... raised to this many times the reference's cost on the input
    startup_cpu: float = 5.0  # CPU seconds to define the sample's functions
    wall_factor: float = 3.0
    memory_mb: int = 4096  # address space per child
    processes: int = 32  # processes the child's own uid may have (root runs only)
    output_bytes: int = 64 * 1024  # captured stdout+stderr; the rest is dropped
    file_bytes: int = 16 * 1024 * 1024  # largest file the child may write
    result_bytes: int = 512 * 1024 * 1024  # result data a child may send
    tmp_mb: int = 512  # size of the private /tmp

    @classmethod
    def option_names(cls) -> dict[str, str]:
        """``{field: --option}`` for the command line."""
        return {f.name: "--specbench-" + f.name.replace("_", "-") for f in fields(cls)}

    def validated(self) -> "Limits":
        for f in fields(self):
            value = getattr(self, f.name)
            if not isinstance(value, (int, float)) or value <= 0:
                raise OptionError(self.option_names()[f.name], f"must be a positive number, got {value!r}")
        return self


# Borderline timing (docs/timing.md).  CPU time of the same call varies from run
# to run (frequency scaling, a busy sibling hyperthread, cache pressure): measured
# here with pytest_specbench/perf/spread.py, max/min over 20 fresh children was
# SPREAD_PLACEHOLDER.  A call that ends over its limit but within BORDERLINE_MARGIN
# times it is measured again, in a fresh child, up to REMEASURE_RUNS more times,
# and the least CPU time seen decides; a call stopped at the margin is over at once.
BORDERLINE_MARGIN = 2.0
REMEASURE_RUNS = 4
# A call stopped by its wall-time bound before the CPU timer stopped it (a loaded
# machine, or a sample that sleeps) is run once more, with this many times the
# wall allowance (re-measurements time CPU; the wall bound only stops sleepers).
# 10: on this 2-core machine shared by ~8 sessions (load average 12-20) a call
# gets a tenth of a core, so a wall bound of 3x its CPU limit stops busy calls too.
REMEASURE_WALL_FACTOR = 10.0
# The reference's cost on an input where it sets the limit: the least of this many runs.
REFERENCE_RUNS = 3

_calibration: float | None = None


def machine_speed() -> float:
    """CPU seconds this machine takes for a fixed pure-Python workload (min of 5).

    The reference's cost on an input is stored as a multiple of this figure, so a
    limit derived from it means the same amount of work on a fast or slow machine
    (EvalPlus instead stores raw seconds from whichever machine built its cache).
    """
    global _calibration
    if _calibration is None:
        import time

        best = float("inf")
        for _ in range(5):
            t0 = time.process_time()
            total = 0
            for i in range(200_000):
                total += i * i % 7
            best = min(best, time.process_time() - t0)
        _calibration = max(best, 1e-4)
    return _calibration
