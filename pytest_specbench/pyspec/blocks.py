"""A block of Python statements (an nl2postcond postcondition: ``assert`` lines,
imports, assignments) evaluated on many cases of plain data, each case in a
spec process that holds that case alone and is confined by a seccomp filter
(the job side: :mod:`.block_job`, whose docstring gives the roles).

What the harness learns per case is one :class:`BlockOutcome`: ``holds`` (the
block completed), ``violated`` (it raised ``AssertionError``), ``raised`` (any
other exception, with its type, or a time-out / a process that ended without
answering), ``harness`` (the benchmark's preamble failed, or the machine
has no libseccomp: never caused by the answer; the caller raises E) or
``budget`` (the harness's own budget ran out before the case was answered,
with the answer's CPU time under its share: the machine's load; E, never
cached, #46/#48) or ``skipped`` (not evaluated: a case the caller named
``decisive`` had already not held, so the answer's verdict was settled).

Whose time ran out.  A block's child cannot sleep (:mod:`.block_job`): its
wall time is CPU time plus the machine's.  So the *answer's* budget is CPU
time: each child's CPU limit (``case_seconds`` per case of its batch; with
``case_timer``, each case's too: a timer in its child) and the job's CPU
limit (``timeout``), measured from outside (the child's rlimit; the job's CPU
as the sandbox counts it).  With ``case_timer`` a case that meets its limit
is ``raised`` (a time-out) and the cases after it in its batch are evaluated
by a fresh child: a case's cost is its own, never its batch-mates'.  Spending either is the answer's time: ``raised``
(F).  The job's wall clock (:data:`WALL_FACTOR` times ``timeout``, plus
:data:`WALL_SECONDS`) and a
child's wall deadline are the machine's: reaching one with the CPU limit not
reached is ``budget`` (E).
"""
from __future__ import annotations

import functools
import json
import os
import secrets
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from ..errors import InfrastructureError
from ..execution import wire
from ..execution.protocol import CommandJob, WarmStart
from .block_job import PRELOADED, SKIPPED_LINE

JOB_SCRIPT = Path(__file__).with_name("block_job.py")
SEARCH_SCRIPT = Path(__file__).with_name("pbt_keeper.py")
INSTALL_HINT = "libseccomp not available: apt-get install libseccomp2 (and pip install pyseccomp)"
# The job's wall-clock limit: WALL_FACTOR times its CPU limit, plus WALL_SECONDS (the interpreter's
# start): a job the machine runs slowly gets room, and one the answer keeps busy meets its CPU
# limit first (module docstring).  Waiting costs no CPU: the answer cannot sleep.
WALL_FACTOR, WALL_SECONDS = 4.0, 30.0
# The sandbox's CPU figure of a job lags the kernel's own count a little (command.py): a job
# killed at its wall clock with this share of its CPU limit spent counts as spent.
CPU_SPENT = 0.8
# A job's cases file is written into the sandbox's private /tmp (a tmpfs: CommandLimits.tmp_mb,
# 1 GiB) and read whole by the keeper, whose address space is the job's 2 GiB: cases whose wire
# text passes this many characters go to several jobs in turn (check_blocks).  HumanEval/15's
# corpus holds 676 bad outputs of about 5 MB each (3.4 GB): one job of them filled the harness's
# memory with four copies (issue #46, session 24).
JOB_CASE_BYTES = 96 << 20


@dataclass(frozen=True)
class BlockOutcome:
    kind: str  # "holds" | "violated" | "raised" | "harness" | "budget" | "skipped"
    exc_type: str = ""
    line: str = ""
    # CPU seconds the case took, as its spec process reported it (None: no answer).  That
    # process can write any figure, for its own batch only, as it can write any kind.
    cpu: float | None = None


def available() -> str | None:
    """None when the confinement works here, else one line saying how to install it."""
    try:
        import pyseccomp

        pyseccomp.SyscallFilter(defaction=pyseccomp.ALLOW)
    except Exception:  # noqa: BLE001 - ImportError, or libseccomp.so missing
        return INSTALL_HINT
    return None


def batches_of(keys: Sequence[Any], size: int) -> list[list[int]]:
    """Case indices in batches of at most ``size``, no two cases with the same key
    in one batch, filled in the cases' order (each case into the first open batch
    that has room and lacks its key)."""
    batches: list[list[int]] = []
    seen: list[set] = []
    open_from = 0
    for i, key in enumerate(keys):
        for b in range(open_from, len(batches)):
            if len(batches[b]) < size and key not in seen[b]:
                batches[b].append(i)
                seen[b].add(key)
                break
        else:
            batches.append([i])
            seen.append({key})
        while open_from < len(batches) and len(batches[open_from]) >= size:
            open_from += 1
    return batches


