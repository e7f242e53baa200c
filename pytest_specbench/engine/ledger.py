"""The verdict ledger: the one writer and reader of verdicts, owned by the controller.

A verdict used to be kept in seven places under three key spaces (issue #45):
a result cache on each worker's disk, a program-verdict table and a memo in
each worker, the item's properties, the controller's report store, the
controller's table of pushed copies, and the journal.  Now the controller (the
only process without xdist, or xdist's controller) holds the one
:class:`Ledger`, and workers hold none of it (``docs/architecture.md``, "Where a
verdict lives"):

* :meth:`Ledger.known` answers "do we already have this verdict?" during
  planning, from, in order, the resumed run's journal (by node id), the program
  alias of this run (within-run dedupe, :mod:`.dedupe`: an item whose program
  key an earlier item of this run has), and the content-addressed store of
  earlier runs (by result key).  The three ways a verdict used to be reached
  without running the check (``resumed``, ``copy``, ``cached``) are one lookup
  here; the answer travels to a worker with the item, over the push xdist's
  dispatch already makes (``plugin/remote.py``), so a remote host with no disk
  of ours still takes every known verdict.
* :meth:`Ledger.record` takes each finished item's outcome (from its report):
  it appends the journal line, writes the store entry and the alias, and feeds
  the report's :class:`~..reports.report.ResultStore`.

One frozen :class:`RunKey`, computed once, has both key parts: ``verdict``
(everything besides the sample that decides a verdict: the store's key) and
``run`` (what a run is: model, samples, checks, ...; a journal is resumed or
merged only under an equal run part).
"""
from __future__ import annotations

import functools
import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping

from ..errors import InfrastructureError
from ..models.base import SampleMissing
from .dedupe import Dedupe
from .plan import ItemSpec

VERDICT_FIELDS = ("passed", "details", "message")
# How a known verdict was reached: from the resumed journal, another item of this
# run with the same program, or an earlier run's store entry.
RESUMED, COPY, CACHED = "resumed", "copy", "cached"


@dataclass(frozen=True)
class RunKey:
    """The run's key, in two parts, each computed once per run (the controller's).

    ``run``: JSON text of what decides whether a journal is this run's (the
    journal header without the shard and invocation, ``reports/journal.py``).
    ``verdict``: JSON text of everything besides the sample that decides a
    verdict (versions of specbench and the executors, the Python and the sample
    environment, data digests, limits, details, sandbox mode, every adapter's
    version, option values and roles); the store's entries are keyed by it.  It
    is computed when a first verdict is keyed (``verdict_of``): reading the
    executors' versions imports them, which a run that evaluates nothing skips.
    """

    run: str
    verdict_of: Callable[[], Any] = field(repr=False, compare=False)

    @classmethod
    def of(cls, verdict: Any, run: Mapping[str, Any]) -> "RunKey":
        """``verdict``: the verdict part, or a callable giving it."""
        return cls(json.dumps(run, sort_keys=True), verdict if callable(verdict) else (lambda: verdict))

    @functools.cached_property
    def verdict(self) -> str:
        return json.dumps(self.verdict_of(), sort_keys=True)

    def run_part(self) -> dict[str, Any]:
        return json.loads(self.run)

    def result_key(self, benchmark: str, check: str, task_id: str, completion: Any) -> str:
        """The store key of one item's verdict: the verdict part and the item's sample text."""
        h = hashlib.sha256(self.verdict.encode())
        for part in (benchmark, check, task_id, str(bool(completion.meta.get("trusted_reference"))), completion.text):
            h.update(b"\0" + part.encode("utf-8", "surrogatepass"))
        return h.hexdigest()


