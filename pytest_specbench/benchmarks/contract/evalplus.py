"""EvalPlus (HumanEval+ / MBPP+): the functional check, and a benchmark of its own.

``--specbench=evalplus`` runs every HumanEval+ and MBPP+ task with the
``functional`` check only (EvalPlus's "base + extra" verdict; Liu et al. 2023,
§2).  The same check is ContractEval's ``functional`` check
(:mod:`.contract`), which imports it from here.

How a verdict is reached: the canonical solution's outputs are computed once,
in the sandbox, and cached (keyed by the data file's sha256 and the Python
version); the sample runs in the sandbox on ``base_input`` then ``plus_input``
and streams its outputs back; the harness compares each with
:func:`~pytest_specbench.benchmarks.contract.evalplus_data.outputs_match` and stops the sample at
its first wrong answer unless ``--specbench-details`` asks for all.

Time limits are CPU seconds per input: ``--specbench-call-cpu`` (default 1 s, the
floor EvalPlus also uses), or ``--specbench-reference-factor`` (default 4, as
EvalPlus) times the reference's cost on that input where that is more.  The
cost is stored in units of a fixed calibration workload
(:func:`~pytest_specbench.execution.limits.machine_speed`), so a limit means the
same work on any machine; EvalPlus stores raw wall seconds from whichever
machine first built its cache.
"""
from __future__ import annotations

import hashlib
import json
import os
import sys
from collections import OrderedDict
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any, Mapping, Sequence

from .evalplus_data import (canonical_program, equality_judged, expected_from_canonical, input_count, load_evalplus,
                             load_evalplus_indexed, outputs_match, stores_output_as_is)
from ...data.jsonl import file_digest
from .sanitize import NO_CODE, clean_sample, has_no_code, program_form
from ...data.bundled import bundled_suite
from ...errors import DataError, InfrastructureError, RepeatableError, lasting_failure
from ...execution import wire
from ...execution.python import CallsJob
from ...execution.limits import (BORDERLINE_MARGIN, REFERENCE_RUNS, REMEASURE_RUNS, REMEASURE_WALL_FACTOR,
                                 machine_speed)
from ...metrics.passk import pass_at_k
from ...models.base import Completion
from ..base import CheckResult, Message, Prompt, Task, TaskSet

# CPU limit of the trusted canonical solution per input, in multiples of --specbench-call-cpu:
# Mbpp/255's largest output takes ~25 s to compute and hash (892 MB encoded).
CANONICAL_CPU_FACTOR = 60
# <task>.outputs (one encoding per line) + <task>.json (offsets, digests, costs, digest_only, exact,
# work_seen).  6: the reference's cost where it sets the limit is the least of REFERENCE_RUNS runs;
# "exact" says where a digest can decide; no digest-only outputs for tasks with an atol.
# 7: large lists of strings (or of tuples of strings) kept as their value hash ("hashed").
EXPECTED_FORMAT = 7


@dataclass(frozen=True)
class EvalPlusFiles:
    humaneval: Path | None
    mbpp: Path | None

    @classmethod
    def find(cls, folder: Path) -> "EvalPlusFiles":
        def one(pattern: str) -> Path | None:
            hits = sorted(folder.glob(pattern))
            return hits[-1] if hits else None

        return cls(one("HumanEvalPlus*.jsonl*"), one("MbppPlus*.jsonl*"))


class EvalPlusData:
    """HumanEval+ and MBPP+ tasks of one data folder, loaded once per process."""

    _cache: dict[Path, "EvalPlusData"] = {}

    def __init__(self, folder: Path, index_dir: Path | None = None):
        files = EvalPlusFiles.find(folder)
        if not files.humaneval and not files.mbpp:
            raise DataError(folder, None, "no HumanEvalPlus*.jsonl[.gz] or MbppPlus*.jsonl[.gz] here")
        self.tasks: dict[str, Mapping[str, Any]] = {}
        self.digest: dict[str, str] = {}  # task id -> sha256 of its file
        self.source: dict[str, Path] = {}  # task id -> its file
        self.files = [f for f in (files.humaneval, files.mbpp) if f]
        for f in self.files:
            if index_dir is not None:  # inputs decoded per task when it runs (evalplus_data.EvalPlusTask)
                tasks, digest = load_evalplus_indexed(f, index_dir)
            else:
                tasks, digest = load_evalplus(f), file_digest(f)
            for task_id, task in tasks.items():
                self.tasks[task_id] = task
                self.digest[task_id] = digest
                self.source[task_id] = f

    @classmethod
    def load(cls, folder: Path, index_dir: Path | None = None) -> "EvalPlusData":
        """The data of ``folder``, loaded once per process; ``index_dir`` (a cache
        folder) makes its tasks' inputs load when first used."""
        folder = folder.resolve()
        if folder not in cls._cache:
            cls._cache[folder] = cls(folder, index_dir)
        return cls._cache[folder]


