"""What a new user hits (issue 26): every bad input is one line before any item
runs, harness errors (E) and failures (F) are one line each, and the pytest
habits (re-running an item by its printed id, exact task selection) work.

The bad-input list runs in this process (``pytester.runpytest_inprocess``): a
usage error costs pytest's start-up and, for options checked against the data,
the bundled data's loading, not a Python start each.
"""
from __future__ import annotations

import json
import socket
import textwrap
import warnings
from pathlib import Path

import pytest

from openai_server import StubOpenAIServer

BASE = ["-p", "no:cacheprovider", "-p", "no:randomly", "--model=reference"]  # a later --model wins


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # nothing listens once it is closed


def _cases(tmp: Path, stub_url: str) -> list[tuple[list[str], str]]:
    """(arguments, text the one line must contain)."""
    a_file = tmp / "a_file.txt"
    a_file.write_text("x")
    empty = tmp / "empty_folder"
    empty.mkdir(exist_ok=True)
    (tmp / "takes_two.py").write_text("def generate(prompt, other):\n    return ''\n")
    contract = ["--specbench=contract"]
    return [
        # models (2, 4, 6)
        (contract + ["--model=openai:foo", f"--model-base-url=http://127.0.0.1:{_closed_port()}/v1"],
         "--model: cannot reach"),
        (contract + ["--model=openai:nosuch", f"--model-base-url={stub_url}"], "'nosuch' not found"),
        (contract + ["--model-temperature=abc"], "--model-temperature: expected a number"),
        (contract + ["--model-temperature=-1"], "--model-temperature: must be at least 0"),
        (contract + ["--model-concurrency=0"], "--model-concurrency: must be at least 1"),
        (contract + ["--model-max-tokens=many"], "--model-max-tokens: expected a whole number"),
        (contract + ["--model-timeout=0"], "--model-timeout: must be at least"),
        (contract + ["--model-retries=-1"], "--model-retries: must be at least 0"),
        (contract + ["--model-seed=x"], "--model-seed: expected a whole number"),
        (contract + ["--specbench-cache=x"], "--specbench-cache: expected one of"),
        (contract + ["--judge-model-temperature=hot"], "--judge-model-temperature: expected a number"),
        (contract + ["--model=nosuch"], "--model: unknown model"),
        (contract + ["--model=replay:/nonexistent/samples.jsonl"], "not found: /nonexistent/samples.jsonl"),
        (contract + [f"--model=replay:{empty}"], "no samples in this folder"),
        (contract + ["--model=python:no_such_module_26:generate"], "cannot load no_such_module_26:generate"),
        (contract + ["--model=python:takes_two:generate"], "cannot be called with one prompt"),
        (contract + ["--model=python:json:__doc__"], "not a callable"),
        # family options with a range or a path (3)
        (["--specbench=postcond", "--postcond-timeout=-5"], "--postcond-timeout: expected a number of seconds above 0"),
        (["--specbench=postcond", "--postcond-timeout=0"], "--postcond-timeout: expected a number of seconds above 0"),
        (["--specbench=postcond", "--postcond-timeout=soon"], "--postcond-timeout: expected a number of seconds"),
        (["--specbench=postcond", "--postcond-repos=/nonexistent"], "--postcond-repos: folder not found: /nonexistent"),
        (["--specbench=postcond", f"--postcond-repos={a_file}"], "is a file, not a folder"),
        (["--specbench=verina", "--verina-lean-project=/nonexistent"],
         "--verina-lean-project: folder not found: /nonexistent"),
        (["--specbench=verina", "--verina-plausible-budget=0"], "--verina-plausible-budget: expected a positive"),
        (["--specbench=speceval", "--speceval-seed=x"], "--speceval-seed: expected a whole number, got 'x'"),
        (contract + ["--contract-condition=x"], "--contract-condition: expected one of"),
        # run options (5, 6, 8)
        (contract + ["--specbench-fail-under=pass@1=150%"], "can never be met"),
        (contract + ["--specbench-fail-under=nosuch=0.5"], "unknown metric 'nosuch'"),
        (contract + [f"--specbench-data={a_file}"], "is a file; the data root is a folder"),
        (contract + ["--specbench-data=/nonexistent"], "data root not found"),
        (contract + ["--specbench-k=0"], "--specbench-k: expected positive whole numbers"),
        (contract + ["--specbench-samples=x"], "--specbench-samples: expected comma-separated whole numbers"),
        (contract + ["--specbench-checks=nosuch"], "--specbench-checks: unknown check 'nosuch'"),
        (contract + ["--specbench-tasks=HumanEval-S/99"], "--specbench-tasks: no task 'HumanEval-S/99'"),
        (["specbench::contract::HumanEval-S/99::0::functional"], "no such item in this run"),
        (contract + ["specbench::verina::x"], "benchmark 'verina' is not in this run"),
        (contract + ["--specbench-max-errors=-1"], "--specbench-max-errors: must be 0 or more"),
        (contract + ["--specbench-resume=nosuchrun"], "no run 'nosuchrun'"),
        (contract + ["--specbench-sandbox=x"], "--specbench-sandbox: expected process or none"),
        (contract + ["--specbench-result-cache=x"], "--specbench-result-cache: expected readwrite or off"),
        (contract + ["--specbench-dedupe=x"], "--specbench-dedupe"),
        (contract + ["--specbench-baseline=/nonexistent.json"], "--specbench-baseline: file not found"),
        (["--specbench=nosuch"], "nosuch"),
    ]


