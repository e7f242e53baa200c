"""The Python-spec service: model-written Python specifications (icontract
postconditions and snapshots, or ``assert`` blocks over inputs and
``return_value``) evaluated where they cannot reach the verdict.

The property (docs/postcond.md, "Verdicts"): no byte of an answer runs in a
process that holds the verdict channel or its nonce, nor in one that can write
to such a process (ptrace, ``/proc/PID/fd``, ``/proc/PID/mem``, ``pidfd_getfd``);
the process that writes records learns from a spec's process only one outcome
per check: ``holds``, ``violated`` or ``raised``, with one line.  The machinery
is :mod:`.spec_process`, shipped into a sandbox job as ``specbench_pyspec.py``.

The API, for a family's harness side:

* (a) a spec on real calls, inside a job that runs a project's tests (how
  PostcondBench Python uses it): ship :func:`job_files`; in the job, import
  ``specbench_pyspec``, call ``register(specs)`` with :func:`guard_spec` entries
  and ``protect([job_dir])`` before the tests import anything; the target module
  carries ``@specbench_pyspec.guard(ID)`` where the answer's decorators were
  (``postcond.source.Injected.keeper_text``).  A violated postcondition is an
  ``icontract.ViolationError`` raised in the test; a spec that raised is the
  builtin exception of its type (or ``SpecificationError``), raised from
  ``specbench_pyspec.py``'s frames.
* (b) a plain postcondition over given values: :func:`check_values` (one
  sandboxed job for many cases, one spec child per case, one outcome per
  clause), built on :func:`values_job` and :func:`read_values`.
* (c) a block of statements (nl2postcond's postconditions: asserts, imports,
  assignments) over many cases of plain data, :func:`.blocks.check_blocks`:
  each case in a child forked from a zygote that never held a case, holding
  its own case (or a batch the caller chose) alone, confined by a seccomp
  filter (no file, socket, process, signal or IPC), one outcome per case
  (docs/nl2postcond.md, "Where a postcondition runs").  Stricter than (b):
  (b)'s children are forked from the keeper, which holds every case.
* (d) the same block judged beyond given cases (the ``pbt`` tier, issue #47):
  :func:`.search.run_search`, Hypothesis in (c)'s keeper, one child per case
  (docs/tiers.md); verdicts per relation in :mod:`.tiers.verdict`.
"""
from __future__ import annotations

import json
import secrets
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from ..errors import InfrastructureError
from ..execution import wire
from ..execution.protocol import CommandJob

SPEC_PROCESS = Path(__file__).with_name("spec_process.py")
JOB_MODULE = "specbench_pyspec"  # the name a job imports the service under
KINDS = ("holds", "violated", "raised")


def job_files() -> dict[str, bytes]:
    """What a job needs to import ``specbench_pyspec`` (standard library only)."""
    return {f"{JOB_MODULE}.py": SPEC_PROCESS.read_bytes()}


def guard_spec(decorators: str, first_line: int, file_text: str) -> dict[str, Any]:
    """One entry of ``register``: the answer's decorator lines, the 1-based line of
    the first in ``file_text`` (the injected file as the answer's decorators make
    it: icontract renders its messages from it, in the spec child)."""
    return {"decorators": decorators, "first_line": int(first_line), "text": file_text}


@dataclass(frozen=True)
class Outcome:
    """One clause on one case: ``kind`` in KINDS, ``line`` one line of text."""

    kind: str
    line: str = ""


def values_job(source: str, cases: Sequence[dict], timeout: float = 30.0,
               python: str | None = None) -> tuple[CommandJob, str]:
    """(b) as a command job: ``source`` is ``assert`` lines (or one expression)
    over the inputs by name, ``return_value`` and ``inputs_after`` (a dict);
    ``cases`` are ``{"inputs": {...}, "return_value": ..., "inputs_after": {...}}``
    of plain data (execution/wire.py's values).  Returns the job and its nonce."""
    nonce = secrets.token_hex(16)
    cfg = {"source": source, "cases": wire.dumps(list(cases)), "nonce": nonce}
    files = dict(job_files())
    files["wire.py"] = Path(wire.__file__).read_bytes()
    files["values-config.json"] = json.dumps(cfg).encode()
    job = CommandJob(argv=(python or sys.executable, "-s", "-E", f"{JOB_MODULE}.py", "values", "values-config.json"),
                     files=files, wall_seconds=timeout, cpu_seconds=timeout, memory_mb=2048,
                     output_bytes=1 << 16)
    return job, nonce


def read_values(records: Sequence[Any], nonce: str, cases: int) -> list[list[Outcome]] | str:
    """Per case, per clause outcomes from a values job's records (only those with
    the nonce count), or one line saying why the job gave none.  No start record
    (the keeper failed before any spec ran) is the harness's fault:
    :class:`~pytest_specbench.errors.InfrastructureError`."""
    mine = [r for r in records if isinstance(r, dict) and r.get("nonce") == nonce]
    if not any(r.get("event") == "start" for r in mine):
        raise InfrastructureError("the values job's keeper did not start (no start record)")
    by_case: dict[int, list[Outcome]] = {}
    for rec in mine:
        index, outs = rec.get("case"), rec.get("outcomes")
        if isinstance(index, int) and isinstance(outs, list) and index not in by_case:
            by_case[index] = [Outcome(o["kind"], str(o.get("line", ""))) for o in outs
                              if isinstance(o, dict) and o.get("kind") in KINDS]
    if not any(r.get("event") == "finish" for r in mine) or sorted(by_case) != list(range(cases)):
        return f"the values job ended after {len(by_case)} of {cases} cases"
    return [by_case[i] for i in range(cases)]


def check_values(executor: Any, source: str, cases: Sequence[dict], timeout: float = 30.0) -> list[list[Outcome]]:
    """(b) end to end in the ``command`` executor (the harness's interpreter):
    per case, the outcome of each clause.  A job that cannot report (a spec
    that kills the job's keeper, a timeout) raises nothing: every case of it is
    one ``raised`` outcome saying so; a sandbox that cannot start raises
    :class:`~pytest_specbench.errors.InfrastructureError`."""
    job, nonce = values_job(source, cases, timeout)
    result = executor.run(None, job)
    out = read_values(result.records, nonce, len(cases))
    if isinstance(out, str):
        why = "timeout" if result.timed_out else out
        return [[Outcome("raised", why)] for _ in cases]
    return out
