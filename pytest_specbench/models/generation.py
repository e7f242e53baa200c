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
from typing import Any, Iterable, Sequence

import pytest

from ..errors import SpecbenchError
from .base import GenerationRequest
from .options import generation_options

# (benchmark, task_id, sample index, check)
Selected = tuple[str, str, int, str]


def generate_for_items(run: Any, items: Sequence[Any]) -> None:
    """``pytest_collection_finish`` without xdist: generate for the selected items."""
    if run.config.option.collectonly:
        return
    selected = [(i.adapter.name, i.task.task_id, i.sample, i.check) for i in items
                if hasattr(i, "adapter") and hasattr(i, "sample")]
    _phase(run, selected)


def generate_for_node_ids(run: Any, node: Any, ids: Sequence[str]) -> None:
    """``pytest_xdist_node_collection_finished`` in the controller: the first call generates."""
    if getattr(run, "_generation_done", False) or run.config.option.collectonly:
        return
    run._generation_done = True
    # Workers get the answers from this process over their gateways (plugin/remote.py),
    # whatever the cache holds: they may run on other hosts.
    try:
        _phase(run, [s for s in map(parse_node_id, ids) if s is not None])
    except pytest.UsageError:
        stop_workers(run)
        raise


def stop_workers(run: Any) -> None:
    """Before raising a usage error in the controller: let the idle workers exit now;
    otherwise xdist waits 10 s for them at teardown."""
    dsession = run.config.pluginmanager.getplugin("dsession")
    if dsession is not None and getattr(dsession, "sched", None) is not None:
        dsession.triggershutdown()


def parse_node_id(nodeid: str) -> Selected | None:
    parts = nodeid.split("::")
    if len(parts) < 5 or parts[0] != "specbench":
        return None
    try:
        sample = int(parts[-2])
    except ValueError:
        return None
    return parts[1], "::".join(parts[2:-2]), sample, parts[-1]


def build_requests(run: Any, selected: Iterable[Selected], planning: bool = False) -> list[GenerationRequest]:
    """One request per distinct (benchmark, task, sample) that some selected item will evaluate.

    ``planning``: skips as far as the adapters' caches tell (nothing prepared here);
    an item that will skip may then get a request.  Right for a model that answers
    locally (nothing is paid for) and for the reachability probe; a paying model's
    requests are built with the skips decided, so no answer is bought for a skipped item."""
    requests: dict[tuple[str, str, int], GenerationRequest] = {}
    tasks = {name: {t.task_id: t for t in run.taskset(name).tasks} for name in run.adapters}
    for benchmark, task_id, sample, check in selected:
        adapter = run.adapters.get(benchmark)
        task = tasks.get(benchmark, {}).get(task_id)
        if task is None or (benchmark, task_id, sample) in requests:
            continue
        skip = run.skip_reason(adapter, check, task, planning=planning)
        finished = run.journal_result(run.item_nodeid(benchmark, task_id, sample, check))
        if skip or finished is not None:
            continue  # this item needs no answer (another check of the sample may)
        requests[(benchmark, task_id, sample)] = run.generation_request(adapter, task, sample, check)
    return list(requests.values())


def _phase(run: Any, selected: list[Selected]) -> None:
    # A model answering locally costs nothing per answer: the controller does not
    # prepare (ground truths...) to find skips here; the workers do, in parallel (#28).
    # Saved samples are those of the items that run, as before.
    try:
        saving = generation_options(run.settings).save_samples is not None
    except SpecbenchError as exc:
        raise pytest.UsageError(f"specbench: {exc}") from None
    local = bool(getattr(run.model, "answers_locally", False))
    requests = build_requests(run, selected, planning=local and not saving)
    if not requests:
        return
    progress = ProgressLine(run.config, run.model)
    try:
        run.model.generate(requests, progress)
        save_to = generation_options(run.settings).save_samples
    except SpecbenchError as exc:
        progress.close()
        raise pytest.UsageError(f"specbench: {exc}") from None
    progress.close()
    if save_to is not None:
        written = save_samples(run.model, requests, save_to)
        progress.line(f"specbench: {written} samples written to {save_to}")


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
