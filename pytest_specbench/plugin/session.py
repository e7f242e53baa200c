"""The state of one specbench run inside pytest, registered as a plugin object.

Hooks, and what only the pytest process knows: the xdist link, the journal,
the result store, the counters and the report.  What the run will do is the
pytest-free :class:`~..engine.plan.RunPlan` (tasks, checks, items, skips,
prompts, data digests); how an item gets its verdict the
:class:`~..engine.verdicts.VerdictEngine`; both are built here once per process
and handed to the items, the generation phase (:mod:`.generation`) and the gate
(``reports/gate.py``), which read no run object.

In every process it builds the same items in the same order (xdist compares
collections); in the controller (or the only process without xdist) it gathers
each item's result from its test report, appends it to the run journal as it
arrives, and at the end turns results into metrics, a terminal table and the
JSON report.
"""
from __future__ import annotations

import datetime as _dt
import functools
import gc
import json
import re
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from ..benchmarks import get_benchmark
from ..engine import dedupe as _dedupe
from ..engine.costs import FOLDER as COSTS_FOLDER
from ..engine.costs import MeasuredCosts
from ..engine.costs import dispatch_costs as measured_dispatch_costs
from ..engine.ledger import CACHED, Ledger, RunKey, VerdictStore
from ..engine.plan import ItemSpec, RunPlan
from ..engine.verdicts import NothingKnown, VerdictEngine
from ..errors import DataError, InfrastructureError, OptionError
from ..models import load_model
from ..models.base import SampleMissing
from ..reports.journal import Journal, max_errors
from ..reports.layout import shown_path
from ..reports.report import ResultStore, metric_sections, render_summary
from . import remote as _remote
from .exit_status import ExitStatus
from .items import (_OWN_PROPERTIES, CACHED_PROPERTY, DEDUPE_PROPERTY, PROPERTY, REPEATABLE_PROPERTY, BenchmarkNode,
                    SpecbenchItem)
from .options import WORKER_MODEL_KEY, Settings, model_record
from .services import Services
from ..data.bundled import suites_root


def is_worker(config: pytest.Config) -> bool:
    return hasattr(config, "workerinput")


def _check_pinned(settings: Settings, digests: dict[str, str]) -> None:
    """The run's data files that ``specbench data download`` verified must still have
    their pinned sha256 (#44: an edited file was used silently).  A folder of the user's
    own (no download marker) is taken as it is."""
    if settings.data_root is None:
        return
    from ..data.fetch import MARKER, altered_files

    altered = altered_files(settings.data_root, digests)
    if altered:
        path, folder, actual, pinned = altered[0]
        more = f" (and {len(altered) - 1} more file(s))" if len(altered) > 1 else ""
        raise DataError(path, None, f"altered since `specbench data download` (sha256 {actual[:12]}…, pinned "
                                    f"{pinned[:12]}…){more}: run `specbench data download {folder}` to repair it "
                                    f"(a folder of your own: remove its {MARKER} file)")