# Hypothesis's Unicode tables, as a job's keeper finds them: its storage folder is
# ``.hypothesis`` in the working directory, a search job's fresh folder.
UNICODE_TABLES = ("charmap", "codec-v2-utf-8")
_MAKE_TABLES = ("from hypothesis.internal import charmap\n"
                "charmap.charmap()\n"
                "charmap.intervals_from_codec('utf-8')\n")


@functools.cache
def hypothesis_unicode_files() -> dict[str, bytes]:
    """The files of Hypothesis's Unicode tables (its category map and the UTF-8 codec's
    characters), for a search job's working directory, by path within it.

    Why: Hypothesis computes these tables on first use and keeps them in its storage
    folder; a sandbox job starts in a fresh folder, so every search job computed them
    again: about 2.3 CPU s of its ~3 s start (the UTF-8 table tries to encode all 1.1
    million code points), more than half of a 100-example search.  They are computed
    once here, by this interpreter's Hypothesis in a process of the harness, kept in the
    user's cache folder per Hypothesis and Unicode version, and shipped with each job:
    the same tables the job would compute (Hypothesis's own, byte for byte), so the
    examples are the same.  A job whose interpreter has another Unicode version (a
    repository's venv) ignores them and computes its own; where they cannot be made,
    none are shipped and the job computes them as before."""
    import unicodedata
    from importlib.metadata import version

    try:
        key = f"hypothesis-{version('hypothesis')}-unicode-{unicodedata.unidata_version}"
    except Exception:  # noqa: BLE001 - no Hypothesis metadata: the job computes its own
        return {}
    cache = tables_folder() / key
    names = [f"{name}.json.gz" for name in UNICODE_TABLES]
    if not all((cache / n).is_file() for n in names):
        try:
            _make_unicode_tables(cache, names)
        except (OSError, subprocess.SubprocessError):
            return {}
    where = f".hypothesis/unicode_data/{unicodedata.unidata_version}"
    return {f"{where}/{n}": (cache / n).read_bytes() for n in names}


def tables_folder() -> Path:
    """Where the tables are kept: ``$SPECBENCH_HYPOTHESIS_TABLES``, else the user's cache folder
    (the test suite sets the variable once, so its pytest runs with a HOME of their own share it)."""
    if os.environ.get("SPECBENCH_HYPOTHESIS_TABLES"):
        return Path(os.environ["SPECBENCH_HYPOTHESIS_TABLES"])
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("pytest-specbench")) / "hypothesis-unicode"


def _make_unicode_tables(cache: Path, names: list[str]) -> None:
    """Hypothesis's tables made by a process of this interpreter (the harness's own
    code, no answer), then moved into ``cache`` whole (a concurrent maker's copy is the same)."""
    import unicodedata

    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([sys.executable, "-c", _MAKE_TABLES], check=True, timeout=300, capture_output=True,
                       env={**os.environ, "HYPOTHESIS_STORAGE_DIRECTORY": tmp})
        made = Path(tmp) / "unicode_data" / unicodedata.unidata_version
        cache.mkdir(parents=True, exist_ok=True)
        for name in names:
            partial = cache / f"{name}.{os.getpid()}.partial"
            partial.write_bytes((made / name).read_bytes())
            partial.replace(cache / name)


# How a blocks job starts warm (the sandbox's ``execution/warm.py``): its zygote cloned from an
# image of the job's script with what the zygote imports (never Hypothesis or the search: no spec
# child may have them in its memory, .pbt_keeper), its keeper from that image with the search's
# module and Hypothesis on top.  Hypothesis's modules a search uses, imported up front.
WARM_BASE = dict(main="specbench_blocks:warm_keeper", helper="specbench_blocks:warm_zygote",
                 base=("wire", "specbench_blocks"), base_preload=(*PRELOADED, "pyseccomp"))
SEARCH_PRELOAD = ("hypothesis", "hypothesis.strategies", "hypothesis.errors", "hypothesis.configuration",
                  "hypothesis.internal.conjecture.providers", "hypothesis.internal.conjecture.engine",
                  "hypothesis.internal.charmap")


