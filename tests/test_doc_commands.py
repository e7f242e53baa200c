"""Every shell command in README.md and docs/*.md, as written (issue #44, point 2).

The commands are taken from the documents' code blocks (fenced, or indented by four
spaces), with their continuation lines, inline comments dropped and ``&&`` chains split.
Each one either runs here, from an empty folder with this venv on ``PATH``, or is listed in
:data:`NOT_RUN` with the reason (a network, Lean, a real model, a user's own paths, the test
suite itself, minutes of work, or a family's own command that the family's test runs as
written on its whole bundled suite, named there): a command added to a document without
one is run, so an example cannot rot unseen.  The runs are kept small: a benchmark run is narrowed to a task
or two per family with ``-k`` (``--specbench-tasks`` for ``--specbench=all``, without the tasks
that start a toolchain: :data:`ALL_NARROW_TASKS`; the command is otherwise as written, options
included), and the README's gate example (``--specbench-fail-under``) is added to its main run.
"""
from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from shared_runs import OUTER_RUN_VARIABLES, UNUSED_PLUGINS

CHECKOUT = Path(__file__).resolve().parent.parent
DOCUMENTS = [CHECKOUT / "README.md", *sorted((CHECKOUT / "docs").glob("*.md"))]
COMMAND = re.compile(r"(?:pytest|pip|specbench|python3?|sh|bash|git|cd|apt-get|\.ci/run|[A-Z_]+=\S*)(?:\s|$)")
SHELL_FENCES = ("", "sh", "bash", "shell", "console")

# One or two bundled tasks per family (verina's skip without Lean: one line, still exit 0).
# PostcondBench's is the bundled task with the fewest mutants (running_max: one; gcd has three,
# each a sandboxed pytest run of the complete check): the command passes on either.  SpecEval's
# is a selection task: its ground truth is checked in a JVM as a generation task's is, without
# a JVM more for the generated spec (~0.8 CPU s; the JML checker on generation answers is
# tests/test_speceval_plugin.py's).
NARROW_TASKS = ("HumanEval-S/0", "b01", "minilib--running_max", "CountAbove/selection/original", "bundled_count")
NARROW = " or ".join(NARROW_TASKS)
# The README's --specbench=all commands without the two tasks that start a toolchain: their
# runs are then ~1.2 CPU s, not ~4.3 (the JVM's warm javac and a JVM run for SpecEval's item,
# two sandboxed pytest runs for PostcondBench's; #45, session 22).  What this test is for, a
# command of the README as written from an empty folder (the pytest and specbench on PATH, the
# options, every family configured, the report, the gate) does not depend on them; those two
# items under --specbench=all --model=reference are test_shards.py::test_two_shards_of_the_
# bundled_suites_merged_are_the_report_of_one_run's (two shards and the whole run, the same ids).
ALL_NARROW_TASKS = ("HumanEval-S/0", "b01", "bundled_count")

# (pattern, why it is not run here): the first match decides.
NOT_RUN = [
    (r"^pip (install|wheel)\b", "installs or builds the package: .ci/run (a fresh venv) and tests/test_wheel.py "
                                "(SPECBENCH_TEST_WHEEL=1; it builds and installs the wheel with the README's commands)"),
    (r"^pytest -n 2$", "the test suite itself (.ci/run runs it)"),
    (r"^specbench data download\b", "network: tests/test_data_download.py runs it against a local mirror"),
    (r"SPECBENCH_REAL_MODEL=1|tests/realmodel/", "builds llama-cpp-python (~17 min) and runs a real model: opt-in"),
    (r"openai:|--judge-model=openai", "a real model endpoint"),
    (r"verina|lake ", "Lean 4 (not installable here) and its checkout: docs/verina.md"),
    (r"\bDIR\b|\bURL\b|MIRRORS|\.\.\.|\bNAME\b|\[|~/|/home/me|user@|answers\.jsonl|samples\.jsonl|responses\.jsonl"
     r"|gpt5\.jsonl|always_correct\.jsonl|UPSTREAM_",
     "a user's own paths, files or hosts (placeholders)"),
    (r"shared/datasets|--data-root|\bsynth\b", "the upstream data and minutes of work: the realdata tests run these paths"),
    (r"pytest_specbench\.perf|\.tools\.|\.survey", "a benchmark script that prints figures (minutes)"),
    (r"--px|--tx|--specbench-hosts", "remote hosts: tests/test_distributed.py"),
    (r"/results/|results/shard-", "a batch scheduler's shared volume of shard journals: tests/test_shards.py runs "
                                  "shards and specbench merge"),
    (r"^pytest --specbench=(cife|contract|contract-cvt|speceval) --model=reference$",
     "run as written, on the family's whole bundled suite, by its own test: test_cife_plugin.py::"
     "test_reference_on_the_bundled_suite_scores_100_percent_offline, test_plugin_contract.py::"
     "test_reference_scores_100_percent_on_the_bundled_suite, test_contract_cvt.py::reference_runs, "
     "test_speceval_plugin.py::test_plugin_runs_the_bundled_suite_with_the_reference (docs/timing.md, session 21)"),
    (r"^git ", "a git checkout's history (the tests may run from an exported tree)"),
    (r"^cd ", "a job script's own working folder (Kubernetes, Slurm: docs/distributed.md)"),
]


