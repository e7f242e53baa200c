"""Sandbox zygote: a clean process that forks one isolated child per job.

Started by :class:`pytest_specbench.execution.python.PythonExecutor` as
``python -I -m pytest_specbench.execution._zygote``.  It never runs sample code
itself; it holds the *inputs* of recently used tasks (never expected outputs,
which stay in the harness), so a job costs one ``fork`` instead of an
interpreter start.  Why a separate process at all: a child forked from the
pytest process would inherit xdist's channels and the expected outputs.

Isolation set up once, here, when the OS allows it (see ``_isolate``): a new
network namespace (loopback down) and a mount namespace in which the project,
the data, the caches and $HOME are hidden under empty tmpfs mounts (the Python
installation is bound back read-only) and /tmp is a fresh tmpfs.  Per job, in
the child: a new session (process group), rlimits (CPU, address space,
processes, file size, no core), stdin on /dev/null, stdout/stderr into a capped
pipe, a fresh empty working directory, an empty environment, and, as root, a
uid of its own (so it can signal or write nothing of ours, and every process it
leaves behind can be killed by uid).

Protocol.  Harness -> zygote: 4-byte big-endian length + pickle (the harness
is trusted).  Zygote -> harness: 1-byte kind + 4-byte length + payload, where
``D`` carries raw bytes written by the child (decoded by the harness with the
plain-data codec, never unpickled), and ``R``/``X``/``E`` carry JSON written by
the zygote itself.  Child -> zygote: JSON lines on fd 3, one per call:
``[i, "ok", value, cpu_s]``, ``[i, "raise", [type, is_assertion, is_explicit_value_or_type_error, message], cpu_s]``, ``[i, "timeout", null, cpu_s]``,
``["load", "error", message]`` and finally ``["done"]``; before any of them,
``["ready"]`` once the sandbox is set up (or ``["load", "setup", message]`` if
that failed).  Sample code can write to fd 3 too, so the harness trusts only
what a sample could have said anyway: one record per call, in call order.
"""
from __future__ import annotations

import ctypes
import dis
import fcntl
import json
import os
import pickle
import resource
import select
import shutil
import signal
import struct
import sys
import tempfile
import time

from pytest_specbench.execution import wire

_LEN = struct.Struct(">I")
_FRAME = struct.Struct(">BI")

CLONE_NEWNS, CLONE_NEWUSER, CLONE_NEWNET = 0x00020000, 0x10000000, 0x40000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 1, 2, 4, 32, 4096, 16384, 1 << 18
PR_SET_PDEATHSIG, PR_SET_NO_NEW_PRIVS, PR_SET_CHILD_SUBREAPER = 1, 38, 36
F_SETPIPE_SZ = getattr(fcntl, "F_SETPIPE_SZ", 1031)

# Modules most samples import: loading them once here makes every fork cheaper.
_PRELOAD = ("math", "re", "collections", "itertools", "functools", "heapq", "bisect", "string",
            "typing", "hashlib", "statistics", "fractions", "decimal", "random", "operator",
            "copy", "datetime", "json", "cmath", "array", "textwrap", "unicodedata")

_libc = ctypes.CDLL(None, use_errno=True)


def _check(rc: int, what: str) -> None:
    if rc != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def _mount(src, target, fstype, flags, data=None) -> None:
    enc = lambda s: s.encode() if isinstance(s, str) else s  # noqa: E731
    _check(_libc.mount(enc(src), enc(target), enc(fstype), ctypes.c_ulong(flags), enc(data)), f"mount {target}")


def _widen_pipe(fd: int) -> None:
    """Give a pipe 1 MiB of buffer instead of 64 KiB: large outputs then cross it
    in a sixteenth of the system calls and context switches."""
    try:
        fcntl.fcntl(fd, F_SETPIPE_SZ, 1 << 20)
    except OSError:
        pass  # over /proc/sys/fs/pipe-max-size: the default works, more slowly


class Channel:
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

