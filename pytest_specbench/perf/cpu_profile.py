"""CPU-clock profiles of a pytest run's harness: what each item costs its worker, by function.

py-spy (perf/profile.py) samples wall time and, on a loaded machine, counts a thread
that waits for a core as busy: its shares of the workers' few CPU seconds were 4x their
CPU (issue #48, session 18).  This plugin runs :mod:`cProfile` on the process's own CPU
clock (``time.process_time``), so a worker waiting for its sandbox's job, or for a
core, adds nothing.  Loaded with ``-p pytest_specbench.perf.cpu_profile`` (xdist passes
``-p`` on to its workers) and active only when ``SPECBENCH_CPU_PROFILE`` names a folder:

* each xdist worker profiles inside its items only (``pytest_runtest_protocol``: the
  item's setup, call and teardown, their reports and the report's trip to the
  controller) and writes ``DIR/<gwN>-<pid>.prof`` with the item count;
* the controller profiles from its configure to its unconfigure (start-up, planning,
  dispatch, the ledger, the report) and writes ``DIR/controller-<pid>.prof``.

Then :func:`summary` (``python -m pytest_specbench.perf.cpu_profile DIR``) prints, per
role, the CPU ms per item of each part (:data:`PARTS`, by the cumulative time of the
functions that start it) and the functions with the most own time.  cProfile's own
overhead inflates the figures (~4x in a worker, whose per-call record path is many
small calls): they are for shares, not for the table.

``SPECBENCH_CPU_PARTS=1`` beside it times the parts instead, without cProfile: each
function of :data:`TIMED` is wrapped with two ``time.process_time()`` reads (its
outermost call only), so the figures are the parts' real CPU per item, ~1 us of
overhead a wrapped call (``DIR/<role>-<pid>.parts.json``; the summary prints them).
"""
from __future__ import annotations

import argparse
import cProfile
import json
import os
import pstats
import time
from pathlib import Path

import pytest

ENV = "SPECBENCH_CPU_PROFILE"
PARTS_ENV = "SPECBENCH_CPU_PARTS"

# (part, module, attribute path): functions timed by SPECBENCH_CPU_PARTS, outermost call only.
# Looked up at call time by their callers (a hook implementation pluggy holds, or xdist's worker
# code, which execnet runs as source, cannot be wrapped this way: what is left of an item's
# protocol is pytest's, xdist's and execnet's).
TIMED: list[tuple[str, str, str]] = [
    ("setup: the check (SpecbenchItem.setup)", "pytest_specbench.plugin.items", "SpecbenchItem.setup"),
    ("... the program key (Dedupe.key)", "pytest_specbench.engine.dedupe", "Dedupe.key"),
    ("... functional_check", "pytest_specbench.benchmarks.contract.evalplus", "functional_check"),
    ("...... expected outputs (index read)", "pytest_specbench.benchmarks.contract.evalplus", "_expected_outputs"),
    ("...... the task's inputs decoded", "pytest_specbench.benchmarks.contract.evalplus_data", "EvalPlusTask._decode"),
    ("...... sanitizing (sample_code)", "pytest_specbench.benchmarks.contract.evalplus", "sample_code"),
    ("...... machine_speed (its calibration: once per process)", "pytest_specbench.benchmarks.contract.evalplus",
     "machine_speed"),
    ("...... the executor's client (PythonExecutor.run)", "pytest_specbench.execution.python", "PythonExecutor.run"),
    ("......... records read and judged (_collect)", "pytest_specbench.execution.python", "PythonExecutor._collect"),
    ("call: the outcome into the report (runtest)", "pytest_specbench.plugin.items", "SpecbenchItem.runtest"),
    ("reports serialised (TestReport._to_json)", "_pytest.reports", "BaseReport._to_json"),
    ("controller: a report received (xdist's worker_testreport: every logreport hook)", "xdist.dsession",
     "DSession.worker_testreport"),
    ("controller: ... the ledger's record (journal, store)", "pytest_specbench.engine.ledger", "Ledger.record"),
    ("controller: the scheduler (schedule)", "pytest_specbench.plugin.scheduling", "CostFirstScheduling.schedule"),
]