class SpecbenchRun:
    def __init__(self, config: pytest.Config, settings: Settings):
        self.config, self.settings = config, settings
        # Under xdist, what a worker needs comes over its gateway from the controller
        # (plugin/remote.py): workers may run on other hosts, with no shared disk.
        self.link = self.start = None
        if is_worker(config) and _remote.CHANNEL_KEY in config.workerinput:
            self.link = _remote.WorkerLink(config.workerinput[_remote.CHANNEL_KEY])
            self.start = json.loads(config.workerinput.get("specbench_start") or "{}")
        # Only the reference answers from the task data, which every host loads itself.
        self.model_is_local = settings.model_spec.strip() == "reference"
        if self.start is not None and not self.model_is_local:
            self.model = _remote.RemoteAnswers(settings.model_spec, self.start.get("indices", {}), self.link)
        else:
            self.model = load_model(settings.model_spec, settings)
        adapters = {name: get_benchmark(name) for name in settings.benchmarks}
        hide = [str(config.rootpath), str(settings.state_dir)]
        if settings.data_root:
            hide.append(str(settings.data_root.resolve()))
        else:  # the bundled suites hold references and answers: hide them (with the
            # checkout they are in, for an editable install run from another folder)
            suites = suites_root()
            hide.append(str(suites.parent if (suites.parent / "pyproject.toml").is_file() else suites))
        self.services = Services(settings, hide)
        if self.start is not None:  # the worker's roles ask the controller
            self.services.remote_roles = {role: _remote.RemoteRole(role, spec, identity, self.link)
                                          for role, (spec, identity) in self.start.get("roles", {}).items()}
        self.plan = RunPlan(settings, adapters, self.model, self.services.context(),
                            peer_digests=(self.start or {}).get("data_digests"))
        self.adapters = self.plan.adapters
        self.verdict_store = _verdict_store(settings)  # a bad --specbench-result-cache is a usage error, now
        dedupe_on = _dedupe.mode(settings) == "on"  # a bad --specbench-dedupe too
        for name in self.adapters:  # bad data is a one-line usage error, now, not a traceback later
            self.plan.taskset(name)
        if not is_worker(config):  # a downloaded file edited since: one line, before anything runs
            _check_pinned(settings, self.plan.data_digests)
        self.plan.check_checks()  # checks are per task (checks_for): known once the tasks are loaded
        self.plan.check_selection()
        self._load_roles()  # a missing or bad --judge-model is a usage error, now
        # The task data lives as long as the process: keep it out of the cyclic
        # GC, which otherwise re-scans millions of input objects at every full
        # collection, and in pytest's gc.collect() loop at exit (~1 s per
        # process on the EvalPlus data).  Reference counting still frees it.
        gc.freeze()
        self.store = ResultStore()
        self.started = time.time()
        self._sections: dict[str, Any] | None = None
        self.max_errors = max_errors(settings)
        self.journal: Journal | None = None
        self.journal_error: str | None = None  # set when appending failed; the run then fails
        self.finished: dict[str, dict[str, Any]] = {}  # resumed run: {nodeid: outcome} already journaled
        self._failures = 0  # failed reports other than the harness errors of specbench items
        self._host_facts: dict[str, Any] | None = None
        self._worker_start: dict[str, Any] | None = None
        self._errored: set[str] = set()  # node ids whose setup failed (E): the scheduler re-elects their copies
        self._merged: dict[str, Any] | None = None  # specbench merge: the joined journals (their shards, fingerprint)
        self.dedupe_counts = {"evaluated": 0, "copy": 0, "cached": 0}  # controller: items with a program key
        self.result_cache_hits = 0  # controller: items whose verdict came from the result cache
        self.results_this_run = 0  # controller: items with a verdict, not counting those a resume read
        self.verdicts = 0  # controller: items with a verdict (F or pass), resumed ones included
        self.k_warnings = self._k_warnings()
        self._check_model_reachable()  # nothing listening, a wrong key or model name: one line, now
        self.gate = self._register_gate()  # a threshold that cannot be met is a usage error, now
        # Last: a run that stops on a usage error above leaves no run folder behind.
        self.run_key: RunKey | None = None  # the controller's, once (a worker keys nothing)
        self._specs: dict[str, ItemSpec] | None = None  # node id -> spec, for the ledger
        self._open_journal()
        # The one writer and reader of verdicts is the controller's ledger; a worker's
        # engine reads what the ledger pushed with each item (plugin/remote.py).
        self.ledger: Ledger | None = None
        if is_worker(config):
            self.dedupe = _dedupe.Dedupe(dedupe_on, str)  # for the in-job memo only: no run key needed
            source = _remote.PushedVerdicts(self.link) if isinstance(self.link, _remote.WorkerLink) else NothingKnown()
        else:
            run_key = self.run_key
            self.dedupe = _dedupe.Dedupe(dedupe_on, lambda: run_key.verdict)
            self.ledger = source = Ledger(self.run_key, self.verdict_store, self.finished, self.dedupe,
                                          self._journal_append, self.store, self.plan.completion)
            # the controller's end of each worker's channel
            self.link = _remote.ControllerLink(self.plan, self.services.model, self.worker_start, self.host_facts,
                                               self.model_is_local, self._known_of,
                                               lambda nodeid: self.ledger.computed_program_key(nodeid))
            # What each item cost when it last ran here: the scheduler's costs (engine/costs.py).
            self.costs = MeasuredCosts(self.settings.state_dir / "cache" / COSTS_FOLDER, self.run_key.run)
            self._setup_seconds: dict[str, float] = {}
        self.engine = VerdictEngine(source, self.dedupe, self.services.context())
        self.generation = None  # the controller's (a worker generates nothing): imported there alone
        if not is_worker(config):
            from .generation import GenerationPhase

            self.generation = GenerationPhase(self.plan, self.model, self.finished.get, config)
        terminal = config.pluginmanager.getplugin("terminalreporter")
        if terminal is not None and not is_worker(config):
            config.pluginmanager.register(PhaseReportPruner(terminal), "specbench-phase-reports")
        self.workers_skipped = self._skip_workers_when_all_cached()
        if not self.workers_skipped and not settings.merge:  # what starting the items' processes needs
            from .startup import start_early, workers_without_anyio

            start_early(config, self.services, self.adapters.values(), settings)
            workers_without_anyio(config)
        if self.start is not None and config.workerinput.get(_remote.REMOTE_KEY):
            self.link.send("facts", json.dumps(self.host_facts(), ensure_ascii=True))

    def _skip_workers_when_all_cached(self) -> int:
        """xdist controller: when the ledger knows the verdict of every item, run in
        this process instead of starting workers (which would only be told the
        verdicts, after a start-up that costs more than the whole run).  Only for
        models that answer without a network call; returns the item count."""
        dist = getattr(self.config.option, "dist", "no")
        if is_worker(self.config) or dist == "no" or not getattr(self.config.option, "tx", None):
            return 0
        if not getattr(self.model, "answers_locally", False) or self.verdict_store.folder is None:
            return 0
        # An item whose skip only a worker can tell (planning, #28) and not known: workers start.
        count = self.ledger.all_known(self.plan.runnable(planning=True))
        if not count:
            return 0
        self.config.option.dist, self.config.option.tx = "no", []
        if self.config.pluginmanager.has_plugin("dsession"):
            self.config.pluginmanager.unregister(name="dsession")
        return count

    def _check_model_reachable(self) -> None:
        """Controller: ask the model's endpoint once (``check_reachable``) before any
        item runs, when some answer is not in the generation cache yet (a re-run
        served from the cache needs no server)."""
        check = getattr(self.model, "check_reachable", None)
        if is_worker(self.config) or self.config.option.collectonly or not callable(check) or self.settings.merge:
            return
        cache = getattr(self.model, "cache", None)
        if cache is not None and callable(getattr(self.model, "key", None)):
            selected = [(s.benchmark, s.task.task_id, s.sample, s.check) for s in self.plan.all_specs()]
            requests = self.plan.generation_requests(selected, self.finished.get, planning=True)
            if all(cache.get(self.model.key(r)) is not None for r in requests):
                return
        check()

    def _k_warnings(self) -> list[str]:
        """pass@k values the run cannot compute (k above the samples per task), when
        --specbench-k was given: they would otherwise be left out silently."""
        given = self.config.getoption("specbench_k", None)
        if given is None and str(self.config.getini("specbench_k")) == "1,10,100":
            return []
        most = max((len(self.model.sample_indices(name, task.task_id, self.settings.samples))
                    for name in self.adapters for task in self.plan.taskset(name).tasks), default=0)
        over = [k for k in self.settings.ks if k > most]
        if not over or not most:
            return []
        return [f"--specbench-k: pass@{', pass@'.join(map(str, over))} need{'s' if len(over) == 1 else ''} "
                f"at least {max(over)} samples per task, this run has {most} (raise --specbench-samples): not computed"]

    def dedupe_groups(self, nodeids) -> list[str | None]:
        """xdist controller: the program key of each item (None: not deduplicated), for
        the scheduler, which runs one item of a key at a time (``engine/dedupe.py``) and
        asks for a few items at a time, as they near their turn: each is looked up by
        node id, not by a walk of the whole plan.  Items ``plan.runnable`` leaves out
        (skipped as far as planning tells, or without a sample) get None."""
        if not self.dedupe.enabled:
            return [None] * len(nodeids)
        keys: list[str | None] = []
        for nodeid in nodeids:
            spec = self._spec_of(nodeid)
            key = None
            if (spec is not None and getattr(spec.adapter, "program_key", None) is not None
                    and not self.plan.skip_reason(spec, planning=True)):
                try:
                    key = self.ledger.program_key(spec, self.plan.completion(spec))
                except SampleMissing:
                    pass
            keys.append(key)
        return keys

    def _spec_of(self, nodeid: str) -> ItemSpec | None:
        if self._specs is None:
            self._specs = {spec.nodeid: spec for spec in self.plan.all_specs()}
        return self._specs.get(nodeid)

    def _known_of(self, nodeid: str):
        """xdist controller: what the ledger knows of an item's verdict, pushed with it."""
        spec = self._spec_of(nodeid)
        if spec is None:
            return None
        known = self.ledger.known(spec)
        if known is not None:
            return known
        try:
            completion = self.plan.completion(spec)
        except (SampleMissing, InfrastructureError):
            return None  # the worker says so, as an error (E)
        completion.meta.setdefault("sample_index", spec.sample)
        return self.ledger.known(spec, completion)

    def _before_first_dispatch(self) -> None:
        """xdist controller, while the workers start (xdist asks for its scheduler once
        they are launched): the one-time work the first dispatch would otherwise wait
        for, the plan's items by node id and the run key's verdict part, which keys every
        item pushed (~1 s in a profiled W4-HumanEval run: the data digests, the executors'
        versions).  Not when every item is in the resumed journal (nothing is keyed then);
        a failure is left to the moment the key is needed, as before."""
        if self.run_key is None:
            return
        self._spec_of("")
        if any(spec.nodeid not in self.finished for spec in self.plan.all_specs()):
            try:
                self.run_key.verdict  # noqa: B018 - a cached property, computed now
            except Exception:  # noqa: BLE001 - raised again, in its place, when an item is keyed
                pass

    def verdict_known(self, nodeid: str) -> bool:
        """Whether a finished item left a verdict its copies can take (it did not error)."""
        return nodeid not in self._errored

    def _load_roles(self) -> None:
        for name, adapter in self.adapters.items():
            defaults = getattr(adapter, "default_roles", None)
            if callable(defaults):
                for role, spec in defaults(self.plan.taskset(name)).items():
                    self.services.role_defaults.setdefault(role, spec)
            for role in self.plan.roles_of(name):
                model = self.services.model(role)
                if (not is_worker(self.config) and not self.settings.merge
                        and callable(getattr(model, "check_reachable", None))):
                    model.check_reachable()

    def _register_gate(self):
        """Thresholds, baseline comparison and readable reports (controller only)."""
        if is_worker(self.config):
            return None
        from .gate import GatePlugin as Gate

        gate = Gate(self.plan, self.report, lambda: (self.harness_errors(), self.max_errors))
        self.config.pluginmanager.register(gate, "specbench-gate")
        self.config.pluginmanager.register(ExitStatus(before=gate.finish, inputs=self.exit_inputs),
                                           "specbench-exit-status")
        return gate

    def _open_journal(self) -> None:
        """Controller: the run key, once; then start a journal, or reopen the one named
        by --specbench-resume.  A worker has neither: what it needs of a resumed run
        comes with its items (the ledger's known verdicts, ``plugin/remote.py``)."""
        if is_worker(self.config):
            return
        # the verdict part when a first verdict is keyed (a run that evaluates nothing imports no executor)
        self.run_key = RunKey.of(self._verdict_part, self._run_part())
        runs = self.settings.state_dir / "runs"
        header = self.journal_header()
        if self.settings.merge:  # specbench merge: every outcome from the shards' journals, no journal of its own
            self._take_merged(header)
            return
        resume = self.config.getoption("specbench_resume", None)
        if resume:
            self.journal, self.finished = Journal.resume(runs, str(resume), header)
        else:
            self.journal = Journal.create(runs, header)

    def _take_merged(self, header: dict[str, Any]) -> None:
        """``specbench merge`` (``plugin/merge.py``): the shards' joined journal gives every
        item's outcome (a verdict, an error, a skip) in plan order, as the items would
        have (an item in none of them was deselected, ``-k``: ``specbench merge`` took
        finished runs only); refused in one line when this run's key is not the shards'."""
        from ..reports.journal import MERGE_FREE, Journal, header_difference

        joined, entries = Journal.read_entries(self.settings.merge)
        difference = header_difference(joined or {}, header, ignore=MERGE_FREE)
        if difference:
            raise OptionError("merge", f"the journals are not of this run: {difference}")
        self._merged = {**(joined or {}).get("merged", {}), "fingerprint": (joined or {}).get("fingerprint")}
        for spec in self.plan.all_specs():
            entry = entries.get(spec.nodeid)
            if entry is None:
                continue
            if "skipped" in entry:
                self.store.add_skip(spec.benchmark, str(entry["skipped"]), spec.nodeid)
            elif "error" in entry:
                self.store.add_error(entry)
            else:
                self.finished[spec.nodeid] = entry
                self.store.add(entry)
                self.verdicts += 1
                self._failures += not entry.get("passed")

    def journal_header(self) -> dict[str, Any]:
        """The run part of the run key (a run is resumed only when all of it is
        unchanged), then what ``specbench merge`` reads: the shard, the invocation
        and the fingerprint (``reports/journal.py``)."""
        from .merge import recorded_arguments

        return {**self.run_key.run_part(), **({"shard": list(self.settings.shard)} if self.settings.shard else {}),
                "invocation": {"args": recorded_arguments(self.config.invocation_params.args),
                               "dir": str(self.config.invocation_params.dir)}}

    def _run_part(self) -> dict[str, Any]:
        """What a run is (``RunKey.run``): a journal of another run is not resumed or merged."""
        from dataclasses import asdict

        from .. import __version__

        manifest = self.model.manifest()
        # The model's identity, not its counters (a generating model's counts change as it works).
        model = {k: v for k, v in manifest.items() if k == "spec" or "sha256" in k or k in ("model", "endpoint", "parameters")}
        return {"specbench_version": __version__, "benchmarks": self.settings.benchmarks,
                "data_files": self.plan.data_digests, "model": model, "checks": self.settings.checks,
                "samples": self.settings.samples, "limits": asdict(self.settings.limits),
                "sandbox": self.settings.sandbox, "options": self._benchmark_options()}

    @functools.cached_property
    def fingerprint(self) -> dict[str, Any]:
        """The run fingerprint (``reports/fingerprint.py``), once per run, asked at its end
        (the executors it used are loaded by then) by the report and the journal."""
        from dataclasses import asdict

        from ..execution import executor_versions
        from ..reports import fingerprint

        return fingerprint.build(sandbox=self.settings.sandbox, limits=asdict(self.settings.limits),
                                 data_files={name: self.plan.file_digests(name) for name in self.adapters},
                                 executors=executor_versions(loaded_only=True), sample_environment=_sample_environment(self.settings),
                                 toolchains=_remote.toolchain_versions())

    def host_facts(self) -> dict[str, Any]:
        """What a remote host is compared on at start: versions and data file digests."""
        from ..data.jsonl import file_digest

        if self._host_facts is None:
            files = {f"{name}/{i}/{Path(f).name}": file_digest(f)
                     for name in self.adapters for i, f in enumerate(self.plan.taskset(name).files)}
            self._host_facts = {"versions": _remote.versions(self.settings), "files": files}
        return self._host_facts

    def worker_start(self, remote: bool) -> dict[str, Any]:
        """Controller: what each worker is told at start (``workerinput``)."""
        if self._worker_start is None:
            start: dict[str, Any] = {"data_digests": self.plan.data_digests,
                                     "roles": {role: [model.spec, model.identity()]
                                               for role, model in self.services.loaded_roles().items()}}
            if not self.model_is_local:
                start["indices"] = _remote.encode_indices(self.model, self.plan)
            self._worker_start = start
        return self._worker_start

    def _verdict_part(self) -> list[Any]:
        """Everything besides the sample that decides a check's verdict (``RunKey.verdict``)."""
        import sys
        from dataclasses import asdict

        from .. import __version__
        from ..execution import executor_versions
        from ..execution.python import EXECUTOR_VERSION

        return [__version__, EXECUTOR_VERSION, executor_versions(), sys.version, _sample_environment(self.settings),
                self.plan.data_digests, asdict(self.settings.limits),
                self.settings.details, self.settings.sandbox, self._benchmark_options()]

    def _benchmark_options(self) -> dict[str, Any]:
        """Name, version and declared option values of every adapter of the run (result key)."""
        from .options import declared_options

        return {name: {"version": str(adapter.version),
                       "options": {o.name: self.settings.option(o.name) for o in declared_options(adapter)},
                       # The judge decides verdicts too: another judge must not reuse them.
                       **({"roles": {role: self.services.model(role).identity() for role in self.plan.roles_of(name)}}
                          if self.plan.roles_of(name) else {})}
                for name, adapter in sorted(self.adapters.items())}

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node) -> None:
        # xdist: each worker gets a channel of its own to this process (plugin/remote.py).
        self.link.configure_node(node)
        # The controller's model (maybe the last run's, from a cache a remote host does not have).
        node.workerinput[WORKER_MODEL_KEY] = model_record(self.config, self.settings.model_spec)
        data = self.config.getoption("specbench_remote_data", None)
        if data and node.workerinput[_remote.REMOTE_KEY]:
            node.workerinput["specbench_data"] = str(data)

    # ------------------------------------------------------------------ hooks
    def pytest_report_header(self, config: pytest.Config) -> list[str]:
        lines = []
        for name in self.settings.benchmarks:
            ts = self.plan.taskset(name)
            where = "the bundled sample suite" if ts.bundled else shown_path(self.settings.data_root) + (
                " (the SPECBENCH_DATA download cache; --specbench-data=bundled for the sample suite)"
                if self.settings.data_origin else "")
            lines.append(f"specbench: {name} on {where} ({len(ts.tasks)} tasks), model {self.model.spec}")
            lines.extend(f"specbench warning: {w}" for w in self.sample_warnings(name))
        lines.extend(f"specbench warning: {w}" for w in self.k_warnings)
        if self.workers_skipped:
            lines.append(f"specbench: all {self.workers_skipped} results are in the result cache: "
                         "read here, no xdist workers started")
        if self.settings.sandbox == "none":
            lines.append("specbench: sandbox none: NO isolation (no namespaces, no uid of its own); "
                         "trusted code only")
        if self.journal is not None:
            if self.config.getoption("specbench_resume", None):
                lines.append(f"specbench: resuming run {self.journal.run_id}: {len(self.finished)} items "
                             f"already finished are not run again")
            lines.append(f"specbench: run journal {self.journal.path}")
        return lines

    def sample_warnings(self, name: str) -> list[str]:
        ts = self.plan.taskset(name)
        warnings = list(ts.warnings)
        known = getattr(self.model, "known_task_ids", None)
        if known is not None:
            ids = [t.task_id for t in ts.tasks]
            with_samples, unknown = known(ids)
            if unknown:
                shown = ", ".join(sorted(unknown)[:8]) + (" ..." if len(unknown) > 8 else "")
                warnings.append(f"{len(unknown)} sample task ids are not in the {name} data and are ignored: {shown}")
            if len(with_samples) < len(ids):
                warnings.append(f"{len(ids) - len(with_samples)} of {len(ids)} {name} tasks have no samples and are not evaluated")
        return warnings

    @pytest.hookimpl(tryfirst=True)
    def pytest_ignore_collect(self, collection_path: Path, config: pytest.Config):
        # `pytest --specbench=...` runs the benchmark, not the project's own tests,
        # unless test paths are named on the command line.
        if config.args_source != pytest.Config.ArgsSource.ARGS:
            return True
        return None

    @pytest.hookimpl(tryfirst=True)
    def pytest_collection_modifyitems(self, session: pytest.Session, config: pytest.Config, items: list) -> None:
        for name, adapter in self.adapters.items():
            node = BenchmarkNode.from_parent(session, name=name, nodeid=f"specbench::{name}")
            built = [SpecbenchItem.from_parent(node, name=f"{spec.task.task_id}[{spec.sample}-{spec.check}]",
                                               nodeid=spec.nodeid, spec=spec, plan=self.plan, verdicts=self.engine,
                                               isolation=self.services.isolation)
                     for spec in self.plan.item_specs(name)]
            # Announce them as collected so counts (and -k/--lf arithmetic) are right.
            session.ihook.pytest_collectreport(report=pytest.CollectReport(node.nodeid, "passed", None, built))
            items.extend(built)
        if self.settings.shard or self.settings.merge:
            # A shard runs its share; a merge runs nothing (its outcomes are the shards').
            mine = self.plan.shard_items(*self.settings.shard) if self.settings.shard else set()
            kept = [item for item in items if not isinstance(item, SpecbenchItem) or item.nodeid in mine]
            if len(kept) < len(items):
                config.hook.pytest_deselected(items=[item for item in items if item not in kept])
                items[:] = kept

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        if session.items and all(isinstance(item, SpecbenchItem) for item in session.items):
            drop_idle_hypothesis_plugin(self.config)
        # Generation phase (no xdist): once, here, before any item runs.
        if not is_worker(self.config):
            self.generation.for_items(session.items)

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_make_scheduler(self, config: pytest.Config, log):
        self._before_first_dispatch()
        # `-n N` alone means --dist load: ours is load with the costliest items first.
        if config.getvalue("dist") != "load":
            return None
        from .scheduling import CostFirstScheduling

        return CostFirstScheduling(config, log, self.dispatch_costs, self.dedupe_groups, self.verdict_known,
                                   self.link.before_send)

    def dispatch_costs(self, nodeids) -> list[float]:
        """xdist controller: each item's cost for the scheduler, what it took when it last
        ran here where that is known, else the adapter's prediction (engine/costs.py)."""
        return measured_dispatch_costs(nodeids, self.plan.dispatch_costs(nodeids), self.costs.earlier)

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node, ids: list[str]) -> None:
        if ids and all(self._spec_of(nodeid) is not None for nodeid in ids):
            drop_idle_hypothesis_plugin(self.config)
        # A remote host's versions and data, compared with ours before anything runs.
        try:
            lines = self.link.check_node(node)
        except _remote.HostRefused as exc:
            from .generation import stop_workers

            stop_workers(self.config)
            raise pytest.UsageError(f"specbench: {exc}") from None
        writer = self.config.get_terminal_writer()
        for line in lines:
            writer.line(line, yellow=True)
        # Generation phase (xdist controller): before scheduling; workers only read answers.
        self.generation.for_node_ids(ids)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if is_worker(self.config):
            return
        outcome = next((v for k, v in report.user_properties if k == PROPERTY), None)
        if report.when == "call" and outcome is not None:
            # The terminal reporter keeps every call report to the end of the run:
            # without its copy of the outcome (kept in the store) a report is a
            # few hundred bytes, not kilobytes (a 28,600-item run stays small).
            reached = next((v for k, v in report.user_properties if k == DEDUPE_PROPERTY), None)
            if reached in self.dedupe_counts:
                self.dedupe_counts[reached] += 1
            cached = any(k == CACHED_PROPERTY for k, _ in report.user_properties)
            self.result_cache_hits += cached
            report.user_properties = [p for p in report.user_properties if p[0] not in _OWN_PROPERTIES]
            self.verdicts += 1
            setup_seconds = self._setup_seconds.pop(report.nodeid, 0.0)  # taken whatever the item did: none kept
            if report.nodeid not in self.finished:  # a resumed item is in the journal already
                self.results_this_run += 1
                if not cached and reached != "copy":  # it did the work: its cost, for the next run's order
                    self.costs.record(report.nodeid, setup_seconds + report.duration)
            # The ledger journals it, stores it (for copies and the next run) and feeds the report.
            self.ledger.record(self._spec_of(report.nodeid), outcome, CACHED if cached else reached)
        elif report.when == "setup" and report.passed and report.nodeid.startswith("specbench::"):
            self._setup_seconds[report.nodeid] = report.duration  # the check runs in setup (items.py)
        elif report.when == "setup" and report.skipped and report.nodeid.startswith("specbench::"):
            reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
            self.store.add_skip(report.nodeid.split("::")[1], reason.removeprefix("Skipped: "), report.nodeid)
            if report.nodeid.count("::") == 4:  # for specbench merge: the shard's skips are the run's
                self._journal_append(report.nodeid, {"skipped": reason.removeprefix("Skipped: ")})
        elif report.when == "setup" and report.failed and report.nodeid.startswith("specbench::"):
            parts = report.nodeid.split("::")
            if len(parts) == 5:
                self._errored.add(report.nodeid)
                repeatable = next((v for k, v in report.user_properties if k == REPEATABLE_PROPERTY), None)
                spec = self._spec_of(report.nodeid) if isinstance(repeatable, dict) else None
                if spec is not None:  # raised again without running anything: for its copies and the next run
                    self.ledger.record_repeatable(spec, repeatable)
                error = {"benchmark": parts[1], "task_id": parts[2], "sample": int(parts[3]), "check": parts[4],
                         "error": _error_message(report)}
                self.store.add_error(error)
                self._journal_append(report.nodeid, error)
                return
        if report.failed:
            self._failures += 1

    def _journal_append(self, nodeid: str, entry: dict[str, Any]) -> None:
        if self.journal_error:
            return  # said once; the run fails at the end
        try:
            self.journal.append(nodeid, entry)
        except InfrastructureError as exc:
            # The item's result is still counted; what is lost is resumability.
            self.journal_error = str(exc)
            self.config.get_terminal_writer().line(f"specbench: ERROR: {exc}", red=True)

    def _journal_append_end(self, session: pytest.Session) -> None:
        complete = (session.exitstatus not in (pytest.ExitCode.INTERRUPTED, pytest.ExitCode.INTERNAL_ERROR,
                                               pytest.ExitCode.USAGE_ERROR)
                    and not session.shouldstop and not session.shouldfail)
        try:
            self.journal.append_end(self.fingerprint, complete)
        except InfrastructureError as exc:
            self.journal_error = self.journal_error or str(exc)

    def harness_errors(self) -> int:
        return sum(self.store.error_count(name) for name in self.adapters) + (1 if self.journal_error else 0)

    def pytest_terminal_summary(self, terminalreporter, exitstatus, config) -> None:
        if is_worker(config) or exitstatus == pytest.ExitCode.USAGE_ERROR:
            return  # a usage error (one line, from pytest) has no results to summarise
        for line in render_summary(self.report()):
            terminalreporter.write_line(line)
        if self.journal_error:
            terminalreporter.write_line(f"specbench: ERROR: {self.journal_error} (results after it are not "
                                        "journaled; this run cannot be resumed)", red=True)
        errors = self.harness_errors()
        if errors:
            verdict = "the run fails" if errors > self.max_errors else "tolerated"
            terminalreporter.write_line(f"specbench: {errors} harness errors (E), not model failures; "
                                        f"--specbench-max-errors={self.max_errors}: {verdict}")
        counts = self.dedupe_counts
        if counts["copy"] or counts["evaluated"]:
            terminalreporter.write_line(
                f"specbench: dedupe: {counts['evaluated']} programs evaluated, {counts['copy']} copies took "
                f"their verdict, {counts['cached']} from the result cache (--specbench-dedupe=off evaluates every copy)")
        hits, fresh = self.result_cache_hits, self.results_this_run
        if hits and hits == fresh:
            terminalreporter.write_line(f"specbench: all {hits} results came from the result cache (an identical "
                                        "earlier run): no check was run (--specbench-result-cache=off runs them again)")
        elif hits:
            terminalreporter.write_line(f"specbench: {hits} of {fresh} results came from the result cache "
                                        "(--specbench-result-cache=off runs them again)")
        if self.evaluated() == 0 and not self.journal_error:
            skipped = sum(sum(self.store.skips(name).values()) for name in self.adapters)
            why = (f"all {skipped} items were skipped (reasons above)" if skipped
                   else "no item was selected or the data has no tasks")
            terminalreporter.write_line(f"specbench: nothing was evaluated: {why}; exit status 5 (no tests ran)")
        if self.settings.report:
            terminalreporter.write_line(f"specbench: report written to {self.settings.report}")

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node, error) -> None:
        # xdist controller: a worker's role counters (judge questions, cache hits, requests,
        # the parameters sent) arrive with its end, as its outcomes arrived with its reports.
        counters = getattr(node, "workeroutput", {}).get("specbench_roles")
        if counters:
            self.services.add_role_counters(counters)

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        if is_worker(self.config):
            self.config.workeroutput["specbench_roles"] = self.services.role_counters()
            self.services.close()
            return
        if self.journal is not None:
            if self.evaluated() or self.settings.shard:  # for specbench merge: the shard's end
                self._journal_append_end(session)
            self.journal.close()
            if (self.evaluated() in (0, None) and not self.finished and not self.journal_error
                    and not (self.settings.shard and self.evaluated() == 0)):  # a shard's journal is merged
                # Nothing to resume or compare: no run folder left behind (a --collect-only run
                # or one whose items all skipped would otherwise leave a header-only journal).
                self.journal.discard()
                self.journal = None
        self.costs.save()
        if self.settings.report:
            self.store.write(self.report(), self.settings.report)
        if self.settings.merge and session.exitstatus in (pytest.ExitCode.OK, pytest.ExitCode.NO_TESTS_COLLECTED):
            # No item ran here: the status is the shards' outcomes' (the gate and the errors then decide).
            session.exitstatus = pytest.ExitCode.TESTS_FAILED if self._failures else pytest.ExitCode.OK

    def exit_inputs(self) -> dict[str, Any]:
        """What ``exit_status.decide`` needs, read after every sessionfinish hook."""
        gate = self.gate.verdict if self.gate is not None and self.gate.active else None
        return {"failures": self._failures, "harness_errors": self.harness_errors(),
                "max_errors": self.max_errors, "gate": gate, "evaluated": self.evaluated()}

    def evaluated(self) -> int | None:
        """Items that got a verdict or an error (None when the run only collected)."""
        if self.config.option.collectonly:
            return None
        return self.verdicts + sum(self.store.error_count(name) for name in self.adapters)

    def pytest_unconfigure(self, config: pytest.Config) -> None:
        self.services.close()
        self.engine.close()
        if isinstance(self.link, _remote.ControllerLink):
            self.link.close()

    # ----------------------------------------------------------------- report
    def report(self) -> dict[str, Any]:
        """The report; its benchmark sections (metrics, bootstrap CIs) are built once.

        It is asked for several times at the end of a run (gate, JSON file, terminal
        table), always after the last result is in.
        """
        from .. import __version__

        if self._sections is None:
            self._sections = {name: self._section(name, adapter) for name, adapter in self.adapters.items()}
        report = {"specbench_version": __version__, "manifest": self.manifest(), "benchmarks": self._sections}
        if self.gate is not None:
            self.gate.annotate(report)
        return report

    def _section(self, name: str, adapter) -> dict[str, Any]:
        from ..reports.gate import section_extras  # the controller's report alone: not imported by a worker

        ts = self.plan.taskset(name)
        order = [t.task_id for t in ts.tasks]
        results = self.store.results(name, order)
        tasks = self.plan.tasks_by_id(name)
        section: dict[str, Any] = {
            "metrics": {},  # filled below (first in the JSON, as readers expect)
            "headline": list(adapter.metric_names(self.settings)),  # what the terminal summary prints
            "tasks": self.store.tasks_section(name, order),
            "errors": self.store.error_count(name),
            "skipped": self.store.skips(name),  # reason -> items (a missing toolchain, a task without CVTs)
            "skipped_items": self.store.skipped_items(name),  # reason -> TASK::SAMPLE::CHECK ids
            "data": "bundled" if ts.bundled else shown_path(self.settings.data_root),
            "checks": self.plan.checks_of(name),
        }
        roles = self.plan.roles_of(name)
        if roles:  # the judge in use, named in the summary and the HTML (the manifest has its identity)
            section["roles"] = {role: _role_shown(self.services.model(role)) for role in roles}
        # metrics, figures, warnings, intervals; a family whose metrics raise gets "metrics_error"
        section.update(metric_sections(
            name, adapter, results, tasks, self.settings,
            lambda metrics: section_extras(adapter, results, metrics, self.settings, self.plan.file_digests(name),
                                           cache_dir=self.services.cache_dir("intervals"), tasks=tasks)))
        return section

    def manifest(self) -> dict[str, Any]:
        import platform
        import sys
        from dataclasses import asdict

        return {
            "benchmarks": self.settings.benchmarks,
            "model": self.model.manifest(),
            "data_files": self.plan.data_digests,
            "samples_per_task": self.settings.samples,
            "checks": self.settings.checks,
            "dedupe": "on" if self.dedupe.enabled else "off",
            "options": self._benchmark_options(),
            "roles": self.services.role_manifests(),
            "adapters": {name: adapter.manifest(self.settings) for name, adapter in self.adapters.items()
                         if callable(getattr(adapter, "manifest", None))},
            "sandbox": {"mode": self.settings.sandbox, "limits": asdict(self.settings.limits),
                        "isolation": self.store.isolation,
                        **({"warning": "NO isolation: trusted code only"} if self.settings.sandbox == "none" else {})},
            "python": sys.version.split()[0],
            "sample_environment": _sample_environment(self.settings),  # interpreter, distributions hash
            "platform": platform.platform(),
            "started": _dt.datetime.fromtimestamp(self.started, _dt.timezone.utc).isoformat(),
            "finished": _dt.datetime.now(_dt.timezone.utc).isoformat(),
            "journal": str(self.journal.path) if self.journal else None,
            "resumed": ({"run": self.journal.run_id, "items_finished_before": len(self.finished)}
                        if self.journal is not None and self.config.getoption("specbench_resume", None) else None),
            "journal_error": self.journal_error,
            "fingerprint": self._merged["fingerprint"] if self._merged else self.fingerprint,
            "shard": list(self.settings.shard) if self.settings.shard else None,
            "merged": ({k: v for k, v in self._merged.items() if k != "fingerprint"} if self._merged else None),
        }


