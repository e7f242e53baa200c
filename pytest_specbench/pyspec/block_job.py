"""The job side of :mod:`pytest_specbench.pyspec.blocks`: a block of Python
statements (a postcondition) evaluated on many cases, each in a process that
holds that case alone and can do nothing but compute and answer.

Shipped into a sandbox job as ``specbench_blocks.py`` beside ``wire.py``;
standard library plus ``pyseccomp`` (ctypes bindings of the system's
libseccomp).  Three roles, in one job:

* the *keeper* (this script's process) holds the result channel (fd 3, the
  nonce) and writes every record.  It is made non-dumpable before anything else,
  so no process of the job's uid can ptrace it or open its ``/proc`` entries.
  It reads the cases only after the zygote exists, writes each case into the
  case pipe for one child, and reads that child's answer from a pipe of its
  own.  No byte of the answer runs in it.
* the *zygote*, forked before any case was read: it forgets the channel, runs
  the task's preamble (benchmark text: imports, helper functions), compiles the
  answer's block (compiles, never runs), and forks one child per case.  It
  never reads a case or an answer: whatever it holds, every child sees.
* a *case child*: reads its own case (or batch of cases the caller chose:
  nl2postcond puts no two cases of one input in a batch) from a pipe of its own, closes every
  descriptor but its answer pipe, sets its CPU limit, and installs a seccomp
  filter that denies every system call but memory, time, signals' return and
  ``write`` to its answer pipe, and arming its own CPU timer (EPERM for the
  rest: no file, socket, IPC, process, signal to another process or ptrace).  Nor can it sleep: ``futex``
  may only wake (a single thread never waits), its answer pipe is
  non-blocking, stdin is /dev/null; so a child's wall time is its CPU time and
  the machine's, and a child killed at its wall deadline before its CPU limit
  was slowed by the machine, not by its answer (``budget``: E, #46).  Then the block runs, and the
  harness's code writes one answer line: ``holds`` (it completed), ``violated``
  (``AssertionError``) or ``raised`` (any other exception, with its type), with
  the CPU seconds the case took (for a per-input time rule, nl2postcond's
  ``--nl2postcond-time=upstream``).  With ``case_timer`` (nl2postcond's
  corpus evaluation) each case runs under a CPU timer of its own
  (``case_seconds``, ``ITIMER_PROF``, whose signal ends the child): a case that
  spends it is a time-out, ``raised``, and the batch's cases after it go to a
  fresh child, so one case's cost never decides another's outcome.  Without it
  (the other callers, as before) the batch's CPU limit is the only one, and the
  cases after a time-out are time-outs too.

The keeper may be told which cases decide the job (nl2postcond's reference
outputs: ``decisive``): once one of them has not held, the cases not yet
evaluated are ``skipped`` (nothing the answer does can change its verdict then:
a postcondition that fails on a reference output is not test-set correct).  No
child ever learns which cases those are.

A child can lie only about its own case (any process that runs the answer
could), and learn nothing of the others: no other case was ever in its memory
or its zygote's, and it cannot reach a file, another process or the keeper.

Search mode (the ``pbt`` tier, ``search`` in the configuration): the keeper
makes the cases itself, with Hypothesis, the reference and the contract
(``specbench_search.py``, imported only after the zygote's fork), and hands
each case to a fresh child of its own; see :mod:`.pbt_keeper`.
"""
import ctypes
import fcntl
import json
import os
import resource
import select
import signal
import socket
import struct
import sys
import time

