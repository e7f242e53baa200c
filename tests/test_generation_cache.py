"""The generation phase end to end: ``pytest --specbench=contract --model=openai:stub``
in a subprocess, against a real local server (``tests/openai_server.py``).
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from openai_server import BundledContractAnswers, Reply, StubOpenAIServer

TASKS = 12  # the bundled contract suite
# Unrelated plugins cost seconds of start-up in every subprocess (and every xdist worker).
QUIET = ("-p", "no:cacheprovider", "-p", "no:hypothesispytest", "-p", "no:benchmark", "-p", "no:anyio")


@pytest.fixture(autouse=True)
def _api_key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)


@pytest.fixture
def server():
    with StubOpenAIServer() as s:
        yield s


def run(pytester, server, *args):
    # In this process: the server, the cache and the journal are what these runs show, not a
    # Python of their own (the interrupted generation below is killed in one of its own).
    return pytester.runpytest_inprocess(*QUIET, "--specbench=contract", "--model=openai:stub",
                                        f"--model-base-url={server.url}", *args)


def report(pytester, name):
    return json.loads((pytester.path / name).read_text())


def test_a_generated_run_scores_like_the_reference_and_a_second_run_is_free(pytester, server):
    ref = pytester.runpytest_inprocess(*QUIET, "--specbench=contract", "--model=reference",
                                       "--specbench-checks=functional", "--specbench-report=ref.json")
    ref.assert_outcomes(passed=TASKS)

    # -n 0 (-n 2 until #45, session 23): that the controller generates once per task for both
    # xdist workers and that its generation counters reach the report is
    # test_judge_role.py::test_under_xdist_judge_counters_reach_the_report_no_secret_is_written_and_a_lone_surrogate_crosses's
    # -n 2 run (the generation model there is an openai: endpoint too: 4 generations for 4
    # tasks over two workers, its progress line, `generated` and `api_requests`); what this
    # run shows (the scores, the counters, the saved samples, the cache) is not xdist's.
    first = run(pytester, server, "-n", "0", "--specbench-checks=functional", "--specbench-report=first.json",
                "--specbench-save-samples=samples.jsonl")
    first.assert_outcomes(passed=TASKS)
    first.stdout.fnmatch_lines([f"specbench: generating with openai:stub: {TASKS}/{TASKS} *"])
    assert server.chat_count == TASKS  # once per task
    manifest = report(pytester, "first.json")["manifest"]["model"]
    assert manifest["generation"]["generated"] == TASKS and manifest["generation"]["api_requests"] == TASKS
    assert manifest["generation"]["total_tokens"] == 18 * TASKS
    assert manifest["endpoint"] == f"127.0.0.1:{server.port}" and manifest["model"] == "stub"
    assert manifest["prompts"]["contract"]["condition"] == "standard"
    assert (report(pytester, "first.json")["benchmarks"]["contract"]["metrics"]
            == report(pytester, "ref.json")["benchmarks"]["contract"]["metrics"])

    # The generation cache is the controller's, read before any worker would start (-n 0:
    # two workers here only repeated an xdist start-up, issue #45)
    second = run(pytester, server, "-n", "0", "--specbench-checks=functional", "--specbench-report=second.json")
    second.assert_outcomes(passed=TASKS)
    assert server.chat_count == TASKS  # zero new requests
    generation = report(pytester, "second.json")["manifest"]["model"]["generation"]
    assert generation["cache_hits"] == TASKS and generation["api_requests"] == 0

    # The saved samples replay to the same scores, without the server.
    lines = [json.loads(line) for line in (pytester.path / "samples.jsonl").read_text().splitlines()]
    assert len(lines) == TASKS and {"task_id", "sample_index", "solution"} <= set(lines[0])
    replayed = pytester.runpytest_inprocess(*QUIET, "--specbench=contract", "--model=replay:samples.jsonl",
                                            "--specbench-checks=functional", "--specbench-report=replayed.json")
    replayed.assert_outcomes(passed=TASKS)
    assert (report(pytester, "replayed.json")["benchmarks"]["contract"]["metrics"]
            == report(pytester, "ref.json")["benchmarks"]["contract"]["metrics"])


def test_conditions_are_sent_as_chat_messages(pytester, monkeypatch):
    with StubOpenAIServer(BundledContractAnswers("contract")) as server:
        result = run(pytester, server, "--contract-condition=eas", "--specbench-checks=contract",
                     "--specbench-report=r.json")
        result.assert_outcomes(passed=TASKS - 1, skipped=1)  # one task has no CVTs
        assert report(pytester, "r.json")["benchmarks"]["contract"]["metrics"]["csr"] == 1.0
        roles = [m["role"] for m in server.chat_requests()[0]["body"]["messages"]]
        assert roles == ["system", "user"]


def test_a_failed_generation_makes_its_items_errors_and_is_not_cached(pytester):
    canonical = BundledContractAnswers()
    broken_prompt = sorted(canonical.by_prompt)[0]

    def answer(body):
        if body["messages"][-1]["content"] == broken_prompt:
            return Reply(500, {"error": {"message": "model crashed"}})
        return canonical(body)

    with StubOpenAIServer(answer) as server:
        result = run(pytester, server, "--model-retries=0", "--specbench-checks=functional")
        result.assert_outcomes(passed=TASKS - 1, errors=1)
        result.stdout.fnmatch_lines(["*generation failed: HTTP 500*model crashed*"])
        assert server.chat_count == TASKS
        # (that failures are not cached, so a re-run asks again: test_openai_model.py)


def test_authentication_failure_is_one_line_before_any_item(pytester):
    with StubOpenAIServer(api_key="sk-other") as server:
        result = run(pytester, server, "-n", "2")
        assert result.ret == pytest.ExitCode.USAGE_ERROR
        result.stderr.fnmatch_lines(["ERROR: specbench: --model: authentication failed at *(HTTP 401)*"])
        assert "Traceback" not in result.stdout.str() + result.stderr.str()
        assert server.chat_count == 0  # the start-up look-up (GET /models/NAME) failed: nothing was asked
        assert not list((pytester.path / ".specbench").glob("runs/*"))  # before any item: no run, no summary
        assert " in " not in result.stdout.str()


def test_an_interrupted_generation_resumes_without_repeating_finished_requests(pytester):
    with StubOpenAIServer(delay=0.4) as server:
        # Functional checks only (both checks until #45, session 23): what is resumed is the
        # generation, which no check takes part in; each answer's verdict shows it was read back.
        args = [sys.executable, "-m", "pytest", *QUIET, "--specbench=contract", "--specbench-checks=functional",
                "--model=openai:stub", f"--model-base-url={server.url}", "--model-concurrency=2"]
        proc = subprocess.Popen(args, cwd=pytester.path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                start_new_session=True)
        try:
            deadline = time.monotonic() + 30
            while server.chat_count < 5 and time.monotonic() < deadline:
                time.sleep(0.05)
        finally:
            os.killpg(proc.pid, signal.SIGKILL)  # the group this test started: pytest and its workers
            proc.wait()
        sent_before_kill = server.chat_count
        cached = [p for p in (pytester.path / ".specbench" / "cache" / "generations").rglob("*.json")
                  if "locks" not in p.parts]
        assert 3 <= len(cached) < TASKS

        server.delay = 0.0  # the slow answers only let the kill land mid-generation
        result = run(pytester, server, "--specbench-checks=functional")
        result.assert_outcomes(passed=TASKS)
        resumed = server.chat_count - sent_before_kill
        assert resumed == TASKS - len(cached)  # finished generations were not asked again
