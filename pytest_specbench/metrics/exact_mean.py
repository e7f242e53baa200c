"""``statistics.mean`` without its exact arithmetic where it is not needed.

The reports' bootstrap (reports/stats.py) calls a family's ``aggregate`` once per
resample (1,000) when its metrics are not plain task means (SpecEval's per-index
means, CIFE's means of per-task means), and ``statistics.mean`` turns every value
into a fraction (the bootstrap of the real dynamic SpecEval test's 48 results: 1.03 ->
0.75 CPU s with this; docs/timing.md, session 21).  :func:`mean` returns what
``statistics.mean`` returns, the same value and type, bit for bit.
"""
from __future__ import annotations

import math
import statistics
from typing import Any, Iterable

_EXACT_INT = 2 ** 53  # ints below it are floats exactly


def mean(values: Iterable[Any]) -> Any:
    """``statistics.mean(values)``.  Ints are summed exactly (an int mean, or the
    correctly rounded float).  Floats, with bools and ints beside them (which
    ``statistics.mean`` averages as a float too), whose sum ``math.fsum`` gives
    exactly (checked: the exact sum minus it is 0) have the correctly rounded mean
    ``sum / n``: one rounding of the exact quotient, what ``statistics.mean``
    returns.  Anything else (only bools, bools and ints, other types, a sum fsum
    rounds or overflows, inf and nan) is ``statistics.mean``'s own."""
    xs = values if isinstance(values, list) else list(values)
    n = len(xs)
    types = set(map(type, xs))
    if types == {int}:
        total = sum(xs)
        return total // n if total % n == 0 else total / n
    if float in types and types <= {float, int, bool} and (
            types == {float} or all(type(x) is float or -_EXACT_INT < x < _EXACT_INT for x in xs)):
        floats = xs if types == {float} else [float(x) for x in xs]
        try:
            total = math.fsum(floats)
            exact = math.isfinite(total) and math.fsum([*floats, -total]) == 0.0
        except (OverflowError, ValueError):  # fsum's intermediate overflow, inf - inf
            exact = False
        if exact:
            return total / n  # (fsum of -0.0s is 0.0, as the fraction 0 is)
    return statistics.mean(xs)
