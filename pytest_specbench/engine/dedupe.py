"""Within-run deduplication: each distinct program is evaluated once per task and check.

Sampled runs repeat themselves (pass@k with n = 200: half of the ChatGPT
HumanEval samples of the shared data are copies of another sample of the same
task).  A verdict is a function of the program that runs, the task's data, the
check, the limits and the options: the result cache already keys on all of
that for re-runs.  Within a run, everything but the program is fixed, so two
samples whose *program key* is equal get the same verdict, and only the first
(the representative) is evaluated.  Every sample stays one pytest item and one
journal line with its own outcome, so pass@k, ``-k``, ``--lf``, resume and the
reports do not change (``docs/dedupe.md``).

* Adapters opt in with ``program_key(task, sample, check) -> str | None``
  (None: this item is evaluated on its own).  Without the method nothing is
  deduplicated: CIFE asks its judge once per sample index, so it declares
  ``program_key`` returning None.
* ``-n 0``: items run in collection order; a copy finds its representative's
  verdict in the ledger's program alias (``engine/ledger.py``).
* xdist: the controller groups the collection by key
  (``SpecbenchRun.dedupe_groups``); the scheduler (``plugin/scheduling.py``) dispatches the
  representative and holds its copies until it has finished, so a program never
  runs on two workers at once.  The controller's ledger has the representative's
  verdict from its report and sends it with each copy it dispatches, over that
  worker's gateway (``plugin/remote.py``; workers may be on other hosts).
* ``--specbench-dedupe=off`` (ini ``specbench_dedupe``) evaluates every copy.
"""
from __future__ import annotations

import hashlib
from typing import Callable

from ..errors import OptionError

MODES = ("on", "off")


def mode(settings) -> str:
    value = str(settings.option("specbench_dedupe") or "on").strip()
    if value not in MODES:
        raise OptionError("--specbench-dedupe", f"expected on or off, got {value!r}")
    return value


class Dedupe:
    """The run's deduplication: the program key of each item.

    ``fingerprint`` is the verdict part of the run key (data, limits, options,
    versions; ``ledger.RunKey``), hashed into every key.  The verdicts of
    programs are the ledger's (its program alias, ``engine/ledger.py``); a worker
    keys its in-job memo with an empty fingerprint (one process, one run).
    """

    def __init__(self, enabled: bool, fingerprint: Callable[[], str]):
        self.enabled = enabled
        self._fingerprint = fingerprint
        self._keys: dict[tuple, str | None] = {}  # (benchmark, task, check, trusted, text) -> key
        self.counts = {"evaluated": 0, "copies": 0}  # this process's items with a program key

    def key(self, adapter, task, completion, check: str) -> str | None:
        """The program key of one item, or None when it is not deduplicated."""
        if not self.enabled:
            return None
        program_key = getattr(adapter, "program_key", None)
        if program_key is None:
            return None
        trusted = bool(completion.meta.get("trusted_reference"))
        memo = (adapter.name, task.task_id, check, trusted, completion.text)
        if memo not in self._keys:
            form = program_key(task, completion, check)
            if form is None:
                self._keys[memo] = None
            else:
                h = hashlib.sha256(self._fingerprint().encode())
                for part in (adapter.name, check, task.task_id, str(trusted), form):
                    h.update(b"\0" + part.encode("utf-8", "surrogatepass"))
                self._keys[memo] = h.hexdigest()
            if len(self._keys) > 65536:  # only a cache: the controller's grouping fills it once
                self._keys.clear()
        return self._keys[memo]

