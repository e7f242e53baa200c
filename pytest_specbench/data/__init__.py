"""Readers for upstream data formats."""
