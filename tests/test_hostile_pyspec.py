"""Hostile PostcondBench (Python) answers against the Python-spec service's wall
(issue 41): the answer runs only in a spec child that holds no channel, forked
from a non-dumpable keeper (pytest_specbench/pyspec/spec_process.py).

Two layers, one test per route:

* the screen (``source.parse_answer``, in-process): the eleven answers of the
  issue, written as the screen saw them, are refused (``parse_error``);
* the wall, with the screen bypassed (full Python in the answer): each case is
  one guarded function ``fK`` of one module with one test; all cases that stay
  inside their own child run in ONE sandboxed pytest job on the original (where
  a forged ``correct`` would show) and ONE on a mutant (where a forged kill
  would show), between controls whose verdicts must not move.  The routes that
  stop or kill the keeper itself get a job of their own.

Expected verdicts: a false postcondition stays not ``passed``; an answer true
on the original never kills the mutant by tampering (``failed``: the mutant
fails its test, nothing was violated).  An answer that lies about its OWN
clauses inside its child (patching icontract there, writing its own outcome)
gets the verdicts of ``lambda result: True``: correct, never a kill — that
much any process that runs the answer can do (docs/postcond.md, "Verdicts").
"""
from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from pytest_specbench.benchmarks.postcond import execute, source, verdict

pytestmark = pytest.mark.slow  # (two batched jobs and four single ones: scheduled first, tests/conftest.py)

N_TESTS_LINE = "assert mod.f{k}(2) == 4"
FALSE = "result == x * 2 + 1"  # false on the original (f(2) == 4)
TRUE = "True"


def lam(code: str, base: str) -> str:
    """A condition that runs ``code`` (full Python, as with the screen bypassed), then is ``base``."""
    return f"@icontract.ensure(lambda x, result: exec({code!r}, {{'x': x, 'result': result}}) or ({base}))"


def early(code: str, base: str) -> str:
    """``code`` runs when the decorators are built (a lambda default), before any condition."""
    return f"@icontract.ensure(lambda x, result, _a=exec({code!r}, {{}}): {base})"


RUNNER = "import sys\nR = sys.modules['specbench_postcond_runner']\n"
FORGED = ("import json\nrecs = [json.dumps({'event': e, 'nodeid': n, 'when': 'call', 'outcome': 'passed', "
          "'exitstatus': 0, 'nodeids': [], 'nonce': NONCE}) + '\\n' for e in ('phase', 'finish') for n in NODEIDS]\n")
NODEIDS = "NODEIDS = ['tests/test_mod.py::test_f%d' % k for k in range(200)]\n"

# name -> (answer on the original, answer on the mutant, expected on the original, expected on the mutant)
CASES: dict[str, tuple[str, str, str, str]] = {}


def case(name, code, when=lam, orig="icontract_fail", mut="failed"):
    """One route: ``code`` with a false base on the original and a true base on the mutant."""
    CASES[name] = (when(code, FALSE), when(code, TRUE), orig, mut)


CONTROLS = {
    "control_reference": ("@icontract.ensure(lambda x, result: result == x * 2)",) * 2 + ("passed", "icontract_fail"),
    "control_true": ("@icontract.ensure(lambda result: True)",) * 2 + ("passed", "failed"),
    "control_partial": ("@icontract.ensure(lambda x, result: result >= x)",) * 2 + ("passed", "failed"),
}

# --- the eleven of the issue, with the screen bypassed
case("comprehension_target_runs_code", RUNNER + "R._emit = lambda rec: None", when=lambda c, b:
     f"@icontract.ensure(lambda x, result: [0 for {{}}[exec({c!r}, {{}})] in [1]] == 7 or ({b}))")
case("emit_rewritten_failures_read_as_passed", RUNNER + "o = R._emit\nR._emit = lambda r: o({**r, 'outcome': 'passed'})")
case("emit_rewritten_failures_read_as_violations",
     RUNNER + "o = R._emit\nR._emit = lambda r: o({**r, 'violation': True})", when=early)