def _isolate(cfg: dict) -> dict:
    """Enter namespaces and hide paths; return what is in force (for the report)."""
    report = {"network": False, "filesystem": False, "uid": None, "notes": []}
    if not cfg.get("isolate", True):
        report["notes"].append("isolation disabled by configuration")
        return report
    root = os.geteuid() == 0
    flags = CLONE_NEWNS | CLONE_NEWNET
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
    try:
        _mount(None, "/", None, MS_REC | MS_PRIVATE)
        # Keep handles on what must stay visible before covering its ancestors.
        keep = []
        for path in cfg.get("expose", ()):
            if os.path.isdir(path):
                keep.append((path, os.open(path, os.O_PATH | os.O_DIRECTORY)))
        hidden = []
        for path in cfg.get("hide", ()):
            if os.path.isdir(path) and os.path.realpath(path) != "/":
                _mount("tmpfs", path, "tmpfs", MS_NOSUID | MS_NODEV, "mode=755,size=1m")
                hidden.append(path)
        for path in ("/tmp", "/var/tmp", "/dev/shm"):
            if os.path.isdir(path):
                _mount("tmpfs", path, "tmpfs", MS_NOSUID | MS_NODEV, f"mode=1777,size={cfg.get('tmp_mb', 512)}m")
        for path, fd in keep:
            if any(path == h or path.startswith(h.rstrip("/") + "/") for h in hidden):
                os.makedirs(path, exist_ok=True)
                _mount(f"/proc/self/fd/{fd}", path, None, MS_BIND | MS_REC)
                _mount(None, path, None, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID)
            os.close(fd)
        report["filesystem"] = True
        report["hidden"] = hidden
    except OSError as exc:
        report["notes"].append(f"paths not hidden ({exc})")
    return _uid_policy(report, cfg, root, mounted=report["filesystem"])


def _uid_policy(report: dict, cfg: dict, root: bool, mounted: bool) -> dict:
    if not root:
        report["notes"].append("not root: sample runs as the harness's user (can signal it)")
        return report
    prefix_readable = all(os.access(p, os.R_OK | os.X_OK) and _world_traversable(p) for p in cfg.get("expose", ()))
    if mounted or prefix_readable:
        report["uid"] = cfg.get("uid_base", 100000) + os.getpid()
    else:
        report["notes"].append("python installation not readable by other users and paths not hidden: uid drop off")
    return report


def _world_traversable(path: str) -> bool:
    path = os.path.realpath(path)
    while True:
        if not os.stat(path).st_mode & 0o001:
            return False
        if path == "/":
            return True
        path = os.path.dirname(path)


# ------------------------------------------------------------------- child

_RAISE_VARARGS = dis.opmap["RAISE_VARARGS"]


def _raised_by_statement(exc: BaseException) -> bool:
    """Was ``exc`` raised by a ``raise`` statement (not by an operation that failed)?"""
    tb = exc.__traceback__
    if tb is None:
        return False
    while tb.tb_next is not None:
        tb = tb.tb_next
    code = tb.tb_frame.f_code.co_code
    return 0 <= tb.tb_lasti < len(code) and code[tb.tb_lasti] == _RAISE_VARARGS


class _CallTimeout(BaseException):
    """Raised in the child by the per-call timers."""