def index_folder(settings: Any) -> Path | None:
    """Where the EvalPlus files' indexes are kept: the run's cache folder."""
    state = getattr(settings, "state_dir", None)
    return Path(state) / "cache" / "evalplus-index" if state else None


def functional_calls(task: Mapping[str, Any]) -> list[tuple[tuple, dict]]:
    return [(tuple(inp), {}) for inp in list(task["base_input"]) + list(task["plus_input"])]


def _digest(encoded: bytes) -> str:
    return hashlib.blake2b(encoded, digest_size=16).hexdigest()


def _has_nan(value: Any) -> bool:
    if isinstance(value, float):
        return value != value
    if isinstance(value, (list, tuple, set, frozenset)):
        return any(_has_nan(v) for v in value)
    if isinstance(value, dict):
        return any(_has_nan(k) or _has_nan(v) for k, v in value.items())
    return False


# Results that are strings longer than this come back from the sandbox as a digest
# when the task's oracle is plain equality (HumanEval/15's are up to 10 MB each).
DIGEST_STRINGS_OVER = 1 << 16
# Lists and tuples whose encoding is longer than this, and whose equality the
# encoding decides (no floats, sets, dicts or bools inside), come back as the
# digest of that encoding, computed in the child as it is produced, when the
# task's oracle is plain equality: Mbpp/255's canonical output on one plus
# input is 1.66 M tuples, 935 MB encoded.  Neither the harness nor the cache
# holds such an output whole; a sample's output matches it iff the digests do.
DIGEST_OUTPUTS_OVER = 8 << 20
# Lists and tuples of non-empty strings or of numbers, or of tuples (or lists) of
# them, with at least this many leaves are known by their value hash instead
# (execution.wire.value_hash: Python's own C hash, no encoding; ~0.3x the cost of
# building Mbpp/255's output where the encoding digest cost ~11x).  About the
# size of DIGEST_OUTPUTS_OVER for short strings.
VALUE_HASH_OVER = 1 << 20


@dataclass(frozen=True)
class Hashed:
    """An expected output known by its value hash only (``wire.value_hash``)."""

    digest: str
    strings: int
    prefix: str


@dataclass(frozen=True)
class DigestOnly:
    """An expected output known by the digest of its encoding only."""

    digest: str
    length: int
    prefix: str


def _digest_outputs(task: Mapping[str, Any]) -> int | None:
    """May large outputs of this task be judged by digest at all?  Only where the
    oracle is plain equality with no tolerance: with an ``atol``, EvalPlus accepts
    close numbers (ints too, through ``allclose``), which a digest cannot see."""
    plain = equality_judged(task) and stores_output_as_is(task) and not float(task.get("atol") or 0)
    return DIGEST_OUTPUTS_OVER if plain else None


def _exact_encoding(encoded: bytes) -> bool:
    """Is the value of this wire encoding one whose equality its encoding decides
    (:func:`wire.is_exact`: nests of lists, tuples, str, int, None, bytes)?
    Without a string or tag (no ``"``), a float, bool, NaN or infinity shows
    as one of ``.eEIN`` (true/false hold an ``e``); otherwise the value is decoded."""
    if b'"' not in encoded:
        return not any(c in encoded for c in (b".", b"e", b"E", b"I", b"N"))
    try:
        return wire.is_exact(wire.loads(encoded))
    except (ValueError, RecursionError, TypeError):
        return False


class _NotExact(Exception):
    pass


def _as_exact(value: Any) -> Any:
    """``value`` with every number that equals an int made that int (bools,
    integral floats, complex numbers with no imaginary part), so that
    ``value == e`` for an exact ``e`` (:func:`wire.is_exact`) holds iff the
    encodings agree.  Raises :class:`_NotExact` for what can equal no exact
    value (a fractional, infinite or NaN float, a set, a dict, an opaque object)."""
    t = type(value)
    if t is int or t is str or t is bytes or value is None:
        return value
    if t is bool:
        return int(value)
    if t is float:
        if value.is_integer():
            return int(value)
        raise _NotExact
    if t is complex:
        if value.imag == 0:
            return _as_exact(value.real)
        raise _NotExact
    if t is list:
        return [_as_exact(v) for v in value]
    if t is tuple:
        return tuple(_as_exact(v) for v in value)
    raise _NotExact


def _equals_digest_only(value: Any, digest: str) -> bool:
    """EvalPlus's ``out == exp`` for an expected output known by its digest only
    (always an exact value: only those are kept as digests), whatever the
    sample's output holds: ``[1.0, 2]`` equals ``[1, 2]``, ``(1,)`` is not ``[1]``."""
    try:
        normal = _as_exact(value)
    except (_NotExact, RecursionError):
        return False
    h = hashlib.blake2b(digest_size=16)
    for piece in wire.iter_dumps(normal):
        h.update(piece.encode("ascii"))
    return h.hexdigest() == digest


