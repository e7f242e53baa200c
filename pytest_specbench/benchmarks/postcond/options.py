"""PostcondBench's declared options (``--postcond-*``), importable without the adapter.

Every pytest start lists each family's options; they come from this module
alone, so a run that selects another family never imports PostcondBench's
machinery (nor the JML service its Java side uses).
"""
from __future__ import annotations

from pathlib import Path

from ..base import Option, existing_folder, positive_seconds
from ..tier_options import TIER_OPTIONS

SETTINGS = ("f2p", "c2p", "n2p")  # input settings (Appendix D.2)
DEFAULT_TIMEOUT = 30.0  # upstream: 30 s per test-suite run

def existing_file(text: str) -> str:
    """``Option.parse`` for a file that must exist (kept as given; its content
    enters the result key as one of the task set's files)."""
    if not Path(str(text)).expanduser().is_file():
        raise ValueError(f"file not found: {text}")
    return str(text)


OPTIONS = (
    Option("postcond_setting", "input setting (Appendix D.2)", default="f2p", choices=SETTINGS),
    Option("postcond_repos", "folder of repository checkouts (one per repository)", default=None,
           parse=existing_folder),
    Option("postcond_injection", "where import/decorators go: fixed, or faithful to upstream",
           default="fixed", choices=("fixed", "faithful")),
    Option("postcond_complete", "paper: kill every mutant; upstream: every mutant the reference kills",
           default="paper", choices=("paper", "upstream")),
    Option("postcond_timeout", "seconds per test run (upstream: 30)", default=DEFAULT_TIMEOUT,
           parse=positive_seconds),
    Option("postcond_pbt_hints", "JSON file: task id -> a stub def with type hints and validity asserts, for the "
                                 "pbt tier on a repository without hints", default=None, parse=existing_file),
) + TIER_OPTIONS  # --spec-tiers (postcond: corpus = correct, complete; pbt), shared with nl2postcond
