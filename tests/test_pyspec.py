"""The Python-spec service (pytest_specbench/pyspec): the spec child, its outcome
protocol, the guard on real calls (a) and a postcondition over values (b).

The child primitives and the guard run here in-process (the test process plays
the keeper: each check is one fork); (b) runs end to end in one sandboxed job.
"""
from __future__ import annotations

import importlib.util
import os
import signal
import sys
import textwrap

import pytest

from pytest_specbench import pyspec
from pytest_specbench.pyspec import spec_process as sp


# ------------------------------------------------------------------ the spec child


def test_run_apart_returns_the_childs_one_outcome():
    assert sp.run_apart(lambda: {"kind": "violated", "line": "x\ny"}) == {"kind": "violated", "line": "x y"}
    assert sp.run_apart(lambda: [{"kind": "holds", "line": ""}, {"kind": "raised", "line": "E"}]) == \
        [{"kind": "holds", "line": ""}, {"kind": "raised", "line": "E"}]


def _write_everywhere(data: bytes):
    for fd in range(3, 256):
        try:
            os.write(fd, data)
        except OSError:
            pass


@pytest.mark.parametrize("work, why", [
    (lambda: {"kind": "passed", "line": ""}, "malformed outcome"),
    (lambda: {"kind": "holds", "line": "", "nonce": "x"}, "malformed outcome"),
    (lambda: os._exit(0), "ended without an outcome (exit status 0)"),
    (lambda: os._exit(3), "ended without an outcome (exit status 3)"),
    (lambda: os.kill(os.getpid(), signal.SIGKILL), "killed by SIGKILL"),
    (lambda: _write_everywhere(b'{"kind": "holds", "line": ""}\n') or {"kind": "violated", "line": ""},
     "more than one outcome"),
    (lambda: _write_everywhere(b"x" * (1 << 17)) or {"kind": "holds", "line": ""}, "more than one outcome"),
    (lambda: _write_everywhere(b"[" * 60000 + b"\n") or os._exit(0), "malformed outcome"),
    (lambda: (_ for _ in ()).throw(SystemExit(0)), "SystemExit: 0"),
])
def test_a_child_that_does_not_end_with_exactly_one_outcome_is_raised(work, why):
    out = sp.run_apart(work)
    assert out["kind"] == "raised" and why in out["line"], out


def test_the_child_holds_no_descriptor_of_the_keeper_and_no_secret():
    keeper_r, keeper_w = os.pipe()
    secret = sp.keep_secret("n" * 32)
    try:
        out = sp.run_apart(lambda: {"kind": "holds", "line": " ".join(sorted(os.listdir("/proc/self/fd"))) + " | "
                                    + bytes(secret).hex()})
    finally:
        os.close(keeper_r)
        os.close(keeper_w)
        sp._SECRETS.remove(secret)
    fds, _, hexed = out["line"].partition(" | ")
    assert str(keeper_r) not in fds.split() and str(keeper_w) not in fds.split()
    assert len(fds.split()) <= 5  # 0, 1, 2, the outcome pipe, listdir's own
    assert hexed == "00" * 32 and bytes(secret) == b"n" * 32  # zeroed in the child only


def test_a_grandchild_left_behind_is_not_waited_for_nor_read():
    def work():
        if os.fork() == 0:
            os.setsid()
            import time
            time.sleep(0.3)
            _write_everywhere(b'{"kind": "violated", "line": "late"}\n')
            os._exit(0)
        return {"kind": "holds", "line": ""}

    assert sp.run_apart(work) == {"kind": "holds", "line": ""}


# ------------------------------------------------------------------ (a) the guard on real calls

MODULE = '''\
import icontract; from specbench_pyspec import guard as _specbench_guard, safe_eval as _specbench_eval
SEEN = []


{decorators}
def push(node, items):
    items.append(node)
    return node


{decorators2}
def fact(n):
    if n < 0:
        raise ValueError("negative")
    return 1 if n <= 1 else n * fact(n - 1)
'''


