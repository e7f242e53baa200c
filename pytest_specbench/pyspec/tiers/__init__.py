"""Tiers of evidence about a Python specification (issue #47): ``corpus`` (what
the benchmark gives), ``pbt`` (Hypothesis search), ``crosshair`` (symbolic
search), ``z3`` (a bounded proof).  Each tier is a check of its own; every tier
reports one :class:`.verdict.TierVerdict` per relation (AC, RW, AV, RI), and
:func:`.verdict.combine` joins them VERINA's way (docs/tiers.md)."""
