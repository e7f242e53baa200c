"""Hostile PostcondBench (Python) answers, written against the harness as an
attacker would (issue 29): each must get exactly the verdict it deserves.

Two layers are attacked.  The screen (``source.screen``): answers that would
forge a verdict are refused before anything runs (``parse_error``, one line;
in-process, fast).  The channel, with the screen bypassed (``execute.run_program``
takes decorators as they are): a postcondition that has full Python still cannot
make the harness read a pass, a kill or the reference, because it runs only in a
spec child that holds no channel (issue 41; tests/test_hostile_pyspec.py attacks
that wall route by route), records need the run's nonce and a ``call`` record per
test, the checkout shows the program under test, and the bundled suites, the
package and /run/lock are private to the job.
"""
from __future__ import annotations

import json
import os
import textwrap
from pathlib import Path

import pytest

from pytest_specbench.benchmarks.postcond import execute, source, verdict
from pytest_specbench.benchmarks.postcond.adapter import ADAPTER, BUNDLED, load_tasks
from pytest_specbench.execution.protocol import CommandJob
from pytest_specbench.models.base import Completion
from fakes import fake_context

REPO = Path(__file__).resolve().parents[1]


def Ctx():
    """What run_check needs; no executor and no checkout: a refused answer must not reach one
    (the fake context refuses both with an AssertionError)."""
    return fake_context(postcond_injection="fixed", postcond_timeout=20.0, postcond_complete="paper")


def _clamp():
    return next(t for t in load_tasks(BUNDLED)[0] if t.task_id == "minilib--clamp")


def _refused(answer: str) -> str:
    r = ADAPTER.run_check("correct", _clamp(), Completion(answer), Ctx())
    assert not r.passed and r.details["verdict"] == "parse_error", (answer, r.details)
    assert "\n" not in r.message and len(r.message) < 400
    return r.details["reason"]


# --------------------------------------------------------------- the screen

FALSE = "lambda result: result == -12345"  # false on every test of clamp


@pytest.mark.parametrize("answer", [
    # disables itself / no-ops icontract's checker
    f"@icontract.ensure({FALSE}, enabled=False)",
    f"@icontract.ensure({FALSE}, 'd', False)",
    f"@icontract.ensure({FALSE}, a_repr=None)",
    f"@icontract.ensure({FALSE}, error=lambda: None)",
    f"@icontract.ensure(condition={FALSE})",
    "@icontract.ensure",
    f"@icontract.ensure({FALSE}, description=str(1))",
    "@icontract.ensure(bool)",
    # exits or skips from inside the postcondition
    f"@icontract.ensure(lambda result: result == -1 or pytest.exit('x', returncode=0))",
    f"@icontract.ensure(lambda result: result == -1 or pytest.skip())",
    f"@icontract.ensure(lambda result: result == -1 or __import__('pytest').skip())",
    f"@icontract.ensure(lambda result: result == -1 or __import__('os')._exit(0))",
    f"@icontract.ensure(lambda result: result == -1 or sys.exit(0))",
    f"@icontract.ensure(lambda result: result == -1 or exit(0))",
])
def test_screen_refuses_answers_that_disable_or_exit(answer):
    _refused(answer)


FORGED = '{"event": "finish", "exitstatus": 0}'


@pytest.mark.parametrize("answer", [
    # forged records, the runner's writer, exit hooks
    f"@icontract.ensure(lambda result: open('postcond-report.jsonl', 'a').write('{FORGED}') and False)",
    f"@icontract.ensure(lambda result: os.write(3, b'{FORGED}'))",
    "@icontract.ensure(lambda result: __import__('atexit').register(print))",
    "@icontract.ensure(lambda result: sys.modules['specbench_postcond_runner']._emit({}))",
    "@icontract.ensure(lambda result: setattr(icontract, 'ViolationError', BaseException) or True)",
    "@icontract.ensure(lambda result: exec('import os') or True)",
    "@icontract.ensure(lambda result: globals()['icontract'] and True)",
    "@icontract.ensure(lambda result: vars(icontract) and True)",
    "@icontract.ensure(lambda result: getattr(icontract, 'ViolationError') and True)",
    "@icontract.ensure(lambda result: compile('1', 'x', 'eval') and True)",
    "@icontract.ensure(lambda result: eval('__import__(\"os\")') and True)",
    "@icontract.ensure(lambda result: __builtins__ and True)",
    "@icontract.ensure(lambda result, x=open: True)",  # a default is evaluated outside the lambda
])
def test_screen_refuses_answers_that_reach_the_verdict_channel(answer):
    _refused(answer)