class VerdictStore:
    """Verdicts of earlier runs, content-addressed by result key, on the controller's disk.

    A re-run of the same samples on the same data with the same limits and
    options reads its verdicts here instead of executing anything.  Entries are
    written atomically; two writers of one key write the same text.  Only the
    :class:`Ledger` opens it.
    """

    def __init__(self, folder: Path | None):
        self.folder = folder  # None: off (--specbench-result-cache=off)

    def get(self, key: str) -> dict[str, Any] | None:
        if self.folder is None:
            return None
        try:
            return json.loads((self.folder / key[:2] / key).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None

    def put(self, key: str, verdict: dict[str, Any]) -> None:
        if self.folder is None:
            return
        path = self.folder / key[:2] / key
        tmp = path.with_name(f"{key}.{os.getpid()}.tmp")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp.write_text(json.dumps(verdict), encoding="utf-8")
            os.replace(tmp, path)
        except OSError:
            self.folder = None  # a store that cannot be written only costs speed: stop trying


@dataclass(frozen=True)
class Known:
    """A verdict the ledger has before the item runs, and how it has it.

    ``verdict``: ``resumed``: the journaled outcome as it was (with its
    ``isolation``); otherwise ``passed``/``details``/``message``, or a
    repeatable harness error (``repeatable_error``, ``error_type``)."""

    how: str  # RESUMED | COPY | CACHED
    verdict: dict[str, Any]

    def wire(self) -> list:
        return [self.how, self.verdict]

    @classmethod
    def from_wire(cls, value: Any) -> "Known | None":
        return None if not value else cls(str(value[0]), dict(value[1]))


def is_verdict(value: Any) -> bool:
    return isinstance(value, dict) and (isinstance(value.get("passed"), bool) or "repeatable_error" in value)


class Ledger:
    """The controller's verdicts: the resumed journal, the program alias, the store.

    ``key`` is the run's :class:`RunKey`; ``finished`` is the resumed run's journaled outcomes by node id; ``append``
    writes one journal line (the session's, which turns a failed write into one
    line and keeps going); ``report`` is the report's ``ResultStore``;
    ``completion_of`` gives an item's sample where planning did not ask for it.
    """

    def __init__(self, key: RunKey, store: VerdictStore, finished: Mapping[str, Any], dedupe: Dedupe,
                 append: Callable[[str, dict[str, Any]], None], report: Any,
                 completion_of: Callable[[ItemSpec], Any]):
        self.key = key
        self.store, self.finished, self.dedupe = store, finished, dedupe
        self._append, self.report, self._completion_of = append, report, completion_of
        self._alias: dict[str, dict[str, Any]] = {}  # program key -> verdict, this run
        self._items: dict[str, tuple[str, str | None]] = {}  # node id -> (result key, program key)

    def keys(self, spec: ItemSpec, completion: Any) -> tuple[str, str | None]:
        """(result key, program key) of one item, computed once."""
        keys = self._items.get(spec.nodeid)
        if keys is None:
            keys = (self.key.result_key(spec.benchmark, spec.check, spec.task.task_id, completion),
                    self.dedupe.key(spec.adapter, spec.task, completion, spec.check))
            self._items[spec.nodeid] = keys
        return keys

    def program_key(self, spec: ItemSpec, completion: Any) -> str | None:
        return self.keys(spec, completion)[1]

    def computed_program_key(self, nodeid: str) -> tuple[bool, str | None]:
        """(True, program key) if this item's keys were computed already, else (False, None)."""
        keys = self._items.get(nodeid)
        return (True, keys[1]) if keys is not None else (False, None)

    # ----------------------------------------------------------------- reading
    def known(self, spec: ItemSpec, completion: Any = None) -> Known | None:
        """The verdict of ``spec`` if the ledger has it: the resumed journal (by node
        id; ``completion`` is not needed), the program alias, the store (these need
        the item's ``completion``; None: the journal only)."""
        finished = self.finished.get(spec.nodeid)
        if finished is not None:
            return Known(RESUMED, finished)
        if completion is None:
            return None
        result, program = self.keys(spec, completion)
        if program is not None and program in self._alias:
            return Known(COPY, self._alias[program])
        stored = self.store.get(result)
        if is_verdict(stored):
            return Known(CACHED, stored)
        return None

    def all_known(self, runnable: Iterable[tuple[ItemSpec, Any]]) -> int:
        """How many of ``runnable`` (spec, completion) the ledger knows: 0 unless it knows every one."""
        count = 0
        for spec, completion in runnable:
            if self.known(spec, completion) is None:
                return 0
            count += 1
        return count

    # ----------------------------------------------------------------- writing
    def record(self, spec: ItemSpec, outcome: dict[str, Any], how: str | None = None) -> None:
        """A finished item's outcome (a verdict): journal line, store entry, alias, report.

        ``how`` is how the item had it (:class:`Known`'s): a resumed item is in the
        journal and a cached one in the store already."""
        self.report.add(outcome)
        if how == RESUMED or spec.nodeid in self.finished:
            return
        self._append(spec.nodeid, outcome)
        self._remember(spec, {k: outcome.get(k) for k in VERDICT_FIELDS}, stored=how == CACHED)

    def record_repeatable(self, spec: ItemSpec, verdict: dict[str, Any]) -> None:
        """A repeatable harness error (a ``RepeatableError``): the next run and this run's
        copies get it again without running anything.  Its journal line is the
        item's error line, which the session writes."""
        self._remember(spec, {k: verdict[k] for k in ("repeatable_error", "error_type") if k in verdict})

    def _remember(self, spec: ItemSpec, verdict: dict[str, Any], stored: bool = False) -> None:
        keys = self._items.get(spec.nodeid)
        if keys is None:
            try:
                keys = self.keys(spec, self._completion_of(spec))
            except (SampleMissing, InfrastructureError):  # its answer is gone: nothing to key it by
                return
        result, program = keys
        if not stored:
            self.store.put(result, verdict)
        if program is not None and program not in self._alias:
            self._alias[program] = verdict
