"""The controller's link to each xdist worker: what a worker needs travels over
the worker's own execnet gateway, never through a shared disk (docs/distributed.md).

xdist's workers may run on other hosts (``--tx ssh=...``, ``--tx socket=...``,
``--px ...`` with ``--tx N*popen//via=ID``); the controller and its workers then
share no file system.  Outcomes already travel to the controller in test
reports.  The other way, the controller opens one extra execnet channel per
worker (:meth:`ControllerLink.configure_node`, carried in ``workerinput``) and
sends over it:

* **answers** of the model under test (``replay:``, ``openai:``, ``python:``):
  before the controller dispatches items to a worker it pushes the answers of
  their samples that worker has not had yet (one message, ahead of xdist's
  ``runtests`` command on the same connection, so they are there when the item
  runs); a worker that misses one (another ``--dist`` mode) asks for it.  The
  ``reference`` model answers from the task data, which every host loads itself.
* **known verdicts**: with each item the controller pushes what its ledger
  (``engine/ledger.py``) knows of the item's verdict, or that it knows none: a
  resumed run's journaled outcome, a copy's (its representative's verdict,
  from that item's report), an earlier run's from the controller's store.  A
  worker evaluates only items whose verdict is unknown and writes no store; an
  item it got nothing with (another ``--dist`` mode, ``result_of``'s other
  check) it asks about.
* **judge answers**: a worker's ``ctx.model("judge").ask(...)`` is a request to
  the controller, which asks its own role (its cache under a file lock, or the
  API) on a small thread pool and replies.  So every question is asked once
  across hosts, from one place, with one cache; the controller's role counts
  them.

At start a remote worker reports its facts (specbench version, toolchain
versions, the digests of its data files); the controller prints one line per
version that differs from its own and refuses a host whose data differs (one
line, the run stops before any item runs).

Strings cross as ASCII JSON text: execnet encodes ``str`` as UTF-8, which a
model answer's lone surrogate would break.
"""
from __future__ import annotations

import itertools
import json
import queue
import sys
import threading
from pathlib import Path
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable

from ..errors import InfrastructureError
from ..models.base import Completion, SampleMissing

CHANNEL_KEY = "specbench_link"  # workerinput: the execnet channel to the controller
REMOTE_KEY = "specbench_remote"  # workerinput: this worker runs on another host
REPLY_TIMEOUT = 24 * 3600.0  # a judge may be slow; a dead controller closes the channel instead


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=True, separators=(",", ":"))


def is_remote_spec(spec: Any) -> bool:
    """Whether an execnet spec runs on another host: anything but a plain local ``popen``."""
    return not (getattr(spec, "popen", False) and not getattr(spec, "via", None))