ANSWER_BYTES = 4096  # what the keeper reads of a child's answer
# What the keeper records of a case it does not evaluate (a decisive case had not held); the
# harness's check_blocks says the same of the cases of a later job it does not run.
SKIPPED_LINE = "not evaluated: the answer had already failed on a case that decides it"
ANSWER_FD = 9  # a case child's answer pipe, moved to this number (the filter names it)
# The answer pipe's size: every honest answer of a batch fits (64 lines of at most a few KB), so
# the harness's writes never wait; the pipe is non-blocking, so a child that fills it gets
# EAGAIN instead of sleeping until its wall deadline.
ANSWER_PIPE_BYTES = 1 << 20
F_SETPIPE_SZ = 1031
# futex commands a child may use: the waking ones (a single-threaded process never has to wait;
# a wait is how a child would spend wall time without CPU time).  FUTEX_CMD_MASK leaves out the
# private and clock flags.
FUTEX_CMD_MASK, FUTEX_WAKE, FUTEX_WAKE_BITSET = 0x7F, 1, 10
# CPU seconds of a child the harness spends outside its figures (fork, the answer lines, the
# exit, which frees what the setup decoded): what a batch's rusage may exceed the setup and the
# sum of its claims by before the rest counts as hidden.  Measured: 2 ms + 0.07 ms per case
# (1 to 64 cases of 20,000-element lists), about 15% of the setup's figure at 64.
CHARGE_SLACK, CHARGE_SLACK_PER_CASE, CHARGE_SLACK_OF_SETUP = 0.01, 0.001, 0.25
# A child's wall deadline, in multiples of its CPU limit (plus a second): reached only by a child
# that got less than a tenth of a CPU, which is the machine's doing (``budget``).
DEADLINE_FACTOR = 10
LINE_CHARS = 300
PR_SET_DUMPABLE = 4
# Modules a block may use without importing anything itself (an `import` inside a
# child is denied: imports open files).  Imported once in the zygote.
PRELOADED = ("re", "math", "cmath", "string", "itertools", "functools", "collections", "operator", "heapq",
             "bisect", "statistics", "fractions", "decimal", "numbers", "typing", "copy", "random", "hashlib",
             "datetime", "unicodedata", "json")
# System calls a case child keeps (x86_64 and aarch64 names; unknown ones are skipped).
ALLOWED = ("read", "brk", "mmap", "munmap", "mremap", "madvise", "mprotect", "rt_sigreturn",
           "rt_sigaction", "rt_sigprocmask", "sigaltstack", "clock_gettime", "clock_getres", "gettimeofday",
           "getrandom", "exit", "exit_group", "getpid", "gettid", "fstat", "newfstatat", "lseek", "close",
           "getrusage", "sched_yield", "restart_syscall")
# The one timer a case child may arm (``setitimer``'s first argument, the filter checks it): its
# own CPU clock's, whose SIGPROF ends it when a case spends ``case_seconds`` (the default action:
# no handler of the harness's; one the block installs runs only between its bytecodes, and then
# the batch's CPU limit, RLIMIT_CPU, is still the outer wall).  Disarming it buys a block no more
# than the batch's CPU limit, which it had before there was a timer.
ITIMER_PROF = 2
_setitimer = signal.setitimer  # bound before any block runs (a block may rebind the module's names)


def _one_line(text, limit=LINE_CHARS):
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _make_filter(answer_fd):
    import pyseccomp as sc

    flt = sc.SyscallFilter(defaction=sc.ERRNO(1))  # EPERM
    for name in ALLOWED:
        try:
            flt.add_rule(sc.ALLOW, name)
        except (ValueError, OSError, RuntimeError):
            pass  # a name this architecture lacks
    for fd in (answer_fd, 1, 2):  # 1 and 2 are /dev/null: print() inside a block works
        flt.add_rule(sc.ALLOW, "write", sc.Arg(0, sc.EQ, fd))
    for command in (FUTEX_WAKE, FUTEX_WAKE_BITSET):
        flt.add_rule(sc.ALLOW, "futex", sc.Arg(1, sc.MASKED_EQ, FUTEX_CMD_MASK, command))
    flt.add_rule(sc.ALLOW, "setitimer", sc.Arg(0, sc.EQ, ITIMER_PROF))
    return flt


def _read_exact(fd, n):
    chunks, got = [], 0
    while got < n:
        data = os.read(fd, min(1 << 20, n - got))
        if not data:
            raise EOFError("case pipe closed")
        chunks.append(data)
        got += len(data)
    return b"".join(chunks)


