"""The image side of warm starts (:mod:`.warm`, whose docstring gives the roles):
the seed, the image processes and a job's processes until they enter their entry
function.  Standard library only, and nothing of this package: its text (after
:mod:`.enter`'s, in one namespace that is no module) is what the seed, a fresh
interpreter, runs; no process here imports the package."""
import atexit
import ctypes
import fcntl
import importlib.machinery
import json
import os
import platform
import runpy
import signal
import socket
import sys
import threading
import types

CLONE_PARENT = 0x00008000
# clone's number by machine (the x86_64 and aarch64 argument orders agree when all but the flags are 0)
CLONE_NUMBER = {"x86_64": 56, "aarch64": 220}
MAX_MESSAGE = 1 << 22  # a message of an image's modules fits
HIGH_FD = 100  # received descriptors are moved above the numbers a job's map targets
MAIN_ALIAS = "__mp_main__"  # the name a script's code runs under when it is not run as a script
_clib = ctypes.CDLL(None, use_errno=True)
_clib.syscall.restype = ctypes.c_long


def clone_parent():
    """``fork()`` whose child is a child of our parent (``CLONE_PARENT``), with
    Python's own fork bookkeeping (what ``os.fork`` does around the system call)."""
    if threading.active_count() != 1:
        raise OSError("a process with threads is not cloned")
    api = ctypes.pythonapi
    api.PyOS_BeforeFork()
    pid = _clib.syscall(CLONE_NUMBER[platform.machine()], ctypes.c_ulong(CLONE_PARENT | signal.SIGCHLD),
                        ctypes.c_ulong(0), None, None, ctypes.c_ulong(0))
    if pid == 0:
        api.PyOS_AfterFork_Child()
        return 0
    err = ctypes.get_errno()
    api.PyOS_AfterFork_Parent()
    if pid < 0:
        raise OSError(err, f"clone: {os.strerror(err)}")
    return pid


def send(sock, obj, fds=()):
    socket.send_fds(sock, [json.dumps(obj).encode()], list(fds))


def recv(sock):
    data, fds, _, _ = socket.recv_fds(sock, MAX_MESSAGE, 16)
    if not data:
        raise EOFError("the other end closed")
    return json.loads(data), fds


def _close_all_but(keep):
    for fd in map(int, os.listdir("/proc/self/fd")):
        if fd > 2 and fd not in keep:
            try:
                os.close(fd)
            except OSError:
                pass


def seed(fd):
    """The seed: per image, clone its base process (which clones its top process)."""
    null = os.open(os.devnull, os.O_RDWR)
    for std in (0, 1, 2):
        os.dup2(null, std)
    os.close(null)
    sock = socket.socket(fileno=fd)
    # ``-c`` put the zygote's working folder first on the path: an image imports installed
    # modules only, never a file of whatever folder that is.
    sys.path[:] = [p for p in sys.path if p]
    first, _ = recv(sock)
    JOB_IPC_NAMESPACE[0] = bool(first.get("ipc"))
    serve_clones(sock, lambda msg, fds, _: (_close_all_but(set(fds)),  # the base process
                                            _image(msg, *[socket.socket(fileno=got) for got in fds])))


def serve_clones(sock, child):
    """Per request on ``sock``: clone, and in the clone run ``child(request, fds, sock)``
    (it ends the process); here, close the request's descriptors and answer the
    clone's pid."""
    while True:
        try:
            req, fds = recv(sock)
        except (EOFError, OSError):
            return
        try:
            pid = clone_parent()
        except OSError as exc:
            for fd in fds:
                os.close(fd)
            send(sock, {"error": str(exc)})
            continue
        if pid == 0:
            try:
                child(req, fds, sock)
            finally:
                os._exit(0)
        for fd in fds:
            os.close(fd)
        send(sock, {"pid": pid})


ENTRIES = {}  # module name -> module, where an entry function is looked up (the script's is __main__)


def _load(names, sources, preload, script, optional=()):
    for name in preload:
        __import__(name)
    for name in optional:  # (a module this interpreter lacks: the job imports, or misses, it itself)
        try:
            __import__(name)
        except ModuleNotFoundError as exc:
            if exc.name != name:
                raise
    for name in names:  # the job's own modules, from the bytes the job has as files
        as_script = f"{name}.py" == script
        module = types.ModuleType(MAIN_ALIAS if as_script else name)
        module.__file__ = f"{name}.py"  # as in the job: a file of its working directory
        sys.modules["__main__" if as_script else name] = module
        exec(compile(sources[name], module.__file__, "exec"), module.__dict__)  # noqa: S102 - the harness's
        if as_script:
            module.__name__ = "__main__"  # (its ``if __name__ == "__main__"`` did not run: the job's main will)
        ENTRIES[name] = module


def _image(msg, base_sock, top_sock):
    """The base process: import the base layer, clone the top process, serve."""
    warm = msg["warm"]
    try:
        _load(warm["base"], msg["sources"], warm["base_preload"], msg["script"])
    except BaseException as exc:  # noqa: BLE001 - reported; the jobs are exec'd instead
        send(base_sock, {"error": f"{type(exc).__name__}: {exc}"[:500]})
        return
    del msg
    pid = clone_parent()
    if pid == 0:  # the top process: its own modules come to it alone (the base never holds them)
        os.close(base_sock.detach())
        try:
            top, _ = recv(top_sock)
            _load(warm["top"], top["sources"], warm["top_preload"], top["script"], warm.get("top_optional") or ())
            del top
        except BaseException as exc:  # noqa: BLE001
            send(top_sock, {"error": f"{type(exc).__name__}: {exc}"[:500]})
            return
        send(top_sock, {"ready": os.getpid()})
        _serve(top_sock)
        return
    top_sock.close()
    send(base_sock, {"ready": os.getpid(), "top": pid})
    _serve(base_sock)


