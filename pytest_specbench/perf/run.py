#!/usr/bin/env python3
"""Performance table: pytest-specbench against EvalPlus 0.3.1 and a no-isolation floor.

    python -m pytest_specbench.perf --workloads W4,W3 [--data ../shared/datasets] [--work /tmp/specbench-perf]

Workloads (issue "Performance"; data from the shared data root, functional checks only
except W3):
  W1  the first 40 HumanEval tasks of the ContractEval set x 200 samples of
      samples/humaneval-chatgpt-temp0.8-n200.jsonl.gz (8,000 samples), pass@1/10/100
  W2  the same for all 143 HumanEval tasks of the ContractEval set (28,600 samples)
  W3  ContractEval with the reference model, all 475 tasks (functional + 6,121 CVTs)
  W4  the greedy sets: HumanEval (164) and MBPP (378)

Families beyond EvalPlus (issue #28; perf/families.py, baselines in perf/naive.py), each a
plugin run beside a naive baseline run as upstream runs it, with wall time, CPU, load
before/after, peak RSS and the measured CPU share of the toolchain vs the harness:
  SPECEVAL  SpecGenBench with the reference, all 4 tasks x 6 categories (original + 5
            perturbations), dynamic validation, fresh state; naive: one javac + one java
            per (program, category).  --speceval-programs N: the first N programs only
  POSTCOND  PostcondBench's real slice (keon/algorithms, 8 tasks) with the reference
            postconditions, every mutant run; naive: one plain pytest process per
            (task, original|mutant).  Needs the keon/algorithms mirror (--postcond-repos)
  POSTCOND-JAVA  PostcondBench's Java side (the bundled javalib tasks, every mutant: one
            JUnit JVM each) with plain JVM starts against the AppCDS archives, interleaved
            pairs on one kept state folder (--postcond-java-rounds N)
  CIFE      CIFE tasks with stub answers judged by the local real model (SmolLM2-135M
            through llama-cpp-python, tests/realmodel), upstream's judge prompts, cold
            judge cache; naive: upstream's two requests per task, no cache, in sequence.
            --cife-tasks N runs the first N (at ~45 tokens/s all 1,000 take hours): then
            the 1,000-task figures are printed as EXTRAPOLATED, never as measured

What is measured, per workload as asked:
  W1, W4  distinct programs / samples (the plugin's within-run dedupe, engine/dedupe.py);
          plugin (-n 2) with dedupe and with --specbench-dedupe=off, vs EvalPlus
          (--parallel 2, through run_evalplus.py) vs the floor (every sample, not deduplicated);
          per-sample verdicts compared with EvalPlus's, and dedupe on against off
  W1, W3  -n 0 vs -n 2;  W3 also a second identical run (result cache on)
  W1, W4  the cost of borderline timing (issue #33): calls over their CPU limit by less
          than the margin measured again, and timeouts run to the margin
  W2      peak RSS of the controller, the workers, the zygotes and the sample children;
          the floor over distinct programs only (each program once, no isolation: the
          samples' own work, which bounds the plugin with dedupe)

Profiles (issue #28, docs/timing.md "Where the time goes"): --profile DIR records each timed
plugin run and the floor with py-spy (perf/profile.py: shares by process role and by what the
stack is doing) and writes each pytest process's timeline (perf/timeline.py: start-up,
collection, items, idle); a profiled run is slower, its figures are for shares.  --w1-tasks
N|IDS and --w1-samples N run a slice of W1 (W2's parts per sample are W1's).

Fairness: EvalPlus times its evaluation with its ground-truth cache built; the plugin
is timed the same way (expected outputs already cached: a warm-up run builds them) but
with its result cache off, so every sample really runs.  The floor is the same policy
with no isolation: one plain process per core execs each sample and runs the same
inputs in the same order, stopping at the first wrong output, with the same per-input
CPU limits, samples handed out one at a time, costliest task first (as the plugin
schedules).  Every timed command runs with Python's bytecode cache on, as on a
user's machine, even where the environment sets PYTHONDONTWRITEBYTECODE (pass
--no-bytecode-cache to keep it).  Figures are wall seconds on this machine; peak
RSS is the largest single process (getrusage of waited-for children), not a sum.
The machine may be shared: every timed row notes the 1-minute load average when it ended.
"""
from __future__ import annotations

import argparse
import gzip
import re
import json
import multiprocessing
import os
import pickle
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

# Run from the checkout (``python -m pytest_specbench.perf``): the default data
# root is the shared folder beside it.
REPO = Path.cwd()

from pytest_specbench.benchmarks.contract.evalplus_data import load_evalplus, outputs_match  # noqa: E402
from pytest_specbench.benchmarks.contract.sanitize import clean_sample  # noqa: E402
from pytest_specbench.perf.families import (ALL_CATEGORIES, cife_rows, format_row, postcond_java_rows,  # noqa: E402
                                            postcond_rows, speceval_rows, start_real_judge)


def read_jsonl(path: Path) -> list[dict]:
    opener = gzip.open if path.name.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def contract_ids(data: Path) -> list[str]:
    return [row["task_id"] for row in read_jsonl(data / "contracteval" / "contracteval_rebuilt.jsonl")]


def humaneval_key(task_id: str) -> int:
    return int(task_id.split("/")[1])