def test_every_bad_input_is_one_line_before_any_item_runs(pytester, monkeypatch):
    """The bad-input list of issue 26: one line, no traceback, non-zero exit, and no
    item run, no journal written, no summary printed."""
    monkeypatch.syspath_prepend(str(pytester.path))  # python:takes_two:generate
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    state = pytester.path / ".specbench"
    failures = []
    with StubOpenAIServer(answer=lambda body: "def f():\n    return 1\n") as server:
        cases = _cases(pytester.path, server.url)
        for args, expected in cases:
            result = pytester.runpytest_inprocess(*BASE, *args)
            text = result.stdout.str() + result.stderr.str()
            lines = [line for line in text.splitlines() if line.strip()]
            problems = []
            if result.ret == 0:
                problems.append("exit 0")
            if len(lines) != 1:
                problems.append(f"{len(lines)} lines")
            if expected not in text:
                problems.append(f"no {expected!r}")
            if "Traceback" in text or "INTERNALERROR" in text:
                problems.append("a traceback")
            if (state / "runs").is_dir() and any((state / "runs").iterdir()):
                problems.append("a run folder was left")
            if problems:
                failures.append(f"{' '.join(args)}: {', '.join(problems)}:\n    " + "\n    ".join(lines[-6:]))
        assert not failures, f"{len(failures)} of {len(cases)} bad inputs:\n" + "\n".join(failures)
        assert len(cases) >= 40


# ------------------------------------------------------------------ E and F are one line (1, 9)
BROKEN_CHECK = """
import pytest
from pytest_specbench.errors import InfrastructureError
from pytest_specbench.benchmarks.contract.contract import ContractBenchmark as ContractEvalBenchmark

def pytest_configure(config):
    original = ContractEvalBenchmark.run_check

    def run_check(self, check, task, completion, ctx):
        if task.task_id == "HumanEval-S/0":
            raise InfrastructureError("judge's adherence answer unreadable after 3 attempt(s)")
        return original(self, check, task, completion, ctx)

    ContractEvalBenchmark.run_check = run_check
    config.add_cleanup(lambda: setattr(ContractEvalBenchmark, "run_check", original))
"""


def _broken(pytester):
    pytester.makeconftest(BROKEN_CHECK)
    return ["--specbench=contract", "--specbench-tasks=HumanEval-S/0,HumanEval-S/1", "--specbench-result-cache=off",
            "-rfE"]


def test_a_harness_error_is_one_line_per_item_and_tb_adds_the_traceback(pytester):
    result = pytester.runpytest_inprocess(*BASE, *_broken(pytester))
    result.assert_outcomes(passed=2, errors=2)
    text = result.stdout.str()
    line = "InfrastructureError: judge's adherence answer unreadable after 3 attempt(s)"
    assert "Traceback" not in text and "pluggy/_" not in text and "def run_check" not in text
    out = result.stdout.lines
    start = next(i for i, s in enumerate(out) if "= ERRORS =" in s) + 1
    lines = out[start:next(i for i in range(start, len(out)) if out[i].startswith(("=", "specbench")))]
    assert len(lines) == 4 and lines[1] == lines[3] == line, lines  # two headers, one line under each
    # The short summary: the reason right after the node id, the id not repeated in it.
    result.stdout.fnmatch_lines(["ERROR specbench::contract::HumanEval-S/0::0::functional - InfrastructureError*"])

    detailed = pytester.runpytest_inprocess(*BASE, *_broken(pytester), "--tb=short")
    assert "raise InfrastructureError" in detailed.stdout.str()  # asked for: the traceback


