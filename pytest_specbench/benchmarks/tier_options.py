"""The tier options every family with a Python specification shares (issue #47,
docs/tiers.md): which tiers of evidence run, how many cases the ``pbt``
tier tries, the CPU budget of a ``crosshair``/``z3`` check and z3's largest bound.  A family lists ``TIER_OPTIONS`` among its own declared options;
pytest registers an option declared by several families once.  Imports nothing
but :mod:`.base` (every pytest start reads it)."""
from __future__ import annotations

from .base import Option, positive_int, positive_seconds

TIERS = ("corpus", "pbt", "crosshair", "z3")
DEFAULT_TIERS = ("corpus", "pbt")  # nl2postcond's default: the cheap ones
# The option's own default is None, "the family's default": PostcondBench runs only
# its corpus (its pbt check costs a sandboxed search job per sample, 2-5 CPU s).
DEFAULT_PBT_EXAMPLES = 100
DEFAULT_TIER_SECONDS = 20.0
DEFAULT_Z3_BOUND = 3


TIER_OPTIONS = (
    Option("spec_tiers", "tiers of evidence about a specification, each its own check: corpus (the benchmark's "
                         "own cases), pbt (Hypothesis), crosshair, z3 (default: the family's own: nl2postcond "
                         "corpus,pbt; postcond corpus; contract corpus, under --contract-condition=cs|eas only)", default=None, choices=TIERS,
           multiple=True),
    Option("spec_pbt_examples", "cases the pbt tier tries per relation (Hypothesis max_examples)",
           default=DEFAULT_PBT_EXAMPLES, parse=positive_int),
    Option("spec_tier_seconds", "CPU seconds per check of a search tier (crosshair: its search; z3: the solver)",
           default=DEFAULT_TIER_SECONDS, parse=positive_seconds),
    Option("spec_z3_bound", "the z3 tier's largest bound k: containers and strings of length up to k",
           default=DEFAULT_Z3_BOUND, parse=positive_int),
)