def _answer(exc):
    """(kind, exception type, one line) of a block's end; harness code, in the child."""
    if exc is None:
        return "holds", "", ""
    try:
        name = _one_line(type(exc).__name__, 100)
    except BaseException:  # noqa: BLE001 - a class whose __name__ raises
        name = "<exception>"
    try:
        text = _one_line(exc)
    except BaseException:  # noqa: BLE001 - an exception whose __str__ raises
        text = ""
    return ("violated" if isinstance(exc, AssertionError) else "raised"), name, text


def _case_child(case_fd, answer_fd, base, code, cpu_seconds, fixed, cpu_left=None, case_timer=False):  # noqa: C901
    """In a forked child of the zygote: evaluates one batch of cases (each of them
    from a fresh copy of the preamble's names), one answer line per case in
    order; never returns.  Its CPU limit: ``cpu_seconds`` per case, at most
    ``cpu_left`` (what is left of the job's CPU budget for answers); with
    ``case_timer``, each case at most ``cpu_seconds`` (its CPU timer: SIGPROF
    ends the child)."""
    try:
        os.dup2(answer_fd, ANSWER_FD)
        os.dup2(case_fd, ANSWER_FD + 1)
        case_fd = ANSWER_FD + 1
        os.closerange(3, ANSWER_FD)
        os.closerange(ANSWER_FD + 2, resource.getrlimit(resource.RLIMIT_NOFILE)[0])
        size = int.from_bytes(_read_exact(case_fd, 8), "big")
        import wire

        blob = _read_exact(case_fd, size)
        os.close(case_fd)
        try:
            fcntl.fcntl(ANSWER_FD, F_SETPIPE_SZ, ANSWER_PIPE_BYTES)
        except OSError:
            pass  # a lower system maximum: the default 64 KB holds a batch's usual answers
        os.set_blocking(ANSWER_FD, False)  # the filter denies fcntl: the block cannot undo it
        cases = wire.loads(blob)
        if fixed is not None:
            os.write(ANSWER_FD, ((json.dumps(fixed) + "\n") * len(cases)).encode())
            os._exit(0)
        seconds = cpu_seconds * len(cases) if cpu_left is None else min(cpu_seconds * len(cases), cpu_left)
        # RLIMIT_CPU counts the process's whole CPU: the decoding so far is the harness's, on top
        seconds = max(1, int(time.process_time() + seconds + 0.999))
        hard = resource.getrlimit(resource.RLIMIT_CPU)[1]  # the job's own limit: never above it
        if hard != resource.RLIM_INFINITY:
            seconds = min(seconds, max(1, hard - 1))
        resource.setrlimit(resource.RLIMIT_CPU, (seconds, seconds + 1 if hard == resource.RLIM_INFINITY else hard))
        _FILTER[0].load()
        # The CPU this child spent before any answer code ran (decoding its cases): a figure no
        # block can have touched, written first; the keeper subtracts it from the child's rusage.
        os.write(ANSWER_FD, (json.dumps({"setup": round(time.process_time(), 6)}) + "\n").encode())
    except BaseException:  # noqa: BLE001 - the harness's own failure: no answer, the keeper says so
        os._exit(3)
    timer = cpu_seconds if case_timer else 0  # 0: never armed
    for case in cases:
        names = dict(base)
        start = time.process_time()
        try:
            names.update(case.get("inputs") or {})
            # an iterator a program returned (wire.Iterated) is handed over as a fresh object of its kind
            names["return_value"] = wire.live(case.get("return_value"))
            if timer:
                _setitimer(ITIMER_PROF, timer)
            exec(code, names)  # noqa: S102 - the block, confined by the filter above
            end = None
        except BaseException as exc:  # noqa: BLE001
            end = exc
        if timer:
            try:
                _setitimer(ITIMER_PROF, 0)
            except BaseException:  # noqa: BLE001 - the block may have replaced the module's names: the batch's limit holds
                pass
        spent = time.process_time() - start
        kind, exc_type, line = _answer(end)
        try:
            os.write(ANSWER_FD, (json.dumps({"kind": kind, "exc": exc_type, "line": line,
                                             "cpu": round(spent, 6)}) + "\n").encode())
        except BaseException:  # noqa: BLE001
            os._exit(0)
    os._exit(0)


