"""CIFE (constraint-following in code generation): adherence judged by a model,
and checked by deterministic rules where a rule can decide.

Paper: "CIFE" (``/work/shared/papers/cife.md``); upstream harness IBM/CIFE.
See ``docs/cife.md``.
"""
ADAPTERS = {"cife": "pytest_specbench.benchmarks.cife.adapter:ADAPTER"}
# The declared options of these adapters, importable without them (every pytest start lists them).
OPTIONS = "pytest_specbench.benchmarks.cife.options:OPTIONS"
# The data folders each adapter reads from a data root (`specbench data download` fetches them;
# --specbench-data unset takes $SPECBENCH_DATA when it holds them all).
DATA = {"cife": ("cife",)}