def _child(job: dict, calls, w_res: int, w_out: int, jobdir: str, uid) -> None:
    """Runs in the forked child; never returns."""
    write, exit_ = os.write, os._exit  # bound before sample code can touch os
    try:
        os.setsid()
        null = os.open("/dev/null", os.O_RDONLY)
        os.dup2(null, 0)
        os.dup2(w_out, 1)
        os.dup2(w_out, 2)
        os.dup2(w_res, 3)
        os.closerange(4, 1 << 16)
        os.chdir(jobdir)
        os.environ.clear()
        os.environ.update({"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": jobdir, "TMPDIR": jobdir,
                           "LANG": "C.UTF-8", "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1",
                           "MKL_NUM_THREADS": "1"})
        lim = job["limits"]
        cpu_total = int(sum(job["call_cpu"]) + lim["startup_cpu"]) + 1
        resource.setrlimit(resource.RLIMIT_CPU, (cpu_total, cpu_total + 1))
        mem = lim["memory_mb"] << 20
        resource.setrlimit(resource.RLIMIT_AS, (mem, mem))
        resource.setrlimit(resource.RLIMIT_FSIZE, (lim["file_bytes"], lim["file_bytes"]))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        if uid is not None:
            resource.setrlimit(resource.RLIMIT_NPROC, (lim["processes"], lim["processes"]))
            os.setgroups([])
            os.setgid(uid)
            os.setuid(uid)
        _libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
        _libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        sys.setrecursionlimit(max(sys.getrecursionlimit(), 3000))
    except BaseException as exc:  # noqa: BLE001
        write(3, (json.dumps(["load", "setup", f"sandbox setup failed: {exc!r}"]) + "\n").encode())
        exit_(121)
    # Written before any sample code runs, so the harness can tell a sandbox that
    # failed to set up (its error) from a sample forging that record (its failure).
    write(3, b'["ready"]\n')

    # Everything below may meet hostile code: keep our own references.
    real_assertion, real_value, real_type = AssertionError, ValueError, TypeError
    isinstance_, type_, zip_ = isinstance, type, zip  # a sample may replace builtins
    dumps, process_time, setitimer = wire.dumps, time.process_time, signal.setitimer
    itimer_prof, itimer_real, jdumps = signal.ITIMER_PROF, signal.ITIMER_REAL, json.dumps
    memoryview_ = memoryview

    def send(data: bytes) -> None:
        view = memoryview_(data)  # slicing a view copies nothing; slicing bytes copied the rest each time
        while view:
            view = view[write(3, view):]

    def emit(record) -> None:
        send((jdumps(record) + "\n").encode())

    # The timers raise only while armed, so a signal that arrives just as a call
    # ends cannot escape into the harness's own code; they repeat (every 50 ms)
    # so that a sample swallowing one timeout gets another.
    armed = [False]

    def on_timer(signum, frame):
        if armed[0]:
            raise _CallTimeout()

    def arm(cpu: float, wall: float) -> None:
        armed[0] = True
        setitimer(itimer_prof, cpu, 0.05)
        setitimer(itimer_real, wall, 0.05)

    def disarm() -> None:
        armed[0] = False
        setitimer(itimer_prof, 0)
        setitimer(itimer_real, 0)

    signal.signal(signal.SIGPROF, on_timer)
    signal.signal(signal.SIGALRM, on_timer)
    namespace = {"__name__": "__sample__", "__builtins__": __builtins__}
    try:
        try:
            arm(lim["startup_cpu"], lim["startup_cpu"] * 3)
            # dont_inherit: this module's own ``from __future__ import annotations``
            # must not leak into the sample (its annotations would go unevaluated,
            # and ``-> List[str]`` without the import would pass where Python fails).
            exec(compile(job["code"], "<sample>", "exec", dont_inherit=True), namespace)  # noqa: S102 - the sandboxed child
        finally:
            disarm()
        fn = namespace.get(job["entry_point"])
        if not callable(fn):
            emit(["load", "error", f"entry point {job['entry_point']!r} not defined"])
            exit_(0)
    except _CallTimeout:
        emit(["load", "error", f"defining the sample took over {lim['startup_cpu']} s"])
        exit_(0)
    except BaseException as exc:  # noqa: BLE001
        emit(["load", "error", f"{type_(exc).__name__}: {str(exc)[:300]}"])
        exit_(0)

    # A long string result may be sent as its digest (see PythonExecutor.run).
    digest_over = job.get("digest_strings_over")
    str_, string_digest = str, wire.string_digest
    for i, cpu_limit in zip_(job["indices"], job["call_cpu"]):
        args, kwargs = calls[i]
        t0 = process_time()
        encoded = unserializable = None
        try:
            try:
                arm(cpu_limit, cpu_limit * lim["wall_factor"] + 0.5)
                out = fn(*args, **kwargs)
                try:
                    if digest_over is not None and type_(out) is str_ and len(out) > digest_over:
                        encoded = jdumps([string_digest(out), len(out), out[:100]])
                        status = "okstr"
                    else:
                        encoded = dumps(out)  # still timed: a hostile __repr__ may loop
                        status = "ok"
                except _CallTimeout:
                    raise
                except BaseException as exc:  # noqa: BLE001 - cycles, hostile __repr__
                    unserializable = type_(exc).__name__
            finally:
                disarm()
        except _CallTimeout:
            emit([i, "timeout", None, process_time() - t0])
            continue
        except BaseException as exc:  # noqa: BLE001
            spent = process_time() - t0
            try:
                info = [type_(exc).__name__, isinstance_(exc, real_assertion),
                        isinstance_(exc, (real_value, real_type)) and _raised_by_statement(exc), str(exc)[:200]]
            except BaseException:  # noqa: BLE001
                info = ["?", False, False, ""]
            emit([i, "raise", info, spent])
            continue
        spent = process_time() - t0
        if spent > cpu_limit:  # the sample swallowed the timer's exception
            emit([i, "timeout", None, spent])
        elif unserializable is not None:
            emit([i, "raise", ["UnserializableOutput", False, False, unserializable], spent])
        else:
            send(f'[{i},"{status}",{encoded},{spent!r}]\n'.encode())
    emit(["done"])
    exit_(0)


