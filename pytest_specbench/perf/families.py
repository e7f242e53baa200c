"""Rows of the families beyond EvalPlus (issue #28): SPECEVAL, POSTCOND, CIFE.

    python -m pytest_specbench.perf --workloads SPECEVAL,POSTCOND,CIFE [--speceval-programs N] [--cife-tasks N]

Each workload runs the plugin (``-n 2``, fresh state folder or a warm one, as
said per workload) and, beside it, a *naive baseline* run the way upstream runs
the family (``perf/naive.py``: one process per program / mutant / judge request,
no cache, no dedupe, no sandbox), and prints for both: wall time, CPU, the load
average before and after (``/proc/loadavg``), peak RSS, and the CPU share of the
toolchain against the harness.

How the toolchain share is measured (:class:`TreeCpu`), not estimated:

* the run is a child process of this script; every 0.1 s a sampler reads
  ``/proc/PID/stat`` (utime+stime) and ``VmHWM`` of every process below it and
  gives each a role: the run's root process (the pytest controller, or the
  naive driver), its ``python -c`` children (the xdist workers) and the sandbox
  zygotes (``_zygote`` processes whose parent is not a zygote) are the
  **harness**; everything else below the root (javac, java and the warm javac
  server, the repository venv's pytest, a zygote's forked job child) is the
  **toolchain** side.
* the run's total CPU is exact: the root is waited for with ``WNOWAIT`` and its
  ``/proc`` entry read as a zombie, whose utime/stime/cutime/cstime hold its own
  CPU and that of every descendant reaped below it.  The root's own CPU is
  exact too; the other harness processes (workers, zygotes) are long-lived and
  their CPU is their last sample (at most 0.1 s of each one's CPU after the last
  sample is missed: a few tenths of a second per run).
* toolchain CPU = total - harness CPU.  So the short-lived processes the
  sampler never saw (a javac of 0.3 s) are counted, and on the toolchain side;
  so is the forked job child's own set-up before it execs the tool (rlimits,
  namespaces: sandbox glue, small, not separable from outside).  The sampled
  toolchain processes are listed by command name as a cross-check (a lower
  bound of the toolchain figure).
* CIFE: the toolchain is the judge, a llama-cpp-python server (SmolLM2-135M)
  started by this script outside the run's tree; its CPU is read from
  ``/proc`` before and after the run (exact: it lives throughout).  The whole
  pytest tree is the harness there.

Shares are of the CPU total (toolchain + harness = total); they are not shares
of the wall time (two cores work in parallel).
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

TICK = os.sysconf("SC_CLK_TCK")
PERF_DIR = Path(__file__).resolve().parent
ROW_FIELDS = ("workload", "what", "wall_s", "cpu_s", "toolchain_cpu_s", "harness_cpu_s", "toolchain_share",
              "harness_share", "peak_rss_mb", "peak_rss_by_role_mb", "loadavg_before", "loadavg_after", "units",
              "unit", "wall_per_unit_s", "toolchain_seen", "cpu_by_command", "processes_by_command", "summary")
ALL_CATEGORIES = ("original", "def-use-break", "if-else-flip", "independent-swap", "name-random", "name-shuffle")
KINDS = ("judgement", "selection", "infilling", "generation")


def loadavg() -> str:
    """``/proc/loadavg`` as it is (1, 5, 15-minute averages): the machine is shared."""
    try:
        return Path("/proc/loadavg").read_text().strip()
    except OSError:
        return "?"


def _stat(pid: int) -> tuple[int, int, int, str, str] | None:
    """(ppid, own CPU ticks, reaped children's CPU ticks, comm, start time) of a process."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            data = fh.read()
    except OSError:
        return None
    right = data.rindex(b")")
    comm = data[data.index(b"(") + 1:right].decode(errors="replace")
    f = data[right + 2:].split()
    return int(f[1]), int(f[11]) + int(f[12]), int(f[13]) + int(f[14]), comm, f[19].decode()


def _hwm_kib(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


class TreeCpu(threading.Thread):
    """CPU and peak memory of a process tree by role (see the module's docstring)."""

    def __init__(self, root: int, interval: float = 0.1):
        super().__init__(daemon=True)
        self.root, self.interval, self.stop = root, interval, threading.Event()
        self.procs: dict[tuple[int, str], dict] = {}  # (pid, start time) -> role, comm, cpu ticks, hwm
        self._cmd: dict[tuple[int, str], str] = {}
        # Processes of the last listing of /proc found outside the tree: not read again.  A
        # process never moves into another's tree; a pid is used again only after the kernel's
        # counter has gone round (pid_max new processes), and one gone from a listing leaves
        # this set.  Reading every process's stat at each sample was ~3.7 ms a sample on a
        # machine of 120 processes (~37 ms of this process's CPU a second of the run).
        self._outside: set[int] = set()

    def role(self, pid: int, ppid: int, cmd: str, parent_cmd: str) -> str:
        if pid == self.root:
            return "controller"
        if "_zygote" in cmd:
            return "job" if "_zygote" in parent_cmd else "zygote"
        if ppid == self.root and " -c " in f" {cmd} " and "python" in cmd.split(" ")[0]:
            return "worker"
        return "toolchain"

    def sample(self) -> None:
        listed = {int(name) for name in os.listdir("/proc") if name.isdigit()}
        self._outside &= listed
        stats = {}
        for pid in listed - self._outside:
            st = _stat(pid)
            if st is not None:
                stats[pid] = st
        for pid, (ppid, cpu, _, comm, start) in stats.items():
            p, depth = pid, 0
            while p != self.root and p in stats and depth < 64:  # a parent outside is not in stats
                p, depth = stats[p][0], depth + 1
            if p != self.root:
                if depth < 64:
                    self._outside.add(pid)
                continue
            key = (pid, start)
            entry = self.procs.get(key)
            if entry is None:
                cmd = self._cmd[key] = _cmdline(pid)
                parent = stats.get(ppid)
                parent_cmd = self._cmd.get((ppid, parent[4]), "") if parent else ""
                entry = self.procs[key] = {"role": self.role(pid, ppid, cmd, parent_cmd), "comm": comm,
                                           "cpu": 0, "hwm": 0}
            elif (entry["role"] in ("worker", "toolchain") and ppid == self.root
                  and (cmd := _cmdline(pid)) and cmd != self._cmd.get(key)):
                # a child of the driver first seen between its fork and its exec (the driver's
                # command line, which `comm` does not tell apart when both are python: a pytest
                # driver's xdist worker looked like a tool, a `-c` driver's tool like a worker):
                # what it exec'd decides
                self._cmd[key] = cmd
                entry["role"] = self.role(pid, ppid, cmd, "")
            elif entry["role"] in ("job", "zygote") and comm != entry["comm"]:
                # the job child exec'd its tool; a process first seen as a zygote that exec'd
                # (a sandboxed tool caught before its exec) is no zygote either
                entry["role"] = "toolchain"
                self._cmd[key] = _cmdline(pid) or self._cmd.get(key, "")  # named by the tool, not the zygote
            entry["comm"] = comm
            entry["cpu"] = max(entry["cpu"], cpu)
            entry["hwm"] = max(entry["hwm"], _hwm_kib(pid))

    def run(self) -> None:
        while not self.stop.wait(self.interval):
            self.sample()


def measure(argv: list[str], cwd: Path, env: dict | None = None, judge_pid: int | None = None,
            log: Path | None = None) -> dict:
    """Run ``argv`` and account its CPU by role (module docstring)."""
    before = loadavg()
    judge0 = _stat(judge_pid)[1] if judge_pid else 0
    log = log or cwd / "run.log"
    with open(log, "wb") as out:
        start = time.perf_counter()
        proc = subprocess.Popen(argv, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT)
        tree = TreeCpu(proc.pid)
        tree.start()
        os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOWAIT)  # a zombie: its /proc entry is still there
        wall = time.perf_counter() - start
        tree.stop.set()
        tree.join()
        root = _stat(proc.pid)
        proc.wait()
    judge1 = _stat(judge_pid)[1] if judge_pid else 0
    after = loadavg()
    own, children = (root[1], root[2]) if root else (0, 0)
    total_tree = (own + children) / TICK
    harness = own / TICK + sum(p["cpu"] for p in tree.procs.values() if p["role"] in ("worker", "zygote")) / TICK
    seen: dict[str, float] = {}
    peaks: dict[str, int] = {}
    for p in tree.procs.values():
        if p["role"] in ("toolchain", "job"):
            name = p["comm"] if p["role"] == "toolchain" else "job child (before exec)"
            seen[name] = seen.get(name, 0.0) + p["cpu"] / TICK
        peaks[p["role"]] = max(peaks.get(p["role"], 0), p["hwm"])
    if judge_pid:  # CIFE: the judge is the toolchain, the whole tree the harness
        toolchain, harness = (judge1 - judge0) / TICK, total_tree
        seen = {"judge server": toolchain}
        peaks["judge"] = _hwm_kib(judge_pid)
    else:
        harness = min(harness, total_tree)
        toolchain = total_tree - harness
    text = log.read_text(errors="replace").strip().splitlines()
    by_command: dict[str, float] = {}
    count_by_command: dict[str, int] = {}
    for key, p in tree.procs.items():
        label = command_label(tree._cmd.get(key, ""), p["comm"])
        by_command[label] = by_command.get(label, 0.0) + p["cpu"] / TICK
        count_by_command[label] = count_by_command.get(label, 0) + 1
    return {"cpu_by_command": {k: round(v, 2) for k, v in sorted(by_command.items(), key=lambda kv: -kv[1])},
            "processes_by_command": dict(sorted(count_by_command.items(), key=lambda kv: -kv[1])),
            "wall_s": round(wall, 2), "cpu_s": round(toolchain + harness, 2), "toolchain_cpu_s": round(toolchain, 2),
            "harness_cpu_s": round(harness, 2), "exit": proc.returncode,
            "peak_rss_mb": round(max(peaks.values(), default=0) / 1024),
            "peak_rss_by_role_mb": {k: round(v / 1024) for k, v in sorted(peaks.items())},
            "toolchain_seen": {k: round(v, 2) for k, v in sorted(seen.items(), key=lambda kv: -kv[1])},
            "loadavg_before": before, "loadavg_after": after, "summary": text[-1][:200] if text else ""}


def command_label(cmd: str, comm: str) -> str:
    """A short name for a process's command line: ``python -m pip``, ``python -m pytest
    (repository venv)``, ``javac``...  (the role by command of :func:`measure`'s
    ``cpu_by_command``, which sums the sampled CPU of each process seen, so a process
    shorter than the sampling interval is missing from it)."""
    argv = cmd.split()
    if not argv:
        return comm
    label = os.path.basename(argv[0])
    for flag in ("-cp", "-classpath", "--class-path"):
        if label == "java" and flag in argv[:-2]:  # the JVM by its main class: a JML runner, the warm javac...
            main = argv[argv.index(flag) + 2]
            return label if main.startswith("-") else f"{label} {main}"
    if label == "py-spy":
        return "py-spy (the profiler, --profile)"
    if "__pip-runner__" in cmd:
        return label + " -m pip (pip's runner in the target interpreter)"
    if "-m" in argv[:-1]:
        label += " -m " + argv[argv.index("-m") + 1]
        if argv[argv.index("-m") + 1] == "pytest":
            label += " (the harness)" if any(a.startswith("--specbench") for a in argv) else " (repository venv)"
    elif "-c" in argv[:-1]:
        label += " -c (xdist worker)" if "exec(eval" in cmd else " -c"
    if "_zygote" in cmd:
        label += " (sandbox zygote or its job child)"
    return label


def make_row(workload: str, what: str, m: dict, units: int, unit: str) -> dict:
    total = m["cpu_s"] or 0.0
    row = {"workload": workload, "what": what, **{k: m[k] for k in m if k in ROW_FIELDS}, "units": units, "unit": unit,
           "wall_per_unit_s": round(m["wall_s"] / units, 3) if units else None,
           "toolchain_share": round(m["toolchain_cpu_s"] / total, 3) if total else 0.0,
           "harness_share": round(m["harness_cpu_s"] / total, 3) if total else 0.0}
    if m.get("exit"):
        row["summary"] = f"exit {m['exit']}: {row['summary']}"
    return row


def format_row(row: dict) -> str:
    seen = ", ".join(f"{k} {v:g}" for k, v in list(row["toolchain_seen"].items())[:4])
    per = f"{row['wall_per_unit_s']:g} s/{row['unit']}" if row.get("wall_per_unit_s") is not None else ""
    return (f"{row['workload']:<9} {row['what']:<44} wall {row['wall_s']:>8.1f} s  CPU {row['cpu_s']:>8.1f} s  "
            f"toolchain {100 * row['toolchain_share']:5.1f}% ({row['toolchain_cpu_s']:.1f} s)  harness "
            f"{100 * row['harness_share']:5.1f}% ({row['harness_cpu_s']:.1f} s)  peak {row['peak_rss_mb']} MB  "
            f"{row['units']} x {row['unit']}, {per}\n{'':<10}load before [{row['loadavg_before']}] after "
            f"[{row['loadavg_after']}]; peak MB by role {row['peak_rss_by_role_mb']}; toolchain processes seen: "
            f"{seen}; {row['summary']}")


def _pytest(work: Path, state: Path, report: Path, args: list[str]) -> list[str]:
    return [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:benchmark",
            f"--specbench-dir={state}", f"--specbench-report={report}", *args]


def _env() -> dict:
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # as on a user's machine (run.py's note)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(PERF_DIR.parents[1]), env.get("PYTHONPATH")]))
    return env


# ------------------------------------------------------------------ SpecEval
def speceval_programs(root: Path, limit: int = 0) -> list[str]:
    from pytest_specbench.benchmarks.speceval.tasks import load_programs
    from pytest_specbench.benchmarks.speceval.jmlspec import spec_blocks

    names = [p.name for p in load_programs(root) if spec_blocks(p.source)]
    return names[:limit] if limit else names


def speceval_rows(root: Path | None, work: Path, programs: int = 0, categories=ALL_CATEGORIES,
                  kinds=KINDS, naive: bool = True, jobs: int = 2) -> list[dict]:
    """SpecEval with the reference, dynamic validation, fresh state (every ground
    truth, mutant and generated spec really checked), beside one javac + one java
    per (program, category) checking the ground truth (naive.py speceval).

    ``root``: a SpecGenBench folder (``.../specgenbench``), or None for the bundled suite."""
    bundled = PERF_DIR.parents[1] / "benchmarks" / "speceval"
    src = root if root is not None else bundled
    names = speceval_programs(src, programs)
    work.mkdir(parents=True, exist_ok=True)
    tasks = [f"{n}/{k}/{c}" for n in names for k in kinds for c in categories]
    (work / "speceval-tasks.txt").write_text(",".join(tasks))
    state = work / "speceval-state"
    shutil.rmtree(state, ignore_errors=True)
    cats = [c for c in categories if c != "original"]
    args = ["--specbench=speceval", "--model=reference", "--speceval-validation=dynamic",
            f"--speceval-perturbation={','.join(cats) if cats else 'none'}", "--specbench-result-cache=off",
            f"--specbench-tasks={','.join(tasks)}"]
    if root is not None:
        args.append(f"--specbench-data={root}")
    if jobs:
        args += ["-n", str(jobs)]
    m = measure(_pytest(work, state, work / "speceval-report.json", args), work, _env(), log=work / "speceval-plugin.log")
    rows = [make_row("SPECEVAL", f"plugin -n {jobs}, fresh state", m, len(names) * len(categories), "program-category")]
    if naive:
        argv = [sys.executable, "-m", "pytest_specbench.perf.naive", "speceval", "--root", str(src),
                "--programs", ",".join(names), "--categories", ",".join(categories), "--out", str(work / "speceval-naive.json")]
        m = measure(argv, work, _env(), log=work / "speceval-naive.log")
        rows.append(make_row("SPECEVAL", "naive: javac + java per program-category", m,
                             len(names) * len(categories), "program-category"))
    return rows


# ----------------------------------------------------------------- PostcondBench
def postcond_rows(data: Path | None, repos: Path | None, work: Path, naive: bool = True, jobs: int = 2,
                  select: str | None = None, warm_up: bool = True) -> list[dict]:
    """PostcondBench with the reference postconditions (correct + complete: every
    mutant run), warm state (the repository's venv built by a warm-up run; result
    cache off), beside one plain ``pytest`` process per (task, original|mutant) in
    a scratch copy of the checkout (naive.py postcond)."""
    work.mkdir(parents=True, exist_ok=True)
    state = work / "postcond-state"
    args = ["--specbench=postcond", "--model=reference", "--specbench-result-cache=off"]
    if data is not None:
        args.append(f"--specbench-data={data}")
    if repos is not None:
        args.append(f"--postcond-repos={repos}")
    if select:
        args += ["-k", select]
    # The warm-up builds the repository's venv (pip) and exports the checkout: not what is timed.
    # (The bundled tasks run with the harness's interpreter and need none: warm_up=False.)
    if warm_up:
        warm = measure(_pytest(work, state, work / "postcond-warm.json", args + (["-n", str(jobs)] if jobs else [])),
                       work, _env(), log=work / "postcond-warm.log")
        if warm["exit"] not in (0, 1):
            raise RuntimeError(f"postcond warm-up failed: {warm['summary']} (log {work / 'postcond-warm.log'})")
    if jobs:
        args += ["-n", str(jobs)]
    m = measure(_pytest(work, state, work / "postcond-report.json", args), work, _env(), log=work / "postcond-plugin.log")
    report = json.loads((work / "postcond-report.json").read_text())["benchmarks"]["postcond"]["tasks"]
    runs = 0
    for task in report.values():
        for s in task["samples"]:
            runs += 1 if s["checks"].get("correct") else 0
            runs += s["checks"].get("complete", {}).get("total", 0) or 0
    rows = [make_row("POSTCOND", f"plugin -n {jobs}, warm venv", m, runs, "pytest run")]
    if naive:
        argv = [sys.executable, "-m", "pytest_specbench.perf.naive", "postcond", "--state", str(state),
                "--tasks", ",".join(report), "--out", str(work / "postcond-naive.json")]
        if data is not None:
            argv += ["--data", str(data)]
        if repos is not None:
            argv += ["--repos", str(repos)]
        m = measure(argv, work, _env(), log=work / "postcond-naive.log")
        done = json.loads((work / "postcond-naive.json").read_text()) if (work / "postcond-naive.json").exists() else {}
        rows.append(make_row("POSTCOND", "naive: one pytest process per mutant", m, done.get("runs", runs),
                             "pytest run"))
        rows[-1]["summary"] += f"; verdicts {done.get('verdicts')}"
    return rows


def postcond_java_rows(work: Path, rounds: int = 2, jobs: int = 2) -> list[dict]:
    """PostcondBench's Java side with and without the JVMs' class-data sharing (AppCDS,
    ``execution/class_sharing.py``): the bundled ``javalib`` tasks with the reference
    postconditions (every mutant run: one JUnit JVM per run), result cache off, on one
    state folder kept between runs, as a user's is.  A warm-up run (sharing on) compiles
    the runtime and the project and counts the JVM starts that build each archive
    (``BUILD_AFTER``); then ``rounds`` pairs, plain starts (``SPECBENCH_JVM_CDS=0``)
    and with the archives, interleaved so that a change of the machine's load falls
    on both.  No naive baseline: upstream's Java runs need OpenJML, not installable here."""
    from pytest_specbench.execution.class_sharing import ENV_SWITCH

    work.mkdir(parents=True, exist_ok=True)
    state = work / "postcond-java-state"
    args = ["--specbench=postcond", "--model=reference", "--specbench-result-cache=off", "-k", "javalib",
            "-n", str(jobs)]
    warm = measure(_pytest(work, state, work / "postcond-java-warm.json", args), work, _env(),
                   log=work / "postcond-java-warm.log")
    if warm["exit"] not in (0, 1):
        raise RuntimeError(f"postcond java warm-up failed: {warm['summary']} (log {work / 'postcond-java-warm.log'})")
    rows = []
    for r in range(rounds):
        for label, switch in (("plain JVM starts (SPECBENCH_JVM_CDS=0)", "0"), ("with AppCDS archives", None)):
            env = _env()
            env.pop(ENV_SWITCH, None)
            if switch is not None:
                env[ENV_SWITCH] = switch
            report = work / f"postcond-java-{r}-{'off' if switch else 'on'}.json"
            m = measure(_pytest(work, state, report, args), work, env, log=report.with_suffix(".log"))
            tasks = json.loads(report.read_text())["benchmarks"]["postcond"]["tasks"]
            runs = sum((1 if s["checks"].get("correct") else 0) + (s["checks"].get("complete", {}).get("total", 0) or 0)
                       for task in tasks.values() for s in task["samples"])
            rows.append(make_row("POSTCOND-JAVA", f"round {r + 1}: {label}", m, runs, "JUnit run"))
    return rows


# ------------------------------------------------------------------ CIFE
def cife_answers(data_file: Path, n: int, out: Path) -> list[str]:
    """Answers for the first ``n`` tasks: run_full's stub program per task (the
    judge's work does not depend on the answers' quality)."""
    from pytest_specbench.benchmarks.cife.tools.run_full import stub_answer

    rows = []
    with open(data_file, encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                rows.append(json.loads(line))
            if len(rows) >= n:
                break
    out.write_text("".join(json.dumps({"task_id": str(r["id"]), "solution": stub_answer(r)}) + "\n" for r in rows))
    return [str(r["id"]) for r in rows]


def cife_rows(data: Path | None, work: Path, judge_url: str, judge_pid: int | None, judge_name: str,
              tasks: int = 1000, naive: bool = True, jobs: int = 2, max_tokens: int = 384,
              judge_retries: int | None = None) -> list[dict]:
    """CIFE: the first ``tasks`` tasks, stub answers, upstream's judge prompts, the
    local judge at ``judge_url``; fresh state (cold judge cache). Beside it, upstream's
    way (naive.py cife): per task one adherence request (all constraints) and one
    correctness request, no cache, no rules, one after another."""
    work.mkdir(parents=True, exist_ok=True)
    data_file = (data / "cife" / "benchmark_data.jsonl") if data is not None else \
        PERF_DIR.parents[1] / "benchmarks" / "cife" / "benchmark_data.jsonl"
    answers = work / "cife-answers.jsonl"
    ids = cife_answers(data_file, tasks, answers)
    state = work / "cife-state"
    shutil.rmtree(state, ignore_errors=True)
    args = ["--specbench=cife", f"--model=replay:{answers}", f"--judge-model=openai:{judge_name}",
            f"--judge-model-base-url={judge_url}", f"--judge-model-max-tokens={max_tokens}", "--cife-prompts=upstream",
            "--specbench-max-errors=100000", "--specbench-result-cache=off", f"--specbench-tasks={','.join(ids)}"]
    if judge_retries is not None:  # 0: two questions per task, as upstream asks (no retry of a garbled answer)
        args.append(f"--cife-judge-retries={judge_retries}")
    if data is not None:
        args.append(f"--specbench-data={data}")
    if jobs:
        args += ["-n", str(jobs)]
    env = _env()
    env.setdefault("OPENAI_API_KEY", "local")
    m = measure(_pytest(work, state, work / "cife-report.json", args), work, env, judge_pid=judge_pid,
                log=work / "cife-plugin.log")
    rows = [make_row("CIFE", f"plugin -n {jobs}, cold judge cache", m, len(ids), "task")]
    if naive:
        argv = [sys.executable, "-m", "pytest_specbench.perf.naive", "cife", "--data-file", str(data_file),
                "--answers", str(answers), "--url", judge_url, "--model", judge_name, "--max-tokens", str(max_tokens),
                "--out", str(work / "cife-naive.json")]
        m = measure(argv, work, env, judge_pid=judge_pid, log=work / "cife-naive.log")
        rows.append(make_row("CIFE", "naive: upstream's requests, no cache", m, len(ids), "task"))
    for row in list(rows):
        if tasks < 1000 and row["wall_per_unit_s"]:
            rows.append({**row, "what": row["what"] + " -> 1,000 tasks (EXTRAPOLATED)",
                         "wall_s": round(row["wall_per_unit_s"] * 1000, 1),
                         "cpu_s": round(row["cpu_s"] / len(ids) * 1000, 1),
                         "toolchain_cpu_s": round(row["toolchain_cpu_s"] / len(ids) * 1000, 1),
                         "harness_cpu_s": round(row["harness_cpu_s"] / len(ids) * 1000, 1),
                         "summary": f"extrapolated linearly from {len(ids)} measured tasks, not measured"})
    return rows


def start_real_judge(work: Path):
    """The pinned SmolLM2-135M server of tests/realmodel (llama-cpp-python), on 127.0.0.1."""
    sys.path.insert(0, str(PERF_DIR.parents[1] / "tests" / "realmodel"))
    from realmodel_server import MODEL_ALIAS, RealModelServer

    server = RealModelServer(work / "judge-server.log").start()
    return server, MODEL_ALIAS