class ExpectedOutputs:
    """The canonical outputs of one task, as cached on disk.

    ``<task>.outputs`` holds one :mod:`~pytest_specbench.execution.wire`
    encoding per input, a line each; ``<task>.json`` indexes it (offset,
    length and digest of each line, and the reference's cost per input).
    Only the index is held in memory: a sample's output whose encoding has the
    expected digest is correct without being decoded, and an expected output
    is read and decoded only when a sample's differs.  (Some tasks' outputs
    are large: HumanEval/15's are 147 MB encoded, HumanEval/130's 114 MB,
    several times that as Python objects.)
    """

    def __init__(self, index_path: Path, task: Mapping[str, Any]):
        index = json.loads(index_path.read_text())
        self.outputs_path = index_path.with_suffix(".outputs")
        self.offsets, self.digests, self.work = index["offsets"], index["digests"], index["work"]
        self.str_digests = index["str_digests"]
        self.digest_only = {int(i): v for i, v in index.get("digest_only", {}).items()}  # i -> [length, prefix]
        # The reference's runs where its cost sets the limit: i -> work units of each run.
        self.work_seen = {int(i): v for i, v in index.get("work_seen", {}).items()}
        # Identical bytes decode to equal values; they settle the verdict when the
        # task's oracle is plain equality and the value holds no NaN (never equal).
        plain = equality_judged(task)
        self.by_digest = [plain and not nan for nan in index["nan"]]
        # Where a sample's large output may come back as a digest: the expected
        # output is exact (its encoding decides equality) and the oracle is plain
        # equality without tolerance.  Elsewhere (floats, bools, an atol) the
        # output comes whole and the oracle judges it (issue #28: [1, 2] vs [1.0, 2.0]).
        limit = _digest_outputs(task)
        self.digest_over = [limit if limit is not None and exact and not nan else None
                            for exact, nan in zip(index["exact"], index["nan"])]
        # Where the expected output is known by its value hash: i -> [digest, strings, prefix].
        # A sample's list or tuple output there comes back as its value hash (value_hash_over 0).
        self.hashed = {int(i): v for i, v in index.get("hashed", {}).items()}
        self.hash_over = [0 if i in self.hashed else None for i in range(len(self.work))] if self.hashed else None

    def __len__(self) -> int:
        return len(self.work)

    def identical(self, i: int, encoded: bytes | None) -> bool:
        return encoded is not None and self.by_digest[i] and _digest(encoded) == self.digests[i]

    def identical_digest(self, i: int, digest: str | None) -> bool:
        return digest is not None and self.by_digest[i] and digest == self.digests[i]

    def shown(self, i: int) -> str:
        """The expected output for a failure message (large ones by size and start)."""
        if i in self.digest_only:
            length, prefix = self.digest_only[i]
            return f"an output of {length:,} bytes encoded, starting {_short(prefix, 40)}"
        if i in self.hashed:
            _, strings, prefix = self.hashed[i]
            return f"an output of {strings:,} values, starting {_short(prefix, 40)}"
        return _short(self.value(i))

    def value(self, i: int) -> Any:
        start, end = self.offsets[i], self.offsets[i + 1] - 1  # without the newline
        with open(self.outputs_path, "rb") as fh:
            fh.seek(start)
            return wire.loads(fh.read(end - start))

    @staticmethod
    def write(index_path: Path, encodings: Sequence[bytes | DigestOnly | Hashed], work: Sequence[float],
              work_seen: Mapping[int, Sequence[float]] | None = None) -> None:
        offsets, pos = [], 0
        digest_only = {i: e for i, e in enumerate(encodings) if isinstance(e, DigestOnly)}
        hashed = {i: e for i, e in enumerate(encodings) if isinstance(e, Hashed)}
        encodings = [b"null" if isinstance(e, (DigestOnly, Hashed)) else e for e in encodings]
        outputs_tmp = index_path.with_suffix(".outputs.tmp")
        with open(outputs_tmp, "wb") as fh:
            for enc in encodings:
                offsets.append(pos)
                fh.write(enc)
                fh.write(b"\n")
                pos += len(enc) + 1
        offsets.append(pos)
        os.replace(outputs_tmp, index_path.with_suffix(".outputs"))
        str_digests, nan = [], []
        for enc in encodings:  # one value at a time, and only those that can be a string or hold a NaN
            is_str, has_nan = enc[:1] == b'"', b"NaN" in enc
            value = wire.loads(enc) if is_str or has_nan else None
            str_digests.append(wire.string_digest(value) if type(value) is str else None)
            nan.append(has_nan and _has_nan(value))
        # A hashed output's line is a placeholder: its digest matches no encoding.
        digests = [digest_only[i].digest if i in digest_only else "" if i in hashed else _digest(e)
                   for i, e in enumerate(encodings)]
        exact = [i in digest_only or (i not in hashed and _exact_encoding(e)) for i, e in enumerate(encodings)]
        index = {"offsets": offsets, "digests": digests,
                 "digest_only": {i: [e.length, e.prefix] for i, e in digest_only.items()},
                 "hashed": {i: [e.digest, e.strings, e.prefix] for i, e in hashed.items()},
                 "str_digests": str_digests, "nan": nan, "exact": exact, "work": list(work),
                 "work_seen": {i: list(v) for i, v in (work_seen or {}).items()}}
        index_tmp = index_path.with_suffix(".tmp")
        index_tmp.write_text(json.dumps(index))
        os.replace(index_tmp, index_path)  # last: its presence means the pair is complete