def _guarded(tmp_path, dec: str, dec2: str = "@icontract.ensure(lambda n, result: result >= 1)"):
    """The module as the keeper imports it (guards) and its specs (the answer's text)."""
    child_text = MODULE.format(decorators=dec, decorators2=dec2)
    lines = child_text.splitlines()
    first, second = lines.index(dec.splitlines()[0]) + 1, lines.index(dec2.splitlines()[0]) + 1
    keeper = MODULE.format(decorators="@_specbench_guard('push')" + "\n" * (dec.count("\n")),
                           decorators2="@_specbench_guard('fact')" + "\n" * (dec2.count("\n")))
    path = tmp_path / "guarded_mod.py"
    path.write_text(keeper)
    sys.modules["specbench_pyspec"] = sp
    sp.register({"push": pyspec.guard_spec(dec, first, child_text), "fact": pyspec.guard_spec(dec2, second, child_text)})
    spec = importlib.util.spec_from_file_location(f"guarded_mod_{abs(hash(dec))}", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_guard_keeps_identity_and_reports_violations_in_the_keeper(tmp_path):
    import icontract

    mod = _guarded(tmp_path, "@icontract.snapshot(lambda items: len(items), name='n')\n"
                             "@icontract.ensure(lambda OLD, node, items, result: result is node and items[-1] is node "
                             "and len(items) == OLD.n + 1)")
    node, items = object(), []
    assert mod.push(node, items) is node and items == [node]  # identity held in the child's replay too
    bad = _guarded(tmp_path, "@icontract.ensure(lambda node, items, result: len(items) == 0)")
    with pytest.raises(icontract.ViolationError, match="len.items. == 0"):  # icontract's own message, one line
        bad.push(1, [])


def test_guard_keeps_the_specs_side_effects_in_its_child(tmp_path):
    mod = _guarded(tmp_path, "@icontract.ensure(lambda items, result: SEEN.append(1) is None and not "
                             "__import__('sys').modules.__setitem__('os', None))")
    items = []
    mod.push(5, items)
    assert mod.SEEN == [] and sys.modules["os"] is os and items == [5]


def test_guard_recursion_and_the_methods_own_exception(tmp_path):
    mod = _guarded(tmp_path, "@icontract.ensure(lambda result: True)",
                   "@icontract.ensure(lambda n, result: result == fact(n - 1) * n if n > 1 else result == 1)")
    assert mod.fact(5) == 120  # the condition calls the method (plain inside the contract, as icontract does)
    with pytest.raises(ValueError, match="negative"):  # the method's own exception, not the spec's
        mod.fact(-1)


def test_guard_a_condition_that_raises_is_its_exception_from_the_guard(tmp_path):
    mod = _guarded(tmp_path, "@icontract.ensure(lambda items, result: items[99] > 0)")
    with pytest.raises(IndexError) as info:
        mod.push(1, [])
    assert os.path.realpath(info.traceback[-1].path) == os.path.realpath(sp.__file__)  # (read as "in the contract")
    weird = _guarded(tmp_path, "@icontract.ensure(lambda result: (_ for _ in ()).throw(KeyboardInterrupt()))")
    with pytest.raises(sp.SpecificationError, match="KeyboardInterrupt"):
        weird.push(1, [])


def test_guard_a_decorator_that_fails_fails_the_import(tmp_path):
    with pytest.raises(sp.SpecificationError, match="decorators failed"):
        _guarded(tmp_path, "@icontract.snapshot(lambda a, b: a, name=None)")


# ------------------------------------------------------------------ (b) a postcondition over values


def test_check_values_one_outcome_per_clause_per_case_in_one_job():
    from pytest_specbench.execution.command import CommandExecutor

    source = textwrap.dedent("""\
        assert return_value == sum(xs)
        assert len(inputs_after['xs']) == len(xs)
        assert xs[0] >= 0
    """)
    hostile = ("import os\nfor fd in range(3, 64):\n    try:\n        os.write(fd, b'{\"case\": 0, \"outcomes\": [], "
               "\"nonce\": \"x\"}\\n')\n    except OSError:\n        pass\nos._exit(0)")
    cases = [{"inputs": {"xs": [1, 2]}, "inputs_after": {"xs": [1, 2]}, "return_value": 3},
             {"inputs": {"xs": [1, 2]}, "inputs_after": {"xs": [1]}, "return_value": 4},
             {"inputs": {"xs": []}, "inputs_after": {"xs": []}, "return_value": 0}]
    ex = CommandExecutor()
    try:
        got = pyspec.check_values(ex, source, cases, timeout=60)
        forged = pyspec.check_values(ex, f"exec({hostile!r}) or True", cases[:1], timeout=60)
    finally:
        ex.close()
    assert [[o.kind for o in case] for case in got] == [["holds", "holds", "holds"],
                                                        ["violated", "violated", "holds"],
                                                        ["holds", "holds", "raised"]]
    assert got[2][2].line.startswith("IndexError")
    assert forged[0][0].kind == "raised" and "malformed outcome" in forged[0][0].line, forged


# ------------------------------------------------------------------ the harness's own faults are E


def test_a_first_fork_refused_is_the_harness_and_a_later_one_the_answer(monkeypatch):
    said = []

    def refuse():
        raise OSError(11, "Resource temporarily unavailable")

    monkeypatch.setattr(sp.os, "fork", refuse)
    monkeypatch.setattr(sp, "CHILDREN", [0])
    monkeypatch.setattr(sp, "HARNESS_ERROR", [said.append])
    for _ in range(2):
        with pytest.raises(sp.SpecificationError, match="could not fork"):
            sp.run_apart(lambda: {"kind": "holds", "line": ""})
    assert len(said) == 1 and "first spec child" in said[0]


def test_a_harness_error_record_of_the_runner_is_an_infrastructure_error(tmp_path):
    import json

    from pytest_specbench.benchmarks.postcond import execute
    from pytest_specbench.errors import InfrastructureError
    from pytest_specbench.execution.protocol import CommandResult

    class Executor:
        def run(self, prepared, job):
            nonce = json.loads(job.files["postcond-config.json"])["nonce"]
            return CommandResult(exit_code=1, records=[{"event": "harness_error", "text": "prctl refused",
                                                        "nonce": nonce}])

    data = {"name": "f", "file": "m.py", "start_line": 1, "end_line": 2, "cover_tests": ["t.py::t"],
            "repo": {"env": "harness"}}
    with pytest.raises(InfrastructureError, match="prctl refused"):
        execute.run_program(Executor(), None, data, tmp_path, execute.Program("def f():\n    return 1\n", "original"),
                            "@icontract.ensure(lambda result: True)", "fixed")


def test_guard_on_a_coroutine_function(tmp_path):
    import asyncio

    import icontract

    dec = "@icontract.ensure(lambda x, result: result == x + 1)"
    text = (f"import icontract; from specbench_pyspec import guard as _specbench_guard\n{dec}\n"
            "async def bump(x):\n    return x + (1 if x >= 0 else 2)\n")
    (tmp_path / "async_mod.py").write_text(text.replace(dec, "@_specbench_guard('bump')"))
    sys.modules["specbench_pyspec"] = sp
    sp.register({"bump": pyspec.guard_spec(dec, 2, text)})
    spec = importlib.util.spec_from_file_location("async_mod", tmp_path / "async_mod.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    assert asyncio.run(mod.bump(1)) == 2  # (the child replays it on an event loop of its own)
    with pytest.raises(icontract.ViolationError):
        asyncio.run(mod.bump(-1))
