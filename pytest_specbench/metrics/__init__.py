"""Metric definitions, each citing the paper section it follows."""