# ------------------------------------------------------------------ plugin runs
class RoleMemory(threading.Thread):
    """Peak RSS by role in a pytest run's process tree: the controller, the xdist
    workers, the sandbox zygotes and the sample children.

    Every 0.2 s it reads ``VmHWM`` (the kernel's own high-water mark of resident
    memory) from /proc for each process below the root, so a long-lived
    process's peak is exact; a short-lived child's last 0.2 s may be missed.
    """

    def __init__(self, root: int):
        super().__init__(daemon=True)
        self.root, self.peak_kib, self.stop = root, {}, threading.Event()

    @staticmethod
    def _status(pid: str) -> dict:
        try:
            with open(f"/proc/{pid}/status") as fh:
                return dict(line.split(":", 1) for line in fh.read().splitlines() if ":" in line)
        except OSError:
            return {}

    def _sample(self) -> None:
        parents, hwm, cmd = {}, {}, {}
        for pid in filter(str.isdigit, os.listdir("/proc")):
            st = self._status(pid)
            if "PPid" in st and "VmHWM" in st:
                parents[int(pid)] = int(st["PPid"])
                hwm[int(pid)] = int(st["VmHWM"].split()[0])
                try:
                    cmd[int(pid)] = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
                except OSError:
                    cmd[int(pid)] = ""
        for pid, kib in hwm.items():
            chain, p = [], pid
            while p in parents and p != self.root:
                chain.append(p)
                p = parents[p]
            if p != self.root:
                continue
            if "_zygote" in cmd[pid]:  # the zygote's forked children keep its command line
                role = "sample" if "_zygote" in cmd.get(parents[pid], "") else "zygote"
            elif "xdist" in cmd[pid] or "execnet" in cmd[pid] or ("python" in cmd[pid] and "-c" in cmd[pid].split()):
                role = "worker"
            elif "pytest" in cmd[pid] and "-m pytest" in cmd[pid]:
                role = "controller"
            else:
                role = "sample"
            self.peak_kib[role] = max(self.peak_kib.get(role, 0), kib)

    def run(self) -> None:
        while not self.stop.wait(0.2):
            self._sample()


# Set by --profile DIR (perf/profile.py): every plugin run is recorded by py-spy and
# timed per process by perf/timeline.py; None: runs as they are.
PROFILE: dict = {"dir": None, "rate": 100, "timeline": None, "warm_up": True}


