"""nl2postcond (Endres, Fakhoury, Chakraborty, Lahiri, "Can Large Language Models
Transform Natural Language Intent into Formal Method Postconditions?", FSE 2024;
arXiv 2310.01831v2), the EvalPlus half: a model writes a postcondition (``assert``
statements over a HumanEval+ function's inputs and ``return_value``); it is
*test-set correct* when it holds on the reference's outputs for the task's test
inputs, and its completeness is how many recorded outputs of real buggy programs
it rejects.  Adapter ``nl2postcond``; ``specbench nl2postcond build-corpus``
rebuilds the buggy-program corpus.  Every postcondition runs on the Python-spec
service (:mod:`pytest_specbench.pyspec`)."""
ADAPTERS = {"nl2postcond": "pytest_specbench.benchmarks.nl2postcond.adapter:ADAPTER"}
# The declared options, importable without the adapter (every pytest start lists them).
OPTIONS = "pytest_specbench.benchmarks.nl2postcond.options:OPTIONS"
# The data folders it needs from a data root: HumanEval+ (evalplus/).  nl2postcond/ (the paper's
# prompts, upstream's sheet for the agreement tool, the candidate programs) is optional data:
# `specbench data download nl2postcond` brings both; the buggy-program corpus is built locally
# from the programs (`specbench nl2postcond build-corpus`), never downloaded (data.sources).
DATA = {"nl2postcond": ("evalplus",)}
