"""Hostile samples against the sandbox: each gets the right verdict, in bounded
time, and leaves no process behind.

Faults use :class:`PythonExecutor` directly; cheats go through the checks the
harness uses (``functional_check``, the contract check) and must not pass what
the sample did not do.  The last tests run the plugin on the bundled suite with
a replay file of cheating samples.  ``OBSERVED`` collects (fault, verdict,
seconds) rows; ``tests/conftest.py`` prints them as a table.
"""
from __future__ import annotations

import json
import os
import signal
import socket
import threading
import time
from pathlib import Path

import _pytest.nodes
import pytest

from pytest_specbench.benchmarks.contract.contract import ADAPTER as CONTRACT
from pytest_specbench.benchmarks.contract.evalplus import bundled_folder
from pytest_specbench.execution.limits import Limits
from pytest_specbench.execution.python import CallsJob, JobResult, PythonExecutor
from pytest_specbench.models.base import Completion
from fakes import FakeSettings, fake_context

# startup_cpu 0.5: the samples here define their functions in milliseconds; the loop that
# swallows every timer runs until the CPU rlimit, int(call_cpu + startup_cpu) + 1 s (1 s, was 2 s).
LIMITS = Limits(call_cpu=0.3, startup_cpu=0.5, memory_mb=512, processes=16, tmp_mb=16)
PROJECT = Path(__file__).resolve().parents[1]
ROOT = os.geteuid() == 0
needs_root = pytest.mark.skipif(not ROOT, reason="needs root: a uid of its own per sandbox (and RLIMIT_NPROC on it)")
TIME_BOUND = 60.0  # a hang guard, not a speed check (each job is stopped by its limits in about a second; the machine may be loaded)

OBSERVED: list[tuple[str, str, float]] = []


HIDE = [str(PROJECT)]


@pytest.fixture(scope="module")
def executor(python_executor):
    return python_executor


# ------------------------------------------------------------------ helpers

def _proc_table() -> list[dict]:
    rows = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as fh:
                after = fh.read().rsplit(b")", 1)[1].split()
            with open(f"/proc/{entry}/status") as fh:
                uid = int(next(line for line in fh if line.startswith("Uid:")).split()[1])
        except (OSError, StopIteration, IndexError):
            continue
        rows.append({"pid": int(entry), "state": after[0].decode(), "ppid": int(after[1]),
                     "pgrp": int(after[2]), "session": int(after[3]), "uid": uid})
    return rows


def leftovers(executor: PythonExecutor, result: JobResult) -> list[dict]:
    """Processes of the sandbox's uid or of the child's process group/session, after a short grace."""
    uid = executor.isolation.get("uid")
    deadline = time.monotonic() + 3.0
    while True:
        found = [p for p in _proc_table()
                 if (uid is not None and p["uid"] == uid)
                 or (result.pid is not None and result.pid in (p["pgrp"], p["session"]))]
        if not found or time.monotonic() > deadline:
            return found
        time.sleep(0.05)


def verdict_of(result: JobResult) -> str:
    if result.outcomes:
        parts = []
        for i, o in sorted(result.outcomes.items()):
            parts.append(f"#{i} {o.status}" + (f" {o.exc_type}" if o.exc_type else "")
                         + (f" {o.value!r}"[:40] if o.status == "ok" else ""))
        text = "; ".join(parts)
        return text + (f" ({result.failure_reason()})" if len(result.outcomes) and not result.finished else "")
    return result.failure_reason() or "no answer"


# The limit of a call that must time out (the job's own: the executor's stays LIMITS.call_cpu):
# a loop stops at a third of the CPU it burnt at 0.3 s (session 21).
BURN = 0.1


def run_sample(executor, fault: str, code: str, calls=(((), {}),), entry: str = "f",
               call_cpu: float | None = None) -> JobResult:
    calls = list(calls)
    t0 = time.monotonic()
    result = executor.run(None, CallsJob(code, entry, f"faults:{fault}", lambda: calls, range(len(calls)),
                                         call_cpu=None if call_cpu is None else [call_cpu] * len(calls)))
    took = time.monotonic() - t0
    OBSERVED.append((fault, verdict_of(result), took))
    assert took < TIME_BOUND, f"{fault} took {took:.1f} s"
    left = leftovers(executor, result)
    assert not left, f"{fault} left processes behind: {left}"
    assert executor._proc.poll() is None, f"{fault} killed the zygote"
    return result