def plugin_run(args: list[str], work: Path, report: Path, profile_name: str | None = None) -> dict:
    """One pytest run under /usr/bin/time: wall time, exit code, peak RSS of its
    largest process, and peak RSS by role (:class:`RoleMemory`).

    With ``PROFILE["dir"]`` set (``--profile DIR``) and a ``profile_name``, the run is
    recorded by py-spy into ``DIR/<name>.txt`` and each of its pytest processes writes
    its timeline into ``DIR/<name>-timeline/`` (perf/timeline.py); both summaries are
    printed.  A profiled run is slower (py-spy's sampling): its figures are for shares."""
    rss = work / "rss.txt"
    argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:benchmark",
            f"--specbench-report={report}", f"--specbench-dir={work / 'state'}", *args]
    env = None
    folder = PROFILE["dir"]
    if folder is not None and profile_name:
        from pytest_specbench.perf import profile as prof

        folder = Path(folder).resolve()
        argv, env = prof.profiled_pytest(argv, folder / f"{profile_name}.txt", PROFILE["rate"])
    elif PROFILE["timeline"] is not None and profile_name:
        from pytest_specbench.perf import profile as prof
        from pytest_specbench.perf import timeline

        folder = Path(PROFILE["timeline"]).resolve() / f"{profile_name}-timeline"
        shutil.rmtree(folder, ignore_errors=True)
        env = prof.env_with_checkout({timeline.ENV: str(folder)})
        argv = [*argv[:3], "-p", "pytest_specbench.perf.timeline", *argv[3:]]
    start = time.perf_counter()
    # %M: the largest process's peak RSS; %U %S: the CPU of the whole tree (every process
    # waited for: the controller, the workers, the zygotes and the sample children).
    proc = subprocess.Popen(["/usr/bin/time", "-f", "%M %U %S", "-o", str(rss), *argv],
                            cwd=work, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    roles = RoleMemory(proc.pid)
    roles.start()
    out, err = proc.communicate()
    wall = time.perf_counter() - start
    roles.stop.set()
    # The run's own output beside its report (the summary line alone says "4 warnings", not which).
    report.with_suffix(".log").write_text(out + ("\n--- stderr ---\n" + err if err else ""))
    tail = [line for line in out.strip().splitlines() if not line.startswith("py-spy>")][-1:] or [err.strip()[-300:]]
    if env is not None and PROFILE["dir"] is not None:
        from pytest_specbench.perf import profile as prof

        print(prof.pytest_report(folder / f"{profile_name}.txt", PROFILE["rate"]), file=sys.stderr, flush=True)
    elif env is not None:
        from pytest_specbench.perf import timeline

        analysis = timeline.format_analysis(timeline.analyse(folder))
        folder.with_name(folder.name + ".txt").write_text(analysis + "\n")
        print(analysis, file=sys.stderr, flush=True)
    figures = rss.read_text().split()[-3:] if rss.exists() else []
    peak_kib = int(figures[0]) if len(figures) == 3 else 0
    cpu = round(float(figures[1]) + float(figures[2]), 2) if len(figures) == 3 else None
    dedupe = re.search(r"specbench: dedupe: (\d+) programs evaluated, (\d+) copies took their verdict, (\d+) from", out)
    return {"wall_s": round(wall, 2), "cpu_s": cpu, "exit": proc.returncode, "summary": tail[0],
            "peak_rss_mb": round(peak_kib / 1024),
            "roles_mb": {k: round(v / 1024) for k, v in sorted(roles.peak_kib.items())}, "load": load(),
            "dedupe": [int(x) for x in dedupe.groups()] if dedupe else None}


def load() -> str:
    """The 1-minute load average now (the machine may be shared: noted beside every figure)."""
    return f"load {os.getloadavg()[0]:.2f}"


def plugin_verdicts(report: Path, bench: str) -> dict[str, list[bool]]:
    tasks = json.loads(report.read_text())["benchmarks"][bench]["tasks"]
    return {t: [s["checks"].get("functional", {}).get("passed") for s in v["samples"]] for t, v in tasks.items()}


def evalplus_run(samples: Path, dataset: str, data_file: Path, work: Path, tasks: list[str] | None) -> dict:
    cmd = [sys.executable, str(Path(__file__).resolve().with_name("run_evalplus.py")), "--samples", str(samples),
           "--dataset", dataset, "--data", str(data_file), "--work-dir", str(work), "--parallel", "2"]
    if tasks:
        (work.parent / f"{work.name}-tasks.txt").write_text("\n".join(tasks) + "\n")
        cmd += ["--task-filter", str(work.parent / f"{work.name}-tasks.txt")]
    work.mkdir(parents=True, exist_ok=True)
    # Once to build its ground-truth cache, once timed (as the plugin is).  The
    # cache is keyed by the data file's md5, and the task subset is the same, so
    # the warm-up needs one sample per task only (W1's full warm-up was 11 min).
    firsts, seen = [], set()
    for row in read_jsonl(samples):
        if row["task_id"] not in seen:
            seen.add(row["task_id"])
            firsts.append(row)
    warm = work.parent / f"{work.name}-warm.jsonl"
    warm.write_text("".join(json.dumps(r) + "\n" for r in firsts))
    subprocess.run([*cmd[:2], "--samples", str(warm), *cmd[4:]], check=True, capture_output=True)
    subprocess.run(cmd, check=True, capture_output=True)
    summary = json.loads((work / f"{dataset}_run.json").read_text())
    verdicts = json.loads(Path(summary["verdicts"]).read_text())
    as_lists = {t: (v["plus"] if isinstance(v["plus"], list) else [v["plus"]]) for t, v in verdicts.items()}
    return {"wall_s": round(summary["evaluate"]["wall_s"] + summary["sanitize"]["wall_s"], 2),
            "results_written_s": summary["evaluate"].get("output_written_s"),
            "peak_rss_mb": round(summary["evaluate"]["peak_rss_kib"] / 1024), "verdicts": as_lists, "load": load()}


# ------------------------------------------------------------------------ floor
_FLOOR: dict = {}


class _Timeout(BaseException):
    pass


def _alarm(signum, frame):
    raise _Timeout()


def _floor_init(tasks, expected, limits):
    _FLOOR.update(tasks=tasks, expected=expected, limits=limits)
    signal.signal(signal.SIGPROF, _alarm)


def _floor_one(job) -> tuple[str, int, bool, float | None]:
    """Exec one sample in this plain process and run its inputs: no isolation at all.

    The fourth field is the limit of the call its CPU timer stopped (a time-out: stopped
    at 1x its limit, decided at once), None otherwise."""
    task_id, index, code = job
    task, expected, limits = _FLOOR["tasks"][task_id], _FLOOR["expected"][task_id], _FLOOR["limits"][task_id]
    # Each sample gets its own copy of the inputs, as in EvalPlus (a process per
    # sample) and the plugin (a fork per sample): a sample that sorts its list
    # argument in place must not change the inputs of the samples after it (it
    # did: HumanEval/20 and /33 verdicts differed from EvalPlus's).
    blobs = _FLOOR.setdefault("blobs", {})
    if task_id not in blobs:  # one MBPP+ task has plus_input {}
        blobs[task_id] = pickle.dumps(list(task["base_input"]) + list(task["plus_input"]), protocol=5)
    inputs = pickle.loads(blobs[task_id])
    try:
        namespace: dict = {}
        # dont_inherit: this file's __future__ flags must not apply to the sample
        exec(compile(code, "<sample>", "exec", dont_inherit=True), namespace)  # noqa: S102 - the floor is the no-isolation baseline
        fn = namespace[task["entry_point"]]
        for inp, exp, limit in zip(inputs, expected, limits):
            signal.setitimer(signal.ITIMER_PROF, limit)
            try:
                out = fn(*inp)
            except _Timeout:
                return task_id, index, False, limit
            finally:
                signal.setitimer(signal.ITIMER_PROF, 0)
            if not outputs_match(task, inp, out, exp):
                return task_id, index, False, None
    except BaseException:  # noqa: BLE001 - any failure of the sample is its failure
        return task_id, index, False, None
    return task_id, index, True, None


def floor_expected(task_ids, state: Path) -> tuple[dict, dict, dict]:
    """Per task: the expected outputs (decoded), the per-input CPU limits (as
    ``functional_check`` sets them) and the reference's cost, from the plugin's own
    cache in ``state``; a task not cached there is left out."""
    from pytest_specbench.execution import wire
    from pytest_specbench.execution.limits import Limits, machine_speed

    from pytest_specbench.benchmarks.contract.evalplus import EXPECTED_FORMAT

    expected, limits, cost = {}, {}, {}
    folders = list((state / "cache" / "expected").glob(f"v{EXPECTED_FORMAT}-*"))
    for task_id in task_ids:
        name = task_id.replace("/", "_") + ".json"
        path = next((f / name for f in folders if (f / name).exists()), None)
        if path is None:
            continue
        # Decoded before the clock starts: the floor compares decoded values in process.
        with open(path.with_suffix(".outputs"), "rb") as fh:
            expected[task_id] = [wire.loads(line) for line in fh]
        work = json.loads(path.read_text())["work"]
        lim = Limits()
        limits[task_id] = [max(lim.call_cpu, lim.reference_factor * w * machine_speed()) for w in work]
        cost[task_id] = sum(work)
    return expected, limits, cost


def floor_run(samples: list[dict], tasks: dict, state: Path, distinct: bool = False, profile_name: str | None = None) -> dict:
    """The floor: expected outputs and limits come from the plugin's own cache (as warm as the plugin).

    ``distinct``: run each distinct program of a task once (the plugin's normal
    form, ``sanitize.program_form``) and give its copies its verdict: the
    samples' own work with dedupe and without isolation, the lower bound of
    the plugin with dedupe.  Keys are computed before the clock starts."""
    expected, limits, cost = floor_expected({s["task_id"] for s in samples}, state)
    jobs = [(s["task_id"], s.get("sample_index", 0), clean_sample(s["solution"], tasks[s["task_id"]]["entry_point"]))
            for s in samples if s["task_id"] in expected]
    copies: dict[tuple, list[int]] = {}
    if distinct:
        from pytest_specbench.benchmarks.contract.sanitize import program_form

        first: dict[tuple, tuple] = {}
        for job in jobs:
            key = (job[0], program_form(job[2]))
            if key in first:
                copies.setdefault(first[key][:2], []).append(job[1])
            else:
                first[key] = job
        jobs = list(first.values())
    # Scheduled as well as the plugin schedules (plugin/scheduling.py): costliest
    # task first by the reference's cost, one sample at a time to whichever
    # process is free.  A floor in plain task order (chunks of 8) was slower than
    # the plugin on MBPP.
    jobs.sort(key=lambda job: -cost[job[0]])
    from pytest_specbench.perf import profile as prof

    spy = Path(PROFILE["dir"]) / f"{profile_name}.txt" if PROFILE["dir"] is not None and profile_name else None
    with prof.SpySelf(spy, PROFILE["rate"]):
        start = time.perf_counter()
        cpu0 = _cpu_here()
        pool = multiprocessing.get_context("fork").Pool(2, initializer=_floor_init, initargs=(tasks, expected, limits),
                                                        maxtasksperchild=200)
        with pool:
            results = list(pool.imap_unordered(_floor_one, jobs, chunksize=1))
            pool.close()
            pool.join()  # reaped: their CPU is in this process's RUSAGE_CHILDREN
        wall = time.perf_counter() - start
        cpu = _cpu_here() - cpu0
    if spy is not None:
        print(prof.report(spy, PROFILE["rate"]), file=sys.stderr, flush=True)
    stopped = [r[3] for r in results if r[3] is not None]
    results += [(task_id, copy, passed, None) for task_id, index, passed, _ in list(results)
                for copy in copies.get((task_id, index), ())]
    verdicts: dict[str, list[bool]] = {}
    for task_id, index, passed, _ in sorted(results, key=lambda r: (r[0], r[1])):
        verdicts.setdefault(task_id, []).append(passed)
    return {"wall_s": round(wall, 2), "cpu_s": round(cpu, 2), "verdicts": verdicts, "load": load(), "jobs": len(jobs),
            "timeouts": f"{len(stopped)} time-out(s) stopped at 1x their limit ({sum(stopped):.1f} CPU s of limits)"}


def _cpu_here() -> float:
    """User + system CPU seconds of this process and of its children it has waited for."""
    import resource

    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def compare(ours: dict[str, list], theirs: dict[str, list]) -> str:
    common = sorted(set(ours) & set(theirs))
    differ = [t for t in common if [bool(x) for x in ours[t]] != [bool(x) for x in theirs[t]]]
    text = f"{len(common)} tasks, {len(differ)} with different per-sample verdicts"
    return text + (f": {', '.join(differ[:10])}" if differ else "")


# --------------------------------------------------------------------- workloads
def subset_samples(src: Path, task_ids: set[str], out: Path, per_task: int = 0) -> Path:
    """The samples of ``task_ids`` (``per_task``: only the first N of each task)."""
    rows, seen = [], {}
    for r in read_jsonl(src):
        if r["task_id"] in task_ids and (not per_task or seen.get(r["task_id"], 0) < per_task):
            seen[r["task_id"]] = seen.get(r["task_id"], 0) + 1
            rows.append(r)
    out.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return out


class Table(list):
    """Rows of the final table, also printed as they are added (a long run keeps what it measured)."""

    def append(self, row: tuple) -> None:
        super().append(row)
        print("  ", " | ".join(str(x) for x in row if x is not None), file=sys.stderr, flush=True)


MODES = {"n2": (["-n", "2"], "plugin -n 2"), "n0": ([], "plugin -n 0"),
         "n2-off": (["-n", "2", "--specbench-dedupe=off"], "plugin -n 2, dedupe off"),
         "n0-off": (["--specbench-dedupe=off"], "plugin -n 0, dedupe off")}


def remeasure_cost(report: Path, bench: str) -> str:
    """What borderline timing cost in one run (issue #33, docs/timing.md): items
    whose call was measured again, the extra runs and their CPU seconds (a run
    stopped at the margin counted at the margin), and the CPU seconds calls that
    timed out spent between their limit and the margin (before, they stopped at the limit)."""
    from pytest_specbench.execution.limits import BORDERLINE_MARGIN

    items = runs = at_margin = walled = 0
    cpu = margin_cpu = 0.0
    for task in json.loads(report.read_text())["benchmarks"][bench]["tasks"].values():
        for s in task["samples"]:
            check = s["checks"].get("functional", {})
            for entry in check.get("borderline", []):
                items += 1
                runs += len(entry["cpu"]) - 1
                cpu += sum(entry["limit"] * BORDERLINE_MARGIN if t is None else t for t in entry["cpu"][1:])
            stopped = re.search(r"over its ([0-9.e+-]+) s CPU limit$", check.get("reason", ""))
            if stopped:
                at_margin += 1
                margin_cpu += (BORDERLINE_MARGIN - 1) * float(stopped.group(1))
            walled += "within its wall-time bound)" in check.get("reason", "")
    return (f"{items} borderline item(s) measured again: {runs} extra run(s), {cpu:.1f} CPU s; "
            f"{at_margin} time-out(s) stopped by the CPU timer at {BORDERLINE_MARGIN:g}x their limit: "
            f"+{margin_cpu:.1f} CPU s; {walled} failing on wall stops (no run within its wall bound)")


def functional_workload(name, samples: Path, dataset: str, data: Path, work: Path, table: list, tasks_filter=None,
                        modes=("n2", "n2-off"), evalplus=True, floor=True, plugin=True, floor_distinct=False,
                        per_task: int = 0) -> None:
    bench = "evalplus"
    data_file = next((data / "evalplus").glob("HumanEvalPlus*" if dataset == "humaneval" else "MbppPlus*"))
    tasks = load_evalplus(data_file)
    if tasks_filter is not None:
        samples = subset_samples(samples, set(tasks_filter), work / f"{name}-samples.jsonl", per_task)
    base = ["--specbench=evalplus", f"--specbench-data={data}", f"--model=replay:{samples}",
            "--specbench-checks=functional", "--specbench-k=1,10,100"]
    saved = work / f"{name}-runs.json"  # the plugin rows, for --parts without "plugin"
    if not plugin:
        if not saved.exists():
            sys.exit(f"run.py: {saved} not found: run {name} with the plugin part first")
        runs = json.loads(saved.read_text())
        ours = plugin_verdicts(work / f"{name}-{modes[0]}.json", bench)
        _compare_rows(name, samples, dataset, data_file, work, table, tasks, tasks_filter, runs, ours, evalplus, floor,
                      floor_distinct)
        return
    # Warm-up: the canonical outputs and reference costs, computed once per task
    # (the reference model runs one item per task; the samples are not run).
    if PROFILE["warm_up"]:
        plugin_run(["--specbench=evalplus", f"--specbench-data={data}", "--model=reference",
                    "--specbench-checks=functional", "-k", "HumanEval" if dataset == "humaneval" else "Mbpp", "-n", "2",
                    "--specbench-result-cache=off"], work, work / f"{name}-warm.json")
    runs = {}
    for mode in modes:
        extra, label = MODES[mode]
        runs[mode] = plugin_run(base + extra + ["--specbench-result-cache=off"], work, work / f"{name}-{mode}.json",
                                profile_name=f"{name}-{mode}")
        roles = runs[mode]["roles_mb"]
        if runs[mode]["dedupe"] and not mode.endswith("-off") and not any(r[:2] == (name, "distinct programs / samples")
                                                                           for r in table):
            evaluated, copies, _ = runs[mode]["dedupe"]
            table.append((name, "distinct programs / samples", f"{evaluated}/{evaluated + copies}", None,
                          f"{100 * evaluated / (evaluated + copies):.1f}% evaluated, {copies} copies took a verdict"))
        table.append((name, label, runs[mode]["wall_s"],
                      runs[mode]["peak_rss_mb"], runs[mode]["summary"] + f"; {runs[mode]['load']}; "
                      f"CPU {runs[mode]['cpu_s']} s (all processes); peak MB by process: "
                      + ", ".join(f"{k} {v}" for k, v in roles.items())))
        if name != "W2":
            runs[mode]["remeasure"] = remeasure_cost(work / f"{name}-{mode}.json", bench)
            table.append((name, f"re-measurement ({mode})", "-", None, runs[mode]["remeasure"]))
        if name == "W2":
            biggest = max((v for k, v in roles.items() if k in ("controller", "worker", "zygote")), default=0)
            table.append((name, "peak RSS, harness processes", biggest, None,
                          f"controller {roles.get('controller')}, largest worker {roles.get('worker')}, "
                          f"largest zygote {roles.get('zygote')} MB (target < 500 each); "
                          f"largest sample child {roles.get('sample')} MB (the sample's own memory)"))
    saved.write_text(json.dumps(runs))
    ours = plugin_verdicts(work / f"{name}-{modes[0]}.json", bench)
    if "n2" in runs and "n0" in runs:
        table.append((name, "-n 0 / -n 2", round(runs["n0"]["wall_s"] / runs["n2"]["wall_s"], 2), None, "speed-up (target >= 1.8)"))
    if "n2" in runs and "n2-off" in runs:
        on, off = (json.loads((work / f"{name}-{m}.json").read_text())["benchmarks"][bench]["tasks"] for m in ("n2", "n2-off"))
        table.append((name, "dedupe off / on (-n 2)", round(runs["n2-off"]["wall_s"] / runs["n2"]["wall_s"], 2), None,
                      f"speed-up; {compare(ours, plugin_verdicts(work / f'{name}-n2-off.json', bench))}; "
                      f"every per-sample result (details, messages) identical: {on == off}"))
    _compare_rows(name, samples, dataset, data_file, work, table, tasks, tasks_filter, runs, ours, evalplus, floor,
                  floor_distinct)


def _compare_rows(name, samples, dataset, data_file, work, table, tasks, tasks_filter, runs, ours, evalplus, floor,
                  floor_distinct=False):
    if evalplus:
        ev = evalplus_run(samples, dataset, data_file, work / f"{name}-evalplus", tasks_filter)
        table.append((name, "EvalPlus 0.3.1 --parallel 2", ev["wall_s"], ev["peak_rss_mb"],
                      f"results written at {ev['results_written_s']} s; {ev['load']}; {compare(ours, ev['verdicts'])}"))
        table.append((name, "EvalPlus / plugin", round(ev["wall_s"] / runs["n2"]["wall_s"], 2), None, "speed-up"))
        if "n2-off" in runs:
            table.append((name, "EvalPlus / plugin, dedupe off", round(ev["wall_s"] / runs["n2-off"]["wall_s"], 2),
                          None, "speed-up"))
    if floor:
        fl = floor_run(read_jsonl(samples), tasks, work / "state", profile_name=f"{name}-floor")
        table.append((name, "floor (no isolation, 2 processes)", fl["wall_s"], None,
                      f"every sample, not deduplicated; {fl['load']}; CPU {fl['cpu_s']} s; {fl['timeouts']}; "
                      f"{compare(ours, fl['verdicts'])}"))
        table.append((name, "plugin / floor", round(runs["n2"]["wall_s"] / fl["wall_s"], 2), None, "dedupe on"))
        if runs["n2"].get("cpu_s") and fl.get("cpu_s"):
            table.append((name, "plugin / floor, CPU s", round(runs["n2"]["cpu_s"] / fl["cpu_s"], 2), None,
                          f"{runs['n2']['cpu_s']} / {fl['cpu_s']} (user + sys, every process; "
                          "on a loaded machine the comparable figure)"))
        if "n2-off" in runs:
            table.append((name, "plugin / floor, dedupe off", round(runs["n2-off"]["wall_s"] / fl["wall_s"], 2), None, ""))
    if floor_distinct:
        fl = floor_run(read_jsonl(samples), tasks, work / "state", distinct=True)
        table.append((name, "floor over distinct programs", fl["wall_s"], None,
                      f"{fl['jobs']} programs run, no isolation: the samples' own work, the bound of the plugin "
                      f"with dedupe; {fl['load']}; {compare(ours, fl['verdicts'])}"))
        table.append((name, "plugin / floor over distinct programs", round(runs["n2"]["wall_s"] / fl["wall_s"], 2), None,
                      "the isolation's cost"))


def _mirror_folder() -> Path | None:
    for base in (REPO.parent, REPO.parent.parent):
        if (base / ".mirror").is_dir():
            return base / ".mirror"
    return None


def family_workload(name: str, args, data: Path, work: Path) -> list[dict]:
    """SPECEVAL, POSTCOND, CIFE (perf/families.py); rows printed as they come."""
    naive = not args.no_naive
    if name == "SPECEVAL":
        rows = speceval_rows(data / "specgenbench", work / "speceval", programs=args.speceval_programs,
                             categories=tuple(c.strip() for c in args.speceval_categories.split(",") if c.strip()),
                             naive=naive)
    elif name == "POSTCOND-JAVA":
        rows = postcond_java_rows(work / "postcond-java", rounds=args.postcond_java_rounds)
    elif name == "POSTCOND":
        repos = args.postcond_repos or _mirror_folder()
        if repos is None or not (repos / "keon+algorithms").exists():
            sys.exit("run.py: POSTCOND needs a keon/algorithms mirror: pass --postcond-repos=DIR "
                     "(the library's `fetch github:keon/algorithms` leaves DIR/keon+algorithms)")
        rows = postcond_rows(args.postcond_data or data / "postcondbench" / "gpt-5--v2-all", repos,
                             work / "postcond", naive=naive)
    else:
        server = None
        url, pid, judge = args.cife_judge_url, args.cife_judge_pid, args.cife_judge_name
        if url is None:
            server, judge = start_real_judge(work)
            url, pid = server.url, server.process.pid
        try:
            rows = cife_rows(data, work / "cife", url, pid, judge, tasks=args.cife_tasks, naive=naive,
                             judge_retries=args.cife_judge_retries)
        finally:
            if server is not None:
                server.stop()
    for row in rows:
        print(format_row(row), file=sys.stderr, flush=True)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workloads", default="W4,W3",
                    help="comma-separated: W1,W2,W3,W4,SPECEVAL,POSTCOND,POSTCOND-JAVA,CIFE")
    ap.add_argument("--data", type=Path, default=REPO.parent / "shared" / "datasets")
    ap.add_argument("--work", type=Path, default=Path("/tmp/specbench-perf"))
    ap.add_argument("--no-evalplus", action="store_true", help="skip the EvalPlus runs")
    ap.add_argument("--parts", default="plugin,evalplus,floor",
                    help="W1/W4 only: which of plugin, evalplus, floor to run (without plugin, its rows "
                         "come from the last run's WORK/<workload>-runs.json)")
    ap.add_argument("--w1-modes", default="n2,n2-off,n0",
                    help="W1's plugin runs, of n2, n2-off, n0, n0-off (-n 2 / -n 0, dedupe on / off)")
    ap.add_argument("--no-bytecode-cache", action="store_true",
                    help="keep PYTHONDONTWRITEBYTECODE as the environment sets it (see below)")
    ap.add_argument("--speceval-programs", type=int, default=0, help="SPECEVAL: the first N programs (0: all 116)")
    ap.add_argument("--speceval-categories", default=",".join(ALL_CATEGORIES),
                    help="SPECEVAL: categories (default original and all five perturbations)")
    ap.add_argument("--postcond-data", type=Path, default=None,
                    help="POSTCOND: a task folder (default DATA/postcondbench/gpt-5--v2-all)")
    ap.add_argument("--postcond-repos", type=Path, default=None,
                    help="POSTCOND: the folder holding keon+algorithms (default the .mirror folder beside the checkout)")
    ap.add_argument("--postcond-java-rounds", type=int, default=2,
                    help="POSTCOND-JAVA: pairs of runs, plain JVM starts then with the AppCDS archives")
    ap.add_argument("--cife-tasks", type=int, default=1000, help="CIFE: the first N tasks (default all 1,000)")
    ap.add_argument("--cife-judge-url", default=None,
                    help="CIFE: an OpenAI-compatible judge already running (with --cife-judge-pid for its CPU); "
                         "default: start tests/realmodel's SmolLM2-135M server")
    ap.add_argument("--cife-judge-pid", type=int, default=None)
    ap.add_argument("--cife-judge-retries", type=int, default=None,
                    help="CIFE: the plugin's --cife-judge-retries (default its own, 2; 0 asks what upstream asks)")
    ap.add_argument("--cife-judge-name", default="smollm2")
    ap.add_argument("--no-naive", action="store_true", help="SPECEVAL/POSTCOND/CIFE: skip the naive baselines")
    ap.add_argument("--w4-sets", default="humaneval,mbpp", help="W4 only: which greedy sets (humaneval, mbpp)")
    ap.add_argument("--w4-modes", default="n2,n2-off", help="W4 only: the plugin's runs, of n2, n2-off, n0, n0-off")
    ap.add_argument("--w1-tasks", default=None,
                    help="W1 only: a number N (the first N of its 40 tasks) or comma-separated task ids "
                         "(a slice to profile; W2's parts per sample are W1's)")
    ap.add_argument("--w1-samples", type=int, default=0,
                    help="W1 only: the first N samples of each task (0: all 200); with --w1-tasks, a slice whose "
                         "parts can be compared at two sample counts (what scales with samples)")
    ap.add_argument("--profile", type=Path, default=None,
                    help="W1/W2/W4: record each timed plugin run (and the floor) with py-spy into DIR and write "
                         "per-process timelines (perf/profile.py, perf/timeline.py); prints the shares. "
                         "A profiled run is slower: its figures are for shares, not for the table")
    ap.add_argument("--profile-rate", type=int, default=100, help="--profile: py-spy's samples per second")
    ap.add_argument("--timeline", type=Path, default=None,
                    help="W1/W2/W4: write each timed plugin run's per-process timelines into DIR (perf/timeline.py: "
                         "start-up, collection, items, the sandbox's CPU) without py-spy; prints their analysis")
    ap.add_argument("--no-warm-up", action="store_true",
                    help="W1/W2/W4: skip the reference's warm-up run (--work's state already holds the expected "
                         "outputs, say a copy of an earlier work folder's: its runs are then compared on one state)")
    args = ap.parse_args()
    PROFILE["warm_up"] = not args.no_warm_up
    # Some sandboxes set PYTHONDONTWRITEBYTECODE=1.  Then every Python process
    # compiles every module it imports from source, and pytest re-does its
    # assertion rewriting of plugin modules (ours, hypothesis'): ~0.4 s per pytest
    # process here, paid by the controller and each xdist worker.  Users have
    # Python's default (compile once, cache in __pycache__), so every timed
    # command (plugin, EvalPlus) runs with it unless asked otherwise.
    bytecode = "PYTHONDONTWRITEBYTECODE kept as set" if args.no_bytecode_cache else "bytecode cache on (Python's default)"
    if not args.no_bytecode_cache and os.environ.pop("PYTHONDONTWRITEBYTECODE", None) is not None:
        bytecode += "; this machine's PYTHONDONTWRITEBYTECODE=1 unset for every timed command"
    data, work = args.data.resolve(), args.work
    if not (data / "contracteval").is_dir():
        sys.exit(f"run.py: no data root at {data} (pass --data)")
    work.mkdir(parents=True, exist_ok=True)
    wanted = [w.strip().upper() for w in args.workloads.split(",") if w.strip()]
    if args.profile is not None:
        PROFILE.update(dir=args.profile.resolve(), rate=args.profile_rate)
        args.profile.mkdir(parents=True, exist_ok=True)
    elif args.timeline is not None:
        PROFILE.update(timeline=args.timeline.resolve())
        args.timeline.mkdir(parents=True, exist_ok=True)
    parts = {p.strip() for p in args.parts.split(",") if p.strip()}
    if parts - {"plugin", "evalplus", "floor"}:
        sys.exit(f"run.py: --parts takes plugin, evalplus, floor (got {args.parts!r})")
    evalplus = "evalplus" in parts and not args.no_evalplus
    table = Table()
    family_rows: list[dict] = []
    samples_dir = data / "samples"
    humaneval_contract = sorted((t for t in contract_ids(data) if t.startswith("HumanEval/")), key=humaneval_key)
    for name in wanted:
        t0 = time.perf_counter()
        if name == "W4":
            sets = {x.strip().lower() for x in args.w4_sets.split(",") if x.strip()}
            if sets - {"humaneval", "mbpp"}:
                sys.exit(f"run.py: --w4-sets takes humaneval, mbpp (got {args.w4_sets!r})")
            if "humaneval" in sets:
                functional_workload("W4-HumanEval", samples_dir / "humaneval-chatgpt-temp0.0.jsonl", "humaneval", data,
                                    work, table, evalplus=evalplus, floor="floor" in parts, plugin="plugin" in parts,
                                    modes=tuple(m.strip() for m in args.w4_modes.split(",")))
            if "mbpp" in sets:
                functional_workload("W4-MBPP", samples_dir / "mbpp-gpt-3.5-turbo-temp0.0.jsonl", "mbpp", data,
                                    work, table, evalplus=evalplus, floor="floor" in parts, plugin="plugin" in parts,
                                    modes=tuple(m.strip() for m in args.w4_modes.split(",")))
        elif name in ("W1", "W2"):
            chosen = humaneval_contract[:40] if name == "W1" else humaneval_contract
            if name == "W1" and args.w1_tasks:
                chosen = (chosen[:int(args.w1_tasks)] if args.w1_tasks.isdigit()
                          else [t.strip() for t in args.w1_tasks.split(",") if t.strip()])
            functional_workload(name, samples_dir / "humaneval-chatgpt-temp0.8-n200.jsonl.gz", "humaneval", data,
                                work, table, tasks_filter=chosen, per_task=args.w1_samples if name == "W1" else 0,
                                modes=tuple(m.strip() for m in args.w1_modes.split(",")) if name == "W1" else ("n2",),
                                evalplus=name == "W1" and evalplus, floor=name == "W1" and "floor" in parts,
                                plugin="plugin" in parts,
                                floor_distinct=name == "W2" and "floor" in parts)
        elif name == "W3":
            base = ["--specbench=contract", f"--specbench-data={data}", "--model=reference"]
            # Expected outputs only: the result cache stays empty for the "first run" below.
            plugin_run(base + ["-n", "2", "--specbench-result-cache=off"], work, work / "W3-warm.json")
            walls = {}
            for mode, extra in (("n0", []), ("n2", ["-n", "2"])):
                r = plugin_run(base + extra + ["--specbench-result-cache=off"], work, work / f"W3-{mode}.json")
                table.append(("W3", f"plugin -{'n 0' if mode == 'n0' else 'n 2'}", r["wall_s"], r["peak_rss_mb"], f"{r['summary']}; {r['load']}"))
                walls[mode] = r["wall_s"]
            table.append(("W3", "-n 0 / -n 2", round(walls["n0"] / walls["n2"], 2), None, "speed-up (target >= 1.8)"))
            # An honest first run: no verdict left over from an earlier run of this script.
            shutil.rmtree(work / "state" / "cache" / "results", ignore_errors=True)
            first = plugin_run(base + ["-n", "2", "--specbench-result-cache=readwrite"], work, work / "W3-first.json")
            second = plugin_run(base + ["-n", "2"], work, work / "W3-second.json")
            same = (json.loads((work / "W3-first.json").read_text())["benchmarks"]
                    == json.loads((work / "W3-second.json").read_text())["benchmarks"])
            table.append(("W3", "first run (result cache filled)", first["wall_s"], first["peak_rss_mb"], f"{first['summary']}; {first['load']}"))
            table.append(("W3", "second identical run", second["wall_s"], second["peak_rss_mb"],
                          f"{100 * second['wall_s'] / first['wall_s']:.1f}% of the first (target <= 5%); {second['load']}; "
                          f"report identical: {same}"))
        elif name in ("SPECEVAL", "POSTCOND", "POSTCOND-JAVA", "CIFE"):
            family_rows += family_workload(name, args, data, work)
        else:
            sys.exit(f"run.py: unknown workload {name!r}")
        print(f"[{name} done in {time.perf_counter() - t0:.0f} s]", file=sys.stderr)
    print(f"\n{bytecode}; {os.cpu_count()} CPUs")
    if family_rows:
        (work / "families.json").write_text(json.dumps(family_rows, indent=1))
        print("\n".join(format_row(r) for r in family_rows))
        if not table:
            return
    print(f"{'workload':<14} {'what':<34} {'value':>9} {'peak MB':>8}  notes")
    for row in table:
        value = f"{row[2]:.2f}" if isinstance(row[2], float) else str(row[2])
        print(f"{row[0]:<14} {row[1]:<34} {value:>9} {str(row[3] or ''):>8}  {row[4]}")


if __name__ == "__main__":
    main()
