"""The harness against a real model: SmolLM2-135M-Instruct under llama-cpp-python's server.

Opt-in (README, "Models and roles"): ``sh tests/realmodel/install.sh`` once, then
``SPECBENCH_REAL_MODEL=1 pytest -m realmodel``.  The model is useless at the tasks, which is
the point: a real chat template, prose around fences or no code at all, answers cut off at
max_tokens, real ``usage`` and ``finish_reason``, and a judge that rambles.  The tests assert
what the harness does with that, never the model's skill: items are F or pass, never E
(CIFE: E only for a judge that stays unreadable, with its one-line reason); one request per
task; nothing asked twice by a re-run, a resumed SIGKILLed run or ``-n 2``.
"""
from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

pytestmark = pytest.mark.realmodel

CONTRACT_TASKS = ("HumanEval-S/0", "HumanEval-S/2", "Mbpp-S/3")
CONTRACT_K = " or ".join(CONTRACT_TASKS)
MAX_TOKENS = "128"  # ~3-4 s an answer on two cores; most answers are cut off, which is tested too
# What a ContractEval F says (its one-line reason), by class: no code, code that does not
# parse or define the function, a crash, a wrong or slow answer, a contract not kept.
FAILURE_CLASSES = re.compile(r"no code|not defined|syntax|SyntaxError|IndentationError|Error|wrong|expected|"
                             r"time|limit|contract|accepted|reject|raised|exit", re.I)


def generation_args(real_model) -> list[str]:
    # One request at a time: llama-cpp-python's server answers one at a time anyway (README).
    return [f"--model=openai:{real_model.name}", f"--model-base-url={real_model.url}",
            f"--model-max-tokens={MAX_TOKENS}", "--model-concurrency=1", "-p", "no:cacheprovider"]


def outcomes(result) -> dict[str, int]:
    return result.parseoutcomes()


def report(path: Path) -> dict:
    return json.loads(path.read_text())


def verdicts(rep: dict, benchmark: str) -> dict:
    return {task_id: [s["checks"] for s in task["samples"]] for task_id, task in rep["benchmarks"][benchmark]["tasks"].items()}


def test_contract_items_are_f_or_pass_with_one_request_per_task_and_a_rerun_asks_nothing(pytester, real_model):
    args = ["--specbench=contract", *generation_args(real_model), "-k", CONTRACT_K, "--specbench-report=r.json",
            "--specbench-save-samples=samples.jsonl"]
    before = len(real_model.chats())
    first = pytester.runpytest_subprocess(*args)
    sent = real_model.chats()[before:]
    assert len(sent) == len(CONTRACT_TASKS)  # one request per task (both checks read the same answer)
    counts = outcomes(first)
    assert "errors" not in counts and "error" not in counts, first.stdout.str()[-3000:]
    # Every item has a verdict: nothing of ContractEval needs a toolchain, so a skip is wrong too.
    assert counts.get("passed", 0) + counts.get("failed", 0) == 2 * len(CONTRACT_TASKS) and "skipped" not in counts
    rep = report(pytester.path / "r.json")
    samples = {json.loads(line)["task_id"]: json.loads(line)["solution"]
               for line in (pytester.path / "samples.jsonl").read_text().splitlines()}
    for task_id, (checks,) in verdicts(rep, "contract").items():
        for check, verdict in checks.items():
            if verdict["passed"]:  # a pass must come from code that defines the task's function
                assert "def " in samples[task_id], (task_id, check, samples[task_id][:300])
            else:  # each F says why in one line, of a reason class the checks give
                message = verdict.get("message", "")
                assert message and "\n" not in message and FAILURE_CLASSES.search(message), (task_id, check, message)
    generation = rep["manifest"]["model"]["generation"]
    assert generation["generated"] == len(CONTRACT_TASKS) and generation["completion_tokens"] > 0  # real usage
    assert rep["benchmarks"]["contract"]["errors"] == 0
    assert len((pytester.path / "samples.jsonl").read_text().splitlines()) == len(CONTRACT_TASKS)

    again = pytester.runpytest_subprocess(*args[:-1], "--specbench-report=r2.json")
    assert len(real_model.chats()) == before + len(CONTRACT_TASKS)  # the cache answered
    assert verdicts(report(pytester.path / "r2.json"), "contract") == verdicts(rep, "contract")
    assert outcomes(again) == counts