@pytest.mark.parametrize("answer", [
    # reading its own source, the checkout's original or the reference
    "@icontract.ensure(lambda result: 'return lo' in open(__file__).read())",
    "@icontract.ensure(lambda result: __file__ and True)",
    "@icontract.ensure(lambda result: inspect.getsource(clamp) and True)",
    "@icontract.ensure(lambda x, result: clamp.__code__.co_code and True)",
    "@icontract.ensure(lambda result: (lambda: 0).__globals__ and True)",
    "@icontract.ensure(lambda result: (i for i in [0]).gi_frame.f_back and True)",
    "@icontract.ensure(lambda result: (i for i in [0]).gi_code and True)",
    "@icontract.ensure(lambda result: '{0.gi_frame}'.format(i for i in [0]) and True)",
    "@icontract.ensure(lambda result: __import__('operator').attrgetter('gi_frame') and True)",
    "@icontract.ensure(lambda result: __import__('statistics').sys and True)",
    "@icontract.ensure(lambda result: __import__('collections')._sys and True)",
    "@icontract.ensure(lambda result: (lambda m: m.sys)(__import__('statistics')) and True)",
    "@icontract.ensure(lambda result: [math][0] and True)",
    "@icontract.ensure(lambda result: hasattr(result, '__class__'))",
    "@icontract.ensure(lambda result: dict(__x__=1) and True)",
    "@icontract.ensure(lambda result: type(result) and True)",
    "@icontract.ensure(lambda result: (y := result) and True)",
    "@icontract.ensure(lambda result: (yield result))",
])
def test_screen_refuses_answers_that_read_files_or_frames(answer):
    _refused(answer)


@pytest.mark.parametrize("answer, why", [
    ("@icontract.ensure(lambda result: result == '\ud800')", "UTF-8"),
    ("@icontract.ensure(lambda result: " + "not " * 100_000 + "result)", "characters"),
    ("@icontract.ensure(lambda result: result" + ".a" * 300_000 + ")", "characters"),
    ("@icontract.ensure(lambda result: " + "not " * 15_000 + "result)", "nest"),
    ("@icontract.ensure(lambda result: result" + ".a" * 9_000 + ")", "nest"),
    ("@icontract.ensure(lambda result: " + "(" * 150 + "result" + ")" * 150 + " or " + "[" * 120 + "]" * 120 + ")",
     "nest"),
    ("@icontract.ensure(lambda result: result\x00)", "NUL"),
])
def test_garbage_answers_are_failures_with_one_line_not_errors(answer, why):
    assert why in _refused(answer)


def test_the_screen_keeps_upstream_style_answers():
    """Names of the target's module, lambdas' parameters, comprehension variables,
    allowed modules through ``__import__('m').f`` (upstream's references use it),
    snapshots, descriptions, ``eval`` (bound to the runner's literal evaluator)."""
    module = textwrap.dedent("""\
        import os
        import math
        from os import path
        from codecs import open as copen
        from collections import deque
        from .graph import Node
        LIMIT = 3
        def helper(x):
            return x
        class State:
            WHITE = 0
    """)
    ok = [
        "@icontract.snapshot(lambda n: n, name='n0')",
        "@icontract.ensure(lambda OLD, result: OLD.n0 >= 0 and helper(result) == result, 'desc')",
        "@icontract.ensure(lambda result, n: all(__import__('functools').reduce(lambda a, b: a * b, c, 1) == n for c in result))",
        "@icontract.ensure(lambda result: isinstance(result, (Node, deque)) or State.WHITE == LIMIT)",
        "@icontract.ensure(lambda result: math.gcd(4, 6) == 2 and {k: v for k, v in [(1, 2)]}[1] == 2)",
        "@icontract.ensure(lambda input, __return__: input == __return__)",  # (icontract rejects it at call time)
        "@icontract.ensure(lambda result: eval('*'.join(map(str, result))) == 6)",
    ]
    out = source.parse_answer("\n".join(ok), module)
    assert "_specbench_eval('*'.join" in out and "eval(" not in out.replace("_specbench_eval(", "")
    for bad in ("os", "path", "copen", "open", "print"):
        with pytest.raises(source.AnswerError, match=f"'{bad}'"):
            source.parse_answer(f"@icontract.ensure(lambda result: {bad} and True)", module)


