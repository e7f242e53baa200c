"""One string must not kill an xdist run (issue 29): a lone surrogate in a
sample's exception text or a judge's reason reaches an item's outcome; execnet
refuses strings that are not UTF-8, so a worker would die with INTERNALERROR.
Every report a worker sends passes ``pytest_report_to_serializable`` (pytest-xdist
calls it for each), where the plugin makes every string safe: one test per
family through that hook and execnet's own serializer.  The real ``-n 2`` run
whose judge answers with a lone surrogate (which also must be paid once: the
cache write keeps it) is tests/test_judge_role.py's xdist run (session 22: one
``-n 2`` CIFE judge run carries both files' properties).
"""
from __future__ import annotations

import json

import execnet
import pytest

from pytest_specbench.models.cache import GenerationStore
from pytest_specbench.plugin.items import PROPERTY

BAD = "\ud800"

# What each family's items carry from a sample or a judge (messages and details
# as their adapters build them), with a lone surrogate where the sample's text goes.
OUTCOMES = {
    "contract": {"message": f"functional: assert failed: ValueError('{BAD}')",
                 "details": {"failed_inputs": [{"input": [1], "error": f"ValueError: {BAD}"}]}},
    "postcond": {"message": f"failed: tests/test_x.py::test_a (call): builtins.ValueError: {BAD}",
                 "details": {"verdict": "failed", "reason": f"builtins.ValueError: {BAD}", "text_verdict": "failed"}},
    "verina": {"message": f"code: #guard failed: {BAD}", "details": {"lean_output": f"error: {BAD}"}},
    "speceval": {"message": f"judgement: javac: {BAD}", "details": {"output": BAD, "answer": f"@ requires {BAD}"}},
    "cife": {"message": f"constraint 1 (Style) not satisfied per judge: {BAD}",
             "details": {"judge": False, "judge_reason": BAD, "rule_reason": ""}},
}


def _report(family: str) -> pytest.TestReport:
    outcome = {"benchmark": family, "task_id": f"t{BAD}", "sample": 0, "check": "c", "passed": False,
               **OUTCOMES[family], "isolation": {"notes": [BAD]}}
    return pytest.TestReport(
        nodeid=f"specbench::{family}::t::0::c", location=("t", 0, "t"), keywords={}, outcome="failed",
        longrepr=f"t sample 0 c: {OUTCOMES[family]['message']}", when="call",
        user_properties=[(PROPERTY, outcome)], sections=[("Captured stdout call", BAD)])


@pytest.mark.parametrize("family", sorted(OUTCOMES))
def test_a_lone_surrogate_crosses_the_xdist_channel(pytestconfig, family):
    report = _report(family)
    with pytest.raises(execnet.DataFormatError):  # what killed the worker
        execnet.dumps(report._to_json())
    data = pytestconfig.hook.pytest_report_to_serializable(config=pytestconfig, report=report)
    back = pytestconfig.hook.pytest_report_from_serializable(config=pytestconfig, data=execnet.loads(execnet.dumps(data)))
    outcome = dict(back.user_properties)[PROPERTY]
    assert outcome["benchmark"] == family and outcome["passed"] is False
    assert "\\ud800" in outcome["message"] and "\\ud800" in json.dumps(outcome["details"], ensure_ascii=False)
    assert "\\ud800" in str(back.longrepr) and back.sections[0][1] == "\\ud800"
    # what was fine stays as it was
    assert outcome["check"] == "c" and outcome["sample"] == 0


def test_cache_entry_with_a_lone_surrogate_is_written_and_read_back(tmp_path):
    store = GenerationStore(tmp_path / "cache")
    entry = {"text": '{"correctness": "Wrong", "reason": "' + BAD + '"}', "usage": {}}
    assert store.put("ab" * 32, entry) is True
    assert store.get("ab" * 32) == entry
    # a write that cannot happen is a warning and False, never an exception
    (tmp_path / "file").write_text("")  # (a folder that cannot be made, even as root)
    with pytest.warns(RuntimeWarning, match="could not write cache entry"):
        assert GenerationStore(tmp_path / "file" / "cache").put("cd" * 32, entry) is False
