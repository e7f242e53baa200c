"""Runs survive a crash: SIGKILL a real pytest run mid-way (under ``-n 2``), resume
it with ``--specbench-resume``, and get the report an uninterrupted run writes,
without running finished items again.

The second half of the items is made slow (each of their samples sleeps once per
job) so that the kill, made once the first few items are journaled, lands mid-run;
the first half, which the kill waits for, runs at full speed.  Whether a finished item ran again is read from the items themselves:
a conftest records every item that evaluates (``SpecbenchItem._evaluate``), so
an item taken from the journal is absent from that record (a mechanism, not a
time: a loaded machine must not fail it).
"""
from __future__ import annotations

import ast
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from types import SimpleNamespace

import pytest
from shared_runs import UNUSED_PLUGINS

from pytest_specbench.benchmarks.contract.contract import ADAPTER as CONTRACT

SLEEP = 0.33  # seconds each sample of a slow task sleeps once per job (the window below is >= 1.8 s, the SIGKILL follows the poll within milliseconds)
KILL_AFTER = 6  # journaled results before the SIGKILL
# The first TASKS bundled tasks have samples (the first 8 of 12, HumanEval-S/6's skipped contract
# check among them: #45, session 21, 36 -> 24 items, each evaluated in two of the three runs).
TASKS = 8
# The first FAST_TASKS tasks (in collection order, which a run follows: -n 0 in order, xdist's
# load scheduling from the front) do not sleep: their 12 items reach KILL_AFTER quickly.  The
# other 11 items that run sleep SLEEP each, so the run cannot end in the moment between the poll
# that sees KILL_AFTER results and the SIGKILL (at least 11 * SLEEP / 2 s under -n 2).  Only that
# moment needs slow items: sleeping in the first half too made every run (uninterrupted,
# killed, resumed) sleep twice as long for nothing.
FAST_TASKS = 4
VOLATILE_BENCHMARK_KEYS = ("metrics_ci",)  # bootstrap intervals may be resampled; compared separately if stable


def slow_solution(code: str, entry: str) -> str:
    """``code`` with a one-time sleep of SLEEP s at the start of ``entry``'s body (sanitizer-proof)."""
    tree = ast.parse(code)
    fn = next(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == entry)
    first = fn.body[0]
    lines = code.splitlines()
    pad = " " * first.col_offset
    lines[first.lineno - 1:first.lineno - 1] = [
        f"{pad}import time as _clock",
        f"{pad}if not hasattr(_clock, 'specbench_slept'):",
        f"{pad}    _clock.sleep({SLEEP})",
        f"{pad}    _clock.specbench_slept = True",
    ]
    return "\n".join(lines) + "\n"


def write_slow_samples(path) -> int:
    """The first TASKS bundled tasks: sample 0 the contract reference (passes), and for every
    other task sample 1 a wrong answer (fails); the samples of all but the first
    FAST_TASKS tasks sleep (:func:`slow_solution`).  Returns the number of items."""
    rows, items = [], 0
    for k, task in enumerate(CONTRACT.load(None, None).tasks[:TASKS]):
        entry = task.data["entry_point"]
        slow = (lambda code: slow_solution(code, entry)) if k >= FAST_TASKS else (lambda code: code)
        rows.append({"task_id": task.task_id, "sample_index": 0,
                     "solution": slow(CONTRACT.reference(task, "contract"))})
        items += 2
        if k % 2:
            wrong = f"def {entry}(*args, **kwargs):\n    return None\n"
            rows.append({"task_id": task.task_id, "sample_index": 1, "solution": slow(wrong)})
            items += 2
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return items


def specbench_args(samples, state, report, workers: int, *extra) -> list[str]:
    args = ["--specbench=contract", "-p", "no:cacheprovider", f"--model=replay:{samples}",
            f"--specbench-dir={state}", f"--specbench-report={report}", "--specbench-k=1"]
    if workers:
        args += ["-n", str(workers)]
    return args + list(extra)


