"""pytest plugin run INSIDE the sandbox (shipped as a job file, loaded with
``-p specbench_postcond_runner``); stdlib + pytest + icontract only.

It (1) redirects the import of the target module to the private, injected copy
(the user's checkout stays untouched and read-only) and (2) writes one JSON
record per test phase, the collected test ids and a final record on the job's
result channel, with the exception's type (an icontract violation is
``icontract.errors.ViolationError``, not a text match) and the traceback lines
that fall in the private copy.

Why a postcondition cannot forge these records (docs/postcond.md, "Verdicts"):
no byte of the answer runs in this process.  The target module is imported
with the harness's guard in place of the answer's decorators; at each
outermost call of the method a spec child (forked by ``specbench_pyspec``,
:mod:`pytest_specbench.pyspec.spec_process`) closes every descriptor but its
outcome pipe, then builds the answer's icontract decorators, replays the call
and reports ``holds``, ``violated`` or ``raised`` with one line; this process
calls the method itself and raises icontract's ``ViolationError`` (or the
reported exception) from the guard.  This process is non-dumpable (no ptrace,
no ``/proc/PID/fd`` or ``mem`` for the same uid), the job's folder is off
``sys.path`` (nothing a child writes there is imported here), and the nonce
every record carries is zeroed in each child.  The harness counts a test as
passed only from its ``call`` record and a run as passed only when every
collected test has one (never from the exit status alone).
"""
import importlib.machinery
import importlib.util
import json
import os
import sys

_cfg_path = os.environ.pop("SPECBENCH_POSTCOND_CONFIG")
with open(_cfg_path) as fh:
    _CFG = json.load(fh)
os.unlink(_cfg_path)
_TARGET = os.path.realpath(_CFG["target"])
_PRIVATE = os.path.realpath(_CFG["private"])

import specbench_pyspec as _pyspec  # noqa: E402 - (a job file beside this one)

_NONCE = _pyspec.keep_secret(_CFG["nonce"])
_pyspec.register(_CFG.get("specs") or {})
del _CFG
_SPEC_FILE = os.path.realpath(_pyspec.__file__)

# The result channel: fd 3 moved to a descriptor of its own, not inherited by
# anything the tests start, and fd 3 itself closed.
_FD = os.dup(3)
os.set_inheritable(_FD, False)
os.close(3)
_write = os.write
_dumps = json.dumps
_realpath = os.path.realpath
_issubclass = issubclass
_str = str

try:
    import icontract as _icontract
    import icontract.errors as _icontract_errors

    _VIOLATION = _icontract_errors.ViolationError
    _ICONTRACT_DIR = os.path.dirname(_realpath(_icontract.__file__)) + os.sep
except ImportError:  # the environment lacks icontract: every test fails at import, reported as such
    _VIOLATION, _ICONTRACT_DIR = None, os.sep + "icontract" + os.sep


def _emit(record):
    record["nonce"] = _NONCE.decode()
    data = (_dumps(record, ensure_ascii=True) + "\n").encode("ascii")
    while data:
        data = data[_write(_FD, data):]


class _Redirect:
    """A meta-path finder: the target module loads from the private copy."""

    def find_spec(self, name, path=None, target=None):
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is not None and spec.origin and _realpath(spec.origin) == _TARGET:
            return importlib.util.spec_from_file_location(name, _PRIVATE)
        return None

    def invalidate_caches(self):
        pass


sys.meta_path.insert(0, _Redirect())
_pyspec.HARNESS_ERROR[0] = lambda text: _emit({"event": "harness_error", "text": _str(text)[:300]})
# Before any test module is imported (hence before any spec child exists).
try:
    _pyspec.protect([os.getcwd()])
except OSError as _exc:
    _emit({"event": "harness_error", "text": f"the runner could not protect itself: {_exc}"})
    raise


def _describe(excinfo):
    etype = excinfo.type
    is_violation = False
    if _VIOLATION is not None:
        try:
            is_violation = _issubclass(etype, _VIOLATION)
        except TypeError:
            pass
    frames = []
    in_contract = False
    innermost = None
    tb = excinfo.tb
    while tb is not None:
        filename = tb.tb_frame.f_code.co_filename
        if _realpath(filename) == _PRIVATE:
            frames.append(tb.tb_lineno)
        # Raised by the guard for the spec's child (a condition that raised, e.g. a lambda
        # argument the method lacks), or by icontract's own code.
        real = _realpath(filename)
        in_contract = in_contract or real == _SPEC_FILE or real.startswith(_ICONTRACT_DIR)
        innermost = tb
        tb = tb.tb_next
    # icontract found a violated condition but could not render its message (e.g. a
    # nested lambda): it raises RuntimeError from _create_violation_error.  Still a violation.
    if (not is_violation and innermost is not None and innermost.tb_frame.f_code.co_name == "_create_violation_error"
            and _realpath(innermost.tb_frame.f_code.co_filename).startswith(_ICONTRACT_DIR)):
        is_violation = True
    try:
        text = _str(excinfo.value)[:300]
    except Exception:  # noqa: BLE001 - a hostile __str__
        text = "<unprintable>"
    try:
        exc_type = f"{etype.__module__}.{etype.__qualname__}"
    except Exception:  # noqa: BLE001
        exc_type = "<unknown>"
    return {"exc_type": exc_type, "violation": is_violation, "private_lines": frames, "in_contract": in_contract,
            "text": text}


def pytest_collectreport(report):
    if report.failed:
        _emit({"event": "collect_error", "nodeid": report.nodeid, "longrepr": _str(report.longrepr)[-2000:]})


import pytest  # noqa: E402


def pytest_collection_finish(session):
    _emit({"event": "collected", "nodeids": [item.nodeid for item in session.items]})


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    rec = {"event": "phase", "nodeid": item.nodeid, "when": call.when, "outcome": report.outcome}
    if call.excinfo is not None and report.failed:
        rec.update(_describe(call.excinfo))
    _emit(rec)


def pytest_sessionfinish(session, exitstatus):
    _emit({"event": "finish", "exitstatus": int(exitstatus), "collected": session.testscollected,
           "failed": session.testsfailed, "spec_children": _pyspec.CHILDREN[0]})
