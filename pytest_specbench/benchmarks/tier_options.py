"""The tier options every family with a Python specification shares (issue #47,
docs/tiers.md): which tiers of evidence run, and how many cases the ``pbt``
tier tries.  A family lists ``TIER_OPTIONS`` among its own declared options;
pytest registers an option declared by several families once.  Imports nothing
but :mod:`.base` (every pytest start reads it)."""
from __future__ import annotations

from .base import Option

TIERS = ("corpus", "pbt", "crosshair", "z3")
DEFAULT_TIERS = ("corpus", "pbt")  # the cheap ones
DEFAULT_PBT_EXAMPLES = 100


def positive_count(text: str) -> int:
    """``Option.parse`` for a count of at least 1."""
    try:
        value = int(str(text))
    except ValueError:
        raise ValueError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise ValueError(f"expected a number of at least 1, got {text!r}")
    return value


TIER_OPTIONS = (
    Option("spec_tiers", "tiers of evidence about a specification, each its own check: corpus (the benchmark's "
                         "own cases), pbt (Hypothesis), crosshair, z3", default=DEFAULT_TIERS, choices=TIERS,
           multiple=True),
    Option("spec_pbt_examples", "cases the pbt tier tries per relation (Hypothesis max_examples)",
           default=DEFAULT_PBT_EXAMPLES, parse=positive_count),
)
