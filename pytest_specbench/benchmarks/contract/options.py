"""ContractEval's declared options (``--contract-*``), importable without the adapters.

``pytest --help`` and every pytest start list each family's options; they come
from this module alone, so a run that selects another family (or none) never
imports the ContractEval machinery.  The adapters use the same declarations.
"""
from __future__ import annotations

from ..base import Option
from ..tier_options import TIER_OPTIONS

CONDITIONS = ("standard", "cs", "eas")
REJECTION_RULES = ("assert", "assert-or-raise")

CONTRACT_OPTIONS = (
    Option("contract_condition", "ContractEval prompt (paper §4.2): standard (original prompt), cs (contract "
                                 "specification), eas (cs + example violations). Default: standard.",
           default="standard", choices=CONDITIONS),
    Option("contract_rejection", "what rejects a contract-violating input: assert (AssertionError, upstream's "
                                 "rule, default) or assert-or-raise (also a raised ValueError/TypeError)",
           default="assert", choices=REJECTION_RULES),
)

# Every option of the family's adapters (contract; contract-cvt and evalplus declare none); the
# tiers of evidence about a model-written precondition (issue #47) under the cs and eas prompts.
OPTIONS = CONTRACT_OPTIONS + TIER_OPTIONS
