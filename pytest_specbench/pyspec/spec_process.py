"""The specification's own process: model-written Python specs evaluated apart
from the process that holds the verdict channel (docs/postcond.md, "Verdicts").

Shipped into a sandbox job as ``specbench_pyspec.py`` (standard library only;
icontract is imported lazily, in the child, from the job's environment).  It
runs in two roles inside the job:

* the *keeper*, the job's test process, which holds the result channel (a
  private fd and the nonce) and writes every record.  :func:`protect` makes it
  non-dumpable (``PR_SET_DUMPABLE`` 0), so a process of the same uid can neither
  ptrace it, nor open its ``/proc/PID/{fd,mem,environ}``, nor ``pidfd_getfd``
  its descriptors; and drops the job's writable folder from ``sys.path``, so no
  file a spec leaves there is ever imported by the keeper.  No byte of an
  answer runs in it: the keeper imports the target module with a harness
  decorator (:func:`guard`) in place of the answer's, and holds the answer's
  text only as data.
* the *spec child*, forked by :func:`run_apart` for each check: before any spec
  code it closes every descriptor but its one outcome pipe (stdin/out/err go to
  /dev/null), forgets the keeper's secrets, and starts a process group of its
  own; then it evaluates the spec and the harness writes one outcome line
  (``holds``, ``violated`` or ``raised``, with one line of text) on the pipe.
  The keeper reads at most ``OUTCOME_BYTES`` of it after the child has exited,
  kills the child's group, and reads nothing else from it.

Whatever the spec does in its child (patching icontract, pytest, the runner,
``builtins``; threads; ``atexit``; ``os._exit``; signals; forks; floods) ends
with that child.  It can lie about its own clauses on that one call (any
process that runs the answer can), signal the keeper (which then dies: no final
record, a failure, never a pass or a kill) or use up the job's time (timeout).

Two uses (docs/postcond.md, "The Python-spec service"):

(a) :func:`guard`: an icontract-decorated method on a real call.  At the
    outermost call of the guarded function the keeper forks; the child builds
    the icontract-decorated function from the answer's decorator text (in the
    module's namespace, at the lines the text has in the injected file, so
    icontract renders its messages as in-process), replays the call on its copy
    of the state (snapshots, the method, postconditions; recursive calls go
    through the decorated function, as in-process) and reports.  The keeper
    then calls the plain method itself and raises icontract's
    ``ViolationError`` (violated) or the builtin exception of the reported type
    (raised; :class:`SpecificationError` for others) from this file, whose
    frames the runner reads as "in the contract".
(b) :func:`check_values`: a plain postcondition (``assert`` lines or an
    expression) over given values (inputs, inputs after the call,
    ``return_value``), each case in its own child, one outcome per clause.
"""
import ast
import ctypes
import json
import os
import select
import signal
import sys
import textwrap
import threading

OUTCOME_BYTES = 1 << 16  # what the keeper reads of a child's pipe (one outcome line is < 1 KiB)
LINE_CHARS = 300
KINDS = ("holds", "violated", "raised")
PR_SET_DUMPABLE = 4
_HERE = os.path.realpath(__file__)

# ------------------------------------------------------------------ the keeper's protection

_SECRETS = []  # bytearrays the keeper registers; zeroed in every child before spec code


def protect(writable_dirs=()):
    """Run once in the keeper before any spec child exists.  Raises OSError when
    the kernel refuses (the harness's fault: the job stops before any test)."""
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0:
        err = ctypes.get_errno()
        raise OSError(err, "prctl(PR_SET_DUMPABLE, 0): " + os.strerror(err))
    drop = {os.path.realpath(d) for d in writable_dirs}
    sys.path[:] = [p for p in sys.path if os.path.realpath(p or ".") not in drop]
    sys.path_importer_cache.clear()


def keep_secret(value):
    """A secret of the keeper as a bytearray that every spec child zeroes first."""
    secret = bytearray(value.encode() if isinstance(value, str) else value)
    _SECRETS.append(secret)
    return secret


# ------------------------------------------------------------------ one child per check

def one_line(text, limit=LINE_CHARS):
    """Printable ASCII, whitespace collapsed, at most ``limit`` characters."""
    text = "".join(ch if " " <= ch <= "~" else " " for ch in str(text))
    return " ".join(text.split())[:limit]


