"""CIFE's declared options (``--cife-*``), importable without the adapter.

Every pytest start lists each family's options; they come from this module
alone, so a run that selects another family never imports CIFE's rules, judge
or prompts.
"""
from __future__ import annotations

from ..base import Option

PROMPT_STYLES = ("paper", "upstream")


def _retries(raw: str) -> int:
    value = int(raw)
    if not 0 <= value <= 10:
        raise ValueError("must be between 0 and 10")
    return value


OPTIONS = (
    Option("cife_prompts", "CIFE judge and generation prompts: paper (Appendix E, numbered constraints) or "
           "upstream (IBM/CIFE's released prompts)", default="paper", choices=PROMPT_STYLES),
    Option("cife_parse", "how judge answers are read: strict (indexed verdicts, validated, retried) or upstream "
           "(IBM/CIFE's positional regex, for comparison)", default="strict", choices=("strict", "upstream")),
    Option("cife_judge_retries", "times the judge is asked again, with the error shown, after an unreadable "
           "answer (then the item is an error, E)", default=2, parse=_retries),
    Option("cife_injection", "answers whose code speaks to the judge (its verdict keys or labels, 'ignore the "
           "previous instructions', a note to the verifier): refuse (F, the judge is not asked) or judge "
           "(as upstream and the paper: the judge reads whatever the answer says)",
           default="refuse", choices=("refuse", "judge")),
    Option("cife_rules", "deterministic rule checks beside the judge: on or off", default="on", choices=("on", "off")),
    Option("cife_n", "the samples CSR, SSR, C2A and the labels are means over (one denominator per report): all "
           "(the paper's N, every task; a verdict lost to a harness error counts as not satisfied) or scored "
           "(only samples with every verdict and the label)", default="all", choices=("all", "scored")),
)
