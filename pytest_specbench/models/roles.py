"""Model roles: models asked by checks rather than tested (first role: the judge).

A check asks ``ctx.model("judge").ask(RoleRequest(...))``.  The role's model is
``--judge-model=SPEC`` (same grammar as ``--model``), or, when the user gives
none, the adapter's ``default_roles(taskset)`` (CIFE's bundled suite ships
recorded judgments).  Kinds:

- ``replay:PATH`` -- recorded answers, one JSON object per line: ``task_id``,
  ``purpose``, ``answer`` and optionally ``benchmark``, ``sample_index`` (0),
  ``attempt`` (0), ``question_sha256``: an answer with it answers only the question
  of that digest (``RoleRequest.question``: CIFE's recorded judgments answer the
  answers they were recorded for, never another model's), whatever the sample index.  A question without a recorded answer raises
  :class:`~.base.SampleMissing` (the item is E: the replay file is incomplete,
  the sample is not at fault).
- ``openai:NAME`` (and any kind whose model is a :class:`~.cache.CachingModel`)
  -- asked through the ``openai`` client, each answer cached on disk under the
  role's identity, its parameters and the prompt (file lock per question: two
  xdist workers asking the same question pay once; a resumed run pays nothing).
- ``python:module:callable`` -- ``callable(settings)`` returns an object with
  ``ask(request) -> str`` (scripted judges for experiments).

An unreachable endpoint or a failed request raises
:class:`~pytest_specbench.errors.InfrastructureError`: the item is an error (E),
which leaves the metrics, never a failure of the sample.
"""
from __future__ import annotations

import hashlib
import json
import threading
import time
from pathlib import Path
from typing import Any, Mapping

from ..types import RoleRequest
from ..errors import DataError, InfrastructureError, OptionError
from .base import GenerationRequest, SampleMissing

ROLE_OPTIONS = {"judge": "--judge-model"}
ROLE_FORMAT = 1


def role_option(role: str) -> str:
    if role not in ROLE_OPTIONS:
        raise OptionError("--judge-model", f"unknown model role {role!r}; known: {', '.join(ROLE_OPTIONS)}")
    return ROLE_OPTIONS[role]


class ReplayRole:
    """Answers recorded in a JSON-lines file (see the module docstring)."""

    def __init__(self, role: str, path: Path):
        from ..data.jsonl import file_digest, read_jsonl

        self.role, self.path = role, Path(path)
        self.spec = f"replay:{self.path}"
        if not self.path.is_file():
            raise OptionError(role_option(role), f"replay file not found: {self.path}")
        self.answers: dict[tuple[str | None, str, int, str, int], str] = {}
        # Answers bound to one question ("question_sha256"): (benchmark, task, purpose, attempt,
        # question) -> answer, whatever the sample index; they answer that question alone.
        self.bound: dict[tuple[str | None, str, str, int, str], str] = {}
        for line, obj in read_jsonl(self.path, ("task_id", "purpose", "answer")):
            if not isinstance(obj["answer"], str):
                raise DataError(self.path, line, "'answer' must be a string")
            question = obj.get("question_sha256")
            if question is not None and not isinstance(question, str):
                raise DataError(self.path, line, "'question_sha256' must be a string")
            try:
                key = (obj.get("benchmark"), str(obj["task_id"]), int(obj.get("sample_index", 0)),
                       str(obj["purpose"]), int(obj.get("attempt", 0)))
            except (TypeError, ValueError):
                raise DataError(self.path, line, "'sample_index' and 'attempt' must be whole numbers") from None
            if question:
                self.bound[(key[0], key[1], key[3], key[4], question)] = obj["answer"]
            else:
                self.answers[key] = obj["answer"]
        self.digest = file_digest(self.path)
        self.asked = 0

    def identity(self) -> dict[str, Any]:
        return {"kind": "replay", "sha256": self.digest}

    def ask(self, request: RoleRequest) -> str:
        self.asked += 1
        tail = (request.task.task_id, request.sample_index, request.purpose, request.attempt)
        for key in ((request.benchmark, *tail), (None, *tail)):
            if key in self.answers:
                return self.answers[key]
        if request.question:
            bound = (request.task.task_id, request.purpose, request.attempt, request.question)
            for key in ((request.benchmark, *bound), (None, *bound)):
                if key in self.bound:
                    return self.bound[key]
        raise SampleMissing(f"{self.path.name} has no {self.role} answer for task {tail[0]} sample {tail[1]} "
                            f"purpose {tail[2]} attempt {tail[3]}")

    def counters(self) -> dict[str, Any]:
        return {"asked": self.asked}

    def add_counters(self, counters: Mapping[str, Any]) -> None:
        self.asked += int(counters.get("asked") or 0)

    def manifest(self) -> dict[str, Any]:
        return {"role": self.role, "spec": self.spec, "sha256": self.digest,
                "answers": len(self.answers) + len(self.bound),
                "asked": self.asked}