def test_a_failure_s_short_summary_line_starts_with_its_reason(pytester):
    samples = pytester.path / "samples.jsonl"
    samples.write_text(json.dumps({"task_id": "HumanEval-S/1", "solution": "def f(x):\n    return None\n"}) + "\n")
    result = pytester.runpytest_inprocess(*BASE, "--specbench=contract", f"--model=replay:{samples}",
                                          "--specbench-checks=functional", "-rf")
    failed = [line for line in result.stdout.lines if line.startswith("FAILED specbench::")]
    assert failed, result.stdout.str()
    for line in failed:
        node, _, reason = line.partition(" - ")
        assert reason and "HumanEval-S/1" not in reason and " sample " not in reason, line


# ------------------------------------------------------------------ python:module:callable (4)
def test_python_model_takes_a_plain_generate_function_or_a_factory(pytester, monkeypatch):
    monkeypatch.syspath_prepend(str(pytester.path))
    pytester.makepyfile(plain26=textwrap.dedent("""
        from pathlib import Path

        CALLS = Path(__file__).with_name("calls.txt")  # in a file: pytester forgets the module after a run

        def generate(prompt):
            with open(CALLS, "a") as f:
                f.write(repr(prompt) + "\\n")
            return "def clamped_mean(values, low, high):\\n    return 0.0\\n"

        def make(settings):
            from pytest_specbench.models.reference import ReferenceModel
            return ReferenceModel()

        def wrong(settings):
            return "not a model"

        def number(prompt):
            return 42
    """))
    args = [*BASE, "--specbench=contract", "--specbench-tasks=HumanEval-S/0", "--specbench-checks=functional"]
    result = pytester.runpytest_inprocess(*args, "--model=python:plain26:generate", "-rf")
    result.assert_outcomes(failed=1)  # its answer runs (and is wrong)
    result.stdout.fnmatch_lines(["FAILED specbench::contract::HumanEval-S/0::0::functional - *"])
    calls = (pytester.path / "calls.txt").read_text().splitlines()
    assert len(calls) == 1 and "def clamped_mean" in calls[0]  # once, with the prompt's text

    factory = pytester.runpytest_inprocess(*args, "--model=python:plain26:make")
    factory.assert_outcomes(passed=1)

    for target, expected in (("wrong", "returned a str, which has no"), ("number", "returned int, not the answer")):
        bad = pytester.runpytest_inprocess(*args, f"--model=python:plain26:{target}")
        text = bad.stdout.str() + bad.stderr.str()
        assert bad.ret == pytest.ExitCode.USAGE_ERROR and expected in text, text
        assert "Traceback" not in text and "INTERNALERROR" not in text


# ------------------------------------------------------------------ nothing evaluated (5, 10)
def test_a_run_that_evaluates_nothing_exits_5_says_why_and_leaves_no_run_folder(pytester):
    # VERINA without Lean: every item skips (with Lean installed, nothing to show here).
    from pytest_specbench.execution.lean import find_lake

    if find_lake() is not None:
        pytest.skip("Lean is installed: VERINA's items run")
    result = pytester.runpytest_inprocess(*BASE, "--specbench=verina")
    assert result.ret == pytest.ExitCode.NO_TESTS_COLLECTED
    result.stdout.fnmatch_lines(["specbench: nothing was evaluated: all 4 items were skipped*exit status 5*"])
    assert not list((pytester.path / ".specbench").glob("runs/*"))
    collect = pytester.runpytest_inprocess(*BASE, "--specbench=contract", "--collect-only", "-q")
    assert collect.ret == 0
    assert not list((pytester.path / ".specbench").glob("runs/*"))