# ----------------------------------------------------------------- controller
class ControllerLink:
    """Controller side: one channel per worker, and what was sent on each."""

    def __init__(self, plan: Any, role_model: Callable[[str], Any], worker_start: Callable[[bool], dict[str, Any]],
                 host_facts: Callable[[], dict[str, Any]], model_is_local: bool,
                 known: Callable[[str], Any] = lambda nodeid: None,
                 program_key: Callable[[str], tuple[bool, str | None]] = lambda nodeid: (False, None)):
        # Plain things, not the run (issue #31): the plan answers for tasks and the
        # model, ``role_model`` gives the judge and other roles, ``worker_start`` what a
        # worker is told at start, ``host_facts`` what a remote host is compared on,
        # ``known`` what the ledger knows of an item's verdict (a ``ledger.Known`` or None),
        # ``program_key`` the item's program key if the ledger computed it: (True, key or None).
        self.plan, self._role_model, self._known, self._program_key = plan, role_model, known, program_key
        self._worker_start, self._host_facts = worker_start, host_facts
        self.model_is_local = model_is_local
        self.facts: dict[str, dict[str, Any]] = {}  # gateway id -> facts a remote worker reported
        self.refusals: dict[str, str] = {}  # gateway id -> why the worker could not start its run
        # gateway id -> set when a remote worker's facts or refusal arrived: they come on the
        # link's channel, collection's end on xdist's own, and two channels keep no order
        # between them (a check that found no facts yet let a host of other data run).
        self._heard: dict[str, threading.Event] = {}
        self._channels: dict[Any, Any] = {}  # node -> channel
        self._sent: dict[Any, set] = {}  # node -> answer keys already sent
        self._answers: dict[tuple[str, str, int], list] = {}  # (benchmark, task_id, sample) -> reply
        self._pool: ThreadPoolExecutor | None = None
        self._pool_lock = threading.Lock()
        self._tasks: dict[str, dict[str, Any]] = {}
        self.messages = 0  # pushes and replies sent (the scaling script reads it)

    # -- setup
    def configure_node(self, node: Any) -> None:
        """``pytest_configure_node``: open the worker's channel and say what it needs at start."""
        channel = node.gateway.newchannel()
        self._channels[node] = channel
        self._sent[node] = set()
        channel.setcallback(lambda message, node=node: self._receive(node, message))
        node.workerinput[CHANNEL_KEY] = channel
        remote = is_remote_spec(node.gateway.spec)
        node.workerinput[REMOTE_KEY] = remote
        if remote:
            self._heard.setdefault(node.gateway.id, threading.Event())
        node.workerinput["specbench_start"] = _dumps(self._worker_start(remote))

    def _receive(self, node: Any, message: Any) -> None:
        # Runs in the gateway's receiver thread: quick work here, the judge on the pool.
        try:
            kind = message[0]
            if kind == "facts":
                self.facts[node.gateway.id] = json.loads(message[1])
                self._heard.setdefault(node.gateway.id, threading.Event()).set()
            elif kind == "refused":
                self.refusals[node.gateway.id] = str(message[1])
                self._heard.setdefault(node.gateway.id, threading.Event()).set()
            elif kind == "ask":
                _, ident, what, payload = message
                if what == "judge":
                    self._judge_pool().submit(self._reply, node, ident, what, payload)
                else:
                    self._reply(node, ident, what, payload)
        except Exception as exc:  # noqa: BLE001 - never raise in execnet's receiver thread
            sys.stderr.write(f"specbench: controller link: {type(exc).__name__}: {exc}\n")

    def _judge_pool(self) -> ThreadPoolExecutor:
        with self._pool_lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(max_workers=16, thread_name_prefix="specbench-link")
            return self._pool

    def _reply(self, node: Any, ident: int, what: str, payload: str) -> None:
        try:
            args = json.loads(payload)
            if what == "answer":
                reply = self.answer(*args)
            elif what == "known":
                reply = ["ok", self.known_wire(str(args))]
            elif what == "judge":
                reply = ["ok", self._ask_role(args)]
            else:
                reply = ["error", f"unknown request {what!r}"]
        except SampleMissing as exc:
            reply = ["missing", str(exc)]
        except Exception as exc:  # noqa: BLE001 - the worker's item is an error (E) with this line
            reply = ["error", str(exc) if isinstance(exc, InfrastructureError) else f"{type(exc).__name__}: {exc}"]
        self._send(node, ("reply", ident, _dumps(reply)))

    def _send(self, node: Any, message: Any) -> None:
        channel = self._channels.get(node)
        if channel is None or channel.isclosed():
            return
        try:
            channel.send(message)
            self.messages += 1
        except (OSError, ValueError, EOFError):
            pass  # the worker is gone; xdist reports that

    # -- answers
    def answer(self, benchmark: str, task_id: str, sample: int) -> list:
        """The model's answer for one sample, as a reply (``["ok", text, meta]``, ``["missing", why]``, ...)."""
        key = (benchmark, task_id, int(sample))
        reply = self._answers.get(key)
        if reply is None:
            plan = self.plan
            adapter = plan.adapters[benchmark]
            task = self._task(benchmark, task_id)
            try:
                completion = plan.model.completion(plan.generation_request(adapter, task, int(sample), ""))
                reply = ["ok", completion.text, dict(completion.meta)]
            except SampleMissing as exc:
                reply = ["missing", str(exc)]
            except InfrastructureError as exc:
                reply = ["error", str(exc)]
            self._answers[key] = reply
        return reply

    def _task(self, benchmark: str, task_id: str) -> Any:
        if benchmark not in self._tasks:
            self._tasks[benchmark] = self.plan.tasks_by_id(benchmark)
        task = self._tasks[benchmark].get(task_id)
        if task is None:
            raise InfrastructureError(f"{benchmark}: no task {task_id!r} on the controller")
        return task

    def known_wire(self, nodeid: str) -> list | None:
        """What the ledger knows of one item's verdict, as it crosses (None: unknown)."""
        known = self._known(nodeid)
        return None if known is None else known.wire()

    def before_send(self, node: Any, nodeids: list[str]) -> None:
        """Push, ahead of xdist's ``runtests``, the answers these items need, what
        the ledger knows of their verdicts (None for each it does not know: the
        worker then evaluates it without asking) and their program keys where the
        ledger computed them (to know the verdicts): the worker's in-job memo takes
        those instead of sanitizing each sample again (~1.4 ms an item)."""
        sent = self._sent.get(node)
        if sent is None:
            return
        answers, known, keys = [], {}, {}
        local = self.model_is_local
        for nodeid in nodeids:
            parts = nodeid.split("::")
            if len(parts) < 5 or parts[0] != "specbench":
                continue
            if not local:
                key = (parts[1], "::".join(parts[2:-2]), int(parts[-2]))
                if key not in sent:
                    sent.add(key)
                    answers.append([list(key), self.answer(*key)])
            known[nodeid] = self.known_wire(nodeid)
            computed, key = self._program_key(nodeid)
            if computed:
                keys[nodeid] = key
        if answers or known:
            self._send(node, ("push", _dumps({"answers": answers, "known": known,
                                              **({"keys": keys} if keys else {})})))

    # -- judge
    def _ask_role(self, args: dict[str, Any]) -> str:
        from ..types import Message, Prompt, RoleRequest

        prompt = Prompt(tuple(Message(r, c) for r, c in args["messages"]), args.get("completion_prefix", ""),
                        dict(args.get("parameters") or {}))
        request = RoleRequest(args["benchmark"], self._task(args["benchmark"], args["task_id"]),
                              int(args["sample_index"]), args["purpose"], prompt, int(args.get("attempt", 0)),
                              str(args.get("question") or ""), args.get("schema"))
        return self._role_model(args["role"]).ask(request)

    # -- start-up checks
    def check_node(self, node: Any) -> list[str]:
        """Lines about one worker at start (version differences); raises
        :class:`HostRefused` for a worker that cannot run this run."""
        gid = node.gateway.id
        where = describe_spec(node.gateway.spec)
        heard = self._heard.get(gid)
        if heard is not None and not heard.wait(FACTS_SECONDS):
            raise HostRefused(f"host {where} ({gid}) refused: it did not report its data and versions "
                              f"within {FACTS_SECONDS:g} s of its collection")
        if gid in self.refusals:
            raise HostRefused(f"host {where} ({gid}) refused: {self.refusals[gid]}")
        facts = self.facts.get(gid)
        if facts is None:
            return []
        mine = self._host_facts()
        differs = [f"{name}: sha256 {str(theirs)[:12]}... there, {str(mine['files'][name])[:12]}... here"
                   for name, theirs in facts.get("files", {}).items() if mine["files"].get(name) != theirs]
        missing = [name for name in mine["files"] if name not in facts.get("files", {})]
        if differs or missing:
            first = differs[0] if differs else f"{missing[0]}: missing there"
            raise HostRefused(f"host {where} ({gid}) refused: its data differs from the controller's "
                              f"({len(differs) + len(missing)} files; {first})")
        lines = []
        for name, value in sorted(facts.get("versions", {}).items()):
            if mine["versions"].get(name) != value:
                lines.append(f"specbench: host {where} ({gid}): {name} {value} there, "
                             f"{mine['versions'].get(name)} here")
        return lines

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)