def journaled(runs: Path) -> int | None:
    """Items journaled so far by the one run under ``runs`` (None: no journal yet)."""
    journals = list(runs.glob("*/journal.jsonl"))
    if len(journals) != 1:
        return None
    return max(0, len([line for line in journals[0].read_text().splitlines() if line.strip()]) - 1)  # the header


def test_a_sigkilled_contract_run_resumes_without_asking_again(pytester, real_model):
    args = ["--specbench=contract", *generation_args(real_model), "-k", CONTRACT_K]
    before = len(real_model.chats())
    cache = pytester.path / ".specbench" / "cache" / "generations"
    process = subprocess.Popen([sys.executable, "-m", "pytest", *args], cwd=pytester.path, start_new_session=True,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    journaled_at_kill = running_at_kill = None
    try:
        deadline = time.monotonic() + 600
        # Kill as soon as the first answer is in the cache: the run is mid-generation (or later).
        while time.monotonic() < deadline and process.poll() is None:
            if any(p.suffix == ".json" and not p.name.startswith(".") for p in cache.rglob("*.json")
                   if "locks" not in p.parts):
                break
            time.sleep(0.05)
    finally:
        running_at_kill = process.poll() is None
        journaled_at_kill = journaled(pytester.path / ".specbench" / "runs")
        if running_at_kill:
            os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=60)
    killed = len(real_model.chats()) - before
    # Really mid-run: still running when killed, with fewer verdicts journaled than items (a
    # changed cache layout would make the loop above wait for the run's end and fail here).
    assert running_at_kill and killed >= 1
    assert journaled_at_kill is not None and journaled_at_kill < 2 * len(CONTRACT_TASKS), journaled_at_kill

    resumed = pytester.runpytest_subprocess(*args, "--specbench-resume", "--specbench-report=r.json")
    counts = outcomes(resumed)
    assert "errors" not in counts and "error" not in counts, resumed.stdout.str()[-3000:]
    sent = real_model.chats()[before:]
    per_prompt = Counter(json.dumps(body["messages"], sort_keys=True) for body in sent)
    assert len(per_prompt) == len(CONTRACT_TASKS)
    # Only the request in flight when SIGKILL came may be asked again: its answer never reached the cache.
    assert sum(per_prompt.values()) <= len(CONTRACT_TASKS) + 1 and max(per_prompt.values()) <= 2
    assert report(pytester.path / "r.json")["benchmarks"]["contract"]["errors"] == 0

    total = len(real_model.chats())
    pytester.runpytest_subprocess(*args, "--specbench-resume")  # nothing left to do, nothing to ask
    pytester.runpytest_subprocess(*args)                        # a new run: everything from the cache
    assert len(real_model.chats()) == total


def test_two_workers_get_the_answers_one_process_gets(pytester, real_model):
    common = ["--specbench=contract", *generation_args(real_model), "-k", CONTRACT_K]
    before = len(real_model.chats())
    pytester.runpytest_subprocess(*common, "--specbench-dir=state0", "--specbench-save-samples=n0.jsonl",
                                  "--specbench-report=n0.json")
    pytester.runpytest_subprocess(*common, "--specbench-dir=state2", "--specbench-save-samples=n2.jsonl",
                                  "--specbench-report=n2.json", "-n", "2")
    # Separate state folders: both runs asked the server, the same requests (temperature 0),
    # and got the same answers.
    sent = real_model.chats()[before:]
    assert len(sent) == 2 * len(CONTRACT_TASKS)
    bodies = [json.dumps(b, sort_keys=True) for b in sent]
    assert sorted(bodies[:len(CONTRACT_TASKS)]) == sorted(bodies[len(CONTRACT_TASKS):])
    lines = {name: sorted((pytester.path / name).read_text().splitlines()) for name in ("n0.jsonl", "n2.jsonl")}
    assert lines["n0.jsonl"] == lines["n2.jsonl"] and len(lines["n0.jsonl"]) == len(CONTRACT_TASKS)
    assert verdicts(report(pytester.path / "n0.json"), "contract") == verdicts(report(pytester.path / "n2.json"), "contract")