def journal_lines(state) -> list[dict]:
    (path,) = list((state / "runs").glob("*/journal.jsonl"))
    lines = []
    for line in path.read_text().splitlines(keepends=True):
        if line.endswith("\n"):
            try:
                lines.append(json.loads(line))
            except ValueError:
                pass
    # Item lines after the header: results and errors (not a skip's line, decided again on resume,
    # nor the fingerprint a run writes at its end)
    return [e for e in lines[1:] if "nodeid" in e and "skipped" not in e]


def descendants(root: int) -> list[tuple[int, str]]:
    """(pid, cmdline) of every process below ``root``."""
    table = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", "rb") as fh:
                    ppid = int(fh.read().rsplit(b")", 1)[1].split()[1])
                with open(f"/proc/{entry}/cmdline", "rb") as fh:
                    cmd = fh.read().replace(b"\0", b" ").decode(errors="replace")
            except (OSError, IndexError, ValueError):
                continue
            table[int(entry)] = (ppid, cmd)
    found, todo = [], [root]
    while todo:
        parent = todo.pop()
        for pid, (ppid, cmd) in table.items():
            if ppid == parent:
                found.append((pid, cmd))
                todo.append(pid)
    return found


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            return fh.read().rsplit(b")", 1)[1].split()[0] != b"Z"
    except OSError:
        return False


# Records, when SPECBENCH_TEST_EVALUATED names a file, each item that evaluates
# rather than taking its outcome from the journal (loaded by every xdist worker too).
RECORD_EVALUATED = """
import os
from pytest_specbench.plugin.items import SpecbenchItem

_evaluate = SpecbenchItem._evaluate

def _recording(self):
    path = os.environ.get("SPECBENCH_TEST_EVALUATED")
    if path:
        with open(path, "a") as fh:
            fh.write(self.nodeid + "\\n")
    return _evaluate(self)

SpecbenchItem._evaluate = _recording
"""


def comparable(report_path) -> dict:
    benchmarks = json.loads(report_path.read_text())["benchmarks"]
    return {name: {k: v for k, v in section.items() if k not in VOLATILE_BENCHMARK_KEYS}
            for name, section in benchmarks.items()}


def uninterrupted_run(pytester):
    """The slow samples and their uninterrupted run (``-n 0``): what the resumed run must
    give (a ``-n 2`` run reports what ``-n 0`` does: test_dedupe.py::
    test_under_xdist_the_report_is_the_serial_one_and_no_program_is_evaluated_twice).  In this
    process, before the test's conftest exists (#45, session 18: a Python of its own, shared
    through the session's runs, was for a second test that no longer uses it)."""
    samples = pytester.path / "slow.jsonl"
    n_items = write_slow_samples(samples)
    report = pytester.path / "slow-full.json"
    full = pytester.runpytest_inprocess(*specbench_args(samples, pytester.path / "state-slow-full", report, 0))
    assert full.ret == 1  # the wrong samples fail
    return SimpleNamespace(samples=samples, n_items=n_items, result=full, report=report)


