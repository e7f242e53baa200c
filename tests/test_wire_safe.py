"""One string must not kill an xdist run (issue 29): a lone surrogate in a
sample's exception text or a judge's reason reaches an item's outcome; execnet
refuses strings that are not UTF-8, so a worker would die with INTERNALERROR.
Every report a worker sends passes ``pytest_report_to_serializable`` (pytest-xdist
calls it for each), where the plugin makes every string safe: one test per
family through that hook and execnet's own serializer, and one real ``-n 2``
run whose judge answers with a lone surrogate (which also must be paid once:
the cache write keeps it).
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


@pytest.mark.slow
def test_xdist_run_survives_a_judge_reason_with_a_lone_surrogate_and_pays_once(pytester):
    from openai_server import StubOpenAIServer  # tests/ is on sys.path under pytest

    from pytest_specbench.benchmarks.cife.scripted_judge import answer

    def hostile(request):  # every correctness answer "Wrong", its reason with a lone surrogate
        return answer(request["messages"], correct=0.0).replace('"scripted"', '"scripted ' + BAD + '"')

    with StubOpenAIServer(answer=hostile, known_models=("judge",)) as server:
        args = ["--specbench=cife", "--model=reference", "--judge-model=openai:judge",
                f"--judge-model-base-url={server.url}", "-k", "b01 or b02", "-n", "2", "--cife-rules=off",
                "--specbench-report=r.json", "--specbench-result-cache=off", "-p", "no:cacheprovider"]
        result = pytester.runpytest_subprocess(*args)
        assert result.ret == 1, result.stdout.str()[-2000:]  # failures, not INTERNALERROR (3)
        outcomes = result.parseoutcomes()
        assert outcomes.get("failed") == 2 and outcomes.get("passed", 0) > 0 and not outcomes.get("error")
        assert "\\ud800" in result.stdout.str()
        assert server.chat_count == 4  # one adherence and one correctness question per task, each asked once
        # without xdist the same messages reach the terminal (the judge's cache answers: nothing is asked again);
        # in this process: what crosses xdist's channel is the first run's subject, not this one's
        again = pytester.runpytest_inprocess(*[a for a in args if a not in ("-n", "2")], "-n", "0")
        assert again.ret == 1 and again.parseoutcomes().get("failed") == 2, again.stdout.str()[-2000:]
        assert server.chat_count == 4
    # the answers with the surrogate are in the judge's cache (the old store's failed write
    # made every later run ask again)
    stored = [p for p in pytester.path.rglob("*.json") if "\\ud800" in p.read_text(errors="replace")
              and '"purpose"' in p.read_text(errors="replace")]
    assert len(stored) == 4, sorted(str(p) for p in pytester.path.rglob("*.json"))