class CachedRole:
    """A paid model (a :class:`~.cache.CachingModel`) in a role: every answer cached."""

    def __init__(self, role: str, model: Any, settings: Any):
        self.role, self.model, self.settings = role, model, settings
        self.spec = model.spec
        self.option = role_option(role)
        self._lock = threading.Lock()
        self.stats = {"asked": 0, "cache_hits": 0, "called": 0, "errors": 0}
        # purpose -> canonical JSON of each distinct parameter set an answer was sent with
        # (or, from the cache, had been sent with): what the manifest reports.
        self.used: dict[str, set[str]] = {}

    @property
    def structured(self) -> bool:
        """--judge-model-structured=on (only an ``openai:`` role takes it, load_role checks)."""
        return bool(self.model.options.structured)

    def identity(self) -> dict[str, Any]:
        # Structured output changes the answers: it enters the cache keys and the result key.
        return {"kind": type(self.model).__name__, **self.model.identity(), "role": self.role,
                **({"structured": "on"} if self.structured else {})}

    def check_reachable(self) -> None:
        """A wrong endpoint, key or model name: one usage error now (see OpenAIModel)."""
        check = getattr(self.model, "check_reachable", None)
        if callable(check):
            check()

    def parameters(self, request: RoleRequest) -> dict[str, Any]:
        """What one question is sent with: the role's own ``--judge-model-*`` parameters
        where the user set them, else the benchmark's (``Prompt.parameters``, e.g. CIFE's
        judge temperature and max_tokens), else the role's defaults (the CIFE paper's).
        The tested model's ``--model-*`` options never apply here.

        A retry after an unreadable answer (``attempt`` > 0) is sent with seed
        ``seed + attempt`` (``attempt`` when no seed is set): at temperature 0-0.1
        a server with a fixed seed would otherwise repeat the same unreadable answer
        (issue #32); its prompt also says what was wrong (``cife/judge.py``)."""
        opts = self.model.options
        params: dict[str, Any] = {"temperature": opts.temperature, "max_tokens": opts.max_tokens, "seed": opts.seed}
        for name in ("temperature", "max_tokens"):
            if name in request.prompt.parameters and name not in opts.explicit:
                params[name] = request.prompt.parameters[name]
        if request.attempt:
            params["seed"] = (opts.seed or 0) + request.attempt
        return params

    def key(self, request: RoleRequest, parameters: Mapping[str, Any]) -> str:
        material = {"format": ROLE_FORMAT, "role": self.identity(), "parameters": dict(parameters),
                    "benchmark": request.benchmark, "task_id": request.task.task_id,
                    "sample_index": request.sample_index, "purpose": request.purpose, "attempt": request.attempt,
                    "messages": [[m.role, m.content] for m in request.prompt.messages]}
        return hashlib.sha256(json.dumps(material, sort_keys=True, default=repr).encode()).hexdigest()

    def ask(self, request: RoleRequest) -> str:
        from .cache import FatalModelError

        parameters = self.parameters(request)
        key = self.key(request, parameters)
        store = self.model.cache  # None when --specbench-cache=off
        with self._lock:
            self.stats["asked"] += 1
            self.used.setdefault(request.purpose, set()).add(json.dumps(parameters, sort_keys=True))
        lock = store.lock(key) if store is not None and self.model.options.cache_mode == "readwrite" else None
        if lock is not None:
            lock.acquire()
        try:
            entry = store.get(key) if store is not None else None
            if entry is not None and isinstance(entry.get("text"), str):
                with self._lock:
                    self.stats["cache_hits"] += 1
                return entry["text"]
            generation = GenerationRequest(request.benchmark, request.task, request.sample_index, request.prompt,
                                           reference=lambda: "")
            try:
                if self.structured and request.schema is not None:
                    answer = self.model.call(generation, parameters, schema=request.schema)
                else:
                    answer = self.model.call(generation, parameters)
            except FatalModelError as exc:
                with self._lock:
                    self.stats["errors"] += 1
                raise InfrastructureError(f"{self.option}: {exc}") from None
            except Exception as exc:  # noqa: BLE001 - one failed question is that item's error (E)
                with self._lock:
                    self.stats["errors"] += 1
                raise InfrastructureError(f"{self.option} request failed: {self.model.describe_error(exc)}") from None
            with self._lock:
                self.stats["called"] += 1
            if lock is not None:
                store.put(key, {"format": ROLE_FORMAT, "role": self.role, "model": self.model.identity(),
                                "parameters": parameters, "benchmark": request.benchmark,
                                "task_id": request.task.task_id, "sample_index": request.sample_index,
                                "purpose": request.purpose, "attempt": request.attempt, "created": time.time(),
                                **answer})
            return answer["text"]
        finally:
            if lock is not None:
                lock.release()

    def counters(self) -> dict[str, Any]:
        """What this process asked (plain data: an xdist worker sends it to the controller)."""
        with self._lock:
            return {"questions": {**self.stats, "http_requests": self.model.stats.api_requests},
                    "parameters": {purpose: sorted(used) for purpose, used in self.used.items()}}

    def add_counters(self, counters: Mapping[str, Any]) -> None:
        """Add another process's :meth:`counters` (the controller, from each worker)."""
        with self._lock:
            for name, value in (counters.get("questions") or {}).items():
                if name == "http_requests":
                    with self.model.stats.lock:
                        self.model.stats.api_requests += int(value)
                elif name in self.stats:
                    self.stats[name] += int(value)
            for purpose, used in (counters.get("parameters") or {}).items():
                self.used.setdefault(purpose, set()).update(used)

    def manifest(self) -> dict[str, Any]:
        opts = self.model.options
        counters = self.counters()
        return {"role": self.role, "spec": self.spec, **self.model.identity(),
                # Per purpose, every parameter set that answers were sent with (a retry's seed
                # differs); the cache entries carry the same.  "defaults": the role's own.
                "parameters": {purpose: [json.loads(p) for p in used]
                               for purpose, used in sorted(counters["parameters"].items())},
                "parameter_defaults": {"temperature": opts.temperature, "max_tokens": opts.max_tokens,
                                       "seed": opts.seed, "set_by_user": sorted(opts.explicit)},
                "cache": {"mode": opts.cache_mode, "dir": str(opts.cache_dir) if self.model.cache else None},
                "questions": counters["questions"],
                # on: the form this process's endpoint took (None: no structured question asked here)
                "structured": ({"option": "on", "form": getattr(self.model, "structured_form", None)}
                               if self.structured else {"option": "off"})}


