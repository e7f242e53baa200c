"""``--spec-tiers``: which tiers of evidence run, each its own check per sample
(issue #47); family-neutral, declared by each family that offers tiers."""
from __future__ import annotations

from ...benchmarks.base import Option

TIERS = ("corpus", "pbt", "crosshair", "z3")

SPEC_TIERS = Option("spec_tiers", "tiers of evidence on a Python spec, each its own check: corpus (the benchmark's "
                                  "own cases), pbt (Hypothesis), crosshair (symbolic search), z3 (bounded proof "
                                  "against a reference spec)",
                    default=("corpus", "pbt"), choices=TIERS, multiple=True)