_FILTER = [None]


def _wait_until(pid, deadline):
    """The child's (status, rusage) once it ends, or (-1, rusage) after killing it at
    ``deadline`` (monotonic).  Sleeps in the kernel on a pidfd where there is one: a
    poll of ``wait4`` every half millisecond cost the zygote a third of the suite's CPU
    in pyspec jobs (mostly system time); without a pidfd, the poll backs off to 5 ms."""
    try:
        pidfd = os.pidfd_open(pid)
    except (AttributeError, OSError):
        pidfd = None
    if pidfd is not None:
        try:
            while True:
                left = deadline - time.monotonic()
                if left <= 0 or select.select([pidfd], [], [], left)[0]:
                    break
        finally:
            os.close(pidfd)
        done, status, usage = os.wait4(pid, os.WNOHANG)
        if done:
            return status, usage
    else:
        pause = 0.0002
        while time.monotonic() <= deadline:
            done, status, usage = os.wait4(pid, os.WNOHANG)
            if done:
                return status, usage
            time.sleep(pause)
            pause = min(pause * 2, 0.005)
    os.kill(pid, signal.SIGKILL)
    _, _, usage = os.wait4(pid, 0)
    return -1, usage


def _zygote(control, preamble, source, case_seconds, case_timer=False):
    base = {"__name__": "__postcondition__", "__builtins__": __builtins__}
    harness_error = compile_error = ""
    try:
        for name in PRELOADED:
            __import__(name)
        import wire  # noqa: F401 - loaded before the filter, used by every child
        exec(compile(preamble, "<preamble>", "exec"), base)  # noqa: S102 - benchmark text
        _FILTER[0] = _make_filter(ANSWER_FD)
    except BaseException as exc:  # noqa: BLE001 - the benchmark's preamble or no libseccomp: the harness's
        harness_error = _one_line(f"{type(exc).__name__}: {exc}")
    try:
        code = compile(source, "<postcondition>", "exec")
    except BaseException as exc:  # noqa: BLE001 - SyntaxError, RecursionError, MemoryError, ...: the answer's
        code, compile_error = None, "does not compile: " + _one_line(f"{type(exc).__name__}: {exc}")
    while True:
        msg, fds, _, _ = socket.recv_fds(control, 32, 2)
        if not msg or len(fds) != 2:
            os._exit(0)
        case_fd, answer_fd = fds
        count, _, left = msg[1:].partition(b":")  # b"c<cases>[:<CPU seconds left>]", from the keeper
        count, left = int(count or b"1"), float(left) if left else None
        # A child reads every case, even when nothing will run: the case pipe then
        # holds the next child's case only.
        fixed = {"kind": "harness", "exc": "", "line": harness_error} if harness_error else \
            {"kind": "raised", "exc": "CompileError", "line": compile_error} if code is None else None
        pid = os.fork()
        if pid == 0:
            control.close()
            _case_child(case_fd, answer_fd, base, code, case_seconds, fixed, left, case_timer)
        os.close(case_fd)
        os.close(answer_fd)
        # The child's CPU limit (the same figure as in _case_child) ends a child that spins; this
        # wall deadline only one the machine does not run (it cannot sleep: module docstring), so
        # it may be generous: waiting costs no CPU.
        limit = max(1, int((case_seconds * count if left is None else min(case_seconds * count, left)) + 0.999))
        deadline = time.monotonic() + DEADLINE_FACTOR * (limit + 1)
        status, usage = _wait_until(pid, deadline)
        # The child's CPU seconds as the kernel counted them (its rusage, read here, where no
        # answer code runs): the keeper's measure of the answer's time (never the child's word).
        cpu = usage.ru_utime + usage.ru_stime
        # "e": the harness failed before any answer ran (only the zygote can say so);
        # "w": killed at the wall deadline, before its CPU limit: the machine's load;
        # "t": its CPU limit ended it (SIGXCPU, or SIGKILL at the hard limit), "p": a case's CPU timer
        # did (SIGPROF): the answer's time, both.
        signalled = os.WTERMSIG(status) if status != -1 and os.WIFSIGNALED(status) else None
        control.sendall((b"e" if harness_error else b"w" if status == -1
                         else b"t" if signalled in (signal.SIGXCPU, signal.SIGKILL)
                         else b"p" if signalled == signal.SIGPROF else b"d") + struct.pack("!d", cpu))


