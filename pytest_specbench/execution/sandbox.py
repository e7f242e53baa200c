"""The sandbox: isolate, supervise, reap.  Shared by every executor.

One *zygote* process per executor (started by :class:`SandboxClient` as
``python -s -m pytest_specbench.execution._zygote``) sets up isolation once and
then forks one child per job; a *runner* decides what that child does (the
Python call runner in :mod:`.python_child`, the command runner in
:mod:`.command`).  The zygote never runs untrusted code itself.  Why a separate
process at all: a child forked from the pytest process would inherit xdist's
channels and the expected outputs.

Isolation, set up once in the zygote when the OS allows it (:func:`isolate`):
a new network namespace (loopback down) and a mount namespace in which the
project, the data, the state folder, the caches and $HOME are covered by empty,
unlistable tmpfs mounts (the interpreter's installation is bound back
read-only, so a venv inside the project still works while nothing else of the
project is visible) and /tmp is a fresh tmpfs.  Paths a job may read (a built
venv under the state folder, a repository checkout) are bound read-only on
request (:meth:`Zygote.expose`).  Per job, in the child (:func:`enter_child`):
a new session, an IPC namespace of its own, rlimits, stdin on /dev/null, capped
output pipes, a fresh private working directory, an empty environment plus the job's, and, as root,
a uid of its own, so it can signal or write nothing of ours and everything it
leaves behind is killed by uid (:meth:`Zygote.reap`).

Protocol.  Harness -> zygote: 4-byte big-endian length + pickle (the harness is
trusted).  Zygote -> harness: 1-byte kind + 4-byte length + payload: ``D`` raw
bytes the child wrote on fd 3 (its records; never unpickled), ``R`` (ready,
isolation report), ``X`` (job finished) and ``E`` (zygote error) as JSON
written by the zygote itself.
"""
from __future__ import annotations

import base64
import ctypes
import fcntl
import json
import os
import pickle
import resource
import select
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time
from typing import Any, Callable

from . import records
from .enter import JOB_IPC_NAMESPACE

_LEN = struct.Struct(">I")
_FRAME = struct.Struct(">BI")

CLONE_NEWNS, CLONE_NEWUSER, CLONE_NEWNET, CLONE_NEWIPC = 0x00020000, 0x10000000, 0x40000000, 0x08000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 1, 2, 4, 32, 4096, 16384, 1 << 18
MNT_DETACH = 2
PR_SET_PDEATHSIG, PR_SET_NO_NEW_PRIVS, PR_SET_CHILD_SUBREAPER = 1, 38, 36
F_SETPIPE_SZ = getattr(fcntl, "F_SETPIPE_SZ", 1031)

_libc = ctypes.CDLL(None, use_errno=True)
_HIDDEN_FDS: dict[str, int] = {}  # hidden path -> O_PATH fd of what the tmpfs covers
_KEPT: list[str] = []  # paths bound back read-only at start (the interpreter's installation)


def _check(rc: int, what: str) -> None:
    if rc != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def _mount(src, target, fstype, flags, data=None) -> None:
    enc = lambda s: s.encode() if isinstance(s, str) else s  # noqa: E731
    _check(_libc.mount(enc(src), enc(target), enc(fstype), ctypes.c_ulong(flags), enc(data)), f"mount {target}")


def widen_pipe(fd: int) -> None:
    """Give a pipe 1 MiB of buffer instead of 64 KiB: large outputs then cross it
    in a sixteenth of the system calls and context switches."""
    try:
        fcntl.fcntl(fd, F_SETPIPE_SZ, 1 << 20)
    except OSError:
        pass  # over /proc/sys/fs/pipe-max-size: the default works, more slowly


def _under(path: str, base: str) -> bool:
    return path == base or path.startswith(base.rstrip("/") + "/")


class Channel:
    """The zygote's end of the harness pipe."""

    def __init__(self) -> None:
        self.rfd, self.wfd = 0, 1

    def recv(self):
        head = self._read_exact(_LEN.size)
        if head is None:
            return None
        body = self._read_exact(_LEN.unpack(head)[0])
        return pickle.loads(body) if body is not None else None

    def _read_exact(self, n: int):
        chunks, got = [], 0
        while got < n:
            chunk = os.read(self.rfd, n - got)
            if not chunk:
                return None
            chunks.append(chunk)
            got += len(chunk)
        return b"".join(chunks)

    def send(self, kind: bytes, payload: bytes) -> None:
        data = _FRAME.pack(kind[0], len(payload)) + payload
        view = memoryview(data)
        while view:
            n = os.write(self.wfd, view)
            view = view[n:]

    def send_json(self, kind: bytes, obj) -> None:
        self.send(kind, json.dumps(obj).encode())


# ---------------------------------------------------------------- isolation

def _self_expose() -> list[str]:
    """This interpreter's installation: what must stay visible for it to run."""
    return sorted({os.path.realpath(p) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix)})


