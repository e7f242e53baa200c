"""Deterministic synthesis of contract-violating tests (ContractEval §3.2, no LLM).

Pipeline: :mod:`.translate` (asserts -> z3 over the :mod:`.adt` value ADT),
:mod:`.solve` (violation subsets, K models each), :mod:`.variants` and
:mod:`.feasibility` (the reference-program filter, in a child process),
:mod:`.pipeline` (parallel, resumable run over a task file).  Entry point:
``specbench contract synthesize`` (:mod:`pytest_specbench.cli`).
"""
