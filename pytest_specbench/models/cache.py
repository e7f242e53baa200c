"""The generation cache and the base class of models that call an API.

A generation is stored under the SHA-256 of everything that determines it: the
model's identity and endpoint, the rendered chat messages, the generation
parameters, the sample index, the benchmark and a digest of the task's data row.
Changing any of them asks the model again; nothing else does, so re-running,
raising ``--specbench-samples`` (pass@k) or resuming an interrupted run only
pays for what is new.

Several processes may share a cache folder: entries are written atomically
(temporary file + rename) and a per-entry file lock makes a second process
wait for, then reuse, a generation that another one is making.  Failed
requests are never stored.
"""
from __future__ import annotations

import hashlib
import json
import os
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from filelock import FileLock

from ..errors import InfrastructureError, OptionError, SpecbenchError
from .base import Completion, GenerationRequest, SampleMissing
from .options import generation_options

ENTRY_FORMAT = 1
USAGE_FIELDS = ("prompt_tokens", "completion_tokens", "total_tokens")


def _canonical(value: Any) -> bytes:
    # surrogatepass: a lone surrogate (in a sample's text shown to a judge) still
    # has a key; every other string's bytes, hence every existing key, are unchanged.
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      default=repr).encode("utf-8", "surrogatepass")


_task_digests: dict[tuple[str, str, int], str] = {}


def task_data_digest(request: GenerationRequest) -> str:
    """The "data version" of a task: a digest of its own data row (edits to other rows do not count)."""
    task = request.task
    memo = (request.benchmark, task.task_id, id(task.data))
    if memo not in _task_digests:
        _task_digests[memo] = hashlib.sha256(_canonical(dict(task.data))).hexdigest()
    return _task_digests[memo]


def request_key(identity: Mapping[str, Any], parameters: Mapping[str, Any], request: GenerationRequest) -> str:
    material = {
        "format": ENTRY_FORMAT,
        "model": dict(identity),
        "parameters": dict(parameters),
        "benchmark": request.benchmark,
        "task_id": request.task.task_id,
        "task_data": task_data_digest(request),
        "messages": [[m.role, m.content] for m in request.prompt.messages],
        "sample_index": request.sample_index,
    }
    return hashlib.sha256(_canonical(material)).hexdigest()


def private_dir(path: Path) -> Path:
    """Create ``path`` readable by this user only (sandboxed samples run as another uid)."""
    path.mkdir(parents=True, exist_ok=True, mode=0o700)
    os.chmod(path, 0o700)
    return path


class GenerationStore:
    """A folder of JSON entries named by key (``ab/abcdef....json``)."""

    def __init__(self, root: Path):
        self.root = Path(root)

    def _path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.json"

    def get(self, key: str) -> dict[str, Any] | None:
        try:
            with open(self._path(key), encoding="utf-8") as f:
                entry = json.load(f)
        except FileNotFoundError:
            return None
        except (OSError, ValueError):
            return None  # unreadable or damaged by hand: generate it again
        if not isinstance(entry, dict) or not (isinstance(entry.get("text"), str) or "error" in entry):
            return None
        return entry

    def put(self, key: str, entry: Mapping[str, Any]) -> bool:
        """Write an entry; False (and one warning line) when it cannot be written.
        Never raises for a bad entry or a full disk: the caller keeps the answer it
        paid for either way.  ASCII JSON, so any string (a lone surrogate in a
        judge's reason) is stored and read back as it was."""
        tmp = None
        try:
            folder = self._path(key).parent
            if not folder.is_dir():
                private_dir(self.root)
                private_dir(folder)
            data = json.dumps(entry, ensure_ascii=True, default=repr)
            fd, tmp = tempfile.mkstemp(dir=folder, prefix=".tmp-", suffix=".json")  # mode 0600
            with os.fdopen(fd, "w", encoding="ascii") as f:
                f.write(data)
            os.replace(tmp, self._path(key))  # readers see the old state or the whole entry
            return True
        except (OSError, ValueError, TypeError, RecursionError) as exc:
            if tmp is not None:
                try:
                    os.unlink(tmp)
                except OSError:
                    pass
            import warnings

            warnings.warn(f"specbench: could not write cache entry {key[:12]} under {self.root}: "
                          f"{type(exc).__name__}: {exc}"[:300], RuntimeWarning, stacklevel=2)
            return False

    def lock(self, key: str) -> FileLock:
        # flock-based: a killed process's lock is released by the kernel.
        return FileLock(str(private_dir(self.root / "locks") / f"{key}.lock"))