_expected_in_memory: "OrderedDict[Path, ExpectedOutputs]" = OrderedDict()
EXPECTED_IN_MEMORY = 64  # task indexes (small); xdist hands a worker a task's samples in runs


def _expected_outputs(task: Mapping[str, Any], digest: str, ctx) -> ExpectedOutputs:
    """Canonical outputs for base + plus inputs and the reference's cost on each
    (CPU seconds over :func:`machine_speed`), computed once in the sandbox and cached."""
    from filelock import FileLock

    path = _expected_index_path(task, digest, ctx)
    # A canonical solution that raises under these limits raises the same way next
    # time: remember it (with its reason) rather than spend the time again.  Only
    # that: a time-out, a lost job or a MemoryError may be the machine's load (#48).
    failed = path.with_suffix(".failed")
    head = FAILED_FORMAT + " " + json.dumps(asdict(ctx.settings.limits), sort_keys=True)
    if not path.exists():
        with FileLock(str(path) + ".lock"):
            remembered = _remembered_failure(failed, head)
            if remembered is not None:
                # Same error, same words as the run that found it (reports stay comparable);
                # deleting the .failed file retries.
                raise CanonicalFailure(remembered)
            if not path.exists():
                try:
                    encodings, work, work_seen = _run_canonical(task, digest, ctx)
                except CanonicalFailure as exc:  # not a sandbox fault, which may pass
                    tmp = failed.with_suffix(f".{os.getpid()}.tmp")
                    tmp.write_text(head + "\n" + str(exc))
                    os.replace(tmp, failed)
                    raise
                ExpectedOutputs.write(path, encodings, work, work_seen)
    # Every sample of a task compares against the same outputs: index them once per process.
    if path not in _expected_in_memory:
        _expected_in_memory[path] = ExpectedOutputs(path, task)
        while len(_expected_in_memory) > EXPECTED_IN_MEMORY:
            _expected_in_memory.popitem(last=False)
    _expected_in_memory.move_to_end(path)
    return _expected_in_memory[path]


def _expected_index_path(task: Mapping[str, Any], digest: str, ctx) -> Path:
    # The format version is part of the key: a cache written by an older layout is never misread.
    # Value hashes are the sample interpreter's: another one (--specbench-sample-python) keys its own outputs.
    python = getattr(ctx.settings, "sample_python", "") or ""
    other = f"-{hashlib.sha256(python.encode()).hexdigest()[:8]}" if python else ""
    folder = ctx.cache_dir("expected", f"v{EXPECTED_FORMAT}-{digest[:16]}-py{sys.version_info[0]}.{sys.version_info[1]}{other}")
    return folder / (task["task_id"].replace("/", "_") + ".json")


# What one item costs besides the calls' own work (for dispatch order only,
# plugin/scheduling.py), in the units the expected-output index stores work in
# (multiples of execution.limits.machine_speed, ~15 ms here): a sandbox job
# (fork, load, verdict: ~2.5 ms measured by pytest_specbench/perf) and one call's
# round trip in the child (~20 us).
JOB_OVERHEAD_WORK = 0.2
CALL_OVERHEAD_WORK = 0.0015


def functional_cost(task: Mapping[str, Any], digest: str, ctx) -> float:
    """Predicted cost of one sample's functional check, in work units: what the
    reference spent on every input when its expected outputs are cached (a
    passing sample does about that work; a failing one stops early or at a time
    limit), else a per-input guess.  Reads the cache only; never runs anything."""
    calls = input_count(task)  # a lazy task's inputs stay undecoded (the controller plans every item)
    guess = JOB_OVERHEAD_WORK + calls * CALL_OVERHEAD_WORK
    try:
        work = json.loads(_expected_index_path(task, digest, ctx).read_text())["work"]
    except (OSError, ValueError, KeyError, TypeError):
        return guess
    return guess + sum(work)


# The first word of a ``.failed`` file: one written by an older version (which
# also kept a canonical solution's MemoryError) is not read, and is tried again.
FAILED_FORMAT = "failed-v2"


def _remembered_failure(failed: Path, head: str) -> str | None:
    """The reason a canonical solution failed under these limits in an earlier run, if remembered."""
    try:
        first, reason = failed.read_text().split("\n", 1)
    except (OSError, ValueError):
        return None
    return reason if first == head else None