def describe_exception(exc):
    """``Type: message`` on one line; a hostile ``__str__`` gives ``<unprintable>``."""
    try:
        name = type(exc).__name__
    except Exception:  # noqa: BLE001
        name = "<unknown>"
    try:
        text = str(exc)
    except BaseException:  # noqa: BLE001 - a hostile __str__ (it runs in the child)
        text = "<unprintable>"
    return one_line(f"{name}: {text}" if text else name)


def _enter_child(out_fd):
    """The child's first steps, before any spec code: its own process group,
    no descriptor but the outcome pipe, stdio on /dev/null, secrets zeroed."""
    os.setpgid(0, 0)
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        if fd != null:
            os.dup2(null, fd)
    top = max(os.sysconf("SC_OPEN_MAX"), 1024)
    os.closerange(3, out_fd)
    os.closerange(out_fd + 1, top)
    for secret in _SECRETS:
        secret[:] = bytes(len(secret))
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def _write_all(fd, data):
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


CHILDREN = [0]  # spec children this keeper forked (the per-call cost's denominator, tools/spec_cost.py)
# The keeper's way to say "the harness failed, not the answer" (the runner writes a
# harness_error record): a fork refused before any spec child ran is the machine's doing.
HARNESS_ERROR = [None]


def run_apart(work, _exit=os._exit):
    """Run ``work()`` (harness code that evaluates a spec and returns a dict with
    ``kind`` in KINDS and ``line``; or a list of such dicts) in a forked child and
    return what it reported, checked: a dict ``{"kind", "line"}`` or a list of
    them.  A child that ends without exactly one well-formed outcome is
    ``raised`` with a line saying how it ended."""
    rfd, wfd = os.pipe()
    CHILDREN[0] += 1
    try:
        pid = os.fork()
    except OSError as exc:
        os.close(rfd)
        os.close(wfd)
        if CHILDREN[0] == 1 and HARNESS_ERROR[0] is not None:
            HARNESS_ERROR[0](f"could not fork the first spec child: {exc}")
        # (later: earlier children's descendants may hold the job's processes: the answer's doing)
        raise SpecificationError(f"could not fork the specification's process: {exc}") from None
    if pid == 0:  # the spec child
        code = 0
        try:
            os.close(rfd)
            _enter_child(wfd)
            try:
                out = work()
            except BaseException as exc:  # noqa: BLE001 - the spec's, reported as such
                out = {"kind": "raised", "line": describe_exception(exc)}
            _write_all(wfd, (json.dumps(out, ensure_ascii=True) + "\n").encode("ascii"))
        except BaseException:  # noqa: BLE001 - nothing of the child may return into the keeper's stack
            code = 70
        finally:
            _exit(code)  # (bound when this module loaded: a spec that patches os._exit changes nothing here)
    os.close(wfd)
    try:
        data, status = _collect(pid, rfd)
    finally:
        os.close(rfd)
        try:
            os.killpg(pid, signal.SIGKILL)  # whatever the child left behind in its group
        except OSError:
            pass
    return _parse(data, status)


def _collect(pid, rfd):
    chunks, size, status = [], 0, None
    pidfd = os.pidfd_open(pid) if hasattr(os, "pidfd_open") else None
    try:
        watch = [rfd] + ([pidfd] if pidfd is not None else [])
        open_pipe = True
        while status is None:
            ready, _, _ = select.select(watch if open_pipe else watch[1:], [], [], None if pidfd is not None else 0.05)
            if rfd in ready:
                chunk = os.read(rfd, 1 << 16)
                if chunk:
                    if size < OUTCOME_BYTES:
                        chunks.append(chunk)
                    size += len(chunk)
                else:
                    open_pipe = False
            if pidfd is None or pidfd in ready or not open_pipe:
                done, st = os.waitpid(pid, 0 if not open_pipe else os.WNOHANG)
                if done:
                    status = st
        # The child has exited; what a descendant of it still writes is not read.
        os.set_blocking(rfd, False)
        while size < OUTCOME_BYTES:
            try:
                chunk = os.read(rfd, 1 << 16)
            except BlockingIOError:
                break
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    finally:
        if pidfd is not None:
            os.close(pidfd)
    return b"".join(chunks), status


