"""Warm starts of command jobs (issue #45): a job of the executor's own interpreter
that says how (:class:`.protocol.WarmStart`) starts as a clone of a process that
has its code imported already, instead of a fresh interpreter that imports it
(a pbt search job: ~0.4 CPU s of Python's start and Hypothesis's import, of its
~0.8; a blocks job ~0.13 of its ~0.15: docs/timing.md, "Session 21").

The processes, all in the sandbox zygote's namespaces (:mod:`.sandbox`):

* the **seed**, a fresh interpreter the zygote starts (fork and exec) at its
  first warm job: it runs the text of :mod:`.enter` and :mod:`.warm_image` (no
  module of this package is imported there) and never runs a job: for each new
  image it clones a pair of *image processes* and goes back to waiting.
* the **image processes**, one pair per image (the digest of the modules' bytes):
  the *base* process imports the ``base`` modules (from the bytes of the job's own
  files, which are the harness's scripts; the job's script as ``__main__``, as an
  exec runs it) and ``base_preload``; the *top* process, cloned from it, imports
  ``top`` and ``top_preload`` too (their bytes are sent to it alone).  They are root in the
  zygote's namespaces (a job runs under a uid of its own: it can neither signal nor
  trace them, nor open their ``/proc`` entries) and hold no job's data: per job
  they get its directory, uid, limits, environment and argv, and its descriptors.
* per job, the base process clones the **helper** and the top process the job's
  **main** process.  Both are clones with ``CLONE_PARENT``: children of the
  zygote, which supervises, measures (rusage) and reaps them as it does an exec'd
  job.  Each enters the job's sandbox exactly as an exec'd job does
  (:func:`.enter.enter_job`: session, IPC namespace, descriptors -- every other one
  closed --, working directory, environment, rlimits, uid) and then calls its
  entry function instead of ``execve``.  Only the main process gets the result
  channel.  A job's rlimits count from its own start (a clone is a new process).

What the job's processes share with the image: its memory as it was when cloned
(copy on write: what a job changes, no later job sees), no descriptor, no file
(the image read its modules from the bytes it was sent).  Where the sandbox gives
jobs no uid of their own, or the job's interpreter is not the zygote's, the job
is exec'd as always.
"""
from __future__ import annotations

import hashlib
import json
import os
import platform
import signal
import socket
import sys
from pathlib import Path

from . import warm_image
from .warm_image import recv as _recv, send as _send

# The seed's program: .enter's text and .warm_image's, read now (the zygote imports this module
# before the package is hidden from it), run by a fresh interpreter in one namespace.
_SEED_CODE = (Path(__file__).with_name("enter.py").read_text() + "\n"
              + Path(__file__).with_name("warm_image.py").read_text())
_BOOT = ("import os\nchunks = []\nwhile True:\n    chunk = os.read(0, 1 << 20)\n    if not chunk:\n        break\n"
         "    chunks.append(chunk)\ncode = b''.join(chunks)\ndel chunks\n"
         "scope = {'__name__': '__specbench_warm__'}\n"
         "exec(compile(code, '<specbench warm image>', 'exec'), scope)\nscope['seed'](3)\n")
_FLAGS = ("-s", "-E")  # the interpreter's flags a warm start honours (a script's seed runs with both)
# The seed of a script's jobs; a ``-m`` job's seed starts with the job's own flags and, from its
# environment, what the interpreter reads at its start and is the same for every job of a kind
# (``sys.flags`` are then the exec'd job's; $PYTHONPATH, which names the job's folder, is set per job).
_SCRIPT_START = (("-s", "-E"), ())
_SEED_ENV = ("PYTHONDONTWRITEBYTECODE",)


class WarmUnavailable(Exception):
    """The job cannot start warm here: the zygote execs it instead."""


def supported() -> bool:
    return platform.machine() in warm_image.CLONE_NUMBER and hasattr(socket, "send_fds")