class CanonicalFailure(RepeatableError):
    """The benchmark's own solution raised on an input under these limits: it
    will again (remembered in a ``.failed`` file and, as a repeatable error, in
    the result cache)."""

    lasting = True


class CanonicalTimeout(InfrastructureError):
    """The benchmark's own solution timed out, ran out of memory or its job was
    lost: the load of the machine may have caused it, so it is remembered
    nowhere (neither a ``.failed`` file nor the result cache, which keeps only a
    :class:`RepeatableError`) and the next run tries again (#48)."""

    lasting = False


def _run_canonical(task: Mapping[str, Any], digest: str, ctx) -> tuple[list, list[float], dict[int, list[float]]]:
    """The canonical outputs, the reference's cost per input (work units), and,
    for each input where that cost sets the sample's limit (``reference_factor``
    times it is over ``--specbench-call-cpu``), the cost of each of its
    :data:`REFERENCE_RUNS` runs: the least is kept (as for a borderline sample,
    and as :func:`machine_speed` takes the least of five), so one slow run does
    not raise the limit for every sample after it."""
    calls = functional_calls(task)
    limits = ctx.settings.limits
    limit = limits.call_cpu * CANONICAL_CPU_FACTOR
    program, executor = canonical_program(task), ctx.python_executor()
    job = CallsJob(program, task["entry_point"], _calls_key(task, digest), lambda: calls, range(len(calls)),
                   call_cpu=[limit] * len(calls), encoded_digest_over=_digest_outputs(task),
                   value_hash_over=VALUE_HASH_OVER if _digest_outputs(task) is not None else None)
    result = executor.run(None, job)
    encodings, work, speed = [], [], machine_speed()
    work_seen: dict[int, list[float]] = {}
    for i in range(len(calls)):
        outcome = result.outcomes.get(i)
        if outcome is None or outcome.status != "ok":
            why = result.failure_reason() if outcome is None else (outcome.exc_type or outcome.status)
            error = CanonicalFailure if outcome is not None and lasting_failure(outcome.status, outcome.exc_type) \
                else CanonicalTimeout
            raise error(f"{task['task_id']}: canonical solution failed on input #{i}: {why}")
        if outcome.value_hash:
            encodings.append(Hashed(outcome.value_hash, outcome.hash_leaves, outcome.str_prefix))
        elif outcome.encoded_digest is not None:
            encodings.append(DigestOnly(outcome.encoded_digest, outcome.encoded_len, outcome.str_prefix))
        elif stores_output_as_is(task):
            encodings.append(outcome.encoded)  # the bytes a sample's identical output encodes to
        else:
            encodings.append(wire.dumps(expected_from_canonical(task, outcome.value)).encode())
        seen = [outcome.cpu]
        if limits.reference_factor * outcome.cpu > limits.call_cpu:
            # The reference's own output was kept from the first run; the others are timed only.
            again = executor.remeasure(job, i, limit, accept=lambda o: o.status == "ok", runs=REFERENCE_RUNS - 1,
                                       every_run=True)
            seen += [t for t in again if t is not None]
            work_seen[i] = [round(t / speed, 3) for t in seen]
        work.append(round(min(seen) / speed, 3))
    return encodings, work, work_seen


def _calls_key(task: Mapping[str, Any], digest: str) -> str:
    return f"{task['task_id']}@{digest[:12]}:functional"


def _short(value: Any, width: int = 120) -> str:
    """A bounded repr of a value a sample returned: never raises, whatever the
    value (an int past the 4,300-digit conversion limit, a self-referential or
    too deeply nested container: the sample's fault must stay its F)."""
    try:
        if isinstance(value, int) and int.bit_length(value) > 14_000:  # ~4,300 digits: repr would raise
            return f"<int of {int.bit_length(value)} bits>"
        text = repr(value)
    except Exception as exc:  # noqa: BLE001
        text = f"<{type(value).__name__} that cannot be shown: {type(exc).__name__}>"
    return text if len(text) <= width else text[:width - 3] + "..."


def sample_code(sample: Completion, entry_point: str) -> str:
    """The program to run: model answers are sanitized, the benchmark's own code is not."""
    if sample.meta.get("trusted_reference"):
        return sample.text
    return clean_sample(sample.text, entry_point)


def no_code(sample: Completion, code: str) -> bool:
    """A model answer without any code (``sanitize.has_no_code``); never the reference."""
    return not sample.meta.get("trusted_reference") and has_no_code(sample.text, code)


def sample_program_key(sample: Completion, entry_point: str) -> str:
    """``program_key`` of the Python checks: every answer without code shares one verdict."""
    code = sample_code(sample, entry_point)
    return "no-code" if no_code(sample, code) else program_form(code)