def _ended(status):
    if os.WIFSIGNALED(status):
        try:
            name = signal.Signals(os.WTERMSIG(status)).name
        except ValueError:
            name = f"signal {os.WTERMSIG(status)}"
        return f"killed by {name}"
    return f"exit status {os.WEXITSTATUS(status)}"


def _valid(item):
    return (isinstance(item, dict) and item.get("kind") in KINDS and isinstance(item.get("line", ""), str)
            and set(item) <= {"kind", "line"})


def _parse(data, status):
    lines = data.split(b"\n")
    if len(data) > OUTCOME_BYTES or len(lines) != 2 or lines[1]:
        why = "wrote more than one outcome" if data.strip() else "ended without an outcome"
        return {"kind": "raised", "line": f"the specification's process {why} ({_ended(status)})"}
    try:
        out = json.loads(lines[0])
    except (ValueError, RecursionError):  # (a line the answer wrote: garbage, or nested 60,000 deep)
        out = None
    if not (os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0):
        return {"kind": "raised", "line": f"the specification's process ended abnormally ({_ended(status)})"}
    if _valid(out):
        return {"kind": out["kind"], "line": one_line(out.get("line", ""))}
    if isinstance(out, list) and out and all(_valid(o) for o in out):
        return [{"kind": o["kind"], "line": one_line(o.get("line", ""))} for o in out]
    return {"kind": "raised", "line": "the specification's process wrote a malformed outcome"}


# ------------------------------------------------------------------ (a) icontract on a real call

# eval in an answer is bound to this (postcond/source.py rewrites ``eval(`` to it):
# arithmetic, comparisons and containers of literals, nothing that names anything.
_SAFE_NODES = (ast.Expression, ast.Constant, ast.BinOp, ast.UnaryOp, ast.BoolOp, ast.Compare, ast.Tuple, ast.List,
               ast.Set, ast.Dict, ast.Load, ast.operator, ast.unaryop, ast.boolop, ast.cmpop)


def safe_eval(text, *rest):
    if rest:
        raise TypeError("eval with globals or locals is not available to a postcondition")
    if isinstance(text, bytes):
        text = text.decode()
    if not isinstance(text, str):
        raise TypeError("eval() arg 1 must be a string")
    tree = ast.parse(text.strip(" \t"), mode="eval")
    for node in ast.walk(tree):
        if not isinstance(node, _SAFE_NODES):
            raise ValueError(f"eval of {type(node).__name__} is not available to a postcondition")
    return eval(compile(tree, "<eval>", "eval"), {"__builtins__": {}}, {})  # noqa: S307 - literals only


class SpecificationError(Exception):
    """Raised in the keeper when a spec's evaluation raised an exception that is
    not a builtin one (or a BaseException such as SystemExit), or its process
    ended without an outcome."""


_SPECS = {}  # spec id -> dict(decorators, first_line, lines): data only, in the keeper
_CHILD = {}  # in a spec child: spec id -> the icontract-decorated function
_DEPTH = threading.local()  # per thread of the keeper: spec id -> calls of the guarded function in progress


def register(specs):
    """The keeper's specs, from its config: ``{id: {"decorators": TEXT,
    "first_line": N, "text": FILE_TEXT}}``; ``text`` is the injected file as the
    answer's decorators make it (for icontract's messages), ``first_line`` the
    1-based line of the first decorator in it."""
    for key, spec in specs.items():
        _SPECS[str(key)] = {"decorators": str(spec["decorators"]), "first_line": int(spec["first_line"]),
                            "lines": str(spec.get("text", "")).splitlines(keepends=True)}


def _decorator_values(spec, filename, namespace, local_ns):
    """Evaluate the answer's decorator expressions (top to bottom, as Python
    does) in the module's namespace, compiled at their lines in the injected
    file.  Runs in a spec child only."""
    import linecache

    linecache.cache[filename] = (sum(map(len, spec["lines"])), None, spec["lines"], filename)
    # (blank lines first put the decorators at their lines: half the cost of ast.increment_lineno)
    probe = ast.parse("\n" * (spec["first_line"] - 1) + textwrap.dedent(spec["decorators"])
                      + "\ndef _specbench_probe():\n    pass\n", filename)
    return [eval(compile(ast.Expression(dec), filename, "eval"), namespace, local_ns)  # noqa: S307 - in the child
            for dec in probe.body[0].decorator_list]


