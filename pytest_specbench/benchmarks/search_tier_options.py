"""The search tiers' options (``crosshair``, ``z3``; issue #47), beside the
shared :mod:`.tier_options`: the CPU budget of a check and z3's largest bound.
Imports nothing but :mod:`.base` and :mod:`.tier_options` (every pytest start
reads it)."""
from __future__ import annotations

from .base import Option, positive_int, positive_seconds

DEFAULT_TIER_SECONDS = 20.0
DEFAULT_Z3_BOUND = 3

SEARCH_TIER_OPTIONS = (
    Option("spec_tier_seconds", "CPU seconds per check of a search tier (crosshair: its search; z3: the solver)",
           default=DEFAULT_TIER_SECONDS, parse=positive_seconds),
    Option("spec_z3_bound", "the z3 tier's largest bound k: containers and strings of length up to k",
           default=DEFAULT_Z3_BOUND, parse=positive_int),
)