# One end-to-end SIGKILL-and-resume, under -n 2 (the resumed verdicts travel to the workers
# with their items: plugin/remote.py).  That a resumed run reports what the uninterrupted
# run does, with nothing journaled twice, is in-process in test_engine.py (the ledger over
# fake xdist nodes); the serial kill and resume it replaced cost two whole runs.
@pytest.mark.parametrize("workers", [2], ids=["xdist-2"])
@pytest.mark.slow
def test_sigkill_mid_run_then_resume_gives_the_uninterrupted_report(pytester, workers, monkeypatch):
    uninterrupted = uninterrupted_run(pytester)
    pytester.makeconftest(RECORD_EVALUATED)
    samples, n_items = uninterrupted.samples, uninterrupted.n_items
    crash_state = pytester.path / "state-crash"

    # 1. The uninterrupted run (-n 0).
    full = uninterrupted.result
    # (without "warnings": a run in this process also counts ResourceWarnings of objects that
    # earlier tests of this worker left to the garbage collector)
    full_outcomes = {k: v for k, v in full.parseoutcomes().items() if k != "warnings"}

    # 2. The same run, SIGKILLed (with its xdist worker) once some results are journaled.  One
    # worker (as many as the resumed run until #45, session 23): the controller journals what
    # any worker finished, and what is claimed of the kill (mid-run, no sandbox outlives it)
    # holds for one as for two; the resumed run below keeps two, across which the journaled
    # verdicts travel.
    cmd = [sys.executable, "-m", "pytest", *UNUSED_PLUGINS,
           *specbench_args(samples, crash_state, pytester.path / "crash.json", 1)]
    proc = subprocess.Popen(cmd, cwd=pytester.path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    deadline = time.monotonic() + 60
    sandboxes: set[int] = set()
    while time.monotonic() < deadline:
        sandboxes |= {pid for pid, cmd in descendants(proc.pid) if "execution._zygote" in cmd}
        runs = list((crash_state / "runs").glob("*/journal.jsonl"))
        if runs and len(journal_lines(crash_state)) >= KILL_AFTER:
            break
        assert proc.poll() is None, "the run ended before it could be killed"
        time.sleep(0.02)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    before = journal_lines(crash_state)
    assert KILL_AFTER <= len(before) < n_items - 1, "the kill did not land mid-run"

    # Nothing the killed run started outlives it: sandboxes (own session) exit on EOF.
    assert sandboxes
    deadline = time.monotonic() + 10
    while any(alive(pid) for pid in sandboxes) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not [pid for pid in sandboxes if alive(pid)], "sandbox processes survived the killed run"

    # 3. Resume it.
    # (the controller in this process, its workers xdist's own Pythons, which evaluate: the
    # conftest's wrapper of SpecbenchItem._evaluate, loaded here too, is undone at the test's end)
    from pytest_specbench.plugin.items import SpecbenchItem

    monkeypatch.setattr(SpecbenchItem, "_evaluate", SpecbenchItem._evaluate)
    evaluated_log = pytester.path / "evaluated.txt"
    monkeypatch.setenv("SPECBENCH_TEST_EVALUATED", str(evaluated_log))
    resumed = pytester.runpytest_inprocess(*specbench_args(
        samples, crash_state, pytester.path / "resumed.json", workers, "--specbench-resume"))
    monkeypatch.delenv("SPECBENCH_TEST_EVALUATED")
    resumed.stdout.fnmatch_lines([f"*specbench: resuming run *: {len(before)} items already finished*"])
    assert resumed.ret == full.ret
    assert {k: v for k, v in resumed.parseoutcomes().items() if k != "warnings"} == full_outcomes

    # Same report as the uninterrupted run.
    assert comparable(pytester.path / "resumed.json") == comparable(uninterrupted.report)
    manifest = json.loads((pytester.path / "resumed.json").read_text())["manifest"]
    assert manifest["resumed"]["items_finished_before"] == len(before)

    # Finished items were not run again: their outcomes came from the journal (none
    # of them evaluated), every other item evaluated once, and the journal has each
    # item once (old lines untouched, new ones appended).
    after = journal_lines(crash_state)
    assert after[:len(before)] == before
    nodeids = [e["nodeid"] for e in after]
    assert len(nodeids) == len(set(nodeids)) == n_items - 1  # one contract check is skipped (no CVTs)
    finished = {e["nodeid"] for e in before}
    evaluated = evaluated_log.read_text().splitlines()
    assert len(evaluated) == len(set(evaluated)), "an item evaluated twice"
    assert not finished & set(evaluated), "journaled items were run again"
    assert set(nodeids) - finished <= set(evaluated)  # the rest ran (plus the skipped one, which skips again)
    assert len(evaluated) == n_items - len(finished)


# ------------------------------------------------------------ refusals

ONE_ITEM = ("--specbench-tasks=HumanEval-S/0", "--specbench-checks=functional")


def collect_only(pytester, *args):
    """A quick run that evaluates nothing (and so leaves no run folder): enough to be refused
    (in this process: a usage error needs no Python of its own, as in test_bad_input.py)."""
    return pytester.runpytest_inprocess("--specbench=contract", "-p", "no:cacheprovider", "--model=reference",
                                         "--collect-only", "-q", *ONE_ITEM, *args)


@pytest.fixture(scope="module")
def journaled(tmp_path_factory):
    """Where the state folder of :func:`journal_run`'s run is kept for the module's tests."""
    return tmp_path_factory.mktemp("journaled") / ".specbench"


def journal_run(pytester, journaled) -> None:
    """A run folder whose journal has a result, to resume, in the test's folder: a run of one
    item, made by the module's first test that needs it and copied for the others (each test
    refuses, or edits, a copy of its own; the run was the same in each)."""
    if journaled.exists():
        shutil.copytree(journaled, pytester.path / ".specbench")
        return
    result = pytester.runpytest_inprocess("--specbench=contract", "-p", "no:cacheprovider", "--model=reference",
                                          "-q", *ONE_ITEM)
    result.assert_outcomes(passed=1)
    shutil.copytree(pytester.path / ".specbench", journaled)


def usage_error(result) -> str:
    assert result.ret == pytest.ExitCode.USAGE_ERROR, result.stdout.str()
    lines = [line for line in result.stderr.lines if line.startswith("ERROR:")]
    assert len(lines) == 1, result.stderr.str()
    return lines[0]


def test_resume_without_any_run_is_refused(pytester):
    line = usage_error(collect_only(pytester, "--specbench-resume"))
    assert "no run with results to resume under" in line


def test_resume_of_a_missing_run_id_is_refused(pytester, journaled):
    journal_run(pytester, journaled)
    line = usage_error(collect_only(pytester, "--specbench-resume=20000101-000000-abcdef"))
    assert "no run '20000101-000000-abcdef' under" in line and "runs there:" in line


def test_resume_with_other_limits_is_refused(pytester, journaled):
    journal_run(pytester, journaled)
    line = usage_error(collect_only(pytester, "--specbench-resume", "--specbench-call-cpu=2"))
    assert "its sandbox limits differ: call_cpu was 1.0, now 2.0" in line


def _edit_header(pytester, **changes):
    (path,) = list((pytester.path / ".specbench" / "runs").glob("*/journal.jsonl"))
    lines = path.read_text().splitlines(keepends=True)
    header = json.loads(lines[0])
    for key, value in changes.items():
        header[key] = value(header[key]) if callable(value) else value
    lines[0] = json.dumps(header) + "\n"
    path.write_text("".join(lines))


def test_resume_of_a_journal_from_another_version_is_refused(pytester, journaled):
    journal_run(pytester, journaled)
    _edit_header(pytester, specbench_version="0.0.1")
    line = usage_error(collect_only(pytester, "--specbench-resume"))
    assert 'specbench version differ: "0.0.1" then' in line


def test_resume_of_a_journal_over_other_data_is_refused(pytester, journaled):
    journal_run(pytester, journaled)
    _edit_header(pytester, data_files=lambda files: {name: "0" * 64 for name in files})
    line = usage_error(collect_only(pytester, "--specbench-resume"))
    assert "data file" in line and "changed (sha256 000000000000... then" in line


def test_resume_with_another_replay_file_is_refused(pytester):
    samples = pytester.path / "s.jsonl"
    samples.write_text(json.dumps({"task_id": "HumanEval-S/0", "solution": "def clamped_mean(v, l, h):\n    return 0\n"}) + "\n")
    pytester.runpytest_inprocess("--specbench=contract", "-p", "no:cacheprovider", f"--model=replay:{samples}",
                                 "-q", *ONE_ITEM).assert_outcomes(failed=1)
    samples.write_text(json.dumps({"task_id": "HumanEval-S/0", "solution": "def clamped_mean(v, l, h):\n    return 1\n"}) + "\n")
    result = pytester.runpytest_inprocess("--specbench=contract", "-p", "no:cacheprovider",
                                          f"--model=replay:{samples}", "--collect-only", "-q", *ONE_ITEM,
                                          "--specbench-resume")
    assert "its model differ: file_sha256 was" in usage_error(result)


def test_unwritable_run_directory_is_a_one_line_error(pytester):
    blocker = pytester.path / "not-a-dir"
    blocker.write_text("")
    line = usage_error(collect_only(pytester, f"--specbench-dir={blocker / 'state'}"))
    assert "--specbench-dir: cannot write the run journal" in line and "Not a directory" in line


@pytest.mark.parametrize("option, value, message", [
    ("--specbench-call-cpu", "0", "--specbench-call-cpu: must be a positive number, got 0.0"),
    ("--specbench-memory-mb", "-512", "--specbench-memory-mb: must be a positive number, got -512"),
    ("--specbench-wall-factor", "abc", "--specbench-wall-factor: expected a number, got 'abc'"),
    ("--specbench-max-errors", "-1", "--specbench-max-errors: must be 0 or more, got -1"),
    ("--specbench-max-errors", "many", "--specbench-max-errors: expected a whole number, got 'many'"),
])
def test_bad_limits_are_one_line_errors(pytester, option, value, message):
    assert message in usage_error(collect_only(pytester, f"{option}={value}"))


# ------------------------------------------------------------ harness errors

BROKEN_SANDBOX = """
    from pytest_specbench.execution import python

    def no_sandbox(self):
        raise OSError("simulated: cannot start the sandbox")

    def pytest_configure(config):  # for this run only: it runs in the tests' process
        original = python.PythonExecutor._start
        python.PythonExecutor._start = no_sandbox
        config.add_cleanup(lambda: setattr(python.PythonExecutor, "_start", original))
"""


# End to end: the default fails on any error, and the option reaches the decision; the
# boundary (3 of 4 errors allowed still fails) is test_exit_status.py's, in-process.
@pytest.mark.parametrize("max_errors, exit_code", [(None, 1), ("4", 0)])
def test_max_errors_decides_whether_harness_errors_fail_the_run(pytester, max_errors, exit_code):
    pytester.makeconftest(BROKEN_SANDBOX)
    args = ["--specbench=contract", "-p", "no:cacheprovider", "--model=reference", "-k", "HumanEval-S/0 or HumanEval-S/1"]
    if max_errors is not None:
        args.append(f"--specbench-max-errors={max_errors}")
    result = pytester.runpytest_inprocess(*args)
    result.assert_outcomes(errors=4)
    assert result.ret == exit_code
    result.stdout.fnmatch_lines(["*specbench: 4 harness errors (E), not model failures*"])


def test_errored_items_run_again_on_resume(pytester):
    pytester.makeconftest(BROKEN_SANDBOX)
    args = ["--specbench=contract", "-p", "no:cacheprovider", "--model=reference", "-k", "HumanEval-S/0"]
    assert pytester.runpytest_inprocess(*args).ret == 1
    (pytester.path / "conftest.py").unlink()
    result = pytester.runpytest_inprocess(*args, "--specbench-resume")
    result.stdout.fnmatch_lines(["*resuming run *: 0 items already finished*"])
    result.assert_outcomes(passed=2)


def test_resume_without_an_id_falls_back_to_a_run_killed_before_its_first_result(tmp_path):
    """A run SIGKILLed while generating has a journal with its header only: with no run
    that has results, resuming takes it (its answers come from the generation cache);
    a run with results is still preferred over a newer empty one."""
    import os

    from pytest_specbench.reports.journal import JOURNAL_NAME, LATEST, Journal

    def journal(name, lines, mtime):
        path = tmp_path / name / JOURNAL_NAME
        path.parent.mkdir()
        path.write_text("".join(line + "\n" for line in lines))
        os.utime(path, (mtime, mtime))
        return path

    killed = journal("20260101-000000-aaaaaa", ['{"header": 1}'], 1000)
    assert Journal._find(tmp_path, LATEST) == killed
    done = journal("20250101-000000-bbbbbb", ['{"header": 1}', '{"nodeid": "x"}'], 500)
    assert Journal._find(tmp_path, LATEST) == done