case("nonce_and_fd_through_gc_then_exit", NODEIDS + """
import gc, os, json
for o in gc.get_objects():
    if isinstance(o, dict) and '_emit' in o and '_FD' in o:
        NONCE = bytes(o['_NONCE']).decode()
        """ + FORGED.replace("\n", "\n        ") + """
        for r in recs:
            try:
                os.write(o['_FD'], r.encode())
            except OSError:
                pass
os._exit(0)
""", orig="local_crash", mut="local_crash")
case("records_sprayed_into_every_fd", NODEIDS + "NONCE = 'x' * 32\n" + FORGED + """
import os
for pid in ('self', str(os.getppid())):
    for name in os.listdir('/proc/%s/fd' % pid) if os.access('/proc/%s/fd' % pid, os.R_OK) else []:
        try:
            fd = os.open('/proc/%s/fd/%s' % (pid, name), os.O_WRONLY)
            for r in recs:
                os.write(fd, r.encode())
        except OSError:
            pass
""", orig="local_crash", mut="local_crash")  # (its own outcome pipe got the forged lines too: more than one outcome)
# (these two lie about their own clause inside their child: the verdicts of `lambda result: True`)
case("contract_conditions_set_constant", """
import icontract._types as t
t.Contract.condition = property(lambda self: (lambda *a, **k: True), lambda self, value: None)
""", when=early, orig="passed")
case("icontract_checker_noop", "import icontract._checkers as c\nc._assert_postconditions = lambda **k: None",
     when=early, orig="passed")
case("pytest_runtest_noop", "import _pytest.python as p\np.Function.runtest = lambda self: None", when=early)
case("runner_violation_class_widened", RUNNER + "R._VIOLATION = BaseException", when=early)
case("builtins_assertion_error_is_violation",
     "import builtins, icontract\nbuiltins.AssertionError = icontract.ViolationError", when=early)
case("atexit_writes_violation_records", NODEIDS + "NONCE = 'x' * 32\n" + FORGED + """
import atexit, os
def forge():
    for fd in range(3, 64):
        try:
            os.write(fd, ''.join(recs).encode())
        except OSError:
            pass
atexit.register(forge)
""")

# --- every other route
case("frames_up_to_pytest_call_info", """
import sys
f = sys._getframe()
while f is not None:
    for k, v in list(f.f_locals.items()):
        if type(v).__name__ in ('CallInfo', 'TestReport'):
            v.excinfo = None
            v.outcome = 'passed'
    f = f.f_back
""")
case("sys_modules_icontract_replaced", """
import sys, types
fake = types.ModuleType('icontract')
fake.ViolationError = AssertionError
sys.modules['icontract'] = fake
sys.modules['icontract.errors'] = fake
""", when=early)
case("signal_handlers_replaced", "import signal\nfor s in (signal.SIGINT, signal.SIGTERM): signal.signal(s, signal.SIG_IGN)")
case("ptrace_attach_keeper", """
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
if libc.ptrace(16, os.getppid(), 0, 0) == 0:  # PTRACE_ATTACH
    raise SystemError('ptrace of the keeper succeeded')
""")
case("proc_mem_of_keeper", """
import os
try:
    open('/proc/%d/mem' % os.getppid(), 'r+b').close()
    raise SystemError('/proc/PPID/mem opened')
except PermissionError:
    pass
""")
case("proc_fd_of_keeper", """
import os
try:
    os.listdir('/proc/%d/fd' % os.getppid())
    raise SystemError('/proc/PPID/fd listed')
except PermissionError:
    pass
""")
case("pidfd_getfd_of_keeper", """
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
pidfd = os.pidfd_open(os.getppid())
for fd in range(64):
    if libc.syscall(438, pidfd, fd, 0) >= 0:  # pidfd_getfd
        raise SystemError('got a descriptor of the keeper')
""")
case("process_vm_writev_into_keeper", """
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
buf = ctypes.create_string_buffer(8)
class iov(ctypes.Structure):
    _fields_ = [('base', ctypes.c_void_p), ('len', ctypes.c_size_t)]
local = iov(ctypes.addressof(buf), 8)
remote = iov(ctypes.addressof(buf), 8)
if libc.process_vm_writev(os.getppid(), ctypes.byref(local), 1, ctypes.byref(remote), 1, 0) >= 0:
    raise SystemError('wrote into the keeper')
""")
case("thread_survives_to_forge", NODEIDS + "NONCE = 'x' * 32\n" + FORGED + """
import os, threading, time
def later():
    time.sleep(0.2)
    for fd in range(3, 64):
        try:
            os.write(fd, ''.join(recs).encode())
        except OSError:
            pass
threading.Thread(target=later, daemon=False).start()
""")
case("grandchild_survives_to_forge", NODEIDS + "NONCE = 'x' * 32\n" + FORGED + """
import os, time
if os.fork() == 0:
    os.setsid()
    for _ in range(10):
        time.sleep(0.05)
        for path in ['/proc/%d/fd/%d' % (os.getppid(), n) for n in range(3, 16)]:
            try:
                fd = os.open(path, os.O_WRONLY)
                os.write(fd, ''.join(recs).encode())
            except OSError:
                pass
    os._exit(0)
""")
case("del_hook_at_exit", NODEIDS + "NONCE = 'x' * 32\n" + FORGED + """
import builtins, os
class Bomb:
    def __del__(self):
        for fd in range(3, 64):
            try:
                os.write(fd, ''.join(recs).encode())
            except OSError:
                pass
builtins._bomb = Bomb()
""", orig={"icontract_fail", "local_crash"}, mut={"failed", "local_crash"})  # (icontract re-runs a violated
# condition to render its message: the first Bomb dies then, in the child, and writes on its own pipe)
case("hostile_str_of_exception", """
import sys
class E(Exception):
    def __str__(self):
        sys.modules['specbench_postcond_runner']._emit = lambda r: None
        return 'x' * 10**6
raise E()
""", orig="local_crash", mut="local_crash")
case("base_exception_subclass", "class Escape(BaseException): pass\nraise Escape('out')", orig="local_crash",
     mut="local_crash")