def blocks_job(preamble: str, source: str, cases: Sequence[dict], case_seconds: float,
               timeout: float, batches: Sequence[Sequence[int]] | None = None,
               search: dict | None = None, keeper: Path = SEARCH_SCRIPT,
               decisive: Sequence[int] = (), case_timer: bool = False,
               encoded: Sequence[Sequence[str]] | None = None) -> tuple[CommandJob, str]:
    """The command job evaluating ``source`` after ``preamble`` on each case
    (``{"inputs": {name: value}, "return_value": value}``, plain data), each
    batch of case indices in a child of its own (default: every case alone);
    returns the job and its nonce.  With ``search`` (the pbt tier's
    configuration, :mod:`.search`), the keeper makes its cases itself with
    Hypothesis instead (``cases`` is then empty); ``keeper`` is the search's
    module (nl2postcond's :mod:`.pbt_keeper`; PostcondBench's
    :mod:`.icontract_search`), shipped as ``specbench_search.py``.
    ``decisive``: indices of cases whose failure settles the answer's verdict
    (nl2postcond's reference outputs): once one has not held, the cases not yet
    evaluated are ``skipped``.  Only the keeper reads them, with the cases.
    ``case_timer``: each case at most ``case_seconds`` of CPU, and the cases after
    a time-out evaluated by a fresh child (:mod:`.block_job`); else, as before,
    the child's limit is pooled over its batch and a time-out ends the batch.
    ``encoded``: per batch, its cases' wire texts, already made (:func:`check_blocks`
    encodes a batch once, to size its jobs); ``cases`` is then not read."""
    nonce = secrets.token_hex(16)
    config = {"nonce": nonce, "preamble": preamble, "source": source, "case_seconds": case_seconds,
              "cases": "blocks-cases.json", "cpu_budget": timeout, "case_timer": bool(case_timer)}
    batches = batches or [[i] for i in range(len(cases))]
    if encoded is None:
        encoded = [[wire.dumps(cases[i]) for i in b] for b in batches]
    files = {"specbench_blocks.py": JOB_SCRIPT.read_bytes(), "wire.py": Path(wire.__file__).read_bytes(),
             # each case's wire text apart: the keeper hands the cases after a time-out to a fresh child
             "blocks-cases.json": json.dumps({"batches": [[list(b), list(texts)] for b, texts in zip(batches, encoded)],
                                              "decisive": sorted(set(decisive))}).encode()}
    if search is not None:
        config["search"] = "search-config.json"
        files.update({"specbench_search.py": keeper.read_bytes(),
                      "search-config.json": json.dumps(search).encode(), **hypothesis_unicode_files()})
    files["blocks-config.json"] = json.dumps(config).encode()
    warm = WarmStart(**WARM_BASE, top=("specbench_search",), top_preload=SEARCH_PRELOAD) if search is not None \
        else WarmStart(**WARM_BASE)
    job = CommandJob(argv=(sys.executable, "-s", "-E", "specbench_blocks.py", "blocks-config.json"), files=files,
                     wall_seconds=timeout * WALL_FACTOR + WALL_SECONDS, cpu_seconds=timeout, memory_mb=2048,
                     output_bytes=1 << 16, warm=warm)
    return job, nonce


def read_blocks(records: Sequence[Any], nonce: str, cases: int, timed_out: bool,
                cpu_spent: bool = True) -> list[BlockOutcome]:
    """Per case, its outcome; cases the job did not reach are ``raised`` with why,
    or ``budget`` when the job ran out of time with its CPU limit not spent
    (``cpu_spent`` false: the machine's load, module docstring)."""
    mine = [r for r in records if isinstance(r, dict) and r.get("nonce") == nonce]
    if not any(r.get("event") == "start" for r in mine):
        raise InfrastructureError("the spec job's keeper did not start (no start record)")
    found: dict[int, BlockOutcome] = {}
    for rec in mine:
        index = rec.get("case")
        if isinstance(index, int) and 0 <= index < cases and index not in found \
                and rec.get("kind") in ("holds", "violated", "raised", "harness", "budget", "skipped"):
            cpu = rec.get("cpu")
            found[index] = BlockOutcome(rec["kind"], str(rec.get("exc", "")), str(rec.get("line", "")),
                                        float(cpu) if type(cpu) in (int, float) else None)
    if timed_out and not cpu_spent:
        missing = BlockOutcome("budget", "", "the evaluation's wall-clock limit passed with its CPU limit not spent "
                                             "(the machine's load)")
    else:
        missing = BlockOutcome("raised", "", "timeout (the whole evaluation)" if timed_out
                               else "the evaluation ended early")
    return [found.get(i, missing) for i in range(cases)]