class _Parts:
    """Each :data:`TIMED` function wrapped: its outermost calls' CPU seconds and count."""

    def __init__(self):
        import functools
        import importlib

        self.cpu: dict[str, float] = {}
        self.calls: dict[str, int] = {}
        for part, module, path in TIMED:
            try:
                owner = importlib.import_module(module)
                *outer, name = path.split(".")
                for attr in outer:
                    owner = getattr(owner, attr)
                func = getattr(owner, name)
            except (ImportError, AttributeError):
                continue
            depth = [0]

            def timed(*args, _func=func, _part=part, _depth=depth, **kwargs):
                if _depth[0]:
                    return _func(*args, **kwargs)
                _depth[0] += 1
                t0 = time.process_time()
                try:
                    return _func(*args, **kwargs)
                finally:
                    self.cpu[_part] = self.cpu.get(_part, 0.0) + time.process_time() - t0
                    self.calls[_part] = self.calls.get(_part, 0) + 1
                    _depth[0] -= 1

            functools.update_wrapper(timed, func)
            setattr(owner, name, timed)


class _Profiler:
    def __init__(self, folder: Path, role: str, items_only: bool):
        self.folder, self.role, self.items_only = folder, role, items_only
        self.parts = _Parts() if os.environ.get(PARTS_ENV) else None
        self.profile = None if self.parts else cProfile.Profile(time.process_time)
        self.items, self.protocol_cpu, self.cpu0 = 0, 0.0, time.process_time()
        if self.profile is not None and not items_only:
            self.profile.enable()

    @pytest.hookimpl(hookwrapper=True, tryfirst=True)
    def pytest_runtest_protocol(self, item, nextitem):
        self.items += 1
        if self.profile is not None and self.items_only:
            self.profile.enable()
        t0 = time.process_time()
        yield
        self.protocol_cpu += time.process_time() - t0
        if self.profile is not None and self.items_only:
            self.profile.disable()

    def pytest_unconfigure(self, config):
        self.folder.mkdir(parents=True, exist_ok=True)
        stem = self.folder / f"{self.role}-{os.getpid()}"
        facts = {"role": self.role, "items": self.items, "protocol_cpu": self.protocol_cpu,
                 "process_cpu": time.process_time() - self.cpu0}
        if self.profile is not None:
            self.profile.disable()
            self.profile.dump_stats(str(stem) + ".prof")
        else:
            facts.update(parts=self.parts.cpu, calls=self.parts.calls)
        Path(str(stem) + ".json").write_text(json.dumps(facts))


def pytest_configure(config):
    from .timeline import process_role

    folder = os.environ.get(ENV)
    if not folder or config.pluginmanager.has_plugin("specbench-cpu-profile"):
        return
    role = process_role(config)
    config.pluginmanager.register(_Profiler(Path(folder), role, items_only=role != "controller"),
                                  "specbench-cpu-profile")


# (part, (file fragment, function name)): the cumulative CPU of the first frame that
# matches, per item.  Nested parts overlap (the check is inside setup): each is read
# on its own, not summed.
PARTS: list[tuple[str, tuple[str, str]]] = [
    ("the item's whole protocol (runtestprotocol)", ("_pytest/runner.py", "runtestprotocol")),
    ("... setup: the check (SpecbenchItem.setup)", ("plugin/items.py", "setup")),
    ("...... the verdict engine (evaluate)", ("engine/verdicts.py", "evaluate")),
    ("......... the program key (Dedupe.key: sanitizing)", ("engine/dedupe.py", "key")),
    ("......... functional_check", ("contract/evalplus.py", "functional_check")),
    ("............ expected outputs (index read)", ("contract/evalplus.py", "_expected_outputs")),
    ("............ the task's inputs decoded (EvalPlusTask._decode)", ("contract/evalplus_data.py", "_decode")),
    ("............ the executor's client (PythonExecutor.run)", ("execution/python.py", "run")),
    ("............... records read and judged (_collect)", ("execution/python.py", "_collect")),
    ("............... the inputs pickled and sent (load)", ("", "dumps")),
    ("............ sanitizing the sample (sample_code)", ("contract/evalplus.py", "sample_code")),
    ("...... the item's answer (plan.completion)", ("engine/plan.py", "completion")),
    ("... call: the report's outcome (SpecbenchItem.runtest)", ("plugin/items.py", "runtest")),
    ("... reports made (pytest_runtest_makereport)", ("_pytest/runner.py", "call_and_report")),
    ("... reports sent to the controller (xdist's runtest_logreport)", ("xdist/remote.py", "pytest_runtest_logreport")),
    ("...... serialised (pytest_report_to_serializable)", ("_pytest/reports.py", "pytest_report_to_serializable")),
    ("...... execnet's send", ("execnet/gateway_base.py", "send")),
    ("controller: reports received (xdist's worker_testreport)", ("xdist/dsession.py", "worker_workerready")),
    ("controller: a report's logreport hooks", ("xdist/dsession.py", "worker_testreport")),
    ("controller: the run's logreport (ledger, journal, costs)", ("plugin/session.py", "pytest_runtest_logreport")),
    ("controller: the ledger's record", ("engine/ledger.py", "record")),
    ("controller: the scheduler (schedule, dispatch)", ("plugin/scheduling.py", "schedule")),
    ("controller: collection", ("_pytest/main.py", "perform_collect")),
    ("controller: the terminal summary", ("_pytest/terminal.py", "pytest_terminal_summary")),
    ("controller: session finish (report, journal)", ("plugin/session.py", "pytest_sessionfinish")),
]