def functional_check(task: Mapping[str, Any], digest: str, sample: Completion, ctx) -> CheckResult:
    """EvalPlus "base + extra": every base and plus input gives the canonical output.

    Time: a call that ends over its CPU limit but within :data:`BORDERLINE_MARGIN`
    times it is *borderline*: if its output is right, it is run again in a fresh
    child (up to :data:`REMEASURE_RUNS` times) and the least CPU time seen decides;
    the details keep ``borderline`` (input, limit, the figures seen) either way.
    Each re-run makes the calls before it first, as the first run did (a sample
    may memoize across calls), and times only the borderline one.  The job stops at
    a borderline call and measures it at once; it goes on (in a fresh child, the calls
    before made again unjudged) only if the call is within its limit; in the details
    mode, which judges every input, the job goes on and it is measured at the end.
    A call stopped at the margin is over its limit at once; one stopped by its wall
    bound first (a loaded machine, a sleeper) stops the job, is run once more with
    more wall time, and the job goes on only if that run is within its limit
    (docs/timing.md)."""
    expected = _expected_outputs(task, digest, ctx)
    limits = ctx.settings.limits
    speed = machine_speed()  # once: ~1,000 inputs a task
    call_cpu = [max(limits.call_cpu, limits.reference_factor * w * speed) for w in expected.work]
    inputs = list(task["base_input"]) + list(task["plus_input"])
    n_base, details_mode = len(task["base_input"]), ctx.settings.details
    failures: list[tuple[int, str]] = []
    borderline: list = []  # outcomes right but over their limit (execution.python.CallOutcome)

    def wrong(outcome) -> str | None:
        """Why this output is wrong (None: it is right), by the task's oracle."""
        i = outcome.index
        if outcome.status == "ok" and outcome.str_digest is not None:
            # Only asked for when the oracle is plain equality: for a string result
            # that means the same string, which the digests settle.
            if outcome.str_digest == expected.str_digests[i]:
                return None
            return (f"expected {expected.shown(i)}, got another string "
                    f"({outcome.str_len} characters, starting {_short(outcome.str_prefix, 40)})")
        if outcome.status == "ok" and i in expected.hashed:
            # Known by its value hash (a list or tuple of strings, or of tuples of them): a
            # list or tuple output came back as its own (value_hash_over 0), equal iff the
            # hashes are; anything else cannot equal it.
            want = expected.hashed[i][0]
            if outcome.value_hash and outcome.value_hash == want:
                return None
            if outcome.value_hash:
                return (f"expected {expected.shown(i)}, got another output of {outcome.hash_leaves:,} values, "
                        f"starting {_short(outcome.str_prefix, 40)}")
            if outcome.value_hash == "":
                return (f"expected {expected.shown(i)}, got a list or tuple that is not one of non-empty strings "
                        f"or of numbers (or of tuples or lists of them)")
            if outcome.str_digest is not None:
                return f"expected {expected.shown(i)}, got a string of {outcome.str_len} characters"
            try:
                return f"expected {expected.shown(i)}, got {_short(outcome.value)}"
            except ValueError as exc:
                return f"expected {expected.shown(i)}, got an unreadable output ({str(exc)[:100]})"
        if outcome.status == "ok" and outcome.encoded_digest is not None:
            # Sent as a digest only where the expected output is exact (ExpectedOutputs.digest_over):
            # equal iff the encodings are.
            if expected.identical_digest(i, outcome.encoded_digest):
                return None
            return f"expected {expected.shown(i)}, got another output of {outcome.encoded_len:,} bytes encoded"
        if outcome.status == "ok" and i in expected.digest_only:
            # The expected output is known by its digest (an exact value); the sample's came whole.
            if expected.identical(i, outcome.encoded):
                return None
            try:
                value = outcome.value
            except ValueError as exc:
                return f"expected {expected.shown(i)}, got an unreadable output ({str(exc)[:100]})"
            if expected.by_digest[i] and _equals_digest_only(value, expected.digests[i]):
                return None
            return f"expected {expected.shown(i)}, got {_short(value)}"
        if outcome.status == "ok":
            if expected.identical(i, outcome.encoded):
                return None
            try:
                value = outcome.value
            except ValueError as exc:
                return str(exc)[:200]
            wanted = expected.value(i)
            if outputs_match(task, inputs[i], value, wanted):
                return None
            return f"expected {_short(wanted)}, got {_short(value)}"
        if outcome.status == "timeout":
            return f"over its {call_cpu[outcome.index]:.3g} s CPU limit"
        return f"raised {outcome.exc_type}: {outcome.message[:100]}"

    # The call this child was stopped at, to be measured again before the job goes on (at most
    # one: the child stops): one stopped by its wall-time bound, or one right but over its limit.
    stopped_at: list = []
    # Whether a borderline call still stops the job: only until one turns out within its
    # limit.  Each stop that goes on costs a fresh child that makes every call before it
    # again, so on a loaded machine, where many calls read borderline, stopping at each
    # would make the job's work grow with the square of its calls; after the first such
    # stop the rest are measured at the job's end, as before.
    stop_at_borderline = [not details_mode]
    judged_from = [0]  # calls below this index were judged in an earlier child (replayed here)

    def judge(outcome) -> bool:
        if outcome.index < judged_from[0]:
            return True  # replayed before the calls still to judge, as the first child made it
        if outcome.status == "timeout" and outcome.wall_stop and outcome.cpu < call_cpu[outcome.index] * BORDERLINE_MARGIN:
            # Stopped by the wall-time bound, not the CPU timer (which stops a call at
            # the margin): a loaded machine, or a sample that sleeps.  Measured again
            # at once, with more wall time, before the job goes on: on a loaded machine
            # the calls after it were stopped by their wall bound too, one after another
            # (a failing sample's item took 20-40 CPU s instead of 2, docs/timing.md).
            # The child says which timer stopped it: the CPU timer fires up to a tick
            # early, so a figure just under the margin is no sign of a wall stop (W1's
            # 55 false "wall" stops).
            borderline.append(outcome)
            stopped_at.append(outcome)
            return False
        why = wrong(outcome)
        if why is None:
            if outcome.over_limit:  # right, but over its limit on this one figure: measured again
                borderline.append(outcome)
                if stop_at_borderline[0]:
                    # ... at once, as a wall stop is, before the calls after it run: a call
                    # over its limit in every run fails the sample there (as the floor and
                    # EvalPlus stop at their first failure), and the rest of the job is not
                    # run for nothing (Mbpp/160: 5.5 of its 12.6 CPU s, docs/timing.md,
                    # session 19).  Within its limit, the job goes on in a fresh child.
                    stopped_at.append(outcome)
                    return False
            return True
        failures.append((outcome.index, why))
        return details_mode

    code = sample_code(sample, task["entry_point"])
    if no_code(sample, code):
        return CheckResult(False, {"passed": False, "base_passed": False, "inputs": len(inputs), "no_code": True,
                                   "reason": NO_CODE}, NO_CODE)
    strings_over = DIGEST_STRINGS_OVER if equality_judged(task) else None
    executor = ctx.python_executor()
    # The input set is built only when the sandbox does not hold it yet.
    job = CallsJob(code, task["entry_point"], _calls_key(task, digest), lambda: functional_calls(task),
                   range(len(inputs)), call_cpu=call_cpu, str_digest_over=strings_over,
                   encoded_digest_over=expected.digest_over, value_hash_over=expected.hash_over,
                   margin=BORDERLINE_MARGIN)
    timing: list[dict[str, Any]] = []

    def measure_again() -> None:
        """The borderline calls so far, in order, each in fresh children: the least
        CPU time seen decides (a wall stop: one run with more wall time)."""
        for first in borderline:
            if failures and not details_mode:
                break  # failed already: no figure can change the verdict
            i, stopped = first.index, first.status == "timeout"
            again = executor.remeasure(replace(job, wall_factor=limits.wall_factor * REMEASURE_WALL_FACTOR),
                                       i, call_cpu[i], accept=lambda o: wrong(o) is None,
                                       runs=1 if stopped else REMEASURE_RUNS, before=range(i), before_cpu=call_cpu[:i])
            seen = [None if stopped else first.cpu] + again
            figures = [t for t in seen if t is not None]
            within = bool(figures) and min(figures) <= call_cpu[i]
            timing.append({"input": i, "limit": round(call_cpu[i], 4),
                           "cpu": [None if t is None else round(t, 4) for t in seen],
                           "passed": within, **({"wall": True} if stopped else {})})
            if not within:
                if figures:
                    why = f"least CPU time of {len(seen)} runs: {min(figures):.3g} s"
                else:
                    why = f"no run of {len(seen)} finished with a right output within its wall-time bound"
                failures.append((i, f"over its {call_cpu[i]:.3g} s CPU limit ({why})"))
        borderline.clear()

    outcomes: dict = {}
    while True:
        result = executor.run(None, job, on_outcome=judge)
        outcomes.update((i, o) for i, o in result.outcomes.items() if i >= judged_from[0])
        if not stopped_at:
            break
        # A wall stop or a borderline call: it and the borderline calls before it are
        # measured now.  If it is within its limit the job goes on in a fresh child, which
        # makes the calls before it again first (a sample may keep state from call to call)
        # unjudged.
        stop = stopped_at.pop()
        measure_again()
        if (failures and not details_mode) or stop.index >= len(inputs) - 1:
            break
        stop_at_borderline[0] = False  # it was within its limit: the job goes on
        judged_from[0] = stop.index + 1
    measure_again()
    timing.sort(key=lambda entry: entry["input"])
    answered = len(outcomes)
    if not failures and answered < len(inputs):
        failures.append((answered, result.failure_reason() or "no answer"))
    first_failed = min(failures)[0] if failures else None
    passed = first_failed is None
    base_passed = passed or (first_failed >= n_base and all(i in outcomes for i in range(n_base)))
    details = {"passed": passed, "base_passed": base_passed, "inputs": len(inputs)}
    if timing:
        details["borderline"] = timing
    message = ""
    if not passed:
        i, why = min(failures)
        where = f"base input #{i}" if i < n_base else f"plus input #{i - n_base}"
        message = result.load_error or f"{where}: {why}"
        details.update(failed_input=i, reason=message[:300])
        if details_mode:
            details["failed_inputs"] = sorted(i for i, _ in failures)
            # Every input ran (or never answered): the functional pass rate f of ContractEval's
            # Appendix J (contract/metrics.py); an input without an outcome did not pass.
            failed = {i for i, _ in failures}
            details["inputs_passed"] = sum(1 for i in outcomes if i not in failed)
    return CheckResult(passed, details, message)


