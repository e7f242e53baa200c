"""Family conformance: what every registered family (folders and entry points alike)
promises the plugin, checked in-process on its bundled suite by the shipped
``pytest_specbench.testing.check_family`` (which a family from another package runs the same way).

For each family: a version is set; its bundled suite loads; the reference answer of
every check passes (a check the family skips, such as VERINA's without Lean, is left
out and counted); each check's details survive the journal's JSON round trip
unchanged; ``metric_names`` is a subset of what ``aggregate`` returns on those
results.  The checks run through the real services of the plugin (sandboxed
executors, cache folders, the family's default roles), on a bounded spread of tasks
(every check kind of the family, ``SPREAD`` tasks at most: every task of the bundled
suites but PostcondBench's, a spread of a larger one; PostcondBench: 2 of its 12, one of each
language, see ``SPREAD_OF``) so the test stays cheap; SPECBENCH_TESTS_FULL=1 runs
every task.  The toy family of
``test_house_toy_family.py`` is installed as an entry point to show that families
from other packages are covered too.
"""
from __future__ import annotations

import pytest

from fakes import install_family

from pytest_specbench import benchmarks
from pytest_specbench.testing import check_family
from shared_data import FULL
from shared_runs import postcond_bundled_state  # noqa: F401  (a fixture: PostcondBench's Java classes, built once)
from shared_runs import session_jvm  # noqa: F401  (a fixture: the process's one jvm executor)
from test_house_toy_family import TOY_FAMILY

SPREAD = 16  # tasks per family at most by default (every check kind first): every bundled suite is smaller
# ... but PostcondBench's, whose reference check runs the task's tests once per mutant (59
# sandboxed test runs over its 12 tasks): one task of each language (the Python side under
# pytest, the Java side under JUnit), the one with the fewest mutants (ORDER_OF):
# minilib--running_max and javalib--maxIndex, 6 runs: what this test asks of a family (the
# reference passes every check, details survive JSON, the metric names) is the same on one
# task of a kind as on four.  That the bundled references are correct and kill every mutant
# is data, checked for a spread of tasks across the suite: by the xdist test of
# tests/test_postcond_plugin.py (minilib--running_max, and javalib--push on its first mutant) and by the authors'
# tool tests, which rebuild minilib--push (tests/test_postcond_run.py) and javalib--maxIndex
# (tests/test_postcond_java.py) running the reference on every mutant.  (javalib--clamp and
# minilib--clamp, the first of each language in name order, were 10 runs.)
# ... and SpecEval's, whose 16 tasks are 4 programs times its 4 check kinds: with dynamic
# validation each program is a ground-truth check and each generation and judgement item a
# JVM run of its own.  One program's four kinds (CountAbove: every check kind) is what this
# test asks.  The reference on the other tasks: every program's infilling and generation
# under the JML checker (with the perturbations of two programs) in
# tests/test_speceval_plugin.py::test_dynamic_validation_on_the_bundled_suite, all 16 through
# the plugin (syntactic, the report's JSON) in its test_plugin_runs_the_bundled_suite_with_
# the_reference, and every kind at 100% under dynamic validation on three real programs in
# its test_real_reference_scores_100_percent_with_dynamic_validation.
# SPECBENCH_TESTS_FULL=1 runs every task of every family.
SPREAD_OF = {"postcond": 2, "speceval": 4}
# What else than its checks makes a task of a family a kind of its own for the spread.
KIND_OF = {"postcond": lambda task: task.data["repo"].get("language", "python")}
# Which task of a kind the spread takes first: PostcondBench's with the fewest mutants.
ORDER_OF = {"postcond": lambda task: len(task.data["mutants"])}
# Samples per task given to aggregate (the reference's verdicts, repeated): enough for
# every k a family reports on its own (PostcondBench: 1, 3, 5).
SAMPLES = 5
# Options a family needs for an offline reference run here (the toy family's judge is the
# test server's, exercised in test_house_toy_family.py).
EXTRA_ARGS = {"toy": ("--toy-judge=off",),
              # the reference passes every tier, cheaply: 5 examples per relation (20 until session
              # 19: 3.4 -> 2.4 CPU s); what the search finds is test_tiers.py's (15 examples)
              "nl2postcond": ("--spec-pbt-examples=5",)}
ENTRY_POINT_FAMILIES = ["toy"]


def _postcond(task, check, result):
    """PostcondBench's reference kills every mutant of its task (Python and Java alike)."""
    if check == "complete":
        assert result.details["killed"] == result.details["total"] == len(task.data["mutants"]) > 0, \
            (task.task_id, result.details)


# Metric names a family declares that its aggregate does not return on the tasks run here,
# each a known gap (exact: once fixed, this entry must go).  PostcondBench's spread
# (javalib--maxIndex, minilib--running_max) holds standalone (Solo) methods only, so the Dep group
# of Table 3 is not computed by default; the whole suite (SPECBENCH_TESTS_FULL=1) has three
# Dep methods (javalib--push, javalib--withdraw, minilib--push use their class, issue 49).
KNOWN_ABSENT = {} if FULL else {"postcond": {"Corr@1[Dep]", "Comp@1[Dep]"}}


