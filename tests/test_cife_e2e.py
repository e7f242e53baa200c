"""CIFE end to end through the plugin's judge role (``--judge-model``).

What is checked: an explicit ``replay:`` judge of the shipped judgments gives the same
report as the default one; the scripted judge behind the local OpenAI-style
server answers every question once, and a resumed run asks nothing again.
"""
from __future__ import annotations

import json

import pytest

from pytest_specbench.benchmarks.cife.adapter import BUNDLED_JUDGMENTS


def _metrics(pytester):
    return json.loads((pytester.path / "r.json").read_text())["benchmarks"]["cife"]["metrics"]


def test_explicit_replay_judge_equals_the_default(pytester):
    # In this process: nothing here depends on a Python of its own (the resume below does).
    # Two of the 12 bundled tasks, each run with the default judge and with the shipped
    # judgments named explicitly, the result cache off (else the second run reads the
    # first's verdicts): the same items, verdicts and metrics.  The default judge on all 12
    # (the reference at 100%) is tests/test_cife_plugin.py's first test.
    reports = {}
    for name, judge in (("default", ()), ("explicit", (f"--judge-model=replay:{BUNDLED_JUDGMENTS}",))):
        r = pytester.runpytest_inprocess("--specbench=cife", "--model=reference", *judge, "-k", "b01 or b02",
                                         f"--specbench-report={name}.json", "--specbench-result-cache=off",
                                         "-p", "no:cacheprovider")
        r.assert_outcomes(passed=10)  # b01 and b02: 4 constraints each, and each task's correctness item
        reports[name] = json.loads((pytester.path / f"{name}.json").read_text())["benchmarks"]["cife"]
    assert reports["explicit"]["tasks"] == reports["default"]["tasks"]
    assert reports["explicit"]["metrics"] == reports["default"]["metrics"] and reports["default"]["metrics"]["csr"] == 1.0


def test_scripted_judge_over_http_is_asked_once_and_not_again_on_resume(pytester):
    from openai_server import StubOpenAIServer  # tests/ is on sys.path under pytest

    from pytest_specbench.benchmarks.cife.scripted_judge import answer

    with StubOpenAIServer(answer=lambda req: answer(req["messages"], garbage=0.2), known_models=("judge",)) as server:
        # Three of the 12 bundled tasks: each question is asked once and none again on resume
        # whatever the number of tasks; the reference's checks of the other nine were most of
        # the two runs (the reference on all 12: tests/test_cife_plugin.py's first test).
        args = ["--specbench=cife", "--model=reference", "--judge-model=openai:judge", f"--judge-model-base-url={server.url}",
                "--specbench-report=r.json", "--specbench-result-cache=off", "-p", "no:cacheprovider",
                "--specbench-tasks=b01,b02,b03"]
        # The first run in this process; the resumed one in a Python of its own, so that only
        # what the first left on disk (journal, judge's cache) can spare it the questions.
        pytester.runpytest_inprocess(*args)
        first = server.chat_count
        assert first >= 6  # 3 adherence + 3 correctness questions, plus retries after garbage
        report = _metrics(pytester)
        assert report["csr"] == report["ssr"] == 1.0
        pytester.runpytest_subprocess(*args, "--specbench-resume")
        assert server.chat_count == first  # everything from the judge's cache / the journal
        assert _metrics(pytester) == report
