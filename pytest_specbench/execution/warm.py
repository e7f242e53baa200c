"""Warm starts of command jobs (issue #45): a job of the executor's own interpreter
that says how (:class:`.protocol.WarmStart`) starts as a clone of a process that
has its code imported already, instead of a fresh interpreter that imports it
(a pbt search job: ~0.3 CPU s of Python's start and Hypothesis's import, of its
~0.5-0.9).

The processes, all in the sandbox zygote's namespaces (:mod:`.sandbox`):

* the **seed**, forked by the zygote at its start, before it read any job: it
  holds what the zygote held then (its configuration, its runner modules) and
  nothing else.  It never runs a job: for each new image it clones a pair of
  *image processes* and goes back to waiting.
* the **image processes**, one pair per image (the digest of the modules' bytes):
  the *base* process imports the ``base`` modules (from the bytes of the job's own
  files, which are the harness's scripts) and ``base_preload``; the *top* process,
  cloned from it, imports ``top`` and ``top_preload`` too.  They are root in the
  zygote's namespaces (a job runs under a uid of its own: it can neither signal nor
  trace them, nor open their ``/proc`` entries) and hold no job's data: per job
  they get its directory, uid, limits, environment and argv, and its descriptors.
* per job, the base process clones the **helper** and the top process the job's
  **main** process.  Both are clones with ``CLONE_PARENT``: children of the
  zygote, which supervises, measures (rusage) and reaps them as it does an exec'd
  job.  Each enters the job's sandbox exactly as an exec'd job does
  (:func:`.command.enter_job`: session, IPC namespace, descriptors -- every other one
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

import ctypes
import fcntl
import hashlib
import json
import os
import platform
import signal
import socket
import sys
import threading
import types
from typing import Any

_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long
CLONE_PARENT = 0x00008000
# clone's number by machine (the x86_64 and aarch64 argument orders agree when all but the flags are 0)
_CLONE = {"x86_64": 56, "aarch64": 220}
_MAX_MESSAGE = 1 << 22  # a message of the image's modules' bytes fits
_HIGH_FD = 100  # received descriptors are moved above the numbers a job's map targets
_FLAGS = ("-s", "-E")  # the interpreter's flags a warm start honours (the image's path is that of -s -E)


class WarmUnavailable(Exception):
    """The job cannot start warm here: the zygote execs it instead."""


def supported() -> bool:
    return platform.machine() in _CLONE and hasattr(socket, "send_fds")


def image_key(warm: dict, files: dict) -> str:
    """The image a job needs: its module names and their bytes, and the preloads."""
    h = hashlib.sha256(json.dumps({k: warm.get(k) for k in ("base", "base_preload", "top", "top_preload")},
                                  sort_keys=True).encode())
    for name in [*warm.get("base", ()), *warm.get("top", ())]:
        data = files.get(f"{name}.py")
        if data is None:
            raise WarmUnavailable(f"the job has no {name}.py")
        h.update(name.encode() + b"\0" + hashlib.sha256(data).digest())
    return h.hexdigest()


def _clone_parent() -> int:
    """``fork()`` whose child is a child of our parent (``CLONE_PARENT``), with
    Python's own fork bookkeeping (what ``os.fork`` does around the system call)."""
    if threading.active_count() != 1:
        raise OSError("a process with threads is not cloned")
    api = ctypes.pythonapi
    api.PyOS_BeforeFork()
    pid = _libc.syscall(_CLONE[platform.machine()], ctypes.c_ulong(CLONE_PARENT | signal.SIGCHLD),
                        ctypes.c_ulong(0), None, None, ctypes.c_ulong(0))
    if pid == 0:
        api.PyOS_AfterFork_Child()
        return 0
    err = ctypes.get_errno()
    api.PyOS_AfterFork_Parent()
    if pid < 0:
        raise OSError(err, f"clone: {os.strerror(err)}")
    return pid


def _send(sock: socket.socket, obj: Any, fds=()) -> None:
    socket.send_fds(sock, [json.dumps(obj).encode()], list(fds))


def _recv(sock: socket.socket) -> tuple[Any, list[int]]:
    data, fds, _, _ = socket.recv_fds(sock, _MAX_MESSAGE, 16)
    if not data:
        raise EOFError("the other end closed")
    return json.loads(data), fds


# ------------------------------------------------------------------ seed and images

