"""Hook for an LLM fallback translator (``--translator=MODEL``).

ContractEval (§3.2, Appendix G–H) has an LLM translate asserts into SMT-LIB.
This package translates deterministically (:mod:`.translate`); asserts outside
the supported subset are reported by name instead.  A future fallback would
send exactly those asserts to a model and parse its SMT-LIB answer into the
same :class:`~.translate.AssertModel` (``value``/``ok`` z3 terms over the
task's parameter ADT values); :func:`require_translator` is where it plugs in.
"""
from __future__ import annotations

from ..errors import OptionError


def require_translator(model: str):
    """Return the fallback translator for ``model`` -- not implemented yet."""
    raise OptionError("--translator", f"LLM fallback translation ({model}) is not available yet; "
                                      "unsupported asserts are reported in the summary instead")