def _decorated(key, func, local_ns):
    """The icontract-decorated ``func`` of spec ``key``, built in a spec child."""
    spec = _SPECS[key]
    out = func
    for dec in reversed(_decorator_values(spec, func.__code__.co_filename, func.__globals__, local_ns)):
        out = dec(out)
    return out


def apply_spec(key, func, target):
    """``target`` decorated with spec ``key``'s decorators, evaluated in the module
    of ``func`` (a module-level function) at their lines of the injected file; in a
    spec process only (the ``pbt`` tier's case child, ``pyspec/icontract_search.py``)."""
    out = target
    for dec in reversed(_decorator_values(_SPECS[str(key)], func.__code__.co_filename, func.__globals__, None)):
        out = dec(out)
    return out


def is_violation(exc):
    """Whether ``exc`` is icontract's report of a violated condition."""
    return _is_violation(exc)


def _from_the_method(exc, decorated, func):
    """Whether ``exc`` left the outermost decorated call from the method's own
    body (the method raised: no postcondition applies), not from the contract
    machinery (a snapshot or condition that raised, icontract's own checks)."""
    tb = exc.__traceback__
    while tb is not None and tb.tb_frame.f_code is not getattr(decorated, "__code__", None):
        tb = tb.tb_next
    return tb is not None and tb.tb_next is not None and tb.tb_next.tb_frame.f_code is func.__code__


def _is_violation(exc):
    import icontract

    if isinstance(exc, icontract.ViolationError):
        return True
    # icontract found a violated condition but could not render its message
    # (e.g. nested lambdas): RuntimeError from _create_violation_error.
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    return (isinstance(exc, RuntimeError) and tb is not None
            and tb.tb_frame.f_code.co_name == "_create_violation_error"
            and os.sep + "icontract" + os.sep in tb.tb_frame.f_code.co_filename)


def _replay(key, func, local_ns, args, kwargs, is_coroutine):
    """In the spec child: the call with the answer's contracts; one outcome."""
    decorated = _decorated(key, func, local_ns)
    _CHILD[key] = decorated
    try:
        if is_coroutine:
            import asyncio

            asyncio.events._set_running_loop(None)  # the keeper's loop is not this process's
            asyncio.run(decorated(*args, **kwargs))
        else:
            decorated(*args, **kwargs)
    except BaseException as exc:  # noqa: BLE001 - the method's, the spec's, or icontract's on its behalf
        if _from_the_method(exc, decorated, func):
            return {"kind": "holds", "line": "the method raised; no postcondition applies"}
        if _is_violation(exc):
            return {"kind": "violated", "line": describe_exception(exc)}
        return {"kind": "raised", "line": describe_exception(exc)}
    return {"kind": "holds", "line": ""}


def _check_decoration(key, func, local_ns):
    """At import, as in-process: the decorators are evaluated and applied once
    (a spec child), so a decorator that raises fails the import."""
    def work():
        _decorated(key, func, local_ns)
        return {"kind": "holds", "line": ""}

    out = run_apart(work)
    if out["kind"] != "holds":
        raise SpecificationError(f"the specification's decorators failed: {out['line']}")


def _raise_for(out):
    import builtins

    import icontract

    if out["kind"] == "violated":
        raise icontract.ViolationError(out["line"])
    name, _, _ = out["line"].partition(":")
    cls = getattr(builtins, name, None)
    if isinstance(cls, type) and issubclass(cls, Exception) and cls.__module__ == "builtins":
        try:
            exc = cls(out["line"])
        except Exception:  # noqa: BLE001 - e.g. UnicodeDecodeError wants five arguments
            exc = SpecificationError(out["line"])
    else:
        exc = SpecificationError(out["line"])
    raise exc


