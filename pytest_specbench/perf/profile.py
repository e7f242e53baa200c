"""Profiles of a timed run: where its time goes, as shares (issue #28's misses).

The perf scripts' ``--profile DIR`` runs their timed command under py-spy
(``py-spy record --subprocesses --nonblocking --format raw``: a sampling profiler
outside the process, so the figures it profiles are the same code; it follows the
xdist workers, the sandbox zygotes and the forked sample children it sees alive for
at least one of its polls) and writes ``DIR/NAME.txt``, one collapsed stack per line
(``process PID:"cmdline";frame;frame... COUNT``).  Idle threads are not sampled
(py-spy's default), so the counts are CPU-ish time: a process waiting on a pipe or a
lock adds nothing.  :func:`summarize` buckets the samples by process role and by
what the stack is doing (:data:`RULES`, first match wins) and prints the shares:

    python -m pytest_specbench.perf.profile DIR/NAME.txt [--by role|bucket|both] [--top 15]

Short-lived processes (a sample child of a few ms) are missed by py-spy's
polling; their CPU is counted by the scripts from /proc (``perf/timeline.py``),
not here.  Shares are of the samples taken, not of wall time.
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

# (bucket, pattern searched in the stack's frames joined by ";", innermost
# matches first is not needed: the first rule that matches anywhere wins, so the
# specific rules come before the general ones).
RULES: list[tuple[str, str]] = [
    # --- the measuring itself (--profile's timeline plugin): not the run's work
    ("profiling: perf/timeline.py's own records", r"perf/timeline\.py"),
    # --- the sample (in a sandboxed child, or in the floor's plain processes)
    ("the sample's own code", r"\(<sample>:|\(<program>:"),
    # --- inside a sandboxed sample child (python_child.run_child)
    ("child: value hash (wire.value_hash: type/str checks, hash())", r"value_hash \(|_exact_hash|_strings_ok|_shape \("),
    ("child: value hash: plain copy", r"_plain_copy"),
    ("child: encoding / digest of the output", r"python_child\.py.*(encode_capped|string_digest|dumps \()"),
    ("child: records to the harness (IPC)", r"python_child\.py.*(emit|send|write \(.*records\.py)"),
    ("child: sandbox set-up (enter_child)", r"enter_child"),
    ("child: the rest of run_child", r"run_child"),
    # --- the floor's comparison, the harness's own comparison of outputs
    ("comparing outputs (outputs_match)", r"outputs_match"),
    # --- imports anywhere (a module's import is start-up, whatever it imports)
    ("start-up: imports", r"_find_and_load|_call_with_frames_removed|importlib"),
    ("harness: machine_speed calibration (once per process)", r"machine_speed"),
    # --- the zygote
    ("zygote: fork / serve jobs", r"_zygote\.py"),
    # --- the harness in a worker / the controller
    ("harness: journal / result cache", r"journal|results_cache|result_cache|/cache\.py"),
    ("harness: report (terminal, JSON)", r"reports/|terminal\.py|pytest_terminal_summary|pytest_sessionfinish"),
    ("harness: expected outputs (load, decode)", r"expected|evalplus_data\.py"),
    ("harness: executor (job, records, verdict of a call)",
     r"execution/python\.py|execution/protocol\.py|records\.py|wire\.py|execution/sandbox\.py"),
    ("harness: the item's check (functional_check, verdicts)",
     r"contract/evalplus\.py|verdicts\.py|dedupe\.py|plugin/items\.py|benchmarks/"),
    ("harness: xdist / execnet (dispatch, IPC)", r"execnet|xdist|dsession|plugin/remote\.py"),
    ("harness: collection", r"pytest_collect|genitems|perform_collect|pytest_generate_tests|collect \("),
    ("start-up: pytest / plugin configuration", r"pytest_configure|_preparse|pytest_cmdline_main|pytest_load_initial"),
    ("pytest: the rest of a test's protocol", r"runtestprotocol|call_and_report|pytest_runtest"),
    ("floor: process pool (multiprocessing)", r"multiprocessing"),
]


def role_of(process: str) -> str:
    """The role of a py-spy process frame ``process PID:"cmdline"``."""
    cmd = process.split(":", 1)[1] if ":" in process else process
    if "__plain__" in cmd:
        return "plain program (no isolation)"
    if "_zygote (job child)" in cmd:
        return "sandboxed job child (the sample)"
    if "_zygote" in cmd:
        return "sandbox zygote"
    if "exec(eval(sys.stdin.readline()))" in cmd or "execnet" in cmd:
        return "xdist worker"
    if "-m pytest" in cmd and "--specbench" in cmd:
        return "pytest controller"
    if "-m pytest_specbench.perf" in cmd or "pytest_specbench/perf/" in cmd:
        return "perf script (the floor's pool, the plain program)"
    if "-m pytest" in cmd or "pytest" in cmd.split(" ")[0]:
        return "pytest controller" if "--specbench" in cmd else "the repository's pytest (toolchain)"
    if "-m pip" in cmd or "/pip " in cmd or "__pip-runner__" in cmd:
        return "pip (venv build)"
    if "-m venv" in cmd:
        return "python -m venv (venv build)"
    if not cmd.strip('"'):
        return "a process whose command line was gone"
    return "other: " + os.path.basename(cmd.strip('"').split(" ")[0])[:40]


_PROCESS = re.compile(r"process \d+:")


def parse(path: Path):
    """Yield (process frame, frames, count) from a py-spy raw (collapsed) file."""
    # A process frame holds the command line, which may hold newlines (``python -c
    # "..."``): a record starts at a line ``process PID:``; other lines continue it.
    records: list[str] = []
    with open(path, encoding="utf-8", errors="replace") as fh:
        for line in fh:
            line = line.rstrip("\n")
            if _PROCESS.match(line) or not records or not records[-1].startswith("process "):
                records.append(line)
            else:
                records[-1] += "\n" + line
    for record in records:
        stack, _, count = record.rpartition(" ")
        if not stack or not count.isdigit():
            continue
        # py-spy nests process frames, parent first: ``process 1:"...";process 7:"...";frames``.
        chain = []
        while stack.startswith("process "):
            end = stack.find('";')  # the command line is quoted
            if end < 0:
                chain.append(stack)
                stack = ""
                break
            chain.append(stack[:end + 1])
            stack = stack[end + 2:]
        process = chain[-1] if chain else ""
        if len(chain) >= 2 and "_zygote" in chain[-1] and "_zygote" in chain[-2]:
            process = process.replace("_zygote", "_zygote (job child)")  # a job forked by the zygote
        yield process, stack.split(";") if stack else [], int(count)


def bucket_of(frames: list[str], role: str, rules=None) -> str:
    if not frames:
        return "no Python frame (interpreter start-up or exit, native code)"
    joined = ";".join(frames)
    for name, pattern in (rules or _COMPILED):
        if pattern.search(joined):
            return name
    return "other"


_COMPILED = [(name, re.compile(p)) for name, p in RULES]


def summarize(path: Path, rules=None) -> dict:
    """{"total": samples, "roles": Counter, "buckets": Counter, "both": Counter((role, bucket))}."""
    roles, buckets, both, total = Counter(), Counter(), Counter(), 0
    compiled = [(n, re.compile(p)) for n, p in rules] if rules else None
    for process, frames, count in parse(path):
        role = role_of(process) if process else "process"
        # py-spy sometimes labels a forked process with its parent's command line (a
        # zygote's job child, a zygote under the controller): the frames tell.
        if frames and "execution/_zygote.py" in frames[min(2, len(frames) - 1)] + ";".join(frames[:4]):
            role = ("sandboxed job child (the sample)" if any("run_child (" in f for f in frames)
                    else "sandbox zygote")
        bucket = bucket_of(frames, role, compiled)
        roles[role] += count
        buckets[bucket] += count
        both[(role, bucket)] += count
        total += count
    return {"total": total, "roles": roles, "buckets": buckets, "both": both}


def format_summary(summary: dict, by: str = "both", top: int = 15, rate: int | None = None) -> str:
    total = summary["total"] or 1
    secs = (lambda n: f" {n / rate:8.2f} s") if rate else (lambda n: "")  # noqa: E731
    out = [f"{summary['total']} samples" + (f" at {rate} Hz (~{summary['total'] / rate:.1f} s of non-idle time: on a loaded machine a runnable thread waiting for a core counts too)" if rate else "")]
    if by in ("role", "both"):
        out.append("by process role:")
        out += [f"  {100 * n / total:5.1f}%{secs(n)}  {k}" for k, n in summary["roles"].most_common(top)]
    if by in ("bucket", "both"):
        out.append("by what the stack is doing:")
        out += [f"  {100 * n / total:5.1f}%{secs(n)}  {k}" for k, n in summary["buckets"].most_common(top)]
    if by == "both":
        out.append("by role and bucket:")
        out += [f"  {100 * n / total:5.1f}%{secs(n)}  {r} / {b}" for (r, b), n in summary["both"].most_common(top)]
    return "\n".join(out)


def top_frames(path: Path, top: int = 15, role: str | None = None) -> list[tuple[str, int]]:
    """The innermost frames with the most samples (self time), for a closer look."""
    leaf = Counter()
    for process, frames, count in parse(path):
        if role and role_of(process) != role:
            continue
        if frames:
            leaf[frames[-1]] += count
    return leaf.most_common(top)


def env_with_checkout(extra: dict | None = None) -> dict:
    """This environment plus the folder holding ``pytest_specbench`` on PYTHONPATH, so
    a profiled run's processes (and xdist's workers) import this checkout's
    ``perf.timeline`` plugin."""
    root = str(Path(__file__).resolve().parent.parent.parent)
    env = {**os.environ, **(extra or {})}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")]))
    return env


def py_spy() -> str | None:
    """The py-spy executable beside this interpreter or on PATH."""
    here = Path(sys.executable).with_name("py-spy")
    return str(here) if here.exists() else shutil.which("py-spy")


def profiled(argv: list[str], out: Path, rate: int = 100) -> list[str]:
    """``argv`` wrapped in ``py-spy record`` writing the raw profile to ``out``."""
    spy = py_spy()
    if spy is None:
        sys.exit("--profile needs py-spy: pip install py-spy (it samples the run from outside; needs ptrace, "
                 "e.g. root or kernel.yama.ptrace_scope=0)")
    out.parent.mkdir(parents=True, exist_ok=True)
    return [spy, "record", "--subprocesses", "--nonblocking", "--format", "raw", "--rate", str(rate),
            "--output", str(out), "--", *argv]


def profiled_pytest(argv: list[str], out: Path, rate: int = 100) -> tuple[list[str], dict]:
    """``argv`` (``python -m pytest ...``) recorded by py-spy into ``out``, each of its
    pytest processes writing its timeline (perf/timeline.py) into ``<out>-timeline/``:
    the command and its environment.  :func:`pytest_report` reads both back."""
    from . import timeline

    folder = out.with_name(out.stem + "-timeline")
    shutil.rmtree(folder, ignore_errors=True)
    env = env_with_checkout({timeline.ENV: str(folder)})
    return profiled([*argv[:3], "-p", "pytest_specbench.perf.timeline", *argv[3:]], out, rate), env


def pytest_report(out: Path, rate: int = 100) -> str:
    """The shares of a run recorded by :func:`profiled_pytest` and its processes'
    timelines (also saved as ``<out>-timeline.txt``)."""
    from . import timeline

    text = report(out, rate)
    folder = out.with_name(out.stem + "-timeline")
    if folder.is_dir():
        analysis = timeline.format_analysis(timeline.analyse(folder))
        folder.with_name(folder.name + ".txt").write_text(analysis + "\n")
        text += "\n" + analysis
    return text


def report(out: Path, rate: int = 100, top: int = 15) -> str:
    """The summary of a profile written by :func:`profiled`, also saved beside it."""
    if not out.exists():
        return f"profile {out}: not written (py-spy failed; see its output)"
    text = f"profile {out}:\n" + format_summary(summarize(out), rate=rate, top=top)
    out.with_suffix(".summary.txt").write_text(text + "\n")
    return text


class SpySelf:
    """``with SpySelf(out):`` records this process and its children (the floor's
    pool) with py-spy until the block ends (py-spy writes its file on SIGINT)."""

    def __init__(self, out: Path | None, rate: int = 100):
        self.out, self.rate, self.proc = out, rate, None

    def __enter__(self):
        if self.out is not None:
            argv = profiled(["x"], self.out, self.rate)[:-2]
            self.proc = subprocess.Popen([*argv, "--pid", str(os.getpid())], stdout=subprocess.DEVNULL,
                                         stderr=subprocess.DEVNULL)
            import time
            time.sleep(0.5)  # attached before the work starts
        return self

    def __exit__(self, *exc):
        if self.proc is not None:
            import signal
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
        return False


def run_profiled(argv: list[str], out: Path, rate: int = 100, **popen) -> subprocess.CompletedProcess:
    return subprocess.run(profiled(argv, out, rate), **popen)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("profile", type=Path, help="a py-spy raw profile (--format raw)")
    ap.add_argument("--by", choices=("role", "bucket", "both"), default="both")
    ap.add_argument("--top", type=int, default=15)
    ap.add_argument("--rate", type=int, default=100, help="the sampling rate it was recorded at (for seconds)")
    ap.add_argument("--leaves", action="store_true", help="also the innermost frames with the most samples")
    ap.add_argument("--role", default=None, help="--leaves: only this role")
    args = ap.parse_args()
    print(format_summary(summarize(args.profile), args.by, args.top, args.rate))
    if args.leaves:
        print("innermost frames:")
        for frame, n in top_frames(args.profile, args.top, args.role):
            print(f"  {n:7d}  {frame}")


if __name__ == "__main__":
    main()