def _functional_verdicts(samples: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]] | None:
    return [s["checks"]["functional"] for s in samples if "functional" in s["checks"]] or None


def _pass_at(k: int, field: str):
    def score(verdicts: Sequence[Mapping[str, Any]]) -> float | None:
        n = len(verdicts)
        return pass_at_k(n, sum(1 for v in verdicts if v.get(field)), k) if k <= n else None
    return score


def declared_pass_at_k(ks: Sequence[int]):
    """pass@k (Chen et al. 2021, §2.1, unbiased estimator) on "base + extra" (``pass@k``)
    and "base" (``pass@k_base``), each the mean over tasks; as in EvalPlus, a k larger
    than some task's sample count is left out (:mod:`pytest_specbench.metrics.reducers`)."""
    from ...metrics.reducers import Declared, Mean

    return Declared(item=_functional_verdicts, reducers=(
        *(Mean(f"pass@{k}", _pass_at(k, "passed"), every=True) for k in ks),
        *(Mean(f"pass@{k}_base", _pass_at(k, "base_passed"), every=True) for k in ks)))


def pass_at_k_metrics(results: Mapping[str, Sequence[Mapping[str, Any]]], ks: Sequence[int]) -> dict[str, Any]:
    """pass@k (Chen et al. 2021, §2.1, unbiased estimator) on "base + extra" and "base"."""
    from ...metrics.reducers import evaluate

    return evaluate(declared_pass_at_k(ks), results)


