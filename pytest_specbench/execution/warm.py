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
_FLAGS = ("-s", "-E")  # the interpreter's flags a warm start honours (the seed runs with both)


class WarmUnavailable(Exception):
    """The job cannot start warm here: the zygote execs it instead."""


def supported() -> bool:
    return platform.machine() in warm_image.CLONE_NUMBER and hasattr(socket, "send_fds")


def image_key(warm: dict, files: dict, script: str) -> str:
    """The image a job needs: its module names and their bytes, the preloads, its script's name."""
    h = hashlib.sha256(json.dumps({**{k: warm.get(k) for k in ("base", "base_preload", "top", "top_preload")},
                                   "script": script}, sort_keys=True).encode())
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
        self.seed: tuple[int, socket.socket] | None = None
        self.broken = False  # the seed could not start or died: every job is exec'd
        self.images: dict[str, tuple[socket.socket, socket.socket] | None] = {}
        self.pids: set[int] = set()  # processes of ours that are no job's

    def _seed(self) -> socket.socket:
        if self.broken:
            raise WarmUnavailable("no seed")
        if self.seed is None:
            ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
            code_r, code_w = os.pipe()
            pid = os.fork()
            if pid == 0:  # pragma: no cover - becomes the seed
                try:
                    os.dup2(code_r, 0)
                    os.dup2(theirs.fileno(), 3)
                    os.closerange(4, 1 << 16)
                    os.execve(sys.executable, [sys.executable, "-s", "-E", "-c", _BOOT],
                              {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"})
                finally:
                    os._exit(127)
            os.close(code_r)
            theirs.close()
            try:
                os.write(code_w, _SEED_CODE.encode())  # (a pipe holds it: the seed reads it at once)
            finally:
                os.close(code_w)
            self.seed = (pid, ours)
            self.pids.add(pid)
            _send(ours, {"ipc": self.ipc})
        return self.seed[1]

    def _image(self, key: str, warm: dict, files: dict, script: str) -> tuple[socket.socket, socket.socket]:
        if key in self.images:
            got = self.images[key]
            if got is None:
                raise WarmUnavailable("its image could not be made")
            return got
        self.images[key] = None
        seed = self._seed()
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

    def start(self, job: dict, jobdir: str, uid: int, pipes: dict) -> tuple[int, int]:
        """Start ``job`` warm: (main pid, helper pid), both our children.  Raises
        :class:`WarmUnavailable` (nothing started) when it cannot."""
        warm, argv = job["warm"], job["argv"]
        if argv[0] != sys.executable:
            raise WarmUnavailable("another interpreter")
        script_at = next((i for i, a in enumerate(argv) if i and a not in _FLAGS), len(argv))
        if script_at == len(argv) or argv[script_at].startswith("-"):
            raise WarmUnavailable("not a script of the interpreter")  # (-c, -m, another flag)
        files = job.get("files") or {}
        key = image_key(warm, files, argv[script_at])
        base, top = self._image(key, warm, files, argv[script_at])
        common = {"jobdir": jobdir, "uid": uid, "script_at": script_at,
                  "job": {"argv": argv, "env": job["env"], "limits": job["limits"]}}
        keeper, helper = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        outs = pipes["outputs"]
        null = os.open(os.devnull, os.O_RDWR)
        try:
            _send(base, {**common, "role": "helper", "entry": warm["helper"], "targets": [1, 2, 3, 4, 5]},
                  [outs[0], outs[1], null, null, helper.fileno()])
            got, _ = _recv(base)
            if "pid" not in got:
                raise WarmUnavailable(got.get("error", "no helper"))
            helper_pid = got["pid"]
            try:
                _send(top, {**common, "role": "main", "entry": warm["main"], "helper_pid": helper_pid,
                            "targets": [1, 2, 3, 4, 5]},
                      [outs[0], outs[1], pipes["result"], pipes["status"], keeper.fileno()])
                got, _ = _recv(top)
                if "pid" not in got:
                    raise WarmUnavailable(got.get("error", "no main process"))
            except BaseException:
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
        if self.seed is not None and pid == self.seed[0]:
            self.broken = True

    def close(self) -> None:
        """At the zygote's end: the seed and the images end and are reaped here (their
        CPU is then counted with the zygote's, as a job's is)."""
        for pair in self.images.values():
            for sock in pair or ():
                sock.close()
        if self.seed is not None:
            self.seed[1].close()
        for pid in self.pids:
            try:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
            except (ProcessLookupError, ChildProcessError):
                pass
        self.pids = set()