def isolate(cfg: dict) -> dict:
    """Enter namespaces and hide paths; return what is in force (for the report)."""
    report = {"network": False, "filesystem": False, "uid": None, "notes": []}
    if not cfg.get("isolate", True):
        report["notes"].append("isolation disabled by configuration")
        return report
    root = os.geteuid() == 0
    # The zygote's own IPC namespace too: owned by its user namespace (not root), a job may then
    # unshare one of its own (enter_child); as root it is simply private.
    flags = CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWIPC
    try:
        if root:
            _check(_libc.unshare(flags), "unshare")
        else:
            uid, gid = os.getuid(), os.getgid()
            _check(_libc.unshare(flags | CLONE_NEWUSER), "unshare(user)")
            with open("/proc/self/setgroups", "w") as fh:
                fh.write("deny")
            with open("/proc/self/uid_map", "w") as fh:
                fh.write(f"{uid} {uid} 1")
            with open("/proc/self/gid_map", "w") as fh:
                fh.write(f"{gid} {gid} 1")
        report["network"] = True
    except OSError as exc:
        report["notes"].append(f"no namespaces ({exc.strerror}): network isolation off, paths not hidden")
        return _uid_policy(report, cfg, root, mounted=False)
    expose = sorted(set(cfg.get("expose", ())) | set(_self_expose()))
    try:
        _mount(None, "/", None, MS_REC | MS_PRIVATE)
        # Keep handles on what must stay visible before covering its ancestors.
        keep = []
        for path in expose:
            if os.path.isdir(path):
                keep.append((path, os.open(path, os.O_PATH | os.O_DIRECTORY)))
        hidden = []
        for path in cfg.get("hide", ()):
            if os.path.isdir(path) and os.path.realpath(path) != "/":
                _HIDDEN_FDS[path] = os.open(path, os.O_PATH | os.O_DIRECTORY)
                # mode 111: the tmpfs can be walked through (to a venv bound back
                # inside it) but not listed, so not even names show.
                _mount("tmpfs", path, "tmpfs", MS_NOSUID | MS_NODEV, "mode=111,size=1m")
                hidden.append(path)
        covered = list(hidden)
        # A hidden folder that is itself one of the always-private ones (/tmp, when the run's
        # rootdir is /tmp: a remote host's worker started there) still gets its fresh,
        # writable tmpfs on top: hidden alone it would be unwritable, and a job that writes
        # there (javac's warm server keeps its work folder in java.io.tmpdir) would fail.
        for path in world_writable_dirs([c for c in covered if c not in _ALWAYS_PRIVATE]):
            # What was there (say, CI's venv in a temporary folder) can be bound back.
            fd = os.open(path, os.O_PATH | os.O_DIRECTORY)
            try:
                _mount("tmpfs", path, "tmpfs", MS_NOSUID | MS_NODEV, f"mode=1777,size={cfg.get('tmp_mb', 512)}m")
            except OSError as exc:
                os.close(fd)
                if path in ("/tmp", "/var/tmp", "/dev/shm"):
                    raise
                report["notes"].append(f"{path} not made private ({exc.strerror})")
                continue
            if path in _HIDDEN_FDS:  # hidden above: its handle on what was there is kept
                os.close(fd)
            else:
                _HIDDEN_FDS[path] = fd
            covered.append(path)
            _PRIVATE_DIRS.append(path)
        if root:
            # A job runs under a uid of its own, which cannot walk through a folder
            # closed to other users (mktemp's 0700, a private home): cover the highest
            # such ancestor of what must stay visible, so it is bound back below a
            # walkable tmpfs.  The job could not read that folder anyway.
            for path, _fd in keep:
                closed = _closed_ancestor(path)
                if closed and not any(_under(closed, c) for c in covered):
                    _HIDDEN_FDS[closed] = os.open(closed, os.O_PATH | os.O_DIRECTORY)
                    _mount("tmpfs", closed, "tmpfs", MS_NOSUID | MS_NODEV, "mode=111,size=1m")
                    hidden.append(closed)
                    covered.append(closed)
        for path, fd in keep:
            if any(_under(path, h) for h in covered):
                _KEPT.append(path)
                _make_mountpoint(path, directory=True)
                _mount(f"/proc/self/fd/{fd}", path, None, MS_BIND | MS_REC)
                _mount(None, path, None, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID)
            os.close(fd)
        # Hidden last, over what was bound back: this package's own tree and the
        # bundled suites (their reference answers), wherever they are installed
        # (inside the interpreter's prefix for a plain install).
        for path in cfg.get("hide_late", ()):
            if (os.path.isdir(path) and path not in _HIDDEN_FDS and not any(_under(k, path) for k, _ in keep)
                    and os.path.realpath(path) != "/"):
                fd = os.open(path, os.O_PATH | os.O_DIRECTORY)
                # Listable (mode 555): a checkout bound back below it (a bundled
                # suite's project) must stay reachable by tools that list every
                # ancestor of a path (pytest's collection); its names are public.
                try:
                    _mount("tmpfs", path, "tmpfs", MS_NOSUID | MS_NODEV, "mode=555,size=1m")
                except OSError as exc:
                    os.close(fd)
                    report["notes"].append(f"{path} not hidden ({exc.strerror})")
                    continue
                _HIDDEN_FDS[path] = fd
                _LISTABLE.append(path)
                hidden.append(path)
        report["filesystem"] = True
        report["hidden"] = hidden
        report["private_dirs"] = list(_PRIVATE_DIRS)
    except OSError as exc:
        report["notes"].append(f"paths not hidden ({exc})")
    return _uid_policy(report, cfg, root, mounted=report["filesystem"])


# Always private, whether world-writable here or not; others are found by a scan.
_ALWAYS_PRIVATE = ("/tmp", "/var/tmp", "/dev/shm", "/run/lock", "/var/lock", "/run/shm", "/dev/mqueue")
_SCAN_ROOTS = ("/", "/var", "/run", "/dev", "/srv", "/opt", "/mnt", "/media", "/home", "/usr/local", "/var/lib",
               "/var/cache", "/var/spool")
_PRIVATE_DIRS: list[str] = []  # world-writable folders covered by a tmpfs (emptied after every job)


def world_writable_dirs(covered=()) -> list[str]:
    """Folders a job with a uid of its own could write and leave behind: the
    usual ones, and any world-writable folder one or two levels below the
    scan roots (the whole tree is not walked: a scan per zygote must stay cheap).
    Resolved (``/var/lock`` is usually a link to ``/run/lock``), outside what is
    hidden already, each once."""
    found = []

    def add(path):
        real = os.path.realpath(path)
        if (os.path.isdir(real) and real not in found and real != "/" and not any(_under(real, c) for c in covered)
                and not real.startswith(("/proc/", "/sys/"))):
            found.append(real)

    for path in _ALWAYS_PRIVATE:
        add(path)
    for root in _SCAN_ROOTS:
        try:
            entries = list(os.scandir(root))
        except OSError:
            continue
        for entry in entries:
            try:
                if entry.is_dir(follow_symlinks=False) and entry.stat(follow_symlinks=False).st_mode & 0o002:
                    add(entry.path)
            except OSError:
                continue
    # A folder below one already covered needs no tmpfs of its own.
    return [p for p in found if not any(p != q and _under(p, q) for q in found)]