# How long the controller waits, once a remote worker has collected, for the facts that worker
# sent before collecting (normally there already: the wait is for a receiver thread behind).
FACTS_SECONDS = 60.0


class HostRefused(Exception):
    """A worker whose host cannot run this run (its data differs)."""


def describe_spec(spec: Any) -> str:
    for attr in ("ssh", "socket", "via"):
        value = getattr(spec, attr, None)
        if value:
            return f"{attr}={value}"
    return "popen"


def versions(settings: Any) -> dict[str, str]:
    """The plugin's, Python's, the executors' and the toolchains' versions on this host."""
    import hashlib
    import platform

    from .. import __version__
    from ..execution import executor_versions
    from ..execution.python import sample_environment

    found = {"specbench": __version__, "python": platform.python_version(),
             "sample environment": hashlib.sha256(_dumps(sample_environment(settings, [])).encode()).hexdigest()[:12]}
    found.update({f"{kind} executor": version for kind, version in executor_versions().items()})
    found.update(toolchain_versions())
    return found


def toolchain_versions() -> dict[str, str]:
    """Each system toolchain on PATH: a JDK's ``release`` file (no JVM start: seconds
    on a loaded machine), else the first line of ``--version``; "absent" without it."""
    import os
    import shutil
    import subprocess

    out = {}
    for tool, flag in (("java", "-version"), ("javac", "-version"), ("lean", "--version"), ("lake", "--version")):
        path = shutil.which(tool)
        if path is None:
            out[tool] = "absent"
            continue
        release = Path(os.path.realpath(path)).parent.parent / "release"
        try:
            fields = dict(line.split("=", 1) for line in release.read_text().splitlines() if "=" in line)
            if "JAVA_VERSION" in fields:
                out[tool] = f"{tool} {fields['JAVA_VERSION'].strip(chr(34))}"
                continue
        except (OSError, ValueError):
            pass
        try:
            done = subprocess.run([path, flag], capture_output=True, text=True, timeout=60)
            text = (done.stdout or done.stderr).strip().splitlines()
            out[tool] = text[0] if text else "unknown"
        except (OSError, subprocess.SubprocessError):
            out[tool] = "unknown"
    return out


