"""ContractEval (HumanEval+/MBPP+ with contracts) and EvalPlus: adapters and their machinery.

- ``contract``: functional tests and rejection of contract-violating inputs (ContractEval §3-4);
- ``contract-cvt``: the model writes contract-violating inputs (ContractEval §6.2);
- ``evalplus``: HumanEval+/MBPP+ functional tests only;
- ``synthesis/``: z3 synthesis of contract-violating tests (ContractEval §3.2), ``specbench contract synthesize``.
"""

ADAPTERS = {
    "contract": "pytest_specbench.benchmarks.contract.contract:ADAPTER",
    "contract-cvt": "pytest_specbench.benchmarks.contract.contract_cvt:ADAPTER",
    "evalplus": "pytest_specbench.benchmarks.contract.evalplus:ADAPTER",
}
# The declared options of these adapters, importable without them (every pytest start lists them).
OPTIONS = "pytest_specbench.benchmarks.contract.options:OPTIONS"
# The data folders each adapter reads from a data root (`specbench data download` fetches them;
# --specbench-data unset takes $SPECBENCH_DATA when it holds them all).
DATA = {"contract": ("contracteval", "evalplus"), "contract-cvt": ("contracteval", "evalplus"), "evalplus": ("evalplus",)}