def guard(key):
    """The harness's decorator in place of the answer's (``@guard("0")``): the
    spec ``key`` (:func:`register`) is checked on each outermost call, in a
    spec child, and the method runs here without contracts."""
    key = str(key)

    def wrap(func):
        import functools
        import inspect

        caller = sys._getframe(1)
        # A method's decorators run in its class body: keep that namespace.
        local_ns = caller.f_locals if caller.f_locals is not caller.f_globals else None
        _check_decoration(key, func, local_ns)
        is_coroutine = inspect.iscoroutinefunction(func)

        def checked(args, kwargs):
            return run_apart(lambda: _replay(key, func, local_ns, args, kwargs, is_coroutine))

        if is_coroutine:
            @functools.wraps(func)
            async def guarded_async(*args, **kwargs):
                if key in _CHILD:
                    return await _CHILD[key](*args, **kwargs)
                out = checked(args, kwargs)
                result = await func(*args, **kwargs)
                if out["kind"] != "holds":
                    _raise_for(out)
                return result
            return guarded_async

        @functools.wraps(func)
        def guarded(*args, **kwargs):
            if key in _CHILD:  # in a spec child: the decorated function (recursion, calls from specs)
                return _CHILD[key](*args, **kwargs)
            depth = _DEPTH.__dict__
            if depth.get(key):  # a recursive call: the outermost call's child checked it
                return func(*args, **kwargs)
            out = checked(args, kwargs)
            depth[key] = 1
            try:
                result = func(*args, **kwargs)
            except BaseException:
                if out["kind"] != "holds":
                    _raise_for(out)
                raise
            finally:
                depth[key] = 0
            if out["kind"] != "holds":
                _raise_for(out)
            return result
        return guarded
    return wrap


# ------------------------------------------------------------------ (b) a postcondition over values

def _clauses(source):
    """The clauses of a plain postcondition: each ``assert`` statement of a block,
    or the block as one expression."""
    tree = ast.parse(textwrap.dedent(source), "<postcondition>")
    if tree.body and all(isinstance(s, ast.Assert) for s in tree.body):
        return [ast.Expression(s.test) for s in tree.body]
    if len(tree.body) == 1 and isinstance(tree.body[0], ast.Expr):
        return [ast.Expression(tree.body[0].value)]
    raise SyntaxError("a postcondition is assert lines or one expression")


def evaluate_clauses(source, names):
    """In a spec child: each clause of ``source`` with ``names`` bound, in order;
    one outcome per clause (a clause that raises is ``raised``; the rest still run)."""
    outcomes = []
    try:
        clauses = [compile(c, "<postcondition>", "eval") for c in _clauses(source)]
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        return [{"kind": "raised", "line": describe_exception(exc)}]
    for code in clauses:
        try:
            value = eval(code, dict(names))  # noqa: S307 - in the spec child
            ok = bool(value)
        except BaseException as exc:  # noqa: BLE001
            outcomes.append({"kind": "raised", "line": describe_exception(exc)})
            continue
        outcomes.append({"kind": "holds" if ok else "violated", "line": ""})
    return outcomes


def check_values(source, cases):
    """(b): for each case (``{"inputs": {...}, "inputs_after": {...}?, "return_value": ...}``)
    a list of per-clause outcomes; each case is its own spec child.  A clause
    sees the inputs by name, ``return_value``, and ``inputs_after`` (a dict: the
    inputs' values after the call, for specs of methods that mutate them)."""
    results = []
    for case in cases:
        names = dict(case.get("inputs") or {})
        names["return_value"] = case.get("return_value")
        names["inputs_after"] = dict(case.get("inputs_after") or {})
        out = run_apart(lambda: evaluate_clauses(source, names))
        results.append(out if isinstance(out, list) else [out])
    return results


def values_main(config_path):
    """The keeper of a values job (``python specbench_pyspec.py values CONFIG``):
    reads the config (deleted), protects itself, writes one record per case on fd
    3 with the nonce."""
    import wire  # (shipped beside this file by pyspec.values_job)

    with open(config_path) as fh:
        cfg = json.load(fh)
    os.unlink(config_path)
    channel = os.dup(3)
    os.set_inheritable(channel, False)
    os.close(3)
    nonce = keep_secret(cfg.pop("nonce"))
    protect([os.getcwd()])
    _write_all(channel, (json.dumps({"event": "start", "nonce": nonce.decode()}) + "\n").encode("ascii"))
    cases = wire.loads(cfg["cases"])
    for index, outcomes in enumerate(check_values(cfg["source"], cases)):
        record = {"case": index, "outcomes": outcomes, "nonce": nonce.decode()}
        _write_all(channel, (json.dumps(record, ensure_ascii=True) + "\n").encode("ascii"))
    _write_all(channel, (json.dumps({"event": "finish", "nonce": nonce.decode()}) + "\n").encode("ascii"))


if __name__ == "__main__" and sys.argv[1:2] == ["values"]:
    values_main(sys.argv[2])