# -------------------------------------------------------------------- worker
class WorkerLink:
    """Worker side: pushed answers and known verdicts, and requests to the controller."""

    def __init__(self, channel: Any):
        self.channel = channel
        self.answers: dict[tuple[str, str, int], list] = {}
        self.known: dict[str, list | None] = {}  # node id -> the ledger's Known (as it crossed), None: unknown
        self.keys: dict[str, str | None] = {}  # node id -> its program key, as the controller's ledger computed it
        self._waiting: dict[int, queue.Queue] = {}
        self._ids = itertools.count()
        channel.setcallback(self._receive, endmarker=None)

    def _receive(self, message: Any) -> None:
        if message is None:  # the channel closed: wake whoever waits
            for waiting in list(self._waiting.values()):
                waiting.put(["error", "the connection to the xdist controller closed"])
            return
        kind = message[0]
        if kind == "push":
            data = json.loads(message[1])
            for key, reply in data["answers"]:
                self.answers[tuple(key)] = reply
            self.known.update(data["known"])
            self.keys.update(data.get("keys") or {})
        elif kind == "reply":
            waiting = self._waiting.pop(message[1], None)
            if waiting is not None:
                waiting.put(json.loads(message[2]))

    def send(self, *message: Any) -> None:
        self.channel.send(message)

    def ask(self, what: str, args: Any) -> Any:
        """Ask the controller and wait for its reply; its errors are raised here."""
        ident = next(self._ids)
        waiting: queue.Queue = queue.Queue(maxsize=1)
        self._waiting[ident] = waiting
        if self.channel.isclosed():
            raise InfrastructureError("the connection to the xdist controller is closed")
        self.channel.send(("ask", ident, what, _dumps(args)))
        try:
            reply = waiting.get(timeout=REPLY_TIMEOUT)
        except queue.Empty:
            raise InfrastructureError(f"no reply from the xdist controller to a {what} request") from None
        return unwrap(reply)


def unwrap(reply: list) -> Any:
    status = reply[0]
    if status == "missing":
        raise SampleMissing(reply[1])
    if status == "error":
        raise InfrastructureError(reply[1])
    return reply[1] if len(reply) == 2 else reply[1:]