class ScriptedRole:
    """``python:module:callable``: the callable's object answers."""

    def __init__(self, role: str, spec: str, answerer: Any):
        if not callable(getattr(answerer, "ask", None)):
            raise OptionError(role_option(role), f"{spec}: the factory's object has no ask(request) method")
        self.role, self.spec, self.answerer = role, spec, answerer

    def identity(self) -> dict[str, Any]:
        ident = getattr(self.answerer, "identity", None)
        return {"kind": "python", "spec": self.spec, **(ident() if callable(ident) else {})}

    def ask(self, request: RoleRequest) -> str:
        answer = self.answerer.ask(request)
        if not isinstance(answer, str):
            raise InfrastructureError(f"{self.spec} answered {type(answer).__name__}, not text")
        return answer

    def manifest(self) -> dict[str, Any]:
        return {"role": self.role, **self.identity()}


def load_role(role: str, spec: str, settings: Any) -> Any:
    """The :class:`~pytest_specbench.types.RoleModel` for ``spec``, or a one-line error."""
    option = role_option(role)
    kind, _, arg = spec.partition(":")
    if kind != "openai":
        from .options import generation_options

        if generation_options(settings, option).structured:
            raise OptionError("--judge-model-structured", f"on needs an openai: judge (the judge is {spec})")
    if kind == "replay":
        if not arg:
            raise OptionError(option, "replay needs a path: replay:judgments.jsonl")
        path = Path(arg).expanduser()
        if not path.is_absolute() and getattr(settings, "config", None) is not None:
            path = Path(settings.config.invocation_params.dir) / path
        return ReplayRole(role, path)
    if kind == "python":
        import importlib

        module_name, _, attr = arg.partition(":")
        try:
            factory = getattr(importlib.import_module(module_name), attr)
        except (ImportError, AttributeError, ValueError) as exc:
            raise OptionError(option, f"cannot load {arg}: {exc}") from None
        return ScriptedRole(role, spec, factory(settings))
    if kind == "reference":
        raise OptionError(option, "'reference' answers tasks, not questions: use replay:PATH, openai:NAME or python:...")
    from . import load_model
    from .cache import CachingModel

    model = load_model(spec, settings, option=option)
    if not isinstance(model, CachingModel):
        raise OptionError(option, f"{spec!r} cannot answer questions (not an API model)")
    return CachedRole(role, model, settings)