_LISTABLE: list[str] = []  # hiding tmpfs mounts whose folders may be listed (see isolate)


def _make_mountpoint(path: str, directory: bool) -> None:
    """Create ``path`` (and its parents) inside a hiding tmpfs, walkable but unlistable."""
    parent = os.path.dirname(path)
    if not os.path.exists(parent):
        _make_mountpoint(parent, directory=True)
    if os.path.lexists(path):
        return
    if directory:
        mode = 0o555 if any(_under(path, p) for p in _LISTABLE) else 0o111
        os.mkdir(path, mode)
        os.chmod(path, mode)
    else:
        os.close(os.open(path, os.O_CREAT | os.O_WRONLY, 0o444))


def _uid_policy(report: dict, cfg: dict, root: bool, mounted: bool) -> dict:
    if not root:
        report["notes"].append("not root: sample runs as the harness's user (can signal it)")
        return report
    prefix_readable = all(os.access(p, os.R_OK | os.X_OK) and _world_traversable(p) for p in _self_expose())
    if mounted or prefix_readable:
        report["uid"] = cfg.get("uid_base", 100000) + os.getpid()
    else:
        report["notes"].append("python installation not readable by other users and paths not hidden: uid drop off")
    return report


def _closed_ancestor(path: str) -> str | None:
    """The highest folder strictly above ``path`` that other users cannot walk
    through (no ``x`` bit for others), or None."""
    current = "/"
    for part in os.path.realpath(path).strip("/").split("/")[:-1]:
        current = os.path.join(current, part)
        try:
            if not os.stat(current).st_mode & 0o001:
                return current
        except OSError:
            return None
    return None


def _world_traversable(path: str) -> bool:
    path = os.path.realpath(path)
    while True:
        if not os.stat(path).st_mode & 0o001:
            return False
        if path == "/":
            return True
        path = os.path.dirname(path)


# ------------------------------------------------------------------- child

# ------------------------------------------------------------------ zygote

class _Relay:
    """The zygote forwarding one job's records to the harness, in order: from
    the record area (if the job has one) first, then from the pipe, whose
    bytes before the area's seal are only wake-up newlines.  Counts every
    byte against the job's ``result_bytes``."""

    OVER = "result data over the limit"

    def __init__(self, chan: Channel, fd: int, budget: int, reader: records.Reader | None,
                 watch: "Watch | None" = None):
        self.chan, self.fd, self.budget, self.reader, self.watch = chan, fd, budget, reader, watch
        self.sent = 0
        self.lines = 0  # records forwarded (newlines), for the watch
        self.piped = False  # a record came through the pipe (after the area's seal)

    def forward(self, chunk: bytes) -> bool:
        """Send what the area gained, then ``chunk`` (read from the pipe just
        before: the child seals the area before its first record on the
        pipe, so reading the area after the pipe keeps the order).  False
        once over the budget.  With a watch, each look at the records is
        also a look at the child's CPU clock (``Watch.look``)."""
        parts = []
        if self.reader is not None:
            parts.append(self.reader.take())
            # Before the seal the child writes only wake-ups on the pipe; anything
            # else is sample code writing on fd 3, dropped (never a record: its
            # place among the area's records would depend on timing).
            if self.reader.sealed:
                if not self.piped:
                    # Wake-ups written before the seal, still in the pipe: no record starts with one.
                    chunk = chunk.lstrip(b"\n")
                    self.piped = bool(chunk)
                parts.append(chunk)
        else:
            parts.append(chunk)
        if self.watch is not None:
            self.lines += sum(part.count(b"\n") for part in parts)
            for position, cpu in self.watch.look(self.lines):
                # Before the records: the harness applies it as it parses the call's record.
                self.chan.send_json(b"T", {"at": position, "cpu": round(cpu, 6)})
        return all(self._send(part) for part in parts)

    def finish(self) -> str | None:
        """After the child and everything of it are dead: forward the rest of
        the area and of the pipe.  Returns why it stopped early, if it did."""
        os.set_blocking(self.fd, False)
        while True:
            try:
                chunk = os.read(self.fd, 1 << 20)
            except BlockingIOError:
                chunk = b""
            if not self.forward(chunk):
                return self.OVER
            if not chunk:
                return None

    def _send(self, data: bytes) -> bool:
        if not data:
            return True
        self.sent += len(data)
        if self.sent > self.budget:
            return False
        self.chan.send(b"D", data)
        return True


