"""One contract for every executor, run over every registered one.

The contract, its probes and the drivers of the registered kinds ship in
:mod:`pytest_specbench.testing.executor` (so an executor from another package
proves itself the same way: ``check_executor``); here each clause is one test
over each kind of :data:`pytest_specbench.execution.EXECUTORS` (``python``,
``command``, ``jvm``, ``lean``).  A new executor registered without a driver
fails :func:`test_every_registered_executor_has_a_driver`.  Where a toolchain
is missing (javac/java; Lean's lake and a built project named by
``SPECBENCH_LEAN_PROJECT``) its cases skip with one line saying what to install.
"""
from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from pytest_specbench.execution import EXECUTORS, make_executor
from pytest_specbench.execution.limits import Limits
from pytest_specbench.testing import executor as contract
from pytest_specbench.testing.executor import DRIVERS, JAVA_PROBE, OUTPUT_CAP, ROOT, Subject
from shared_runs import session_jvm  # noqa: F401  (a fixture: the process's one jvm executor)


def test_every_registered_executor_has_a_driver():
    assert set(EXECUTORS) == set(DRIVERS)


@pytest.fixture(scope="module", params=sorted(EXECUTORS))
def subject(request, tmp_path_factory):
    """One registered kind, made through the registry, hiding a project and a state
    folder with a secret in each (``Subject.hiding``)."""
    driver = DRIVERS[request.param]
    base = tmp_path_factory.mktemp(f"conformance-{request.param}")

    def make(hidden):
        settings = SimpleNamespace(sandbox="process", state_dir=base / "state", sample_python="",
                                   # the python kind's: a spinner stopped at 0.5 s of CPU, a sleeper at 1.5 s
                                   limits=Limits(call_cpu=0.5, wall_factor=2.0, startup_cpu=2.0, memory_mb=1024,
                                                 processes=16, tmp_mb=64, output_bytes=OUTPUT_CAP))
        return make_executor(request.param, settings, hidden)

    subject = Subject.hiding(base, driver, make)
    reason = driver.skip_reason(subject.executor)
    if reason:
        subject.executor.close()
        pytest.skip(f"{request.param} executor: {reason}")
    if request.param == "jvm":
        # The probe is this test's own class: the process's jvm executor compiles it (its warm
        # javac, which the JML and SpecEval tests of a suite run have started already), the
        # executor under test runs it.  JvmDriver.setup would start that executor's own warm
        # javac for this one compile (~0.6-1 CPU s); no clause of the contract is about compiling.
        compiled = request.getfixturevalue("session_jvm").compile({"Probe.java": JAVA_PROBE})
        assert compiled.ok, compiled.diagnostics
        driver.classes = compiled.classes
    else:
        driver.setup(subject.executor, base)
    yield subject
    subject.executor.close()


def test_a_job_runs_and_answers(subject):
    contract.check_runs(subject)


def test_cpu_limit_stops_a_busy_loop(subject):
    contract.check_cpu_limit(subject)


def test_wall_limit_stops_a_sleeper(subject):
    contract.check_wall_limit(subject)


def test_memory_limit_refuses_four_gib(subject):
    contract.check_memory_limit(subject)


def test_output_is_capped(subject):
    contract.check_output_cap(subject)


@pytest.mark.skipif(not ROOT, reason="needs root: a network namespace of its own per sandbox")
def test_no_network(subject):
    contract.check_no_network(subject)


def test_project_state_and_home_are_hidden(subject):
    contract.check_hidden_paths(subject)


def test_a_jobs_files_are_gone_for_the_next_job(subject):
    contract.check_files_are_gone(subject)


def test_a_crash_is_a_result(subject):
    contract.check_crash_is_a_result(subject)


def test_a_setup_fault_is_an_infrastructure_error(subject):
    contract.check_setup_fault(subject)


def test_the_shipped_contract_fails_an_executor_that_keeps_a_jobs_files(tmp_path):
    """``check_executor`` on an executor from elsewhere: plain subprocesses in one shared
    folder (no sandbox) keep what a job wrote for the next one, and the contract says so."""
    import subprocess

    shared = tmp_path / "shared"
    shared.mkdir()

    class SharedFolderExecutor:
        def available(self):
            return None

        def run(self, env, job):
            done = subprocess.run(job.argv, cwd=shared, capture_output=True, text=True, timeout=60)
            return SimpleNamespace(stdout=done.stdout, stderr=done.stderr, timed_out=False, signal=None,
                                   output_truncated=False)

    subject = Subject.hiding(tmp_path, contract.CommandDriver(), lambda hidden: SharedFolderExecutor())
    leftover = Path("/tmp/left-behind.txt")
    try:
        contract.check_runs(subject)  # it runs jobs...
        with pytest.raises(AssertionError, match="SEEN"):
            contract.check_files_are_gone(subject)  # ...and the next one sees the last one's files
    finally:
        leftover.unlink(missing_ok=True)