case("system_exit_zero", "raise SystemExit(0)", orig="local_crash", mut="local_crash")
case("keyboard_interrupt", "raise KeyboardInterrupt()", orig="local_crash", mut="local_crash")
case("output_flood", "import os\nfor _ in range(200):\n    os.write(1, b'{\"event\": \"finish\"}\\n' * 5000)\n"
     "    os.write(2, b'x' * 100000)")
case("own_outcome_pipe_flooded", """
import os
for fd in range(3, 64):
    try:
        os.write(fd, b'{"kind": "holds", "line": ""}\\n' * 5000)
    except OSError:
        pass
""", orig="local_crash", mut="local_crash")
case("own_outcome_written_then_exit", """
import os
for fd in range(3, 64):
    try:
        os.write(fd, b'{"kind": "holds", "line": ""}\\n')
    except OSError:
        pass
os._exit(0)
""", orig="passed")  # (a lie about its own clause: the verdicts of `lambda result: True`)
# Four rounds: 16 processes (each then raises the violation on the original, whose message icontract
# builds from the source: ~50 ms each); six made 64, 3.3 of the original batch's 6.6 CPU s (session 21),
# far below the command job's 512 processes either way.
case("fork_bomb", """
import os
for _ in range(4):
    try:
        os.fork()
    except OSError:
        break
""", orig={"icontract_fail", "local_crash"}, mut={"failed", "local_crash"})
case("module_planted_for_the_keeper", """
import os
for name in ('pprint', 'difflib', 'specbench_evil'):
    with open(name + '.py', 'w') as fh:
        fh.write('import icontract\\nraise icontract.ViolationError("planted")\\n')
""")
case("os_exit_inside_condition", "import os\nos._exit(0)", orig="local_crash", mut="local_crash")
case("violation_raised_directly", "import icontract\nraise icontract.ViolationError('every call')",
     orig="icontract_fail", mut="icontract_fail")  # honest: it says violated everywhere, so never correct
case("memory_exhausted", "x = bytearray(1 << 34)", orig="local_crash", mut="local_crash")
case("guarded_function_replaced", "import mod\nmod.f0 = lambda x: 4\nimport builtins\nbuiltins.len = None",
     orig="local_crash")  # (icontract's message needs len: raised, in that child only; the mutant: not killed)


