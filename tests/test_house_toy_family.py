"""A family written only against the documented interface, in its own folder.

The toy family lives in a temporary folder outside the package and registers
itself the way a third-party package would (an entry point in the
``specbench.benchmarks`` group), so nothing in pytest_specbench is edited.  It
uses what the interface promises a family: a non-Python command in the sandbox
(``ctx.executor("command")``: the sample is a POSIX shell script), the judge role
(``ctx.model("judge")``, answered by the local OpenAI-style test server), one
check reading another's result (``ctx.result_of``), a declared option, per-task
checks and ``aggregate(results, tasks, settings)``.
"""
from __future__ import annotations

import json
import textwrap

import pytest

from fakes import install_family

TOY_FAMILY = '''
"""Toy family: "print how many words the phrase has", answered by a shell script."""
from __future__ import annotations

import json
from pathlib import Path

from pytest_specbench.benchmarks.base import (CheckResult, Message, Option, Prompt, RoleRequest, Task,
                                              TaskSet)
from pytest_specbench.execution.protocol import CommandJob

TASKS = [("t1", "one two three", 3), ("t2", "a b", 2), ("t3", "single", 1)]


class ToyFamily:
    name = "toy"
    version = "1"
    options = (Option("toy_judge", "ask the judge about style: on or off", default="on", choices=("on", "off")),)

    def roles(self, settings):  # the judge is only asked when --toy-judge=on
        return ("judge",) if settings.option("toy_judge") == "on" else ()

    def load(self, data_root, settings):
        src = Path(__file__)
        return TaskSet(tuple(Task(tid, {"phrase": p, "count": n}, src, i + 1) for i, (tid, p, n) in enumerate(TASKS)),
                       (src,), bundled=True)

    def checks_for(self, task):
        return ("runs", "style")

    def skip_reason(self, check, task, ctx):
        return ctx.executor("command").available()

    def prompt(self, task, settings):
        return Prompt((Message("user", f"Write a sh script printing the word count of: {task.data['phrase']}"),))

    def reference(self, task, check):
        return f"echo {task.data['count']}"

    def run_check(self, check, task, sample, ctx):
        if check == "runs":
            # (0.5 s of CPU: an echo takes milliseconds; the looping sample below burns all of it)
            res = ctx.executor("command").run(None, CommandJob(("/bin/sh", "answer.sh"),
                                                               files={"answer.sh": sample.text.encode()},
                                                               wall_seconds=10, cpu_seconds=0.5))
            got = res.stdout.strip()
            ok = res.exit_code == 0 and got == str(task.data["count"])
            return CheckResult(ok, {"stdout": got[:50], "exit": res.exit_code},
                               "" if ok else f"printed {got[:30]!r} (exit {res.exit_code}), expected {task.data['count']}")
        runs = ctx.result_of("runs")
        if ctx.option("toy_judge") == "off":
            return CheckResult(True, {"runs": runs.passed, "judge": None})
        answer = ctx.model("judge").ask(RoleRequest(self.name, task, sample.meta.get("sample_index", 0), "style",
                                                    Prompt((Message("user", "Idiomatic? " + sample.text),))))
        ok = runs.passed and answer.strip().lower().startswith("yes")
        return CheckResult(ok, {"runs": runs.passed, "judge": answer[:20]}, "" if ok else f"judge: {answer[:40]}")

    def aggregate(self, results, tasks, settings):
        per_task = [all(c.get("_passed", c.get("passed", False)) for s in samples for c in s["checks"].values())
                    for samples in results.values()]
        return {"solved": sum(per_task) / len(per_task) if per_task else float("nan"), "tasks": len(tasks)}

    def metric_names(self, settings):
        return ("solved", "tasks")


ADAPTER = ToyFamily()
'''


@pytest.fixture
def toy_family(pytester, tmp_path):
    """The toy family as an installed-looking distribution on sys.path."""
    site = install_family(tmp_path / "site", "toyfamily", TOY_FAMILY, "toy")
    pytester.syspathinsert(site)  # its entry point is found on sys.path (every run here is in this process)
    return site


def _metrics(pytester):
    return json.loads((pytester.path / "r.json").read_text())["benchmarks"]["toy"]


def test_toy_family_runs_a_command_asks_the_judge_and_reads_another_check(pytester, toy_family):
    from openai_server import StubOpenAIServer  # tests/ is on sys.path under pytest

    with StubOpenAIServer(answer=lambda req: "yes, idiomatic", known_models=("critic",)) as server:
        args = ["--specbench=toy", "--model=reference", "--judge-model=openai:critic",
                f"--judge-model-base-url={server.url}", "--specbench-report=r.json", "-p", "no:cacheprovider"]
        # In this process (a Python of its own until #45, session 23: its start, the plugin's
        # import and the openai client's, ~0.8 CPU s, were most of the run): the family is found
        # through its entry point here too, the registry reading the distributions on sys.path
        # as a user's Python does (the toy package is dropped after each run, as the test's
        # files are); -n 0: xdist is not what this shows (two workers were most of the run)
        result = pytester.runpytest_inprocess(*args, "-n", "0")
        result.assert_outcomes(passed=6)
        assert server.chat_count == 3  # one style question per sample
        section = _metrics(pytester)
        assert section["metrics"]["solved"] == 1.0 and section["metrics"]["tasks"] == 3
        report = json.loads((pytester.path / "r.json").read_text())
        assert report["manifest"]["options"]["toy"]["roles"]["judge"]["model"] == "critic"
        # Same run again: verdicts from the result cache, the judge is not asked again.
        pytester.runpytest_inprocess(*args).assert_outcomes(passed=6)
        assert server.chat_count == 3


def test_toy_family_wrong_samples_fail_with_reasons_and_the_option_is_declared(pytester, toy_family):
    samples = pytester.path / "s.jsonl"
    samples.write_text("\n".join(json.dumps({"task_id": t, "solution": s}) for t, s in
                                 [("t1", "echo 3"), ("t2", "echo 5"), ("t3", "while :; do :; done")]) + "\n")
    result = pytester.runpytest_inprocess("--specbench=toy", f"--model=replay:{samples}", "--toy-judge=off",
                                           "--specbench-report=r.json", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=4, failed=2)
    text = result.stdout.str()
    assert "printed '5' (exit 0), expected 2" in text
    assert "t3 sample 0 runs" in text
    bad = pytester.runpytest_inprocess("--specbench=toy", "--model=reference", "--toy-judge=maybe",
                                        "-p", "no:cacheprovider")
    assert bad.ret != 0
    assert any("--toy-judge" in line and "maybe" in line for line in bad.errlines + bad.outlines)


def test_toy_family_without_a_judge_is_one_usage_line(pytester, toy_family):
    result = pytester.runpytest_inprocess("--specbench=toy", "--model=reference", "-p", "no:cacheprovider")
    assert result.ret != 0
    lines = [line for line in result.errlines + result.outlines if "--judge-model" in line]
    assert lines and "Traceback" not in "\n".join(result.errlines)
