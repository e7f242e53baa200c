"""SpecEval's declared options (``--speceval-*``) and the names they choose
from (task kinds, perturbation categories), importable without the adapter.

Every pytest start lists each family's options; they come from this module
alone, so a run that selects another family never imports SpecEval's JML
parser, perturbations or task builder.
"""
from __future__ import annotations

from typing import Any

from ..base import Option

TASKS = ("judgement", "selection", "infilling", "generation")  # §3.2
PERTURBATIONS = ("def-use-break", "if-else-flip", "independent-swap", "name-random", "name-shuffle")  # §3.3.1
ALL_CATEGORIES = ("original",) + PERTURBATIONS


def _names(value: str, allowed: tuple[str, ...], extra: dict[str, tuple[str, ...]]) -> tuple[str, ...]:
    out: list[str] = []
    for part in (p.strip() for p in str(value).split(",")):
        if not part:
            continue
        if part in extra:
            out += extra[part]
        elif part in allowed:
            out.append(part)
        else:
            raise ValueError(f"unknown value {part!r}; choose from {', '.join(allowed + tuple(extra))}")
    return tuple(dict.fromkeys(out))


def parse_tasks(value: Any) -> tuple[str, ...]:
    if isinstance(value, (list, tuple)):
        value = ",".join(value)
    return _names(value, TASKS, {"all": TASKS})


def parse_perturbations(value: Any) -> tuple[str, ...]:
    """``original`` is always included: the perturbation metrics compare with it."""
    if isinstance(value, (list, tuple)):
        value = ",".join(value)
    chosen = _names(value, ALL_CATEGORIES, {"all": ALL_CATEGORIES, "none": ("original",)})
    return tuple(dict.fromkeys(("original",) + chosen))


def _seed(value: Any) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        raise ValueError(f"expected a whole number, got {value!r}") from None


OPTIONS = (
    Option("speceval_task", "SpecEval tasks: judgement,selection,infilling,generation or all (§3.2)",
           default="all", parse=parse_tasks),
    Option("speceval_perturbation", "perturbation categories besides original: def-use-break, if-else-flip, "
           "independent-swap, name-random, name-shuffle, all or none (§3.3.1)", default="none",
           parse=parse_perturbations),
    Option("speceval_seed", "seed of task construction and perturbations (§3.2)", default="0", parse=_seed),
    Option("speceval_validation", "how a specification's correctness is decided: dynamic (the JML checker on "
           "the tests, §4.1), syntactic (equal to a ground-truth clause), auto (dynamic when available)",
           default="auto", choices=("auto", "dynamic", "syntactic")),
    Option("speceval_oracle_refuted", "with dynamic validation, a program whose ground truth fails its own tests "
           "(a benchmark-construction defect): skip its tasks, each skip naming the refuted clause, or keep them "
           "in the scores", default="skip", choices=("skip", "keep")),
)
