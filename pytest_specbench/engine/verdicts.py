"""The verdict engine: how one item gets its verdict in the process that runs it, pytest-free.

It writes no store.  It asks its *source* what is known already: the
controller's :class:`~.ledger.Ledger` itself where this process is the
controller (``-n 0``), or, on an xdist worker, what the controller pushed with
the item (``plugin/remote.py``, which asks the controller for an item it got
nothing with).  A known verdict (the resumed journal's, a copy's, an earlier
run's) is the item's; otherwise the check runs (``run_check``) and its outcome
goes to the controller in the item's report, where the ledger records it.

Inside one process it keeps an in-job memo, never written anywhere: the
verdict of a program it evaluated, for a copy the controller could not know
yet (dispatched behind its representative, on the same worker), and the
results ``result_of`` computed, for their own items.  :meth:`VerdictEngine.result_of`
answers ``CheckContext.result_of`` through the same source.
"""
from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Protocol

from ..types import CheckResult
from ..errors import RepeatableError
from .context import CheckContext
from .dedupe import Dedupe
from .ledger import CACHED, COPY, RESUMED, Known
from .plan import ItemSpec


class VerdictSource(Protocol):
    """What the controller knows of an item's verdict (:meth:`.ledger.Ledger.known`):
    with ``completion`` None, the resumed journal only."""

    def known(self, spec: ItemSpec, completion: Any = None) -> Known | None: ...


class NothingKnown:
    """A source that knows nothing (a process with no controller to ask)."""

    def known(self, spec: ItemSpec, completion: Any = None) -> Known | None:
        return None


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


_KNOWN_FIELDS = ("passed", "details", "message", "repeatable_error", "error_type")


def _is_verdict(value: Any) -> bool:
    return isinstance(value, dict) and isinstance(value.get("passed"), bool)


# check, context -> result (the default: the adapter's own run_check)
RunCheck = Callable[[ItemSpec, Any, CheckContext], CheckResult]


def adapter_check(spec: ItemSpec, completion: Any, ctx: CheckContext) -> CheckResult:
    return spec.adapter.run_check(spec.check, spec.task, completion, ctx)


class VerdictEngine:
    """How an item of this process gets its verdict: the source, the in-job memo, the check.

    ``source``: the :class:`~.ledger.Ledger` (the controller) or the pushed
    verdicts of a worker; ``dedupe`` gives program keys (for the in-job memo);
    ``context`` is the process's :class:`CheckContext`, which
    :meth:`context_for` narrows to one item.
    """

    MEMO_SIZE = 256  # results computed on demand by result_of, most recent last

    def __init__(self, source: VerdictSource, dedupe: Dedupe, context: CheckContext):
        self.source, self.dedupe, self.context = source, dedupe, context
        self._programs: dict[str, dict[str, Any]] = {}  # in-job memo: program key -> verdict
        self._memo: OrderedDict[tuple, CheckResult] = OrderedDict()  # in-job memo of result_of

    def resumed(self, spec: ItemSpec) -> dict[str, Any] | None:
        """The outcome of an item a resumed run already finished (it is not run again)."""
        known = self.source.known(spec)
        return known.verdict if known is not None and known.how == RESUMED else None

    def context_for(self, spec: ItemSpec, completion, asking: tuple[str, ...] = ()) -> CheckContext:
        """The context of one item: ``result_of`` reads the other checks of its sample."""
        asking = asking + (spec.check,)
        return self.context.for_item(lambda check: self.result_of(spec, completion, check, asking))

    @staticmethod
    def _memo_key(spec: ItemSpec, check: str, completion) -> tuple:
        # One item's (its sample index too): a family without a program key (CIFE) has two
        # samples of equal text judged each, so equal text is not the same verdict here.
        return (spec.benchmark, check, spec.task.task_id, spec.sample, bool(completion.meta.get("trusted_reference")),
                completion.text)

    # ------------------------------------------------------------ verdicts
    def evaluate(self, spec: ItemSpec, completion, run_check: RunCheck = adapter_check) -> Evaluation:
        """The verdict of one item: known to the source (a copy's, an earlier run's),
        the in-job memo, or ``run_check``.  A :class:`RepeatableError` (fresh or
        known) is raised."""
        program = self._program_key(spec, completion)
        known = self.source.known(spec, completion)
        if known is not None:
            verdict, reached = {k: known.verdict.get(k) for k in known.verdict if k in _KNOWN_FIELDS}, known.how
        elif program is not None and program in self._programs:
            # Its representative ran in this process after the controller sent it (behind it).
            verdict, reached = self._programs[program], COPY
        else:
            reached = "evaluated"
            memo = self._memo.get(self._memo_key(spec, spec.check, completion))
            if memo is not None:  # result_of computed it for another check of this sample
                verdict = _verdict(memo)
            else:
                try:
                    verdict = _verdict(run_check(spec, completion, self.context_for(spec, completion)))
                except RepeatableError as exc:
                    verdict = {"repeatable_error": str(exc), "error_type": type(exc).__name__}
                    if program is not None:
                        self._programs[program] = verdict
                    raise
        if program is not None:
            self._programs.setdefault(program, verdict)
        if "repeatable_error" in verdict:
            raise repeated(verdict)
        # for result_of of another check of this sample, in this process (a worker's push said
        # "unknown" before this item ran)
        self._remember(self._memo_key(spec, spec.check, completion), verdict)
        return Evaluation(verdict, reached if program is not None else None, reached == CACHED)

    def _program_key(self, spec: ItemSpec, completion) -> str | None:
        """The item's program key for the in-job memo: the one the controller pushed with
        it (a worker's source), else computed here.  The two differ (the controller's
        holds its run key), so a memo entry under one is never taken for the other: at
        worst a copy is evaluated again, never given another program's verdict."""
        pushed = getattr(self.source, "pushed_program_key", None)
        if pushed is not None:
            found, key = pushed(spec)
            if found:
                return key
        return self.dedupe.key(spec.adapter, spec.task, completion, spec.check)

    def result_of(self, spec: ItemSpec, completion, check: str, asking: tuple[str, ...],
                  run_check: RunCheck = adapter_check) -> CheckResult | None:
        """The result of ``check`` on ``spec``'s sample: from the in-job memo, the
        source (the resumed journal, a copy's, an earlier run's), or computed now
        (once per process: the in-job memo gives it to its own item too).  None
        when ``check`` is not a check of this task."""
        adapter, task = spec.adapter, spec.task
        if check in asking:
            raise RuntimeError(f"{adapter.name}: check {check!r} reads its own result (result_of cycle)")
        if check not in adapter.checks_for(task):
            return None
        key = self._memo_key(spec, check, completion)
        if key in self._memo:
            return self._memo[key]
        other = ItemSpec(adapter, task, spec.sample, check)
        known = self.source.known(other, completion)
        verdict = known.verdict if known is not None else None
        if not _is_verdict(verdict):
            verdict = _verdict(run_check(other, completion, self.context_for(other, completion, asking)))
        return self._remember(key, verdict)

    def _remember(self, key: tuple, verdict: Mapping[str, Any]) -> CheckResult:
        result = CheckResult(verdict["passed"], dict(verdict.get("details") or {}), verdict.get("message") or "")
        self._memo[key] = result
        while len(self._memo) > self.MEMO_SIZE:
            self._memo.popitem(last=False)
        return result

    def close(self) -> None:
        pass