# What a family's reference must also do here, beyond passing (the family's own
# reference-on-every-bundled-task tests were merged into this run).
FAMILY_CHECKS = {"postcond": _postcond}


@pytest.fixture
def toy_entry_point(tmp_path, monkeypatch):
    """The toy family as an installed distribution with a ``specbench.benchmarks`` entry point."""
    site = install_family(tmp_path / "site", "toyfamily", TOY_FAMILY, "toy")
    monkeypatch.syspath_prepend(str(site))
    yield
    import sys

    sys.modules.pop("toyfamily", None)


def _conforms(tmp_path, name, state=None, executors=None):
    """The shipped contract (``pytest_specbench.testing.check_family``) on a registered family."""
    adapter = benchmarks.get_benchmark(name)
    assert adapter.name == name
    checked = check_family(adapter, *EXTRA_ARGS.get(name, ()), state_dir=state or tmp_path / "state",
                           spread=None if FULL else SPREAD_OF.get(name, SPREAD), kind_of=KIND_OF.get(name),
                           order=ORDER_OF.get(name),
                           also=FAMILY_CHECKS.get(name), known_absent=KNOWN_ABSENT.get(name, ()),
                           executors=executors)
    if not checked.ran:
        pytest.skip(f"{name}: every check skipped here ({checked.skipped[0]})")
    return checked.ran, checked.skipped


# A family whose checks compile trusted code first runs in the session's state folder that
# has it built (PostcondBench's Java toolchain and project, tests/shared_runs.py); the
# references' own runs (every program compiled and run, every mutant) are still this test's.
STATE_FIXTURE = {"postcond": "postcond_bundled_state"}
# Executors lent to check_family: SpecEval's checks on the process's one jvm executor (the one
# its JML and SpecEval tests use), whose warm javac has started once (~1 CPU s a start: #45,
# session 22); every program, spec and answer is still compiled and run by this test.
EXECUTORS_OF = {"speceval": {"jvm": "session_jvm"}}


# Families whose references run a JVM per program and every mutant: slow (7 and 5 CPU s).
JVM_FAMILIES = {"postcond", "speceval"}


@pytest.mark.parametrize("name", [pytest.param(name, marks=pytest.mark.slow) if name in JVM_FAMILIES else name
                                  for name in benchmarks.known_benchmarks()])
def test_registered_family_conforms(tmp_path, request, name):
    state = request.getfixturevalue(STATE_FIXTURE[name]) if name in STATE_FIXTURE else None
    executors = {kind: request.getfixturevalue(fixture) for kind, fixture in EXECUTORS_OF.get(name, {}).items()}
    _conforms(tmp_path, name, state, executors)


@pytest.mark.parametrize("name", ENTRY_POINT_FAMILIES)
def test_entry_point_family_conforms(tmp_path, toy_entry_point, name):
    assert name in benchmarks.known_benchmarks()  # found through its entry point, nothing in the package edited
    ran, _ = _conforms(tmp_path, name)
    assert ran == 2 * 3  # both checks of its three tasks


def test_entry_points_are_read_once_while_the_path_is_unchanged(tmp_path, monkeypatch):
    """The registry reads the entry points once for a path (a run asked four times, each
    ``entry_points`` call opening every distribution's file: #45, session 21), and a family
    installed on the path afterwards is found at once (its folder is new on sys.path, or a
    folder's mtime changed)."""
    calls = []

    def counted(**kwargs):
        calls.append(kwargs)
        return real(**kwargs)

    real = benchmarks.entry_points
    monkeypatch.setattr(benchmarks, "entry_points", counted)
    monkeypatch.setattr(benchmarks, "_ENTRY_POINTS", {}, raising=False)
    assert "toy" not in benchmarks.known_benchmarks()
    benchmarks.known_benchmarks()
    assert len(calls) == 1
    site = tmp_path / "site"
    site.mkdir()
    monkeypatch.syspath_prepend(str(site))
    assert "toy" not in benchmarks.known_benchmarks() and len(calls) == 2  # a folder new on the path
    install_family(site, "toyfamily", TOY_FAMILY, "toy")  # into a folder already on it
    try:
        assert benchmarks.get_benchmark("toy").name == "toy" and len(calls) == 3
    finally:
        import sys

        sys.modules.pop("toyfamily", None)


def test_executors_lent_to_check_family_are_used_and_left_open(tmp_path):
    """What ``check_family(executors=...)`` hands the services: the executor of that kind, which
    their close() leaves to its owner (the suite's one jvm executor per process lives on)."""
    from pytest_specbench.plugin.services import Services
    from pytest_specbench.testing.family import family_settings

    class Lent:
        closed = False

        def close(self):
            self.closed = True

    lent = Lent()
    services = Services(family_settings("contract", state_dir=tmp_path / "state"), [])
    services.borrow_executors({"jvm": lent})
    assert services.executor("jvm") is lent
    services.close()
    assert not lent.closed