def job_groups(cases: Sequence[dict], batches: Sequence[Sequence[int]], limit: int | None = None, encode=None):
    """The batches in runs of whole batches, each run's wire text at most ``limit``
    characters (a batch larger than that alone), in order, as (batches, their texts):
    a batch is encoded (``encode``, default :func:`.wire.dumps`) when its run is made, so
    only one run's text is held at once."""
    limit = JOB_CASE_BYTES if limit is None else limit
    encode = encode or wire.dumps
    group: list[Sequence[int]] = []
    texts: list[list[str]] = []
    size = 0
    for b in batches:
        mine = [encode(cases[i]) for i in b]
        grows = sum(len(t) for t in mine)
        if group and size + grows > limit:
            yield group, texts
            group, texts, size = [], [], 0
        group.append(b)
        texts.append(mine)
        size += grows
    if group:
        yield group, texts


def check_blocks(executor: Any, preamble: str, source: str, cases: Sequence[dict], case_seconds: float = 2.0,
                 timeout: float = 60.0, batches: Sequence[Sequence[int]] | None = None,
                 decisive: Sequence[int] = (), case_timer: bool = False, encode=None) -> list[BlockOutcome]:
    """End to end in the ``command`` executor: per case, its outcome (``batches``:
    which cases share a spec process; default none; ``decisive``, ``case_timer``: :func:`blocks_job`).  A case the harness could
    not evaluate (``harness``), or could not reach within its own budget
    (``budget``: the machine's load), raises :class:`InfrastructureError`:
    E, and not a lasting failure, so no cache keeps it (#48).

    Cases whose text passes :data:`JOB_CASE_BYTES` go to several jobs in turn
    (:func:`job_groups`), each with its share of ``timeout`` by its cases; once a
    decisive case has not held, the later jobs do not run (their cases are
    ``skipped``, as the keeper marks them within a job).  ``encode``: a case's wire
    text (default :func:`.wire.dumps`), made when its job is, for cases that hold a
    value by reference (nl2postcond's long strings, read from their store then)."""
    if not cases:
        return []
    batches = [list(b) for b in batches] if batches else [[i] for i in range(len(cases))]
    decisive = set(decisive)
    outcomes: list[BlockOutcome | None] = [None] * len(cases)
    decided = False
    for group, texts in job_groups(cases, batches, encode=encode):
        members = [i for b in group for i in b]
        if decided:
            for i in members:
                outcomes[i] = BlockOutcome("skipped", "", SKIPPED_LINE)
            continue
        local = {i: k for k, i in enumerate(members)}  # the job numbers its cases from 0
        share = timeout * len(members) / len(cases)
        mine = _check_job(executor, preamble, source, len(members), case_seconds, share,
                          [[local[i] for i in b] for b in group], texts,
                          [local[i] for i in members if i in decisive], case_timer)
        for i, outcome in zip(members, mine):
            outcomes[i] = outcome
            decided = decided or (i in decisive and outcome.kind != "holds")
    return outcomes


def _check_job(executor, preamble, source, count, case_seconds, timeout, batches, texts, decisive, case_timer):
    job, nonce = blocks_job(preamble, source, (), case_seconds, timeout, batches, decisive=decisive,
                            case_timer=case_timer, encoded=texts)
    result = executor.run(None, job)
    outcomes = read_blocks(result.records, nonce, count, result.timed_out,
                           cpu_spent=result.cpu >= CPU_SPENT * job.cpu_seconds)
    broken = next((o for o in outcomes if o.kind == "harness"), None)
    if broken is not None:
        raise InfrastructureError(f"the spec service could not evaluate: {broken.line or INSTALL_HINT}")
    late = [i for i, o in enumerate(outcomes) if o.kind == "budget"]
    if late:
        raise InfrastructureError(f"the spec service ran out of its own time on {len(late)} of {count} cases "
                                  f"(case #{late[0]}: {outcomes[late[0]].line}; the job used {result.cpu:.1f} of "
                                  f"{job.cpu_seconds:.1f} CPU s in {result.wall:.1f} s): run again on a quieter machine")
    return outcomes