def _read_end(sock):
    """The zygote's word on a child's end: (status byte, the child's CPU seconds); (b"", 0) when it is gone."""
    got = b""
    while len(got) < 9:
        chunk = sock.recv(9 - len(got))
        if not chunk:
            return b"", 0.0
        got += chunk
    return got[:1], struct.unpack("!d", got[1:])[0]


def _one_batch(keeper_sock, data, count, spent=None, left=None):
    """Hand one batch of ``count`` cases to a fresh child (through pipes of its
    own) and read its answers, one per case; ``spent`` (a one-item list) gets
    the child's CPU seconds added, as the zygote measured them; ``left``: the
    most CPU seconds the child may spend.  When a CPU limit ended the child, the
    case it was on is a time-out (marked ``"limit"``: ``"case"``, its own timer,
    or ``"batch"``, the child's) and the cases after it, never started, are
    marked ``"again": True`` (the keeper hands them to a fresh child)."""
    case_r, case_w = os.pipe()
    answer_r, answer_w = os.pipe()
    try:
        socket.send_fds(keeper_sock, [b"c" + str(count).encode() + (b"" if left is None else b":%.3f" % left)],
                        [case_r, answer_w])
    except OSError:
        ended = b""
    else:
        ended = None
    os.close(case_r)
    os.close(answer_w)
    try:
        os.write(case_w, len(data).to_bytes(8, "big"))
        view = memoryview(data)
        while view:
            view = view[os.write(case_w, view[:1 << 16]):]
    except OSError:  # the child ended before reading its cases (it is told below)
        pass
    os.close(case_w)
    measured = 0.0
    if ended is None:
        ended, measured = _read_end(keeper_sock)
    got = b""
    while len(got) < ANSWER_BYTES * count:
        ready, _, _ = select.select([answer_r], [], [], 0)
        if not ready:
            break
        chunk = os.read(answer_r, ANSWER_BYTES * count - len(got))
        if not chunk:
            break
        got += chunk
    os.close(answer_r)
    if not ended:
        return [{"kind": "harness", "exc": "", "line": "the spec service's zygote ended", "zygote_ended": True}] * count
    lines = got.split(b"\n")
    setup = None
    try:
        head = json.loads(lines[0]) if lines else None
    except ValueError:
        head = None
    if isinstance(head, dict) and set(head) == {"setup"}:  # the harness's own first line (module docstring)
        setup, lines = head["setup"], lines[1:]
    if spent is not None:  # the answer's CPU: the child's, less the harness's decoding of its cases
        spent[0] += max(0.0, measured - (setup if type(setup) in (int, float) and 0 <= setup <= measured else 0.0))
    out, cut = [], False
    for i in range(count):
        try:
            first = json.loads(lines[i]) if i < len(lines) else None
        except ValueError:
            first = None
        if not isinstance(first, dict):
            first = {}
        if ended == b"e":  # the harness failed before any answer ran: only the zygote can say so
            out.append({"kind": "harness", "exc": "", "line": _one_line(first.get("line", ""))})
        elif ended == b"w" and first.get("kind") not in ("holds", "violated", "raised"):
            out.append({"kind": "budget", "exc": "", "line": "the spec process got too little CPU before its "
                                                           "wall-clock deadline (the machine's load)"})
        elif first.get("kind") in ("holds", "violated", "raised"):
            cpu = first.get("cpu")
            out.append({"kind": first["kind"], "exc": _one_line(first.get("exc", ""), 100),
                        "line": _one_line(first.get("line", "")),
                        # the child's own figure: it speaks for its own case only, as its kind does
                        "cpu": float(cpu) if type(cpu) in (int, float) and 0 <= cpu < 1e6 else None})
        elif ended in (b"t", b"p") and cut:  # after the case a CPU limit ended: never started
            out.append({"kind": "raised", "exc": "", "line": "timeout", "again": True})
        elif ended in (b"t", b"p"):
            out.append({"kind": "raised", "exc": "", "line": "timeout", "limit": "case" if ended == b"p" else "batch"})
            cut = True
        else:
            out.append({"kind": "raised", "exc": "", "line": "the spec process ended without an answer"})
    _charge_unexplained(out, measured, setup)
    return out