def test_cife_with_the_same_model_as_judge(pytester, real_model):
    retries = 2
    before = len(real_model.chats())
    result = pytester.runpytest_subprocess(
        "--specbench=cife", *generation_args(real_model), "-k", "b01",
        f"--judge-model=openai:{real_model.name}", f"--judge-model-base-url={real_model.url}",
        "--judge-model-max-tokens=384", f"--cife-judge-retries={retries}", "--specbench-max-errors=100",
        "--judge-model-structured=on", "--specbench-report=r.json")
    sent = real_model.chats()[before:]
    generations = [b for b in sent if b["max_tokens"] == int(MAX_TOKENS)]
    judged = [b for b in sent if b not in generations]
    assert len(generations) == 1
    # The first question tries json_schema, which the server refuses (HTTP 500): once, not retried;
    # every later question is sent as json_object with the verdict's schema.
    probes = [b for b in judged if b["response_format"]["type"] == "json_schema"]
    judged = [b for b in judged if b not in probes]
    assert len(probes) == 1 and {b["response_format"]["type"] for b in judged} == {"json_object"}
    # Two questions for the sample (adherence vector, correctness), each asked at most 1 + retries times,
    # with the judge's own parameters: --model-max-tokens does not cap it (issue #32, point 3).
    assert 2 <= len(judged) <= 2 * (retries + 1)
    assert {(b["temperature"], b["max_tokens"]) for b in judged} == {(0.1, 384)}
    rep = report(pytester.path / "r.json")
    questions = rep["manifest"]["roles"]["judge"]["questions"]
    # Each of the 5 items (4 constraints, correctness) asks its attempts; repeats come from the role's cache.
    assert questions["called"] == len(judged) and questions["asked"] == questions["called"] + questions["cache_hits"]
    assert questions["http_requests"] == len(judged) + len(probes)
    # Items: pass or F (the judge's verdict), or E only when the judge stayed unreadable,
    # journaled with the judge's one-line reason.
    journal = Path(rep["manifest"]["journal"])
    errors = [e for e in map(json.loads, journal.read_text().splitlines()[1:]) if "error" in e]
    counts = outcomes(result)
    assert counts.get("errors", counts.get("error", 0)) == len(errors) == rep["benchmarks"]["cife"]["errors"]
    for entry in errors:
        assert "judge" in entry["error"] and "\n" not in entry["error"], entry
    # Structured output (#44): llama-cpp-python's server takes the verdict's schema as json_object
    # and enforces it, so the small model's verdicts parse: every item has a readable verdict
    # (no E), each F says the judge's reason in one line, and CSR is a number, not NaN.
    assert rep["manifest"]["roles"]["judge"]["structured"] == {"option": "on", "form": "json_object"}
    assert not errors and counts.get("passed", 0) + counts.get("failed", 0) == 5, counts
    section = rep["benchmarks"]["cife"]
    for task in section["tasks"].values():
        for sample in task["samples"]:
            for check, verdict in sample["checks"].items():
                assert "error" not in verdict, (check, verdict)
                if "injection" in verdict:  # an answer that speaks to the judge is F without a question
                    pass
                elif check.startswith("adherence"):
                    assert isinstance(verdict.get("judge"), bool), (check, verdict)
                else:
                    assert verdict.get("label") in ("Completely Correct", "Partially Correct", "Wrong"), verdict
                if not verdict["passed"]:
                    message = verdict.get("message", "")
                    assert message and "\n" not in message and re.search(r"judge|rule", message), (check, message)
    assert isinstance(section["metrics"]["csr"], float) and section["metrics"]["csr"] == section["metrics"]["csr"]


@pytest.mark.parametrize("benchmark, select", [("postcond", "minilib--gcd"), ("speceval", "MaxOfTwo/generation")])
def test_postcond_and_speceval_on_one_task(pytester, real_model, benchmark, select):
    before = len(real_model.chats())
    result = pytester.runpytest_subprocess(f"--specbench={benchmark}", *generation_args(real_model), "-k", select,
                                           "--specbench-report=r.json")
    assert len(real_model.chats()) - before == 1
    counts = outcomes(result)
    assert "errors" not in counts and "error" not in counts, result.stdout.str()[-3000:]
    assert report(pytester.path / "r.json")["benchmarks"][benchmark]["errors"] == 0
