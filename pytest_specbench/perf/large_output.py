"""Where the time of a large output goes in the sandbox child (issue #28, point 2).

Mbpp/255's canonical output on plus input #88 is ``combinations_with_replacement``
of 5 colours taken 77 at a time: 1,663,740 tuples of 77 strings (128 million
references, 935 MB encoded).  The child encodes it and digests the encoding
(:func:`pytest_specbench.execution.wire.encode_capped`); this prints the CPU
seconds of each part beside the program's own, in this process:

    python -m pytest_specbench.perf.large_output            # 5 colours, 40 at a time (quick)
    python -m pytest_specbench.perf.large_output --r 77     # Mbpp/255's input #88 (~1.2 GB of memory)

Since issue #28 point 2 such an output is known by its value hash
(:func:`pytest_specbench.execution.wire.value_hash`), whose parts are printed too.
``--task Mbpp/255`` times the whole evaluation instead: the plain program on
every input of the task in one process (no isolation), against the plugin
(``--model=reference``, result cache off) with the expected outputs cached and
with them cold, and a run that selects nothing (the plugin's start-up); CPU
seconds of the whole process tree, wall seconds, peak RSS by role:

    python -m pytest_specbench.perf.large_output --task Mbpp/255 [--data ../shared/datasets] [--profile DIR]

``--profile DIR`` records each of those runs with py-spy (perf/profile.py) and
prints where its time goes, as shares (docs/timing.md, "Where the time goes").
"""
from __future__ import annotations

import argparse
import hashlib
import itertools
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from itertools import chain
from pathlib import Path

from ..execution import wire


def _cpu(fn) -> tuple[float, object]:
    start = time.process_time()
    value = fn()
    return time.process_time() - start, value


_PLAIN = """
import json, sys, time, resource
task = json.loads(sys.stdin.read())
ns = {"__name__": "__plain__"}
exec(compile(task["program"], "<program>", "exec"), ns)
fn = ns[task["entry_point"]]
inputs = [tuple(i) for i in task["inputs"]]
wall, cpu = time.perf_counter(), time.process_time()
for args in inputs:
    out = fn(*args)
del out
print(json.dumps({"cpu": time.process_time() - cpu, "wall": time.perf_counter() - wall,
                  "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024}))
"""