# ------------------------------------------------------------------ zygote

class Zygote:
    def __init__(self, chan: Channel, cfg: dict, iso: dict):
        self.chan, self.cfg, self.iso = chan, cfg, iso
        self.inputs: dict[str, list] = {}
        self.uid = iso.get("uid")
        try:  # needs CONFIG_PROC_CHILDREN; without it every job gets the full scan
            self._has_children()
            self._children_listed = True
        except OSError:
            self._children_listed = False
        self.tmp_base = tempfile.mkdtemp(prefix="specbench-")
        os.chmod(self.tmp_base, 0o711)

    def serve(self) -> None:
        while True:
            msg = self.chan.recv()
            if msg is None or msg.get("op") == "exit":
                break
            op = msg["op"]
            if op == "load":
                self.inputs[msg["key"]] = msg["calls"]
            elif op == "drop":
                self.inputs.pop(msg["key"], None)
            elif op == "run":
                try:
                    self.run(msg)
                except Exception as exc:  # noqa: BLE001 - report, keep serving
                    self.chan.send_json(b"E", {"error": f"{type(exc).__name__}: {exc}"})
        shutil.rmtree(self.tmp_base, ignore_errors=True)

    def run(self, job: dict) -> None:
        calls = self.inputs[job["key"]] if job.get("key") else job["calls"]
        lim = job["limits"]
        r_res, w_res = os.pipe()
        _widen_pipe(w_res)
        r_out, w_out = os.pipe()
        jobdir = tempfile.mkdtemp(dir=self.tmp_base)
        if self.uid is not None:
            os.chown(jobdir, self.uid, self.uid)
        os.chmod(jobdir, 0o700)
        start = time.monotonic()
        pid = os.fork()
        if pid == 0:
            os.close(r_res)
            os.close(r_out)
            _child(job, calls, w_res, w_out, jobdir, self.uid)
        os.close(w_res)
        os.close(w_out)
        deadline = start + lim["job_wall"]
        out_kept, out_dropped, res_bytes = bytearray(), 0, 0
        open_fds = {r_res, r_out}
        status, killed, exited_at = None, None, None
        while open_fds:
            now = time.monotonic()
            if now >= deadline:
                killed = killed or "job time budget exceeded"
                break
            if exited_at is not None and now - exited_at > 0.2:
                break  # a descendant holds the pipes open; it is killed below
            ready, _, _ = select.select(list(open_fds) + [self.chan.rfd], [], [], min(0.05 if status else 0.5, deadline - now))
            for fd in ready:
                if fd == self.chan.rfd:
                    msg = self.chan.recv()
                    if msg is None or msg.get("op") == "kill":
                        killed = "stopped by the harness"
                        open_fds.clear()
                        if msg is None:
                            self._kill(pid)
                            sys.exit(0)
                    continue
                chunk = os.read(fd, 1 << 20)
                if not chunk:
                    open_fds.discard(fd)
                    continue
                if fd == r_res:
                    res_bytes += len(chunk)
                    if res_bytes > lim["result_bytes"]:
                        killed = "result data over the limit"
                        open_fds.clear()
                        break
                    self.chan.send(b"D", chunk)
                else:
                    room = lim["output_bytes"] - len(out_kept)
                    out_kept += chunk[:max(room, 0)]
                    out_dropped += max(len(chunk) - max(room, 0), 0)
            if status is None:
                done, st = os.waitpid(pid, os.WNOHANG)
                if done:
                    status, exited_at = st, time.monotonic()
        status = self._kill(pid, status)
        os.close(r_res)
        os.close(r_out)
        shutil.rmtree(jobdir, ignore_errors=True)
        self._clean_tmp()
        usage = resource.getrusage(resource.RUSAGE_CHILDREN)
        self.chan.send_json(b"X", {
            "exit_code": os.WEXITSTATUS(status) if os.WIFEXITED(status) else None,
            "signal": os.WTERMSIG(status) if os.WIFSIGNALED(status) else None,
            "killed": killed, "wall": time.monotonic() - start,
            "output": out_kept.decode("utf-8", "replace"), "output_dropped": out_dropped, "pid": pid,
            "children_cpu": usage.ru_utime + usage.ru_stime,
        })

    def _kill(self, pid: int, status: int | None = None) -> int:
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

    @staticmethod
    def _has_children() -> bool:
        """Does this process have any child, alive or zombie?  (Children hang
        off the thread that forked them, or that adopted them; the zygote has
        one thread, but read them all.)"""
        for tid in os.listdir("/proc/self/task"):
            with open(f"/proc/self/task/{tid}/children", "rb") as fh:
                if fh.read().strip():
                    return True
        return False

    @staticmethod
    def _kill_descendants() -> int:
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
        found, todo = 0, list(children.get(os.getpid(), ()))
        while todo:
            victim = todo.pop()
            todo.extend(children.get(victim, ()))
            found += 1
            try:
                os.kill(victim, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        return found

    @staticmethod
    def _reap_orphans(timeout: float = 2.0) -> None:
        """Collect whatever was re-parented to us (we are a subreaper), waiting
        briefly for processes just killed, so that none outlives its job."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                done, _ = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if not done:
                if time.monotonic() > deadline:
                    break
                time.sleep(0.002)

    def _clean_tmp(self) -> None:
        if not self.iso.get("filesystem"):
            return
        for base in ("/tmp", "/var/tmp", "/dev/shm"):
            try:
                entries = os.listdir(base)
            except OSError:
                continue
            for name in entries:
                path = os.path.join(base, name)
                if path == self.tmp_base:
                    continue
                if os.path.isdir(path) and not os.path.islink(path):
                    shutil.rmtree(path, ignore_errors=True)
                else:
                    try:
                        os.unlink(path)
                    except OSError:
                        pass


def main() -> None:
    chan = Channel()
    # Our own stdout is the protocol channel: keep stray prints away from it.
    chan.wfd = os.dup(1)
    _widen_pipe(chan.wfd)
    os.dup2(os.open(os.devnull, os.O_WRONLY), 1)
    cfg = chan.recv()
    if cfg is None:
        return
    iso = _isolate(cfg)
    _libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    for name in _PRELOAD:
        try:
            __import__(name)
        except ImportError:
            pass
    zygote = Zygote(chan, cfg, iso)
    chan.send_json(b"R", iso)
    zygote.serve()


if __name__ == "__main__":
    main()