class GenerationStats:
    """What generation did in this process (the controller's numbers reach the report)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.requested = 0          # distinct (task, sample) generations asked for
        self.cache_hits = 0         # answered from the cache (or by another process)
        self.generated = 0          # answered by the API in this run
        self.errors = 0             # still failing after retries
        self.api_requests = 0       # HTTP requests sent, retries included
        self.usage = dict.fromkeys(USAGE_FIELDS, 0)
        self.seconds = 0.0

    def as_dict(self) -> dict[str, Any]:
        return {"requested": self.requested, "cache_hits": self.cache_hits, "generated": self.generated,
                "errors": self.errors, "api_requests": self.api_requests, "seconds": round(self.seconds, 3),
                **self.usage}


class FatalModelError(Exception):
    """A problem no other request would avoid (bad key, unknown model, unreachable server)."""


# Consecutive requests failing with the same error, while nothing was answered, after which
# generation stops (pytest's -x spirit, #44): a model that always raises is one line, not an
# E per item.  Small enough to stop early, large enough that a transient error does not.
GIVE_UP_AFTER = 5


class ModelGaveUp(SpecbenchError):
    """Generation stopped: the model failed ``GIVE_UP_AFTER`` times in a row, identically,
    and answered nothing.  ``str()`` is the one line; ``unasked`` the requests never sent."""

    def __init__(self, option: str, spec: str, failures: int, error: str, unasked: int):
        super().__init__(f"{option}: {spec} failed {failures} requests in a row with the same error and answered "
                         f"none, so generation stopped: {error}")
        self.unasked = unasked


class _Streak:
    """Consecutive identical failures of one ``generate`` call while nothing was answered."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.error: str | None = None
        self.count = 0
        self.answered = False
        self.stopped = False

    def note(self, error: str | None) -> None:
        with self.lock:
            if error is None:
                self.answered = True
            elif not self.answered:
                self.count = self.count + 1 if error == self.error else 1
                self.error = error
                self.stopped = self.stopped or self.count >= GIVE_UP_AFTER


