"""The generation phase: every selected (benchmark, task, sample) is generated
once, in the pytest controller, before any item runs.

Without xdist it runs in ``pytest_collection_finish`` on the selected items;
with xdist in ``pytest_xdist_node_collection_finished`` on the first worker's
final node ids (``specbench::BENCH::TASK_ID::SAMPLE::CHECK``), before the
controller schedules anything.  Workers then receive the answers from the
controller over their gateways (``plugin/remote.py``), so no request is ever
made twice and no worker needs the controller's disk.
"""
from __future__ import annotations

import json
import os
import tempfile
import time
from typing import Any, Callable, Iterable, Sequence

import pytest

from ..engine.plan import RunPlan, Selected, item_nodeid, parse_node_id
from ..errors import SpecbenchError
from ..models.base import GenerationRequest
from ..models.cache import ModelGaveUp
from ..models.options import generation_options


class GenerationPhase:
    """Generates, once per run, every answer the selected items will read.

    Takes plain things: the run's :class:`~..engine.plan.RunPlan` (which items
    need which request), the model, ``finished`` (a resumed run's outcome of a
    node id, or None) and the pytest config (the progress line, the xdist
    session to stop on a usage error).
    """

    def __init__(self, plan: RunPlan, model: Any, finished: Callable[[str], Any], config: pytest.Config):
        self.plan, self.model, self.finished, self.config = plan, model, finished, config
        self.done = False

    def requests(self, selected: Iterable[Selected], planning: bool = False) -> list[GenerationRequest]:
        return self.plan.generation_requests(selected, self.finished, planning=planning)

    def for_items(self, items: Sequence[Any]) -> None:
        """``pytest_collection_finish`` without xdist: generate for the selected items."""
        if self.config.option.collectonly:
            return
        selected = [(i.spec.benchmark, i.task.task_id, i.sample, i.check) for i in items if hasattr(i, "spec")]
        self._phase(selected)

    def for_node_ids(self, ids: Sequence[str]) -> None:
        """``pytest_xdist_node_collection_finished`` in the controller: the first call generates."""
        if self.done or self.config.option.collectonly:
            return
        self.done = True
        # Workers get the answers from this process over their gateways (plugin/remote.py),
        # whatever the cache holds: they may run on other hosts.
        try:
            self._phase([s for s in map(parse_node_id, ids) if s is not None])
        except pytest.UsageError:
            stop_workers(self.config)
            raise

    def _phase(self, selected: list[Selected]) -> None:
        # A model answering locally costs nothing per answer: the controller does not
        # prepare (ground truths, checkouts) to find skips here; the workers do, in
        # parallel (#28).  Saved samples are those of the items that run, as before.
        try:
            saving = generation_options(self.plan.settings).save_samples is not None
        except SpecbenchError as exc:
            raise pytest.UsageError(f"specbench: {exc}") from None
        local = bool(getattr(self.model, "answers_locally", False))
        requests = self.requests(selected, planning=local and not saving)
        if not requests:
            return
        progress = ProgressLine(self.config, self.model)
        try:
            self.model.generate(requests, progress)
            save_to = generation_options(self.plan.settings).save_samples
        except ModelGaveUp as exc:
            progress.close()
            # The run stops here, as under -x: no item runs, and the line says how many.
            not_run = sum(1 for s in selected if self.finished(item_nodeid(*s)) is None)
            raise pytest.UsageError(f"specbench: {exc}; {exc.unasked} of {len(requests)} requests never sent, "
                                    f"{not_run} items not run") from None
        except SpecbenchError as exc:
            progress.close()
            raise pytest.UsageError(f"specbench: {exc}") from None
        progress.close()
        if save_to is not None:
            written = save_samples(self.model, requests, save_to)
            progress.line(f"specbench: {written} samples written to {save_to}")


def stop_workers(config: pytest.Config) -> None:
    """Before raising a usage error in the controller: let the idle workers exit now;
    otherwise xdist waits 10 s for them at teardown."""
    dsession = config.pluginmanager.getplugin("dsession")
    if dsession is not None and getattr(dsession, "sched", None) is not None:
        dsession.triggershutdown()


def save_samples(model: Any, requests: Sequence[GenerationRequest], path: os.PathLike) -> int:
    """Write the answers in EvalPlus JSON lines (replayable with ``--model=replay:PATH``)."""
    lines = []
    for request in requests:
        try:
            completion = model.completion(request)
        except Exception:  # noqa: BLE001 - a failed generation has no sample to save
            continue
        # The raw answer: replay sanitizes it exactly as this run did.
        lines.append(json.dumps({"task_id": request.task.task_id, "sample_index": request.sample_index,
                                 "solution": completion.text, "benchmark": request.benchmark}, ensure_ascii=False))
    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".samples-", suffix=".jsonl")
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write("".join(line + "\n" for line in lines))
    os.replace(tmp, path)
    return len(lines)


class ProgressLine:
    """``specbench: generating ... 40/120 (3.1/s, 12 cached, 0 errors)`` on the terminal.

    Rewritten in place on a terminal; elsewhere (CI logs) one line every 10 s.
    """

    def __init__(self, config: pytest.Config, model: Any):
        self.reporter = config.pluginmanager.get_plugin("terminalreporter")
        self.model = model
        self.started = time.monotonic()
        self.last = 0.0
        self.shown = False
        self.tty = bool(self.reporter and self.reporter.isatty())
        self.total = 0

    def __call__(self, done: int, total: int) -> None:
        self.total = total
        now = time.monotonic()
        if done < total and now - self.last < (0.2 if self.tty else 10.0):
            return
        self.last = now
        self._show(done, total)

    def _show(self, done: int, total: int) -> None:
        if self.reporter is None:
            return
        stats = getattr(self.model, "stats", None)
        elapsed = max(time.monotonic() - self.started, 1e-6)
        fresh = getattr(stats, "generated", 0) + getattr(stats, "errors", 0)
        text = (f"specbench: generating with {self.model.spec}: {done}/{total} "
                f"({fresh / elapsed:.1f}/s, {getattr(stats, 'cache_hits', 0)} cached, "
                f"{getattr(stats, 'errors', 0)} errors)")
        if self.tty:
            if not self.shown:
                self.reporter.ensure_newline()
            self.reporter.rewrite(text, erase=True)
        else:
            self.reporter.write_line(text)
        self.shown = True

    def line(self, text: str) -> None:
        if self.reporter is not None:
            self.reporter.ensure_newline()
            self.reporter.write_line(text)

    def close(self) -> None:
        if self.shown and self.tty and self.reporter is not None:
            self.reporter.write_line("")