class EvalPlusBenchmark:
    """HumanEval+ and MBPP+ functional correctness (Liu et al. 2023)."""

    name = "evalplus"
    checks = ("functional",)

    # 2: borderline CPU times measured again (least decides); large outputs judged by
    # the oracle wherever the expected output is not exact (issues #28, #33); an answer
    # without code fails with "the answer has no code block" (#32).
    version = "2"
    options = ()
    # Every functional check runs the sample in the python sandbox, its limits in machine_speed()'s
    # units: a worker starts both while it collects (plugin/startup.py).
    executors = ("python",)

    def checks_for(self, task: Task) -> tuple[str, ...]:
        return self.checks

    def skip_reason(self, check: str, task: Task, ctx=None) -> str | None:
        return None

    def metric_names(self, settings) -> list[str]:
        return sorted(pass_at_k_metrics({"probe": [{"index": i, "checks": {"functional": {"passed": True, "base_passed": True}}}
                                                   for i in range(max(settings.ks))]}, settings.ks))

    def load(self, data_root: Path | None, settings) -> TaskSet:
        folder = (data_root / "evalplus") if data_root else bundled_folder("contract") / "evalplus"
        data = EvalPlusData.load(folder, index_folder(settings))
        tasks = tuple(Task(tid, task, data.source[tid]) for tid, task in data.tasks.items())
        return TaskSet(tasks, tuple(data.files), bundled=data_root is None)

    def prompt(self, task: Task, settings) -> Prompt:
        text = task.data["prompt"]
        return Prompt((Message("user", "Complete the following Python function. Answer with the whole "
                                       "function in one ```python code block.\n\n" + text),), completion_prefix=text)

    def reference(self, task: Task, check: str) -> str:
        return canonical_program(task.data)

    def run_check(self, check: str, task: Task, sample: Completion, ctx) -> CheckResult:
        digest = EvalPlusData.load(task.source.parent).digest[task.task_id]
        return functional_check(task.data, digest, sample, ctx)

    def program_key(self, task: Task, sample: Completion, check: str) -> str:
        """Samples whose programs have this key get one verdict (``engine/dedupe.py``)."""
        return sample_program_key(sample, task.data["entry_point"])

    def dispatch_cost(self, task: Task, check: str, ctx) -> float:
        return functional_cost(task.data, EvalPlusData.load(task.source.parent).digest[task.task_id], ctx)

    def declared_metrics(self, settings: Any):
        return declared_pass_at_k(settings.ks)

    def aggregate(self, results, tasks, settings) -> dict[str, Any]:
        return pass_at_k_metrics(results, settings.ks)


def bundled_folder(benchmark: str) -> Path:
    """The sample suite shipped in the package (``benchmarks/<benchmark>/`` of the checkout)."""
    return bundled_suite(benchmark)


ADAPTER = EvalPlusBenchmark()
