"""Where the real upstream data is, for the tests marked ``realdata``.

``SPECBENCH_SHARED_DATA`` wins; otherwise ``../shared/datasets`` beside the
checkout, or one level further up (a git worktree under ``wt/``).  Tests that
need a dataset skip when it is not found: never commit the data.
"""
from __future__ import annotations

import os
from pathlib import Path

_CHECKOUT = Path(__file__).resolve().parents[1]


def _find() -> Path:
    override = os.environ.get("SPECBENCH_SHARED_DATA")
    if override:
        return Path(override).expanduser().resolve()
    for base in (_CHECKOUT.parent, _CHECKOUT.parent.parent):
        candidate = base / "shared" / "datasets"
        if candidate.is_dir():
            return candidate
    return _CHECKOUT.parent / "shared" / "datasets"


SHARED_DATA = _find()


def _find_mirrors() -> Path:
    # Repositories that PostcondBench tasks run in (e.g. keon/algorithms), as
    # the library's `fetch` leaves them (`OWNER+NAME/`) beside the checkout.
    override = os.environ.get("SPECBENCH_POSTCOND_REPOS")
    if override:
        return Path(override).expanduser().resolve()
    for base in (_CHECKOUT.parent, _CHECKOUT.parent.parent):
        if (base / ".mirror").is_dir():
            return base / ".mirror"
    return _CHECKOUT.parent / ".mirror"


REPO_MIRRORS = _find_mirrors()