def image_key(warm: dict, files: dict, script: str, start: tuple) -> str:
    """The image a job needs: how its interpreter starts (``start``: path, flags, environment),
    its module names and their bytes, the preloads, its script's name."""
    h = hashlib.sha256(json.dumps({**{k: warm.get(k) for k in ("base", "base_preload", "top", "top_preload",
                                                                "top_optional")},
                                   "script": script, "start": start}, sort_keys=True).encode())
    for name in [*warm.get("base", ()), *warm.get("top", ())]:
        data = files.get(f"{name}.py")
        if data is None:
            raise WarmUnavailable(f"the job has no {name}.py")
        h.update(name.encode() + b"\0" + hashlib.sha256(data).digest())
    return h.hexdigest()


class Images:
    """The zygote's handle on its seed (started at the first warm job) and the images it
    made, one pair of processes per key.  Every process here is the zygote's child."""

    def __init__(self, ipc: bool):
        self.ipc = ipc  # jobs get an IPC namespace of their own (.enter)
        self.seeds: dict[tuple, tuple[int, socket.socket]] = {}  # (interpreter, flags, environment) -> its seed
        self.broken: set[tuple] = set()  # starts whose seed could not start or died: their jobs are exec'd
        self.images: dict[str, tuple[socket.socket, socket.socket] | None] = {}
        self.pids: set[int] = set()  # processes of ours that are no job's

    def _seed(self, start: tuple) -> socket.socket:
        """The seed of ``start`` (interpreter, flags, environment items): the zygote's own
        interpreter or a venv's, a seed for each way it starts."""
        if start in self.broken:
            raise WarmUnavailable("no seed")
        if start not in self.seeds:
            python, flags, env = start
            ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
            code_r, code_w = os.pipe()
            pid = os.fork()
            if pid == 0:  # pragma: no cover - becomes the seed
                try:
                    os.dup2(code_r, 0)
                    os.dup2(theirs.fileno(), 3)
                    os.closerange(4, 1 << 16)
                    # (HOME: no user site folder of ours; a job's own is looked for per job)
                    os.execve(python, [python, *flags, "-c", _BOOT],
                              {"PATH": "/usr/bin:/bin", "LANG": warm_image.SEED_LOCALE, "HOME": "/nonexistent",
                               **dict(env)})
                finally:
                    os._exit(127)
            os.close(code_r)
            theirs.close()
            try:
                os.write(code_w, _SEED_CODE.encode())  # (a pipe holds it: the seed reads it at once)
            finally:
                os.close(code_w)
            self.seeds[start] = (pid, ours)
            self.pids.add(pid)
            _send(ours, {"ipc": self.ipc})
        return self.seeds[start][1]

    def _image(self, key: str, warm: dict, files: dict, script: str,
               start: tuple) -> tuple[socket.socket, socket.socket]:
        if key in self.images:
            got = self.images[key]
            if got is None:
                raise WarmUnavailable("its image could not be made")
            return got
        self.images[key] = None
        seed = self._seed(start)
        sources = {n: files[f"{n}.py"].decode("utf-8") for n in [*warm["base"], *warm["top"]]}
        base = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        top = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            _send(seed, {"warm": warm, "script": script, "sources": {n: sources[n] for n in warm["base"]}},
                  [base[1].fileno(), top[1].fileno()])
            base[1].close()
            top[1].close()
            made, _ = _recv(seed)
            if "pid" not in made:
                raise WarmUnavailable(made.get("error", "the seed made no image"))
            self.pids.add(made["pid"])
            ready, _ = _recv(base[0])
            if "ready" not in ready:
                raise WarmUnavailable(ready.get("error", "no base image"))
            self.pids.add(ready["top"])
            _send(top[0], {"script": script, "sources": {n: sources[n] for n in warm["top"]}})
            ready, _ = _recv(top[0])
            if "ready" not in ready:
                raise WarmUnavailable(ready.get("error", "no top image"))
        except (OSError, EOFError, ValueError) as exc:
            raise WarmUnavailable(str(exc)) from None
        self.images[key] = (base[0], top[0])
        return self.images[key]

    def start(self, job: dict, jobdir: str, uid: int, pipes: dict) -> tuple[int, int | None]:
        """Start ``job`` warm: (main pid, helper pid or None), both our children.  Raises
        :class:`WarmUnavailable` (nothing started) when it cannot."""
        warm, argv = job["warm"], job["argv"]
        python = argv[0]
        if warm["main"] is None:  # ``python [-s] [-E] -m MODULE ...`` of any interpreter (a venv's too)
            at = next((i for i, a in enumerate(argv) if i and a not in _FLAGS), len(argv))
            if at + 1 >= len(argv) or argv[at] != "-m" or warm.get("helper") is not None:
                raise WarmUnavailable("not a module run by the interpreter")
            if not (os.path.isabs(python) and os.access(python, os.X_OK)):
                raise WarmUnavailable("no interpreter at an absolute path")
            flags = tuple(argv[1:at])
            env = () if "-E" in flags else tuple((k, job["env"][k]) for k in _SEED_ENV if k in job["env"])
            script_at, script, start = at, f"-m {argv[at + 1]}", (python, flags, env)
        else:
            if warm.get("helper") is None:
                raise WarmUnavailable("a script's job has no helper")  # (two processes: WarmStart)
            if python != sys.executable:
                raise WarmUnavailable("another interpreter")
            script_at = next((i for i, a in enumerate(argv) if i and a not in _FLAGS), len(argv))
            if script_at == len(argv) or argv[script_at].startswith("-"):
                raise WarmUnavailable("not a script of the interpreter")  # (-c, -m, another flag)
            script, start = argv[script_at], (python, *_SCRIPT_START)
        files = job.get("files") or {}
        key = image_key(warm, files, script, start)
        base, top = self._image(key, warm, files, script, start)
        common = {"jobdir": jobdir, "uid": uid, "script_at": script_at,
                  "job": {"argv": argv, "env": job["env"], "limits": job["limits"]}}
        keeper, helper = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        outs = pipes["outputs"]
        null = os.open(os.devnull, os.O_RDWR)
        helper_pid = None
        try:
            if warm["main"] is not None:  # a script's job: its helper first
                _send(base, {**common, "role": "helper", "entry": warm["helper"], "targets": [1, 2, 3, 4, 5]},
                      [outs[0], outs[1], null, null, helper.fileno()])
                got, _ = _recv(base)
                if "pid" not in got:
                    raise WarmUnavailable(got.get("error", "no helper"))
                helper_pid = got["pid"]
            try:
                if helper_pid is None:  # one process: its descriptors are an exec'd job's
                    _send(top, {**common, "role": "main", "entry": warm["main"], "targets": [1, 2, 3, 4]},
                          [outs[0], outs[1], pipes["result"], pipes["status"]])
                else:
                    _send(top, {**common, "role": "main", "entry": warm["main"], "helper_pid": helper_pid,
                                "targets": [1, 2, 3, 4, 5]},
                          [outs[0], outs[1], pipes["result"], pipes["status"], keeper.fileno()])
                got, _ = _recv(top)
                if "pid" not in got:
                    raise WarmUnavailable(got.get("error", "no main process"))
            except BaseException:
                if helper_pid is not None:
                    os.kill(helper_pid, signal.SIGKILL)
                    os.waitpid(helper_pid, 0)
                raise
        except (OSError, EOFError, ValueError) as exc:
            self.images.pop(key, None)  # a broken image: the next job makes a new one
            raise WarmUnavailable(str(exc)) from None
        finally:
            os.close(null)
            keeper.close()
            helper.close()
        return got["pid"], helper_pid

    def lost(self, pid: int) -> None:
        """A seed or image process died (the zygote reaped it): its images are gone."""
        self.pids.discard(pid)
        for pair in self.images.values():
            for sock in pair or ():
                sock.close()
        self.images = {}
        for start, (seed_pid, sock) in list(self.seeds.items()):
            if pid == seed_pid:
                sock.close()
                del self.seeds[start]
                self.broken.add(start)

    def close(self) -> None:
        """At the zygote's end: the seed and the images end and are reaped here (their
        CPU is then counted with the zygote's, as a job's is)."""
        for pair in self.images.values():
            for sock in pair or ():
                sock.close()
        for _, sock in self.seeds.values():
            sock.close()
        for pid in self.pids:
            try:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
            except (ProcessLookupError, ChildProcessError):
                pass
        self.pids = set()