class PhaseReportPruner:
    """pytest's terminal reporter keeps every passed setup and teardown report
    (category "") to the end of the run, only to show the teardown output of
    failed tests, and looks it up with a scan of all of them per failure:
    quadratic, minutes at the end of a 28,600-item run with thousands of
    failures, and two reports per item held in memory.  Our items write nothing
    in setup or teardown, so their reports are dropped as they arrive."""

    def __init__(self, terminal) -> None:
        self.stats = terminal.stats

    @pytest.hookimpl(trylast=True)  # after the terminal reporter filed it
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.when != "call" and report.passed and not report.sections and report.nodeid.startswith("specbench::"):
            kept = self.stats.get("")
            if kept and kept[-1] is report:
                kept.pop()


def drop_idle_hypothesis_plugin(config: pytest.Config) -> None:
    """Unregister Hypothesis's pytest plugin from a process whose items are all specbench
    items, unless something imported Hypothesis already.  Its hooks act only on
    Hypothesis tests (``@given`` functions; a specbench item is none), but its
    ``pytest_terminal_summary`` imports ``hypothesis`` to look for files only such
    tests write: ~0.2 CPU s in the controller and in each xdist worker (workers keep a
    terminal reporter), after the last item, on the run's wall (docs/timing.md,
    session 20).  A run that also collects the user's own tests keeps it."""
    manager = config.pluginmanager
    if "hypothesis" not in sys.modules and manager.get_plugin("hypothesispytest") is not None:
        manager.unregister(name="hypothesispytest")


