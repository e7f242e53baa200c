"""The run's plan: what every process of a run computes the same way, once.

Tasks are loaded once per benchmark; checks, skip reasons, prompts and the item
specs are computed once (a skip reason once per (task, check), a prompt once per
task) however many times the items, the generation phase, the scheduler's cost
model and the worker start-up ask for them.  Nothing here knows pytest: the
plugin (``plugin/session.py``) builds a plan and hands it to the items and the
gate.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Mapping

from ..types import TaskSet
from ..errors import OptionError
from ..models.base import GenerationRequest, SampleMissing

# (benchmark, task_id, sample index, check): an item as a node id names it
Selected = tuple[str, str, int, str]


def item_nodeid(benchmark: str, task_id: str, sample: int, check: str) -> str:
    """The pytest node id of one item (``specbench::BENCH::TASK_ID::SAMPLE::CHECK``)."""
    return f"specbench::{benchmark}::{task_id}::{sample}::{check}"


def parse_node_id(nodeid: str) -> Selected | None:
    """The inverse of :func:`item_nodeid` (None: not an item of ours)."""
    parts = nodeid.split("::")
    if len(parts) < 5 or parts[0] != "specbench":
        return None
    try:
        sample = int(parts[-2])
    except ValueError:
        return None
    return parts[1], "::".join(parts[2:-2]), sample, parts[-1]


@dataclass(frozen=True)
class ItemSpec:
    """One item: a check of one sample of one task of one benchmark."""

    adapter: Any  # types.Benchmark
    task: Any  # types.Task
    sample: int
    check: str

    @property
    def benchmark(self) -> str:
        return self.adapter.name

    @property
    def nodeid(self) -> str:
        return item_nodeid(self.adapter.name, self.task.task_id, self.sample, self.check)


class RunPlan:
    """Tasks, checks, items, skips, prompts and data digests of one run.

    ``model`` gives the sample indices and answers (``sample_indices``,
    ``completion``); ``context`` is the :class:`~.context.CheckContext` that
    ``skip_reason`` and ``dispatch_cost`` receive; ``peer_digests`` are the
    controller's data digests when this process is an xdist worker (its names
    keep the result and program keys equal on every host).
    """

    def __init__(self, settings: Any, adapters: Mapping[str, Any], model: Any, context: Any,
                 peer_digests: Mapping[str, str] | None = None):
        self.settings, self.adapters, self.model, self.context = settings, dict(adapters), model, context
        self._peer_digests = peer_digests
        self._tasksets: dict[str, TaskSet] = {}
        self._by_id: dict[str, dict[str, Any]] = {}
        self._specs: dict[str, list[ItemSpec]] = {}
        self._skips: dict[tuple[str, str, str], str | None] = {}
        self._planning_skips: dict[tuple[str, str, str], str | None] = {}
        self._prompts: dict[tuple[str, str], Any] = {}

    # ------------------------------------------------------------- tasks
    def taskset(self, name: str) -> TaskSet:
        if name not in self._tasksets:
            # A benchmark whose folders the download cache lacks reads its bundled suite
            # alone, and its header says why (the others keep the cache).
            why = self.settings.data_bundled.get(name)
            taskset = self.adapters[name].load(self.settings.data_root if why is None else None, self.settings)
            self._tasksets[name] = replace(taskset, warnings=(why, *taskset.warnings)) if why else taskset
        return self._tasksets[name]

    def tasks_by_id(self, name: str) -> dict[str, Any]:
        if name not in self._by_id:
            self._by_id[name] = {t.task_id: t for t in self.taskset(name).tasks}
        return self._by_id[name]

    def checks_for(self, name: str, task) -> list[str]:
        """The checks of one task (``checks_for``), narrowed by --specbench-checks."""
        checks = list(self.adapters[name].checks_for(task))
        if not self.settings.checks:
            return checks
        # A parametrised check ``name[param]`` is selected by its full id or by ``name``.
        wanted = set(self.settings.checks)
        return [c for c in checks if c in wanted or c.split("[", 1)[0] in wanted]

    def checks_of(self, name: str) -> list[str]:
        """Every check of a benchmark over its tasks, in first-seen order (for reports and the gate)."""
        seen: dict[str, None] = {}
        for task in self.taskset(name).tasks:
            seen.update(dict.fromkeys(self.checks_for(name, task)))
        return list(seen)

    def roles_of(self, name: str) -> tuple[str, ...]:
        """The model roles an adapter's checks ask (its optional ``roles``)."""
        roles = getattr(self.adapters[name], "roles", ()) or ()
        return tuple(roles(self.settings) if callable(roles) else roles)

    # ------------------------------------------------------------- items
    item_nodeid = staticmethod(item_nodeid)

    def item_specs(self, name: str) -> list[ItemSpec]:
        """Every item of one benchmark, in collection order (narrowed by
        --specbench-tasks and by item ids given as arguments); built once."""
        if name not in self._specs:
            adapter, wanted, selected = self.adapters[name], self.settings.tasks, self.settings.selected
            specs = []
            for task in self.taskset(name).tasks:
                if wanted is not None and task.task_id not in wanted:
                    continue
                checks = self.checks_for(name, task)
                for index in self.model.sample_indices(name, task.task_id, self.settings.samples):
                    for check in checks:
                        if selected(item_nodeid(name, task.task_id, index, check)):
                            specs.append(ItemSpec(adapter, task, index, check))
            self._specs[name] = specs
        return self._specs[name]

    def all_specs(self, names: Iterable[str] | None = None) -> Iterator[ItemSpec]:
        for name in (self.adapters if names is None else names):
            yield from self.item_specs(name)

    def skip_reason(self, spec: ItemSpec, planning: bool = False) -> str | None:
        """Why an item does not run (a missing toolchain, one line), or None; once per (task, check).

        ``planning``: asked by the xdist controller while it plans; the adapter gets
        a context with ``planning`` True and answers from its caches only (None when
        it cannot tell yet: the worker running the item decides, #28).  A decided
        answer, when there is one, is used as it is."""
        key = (spec.benchmark, spec.task.task_id, spec.check)
        if key in self._skips:
            return self._skips[key]
        if planning:
            if key not in self._planning_skips:
                self._planning_skips[key] = spec.adapter.skip_reason(spec.check, spec.task,
                                                                     self.context.for_planning())
            return self._planning_skips[key]
        self._skips[key] = spec.adapter.skip_reason(spec.check, spec.task, self.context)
        return self._skips[key]

    def prompt(self, adapter, task) -> Any:
        """The prompt of one task (once per task: it does not depend on the sample or the check)."""
        key = (adapter.name, task.task_id)
        if key not in self._prompts:
            self._prompts[key] = adapter.prompt(task, self.settings)
        return self._prompts[key]

    def generation_request(self, adapter, task, sample: int, check: str) -> GenerationRequest:
        """What the model is asked for one item (the reference answers with that check's solution)."""
        return GenerationRequest(adapter.name, task, sample, self.prompt(adapter, task),
                                 functools.partial(adapter.reference, task, check))

    def completion(self, spec: ItemSpec):
        """The model's answer for one item; raises :class:`SampleMissing`."""
        return self.model.completion(self.generation_request(spec.adapter, spec.task, spec.sample, spec.check))

    def runnable(self, names: Iterable[str] | None = None, nodeids: Iterable[str] | None = None,
                 planning: bool = False) -> Iterator[tuple[ItemSpec, Any]]:
        """(spec, completion) of every item (of ``nodeids``: what the run selected,
        after -k and deselection) that will run a check: not skipped (as far as the
        controller's planning can tell, with ``planning``), its sample present (a
        missing one is an error item either way, no work for a worker)."""
        wanted = None if nodeids is None else set(nodeids)
        for spec in self.all_specs(names):
            if wanted is not None and spec.nodeid not in wanted:
                continue
            if self.skip_reason(spec, planning=planning):
                continue
            try:
                completion = self.completion(spec)
            except SampleMissing:
                continue
            yield spec, completion

    def generation_requests(self, selected: Iterable[Selected], finished: Callable[[str], Any],
                            planning: bool = False) -> list[GenerationRequest]:
        """One request per distinct (benchmark, task, sample) that some selected item
        will evaluate (not skipped, not ``finished`` in a resumed run).

        ``planning``: skips as far as the adapters' caches tell (nothing prepared
        here); an item that will skip may then get a request.  Right for a model that
        answers locally (nothing is paid for) and for the reachability probe; a
        paying model's requests are built with the skips decided, so no answer is
        bought for a skipped item."""
        requests: dict[tuple[str, str, int], GenerationRequest] = {}
        for benchmark, task_id, sample, check in selected:
            adapter = self.adapters.get(benchmark)
            task = self.tasks_by_id(benchmark).get(task_id) if adapter is not None else None
            if task is None or (benchmark, task_id, sample) in requests:
                continue
            if self.skip_reason(ItemSpec(adapter, task, sample, check), planning=planning):
                continue  # this item needs no answer (another check of the sample may)
            if finished(item_nodeid(benchmark, task_id, sample, check)) is not None:
                continue
            requests[(benchmark, task_id, sample)] = self.generation_request(adapter, task, sample, check)
        return list(requests.values())

    def dispatch_costs(self, nodeids) -> list[float]:
        """Predicted cost of each item (adapters' optional ``dispatch_cost``; 0 when
        unknown, and for items that are skipped or not ours)."""
        costs: dict[str, float] = {}
        wanted = set(nodeids)  # only what the run selected; skips as the controller's planning tells (#28)
        for name, adapter in self.adapters.items():
            predict = getattr(adapter, "dispatch_cost", None)
            if predict is None:
                continue
            per_check: dict[tuple[str, str], float] = {}
            for spec in self.item_specs(name):
                if spec.nodeid not in wanted:
                    continue
                key = (spec.task.task_id, spec.check)
                if key not in per_check:
                    per_check[key] = (0.0 if self.skip_reason(spec, planning=True)
                                      else predict(spec.task, spec.check, self.context))
                costs[spec.nodeid] = per_check[key]
        return [costs.get(nodeid, 0.0) for nodeid in nodeids]

    def shard_items(self, index: int, count: int) -> set[str]:
        """The node ids shard ``index`` of ``count`` runs (``engine/shards.py``): whole
        tasks, split by the adapters' ``dispatch_cost`` as predicted on any host
        alike (a context whose caches are empty, no skip reasons)."""
        import tempfile

        from .context import CheckContext
        from .shards import assign, unit_costs, unit_of

        rows = []
        with tempfile.TemporaryDirectory(prefix="specbench-shard-") as empty:
            context = CheckContext(self.settings, _NoCaches(self.context.services, Path(empty)), planning=True)
            for name, adapter in self.adapters.items():
                predict = getattr(adapter, "dispatch_cost", None)
                per_check: dict[tuple[str, str], float] = {}
                for spec in self.item_specs(name):
                    key = (spec.task.task_id, spec.check)
                    if key not in per_check:
                        per_check[key] = float(predict(spec.task, spec.check, context)) if predict else 1.0
                    rows.append((name, spec.task.task_id, per_check[key]))
        shard_of = assign(unit_costs(rows), count)
        return {spec.nodeid for spec in self.all_specs()
                if shard_of[unit_of(spec.benchmark, spec.task.task_id)] == index}

    # -------------------------------------------------------------- data
    @functools.cached_property
    def data_digests(self) -> dict[str, str]:
        """sha256 of every data file of the run, by path (hashed once)."""
        from ..data.jsonl import file_digest

        digests = {str(f): file_digest(f) for name in self.adapters for f in self.taskset(name).files}
        theirs = self._peer_digests
        if theirs is not None and list(theirs.values()) == list(digests.values()):
            # A worker on another host: the same files (by hash) under other paths.  The
            # controller's names keep the result and program keys equal on every host.
            return dict(theirs)
        return digests

    def file_digests(self, name: str) -> dict[str, str]:
        """The digests of one benchmark's data files, by file name (the report's section)."""
        digests = self.data_digests
        return {Path(f).name: digests[str(f)] for f in self.taskset(name).files}

    # -------------------------------------------------------- validation
    def check_checks(self) -> None:
        """--specbench-checks names checks that exist: one line, not an empty run."""
        if not self.settings.checks:
            return
        known = {c for name in self.adapters for task in self.taskset(name).tasks
                 for c in self.adapters[name].checks_for(task)}
        known |= {c.split("[", 1)[0] for c in known}  # name[param] is selected by its name too
        unknown = [c for c in self.settings.checks if c not in known]
        if unknown:
            raise OptionError("--specbench-checks", f"unknown check {unknown[0]!r}; known: {', '.join(sorted(known))}")

    def check_selection(self) -> None:
        """--specbench-tasks and item ids name things that exist: one line, not an empty run."""
        if self.settings.tasks is not None:
            known = {t.task_id for name in self.adapters for t in self.taskset(name).tasks}
            unknown = sorted(self.settings.tasks - known)
            if unknown:
                examples = ", ".join(sorted(known)[:5])
                raise OptionError("--specbench-tasks", f"no task {unknown[0]!r} in {', '.join(self.adapters)} "
                                                       f"(task ids look like: {examples})")
        for wanted in self.settings.selection:
            name = wanted.split("::")[1]
            if not any(s == wanted or s.startswith(wanted + "::")
                       for s in (spec.nodeid for spec in self.item_specs(name))):
                raise OptionError(wanted, f"no such item in this run (ids are specbench::{name}::TASK::SAMPLE::CHECK, "
                                          "as pytest prints them; --specbench-samples and --specbench-checks apply)")


class _NoCaches:
    """The process's services with cache folders that are empty (a throwaway folder):
    what ``dispatch_cost`` predicts from them is what every host predicts."""

    def __init__(self, services: Any, empty: Path):
        self._services, self._empty = services, empty

    def executor(self, kind: str) -> Any:
        return self._services.executor(kind)

    def model(self, role: str) -> Any:
        return self._services.model(role)

    def cache_dir(self, *parts: str) -> Path:
        return self._empty.joinpath(*parts)