def _tree_cpu() -> float:
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def whole_task(task_id: str, data: Path, profile: Path | None = None, rate: int = 100) -> None:
    """The plain program on every input of ``task_id`` vs the plugin's evaluation of it.

    ``profile``: every run is recorded by py-spy into that folder (perf/profile.py;
    the plain program as ``plain.txt``, the plugin runs as ``cold.txt``, ``cached.txt``
    and ``none.txt``, with per-process timelines) and the shares are printed."""
    from ..benchmarks.contract.evalplus_data import canonical_program, load_evalplus
    from . import profile as prof
    from .run import PROFILE, plugin_run

    PROFILE.update(dir=profile, rate=rate)

    data_file = next((data / "evalplus").glob("MbppPlus*" if task_id.startswith("Mbpp") else "HumanEvalPlus*"))
    task = load_evalplus(data_file)[task_id]
    inputs = list(task["base_input"]) + list(task["plus_input"])
    spec = json.dumps({"program": canonical_program(task), "entry_point": task["entry_point"], "inputs": inputs})
    before = _tree_cpu()
    start = time.perf_counter()
    argv = [sys.executable, "-c", _PLAIN]
    if profile is not None:
        argv = prof.profiled(argv, profile / "plain.txt", rate)
    lines = subprocess.run(argv, input=spec, capture_output=True, text=True, check=True).stdout.splitlines()
    plain = json.loads(next(line for line in reversed(lines) if line.startswith("{")))  # py-spy prints too
    plain_wall, plain_tree = time.perf_counter() - start, _tree_cpu() - before
    print(f"{task_id}: {len(inputs)} inputs; plain program (one process, no isolation): calls {plain['cpu']:.2f} s CPU, "
          f"{plain['wall']:.2f} s wall; whole process {plain_tree:.2f} s CPU, {plain_wall:.2f} s wall, "
          f"{plain['rss_mb']} MB peak; load {os.getloadavg()[0]:.2f}")
    work = Path(tempfile.mkdtemp(prefix="specbench-large-"))
    args = ["--specbench=evalplus", f"--specbench-data={data.resolve()}", "--model=reference",
            "--specbench-checks=functional", "--specbench-result-cache=off", "-p", "no:xdist"]
    rows = []
    if profile is not None:
        print(prof.report(profile / "plain.txt", rate), flush=True)
    for label, select, name in (("plugin, expected outputs cold", task_id, "cold"),
                                ("plugin, expected outputs cached", task_id, "cached"),
                                ("plugin, a run that selects nothing", task_id + "-none", "none")):
        before = _tree_cpu()
        run = plugin_run(args + ["-k", select], work, work / "report.json", profile_name=name)
        cpu = _tree_cpu() - before
        rows.append((label, cpu, run))
        print(f"{label:38s} {cpu:7.2f} s CPU {run['wall_s']:7.2f} s wall  {cpu / plain_tree:5.2f}x the plain process "
              f"(CPU); {run['summary']}; peak MB by process: {run['roles_mb']}; {run['load']}")
    if profile is not None:
        print("--profile: the CPU and wall figures above include py-spy's own work and are not the figures of "
              "record; read the shares and the timelines' /proc figures (the item's sandbox CPU)")
    (_, warm_cpu, warm), (_, none_cpu, none) = rows[1], rows[2]
    print(f"evaluation alone (cached run minus the empty run): {warm_cpu - none_cpu:.2f} s CPU, "
          f"{warm['wall_s'] - none['wall_s']:.2f} s wall; {(warm_cpu - none_cpu) / plain_tree:.2f}x the plain process's "
          f"CPU, {(warm['wall_s'] - none['wall_s']) / plain_wall:.2f}x its wall")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--items", type=int, default=5, help="colours (Mbpp/255 input #88: 5)")
    ap.add_argument("--r", type=int, default=40, help="taken at a time (Mbpp/255 input #88: 77)")
    ap.add_argument("--task", help="time a whole task's evaluation instead (e.g. Mbpp/255)")
    ap.add_argument("--data", type=Path, default=Path("../shared/datasets"), help="the shared data root (--task)")
    ap.add_argument("--profile", type=Path, default=None,
                    help="--task: record every run with py-spy into this folder and print the shares (perf/profile.py)")
    ap.add_argument("--profile-rate", type=int, default=100, help="py-spy's samples per second")
    ap.add_argument("--old", action="store_true", help="also the encoding path (before #28 point 2; ~10x the program)")
    args = ap.parse_args()
    if args.task:
        whole_task(args.task, args.data, args.profile.resolve() if args.profile else None, args.profile_rate)
        return
    colours = ["Red", "Green", "Blue", "A", "Bird", "Cat", "Dog"][:args.items]

    compute, out = _cpu(lambda: list(itertools.combinations_with_replacement(colours, args.r)))
    print(f"{len(out):,} tuples of {args.r}; load {os.getloadavg()[0]:.2f}")
    vh, signed = _cpu(lambda: wire.value_hash(out))
    snap, shot = _cpu(lambda: wire._shape(out))
    check, _ = _cpu(lambda: wire._strings_ok(shot[1], shot[2]))
    scan, _ = _cpu(wire._str_hashes_faithful)
    hashing, _ = _cpu(lambda: hash(shot[2]))
    exact_types, _ = _cpu(lambda: set(map(type, chain.from_iterable(out))))
    rows = [("the program (list of the combinations)", compute), ("value_hash (what the child does now)", vh),
            ("  container types, a tuple of the list", snap), ("  strings checked (\"\".startswith)", check),
            ("  str subclasses scanned (x2 in value_hash)", scan), ("  hash() of the tuple", hashing),
            ("  exact type of every string (fallback)", exact_types)]
    for name, seconds in rows:
        print(f"{name:42s} {seconds:8.3f} s CPU  {seconds / compute:6.2f}x the program")
    print(f"digest {signed[0]}")
    if not args.old:
        return
    exact, _ = _cpu(lambda: wire.is_exact(out))
    to_plain, plain = _cpu(lambda: [wire.to_plain(v) for v in out])
    encode, text = _cpu(lambda: wire._encode(plain))
    del plain
    digest, _ = _cpu(lambda: hashlib.blake2b(text.encode("ascii"), digest_size=16).hexdigest())
    size = len(text)
    del text
    total, _ = _cpu(lambda: wire.encode_capped(out, 1 << 20))
    elements = sum(map(len, out[:1])) * len(out)
    print(f"{len(out):,} tuples of {args.r} ({elements:,} references), {size:,} bytes encoded; "
          f"load {os.getloadavg()[0]:.2f}")
    rows = [("the program (list of the combinations)", compute), ("encode_capped (what the child does)", total),
            ("  is_exact (the digest-comparable test)", exact), ("  to_plain (tuples tagged)", to_plain),
            ("  json encoder", encode), ("  blake2b of the encoding", digest)]
    for name, seconds in rows:
        print(f"{name:42s} {seconds:8.3f} s CPU  {seconds / compute:6.2f}x the program")


if __name__ == "__main__":
    main()