def _module(cases: dict, mutant: bool) -> tuple[str, str, dict, list[str], dict]:
    """(original file, keeper text, specs, tests, name -> (nodeid, first line, last line))."""
    original = "".join(f"def f{k}(x):\n    return x * 2\n\n\n" for k in range(len(cases)))
    head = source.HEAD + "\n\n\n"
    child, keeper, specs, where, line = [head], [head], {}, {}, 4
    for k, (name, answers) in enumerate(cases.items()):
        answer = answers[1 if mutant else 0]
        decorators = textwrap.dedent(answer).strip("\n") + "\n"
        n = decorators.count("\n")
        body = f"def f{k}(x):\n    return x * {3 if mutant else 2}\n\n\n"
        child += [decorators, body]
        keeper += [f"@{source.GUARD_NAME}('{k}')\n" + "\n" * (n - 1), body]
        where[name] = (f"tests/test_mod.py::test_f{k}", line, line + n + 1)
        specs[str(k)] = {"decorators": decorators, "first_line": line, "text": None}
        line += n + 4
    text = "".join(child)
    for spec in specs.values():
        spec["text"] = text
    tests = "import mod\n\n\n" + "".join(f"def test_f{k}():\n    {N_TESTS_LINE.format(k=k)}\n\n\n"
                                         for k in range(len(cases))) + PLANTED_PROBE
    return original, "".join(keeper), specs, tests, where


# Last in the file: a module a spec child wrote into the job's folder is not importable by the keeper.
PLANTED_PROBE = """
def test_zz_planted_modules_are_not_importable():
    import importlib, importlib.util, os
    importlib.invalidate_caches()
    found = [importlib.util.find_spec(m) for m in ('pprint', 'difflib', 'specbench_evil')]
    assert os.path.exists('specbench_evil.py')  # (planted by the case above)
    assert not [s.origin for s in found if s is not None and s.origin.startswith(os.getcwd())]
"""


def _run_batch(command, root: Path, cases: dict, mutant: bool, timeout: float = 120) -> dict[str, dict]:
    """One sandboxed pytest job over every case; the verdict of each case's test."""
    original, keeper, specs, tests, where = _module(cases, mutant)
    root.mkdir(parents=True, exist_ok=True)
    (root / "mod.py").write_text(original)
    (root / "tests").mkdir(exist_ok=True)
    (root / "tests" / "test_mod.py").write_text(tests)
    for path in (root, root / "tests"):
        path.chmod(0o755)
    ids = [nodeid for nodeid, _, _ in where.values()] + ["tests/test_mod.py::test_zz_planted_modules_are_not_importable"]
    job, nonce = execute.runner_job(root, "mod.py", keeper, specs, ids, True, timeout, "python")
    prepared = command.prepare(execute.environment_for({"repo": {"env": "harness"}}, root))
    result = command.run(prepared, job)
    records = verdict.genuine(result.records, nonce)
    out = {"planted": next((r.get("outcome") for r in records if r.get("when") == "call"
                            and r.get("nodeid", "").endswith("test_zz_planted_modules_are_not_importable")), None)}
    for name, (nodeid, first, last) in where.items():
        # (the whole run's exit status is not this test's: other cases fail by design)
        mine = [r for r in records if r.get("nodeid") == nodeid]
        mine += [{"event": "finish", "exitstatus": 0} for r in records if r.get("event") == "finish"]
        if any(r.get("event") == "collected" and nodeid in (r.get("nodeids") or ()) for r in records):
            mine.append({"event": "collected", "nodeids": [nodeid]})
        out[name] = verdict.decide(mine, bool(result.timed_out), first, last)
    return out


@pytest.fixture(scope="module")
def batches(request, made_once, tmp_path_factory):
    """Both jobs, every in-child route between the controls (twice: first and last); once
    for the session (under xdist, by the first worker whose tests need them)."""
    cases = {**CONTROLS, **CASES, **{k + "_again": v for k, v in CONTROLS.items()}}

    def run_both():
        command = request.getfixturevalue("command")
        return {which: _run_batch(command, tmp_path_factory.mktemp(f"hostile-{which}"), cases, which == "mutant")
                for which in ("original", "mutant")}
    return made_once("batches", run_both)


def _expect(got: dict, want) -> None:
    wants = {want} if isinstance(want, str) else want
    assert got["verdict"] in wants, got
    if got["verdict"] != "passed":
        assert got["reason"] and "\n" not in got["reason"], got


@pytest.mark.parametrize("name", [*CONTROLS, *(k + "_again" for k in CONTROLS)])
def test_controls_keep_their_verdicts_around_the_attacks(batches, name):
    _, _, orig, mut = CONTROLS[name.removesuffix("_again")]
    _expect(batches["original"][name], orig)
    _expect(batches["mutant"][name], mut)