class Watch:
    """A Python job's time, measured outside its process: the kernel's count of
    the child's CPU (its process CPU clock, every thread of it; the sample
    cannot fork, :func:`.python_child.forbid_fork`) and the zygote's clock.
    The child's own timers and figures are the sample's to rewrite (issue #50:
    a sample stopped its timers and rewrote ``t0``), so they are a first,
    fast stop and a claim; this is the bound.

    Read at every look at the records (every :data:`.records.POLL_SECONDS`
    while the child runs, and at each wake-up).  Lines: ``["ready"]`` (the
    sandbox is set up: the harness's own work before it is not budgeted),
    ``["defined"]`` (the sample's code ran), then one record per call.  From
    the first look after ``ready`` the definition may use ``startup_cpu``
    more; from the first look after ``defined`` (CPU ``c0``, ``k0`` calls
    answered by then) the calls up to the one in progress, ``k``, may use
    ``c0 + sum(allowance[k0..k])``, the allowance of a call being its limit
    times the job's margin, plus :attr:`CPU_FACTOR` and :attr:`CPU_SLACK`
    for the timer's tick and an honest record's write.  Over it, the child is
    killed and call ``k`` is a time-out (``over``).  Wall time likewise, at
    twice the child's own wall bound plus :attr:`WALL_SLACK` (a loaded
    machine must not turn the child's wall stop into a kill).

    A call seen in progress at two looks took at least the CPU between them:
    that lower bound goes to the harness (``look``'s result), which takes the
    larger of it and the child's claim.  Calls shorter than a look's interval
    are bounded only in sum (by the budget above)."""

    CPU_FACTOR, CPU_SLACK, WALL_SLACK = 1.1, 0.05, 1.0

    @classmethod
    def granted(cls, cpu: float) -> float:
        """The least CPU a call may claim when the outside clock saw ``cpu``: the
        same allowance as the budget's (an honest call's record is written
        after its own figure is taken, and a large one takes a while)."""
        return (cpu - cls.CPU_SLACK) / cls.CPU_FACTOR

    def __init__(self, pid: int, job: dict, start: float):
        lim = job["limits"]
        margin = max(float(job.get("margin") or 1.0), 1.0)
        # The process's CPU clock (Linux's clock_getcpuclockid(pid): CPUCLOCK_SCHED of the whole process).
        self.clock = ((~pid) << 3) | 2
        cpu_sum, wall_sum = [0.0], [0.0]
        for c in job["call_cpu"]:
            cpu_sum.append(cpu_sum[-1] + c * margin * self.CPU_FACTOR + self.CPU_SLACK)
            wall_sum.append(wall_sum[-1] + 2 * (c * margin * lim["wall_factor"] + 0.5) + self.WALL_SLACK)
        self.cpu_sum, self.wall_sum, self.n = cpu_sum, wall_sum, len(job["call_cpu"])
        self.define_cpu = lim["startup_cpu"] * self.CPU_FACTOR + self.CPU_SLACK
        self.define_wall = 2 * lim["startup_cpu"] * lim["wall_factor"] + self.WALL_SLACK
        self.defining: tuple[float, float] | None = None  # (cpu, wall) at the first look after "ready"
        self.calling: tuple[float, float, int] | None = None  # (cpu, wall, k0) at the first look after "defined"
        self.current: tuple[int, float, float] | None = None  # (k, cpu at the first and the last look at it)
        self.over: dict | None = None  # {"at": position (-1: the definition), "what": "cpu" | "wall", "cpu": s}

    def _cpu(self) -> float | None:
        try:
            return time.clock_gettime(self.clock)
        except OSError:  # reaped already
            return None

    def look(self, lines: int, cpu: float | None = None) -> list[tuple[int, float]]:
        """Check the budget at ``lines`` records; return (position, lower bound of
        its CPU) for a call that ended since the last look and was seen running
        at two.  ``cpu``: the child's total (once it is dead, from its rusage)."""
        alive = cpu is None
        cpu = self._cpu() if alive else cpu
        if cpu is None or lines < 1 or self.over is not None:
            return []
        wall, bounds = time.monotonic(), []
        if lines == 1:
            if self.defining is None:
                if not alive:
                    return []
                self.defining = (cpu, wall)
            c1, w1 = self.defining
            at, cpu_budget, wall_budget, running = -1, c1 + self.define_cpu, w1 + self.define_wall, cpu - c1
        else:
            k = lines - 2
            if self.calling is None:
                if not alive:
                    return []
                self.calling, self.current = (cpu, wall, k), (k, cpu, cpu)
            c0, w0, k0 = self.calling
            ck, first, last = self.current
            if k != ck:
                if alive and last > first:
                    bounds.append((ck, last - first))
                self.current = (k, cpu, cpu) if alive else (k, last, last)
            elif alive:
                self.current = (k, first, cpu)
            top = min(k, self.n - 1) + 1  # budgets up to the call in progress (all, once answered)
            k0 = min(k0, top)
            at = min(k, self.n)
            cpu_budget = c0 + self.cpu_sum[top] - self.cpu_sum[k0] + self.CPU_SLACK
            wall_budget = w0 + self.wall_sum[top] - self.wall_sum[k0] + self.WALL_SLACK
            running = cpu - self.current[1]
        if cpu > cpu_budget:
            self.over = {"at": at, "what": "cpu", "cpu": round(running, 6)}
        elif alive and wall > wall_budget:
            self.over = {"at": at, "what": "wall", "cpu": round(running, 6)}
        return bounds

    def reason(self) -> str:
        what = "CPU" if self.over["what"] == "cpu" else "wall"
        where = "defining the sample" if self.over["at"] < 0 else "a call"
        return f"{where} used more {what} time than its limit (measured outside the sample's process)"


# runner name -> "module:function" run in the forked child: fn(job, zygote, jobdir, pipes) -> never returns.
RUNNERS = {
    "python": "pytest_specbench.execution.python_child:run_child",
    "command": "pytest_specbench.execution.command:run_child",
}


