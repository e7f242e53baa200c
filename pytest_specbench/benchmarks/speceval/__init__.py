"""SpecEval family: JML judgement, selection, infilling and generation, with
perturbations and progressive consistency (:mod:`.adapter`); its JML runtime
assertion checker lives in :mod:`.jml`."""

ADAPTERS = {"speceval": "pytest_specbench.benchmarks.speceval.adapter:ADAPTER"}
# The declared options of these adapters, importable without them (every pytest start lists them).
OPTIONS = "pytest_specbench.benchmarks.speceval.options:OPTIONS"
# The data folders each adapter reads from a data root (`specbench data download` fetches them;
# --specbench-data unset takes $SPECBENCH_DATA when it holds them all).
DATA = {"speceval": ("specgenbench",)}
