"""SpecEval family: JML judgement, selection, infilling and generation, with
perturbations and progressive consistency (:mod:`.adapter`); its JML runtime
assertion checker lives in :mod:`.jml`."""

ADAPTERS = {"speceval": "pytest_specbench.benchmarks.speceval.adapter:ADAPTER"}
# The declared options of these adapters, importable without them (every pytest start lists them).
OPTIONS = "pytest_specbench.benchmarks.speceval.options:OPTIONS"