class Zygote:
    def __init__(self, chan: Channel, cfg: dict, iso: dict):
        self.chan, self.cfg, self.iso = chan, cfg, iso
        # Input sets for the Python runner, by the harness's opaque handle: each a sealed memfd
        # that only the job's own child reads, after the fork (never in our own heap: a child
        # inherits our memory, and another job's inputs there tell a sample which check runs).
        self.inputs: dict[int, int] = {}
        self.uid = iso.get("uid")
        self.exposed: set[str] = set(_KEPT)  # paths bound read-only for the zygote's lifetime
        self.mountpoints: set[str] = set()
        self._runners: dict[str, Callable] = {}
        try:  # needs CONFIG_PROC_CHILDREN; without it every job gets the full scan
            self._has_children()
            self._children_listed = True
        except OSError:
            self._children_listed = False
        self.tmp_base = tempfile.mkdtemp(prefix="specbench-")
        os.chmod(self.tmp_base, 0o711)
        self.images = None  # warm.Images: the warm starts' seed (set by main where jobs may start warm)

    def serve(self) -> None:
        while True:
            msg = self.chan.recv()
            if msg is None or msg.get("op") == "exit":
                break
            op = msg["op"]
            if op == "load":
                self.inputs[msg["key"]] = self._take_inputs(msg["size"])
            elif op == "drop":
                fd = self.inputs.pop(msg["key"], None)
                if fd is not None:
                    os.close(fd)
            elif op == "run":
                try:
                    self.run(msg)
                except Exception as exc:  # noqa: BLE001 - report, keep serving
                    self.chan.send_json(b"E", {"error": f"{type(exc).__name__}: {exc}"})
        if self.images is not None:
            self.images.close()
        shutil.rmtree(self.tmp_base, ignore_errors=True)

    def _take_inputs(self, size: int) -> int:
        """The ``size`` bytes that follow a ``load`` message (a pickled input set),
        spliced from the harness's pipe into a sealed memfd: they never pass
        through this process's memory."""
        fd = os.memfd_create("specbench-inputs", os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
        left = size
        while left:
            try:
                n = os.splice(self.chan.rfd, fd, left)
            except (AttributeError, OSError):  # no splice here: copy through a buffer we then zero
                buf = bytearray(min(left, 1 << 20))
                n = os.readv(self.chan.rfd, [memoryview(buf)[:min(left, len(buf))]])
                os.write(fd, memoryview(buf)[:n])
                buf[:] = bytes(len(buf))
            if n <= 0:
                raise EOFError("the harness closed the pipe in the middle of an input set")
            left -= n
        fcntl.fcntl(fd, fcntl.F_ADD_SEALS, fcntl.F_SEAL_SEAL | fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW
                    | fcntl.F_SEAL_WRITE)
        return fd

    # ------------------------------------------------------------ exposure
    def expose(self, path: str) -> bool:
        """Bind ``path`` read-only at its own place; True if a mount was made."""
        if not self.iso.get("filesystem") or path in self.exposed:
            return False
        # The deepest covered ancestor: its fd was opened before anything below it was covered.
        base = max((h for h in _HIDDEN_FDS if _under(path, h)), key=len, default=None)
        if base is None or (os.path.exists(path) and path not in self.mountpoints):
            if not os.path.exists(path):
                raise FileNotFoundError(f"read-only path not found: {path}")
            src = path
        else:
            rel = path[len(base):].lstrip("/")
            src = f"/proc/self/fd/{_HIDDEN_FDS[base]}" + (f"/{rel}" if rel else "")
            if not os.path.exists(src):
                raise FileNotFoundError(f"read-only path not found: {path}")
            if path != base:
                _make_mountpoint(path, directory=os.path.isdir(src))
                self.mountpoints.add(path)
        _mount(src, path, None, MS_BIND | MS_REC)
        _mount(None, path, None, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV)
        return True

    def _overlay(self, jobdir: str, overlay: dict) -> list[str]:
        """Bind files of the job's directory read-only over paths (e.g. the
        checkout's copy of a file the job runs its own version of), for this job
        only.  Without a mount namespace there is nothing to do."""
        done = []
        if not self.iso.get("filesystem"):
            return done
        root = os.path.realpath(jobdir)
        for target, rel in overlay.items():
            src = os.path.realpath(os.path.join(jobdir, rel))
            if not _under(src, root) or not os.path.isfile(src) or not os.path.isfile(target):
                raise ValueError(f"overlay {rel!r} over {target!r}: both must be files, the first in the job")
            _mount(src, target, None, MS_BIND)
            done.append(target)
            _mount(None, target, None, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV)
        return done

    def unexpose(self, path: str) -> None:
        _libc.umount2(path.encode(), MNT_DETACH)

    # ----------------------------------------------------------------- jobs
    def runner(self, name: str) -> Callable:
        if name not in self._runners:
            module, _, attr = RUNNERS[name].partition(":")
            __import__(module)
            self._runners[name] = getattr(sys.modules[module], attr)
        return self._runners[name]

    def run(self, job: dict) -> None:
        run_child = self.runner(job.get("runner", "python"))
        for path in job.get("keep_readonly", ()):
            if self.expose(path):
                self.exposed.add(path)
        bound = [p for p in job.get("readonly", ()) if self.expose(p)]
        lim = job["limits"]
        r_res, w_res = os.pipe()
        widen_pipe(w_res)
        # The child's records in shared memory (see .records): a fresh mapping per job, so
        # nothing of an earlier job's records is there to read (issue #50: a reused area kept them).
        area = records.create() if job.get("record_area") else None
        captures = [os.pipe() for _ in range(2 if job.get("split_output") else 1)]
        r_ok, w_ok = os.pipe2(os.O_CLOEXEC)  # setup failures (closed unwritten by a successful exec)
        jobdir = tempfile.mkdtemp(dir=self.tmp_base)
        files = job.get("files")
        for rel, content in (files or {}).items():
            target = os.path.join(jobdir, rel)
            if not _under(os.path.realpath(target), os.path.realpath(jobdir)):
                raise ValueError(f"job file outside the job's directory: {rel!r}")
            os.makedirs(os.path.dirname(target), exist_ok=True)
            with open(target, "wb") as fh:
                fh.write(content)
        if self.uid is not None:
            os.chown(jobdir, self.uid, self.uid)
            if files:
                for dirpath, dirnames, filenames in os.walk(jobdir):
                    for name in [os.path.join(dirpath, n) for n in dirnames + filenames]:
                        os.chown(name, self.uid, self.uid)
        os.chmod(jobdir, 0o700)
        overlaid = self._overlay(jobdir, job.get("overlay") or {})
        usage0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.monotonic()
        pid, helpers = self._start_warm(job, jobdir, w_res, w_ok, [w for _, w in captures]), []
        if pid is not None:
            pid, helpers = pid[0], [h for h in pid[1:] if h is not None]
        else:
            pid = os.fork()
        if pid == 0:
            os.close(r_res)
            os.close(r_ok)
            for r, _ in captures:
                os.close(r)
            try:
                run_child(job, self, jobdir, {"result": w_res, "outputs": [w for _, w in captures], "status": w_ok,
                                              "area": area, "inputs": self.inputs.get(job.get("key"))})
            finally:
                os._exit(121)  # runners never return; an exception must not return into the zygote's loop
        os.close(w_res)
        os.close(w_ok)
        for _, w in captures:
            os.close(w)
        outs = [r for r, _ in captures]
        watch = Watch(pid, job, start) if job.get("call_cpu") is not None else None
        relay = _Relay(self.chan, r_res, lim["result_bytes"], records.Reader(area) if area is not None else None,
                       watch)
        status, killed, kept, dropped = self.supervise(pid, relay, outs, lim, start + lim["job_wall"])
        status = self.reap(pid, status, helpers)
        if killed in (None, "job time budget exceeded"):
            # Whatever the dead child committed and nobody forwarded yet: the
            # answers of the calls before a death (or the budget) still count.
            killed = relay.finish() or killed
        usage = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (usage.ru_utime + usage.ru_stime) - (usage0.ru_utime + usage0.ru_stime)
        if watch is not None and killed is None:
            watch.look(relay.lines, cpu)  # the last records against the kernel's final count
            if watch.over is not None:
                killed = watch.reason()
        if area is not None:
            area.close()
        setup_error = os.read(r_ok, 4096).decode("utf-8", "replace")  # everything of the job is dead: no block
        os.close(r_ok)
        os.close(r_res)
        for fd in outs:
            os.close(fd)
        files = self._collect(jobdir, job.get("collect", ()), lim["output_bytes"])
        shutil.rmtree(jobdir, ignore_errors=True)
        for path in overlaid:
            self.unexpose(path)
        for path in bound:
            self.unexpose(path)
        self._clean_tmp()
        self.chan.send_json(b"X", {
            "exit_code": os.WEXITSTATUS(status) if os.WIFEXITED(status) else None,
            "signal": os.WTERMSIG(status) if os.WIFSIGNALED(status) else None,
            "killed": killed, "wall": time.monotonic() - start, "setup_error": setup_error or None,
            "outputs": [k.decode("utf-8", "replace") for k in kept], "dropped": dropped, "pid": pid,
            "cpu": cpu, "files": files, "over": watch.over if watch is not None else None,
        })

    def _start_warm(self, job: dict, jobdir: str, w_res: int, w_ok: int,
                    outs: list[int]) -> tuple[int, int | None] | None:
        """(main pid, helper pid or None) of a job started from a warm image (:mod:`.warm`), or
        None: the job is exec'd (it asked for no warm start, jobs get no uid of their
        own here, or no image could be made)."""
        if not job.get("warm") or self.images is None or self.uid is None or job.get("runner") != "command":
            return None
        from . import warm

        try:
            return self.images.start(job, jobdir, self.uid, {"result": w_res, "status": w_ok, "outputs": outs})
        except warm.WarmUnavailable:
            return None

    def supervise(self, pid: int, relay: _Relay, outs: list[int], lim: dict, deadline: float):
        """Forward the child's records, keep its output up to the cap, and stop
        it at the deadline, on the harness's word or when its records exceed
        the limit.  Returns (wait status or None, why it was stopped, kept
        outputs, dropped byte count)."""
        kept = {fd: bytearray() for fd in outs}
        dropped = 0
        r_res = relay.fd
        open_fds = {r_res, *outs}
        status, killed, exited_at = None, None, None
        # With a record area, look at it now and then even when the pipe is
        # quiet: a child stuck in a call has not woken us for its last records.
        idle = records.POLL_SECONDS if relay.reader is not None else 0.5
        while open_fds:
            now = time.monotonic()
            if now >= deadline:
                killed = killed or "job time budget exceeded"
                break
            if exited_at is not None and now - exited_at > 0.2:
                break  # a descendant holds the pipes open; it is killed by reap()
            ready, _, _ = select.select(list(open_fds) + [self.chan.rfd], [], [],
                                        min(0.05 if status else idle, deadline - now))
            for fd in ready:
                if fd == self.chan.rfd:
                    msg = self.chan.recv()
                    if msg is None or msg.get("op") == "kill":
                        killed = "stopped by the harness"
                        open_fds.clear()
                        if msg is None:
                            self.reap(pid)
                            sys.exit(0)
                    continue
                chunk = os.read(fd, 1 << 20)
                if not chunk:
                    open_fds.discard(fd)
                    continue
                if fd == r_res:
                    if not relay.forward(chunk):
                        killed = relay.OVER
                        open_fds.clear()
                        break
                else:
                    buf = kept[fd]
                    room = max(lim["output_bytes"] - len(buf), 0)
                    buf += chunk[:room]
                    dropped += max(len(chunk) - room, 0)
            if killed is None and not relay.forward(b""):
                killed = relay.OVER
                break
            if relay.watch is not None and relay.watch.over is not None:
                killed = relay.watch.reason()
                break
            if status is None:
                done, st = os.waitpid(pid, os.WNOHANG)
                if done:
                    status, exited_at = st, time.monotonic()
        return status, killed, [kept[fd] for fd in outs], dropped

    @staticmethod
    def _collect(jobdir: str, names, cap: int) -> dict[str, str]:
        """Files the job asked to read back (base64, capped), never following a
        link out of the job's directory (the child is dead by now)."""
        files = {}
        root = os.path.realpath(jobdir)
        for name in names:
            path = os.path.join(root, name)
            if not _under(os.path.realpath(path), root) or os.path.realpath(path) == root:
                continue
            try:
                fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
            except OSError:
                continue
            try:
                if not os.path.isfile(f"/proc/self/fd/{fd}"):
                    continue
                files[name] = base64.b64encode(os.read(fd, cap)).decode()
            finally:
                os.close(fd)
        return files

    def reap(self, pid: int, status: int | None = None, helpers: list[int] = ()) -> int:
        """Kill the child, its group and everything it left, and reap them all;
        return the child's wait status.

        We are a subreaper, so orphans of the child are re-parented here, even
        those that left its process group with setsid: once the child is
        reaped, an empty children list means nothing of the job is alive (the
        common case, which then costs one small /proc read).  Otherwise the
        /proc scan finds every live process below us, and when the child has
        a uid of its own a ``kill(-1)`` as that uid catches anything the scan
        raced with.
        """
        try:
            os.killpg(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        if status is None:
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            _, status = os.waitpid(pid, 0)
        for helper in helpers:  # a warm job's second process (our child too): the job is over
            try:
                os.kill(helper, signal.SIGKILL)
                os.waitpid(helper, 0)
            except (ProcessLookupError, ChildProcessError):
                pass
        if self._children_listed and not self._has_children():
            return status
        for _ in range(50):  # a fork bomb may race the scan; a few rounds win
            if not self._kill_descendants():
                break
        self._reap_orphans()
        if self.uid is not None:
            reaper = os.fork()
            if reaper == 0:
                try:
                    os.setgid(self.uid)
                    os.setuid(self.uid)
                    # kill(-1) reports success whenever any other process exists
                    # (EPERM on others is not counted), so it cannot tell us when
                    # the uid is empty: a fixed number of rounds, each of which
                    # also reaches processes forked during the previous one.
                    for _ in range(5):
                        os.kill(-1, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                except BaseException:  # noqa: BLE001
                    os._exit(1)
                os._exit(0)
            os.waitpid(reaper, 0)
            self._reap_orphans()
        return status

    def _kept(self) -> set[int]:
        """Our children that are no job's: the warm starts' seed and images."""
        return self.images.pids if getattr(self, "images", None) is not None else set()

    def _has_children(self) -> bool:
        """Does this process have any child of a job, alive or zombie?  (Children hang
        off the thread that forked them, or that adopted them; the zygote has
        one thread, but read them all.)"""
        kept = self._kept()
        for tid in os.listdir("/proc/self/task"):
            with open(f"/proc/self/task/{tid}/children", "rb") as fh:
                if set(map(int, fh.read().split())) - kept:
                    return True
        return False

    def _kill_descendants(self) -> int:
        """SIGKILL every live process below this one; return how many were found."""
        children: dict[int, list[int]] = {}
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                with open(f"/proc/{entry}/stat", "rb") as fh:
                    fields = fh.read().rsplit(b")", 1)[1].split()
            except (OSError, IndexError):
                continue
            if fields and fields[0] != b"Z":  # a zombie is dead already; it is reaped below
                children.setdefault(int(fields[1]), []).append(int(entry))
        kept = self._kept()
        found, todo = 0, [p for p in children.get(os.getpid(), ()) if p not in kept]
        while todo:
            victim = todo.pop()
            todo.extend(children.get(victim, ()))
            found += 1
            try:
                os.kill(victim, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        return found

    def _reap_orphans(self, timeout: float = 2.0) -> None:
        """Collect whatever was re-parented to us (we are a subreaper), waiting
        briefly for processes just killed, so that none outlives its job."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                done, _ = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if done in self._kept():  # a seed or image that died: no more warm starts from it
                self.images.lost(done)
            elif not done:
                if time.monotonic() > deadline or (self._kept() and not self._has_children()):
                    break
                time.sleep(0.002)

    def _clean_tmp(self) -> None:
        if not self.iso.get("filesystem"):
            return
        for base in _PRIVATE_DIRS:
            try:
                entries = os.listdir(base)
            except OSError:
                continue
            for name in entries:
                path = os.path.join(base, name)
                if path == self.tmp_base or any(_under(m, path) for m in self.exposed):
                    continue  # (a read-only path bound under /tmp: tests' state folders)
                if os.path.isdir(path) and not os.path.islink(path):
                    shutil.rmtree(path, ignore_errors=True)
                else:
                    try:
                        os.unlink(path)
                    except OSError:
                        pass


def _describe_apart(path: list[str]) -> dict:
    """:func:`.environments.describe_here`, in a forked process: it imports
    ``importlib.metadata``, whose classes (a str subclass with a case-folding
    ``__hash__``) would otherwise live in every sample's process, where the
    value hash (``wire.value_hash``) must then check every string's type."""
    rfd, wfd = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the forked describer
        try:
            os.close(rfd)
            from .environments import describe_here

            data = json.dumps(describe_here(path)).encode()
            while data:
                data = data[os.write(wfd, data):]
        finally:
            os._exit(0)
    os.close(wfd)
    chunks = []
    while True:
        chunk = os.read(rfd, 1 << 16)
        if not chunk:
            break
        chunks.append(chunk)
    os.close(rfd)
    os.waitpid(pid, 0)
    try:
        return json.loads(b"".join(chunks))
    except ValueError:
        return {}


def _can_unshare_ipc() -> bool:
    """Can a forked child enter an IPC namespace of its own here?  (Asked once, in a child.)"""
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the probe
        os._exit(0 if _libc.unshare(CLONE_NEWIPC) == 0 else 1)
    _, status = os.waitpid(pid, 0)
    return os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0


def main(preload: tuple[str, ...] = ()) -> None:
    chan = Channel()
    # Our own stdout is the protocol channel: keep stray prints away from it.
    chan.wfd = os.dup(1)
    widen_pipe(chan.wfd)
    os.dup2(os.open(os.devnull, os.O_WRONLY), 1)
    cfg = chan.recv()
    if cfg is None:
        return
    from . import warm  # imported while the package is still visible, as the runners are

    runners = {}
    for name, target in RUNNERS.items():  # imported while the package is still visible
        module, _, attr = target.partition(":")
        __import__(module)
        runners[name] = getattr(sys.modules[module], attr)
    if cfg.get("sys_path") is not None:
        sys.path[:] = cfg["sys_path"]
    environment = None
    if cfg.get("describe"):  # what samples can import, for the report's manifest
        environment = _describe_apart(sys.path)
    iso = isolate(cfg)
    if iso.get("network") and _can_unshare_ipc():  # one IPC namespace per job (enter_child)
        JOB_IPC_NAMESPACE[0] = True
        iso["ipc"] = "per job"
    else:
        iso.setdefault("notes", []).append("no IPC namespace per job: SysV and POSIX IPC objects may outlive a job")
    _libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    for name in cfg.get("preload", preload):
        try:
            __import__(name)
        except ImportError:
            pass
    zygote = Zygote(chan, cfg, iso)
    if cfg.get("warm") and iso.get("uid") is not None and warm.supported():
        zygote.images = warm.Images(ipc=JOB_IPC_NAMESPACE[0])  # its seed starts at the first warm job
    zygote._runners.update(runners)
    if environment is not None:
        iso["environment"] = environment
    chan.send_json(b"R", iso)
    zygote.serve()


# ------------------------------------------------------------- harness side

def own_tree() -> list[str]:
    """This package's folder and the bundled suites (``benchmarks/`` beside it in
    a checkout): hidden in every job, wherever pytest runs from."""
    package = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))
    paths = [package]
    bundled = os.path.join(os.path.dirname(package), "benchmarks")
    # In a checkout (pyproject.toml beside the package) the suites' source folder;
    # installed, they are inside the package already.
    if os.path.isdir(bundled) and os.path.isfile(os.path.join(os.path.dirname(package), "pyproject.toml")):
        paths.append(bundled)
    return paths


def _jvm_store() -> list[str]:
    """The shared store of the JVM's trusted build products (``jvm_store.py``), made now
    if missing so that it is hidden from every job from the start (a JVM job gets its
    entries bound read-only)."""
    from . import jvm_store

    root = jvm_store.shared_root()
    if root is None:
        return []
    jvm_store.opened(root)
    return [os.path.realpath(root)]


class SandboxClient:
    """Harness side of one zygote: start it, send jobs, read frames.  Not
    thread-safe; one per executor per process."""

    def __init__(self, limits: Any, hide=(), isolate: bool = True, python: str | None = None):
        self.limits = limits
        self.hide = [os.path.realpath(p) for p in hide if p]
        self.isolate = isolate
        self.python = python or sys.executable
        self._proc: subprocess.Popen | None = None
        self._launched = False  # launched (start_early), its ready frame not read yet
        self.isolation: dict[str, Any] = {}

    def _zygote_cfg(self) -> dict:
        home = os.path.realpath(os.path.expanduser("~"))
        return {"isolate": self.isolate, "warm": bool(getattr(self, "warm", False)), "hide": sorted(set(self.hide + [home] + _jvm_store())), "expose": [],
                "hide_late": own_tree(), "tmp_mb": self.limits.tmp_mb}

    def _start(self) -> None:
        self._launch()
        self._handshake()

    def _launch(self) -> None:
        """Start the zygote's process and send its configuration, without waiting for it."""
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C.UTF-8"}
        # The zygote imports this package by name; make it importable however we were installed.
        env["PYTHONPATH"] = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        env.update(self._zygote_env())
        self._proc = subprocess.Popen(
            [self.python, "-s", "-m", "pytest_specbench.execution._zygote"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            env=env, cwd="/", close_fds=True, start_new_session=True,
        )
        self._on_start()
        self._launched = True
        self._send(self._zygote_cfg())

    def _handshake(self) -> None:
        """Wait for the launched zygote's ready frame (what its isolation came to)."""
        self._launched = False
        kind, payload = self._recv_frame(timeout=30)
        if kind != b"R":
            raise OSError(f"sandbox did not start: {payload[:200]!r}")
        self.isolation = json.loads(payload)

    def _on_start(self) -> None:
        """Hook: forget per-zygote state (e.g. loaded inputs)."""

    def _zygote_env(self) -> dict[str, str]:
        """Hook: environment variables of the zygote's interpreter (inherited by its children)."""
        return {}

    def start_early(self) -> None:
        """Launch the zygote now and return at once: its start (namespaces, mounts, its
        preloads) runs beside whatever this process does next (an xdist worker's
        collection), and the first job's :meth:`ensure_started` only reads its ready
        frame.  A launch that fails is forgotten here: that first call starts it again
        and says why (an E of that item, as without the early start)."""
        if self._proc is not None:
            return
        try:
            self._launch()
        except (OSError, EOFError, TimeoutError):
            self.close()

    def ensure_started(self) -> dict[str, Any]:
        from ..errors import InfrastructureError

        try:
            if self._launched and self._proc is not None:
                self._handshake()  # launched by start_early: its ready frame (or why it died)
            elif self._proc is None or self._proc.poll() is not None:
                self._start()
        except (OSError, EOFError, TimeoutError) as exc:
            self.close()
            raise InfrastructureError(f"sandbox could not start: {exc}") from None
        return self.isolation

    def close(self) -> None:
        proc, self._proc, self._launched = self._proc, None, False
        if proc is None:
            return
        try:
            if proc.poll() is None:
                self._send_to(proc, {"op": "exit"})
                proc.wait(timeout=5)
        except (OSError, subprocess.TimeoutExpired):
            proc.kill()
            proc.wait()
        finally:
            for f in (proc.stdin, proc.stdout):
                try:
                    f.close()
                except OSError:
                    pass

    def _send(self, obj: Any, raw: bytes = b"") -> None:
        """A message, and ``raw`` bytes after it that the message announces (an input set)."""
        self._send_to(self._proc, obj, raw)

    @staticmethod
    def _send_to(proc, obj: Any, raw: bytes = b"") -> None:
        body = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
        proc.stdin.write(_LEN.pack(len(body)) + body)
        if raw:
            proc.stdin.write(raw)
        proc.stdin.flush()

    def _read_exact(self, n: int, deadline: float) -> bytes:
        fd = self._proc.stdout.fileno()
        chunks, got = [], 0
        while got < n:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                raise TimeoutError("sandbox zygote stopped answering")
            chunk = os.read(fd, n - got)
            if not chunk:
                raise EOFError("sandbox zygote exited")
            chunks.append(chunk)
            got += len(chunk)
        return b"".join(chunks)

    def _recv_frame(self, timeout: float) -> tuple[bytes, bytes]:
        deadline = time.monotonic() + timeout
        kind, length = _FRAME.unpack(self._read_exact(_FRAME.size, deadline))
        return bytes([kind]), self._read_exact(length, deadline)