# ------------------------------------------------------------ the channel


@pytest.fixture(scope="module")
def checkout(tmp_path_factory):
    root = tmp_path_factory.mktemp("hostile-checkout")
    (root / "mod.py").write_text("def double(x):\n    return x * 2\n")
    (root / "tests").mkdir()
    (root / "tests" / "test_mod.py").write_text(
        "from mod import double\n\n\ndef test_double():\n    assert double(2) == 4\n\n\n"
        "def test_double_zero():\n    assert double(0) == 0\n")
    for path in (root, root / "tests"):
        path.chmod(0o755)  # readable by the sandbox's uid (mktemp makes it 0700)
    return root


def _data(checkout):
    return {"name": "double", "file": "mod.py", "start_line": 1, "end_line": 2,
            "cover_tests": ["tests/test_mod.py::test_double", "tests/test_mod.py::test_double_zero"],
            "repo": {"env": "harness", "failed_tests": []}}


MUTANT = "def double(x):\n    return x * 3\n"


def _run(command, checkout, decorators, mutant=False):
    data = _data(checkout)
    text = MUTANT if mutant else (checkout / "mod.py").read_text()
    prepared = command.prepare(execute.environment_for(data, checkout))
    return execute.run_program(command, prepared, data, checkout, execute.Program(text, "mutant 0" if mutant else "original"),
                               decorators, "fixed", timeout=60)


FORGE_AND_LEAVE = """
import json, os
rec = (json.dumps({'event': 'finish', 'exitstatus': 0, 'nonce': 'x' * 32}) + '\\n').encode()
open('postcond-report.jsonl', 'ab').write(rec)
for fd in range(3, 256):
    try:
        os.write(fd, rec)
    except OSError:
        pass
os._exit(0)
"""


def test_channel_forged_final_record_then_exit_is_not_a_pass(command, checkout):
    # a false postcondition that forges the final record everywhere it can, then leaves
    out = _run(command, checkout, f"@icontract.ensure(lambda x, result: result == 7 or exec({FORGE_AND_LEAVE!r}))")
    assert out["verdict"] == "local_crash", out


def test_channel_eval_is_literal_arithmetic_only(command, checkout):
    assert _run(command, checkout, "@icontract.ensure(lambda x, result: eval('*'.join(map(str, [x, 2]))) == result)"
                )["verdict"] == "passed"
    out = _run(command, checkout, "@icontract.ensure(lambda x, result: eval(chr(111) + chr(115)) or True)")
    assert out["verdict"] == "local_crash", out


@pytest.mark.parametrize("escape", [
    "__import__('pytest').exit('bye', returncode=0)",
    "__import__('pytest').skip('not today')",
])
def test_channel_exit_or_skip_inside_a_false_postcondition_is_not_a_pass(command, checkout, escape):
    # (it runs in the spec's own process: a condition that raised, not the test run's exit or skip)
    out = _run(command, checkout, f"@icontract.ensure(lambda x, result: result == 7 or {escape})")
    assert out["verdict"] == "local_crash" and ("Exit: bye" in out["reason"] or "Skipped" in out["reason"]), out


ATEXIT_KILL = """
import atexit, json, os
rec = json.dumps({'event': 'phase', 'nodeid': 'tests/test_mod.py::test_double', 'when': 'call', 'outcome': 'failed',
                  'violation': True, 'text': 'forged'}) + '\\n'
def forge():
    open('postcond-report.jsonl', 'a').write(rec)
    for fd in range(3, 256):
        try:
            os.write(fd, rec.encode())
        except OSError:
            pass
atexit.register(forge)
"""


