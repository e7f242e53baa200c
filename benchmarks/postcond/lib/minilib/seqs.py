"""Sequence helpers."""
from typing import List


def running_max(xs: List[int]) -> List[int]:
    """Prefix maxima: result[i] == max(xs[:i + 1])."""
    out = []
    best = None
    for x in xs:
        if best is None or x > best:
            best = x
        out.append(best)
    return out


def dedupe(xs):
    """The elements of xs without repeats, first occurrences kept, order kept."""
    seen = set()
    out = []
    for x in xs:
        if x in seen:
            continue
        seen.add(x)
        out.append(x)
    return out
