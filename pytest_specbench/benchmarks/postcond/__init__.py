"""PostcondBench (Python side): adapter ``postcond`` and its machinery
(prompts, injection, the in-sandbox runner, verdicts, metrics, mutants, task building)."""
ADAPTERS = {"postcond": "pytest_specbench.benchmarks.postcond.adapter:ADAPTER"}
# The declared options of these adapters, importable without them (every pytest start lists them).
OPTIONS = "pytest_specbench.benchmarks.postcond.options:OPTIONS"
# The data folders each adapter reads from a data root (`specbench data download` fetches them;
# --specbench-data unset takes $SPECBENCH_DATA when it holds them all).
DATA = {"postcond": ("postcondbench",)}
