"""The controller's cost past one machine: CPU time per 1,000 items and per 1,000
dedupe copies with workers behind execnet socket gateways (docs/distributed.md).

    python -m pytest_specbench.perf.distributed [--items 8000 --distinct 3656]

A W1-sized workload (W1: 8,000 samples with 3,656 distinct programs, see
``perf/run.py``) over the bundled ContractEval suite, whose items are cheap, so
that the controller's share shows: every sample is the task's reference with a
marker statement that makes it one of ``--distinct`` programs, and the rest of
the samples are copies of them.  Each configuration starts execnet socket
servers on 127.0.0.1 (free ports; one per "host", each with a state folder of
its own) and runs the controller through them (``--px id=hI//socket=...
--tx N*popen//via=hI``) twice: dedupe off (every item evaluated) and on (copies
take their representative's verdict, pushed by the controller).  A run with
one sample per task gives the fixed start-up cost, subtracted.

Controller CPU is ``getrusage(RUSAGE_SELF)`` of the controller process (all its
threads: xdist's loop and execnet's receiver threads); its sandbox child, used
only to calibrate dispatch costs, is not in it.  The machine's load average is
printed beside every figure: on a shared machine wall times mean little, CPU
times less so.
"""
from __future__ import annotations

import argparse
import ast
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

MEASURE = r"""
import resource, sys, time
import pytest
t = time.monotonic()
rc = pytest.main(sys.argv[1:])
r = resource.getrusage(resource.RUSAGE_SELF)
print(f"SPECBENCH-CONTROLLER cpu={r.ru_utime + r.ru_stime:.3f} wall={time.monotonic() - t:.3f} rc={int(rc)}")
"""


def marked(code: str, entry: str, mark: int) -> str:
    """``code`` with ``_specbench_mark = mark`` first in ``entry``'s body: another program."""
    tree = ast.parse(code)
    fn = next(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == entry)
    first = fn.body[0]
    if isinstance(first, ast.Expr) and isinstance(getattr(first, "value", None), ast.Constant):
        first = fn.body[1] if len(fn.body) > 1 else first  # after a docstring
    lines = code.splitlines()
    lines.insert(first.lineno - 1, " " * first.col_offset + f"_specbench_mark = {mark}")
    return "\n".join(lines) + "\n"