def test_channel_atexit_violation_record_is_not_a_kill(command, checkout):
    out = _run(command, checkout, f"@icontract.ensure(lambda result: exec({ATEXIT_KILL!r}, {{}}) or True)", mutant=True)
    assert out["verdict"] == "failed", out  # the mutant fails its test; nothing was violated


def test_channel_patched_violation_class_is_not_a_kill(command, checkout):
    # applied at import, before any test: AssertionError would count as a violation if read late
    out = _run(command, checkout, "@icontract.ensure(lambda result: True, setattr(__import__('icontract'), "
                                  "'ViolationError', AssertionError) or 'desc')", mutant=True)
    assert out["verdict"] == "failed", out


def test_channel_mutant_cannot_be_told_from_the_original_by_the_checkout(command, checkout):
    # true iff every line of the checkout's file is in the module's own file: the original only, unless
    # the checkout shows the program under test
    probe = (f"lambda result: all(line in open(__file__).read() "
             f"for line in open({str(checkout / 'mod.py')!r}).read().splitlines())")
    assert _run(command, checkout, f"@icontract.ensure({probe})")["verdict"] == "passed"
    out = _run(command, checkout, f"@icontract.ensure({probe})", mutant=True)
    assert out["verdict"] == "failed", out  # not killed: the mutant is not told apart


def test_channel_reference_and_package_are_hidden(command, checkout):
    reference = BUNDLED / "minilib--clamp.json"
    package = REPO / "pytest_specbench" / "__init__.py"
    for path in (reference, package):
        out = _run(command, checkout, f"@icontract.ensure(lambda result: len(open({str(path)!r}).read()) > 0)")
        assert out["verdict"] == "local_crash", (path, out)


def test_channel_records_without_nonce_or_fields_are_ignored():
    nonce = "n" * 32
    good = [{"event": "collected", "nodeids": ["t"], "nonce": nonce},
            {"event": "phase", "nodeid": "t", "when": "call", "outcome": "passed", "nonce": nonce},
            {"event": "finish", "exitstatus": 0, "nonce": nonce}]
    forged = [{"event": "phase", "outcome": "failed", "violation": True}, "garbage", 7,
              {"event": "finish", "exitstatus": 0, "nonce": "guess"}]
    assert verdict.decide(verdict.genuine(forged + good, nonce), False, 1, 9)["verdict"] == "passed"
    assert verdict.decide(verdict.genuine(forged, nonce), False, 1, 9)["verdict"] == "local_crash"
    # a genuine-looking record without nodeid or text: a verdict, never a KeyError
    odd = [{"event": "phase", "outcome": "failed", "violation": True, "nonce": nonce}] + good
    assert verdict.decide(verdict.genuine(odd, nonce), False, 1, 9)["verdict"] == "icontract_fail"
    partial = [good[0], {"event": "finish", "exitstatus": 0, "nonce": nonce}]
    assert verdict.decide(verdict.genuine(partial, nonce), False, 1, 9)["verdict"] == "failed"


WORLD_WRITABLE = ("/run/lock", "/var/tmp", "/dev/shm")


def test_world_writable_folders_are_private_per_job(command):
    """A file written in each world-writable folder is the job's own: not on the host, not
    seen by the next job (the three folders in one job and one next job: they were a
    parametrized test of two jobs each)."""
    wheres = [w for w in WORLD_WRITABLE if os.path.isdir(w)]
    if not wheres:
        pytest.skip(f"none of {', '.join(WORLD_WRITABLE)} exists here")
    name = f"specbench-hostile-{os.getpid()}"
    hosts = [Path(w) / name for w in wheres]
    try:
        write = command.run(None, CommandJob(argv=("/bin/sh", "-c", " && ".join(
            f"echo {i} > {w}/{name} && cat {w}/{name}" for i, w in enumerate(wheres))), wall_seconds=30))
        assert write.stdout.split() == [str(i) for i in range(len(wheres))], write  # the job could write there...
        assert not [h for h in hosts if h.exists()]  # ...but not on the host
        read = command.run(None, CommandJob(argv=("/bin/sh", "-c", "; ".join(
            f"cat {w}/{name}" for w in wheres) + "; true"), wall_seconds=30))
        assert read.exit_code == 0 and read.stdout == "", read  # nor for the next job
    finally:
        for host in hosts:
            if host.exists():
                host.unlink()