def test_resume_without_an_id_takes_the_newest_run_with_results(pytester):
    args = [*BASE, "--specbench=contract", "--specbench-tasks=HumanEval-S/0", "--specbench-checks=functional"]
    pytester.runpytest_inprocess(*args).assert_outcomes(passed=1)
    runs = sorted((pytester.path / ".specbench" / "runs").iterdir())
    assert len(runs) == 1
    # A run killed before its first result leaves a header-only journal, newer than the real one.
    empty = runs[0].parent / "99999999-999999-ffffff"
    empty.mkdir()
    (empty / "journal.jsonl").write_text((runs[0] / "journal.jsonl").read_text().splitlines()[0] + "\n")
    resumed = pytester.runpytest_inprocess(*args, "--specbench-resume")
    resumed.stdout.fnmatch_lines([f"specbench: resuming run {runs[0].name}: 1 items already finished*"])


# ------------------------------------------------------------------ item ids and exact tasks (8)
def _collected(result) -> list[str]:
    return sorted(line for line in result.stdout.lines if line.startswith("specbench::"))


def test_an_item_id_as_pytest_prints_it_reruns_that_item_and_tasks_select_exactly(pytester):
    result = pytester.runpytest_inprocess(*BASE, "specbench::contract::HumanEval-S/0::0::functional", "-v")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["specbench::contract::HumanEval-S/0::0::functional PASSED*"])

    exact = pytester.runpytest_inprocess(*BASE, "--specbench=contract", "--specbench-tasks=Mbpp-S/1",
                                         "--collect-only", "-q")
    assert _collected(exact) == ["specbench::contract::Mbpp-S/1::0::contract",
                                 "specbench::contract::Mbpp-S/1::0::functional"]
    substring = pytester.runpytest_inprocess(*BASE, "--specbench=contract", "-k", "S/1", "--collect-only", "-q")
    assert {line.split("::")[2] for line in _collected(substring)} == {"HumanEval-S/1", "Mbpp-S/1"}


# ------------------------------------------------------------------ result cache (11)
def test_a_run_served_from_the_result_cache_says_so_and_an_impossible_k_is_a_warning(pytester):
    args = [*BASE, "--specbench=contract", "--specbench-tasks=HumanEval-S/0,HumanEval-S/1"]
    first = pytester.runpytest_inprocess(*args, "--specbench-k=1,5")
    assert "came from the result cache" not in first.stdout.str()
    # (5) a pass@k it cannot compute is said, not dropped in silence
    first.stdout.fnmatch_lines(["specbench warning: --specbench-k: pass@5 needs at least 5 samples per task, "
                                "this run has 1*"])
    again = pytester.runpytest_inprocess(*args)
    again.stdout.fnmatch_lines(["specbench: all 4 results came from the result cache*no check was run*"])


# ------------------------------------------------------------------ escape sequences (12)
def test_parsing_a_reference_with_an_invalid_escape_warns_nothing():
    from pytest_specbench.benchmarks.contract.contract import entry_parameters
    from pytest_specbench.benchmarks.contract.sanitize import has_no_code, program_form, sanitize

    code = "import re\ndef f(s):\n    return re.findall('\\w+', s)\n"  # Mbpp/305's kind of reference
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert entry_parameters({"reference_with_contracts": code, "entry_point": "f"}) == ["s"]
        assert "findall" in sanitize(code, "f")
        program_form(code)
        # An answer without a fence (a replayed sample) is parsed once more to see whether it is code:
        # W2's run printed "<unknown>:21: DeprecationWarning: invalid escape sequence" from there.
        assert not has_no_code(code, code)


def test_a_relative_state_folder_is_made_absolute_where_pytest_was_started(pytester):
    # The executors hand the state folder to tools that run in other working folders
    # (javac's class path, the sandbox's job folders): a relative --specbench-dir left
    # relative made SpecEval's checker runtime unfindable, so every ground-truth clause
    # came out undecided (found by running the dynamic slice with --specbench-dir=st).
    pytester.makeconftest(
        "def pytest_sessionfinish(session):\n"
        "    run = session.config.pluginmanager.get_plugin('specbench-run')\n"
        "    open('state.txt', 'w').write(str(run.settings.state_dir))\n")
    pytester.runpytest_inprocess("--specbench=contract", "--model=reference", "--specbench-dir=st", "-k", "nothing", "-p",
                                 "no:cacheprovider")
    state = (pytester.path / "state.txt").read_text()
    assert state == str(pytester.path / "st"), state
