"""CIFE (constraint-following in code generation): adherence judged by a model,
and checked by deterministic rules where a rule can decide.

Paper: "CIFE" (``/work/shared/papers/cife.md``); upstream harness IBM/CIFE.
See ``docs/cife.md``.
"""
ADAPTERS = {"cife": "pytest_specbench.benchmarks.cife.adapter:ADAPTER"}