def _charge_unexplained(outs, measured, setup):
    """Each answer's ``cpu`` is the child's own figure, and the child runs the answer, so
    it could write a small one.  The zygote's figure for the whole child (its rusage) is
    not the child's to write: what it holds beyond the harness's setup and the sum of the
    figures claimed (less a slack for the harness's own per-case work) is charged to every
    answered case of the batch.  A child that under-reports one case raises them all by
    what it hid; an honest one changes nothing (``--nl2postcond-time=upstream``)."""
    answered = [o for o in outs if o.get("kind") in ("holds", "violated", "raised") and "cpu" in o]
    if not answered or type(setup) not in (int, float) or not 0 <= setup < 1e6:
        for o in answered:  # no setup line: a harness fault or a fixed answer; nothing to trust
            o["cpu"] = None
        return
    claimed = sum(o["cpu"] or 0.0 for o in answered)
    hidden = measured - setup - claimed - (CHARGE_SLACK + CHARGE_SLACK_PER_CASE * len(outs)
                                           + CHARGE_SLACK_OF_SETUP * setup)
    if hidden > 0:
        for o in answered:
            o["cpu"] = (o["cpu"] or 0.0) + hidden


def _non_dumpable():
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_DUMPABLE, 0)")


def warm_zygote(argv, fd):
    """The zygote of a warm-started job (``CommandJob.warm``, the sandbox's
    ``execution/warm.py``): a process of the job cloned from an image without
    Hypothesis or the search, as the forked zygote below is; it reads the answer's
    text and the preamble, says so on its socket (the keeper then deletes the
    configuration) and serves the keeper."""
    _non_dumpable()
    control = socket.socket(fileno=fd)
    with open(argv[1]) as fh:
        cfg = json.load(fh)
    preamble, source, case_seconds = cfg["preamble"], cfg["source"], float(cfg["case_seconds"])
    case_timer = bool(cfg.get("case_timer"))
    del cfg
    control.sendall(b"r")
    try:
        _zygote(control, preamble, source, case_seconds, case_timer)
    finally:
        os._exit(0)


def warm_keeper(argv, fd, zygote_pid):
    """The keeper of a warm-started job: :func:`main` with the zygote the sandbox
    cloned beside it (its socket, ``fd``)."""
    if "hypothesis.configuration" in sys.modules:  # the image imported Hypothesis, which read its
        # storage folder's place then (the image's working directory): this job's own, as an exec'd job's
        sys.modules["hypothesis.configuration"].set_hypothesis_home_dir(os.path.join(os.getcwd(), ".hypothesis"))
    main(argv[1], zygote=(socket.socket(fileno=fd), zygote_pid))