def _error_message(report: pytest.TestReport) -> str:
    crash = getattr(report.longrepr, "reprcrash", None)
    if crash is not None and getattr(crash, "message", None):
        # "pytest_specbench.errors.InfrastructureError: ..." -> "InfrastructureError: ..."
        return re.sub(r"^(?:\w+\.)+(?=\w+: )", "", crash.message)[:500]
    lines = [line.strip() for line in (report.longreprtext or "").splitlines() if line.strip()]
    return lines[-1][:500] if lines else "error"


def _role_shown(model: Any) -> str:
    """A role's model as the summary names it: its spec, and what it is when the
    adapter chose it (CIFE's bundled suite: the recorded judgments)."""
    spec = str(getattr(model, "spec", "") or type(model).__name__)
    note = getattr(model, "note", "")
    return f"{shown_path(spec)} ({note})" if note else shown_path(spec)


def _sample_environment(settings) -> dict[str, Any]:
    from ..execution.python import sample_environment

    return sample_environment(settings, [])


def _verdict_store(settings: Settings) -> VerdictStore:
    """The ledger's store of earlier runs' verdicts (the controller's disk only)."""
    mode = str(settings.option("specbench_result_cache") or "readwrite")
    if mode not in ("readwrite", "off"):
        raise OptionError("--specbench-result-cache", f"expected readwrite or off, got {mode!r}")
    return VerdictStore(None if mode == "off" else settings.state_dir / "cache" / "results")
