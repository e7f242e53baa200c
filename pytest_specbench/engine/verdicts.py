"""The verdict engine: how one item gets its verdict, pytest-free.

In order: the journal of a resumed run (an item finished before is not run
again), a copy's program verdict (within-run dedupe, :mod:`.dedupe`), the
result cache (an identical earlier run), and only then the check itself
(``run_check``).  Whatever the check concludes is stored under the item's
result key, which covers everything that decides it (``fingerprint``: data
digests, limits, options, versions; the benchmark, check, task and sample
text).  :meth:`VerdictEngine.result_of` answers ``CheckContext.result_of``
through the same stores.

One engine per process; the plugin (``plugin/session.py``) builds it and the
items call it.
"""
from __future__ import annotations

import hashlib
import json
import os
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping

from ..types import CheckResult
from ..errors import RepeatableError
from .context import CheckContext
from .dedupe import Dedupe
from .plan import ItemSpec


class ResultCache:
    """Check results of earlier runs, by a key over everything that decides them.

    A second run of the same samples on the same data with the same limits and
    options reads its verdicts here instead of executing anything.  Files are
    written atomically; two processes writing the same key write the same text.
    """

    def __init__(self, folder: Path | None):
        self.folder = folder  # None: off

    def get(self, key: str) -> dict[str, Any] | None:
        if self.folder is None:
            return None
        try:
            return json.loads((self.folder / key[:2] / key).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None

    def has(self, key: str) -> bool:
        return self.folder is not None and (self.folder / key[:2] / key).exists()

    def put(self, key: str, result: dict[str, Any]) -> None:
        if self.folder is None:
            return
        path = self.folder / key[:2] / key
        tmp = path.with_name(f"{key}.{os.getpid()}.tmp")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp.write_text(json.dumps(result), encoding="utf-8")
            os.replace(tmp, path)
        except OSError:
            self.folder = None  # a cache that cannot be written only costs speed: stop trying


@dataclass
class Evaluation:
    """An item's verdict (``passed``, ``details``, ``message``) and how it was reached."""

    verdict: dict[str, Any]
    reached: str | None  # evaluated | copy | cached, for items with a program key; else None
    from_result_cache: bool  # read from the result cache (an identical earlier run)


def repeated(verdict: Mapping[str, Any]) -> RepeatableError:
    """A cached harness error again, under its own class name (so the report reads the same)."""
    name = str(verdict.get("error_type", ""))
    cls = type(name, (RepeatableError,), {}) if name.isidentifier() else RepeatableError
    return cls(verdict["repeatable_error"])


def _verdict(result: CheckResult) -> dict[str, Any]:
    return {"passed": bool(result.passed), "details": result.details, "message": result.message}


def _is_verdict(value: Any) -> bool:
    return isinstance(value, dict) and isinstance(value.get("passed"), bool)


# check, context -> result (the default: the adapter's own run_check)
RunCheck = Callable[[ItemSpec, Any, CheckContext], CheckResult]


def adapter_check(spec: ItemSpec, completion: Any, ctx: CheckContext) -> CheckResult:
    return spec.adapter.run_check(spec.check, spec.task, completion, ctx)


class VerdictEngine:
    """Result keys, the result cache, the journal lookup and dedupe of one process.

    ``fingerprint`` (called once, lazily) is everything besides the sample
    that decides a verdict; ``finished`` the outcomes a resumed run journaled
    before, by node id; ``context`` the process's :class:`CheckContext`, which
    :meth:`context_for` narrows to one item.
    """

    MEMO_SIZE = 256  # results computed on demand by result_of, most recent last

    def __init__(self, fingerprint: Callable[[], str], cache: ResultCache, finished: Mapping[str, Any],
                 dedupe: Dedupe, context: CheckContext):
        self._fingerprint_of, self._fingerprint = fingerprint, None
        self.cache, self.finished, self.dedupe, self.context = cache, finished, dedupe, context
        self._memo: OrderedDict[str, CheckResult] = OrderedDict()

    @property
    def fingerprint(self) -> str:
        if self._fingerprint is None:
            self._fingerprint = self._fingerprint_of()
        return self._fingerprint

    def result_key(self, benchmark: str, check: str, task_id: str, completion) -> str:
        h = hashlib.sha256(self.fingerprint.encode())
        for part in (benchmark, check, task_id, str(bool(completion.meta.get("trusted_reference"))), completion.text):
            h.update(b"\0" + part.encode("utf-8", "surrogatepass"))
        return h.hexdigest()

    def journal_result(self, nodeid: str) -> dict[str, Any] | None:
        """The outcome of an item a resumed run already finished (it is not run again)."""
        return self.finished.get(nodeid)

    def context_for(self, spec: ItemSpec, completion, asking: tuple[str, ...] = ()) -> CheckContext:
        """The context of one item: ``result_of`` reads the other checks of its sample."""
        asking = asking + (spec.check,)
        return self.context.for_item(lambda check: self.result_of(spec, completion, check, asking))

    # ------------------------------------------------------------ verdicts
    def evaluate(self, spec: ItemSpec, completion, run_check: RunCheck = adapter_check) -> Evaluation:
        """The verdict of one item, from a copy's program verdict, the result cache
        or ``run_check``; stored for the next copy and the next run.  A
        :class:`RepeatableError` (fresh or cached) is raised, and cached too."""
        key = self.result_key(spec.benchmark, spec.check, spec.task.task_id, completion)
        # Another sample of this task with the same program (engine/dedupe.py) may
        # have been evaluated already in this run: its verdict is this one's.
        program = self.dedupe.key(spec.adapter, spec.task, completion, spec.check)
        verdict = self.dedupe.verdicts.get(program) if program is not None else None
        from_cache = False
        if verdict is not None:
            reached = "copy"
            self.cache.put(key, verdict)  # a re-run of this very text finds it too
        else:
            verdict = self.cache.get(key)
            from_cache = verdict is not None
            reached = "cached" if from_cache else "evaluated"
        if verdict is None:
            try:
                result = run_check(spec, completion, self.context_for(spec, completion))
            except RepeatableError as exc:
                verdict = {"repeatable_error": str(exc), "error_type": type(exc).__name__}
                self.cache.put(key, verdict)
                if program is not None:
                    self.dedupe.verdicts.put(program, verdict)
                raise
            verdict = _verdict(result)
            self.cache.put(key, verdict)
        if program is not None and reached != "copy":
            self.dedupe.verdicts.put(program, verdict)
        if "repeatable_error" in verdict:
            raise repeated(verdict)
        return Evaluation(verdict, reached if program is not None else None, from_cache)

    def share_finished(self, spec: ItemSpec, completion, finished: Mapping[str, Any]) -> None:
        """Resumed run: a journaled verdict is also its program's, for copies not yet run."""
        if not self.dedupe.enabled or not isinstance(finished.get("passed"), bool):
            return
        program = self.dedupe.key(spec.adapter, spec.task, completion, spec.check)
        if program is not None and self.dedupe.verdicts.get(program) is None:
            self.dedupe.verdicts.put(program, {k: finished[k] for k in ("passed", "details", "message")})

    def result_of(self, spec: ItemSpec, completion, check: str, asking: tuple[str, ...],
                  run_check: RunCheck = adapter_check) -> CheckResult | None:
        """The result of ``check`` on ``spec``'s sample: from this process, the
        journal of a resumed run, or the result cache; otherwise computed now
        (once: it then lands in the result cache, where its own item finds it).
        None when ``check`` is not a check of this task."""
        adapter, task = spec.adapter, spec.task
        if check in asking:
            raise RuntimeError(f"{adapter.name}: check {check!r} reads its own result (result_of cycle)")
        if check not in adapter.checks_for(task):
            return None
        key = self.result_key(adapter.name, check, task.task_id, completion)
        if key in self._memo:
            return self._memo[key]
        other = ItemSpec(adapter, task, spec.sample, check)
        verdict = self.journal_result(other.nodeid)
        if not _is_verdict(verdict):
            verdict = self.cache.get(key)
        if not _is_verdict(verdict):
            result = run_check(other, completion, self.context_for(other, completion, asking))
            verdict = _verdict(result)
            self.cache.put(key, verdict)
        result = CheckResult(verdict["passed"], dict(verdict.get("details") or {}), verdict.get("message") or "")
        self._memo[key] = result
        while len(self._memo) > self.MEMO_SIZE:
            self._memo.popitem(last=False)
        return result

    def close(self) -> None:
        self.dedupe.close()