class CachingModel:
    """Base of models that pay per request.

    ``generate`` answers each request once, from the cache or with :meth:`call`
    on up to ``--model-concurrency`` threads, writing each answer as soon as it
    arrives (an interrupted run loses only the requests in flight).
    ``completion`` never calls the model: it reads what ``generate`` produced in
    this process or the cache (xdist workers get answers from the controller,
    ``plugin/remote.py``).

    Subclasses implement :meth:`identity`, :meth:`parameters` and :meth:`call`.
    """

    spec: str
    kind: str = "model"

    def __init__(self, spec: str, settings: Any, option: str = "--model"):
        self.spec, self.settings, self.option = spec, settings, option
        self.options = generation_options(settings, option)
        self.cache = GenerationStore(self.options.cache_dir) if self.options.cache_mode != "off" else None
        self.stats = GenerationStats()
        self._answers: dict[str, dict[str, Any]] = {}
        self._failures: dict[str, str] = {}
        self._prompts: dict[str, dict[str, set[str]]] = {}

    # ------------------------------------------------------- subclass interface
    def identity(self) -> dict[str, Any]:
        """Which model at which endpoint (part of every cache key)."""
        raise NotImplementedError

    def parameters(self, request: GenerationRequest) -> dict[str, Any]:
        """Generation parameters of one request (part of its cache key)."""
        return {"temperature": self.options.temperature, "max_tokens": self.options.max_tokens,
                "seed": None if self.options.seed is None else self.options.seed + request.sample_index}

    def call(self, request: GenerationRequest, parameters: Mapping[str, Any]) -> dict[str, Any]:
        """Ask the model; return ``{"text": ..., "usage": {...}, ...}`` or raise.

        Raise :class:`FatalModelError` for a problem that every request would hit.
        """
        raise NotImplementedError

    def describe_error(self, exc: BaseException) -> str:
        return f"{type(exc).__name__}: {exc}"

    def before_first_call(self) -> None:
        """Check what can be checked without a request (credentials present, ...)."""

    # ------------------------------------------------------------ Model protocol
    def sample_indices(self, benchmark: str, task_id: str, requested: int | None) -> Sequence[int]:
        return range(requested or 1)

    def key(self, request: GenerationRequest) -> str:
        identity = dict(self.identity(), role=self.option.lstrip("-"))
        return request_key(identity, self.parameters(request), request)

    def generate(self, requests: Sequence[GenerationRequest],
                 progress: Callable[[int, int], None] | None = None) -> None:
        started = time.monotonic()
        todo: dict[str, GenerationRequest] = {}
        hits = 0
        for request in requests:
            key = self.key(request)
            self._note_prompt(request)
            if key in self._answers or key in todo:
                continue
            entry = self.cache.get(key) if self.cache else None
            if entry is not None:
                self._answers[key] = entry
                hits += 1
            else:
                todo[key] = request
        total = hits + len(todo)
        with self.stats.lock:
            self.stats.requested += total
            self.stats.cache_hits += hits
        done = [hits]

        def finished() -> None:
            with self.stats.lock:
                done[0] += 1
                if progress:
                    progress(done[0], total)

        if progress:
            progress(hits, total)
        pending = list(todo.items())
        streak = _Streak()
        streak.answered = hits > 0  # answers from the cache: the model did answer before
        if pending:
            self.before_first_call()
            # The first request alone: a bad key or model is one clear error, not N.
            self._generate_one(*pending[0], first=True, streak=streak)
            finished()
            pool = ThreadPoolExecutor(max_workers=self.options.concurrency, thread_name_prefix="specbench-gen")
            try:
                futures = [pool.submit(self._generate_one, key, request, streak=streak)
                           for key, request in pending[1:]]
                for future in futures:
                    future.add_done_callback(lambda _f: finished())
                for future in as_completed(futures):
                    future.result()  # a request's failure is recorded inside; this raises only harness bugs
            except BaseException:
                # Ctrl-C or a bug: send nothing more; answers already written stay in the cache.
                pool.shutdown(wait=False, cancel_futures=True)
                raise
            pool.shutdown()
        self.stats.seconds += time.monotonic() - started
        if streak.stopped:
            unasked = sum(1 for key, _ in pending if key not in self._answers and key not in self._failures)
            raise ModelGaveUp(self.option, self.spec, streak.count, streak.error or "", unasked)

    def _generate_one(self, key: str, request: GenerationRequest, first: bool = False,
                      streak: _Streak | None = None) -> None:
        if streak is not None and streak.stopped:
            return  # never sent: generation gave up (ModelGaveUp)
        writes = self.options.cache_mode == "readwrite"
        lock = self.cache.lock(key) if writes else None
        if lock is not None:
            lock.acquire()
        try:
            entry = self.cache.get(key) if self.cache else None
            if entry is not None:  # another process generated it while we waited
                with self.stats.lock:
                    self.stats.cache_hits += 1
                self._answers[key] = entry
                if streak is not None:
                    streak.note(None)
                return
            parameters = self.parameters(request)
            try:
                answer = self.call(request, parameters)
            except FatalModelError as exc:
                if first:
                    raise OptionError(self.option, str(exc)) from None
                self._fail(key, str(exc), streak)
                return
            except Exception as exc:  # noqa: BLE001 - any failure of one request is that sample's error
                self._fail(key, self.describe_error(exc), streak)
                return
            entry = {"format": ENTRY_FORMAT, "model": self.identity(), "parameters": parameters,
                     "benchmark": request.benchmark, "task_id": request.task.task_id,
                     "sample_index": request.sample_index, "created": time.time(), **answer}
            self._answers[key] = entry  # kept before any write: a failed write never loses a paid answer
            if writes:
                self.cache.put(key, entry)
            if streak is not None:
                streak.note(None)
            with self.stats.lock:
                self.stats.generated += 1
                for field in USAGE_FIELDS:
                    self.stats.usage[field] += int((answer.get("usage") or {}).get(field) or 0)
        finally:
            if lock is not None:
                lock.release()

    def _fail(self, key: str, message: str, streak: _Streak | None = None) -> None:
        self._failures[key] = message
        if streak is not None:
            streak.note(message)
        with self.stats.lock:
            self.stats.errors += 1

    def completion(self, request: GenerationRequest) -> Completion:
        key = self.key(request)
        entry = self._answers.get(key)
        if entry is None and key in self._failures:
            raise InfrastructureError(f"generation failed: {self._failures[key]}")
        if entry is None and self.cache is not None:
            entry = self.cache.get(key)
        if entry is not None and "error" in entry:
            raise InfrastructureError(f"generation failed: {entry['error']}")
        if entry is None:
            raise SampleMissing(f"no generation of {request.task.task_id} #{request.sample_index} by {self.spec} "
                                f"in the cache (the generation phase did not produce it)")
        meta = {k: entry[k] for k in ("finish_reason", "response_model", "usage") if k in entry}
        meta["cache_key"] = key
        return Completion(entry["text"], meta)

    # --------------------------------------------------------------- provenance
    def _note_prompt(self, request: GenerationRequest) -> None:
        seen = self._prompts.setdefault(request.benchmark, {"system": set(), "all": set()})
        system = "\n\n".join(m.content for m in request.prompt.messages if m.role == "system")
        seen["system"].add(hashlib.sha256(system.encode()).hexdigest())
        seen["all"].add(hashlib.sha256(_canonical([[m.role, m.content] for m in request.prompt.messages])).hexdigest())

    def prompt_provenance(self) -> dict[str, Any]:
        """Per benchmark: its prompt condition and hashes of the rendered prompts it sent."""
        out = {}
        for benchmark, seen in self._prompts.items():
            try:
                condition = self.settings.option(f"{benchmark}_condition")
            except (ValueError, AttributeError):
                condition = None
            out[benchmark] = {
                "condition": condition,
                # The system message is the template's fixed part (CS/EAS); "" hashes a prompt without one.
                "system_message_sha256": sorted(seen["system"]),
                "prompts_sha256": hashlib.sha256("".join(sorted(seen["all"])).encode()).hexdigest(),
                "prompts": len(seen["all"]),
            }
        return out

    def manifest(self) -> dict[str, Any]:
        opts = self.options
        return {
            "spec": self.spec,
            "kind": self.kind,
            "role": self.option.lstrip("-"),
            **self.identity(),
            "parameters": {"temperature": opts.temperature, "max_tokens": opts.max_tokens, "seed": opts.seed,
                           "timeout": opts.timeout, "retries": opts.retries, "concurrency": opts.concurrency},
            "cache": {"mode": opts.cache_mode, "dir": str(opts.cache_dir) if self.cache else None},
            "prompts": self.prompt_provenance(),
            "generation": self.stats.as_dict(),
        }