def start_seed() -> tuple[int, socket.socket]:
    """In the zygote, before it reads any job: fork the seed; (its pid, our end)."""
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the seed
        try:
            ours.close()
            _close_all_but({theirs.fileno()})
            _seed(theirs)
        finally:
            os._exit(0)
    theirs.close()
    return pid, ours


def _close_all_but(keep: set[int]) -> None:
    """Close every descriptor but ``keep`` (the zygote's channel to the harness first)."""
    for fd in map(int, os.listdir("/proc/self/fd")):
        if fd not in keep and fd > 2:
            try:
                os.close(fd)
            except OSError:
                pass
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    os.close(null)


def _seed(sock: socket.socket) -> None:
    """Wait for images to make; each is a pair of processes cloned from here."""
    while True:
        try:
            msg, fds = _recv(sock)
        except (EOFError, OSError):
            return
        base_sock, top_sock = (socket.socket(fileno=fd) for fd in fds)
        try:
            pid = _clone_parent()
        except OSError as exc:
            base_sock.close()
            top_sock.close()
            _send(sock, {"error": str(exc)})
            continue
        if pid == 0:  # the base process
            try:
                sock.detach()  # (closed below: the object must not close a number reused later)
                _image(msg, base_sock, top_sock)
            finally:
                os._exit(0)
        base_sock.close()
        top_sock.close()
        _send(sock, {"pid": pid})


def _load(names, sources: dict[str, str], preload) -> None:
    for name in preload:
        __import__(name)
    for name in names:  # the job's own scripts, from their bytes (the same bytes the job has as files)
        module = types.ModuleType(name)
        module.__file__ = f"{name}.py"  # as in the job: a file of its working directory
        sys.modules[name] = module
        exec(compile(sources[name], module.__file__, "exec"), module.__dict__)  # noqa: S102 - the harness's


def _image(msg: dict, base_sock: socket.socket, top_sock: socket.socket) -> None:
    """The base process: import the base layer, clone the top process, serve."""
    for fd in map(int, os.listdir("/proc/self/fd")):  # the seed's channel: not ours
        if fd > 2 and fd not in (base_sock.fileno(), top_sock.fileno()):
            try:
                os.close(fd)
            except OSError:
                pass
    warm, sources = msg["warm"], msg["sources"]
    try:
        _load(warm["base"], sources, warm["base_preload"])
    except BaseException as exc:  # noqa: BLE001 - reported; the job is exec'd instead
        _send(base_sock, {"error": f"{type(exc).__name__}: {exc}"[:500]})
        _send(top_sock, {"error": "no base image"})
        return
    pid = _clone_parent()
    if pid == 0:  # the top process
        os.close(base_sock.detach())
        try:
            _load(warm["top"], sources, warm["top_preload"])
        except BaseException as exc:  # noqa: BLE001
            _send(top_sock, {"error": f"{type(exc).__name__}: {exc}"[:500]})
            return
        del msg, sources
        _send(top_sock, {"ready": os.getpid()})
        _serve(top_sock)
        return
    top_sock.close()
    del msg, sources
    _send(base_sock, {"ready": os.getpid()})
    _serve(base_sock)


def _serve(sock: socket.socket) -> None:
    """An image process: per request, clone one of the job's processes."""
    while True:
        try:
            req, fds = _recv(sock)
        except (EOFError, OSError):
            return
        try:
            pid = _clone_parent()
        except OSError as exc:
            for fd in fds:
                os.close(fd)
            _send(sock, {"error": str(exc)})
            continue
        if pid == 0:
            try:
                _job_process(req, fds, sock.detach())
            finally:
                os._exit(127)
        for fd in fds:
            os.close(fd)
        _send(sock, {"pid": pid})