def _cumulative(stats: pstats.Stats, fragment: str, name: str) -> float:
    """The largest cumulative time of a function matching (fragment, name): the
    outermost frame, so recursion and nesting are not counted twice."""
    best = 0.0
    for (path, _, func), (_, _, _, ct, _) in stats.stats.items():
        if func == name and fragment in path:
            best = max(best, ct)
    return best


def parts_summary(folder: Path) -> str:
    """The SPECBENCH_CPU_PARTS figures: CPU ms per item of each part, per role."""
    out = []
    for role in ("worker", "controller"):
        files = [f for f in sorted(folder.glob("*.json"))
                 if (f.name.startswith("controller")) == (role == "controller")]
        facts = [json.loads(f.read_text()) for f in files]
        facts = [f for f in facts if "parts" in f]
        if not facts:
            continue
        items = sum(f["items"] for f in facts) or sum(f["calls"].get(TIMED[0][0], 0) for f in facts)
        per = max(items, 1)
        protocol = sum(f["protocol_cpu"] for f in facts)
        process = sum(f["process_cpu"] for f in facts)
        out.append(f"{role} ({len(facts)} process(es), {items} items): own CPU {process:.2f} s, "
                   f"inside items {protocol:.2f} s = {1000 * protocol / per:.2f} ms an item")
        for part, _, _ in TIMED:
            cpu = sum(f["parts"].get(part, 0.0) for f in facts)
            calls = sum(f["calls"].get(part, 0) for f in facts)
            if calls:
                out.append(f"  {1000 * cpu / per:7.2f} ms/item {cpu:7.2f} s {calls:7d} calls  {part}")
    return "\n".join(out)


def summary(folder: Path, top: int = 25) -> str:
    out = []
    if not any(folder.glob("*.prof")):
        return parts_summary(folder)
    by_role: dict[str, list[Path]] = {}
    for prof in sorted(folder.glob("*.prof")):
        role = "controller" if prof.name.startswith("controller") else "worker"
        by_role.setdefault(role, []).append(prof)
    for role, files in by_role.items():
        stats = pstats.Stats(*[str(f) for f in files])
        items = sum(json.loads(Path(str(f)[:-5] + ".json").read_text())["items"] for f in files)
        total = stats.total_tt
        per = max(items, 1)
        out.append(f"{role} ({len(files)} process(es), {items} items): {total:.2f} CPU s profiled, "
                   f"{1000 * total / per:.2f} ms an item")
        for part, (fragment, name) in PARTS:
            ct = _cumulative(stats, fragment, name)
            if ct:
                out.append(f"  {1000 * ct / per:8.2f} ms/item {ct:7.2f} s  {part}")
        out.append(f"  own time, top {top}:")
        rows = sorted(stats.stats.items(), key=lambda kv: kv[1][2], reverse=True)[:top]
        for (path, line, func), (_, nc, tt, ct, _) in rows:
            short = "/".join(Path(path).parts[-2:])
            out.append(f"  {1000 * tt / per:8.3f} ms/item {tt:7.3f} s  {nc:8d} calls  {func} ({short}:{line})")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("folder", type=Path)
    ap.add_argument("--top", type=int, default=25)
    args = ap.parse_args(argv)
    print(summary(args.folder, args.top))


if __name__ == "__main__":
    main()