def main(config_path, zygote=None):
    _non_dumpable()
    if zygote is not None:  # warm: the zygote reads the configuration too; deleted once it has
        keeper_sock, pid = zygote
        keeper_sock.recv(1)  # b"r" (nothing: it ended, which the first batch reports)
    with open(config_path) as fh:
        cfg = json.load(fh)
    os.unlink(config_path)
    channel = os.dup(3)
    os.set_inheritable(channel, False)
    os.close(3)
    nonce = cfg["nonce"]
    if zygote is None:
        keeper_sock, zygote_sock = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        pid = os.fork()
        if pid == 0:  # the zygote: nothing of the keeper's but the answer's text and the preamble
            os.close(channel)
            keeper_sock.close()
            cfg["nonce"] = nonce = None
            try:
                _zygote(zygote_sock, cfg["preamble"], cfg["source"], float(cfg["case_seconds"]),
                        bool(cfg.get("case_timer")))
            finally:
                os._exit(0)
        zygote_sock.close()
    del cfg["source"]

    def record(obj):
        obj["nonce"] = nonce
        data = (json.dumps(obj, ensure_ascii=True) + "\n").encode("ascii")
        while data:
            data = data[os.write(channel, data):]

    record({"event": "start"})
    if cfg.get("search"):  # the pbt tier: Hypothesis here, one fresh child per case (specbench_search.py)
        with open(cfg["search"]) as fh:  # read only now: the zygote never held it
            search = json.load(fh)
        os.unlink(cfg["search"])
        import specbench_search
        import wire

        def ask(case):
            out = _one_batch(keeper_sock, wire.dumps([case]).encode(), 1)[0]
            out.pop("limit", None)
            if out["kind"] == "budget":  # the search's readers know a time-out (never a refutation) by this form
                out = {"kind": "raised", "exc": "", "line": "timeout (" + out["line"] + ")"}
            return out

        specbench_search.run(search, ask, record)
        batches = []
        decisive = set()
    else:
        with open(cfg["cases"], "rb") as fh:  # read only now: the zygote never held a case
            # {"batches": [[[case index, ...], [each one's wire text, ...]], ...], "decisive": [case index, ...]}
            given = json.loads(fh.read())
        os.unlink(cfg["cases"])
        batches, decisive = given["batches"], set(given.get("decisive") or ())
        del given
    # The answer's CPU budget for the whole job, counted from the children's rusage: once it is
    # spent, no further batch starts, and the cases left are the answer's time-outs (F).  The
    # job's own limits (the sandbox's) stay the outer wall.
    budget, spent = float(cfg.get("cpu_budget") or 0), [0.0]
    decided = False  # a decisive case did not hold: what is left is not evaluated (module docstring)
    gone = False  # the zygote ended: no child can start
    for indices, texts in batches:
        if gone:
            break
        pending = list(zip(indices, texts))
        while pending:
            if decided:
                for index, _ in pending:
                    record({"case": index, "kind": "skipped", "exc": "", "line": SKIPPED_LINE})
                break
            if budget and spent[0] >= budget:
                for index, _ in pending:
                    record({"case": index, "kind": "raised", "exc": "",
                            "line": f"timeout (the postcondition spent the evaluation's {budget:g} CPU seconds)"})
                break
            left = budget - spent[0] if budget else None
            # a list's wire text is its items' joined: the same bytes as the whole batch's encoding
            blob = ("[" + ",".join(text for _, text in pending) + "]").encode()
            outs = _one_batch(keeper_sock, blob, len(pending), spent, left)
            again, batch_limit = [], False
            for (index, text), out in zip(pending, outs):
                if out.pop("again", False) and cfg.get("case_timer"):  # after a time-out in that child: never started
                    again.append((index, text))
                    continue
                batch_limit = batch_limit or out.pop("limit", None) == "batch"
                record({"case": index, **out})
                decided = decided or (index in decisive and out["kind"] != "holds")
            if left is not None and left < float(cfg["case_seconds"]) * len(pending) and batch_limit:
                # The child's CPU limit was what was left of the budget, and it met it: the budget is
                # spent, though the kernel's count may stop a tick short of it (RLIMIT_CPU is checked
                # at the scheduler's tick): no further batch starts on a sliver.
                spent[0] = max(spent[0], budget)
            if outs and outs[0].get("zygote_ended"):
                gone = True
                break
            pending = again
    record({"event": "cpu", "seconds": round(spent[0], 6)})
    keeper_sock.close()
    if zygote is None:  # (a warm job's zygote is the sandbox's child: it reaps it)
        os.waitpid(pid, 0)
    record({"event": "finish"})


if __name__ == "__main__":
    main(sys.argv[1])