def only(result: JobResult):
    assert list(result.outcomes) == [0], verdict_of(result)
    return result.outcomes[0]


# ------------------------------------------------------------------- faults

def test_infinite_loop_times_out(executor):
    outcome = only(run_sample(executor, "infinite loop", "def f():\n    while True:\n        pass\n", call_cpu=BURN))
    assert outcome.status == "timeout"


def test_infinite_loop_that_swallows_the_timer_is_killed(executor):
    code = ("def f():\n    while True:\n        try:\n            while True:\n                pass\n"
            "        except BaseException:\n            pass\n")
    result = run_sample(executor, "loop swallowing timeouts", code)
    assert not result.outcomes or result.outcomes[0].status == "timeout"
    assert not (result.outcomes and result.outcomes[0].status == "ok")


def test_sleep_is_bounded_by_wall_time(executor):
    outcome = only(run_sample(executor, "sleep forever", "import time\ndef f():\n    time.sleep(3600)\n"))
    assert outcome.status == "timeout"


@needs_root
def test_fork_bomb_is_contained_and_cleaned_up(executor):
    code = ("import os\ndef f():\n    while True:\n        try:\n            os.fork()\n"
            "        except OSError:\n            pass\n")
    result = run_sample(executor, "fork bomb", code)
    assert not (result.outcomes and result.outcomes[0].status == "ok")


def test_orphans_that_leave_the_process_group_cannot_be_made(executor):
    # A Python sample cannot fork (python_child.forbid_fork, issue #50): the daemonizing fork
    # fails; the command executor's jobs, which may fork, keep the reaping (test_command_executor).
    code = ("import os, time\ndef f():\n    if os.fork() == 0:\n        os.setsid()\n"
            "        if os.fork() == 0:\n            time.sleep(3600)\n        os._exit(0)\n    return 1\n")
    outcome = only(run_sample(executor, "daemonized grandchild", code))
    assert (outcome.status, outcome.exc_type) == ("raise", "PermissionError")


def test_memory_bomb_gets_memory_error(executor):
    outcome = only(run_sample(executor, "memory bomb (one 16 GiB list)", "def f():\n    return [0] * (1 << 31)\n"))
    assert outcome.status == "raise" and outcome.exc_type == "MemoryError"


def test_growing_memory_bomb_is_stopped(executor):
    code = "def f():\n    blocks = []\n    while True:\n        blocks.append(bytearray(50 << 20))\n"
    outcome = only(run_sample(executor, "memory bomb (growing)", code))
    assert (outcome.status, outcome.exc_type) in (("raise", "MemoryError"), ("timeout", ""))


def test_deep_recursion_gets_recursion_error(executor):
    outcome = only(run_sample(executor, "deep recursion", "def f(n=0):\n    return f(n + 1)\n"))
    assert outcome.status == "raise" and outcome.exc_type == "RecursionError"


def test_recursion_past_the_c_stack_crashes_only_the_child(executor):
    code = "import sys\nsys.setrecursionlimit(10**8)\ndef f(n=0):\n    return f(n + 1)\n"
    result = run_sample(executor, "recursion past the C stack", code)
    assert not result.outcomes or result.outcomes[0].status != "ok"


def test_output_flood_is_capped_and_times_out(executor):
    code = "import sys\ndef f():\n    while True:\n        sys.stdout.write('x' * 65536)\n"
    result = run_sample(executor, "output flood", code, call_cpu=BURN)
    assert only(result).status == "timeout"
    assert len(result.output) <= LIMITS.output_bytes