def _job_process(req: dict, fds: list[int], control: int) -> None:
    """The job's process (main or helper): enter the job's sandbox, then its entry."""
    from .command import enter_job

    status = None
    try:
        high = [fcntl.fcntl(fd, fcntl.F_DUPFD, _HIGH_FD) for fd in fds]
        for fd in [*fds, control]:
            os.close(fd)
        targets = dict(zip(req["targets"], high))
        status = targets.get(4) if req["role"] == "main" else None
        enter_job(req["job"], req["jobdir"], req["uid"], targets)  # every descriptor not mapped is closed
        if status is not None:
            status = 4
            os.set_inheritable(4, False)
        sys.path[:] = [req["jobdir"], *req["path"]]
        sys.argv = list(req["job"]["argv"][req["script_at"]:])
        module, _, function = req["entry"].partition(":")
        entry = getattr(sys.modules[module], function)
        if status is not None:
            os.close(status)  # set up: nothing more to say on the status pipe (an exec closes it too)
            status = None
    except BaseException as exc:  # noqa: BLE001 - the harness's failure, as command.run_child reports it
        if status is not None:
            try:
                os.write(status, f"{type(exc).__name__}: {exc}"[:2000].encode())
            except OSError:
                pass
        os._exit(127)
    code = 0
    try:  # as the interpreter ends a script: its exit code, or the traceback on stderr and 1
        if req["role"] == "main":
            entry(sys.argv, 5, req["helper_pid"])
        else:
            entry(sys.argv, 5)
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 0 if exc.code is None else 1
    except BaseException:  # noqa: BLE001
        import traceback

        traceback.print_exc()
        code = 1
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:  # noqa: BLE001
            pass
    os._exit(code)


# ------------------------------------------------------------------ the zygote's side

class _NoSeed(dict):
    """The images of a zygote whose seed died: none, and none can be made."""

    def __contains__(self, key) -> bool:
        return True

    def __getitem__(self, key):
        return None


class Images:
    """The zygote's handle on its seed and the images it made (one pair per key)."""

    def __init__(self, seed_pid: int, seed_sock: socket.socket):
        self.seed_pid, self.seed_sock = seed_pid, seed_sock
        self.images: dict[str, tuple[socket.socket, socket.socket] | None] = {}
        self.pids: set[int] = {seed_pid}  # processes of ours that are no job's
        # What ``python -s -E SCRIPT`` has on its path after the script's folder: ours, less
        # what our own start added (PYTHONPATH, our working directory).
        extra = {p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p}
        self.path = [p for p in sys.path[1:] if p and p not in extra]

    def _image(self, key: str, warm: dict, files: dict) -> tuple[socket.socket, socket.socket]:
        if key in self.images:
            got = self.images[key]
            if got is None:
                raise WarmUnavailable("its image could not be made")
            return got
        self.images[key] = None
        sources = {n: files[f"{n}.py"].decode("utf-8") for n in [*warm["base"], *warm["top"]]}
        base = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        top = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            _send(self.seed_sock, {"warm": warm, "sources": sources}, [base[1].fileno(), top[1].fileno()])
            base[1].close()
            top[1].close()
            made, _ = _recv(self.seed_sock)
            if "pid" not in made:
                raise WarmUnavailable(made.get("error", "the seed made no image"))
            self.pids.add(made["pid"])
            ready = [_recv(base[0])[0], _recv(top[0])[0]]
        except (OSError, EOFError, ValueError) as exc:
            raise WarmUnavailable(str(exc)) from None
        if any("ready" not in r for r in ready):
            raise WarmUnavailable(next(r["error"] for r in ready if "ready" not in r))
        self.pids.add(ready[1]["ready"])
        self.images[key] = (base[0], top[0])
        return self.images[key]

    def start(self, job: dict, jobdir: str, uid: int, pipes: dict) -> tuple[int, int]:
        """Start ``job`` warm: (main pid, helper pid), both our children.  Raises
        :class:`WarmUnavailable` (nothing started) when it cannot."""
        warm = job["warm"]
        argv = job["argv"]
        if argv[0] != sys.executable:
            raise WarmUnavailable("another interpreter")
        script_at = next((i for i, a in enumerate(argv) if i and a not in _FLAGS), len(argv))
        if script_at == len(argv) or argv[script_at].startswith("-"):
            raise WarmUnavailable("not a script of the interpreter")  # (-c, -m, another flag)
        key = image_key(warm, job.get("files") or {})
        base, top = self._image(key, warm, job.get("files") or {})
        common = {"jobdir": jobdir, "uid": uid, "path": self.path, "script_at": script_at,
                  "job": {"argv": job["argv"], "env": job["env"], "limits": job["limits"]}}
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
        if pid == self.seed_pid:
            self.images = _NoSeed()

    def close(self) -> None:
        for pair in self.images.values():
            for sock in pair or ():
                sock.close()
        self.seed_sock.close()
