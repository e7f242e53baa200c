"""Where the real upstream data is, for the tests marked ``realdata``.

Each location is an environment variable, else the folder beside the checkout,
else one level further up (a git worktree under ``wt/``).  Tests that need a
dataset skip when it is not found: never commit the data.
"""
from __future__ import annotations

import os
from pathlib import Path

_CHECKOUT = Path(__file__).resolve().parents[1]


def _beside_checkout(variable: str, relative: str) -> Path:
    override = os.environ.get(variable)
    if override:
        return Path(override).expanduser().resolve()
    for base in (_CHECKOUT.parent, _CHECKOUT.parent.parent):
        if (base / relative).is_dir():
            return base / relative
    return _CHECKOUT.parent / relative


SHARED_DATA = _beside_checkout("SPECBENCH_SHARED_DATA", "shared/datasets")
# Repositories that PostcondBench tasks run in (e.g. keon/algorithms), as the
# library's `fetch` leaves them (`OWNER+NAME/`).
REPO_MIRRORS = _beside_checkout("SPECBENCH_POSTCOND_REPOS", ".mirror")

# The README's test command runs a bounded slice of the long real-data runs (the
# suite must take at most 5 minutes on two cores); SPECBENCH_TESTS_FULL=1 runs
# them whole, as the figures in docs/speceval.md and docs/postcond.md were made.
FULL = os.environ.get("SPECBENCH_TESTS_FULL") == "1"