def test_result_flood_is_cut_off(executor):
    # 10 MB of result data per call, forever: stays under the memory limit but
    # must not make the harness buffer without bound.
    small = Limits(**{**LIMITS.__dict__, "result_bytes": 4 << 20})
    ex = PythonExecutor(small, hide=[str(PROJECT)])
    try:
        ex.ensure_started()
        calls = [((), {})] * 50
        t0 = time.monotonic()
        result = ex.run(None, CallsJob("def f():\n    return 'x' * (10 << 20)\n", "f", "flood", lambda: calls, range(50)))
        took = time.monotonic() - t0
        OBSERVED.append(("result flood", f"{len(result.outcomes)} answers; {result.failure_reason()}", took))
        assert result.killed == "result data over the limit"
        assert len(result.outcomes) < 50
    finally:
        ex.close()


def test_segfault_through_ctypes_is_the_samples_failure(executor):
    result = run_sample(executor, "segfault (ctypes)", "import ctypes\ndef f():\n    return ctypes.string_at(0)\n")
    assert not result.outcomes and result.signal == signal.SIGSEGV


def test_os_abort_is_the_samples_failure(executor):
    result = run_sample(executor, "os.abort()", "import os\ndef f():\n    os.abort()\n")
    assert not result.outcomes and result.signal == signal.SIGABRT


@needs_root
def test_cannot_kill_the_zygote(executor):
    code = "import os, signal\ndef f():\n    os.kill(os.getppid(), signal.SIGKILL)\n    return 'alive'\n"
    outcome = only(run_sample(executor, "kill the zygote", code))
    assert outcome.status == "raise" and outcome.exc_type == "PermissionError"


@needs_root
def test_cannot_kill_pytest(executor):
    # Walk the getppid chain: child -> zygote -> this pytest process.
    code = ("import os, signal\ndef f():\n    zygote = os.getppid()\n"
            "    with open(f'/proc/{zygote}/stat') as fh:\n        pytest_pid = int(fh.read().rsplit(')', 1)[1].split()[1])\n"
            "    os.kill(pytest_pid, signal.SIGKILL)\n    return pytest_pid\n")
    outcome = only(run_sample(executor, "kill pytest (getppid chain)", code))
    assert outcome.status == "raise" and outcome.exc_type == "PermissionError"


@needs_root
def test_kill_everything_it_can_hurts_nobody_else(executor):
    code = "import os, signal\ndef f():\n    os.kill(-1, signal.SIGKILL)\n    return 1\n"
    run_sample(executor, "kill(-1, SIGKILL)", code)  # kills only its own uid, i.e. itself


@needs_root
def test_cannot_write_home_or_project(executor, tmp_path):
    home = os.path.realpath(os.path.expanduser("~"))
    targets = [os.path.join(home, "specbench-pwned.txt"), str(PROJECT / "specbench-pwned.txt")]
    code = ("def f(path):\n    with open(path, 'w') as fh:\n        fh.write('pwned')\n    return 'wrote'\n")
    result = run_sample(executor, "write to home and project", code, calls=[((t,), {}) for t in targets])
    for i, target in enumerate(targets):
        assert result.outcomes[i].status == "raise", verdict_of(result)
        assert not os.path.exists(target)


@needs_root
def test_cannot_see_the_project_or_home(executor):
    code = "import os\ndef f(path):\n    return sorted(os.listdir(path))\n"
    result = run_sample(executor, "list project dir", code, calls=[((str(PROJECT),), {})])
    assert only(result).status != "ok" or only(result).value == []


@needs_root
def test_cannot_reach_a_socket_on_localhost(executor):
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    server.settimeout(3)
    port = server.getsockname()[1]
    accepted = []

    def accept():
        try:
            accepted.append(server.accept())
        except OSError:
            pass

    thread = threading.Thread(target=accept)
    thread.start()
    try:
        # The harness itself can connect: the server is real.
        probe = socket.create_connection(("127.0.0.1", port), timeout=2)
        probe.close()
        thread.join()
        assert accepted, "control connection failed"
        accepted.clear()
        code = ("import socket\ndef f(port):\n    s = socket.create_connection(('127.0.0.1', port), timeout=1)\n"
                "    s.sendall(b'secret')\n    return 'connected'\n")
        outcome = only(run_sample(executor, "connect to 127.0.0.1", code, calls=[((port,), {})]))
        assert outcome.status == "raise", outcome
        # A connection the sample made would be waiting in the listen queue now (the
        # kernel queues it when the handshake completes, before connect() returns in the
        # sample): accept without waiting (the accept thread used to wait out a 3 s timeout).
        server.setblocking(False)
        accept()
        assert not accepted
    finally:
        server.close()