def test_modules_a_spec_child_plants_are_never_imported_by_the_keeper(batches):
    assert batches["original"]["planted"] == batches["mutant"]["planted"] == "passed"


@pytest.mark.parametrize("name", list(CASES))
def test_route_forges_nothing(batches, name):
    _, _, orig, mut = CASES[name]
    _expect(batches["original"][name], orig)
    _expect(batches["mutant"][name], mut)
    # never both: a correct set that kills the mutant by tampering
    assert not (batches["original"][name]["verdict"] == "passed" and batches["mutant"][name]["verdict"] == "icontract_fail")


# ------------------------------------------------------------ routes that stop the keeper itself


@pytest.mark.parametrize("name, code, want", [
    ("signal_kills_keeper", "import os, signal\nos.kill(os.getppid(), signal.SIGKILL)", "local_crash"),
    ("signal_interrupts_keeper", "import os, signal\nos.kill(os.getppid(), signal.SIGINT)", {"failed", "local_crash"}),
    ("signal_stops_keeper", "import os, signal\nos.kill(os.getppid(), signal.SIGSTOP)", "timeout"),
    ("sleeps_past_the_limit", "import time\ntime.sleep(60)", "timeout"),
])
def test_route_against_the_keeper_is_a_failure(command, tmp_path, name, code, want):
    cases = {name: (early(code, TRUE), early(code, TRUE), None, None), "control_reference": CONTROLS["control_reference"]}
    out = _run_batch(command, tmp_path, cases, mutant=True, timeout=8 if want == "timeout" else 30)
    _expect(out[name], want)  # the route is a failure, never a pass or a kill
    # The control after it fails with the keeper, or, where the keeper outlived the route (a
    # SIGINT that reached it while it waited for the spec child is that test's failure), gets
    # its own honest verdict on the mutant: the reference kills it.
    wants = {want} if isinstance(want, str) else set(want)
    _expect(out["control_reference"], wants | {CONTROLS["control_reference"][3]})


# ------------------------------------------------------------ the screen: the eleven as written


@pytest.mark.parametrize("answer", [
    "@icontract.ensure(lambda result: [0 for {}[sys.modules] in [1]] or True)",
    "@icontract.ensure(lambda result, d=[0 for {}[print(1)] in [1]]: True)",
    "@icontract.ensure(lambda result: [0 for result.attr in [1]] or True)",
    "@icontract.ensure(lambda result: [0 for [a, {}[b]] in [[1, 2]]] or True)",
    "@icontract.ensure(lambda result: [0 for {}[__import__('gc')] in [1]] or True)",
    "@icontract.ensure(lambda result: {k: 0 for {}[k] in [1]} or True)",
])
def test_screen_refuses_comprehension_targets_that_are_not_names(answer):
    with pytest.raises(source.AnswerError, match="comprehension target"):
        source.parse_answer(answer, "def gcd(a, b):\n    return a\n")


@pytest.mark.parametrize("answer", [
    "@icontract.ensure(lambda result: setattr(sys.modules['specbench_postcond_runner'], '_emit', print) or True)",
    "@icontract.ensure(lambda result: [o for o in gc.get_objects() if isinstance(o, dict) and '_FD' in o] or True)",
    "@icontract.ensure(lambda result: [open('/proc/self/fd/%d' % n, 'w') for n in range(9)] or True)",
    "@icontract.ensure(lambda result: [setattr(c, 'condition', bool) for c in []] or True)",
    "@icontract.ensure(lambda result: setattr(icontract._checkers, '_assert_postconditions', print) or True)",
    "@icontract.ensure(lambda result: setattr(Function, 'runtest', print) or True)",
    "@icontract.ensure(lambda result: specbench_postcond_runner._VIOLATION and True)",
    "@icontract.ensure(lambda result: setattr(builtins, 'AssertionError', ValueError) or True)",
    "@icontract.ensure(lambda result: atexit.register(print) or True)",
    "@icontract.ensure(lambda a, b, result: gcd.__wrapped__.__code__.co_code == b'' or True)",
])
def test_screen_refuses_the_other_ten_of_the_issue(answer):
    with pytest.raises(source.AnswerError):
        source.parse_answer(answer, "def gcd(a, b):\n    return a\n")
