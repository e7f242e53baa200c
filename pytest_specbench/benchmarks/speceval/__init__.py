"""SpecEval (JML judgement, selection, infilling and generation, with
perturbations and progressive consistency): see :mod:`.adapter`."""

ADAPTERS = {"speceval": "pytest_specbench.benchmarks.speceval.adapter:ADAPTER"}
