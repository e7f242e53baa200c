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
  verdict in :class:`ProgramVerdicts` (memory).
* xdist: the controller groups the collection by key
  (:meth:`Dedupe.groups`); the scheduler (:mod:`.scheduling`) dispatches the
  representative and holds its copies until it has finished, so a program never
  runs on two workers at once.  Verdicts cross processes through one append-only
  file per process in the run's folder (``runs/RUN_ID/programs/``).
* ``--specbench-dedupe=off`` (ini ``specbench_dedupe``) evaluates every copy.
"""
from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any, Callable

from ..errors import OptionError

MODES = ("on", "off")
FOLDER = "programs"  # in the run's folder, beside journal.jsonl


def mode(settings) -> str:
    value = str(settings.option("specbench_dedupe") or "on").strip()
    if value not in MODES:
        raise OptionError("--specbench-dedupe", f"expected on or off, got {value!r}")
    return value


class ProgramVerdicts:
    """Verdicts of the programs evaluated in this run, by program key.

    Always in memory; with ``folder`` (under xdist), also appended as JSON
    lines to ``folder/<pid>.jsonl`` (flushed per line, before the item's report
    leaves the worker), and a key not known here is looked up in the other
    processes' files, read from where the last look stopped.
    """

    def __init__(self, folder: Path | None):
        self.folder = folder
        self._known: dict[str, dict[str, Any]] = {}
        self._read_to: dict[str, int] = {}  # file name -> bytes consumed
        self._out = None

    def get(self, key: str) -> dict[str, Any] | None:
        verdict = self._known.get(key)
        if verdict is None and self.folder is not None:
            self._refresh()
            verdict = self._known.get(key)
        return verdict

    def put(self, key: str, verdict: dict[str, Any]) -> None:
        self._known[key] = verdict
        if self.folder is None:
            return
        try:
            if self._out is None:
                self.folder.mkdir(parents=True, exist_ok=True)
                name = f"{os.getpid()}.jsonl"
                self._out = open(self.folder / name, "a", encoding="utf-8")
                self._read_to[name] = os.path.getsize(self.folder / name)  # our own lines are known already
            self._out.write(json.dumps([key, verdict]) + "\n")
            self._out.flush()
        except OSError:
            # Only speed is lost: a copy that does not find the verdict evaluates itself.
            self.folder = None

    def _refresh(self) -> None:
        try:
            names = [n for n in os.listdir(self.folder) if n.endswith(".jsonl")]
        except OSError:
            return
        for name in names:
            start = self._read_to.get(name, 0)
            try:
                with open(self.folder / name, "rb") as fh:
                    fh.seek(start)
                    data = fh.read()
            except OSError:
                continue
            end = data.rfind(b"\n") + 1  # a line being written is read next time
            for line in data[:end].splitlines():
                try:
                    key, verdict = json.loads(line)
                except (ValueError, TypeError):
                    continue
                self._known.setdefault(key, verdict)
            self._read_to[name] = start + end

    def close(self) -> None:
        if self._out is not None:
            self._out.close()
            self._out = None


class Dedupe:
    """The run's deduplication: program keys of items and the verdicts found so far.

    ``fingerprint`` is what the result cache keys on besides the sample (data,
    limits, options, versions): constant within a run, it makes a store left by
    a run with other settings unreadable to this one.
    """

    def __init__(self, enabled: bool, fingerprint: Callable[[], str], folder: Path | None):
        self.enabled = enabled
        self._fingerprint = fingerprint
        self.verdicts = ProgramVerdicts(folder)
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

    def close(self) -> None:
        self.verdicts.close()
