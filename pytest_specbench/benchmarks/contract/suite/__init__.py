"""The builder and validator of the bundled ContractEval suite (``benchmarks/contract/``):
``specbench contract build-suite [--check]`` and ``specbench contract validate-suite``."""
