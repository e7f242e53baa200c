"""pytest plugin run INSIDE the sandbox (shipped as a job file, loaded with
``-p specbench_postcond_runner``); stdlib + pytest only.

It (1) redirects the import of the target module to the private, injected copy
(the user's checkout stays untouched and read-only) and (2) writes one JSON line
per failed phase / collection error and a final line to the report file, with
the exception's type (an icontract violation is ``icontract.errors.ViolationError``,
not a text match) and the traceback lines that fall in the private copy.

The config file (target path, private copy, report path) is read and deleted at
import, before any test module (hence any sample code) is imported; see
docs/postcond.md for what a hostile postcondition could still do.
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
_OUT = open(_CFG["report"], "w", buffering=1)


class _Redirect:
    """A meta-path finder: the target module loads from the private copy."""

    def find_spec(self, name, path=None, target=None):
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is not None and spec.origin and os.path.realpath(spec.origin) == _TARGET:
            return importlib.util.spec_from_file_location(name, _PRIVATE)
        return None

    def invalidate_caches(self):
        pass


sys.meta_path.insert(0, _Redirect())


def _emit(record):
    _OUT.write(json.dumps(record) + "\n")


def _describe(excinfo):
    etype = excinfo.type
    is_violation = False
    icontract = sys.modules.get("icontract")
    if icontract is not None:
        try:
            is_violation = issubclass(etype, icontract.ViolationError)
        except TypeError:
            pass
    frames = []
    in_contract = False
    innermost = None
    tb = excinfo.tb
    while tb is not None:
        filename = tb.tb_frame.f_code.co_filename
        if os.path.realpath(filename) == _PRIVATE:
            frames.append(tb.tb_lineno)
        # Raised while icontract evaluated a condition (e.g. a lambda argument the method lacks).
        in_contract = in_contract or (os.sep + "icontract" + os.sep) in filename
        innermost = tb
        tb = tb.tb_next
    # icontract found a violated condition but could not render its message (e.g. a
    # nested lambda): it raises RuntimeError from _create_violation_error.  Still a violation.
    if (not is_violation and innermost is not None and innermost.tb_frame.f_code.co_name == "_create_violation_error"
            and (os.sep + "icontract" + os.sep) in innermost.tb_frame.f_code.co_filename):
        is_violation = True
    try:
        text = str(excinfo.value)[:300]
    except Exception:  # noqa: BLE001 - a hostile __str__
        text = "<unprintable>"
    return {"exc_type": f"{etype.__module__}.{etype.__qualname__}", "violation": is_violation,
            "private_lines": frames, "in_contract": in_contract, "text": text}


def pytest_collectreport(report):
    if report.failed:
        rec = {"event": "collect_error", "nodeid": report.nodeid}
        call = getattr(report, "_specbench_excinfo", None)
        rec["longrepr"] = str(report.longrepr)[-2000:]
        _emit(rec)


import pytest  # noqa: E402


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    rec = {"event": "phase", "nodeid": item.nodeid, "when": call.when, "outcome": report.outcome}
    if call.excinfo is not None and report.failed:
        rec.update(_describe(call.excinfo))
    if report.failed or call.when == "call":
        _emit(rec)


def pytest_sessionfinish(session, exitstatus):
    _emit({"event": "finish", "exitstatus": int(exitstatus), "collected": session.testscollected,
           "failed": session.testsfailed})
    _OUT.flush()