class PushedVerdicts:
    """A worker's verdict source (``engine/verdicts.py``): what the controller's ledger
    pushed with each item, or, for an item that came without (another ``--dist``
    mode, the other check ``result_of`` reads), its answer when asked."""

    def __init__(self, link: WorkerLink):
        self._link = link

    def known(self, spec: Any, completion: Any = None) -> Any:
        from ..engine.ledger import Known

        nodeid, known = spec.nodeid, self._link.known
        if nodeid not in known:
            known[nodeid] = self._link.ask("known", nodeid)
        # Taken once with its sample (the item's verdict, or result_of's read): what a later
        # read asks is the controller's answer then, not a push made before the item ran.
        wire = known.pop(nodeid) if completion is not None else known[nodeid]
        return Known.from_wire(wire)

    def pushed_program_key(self, spec: Any) -> tuple[bool, str | None]:
        """(True, key) when the controller pushed the item's program key (None: the
        item is not deduplicated), else (False, None): taken once, with the item."""
        keys = self._link.keys
        if spec.nodeid in keys:
            return True, keys.pop(spec.nodeid)
        return False, None


class RemoteAnswers:
    """A worker's model under test: its answers come from the controller."""

    answers_locally = False

    def __init__(self, spec: str, indices: dict[str, dict[str, Any]], link: WorkerLink):
        self.spec, self._indices, self._link = spec, indices, link

    def sample_indices(self, benchmark: str, task_id: str, requested: int | None):
        value = self._indices.get(benchmark, {}).get(task_id, 0)
        return range(value) if isinstance(value, int) else value

    def generate(self, requests, progress=None) -> None:  # the controller generates
        return None

    def completion(self, request: Any) -> Completion:
        key = (request.benchmark, request.task.task_id, int(request.sample_index))
        reply = self._link.answers.get(key)
        if reply is None:
            try:
                text, meta = self._link.ask("answer", list(key))
                reply = ["ok", text, meta]
            except SampleMissing as exc:
                reply = ["missing", str(exc)]
            except InfrastructureError as exc:
                reply = ["error", str(exc)]
            self._link.answers[key] = reply
        text, meta = unwrap(reply)
        return Completion(text, dict(meta))

    def manifest(self) -> dict[str, Any]:
        return {"spec": self.spec, "answers": "from the xdist controller"}


class RemoteRole:
    """A worker's model role (the judge): every question goes to the controller."""

    def __init__(self, role: str, spec: str, identity: dict[str, Any], link: WorkerLink):
        self.role, self.spec, self._identity, self._link = role, spec, identity, link
        # The controller asks and counts; this worker's own counters stay zero.
        self.stats = {"asked": 0, "cache_hits": 0, "called": 0, "errors": 0}

    def identity(self) -> dict[str, Any]:
        return dict(self._identity)

    def ask(self, request: Any) -> str:
        prompt = request.prompt
        return self._link.ask("judge", {
            "role": self.role, "benchmark": request.benchmark, "task_id": request.task.task_id,
            "sample_index": request.sample_index, "purpose": request.purpose, "attempt": request.attempt,
            "question": getattr(request, "question", ""),  # what a recorded answer is bound to
            "messages": [[m.role, m.content] for m in prompt.messages],
            "completion_prefix": prompt.completion_prefix, "parameters": dict(prompt.parameters),
            "schema": None if request.schema is None else json.loads(json.dumps(request.schema))})

    def manifest(self) -> dict[str, Any]:
        return {"role": self.role, "spec": self.spec, "asked": "by the xdist controller"}


def encode_indices(model: Any, plan: Any) -> dict[str, dict[str, Any]]:
    """Sample indices of every task, for workers that cannot ask the model: ``n`` for ``range(n)``."""
    out: dict[str, dict[str, Any]] = {}
    for name in plan.adapters:
        per = out.setdefault(name, {})
        for task in plan.taskset(name).tasks:
            indices = list(model.sample_indices(name, task.task_id, plan.settings.samples))
            per[task.task_id] = len(indices) if indices == list(range(len(indices))) else indices
    return out
