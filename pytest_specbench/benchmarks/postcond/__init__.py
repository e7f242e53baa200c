"""PostcondBench (Python side): adapter ``postcond`` and its machinery
(prompts, injection, the in-sandbox runner, verdicts, metrics, mutants, task building)."""
ADAPTERS = {"postcond": "pytest_specbench.benchmarks.postcond.adapter:ADAPTER"}
# The declared options of these adapters, importable without them (every pytest start lists them).
OPTIONS = "pytest_specbench.benchmarks.postcond.options:OPTIONS"
