"""PostcondBench's declared options (``--postcond-*``), importable without the adapter.

Every pytest start lists each family's options; they come from this module
alone, so a run that selects another family never imports PostcondBench's
machinery (nor the JML service its Java side uses).
"""
from __future__ import annotations

from ..base import Option, existing_folder, positive_seconds

SETTINGS = ("f2p", "c2p", "n2p")  # input settings (Appendix D.2)
DEFAULT_TIMEOUT = 30.0  # upstream: 30 s per test-suite run

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
)
