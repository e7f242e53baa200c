"""Tiers of evidence on a Python specification (issue #47): each tier is its own
check per sample and gives one :class:`.verdict.TierVerdict` per relation."""