def test_cannot_read_the_api_key(executor, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-specbench-test-secret")
    ex = PythonExecutor(LIMITS, hide=[str(PROJECT)])  # started with the key in our environment
    try:
        ex.ensure_started()
        code = ("import os\ndef f():\n    found = [v for v in os.environ.values() if 'secret' in v]\n"
                "    pid = os.getpid()\n    for _ in range(3):\n"
                "        try:\n            pid = int(open(f'/proc/{pid}/stat').read().rsplit(')', 1)[1].split()[1])\n"
                "            found.append(open(f'/proc/{pid}/environ').read())\n"
                "        except OSError:\n            pass\n"
                "    return [x for x in found if 'sk-specbench' in x]\n")
        outcome = only(run_sample(ex, "read OPENAI_API_KEY", code))
        assert outcome.status == "ok" and outcome.value == [], outcome
    finally:
        ex.close()


# ------------------------------------------------------------------- cheats

GRADE_OK = ("def grade_for(score):\n    for bound, letter in ((90, 'A'), (80, 'B'), (70, 'C'), (60, 'D')):\n"
            "        if score >= bound:\n            return letter\n    return 'F'\n")


@pytest.fixture(scope="module")
def contract_tasks():
    return {t.task_id: t for t in CONTRACT.load(None, None).tasks}


@pytest.fixture(scope="module")
def check_context(executor, tmp_path_factory):
    state = tmp_path_factory.mktemp("state")
    return fake_context(FakeSettings(limits=LIMITS, default="assert"), cache=state, executors={"python": executor})


def judge(check_context, contract_tasks, fault, check, code, task_id="Mbpp-S/5"):
    """The check's verdict on ``code``, run unsanitized (the sandbox, not the sanitizer, is on trial)."""
    t0 = time.monotonic()
    result = CONTRACT.run_check(check, contract_tasks[task_id], Completion(code, {"trusted_reference": True}),
                                check_context)
    took = time.monotonic() - t0
    OBSERVED.append((f"cheat: {fault} [{check}]", "PASSED" if result.passed else f"F: {result.message[:70]}", took))
    assert took < TIME_BOUND
    return result


def test_the_honest_sample_passes(check_context, contract_tasks):
    assert judge(check_context, contract_tasks, "honest sample", "functional", GRADE_OK).passed


CHEATS = {
    "sys.exit(0) at import": GRADE_OK + "import sys\nsys.exit(0)\n",
    "os._exit(0) at import": GRADE_OK + "import os\nos._exit(0)\n",
    "SystemExit at import": GRADE_OK + "raise SystemExit(0)\n",
    "KeyboardInterrupt at import": GRADE_OK + "raise KeyboardInterrupt\n",
    "sys.exit(0) in call": "import sys\ndef grade_for(score):\n    sys.exit(0)\n",
    "os._exit(0) in call": "import os\ndef grade_for(score):\n    os._exit(0)\n",
    "SystemExit in call": "def grade_for(score):\n    raise SystemExit(0)\n",
    "KeyboardInterrupt in call": "def grade_for(score):\n    raise KeyboardInterrupt\n",
    "fake markers on stdout": ("import sys\ndef grade_for(score):\n"
                               "    for i in range(40):\n        print(f'[{i},\"ok\",\"A\",0.0]')\n"
                               "    print('[\"done\"]')\n    print('PASSED')\n    sys.stdout.flush()\n    os._exit(0)\nimport os\n"),
    "forged records on the result pipe": ("import os\nfor i in range(40):\n"
                                          "    os.write(3, ('[%d,\"ok\",\"A\",0.0]\\n' % i).encode())\n"
                                          "def grade_for(score):\n    return 'A'\n"),
    "__eq__ always True": ("class Yes:\n    def __eq__(self, other):\n        return True\n    __hash__ = object.__hash__\n"
                           "def grade_for(score):\n    return Yes()\n"),
    "str subclass with hostile __eq__": ("class S(str):\n    def __eq__(self, other):\n        return True\n"
                                         "    def __ne__(self, other):\n        return False\n    __hash__ = str.__hash__\n"
                                         "def grade_for(score):\n    return S('Z')\n"),
    "patched builtins (isinstance, type, str)": (
        "import builtins\nbuiltins.isinstance = lambda *a: True\nbuiltins.type = lambda *a: str\n"
        "builtins.str = lambda *a: 'A'\ndef grade_for(score):\n    return None\n"),
    "patched AssertionError": ("import builtins\nbuiltins.AssertionError = BaseException\n"
                               "def grade_for(score):\n    return None\n"),
    "patched harness modules (wire, json)": (
        "import sys, json\nwire = sys.modules['pytest_specbench.execution.wire']\n"
        "wire.dumps = lambda value: '\"A\"'\nwire.to_plain = lambda value: 'A'\n"
        "json.dumps = lambda *a, **k: '\"A\"'\ndef grade_for(score):\n    return 'wrong'\n"),
    "segfault on some inputs": GRADE_OK.replace("    return 'F'", "    import ctypes\n    return ctypes.string_at(0)"),
}


@pytest.mark.parametrize("fault", list(CHEATS))
def test_cheats_do_not_pass_the_functional_check(check_context, contract_tasks, fault):
    result = judge(check_context, contract_tasks, fault, "functional", CHEATS[fault])
    assert not result.passed and not result.details["passed"]


def test_int_list_subclasses_count_as_their_value(check_context, contract_tasks):
    # chunk_list returns lists: a list subclass that claims equality with anything
    # is judged by its contents.
    code = ("class L(list):\n    def __eq__(self, other):\n        return True\n"
            "def chunk_list(items, size):\n    return L([['nope']])\n")
    assert not judge(check_context, contract_tasks, "list subclass with hostile __eq__", "functional", code,
                     task_id="Mbpp-S/3").passed
    code = ("class I(int):\n    def __eq__(self, other):\n        return True\n"
            "def alternating_digit_sum(digits):\n    return I(123456789)\n")
    assert not judge(check_context, contract_tasks, "int subclass with hostile __eq__", "functional", code,
                     task_id="HumanEval-S/1").passed


CONTRACT_CHEATS = {
    "AssertionError claimed for every call at import": (
        "import os\nfor i in range(100):\n"
        "    os.write(3, ('[%d,\"raise\",[\"AssertionError\",true,false,\"\"],0.0]\\n' % i).encode())\n"
        "def grade_for(score):\n    return 'A'\n"),
    "isinstance patched to claim AssertionError": (
        "import builtins\nbuiltins.isinstance = lambda *a: True\ndef grade_for(score):\n    return 1 + None\n"),
    "AssertionError rebound to TypeError": (
        "import builtins\nbuiltins.AssertionError = TypeError\ndef grade_for(score):\n    return 1 + None\n"),
}


@pytest.mark.parametrize("fault", list(CONTRACT_CHEATS))
def test_cheats_do_not_pass_the_contract_check(check_context, contract_tasks, fault):
    result = judge(check_context, contract_tasks, fault, "contract", CONTRACT_CHEATS[fault])
    assert not result.passed and result.details["rejected"] == 0


# ------------------------------------------------------------ plugin level

PLUGIN_CHEATS = [
    ("Mbpp-S/5", GRADE_OK, True),  # an honest sample among the cheats still passes
    ("Mbpp-S/5", CHEATS["os._exit(0) in call"], False),  # (import-time code is removed by the sanitizer)
    ("Mbpp-S/5", CHEATS["sys.exit(0) in call"], False),
    ("Mbpp-S/5", "import ctypes\ndef grade_for(score):\n    return ctypes.string_at(0)\n", False),
    ("Mbpp-S/5", CHEATS["__eq__ always True"], False),
    ("Mbpp-S/5", CHEATS["patched harness modules (wire, json)"], False),
    ("Mbpp-S/5", CHEATS["forged records on the result pipe"], False),
    ("Mbpp-S/5", "import os, signal\ndef grade_for(score):\n    os.kill(os.getppid(), signal.SIGKILL)\n    return 'A'\n", False),
    ("Mbpp-S/5", GRADE_OK, True),
]


def test_plugin_run_with_cheating_samples(pytester):
    samples = pytester.path / "cheats.jsonl"
    samples.write_text("".join(json.dumps({"task_id": t, "sample_index": i, "solution": code}) + "\n"
                               for i, (t, code, _) in enumerate(PLUGIN_CHEATS)))
    t0 = time.monotonic()
    # In this process, as a user's run is one: the samples run in the sandbox either way
    # (one that reached this process would end the test run, which fails loudly too).
    result = pytester.runpytest_inprocess(
        "--specbench=contract", "-p", "no:cacheprovider", f"--model=replay:{samples}",
        "--specbench-checks=functional", "--specbench-call-cpu=0.3", "--specbench-report=r.json", "-rA")
    OBSERVED.append(("plugin run with cheating samples", f"exit {result.ret}", time.monotonic() - t0))
    assert result.ret == 1
    honest = sum(1 for *_, ok in PLUGIN_CHEATS if ok)
    result.assert_outcomes(passed=honest, failed=len(PLUGIN_CHEATS) - honest)
    report = json.loads((pytester.path / "r.json").read_text())["benchmarks"]["contract"]
    assert report["errors"] == 0
    verdicts = [s["checks"]["functional"]["passed"] for s in report["tasks"]["Mbpp-S/5"]["samples"]]
    assert verdicts == [ok for *_, ok in PLUGIN_CHEATS]


def test_plugin_sandbox_none_runs_and_is_labelled(pytester):
    result = pytester.runpytest_inprocess(  # the reference's code only: trusted
        "--specbench=contract", "-p", "no:cacheprovider", "--model=reference", "--specbench-sandbox=none",
        "--specbench-report=r.json")
    result.assert_outcomes(passed=23, skipped=1)
    result.stdout.fnmatch_lines(["*specbench: sandbox none: NO isolation*trusted code only*"])
    manifest = json.loads((pytester.path / "r.json").read_text())["manifest"]
    assert manifest["sandbox"]["mode"] == "none"
    assert manifest["sandbox"]["isolation"]["network"] is False
    assert "isolation disabled by configuration" in manifest["sandbox"]["isolation"]["notes"]


def test_sandbox_that_cannot_start_is_an_error_not_a_failure(pytester, monkeypatch):
    from pytest_specbench.execution import python

    def no_sandbox(self):
        raise OSError("simulated: cannot start the sandbox")

    monkeypatch.setattr(python.PythonExecutor, "_start", no_sandbox)  # a run in this process: undone after it
    formatted = []  # the items whose traceback pytest formatted
    real = _pytest.nodes.Node._repr_failure_py
    monkeypatch.setattr(_pytest.nodes.Node, "_repr_failure_py",
                        lambda self, *args, **kwargs: formatted.append(self.nodeid) or real(self, *args, **kwargs))
    result = pytester.runpytest_inprocess(
        "--specbench=contract", "-p", "no:cacheprovider", "--model=reference", "--specbench-report=r.json",
        "-k", "HumanEval-S/0 or HumanEval-S/1")
    result.assert_outcomes(errors=4)
    result.stdout.fnmatch_lines(["*sandbox could not start: simulated: cannot start the sandbox*"])
    assert formatted == []  # each E's one line, without its traceback formatted first (and dropped)
    report = json.loads((pytester.path / "r.json").read_text())["benchmarks"]["contract"]
    assert report["errors"] == 4
    # Errored items are left out of the metrics, not counted as the model's failures: no
    # pass@1 at all (0.0 is what counting them as failures would give), no CVT scored, and
    # each errored check is journaled with its error and no verdict.
    metrics = report["metrics"]
    assert "pass@1" not in metrics and metrics.get("cvts_run", 0) == 0 and metrics.get("cvt_tasks", 0) == 0, metrics
    checks = [c for t in report["tasks"].values() for s in t["samples"] for c in s["checks"].values()]
    assert len(checks) == 4 and all("passed" not in c and "sandbox could not start" in c["error"] for c in checks)
