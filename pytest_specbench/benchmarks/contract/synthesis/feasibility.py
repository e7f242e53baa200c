"""Run candidate CVTs on the reference program, in a child process (§3.2).

This is the only place where task code runs.  It never runs in the calling
process: a fresh ``python -I`` child gets the program variants (see
:mod:`.variants`) and the inputs as JSON on stdin, runs every call under a
per-call ``SIGALRM`` timeout and ``RLIMIT_AS``, and streams one JSON line per
input back on a private file descriptor (task code printing to stdout cannot
corrupt the protocol).  A child that hangs in C code or dies is killed and
restarted after the input it was stuck on, which is reported as ``"killed"``.

Kept deliberately small and self-contained so it can be swapped for the
project's shared sandbox executor: the contract is :func:`run_calls`.

Outcome strings: ``"ok"`` (returned), ``"passed"`` (contract block passed,
body not run), ``"AssertionError"`` and other exception class names,
``"timeout"``, ``"killed"``, ``"load-error: ..."`` (the variant did not load).
"""
from __future__ import annotations

import json
import os
import selectors
import subprocess
import sys
import tempfile
import time
from typing import Sequence

CHILD_SOURCE = r'''
import json, os, resource, signal, sys
job = json.loads(sys.stdin.read())
out = os.fdopen(os.dup(1), "w")
null = os.open(os.devnull, os.O_RDWR)
os.dup2(null, 0); os.dup2(null, 1); os.dup2(null, 2)
try:
    lim = int(job["memory_bytes"])
    resource.setrlimit(resource.RLIMIT_AS, (lim, lim))
except Exception:
    pass
sys.setrecursionlimit(10000)

class Timeout(BaseException):
    pass

class ContractPassed(BaseException):
    """Raised right after the contract block: BaseException so `except Exception` in task code cannot hide it."""

def on_alarm(signum, frame):
    raise Timeout()

signal.signal(signal.SIGALRM, on_alarm)
T = float(job["timeout"])

def timed(fn, *a, **kw):
    signal.setitimer(signal.ITIMER_REAL, T)
    try:
        return fn(*a, **kw)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)

funcs = {}
for name, src in job["variants"].items():
    ns = {"__name__": "__specbench_task__", "_SpecbenchContractPassed": ContractPassed}
    try:
        timed(exec, compile(src, "<%s>" % name, "exec", dont_inherit=True), ns)  # no __future__ flags of ours
        funcs[name] = ns[job["entry_point"]]
    except BaseException as e:
        funcs[name] = "load-error: %s: %s" % (type(e).__name__, str(e)[:200])

def call(fn, text):
    if isinstance(fn, str):
        return fn
    try:
        timed(fn, **json.loads(text))
        return "ok"
    except ContractPassed:
        return "passed"
    except Timeout:
        return "timeout"
    except BaseException as e:
        return type(e).__name__

skip_unless = job.get("run_last_only_if")
for index, text, run_all in job["inputs"]:
    res = {"index": index}
    for name in job["order"]:
        if (skip_unless and not run_all and name == job["order"][-1]
                and res.get(skip_unless[0]) != skip_unless[1]):
            continue
        res[name] = call(funcs[name], text)
    out.write(json.dumps(res) + "\n")
    out.flush()
'''


def run_calls(variants: dict, entry_point: str, inputs: Sequence[str], order: Sequence[str], *,
              per_call_timeout: float = 1.0, total_timeout: float = 120.0,
              memory_bytes: int = 2 << 30, run_last_only_if: tuple | None = None,
              run_all: Sequence[int] = ()) -> list:
    """Call ``entry_point(**json.loads(inputs[i]))`` in each variant named in ``order``.

    Returns one dict per input (``{variant: outcome}``), or ``None`` for inputs
    not run because ``total_timeout`` ran out.  ``run_last_only_if=(name,
    outcome)`` skips the last variant unless ``name`` gave ``outcome`` (used to
    run the slow no-contract program only for candidates the contract rejects);
    inputs whose index is in ``run_all`` always run every variant.
    """
    always = set(run_all)
    results: list = [None] * len(inputs)
    pending = list(range(len(inputs)))
    deadline = time.monotonic() + total_timeout
    per_input = per_call_timeout * len(order) + 5.0
    load_time = per_call_timeout * len(variants) + 10.0
    while pending and time.monotonic() < deadline:
        done = _run_child(variants, entry_point, [(i, inputs[i], i in always) for i in pending], order,
                          per_call_timeout,
                          memory_bytes, run_last_only_if, per_input, load_time, deadline)
        stuck = None
        for i, res in done.items():
            if res == "killed":
                stuck = i
                results[i] = {name: "killed" for name in order}
            else:
                results[i] = res
        progressed = [i for i in pending if i in done]
        pending = [i for i in pending if i not in done]
        if not progressed and stuck is None:
            break  # the child failed before answering anything: give up on the rest
    return results


def _run_child(variants, entry_point, inputs, order, per_call_timeout, memory_bytes, run_last_only_if,
               per_input, load_time, deadline) -> dict:
    job = json.dumps({"variants": variants, "entry_point": entry_point, "inputs": inputs, "order": list(order),
                      "timeout": per_call_timeout, "memory_bytes": memory_bytes,
                      "run_last_only_if": list(run_last_only_if) if run_last_only_if else None})
    done: dict = {}
    with tempfile.TemporaryDirectory(prefix="specbench-feas-") as cwd:
        proc = subprocess.Popen([sys.executable, "-I", "-c", CHILD_SOURCE], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=cwd,
                                start_new_session=True)
        try:
            try:
                proc.stdin.write(job.encode())
                proc.stdin.close()
            except BrokenPipeError:
                return done
            sel = selectors.DefaultSelector()
            sel.register(proc.stdout, selectors.EVENT_READ)
            buf = b""
            next_limit = time.monotonic() + load_time + per_input
            expected = [i for i, _, _ in inputs]
            pos = 0
            while pos < len(expected):
                now = time.monotonic()
                limit = min(next_limit, deadline)
                if now >= limit:
                    if now < deadline:
                        done[expected[pos]] = "killed"  # stuck on this input (C-level loop, memory ...)
                    break
                if not sel.select(timeout=limit - now):
                    continue
                chunk = os.read(proc.stdout.fileno(), 1 << 16)
                if not chunk:  # child exited
                    if pos < len(expected):
                        done[expected[pos]] = "killed"
                    break
                buf += chunk
                while b"\n" in buf:
                    line, buf = buf.split(b"\n", 1)
                    res = json.loads(line)
                    idx = res.pop("index")
                    done[idx] = res
                    pos += 1
                    next_limit = time.monotonic() + per_input
        finally:
            if proc.poll() is None:
                proc.kill()
            proc.wait()
            if proc.stdout:
                proc.stdout.close()
    return done
