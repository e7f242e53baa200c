"""VERINA (Ye et al.): Lean 4 code, specification and proof generation.

The family's machinery: :mod:`.loader` (upstream task folders), :mod:`.values`
(test values as Lean), :mod:`.prompts` (Appendix C.3, 2-shot), :mod:`.answers`
(the answer's fields), :mod:`.screen` (what an answer may not bring, read three
ways), :mod:`.audit` (what Lean says the answer added, after elaboration),
:mod:`.assembly` (Lean files per check, Appendix C.5),
:mod:`.verdicts` (Lean/Plausible diagnostics -> outcomes), :mod:`.metrics`
(pass@k, lower/upper bounds, §4.1) and :mod:`.adapter`.
"""

ADAPTERS = {"verina": "pytest_specbench.benchmarks.verina.adapter:ADAPTER"}
# The declared options of these adapters, importable without them (every pytest start lists them).
OPTIONS = "pytest_specbench.benchmarks.verina.options:OPTIONS"
# The data folders each adapter reads from a data root (`specbench data download` fetches them;
# --specbench-data unset takes $SPECBENCH_DATA when it holds them all).
DATA = {"verina": ("verina",)}