def write_samples(path: Path, items: int, distinct: int) -> int:
    from ..benchmarks.contract.contract import ADAPTER as CONTRACT

    tasks = CONTRACT.load(None, None).tasks
    rows = []
    for i in range(items):
        t = i % len(tasks)
        task = tasks[t]
        index = i // len(tasks)
        # Task t has its share of the distinct programs; its later samples repeat them (copies).
        share = max(distinct // len(tasks) + (1 if t < distinct % len(tasks) else 0), 1)
        code = marked(CONTRACT.reference(task, "functional"), task.data["entry_point"], index % share)
        rows.append({"task_id": task.task_id, "sample_index": index, "solution": code})
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return len(tasks)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class SocketHost:
    """execnet's socket server on 127.0.0.1 with a state folder of its own."""

    def __init__(self, root: Path, name: str):
        self.port = free_port()
        self.state = root / name
        self.state.mkdir(parents=True)
        env = {**os.environ, "SPECBENCH_DIR": str(self.state)}
        self.proc = subprocess.Popen([sys.executable, "-m", "execnet.script.socketserver", f"127.0.0.1:{self.port}"],
                                     env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=self.state,
                                     start_new_session=True)
        wanted = f"0100007F:{self.port:04X}"
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            with open("/proc/net/tcp") as fh:
                if any(line.split()[1] == wanted and line.split()[3] == "0A" for line in fh.readlines()[1:]):
                    return
            time.sleep(0.05)
        raise SystemExit(f"socket server on 127.0.0.1:{self.port} did not start")

    def close(self) -> None:
        os.killpg(self.proc.pid, 9)
        self.proc.wait()


def run_controller(workdir: Path, samples: Path, hosts: list[SocketHost], per_host: int, dedupe: str,
                   extra: list[str]) -> dict:
    state = Path(tempfile.mkdtemp(dir=workdir, prefix="controller-"))
    args = ["-p", "no:cacheprovider", "-q", "--specbench=contract", f"--model=replay:{samples}",
            "--specbench-checks=functional", "--specbench-result-cache=off", f"--specbench-dedupe={dedupe}",
            f"--specbench-dir={state}", "--dist", "load", *extra]
    for i, host in enumerate(hosts):
        args += ["--px", f"id=h{i}//socket=127.0.0.1:{host.port}", "--tx", f"{per_host}*popen//via=h{i}"]
    load = os.getloadavg()[0]
    done = subprocess.run([sys.executable, "-c", MEASURE, *args], cwd=workdir, capture_output=True, text=True)
    m = re.search(r"SPECBENCH-CONTROLLER cpu=([\d.]+) wall=([\d.]+) rc=(\d+)", done.stdout)
    if not m:
        raise SystemExit(f"controller run failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    counts = re.search(r"dedupe: (\d+) programs evaluated, (\d+) copies", done.stdout)
    outcome = re.search(r"(\d+) passed", done.stdout)
    shutil.rmtree(state, ignore_errors=True)
    return {"cpu": float(m.group(1)), "wall": float(m.group(2)), "load": max(load, os.getloadavg()[0]),
            "evaluated": int(counts.group(1)) if counts else None, "copies": int(counts.group(2)) if counts else 0,
            "passed": int(outcome.group(1)) if outcome else 0}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--items", type=int, default=8000, help="samples (= items: one check each); W1: 8000")
    ap.add_argument("--distinct", type=int, default=3656, help="distinct programs among them; W1: 3656")
    ap.add_argument("--configs", default="1x2,2x1,2x2", help="HOSTSxWORKERS_PER_HOST, comma-separated")
    ap.add_argument("--runs", default="off,on", help="which W1-sized runs: off (dedupe off), on (dedupe on)")
    args = ap.parse_args(argv)
    workdir = Path(tempfile.mkdtemp(prefix="specbench-perf-dist-"))
    try:
        samples, tiny = workdir / "samples.jsonl", workdir / "tiny.jsonl"
        tasks = write_samples(samples, args.items, args.distinct)
        write_samples(tiny, tasks, tasks)  # one sample per task: start-up and collection only
        print(f"workload: {args.items} items ({args.distinct} distinct programs, "
              f"{args.items - args.distinct} copies) over {tasks} bundled ContractEval tasks; "
              f"{os.cpu_count()} cores", flush=True)
        print(f"{'hosts x workers':>16} {'run':>12} {'ctl CPU s':>10} {'wall s':>8} {'load':>5} "
              f"{'evaluated':>9} {'copies':>7}")
        for config in args.configs.split(","):
            n_hosts, per_host = (int(x) for x in config.split("x"))
            hosts = [SocketHost(workdir, f"host{i}-{config}") for i in range(n_hosts)]
            results = {}
            try:
                run_controller(workdir, tiny, hosts, per_host, "on", [])  # warm the hosts' caches
                wanted = [r.strip() for r in args.runs.split(",")]
                for name, data, dedupe in (("start-up", tiny, "on"), ("dedupe off", samples, "off"),
                                           ("dedupe on", samples, "on")):
                    if data is samples and dedupe not in wanted:
                        continue
                    r = results[name] = run_controller(workdir, data, hosts, per_host, dedupe, [])
                    print(f"{config:>16} {name:>12} {r['cpu']:>10.2f} {r['wall']:>8.1f} {r['load']:>5.1f} "
                          f"{r['evaluated'] if r['evaluated'] is not None else '-':>9} {r['copies']:>7}", flush=True)
            finally:
                for host in hosts:
                    host.close()
            base = results["start-up"]
            for name, r in results.items():
                if name == "start-up":
                    continue
                per_item = (r["cpu"] - base["cpu"]) / max(args.items - tasks, 1) * 1000
                print(f"{config:>16}   {name}: controller CPU per 1,000 items {per_item:.2f} s "
                      f"(one controller feeds at most ~{1000 / per_item:.0f} items/s)", flush=True)
            if "dedupe off" in results and "dedupe on" in results and results["dedupe on"]["copies"]:
                off, on = results["dedupe off"], results["dedupe on"]
                print(f"{config:>16}   dedupe on - off: {on['cpu'] - off['cpu']:+.2f} s for {on['copies']} copies "
                      f"({(on['cpu'] - off['cpu']) / on['copies'] * 1000:+.2f} s per 1,000 copies)", flush=True)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