def _serve(sock):
    """An image process: per request, clone one of a job's processes."""
    serve_clones(sock, lambda req, fds, control: _job_process(req, fds, control.detach()))


def _job_process(req, fds, control):
    """A job's process (main or helper): enter the job's sandbox, then its entry
    (``entry`` None: the argv's own ``-m MODULE``, as the interpreter would run it,
    :func:`_as_interpreter`)."""
    status = None
    try:
        high = [fcntl.fcntl(fd, fcntl.F_DUPFD, HIGH_FD) for fd in fds]
        for fd in [*fds, control]:
            os.close(fd)
        targets = dict(zip(req["targets"], high))
        status = targets.get(4) if req["role"] == "main" else None
        env = enter_job(req["job"], req["jobdir"], req["uid"], targets)  # noqa: F821 - .enter's, same namespace
        status = 4 if status is not None else None
        if req["entry"] is None:
            module = _as_interpreter(req["job"]["argv"], req["script_at"], req["jobdir"], env)
            entry = None
        else:
            sys.path[0] = req["jobdir"]  # as for ``python -s -E SCRIPT``: the script's folder first
            sys.argv = list(req["job"]["argv"][req["script_at"]:])
            module, _, function = req["entry"].partition(":")
            entry = getattr(ENTRIES[module], function)
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
        if entry is None:
            runpy._run_module_as_main(module)  # what ``python -m MODULE`` calls
        elif req["role"] == "main":
            entry(sys.argv, 5, req["helper_pid"])
        else:
            entry(sys.argv, 5)
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 0 if exc.code is None else 1
        if exc.code is not None and not isinstance(exc.code, int):
            print(exc.code, file=sys.stderr)  # (as the interpreter does with ``sys.exit("text")``)
    except BaseException:  # noqa: BLE001
        import traceback

        traceback.print_exc()
        code = 1
    if entry is None:  # then, as the interpreter ends: wait for the threads, run the exit functions
        try:
            threading._shutdown()
        except BaseException:  # noqa: BLE001
            pass
        atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:  # noqa: BLE001
            pass
    os._exit(code)


# The environment variables an interpreter reads at its start that a warm start honours (the
# seed started with the job's $PYTHONDONTWRITEBYTECODE, :mod:`.warm`); a job with any other
# PYTHON* variable (a hash seed, an encoding, a user base, ...) is exec'd instead.
STARTUP_ENV = ("PYTHONPATH", "PYTHONDONTWRITEBYTECODE")
# The locale every seed starts in (its standard streams' encoding is set then): a job of another
# locale is exec'd.
SEED_LOCALE = "C.UTF-8"


def _as_interpreter(argv, at, jobdir, env):
    """The state ``python [-s] [-E] -m MODULE ARGS`` starts in, made in a clone of an image
    that started as ``python [-s] [-E]`` (the job's flags): the path (the working folder,
    then $PYTHONPATH's folders made absolute, then the image's own), the user site folder's
    name, a fresh ``__main__``, ``sys.argv``.  Where that state cannot be the exec'd one --
    a module the image imported has a namesake in a folder the job puts before the
    installation's (the checkout, the job's folder), another startup variable or locale, a
    user site folder that exists -- the process execs the argv instead, here, set up as the job (the
    job is then exactly an exec'd one).  Returns the module to run."""
    flags = argv[1:at]
    front = [jobdir]
    if env.get("LANG") != SEED_LOCALE or env.get("LC_ALL") or env.get("LC_CTYPE"):
        _exec(argv, env)
    if "-E" not in flags:
        if any(k.startswith("PYTHON") and k not in STARTUP_ENV for k in env):
            _exec(argv, env)
        for entry in (env.get("PYTHONPATH") or "").split(os.pathsep) if env.get("PYTHONPATH") else ():
            front.append(os.path.abspath(entry) if entry else jobdir)
    if "-s" not in flags and "site" in sys.modules:
        site = sys.modules["site"]
        site.USER_BASE = site.USER_SITE = None  # (named from the job's $HOME, as at its start)
        if os.path.isdir(site.getusersitepackages()):
            _exec(argv, env)
    if _shadowed(front):
        _exec(argv, env)
    sys.path[:] = [*front, *[p for p in sys.path if p]]
    sys.argv = [argv[at]] + list(argv[at + 2:])  # (runpy puts the module's file first)
    sys.modules["__main__"] = types.ModuleType("__main__")
    return argv[at + 1]


def _shadowed(folders):
    """Does a folder hold a namesake of an imported module (a package folder, a source
    or compiled module), which an exec'd interpreter would have imported from there?"""
    imported = {name.partition(".")[0] for name in list(sys.modules)}
    suffixes = tuple(importlib.machinery.all_suffixes())
    for folder in folders:
        try:
            names = os.listdir(folder)
        except OSError:
            continue
        for name in names:
            stem = name.partition(".")[0]
            if stem in imported and (name == stem and os.path.isdir(os.path.join(folder, name))
                                     or name.endswith(suffixes)):
                return True
    return False


def _exec(argv, env):
    """Exec the job's argv in this process, already set up as the job (fd 4, the status
    pipe, closes on the exec: as ``command.run_child`` does)."""
    os.set_inheritable(4, False)
    os.execve(argv[0], argv, env)  # (an absolute path: .warm starts no other -m job warm)