def commands() -> list[tuple[str, int, str]]:
    """``(document, line, command)`` of every shell command in the documents' code blocks."""
    found = []
    for doc in DOCUMENTS:
        lines = doc.read_text(encoding="utf-8").splitlines()
        fence: str | None = None
        blank_before = True
        pending: tuple[int, str] | None = None
        for number, line in enumerate(lines, 1):
            stripped = line.strip()
            if stripped.startswith("```"):
                fence = None if fence is not None else stripped[3:].strip()
                blank_before = False
                continue
            in_code = (fence in SHELL_FENCES) if fence is not None else (line.startswith("    ") and blank_before)
            if fence is None and not line.startswith("    "):
                blank_before = not stripped
            if not in_code and pending is None:
                continue
            text = re.sub(r"\s+#\s.*$", "", stripped)
            if pending is not None:  # a continuation line
                start, so_far = pending
                text = so_far + " " + text
                number = start
            if text.endswith("\\"):
                pending = (number, text[:-1].rstrip())
                continue
            pending = None
            for part in (p.strip() for p in text.split("&&")):
                if COMMAND.match(part) and not re.match(r"specbench( \w+)?:", part):  # not output

                    found.append((doc.relative_to(CHECKOUT).as_posix(), number, part))
    return found


def not_run_reason(command: str) -> str | None:
    return next((why for pattern, why in NOT_RUN if re.search(pattern, command)), None)


def test_the_documents_commands_are_found_and_each_is_run_or_has_a_reason():
    found = commands()
    texts = [c for _, _, c in found]
    # The README's quick start and its two commands are among them (the extraction works).
    for expected in ("pip wheel . -w dist/ --no-deps", "pytest --specbench=all --model=reference -n 2",
                     "pip install -e .", "pytest --specbench=all --model=reference", "specbench data path"):
        assert expected in texts, expected
    assert not [c for c in texts if c.startswith("pip install pytest-specbench")]  # on no package index
    run = [c for c in texts if not_run_reason(c) is None]
    # the README's two commands and its data command run here; each family's own is its test's
    assert {"pytest --specbench=all --model=reference -n 2", "pytest --specbench=all --model=reference",
            "specbench data path"} <= set(run), run
    assert all(c.startswith(("pytest ", "specbench ")) for c in run), run


def _env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in OUTER_RUN_VARIABLES}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env["HOME"] = str(tmp_path)
    return env


def _as_run_here(command: str, gate: str) -> str:
    """The command as run here: narrowed to a few tasks, plugins no run needs left out."""
    if not command.startswith("pytest "):
        return command
    extra = [*UNUSED_PLUGINS, "-p", "no:cacheprovider", "-q"]
    if "--specbench=all" in command:
        # By exact ids: the controller then knows the whole plan before collection, so the
        # README's -n 2 run, whose verdicts the run before it left in the result cache, reads
        # them without starting its two workers (~0.8 CPU s each; with -k it could not tell
        # that the deselected items need nothing).  A family's own command keeps -k (the
        # other families' ids would be unknown tasks to it).
        extra.append(f"--specbench-tasks={','.join(ALL_NARROW_TASKS)}")
    elif " -k " not in command:
        extra += ["-k", f"'{NARROW}'"]
    if "--specbench=all" in command and "-n 2" in command:
        extra.append(gate)  # the README's gate example, on its main run
    return f"{command} {' '.join(extra)}"


def _in_this_process(command: str, first_pytest: bool) -> bool:
    """Whether ``command`` runs in this process: a ``pytest`` command after the first one,
    without ``-n``.  The first pytest command (the README's quick start) and every ``-n`` one
    run in a shell as written (the ``pytest`` on ``PATH``, xdist's workers); a later
    single-process one is ``pytest.main`` with the same arguments, in the same folder and
    ``HOME``: the first run left each of its verdicts in the result cache, so a Python of
    its own, the plugin's import and the families' imports were most of its cost (~1 CPU s)."""
    return command.startswith("pytest ") and not first_pytest and " -n " not in command


@pytest.mark.slow
def test_the_documents_runnable_commands_run_as_written(pytester):
    readme = (CHECKOUT / "README.md").read_text(encoding="utf-8")
    gate = re.search(r"`(--specbench-fail-under=[^`]+)`", readme)[1]
    folder = pytester.path  # also HOME, for the shell's commands and (pytester's) for this process
    seen: set[str] = set()
    failures = []
    first_pytest = True
    # In one folder, those without -n first: an -n run then finds every verdict in the result
    # cache, instead of preparing the JML and PostcondBench toolchains again in each worker
    # (and, narrowed by task ids, starts no worker: _as_run_here).
    for doc, line, command in sorted(commands(), key=lambda c: " -n " in c[2]):
        if not_run_reason(command) is not None or command in seen:
            continue
        seen.add(command)
        shell = _as_run_here(command, gate)
        if _in_this_process(command, first_pytest):
            done = pytester.runpytest_inprocess(*shlex.split(shell)[1:])
            returncode, stdout = int(done.ret), done.stdout.str()
            tail = (stdout[-1500:] + done.stderr.str()[-1500:]).strip()
        else:
            ran = subprocess.run(["bash", "-c", shell], cwd=folder, env=_env(folder), capture_output=True,
                                 text=True, timeout=900, stdin=subprocess.DEVNULL)
            returncode, stdout = ran.returncode, ran.stdout
            tail = (ran.stdout[-1500:] + ran.stderr[-1500:]).strip()
        first_pytest = first_pytest and not command.startswith("pytest ")
        if returncode != 0:
            failures.append(f"{doc}:{line}: `{command}` exited {returncode}:\n{tail}")
        elif command.startswith("pytest ") and not re.search(r"\d+ passed", stdout):
            failures.append(f"{doc}:{line}: `{command}` passed nothing:\n{tail}")
    assert not failures, "\n\n".join(failures)
    assert len(seen) >= 3, seen
