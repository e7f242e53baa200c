"""A first run prepares what it selects, in its workers (issue #28, point 3).

What a check needs besides the sample (SpecEval's ground truth checked on its
tests, EvalPlus's expected outputs, PostcondBench's checkout and venv) is
prepared when an item first needs it, in the process running that item, and
cached.  The xdist controller, which plans the run (dispatch costs, dedupe
groups, what to generate), asks ``skip_reason`` with ``ctx.planning`` set and
gets answers from caches only: it never prepares anything, for the items the
run selects or for the others.
"""
from __future__ import annotations

import json
import shutil
import subprocess
from types import SimpleNamespace

import pytest

from fakes import install_family

# A family whose skip depends on a costly preparation, like SpecEval's refuted
# ground truths: each preparation is logged with the process that made it.
PREP_FAMILY = '''
import json
import os
from pathlib import Path

from filelock import FileLock

from pytest_specbench.benchmarks.base import CheckResult, Message, Prompt, Task, TaskSet

REFUTED = {"t4"}


class PrepFamily:
    name = "prep"
    version = "1"
    options = ()

    def load(self, data_root, settings):
        src = Path(__file__)
        return TaskSet(tuple(Task(f"t{i}", {}, src, i + 1) for i in range(6)), (src,), bundled=True)

    def checks_for(self, task):
        return ("a", "b")

    def _prepared(self, task, ctx):
        folder = ctx.cache_dir("prep")
        done = folder / f"{task.task_id}.json"
        if not done.exists():
            if getattr(ctx, "planning", False):
                return None  # not known yet: the worker running the item prepares it
            with FileLock(str(done) + ".lock"):
                if not done.exists():
                    with open(folder / "log", "a") as log:
                        log.write(f"{task.task_id} {os.environ.get('PYTEST_XDIST_WORKER', 'controller')}\\n")
                    done.write_text(json.dumps({"refuted": task.task_id in REFUTED}))
        return json.loads(done.read_text())

    def skip_reason(self, check, task, ctx):
        prepared = self._prepared(task, ctx)
        return f"{task.task_id}: refuted" if prepared and prepared["refuted"] else None

    def dispatch_cost(self, task, check, ctx):
        return 1.0

    def program_key(self, task, sample, check):
        return sample.text

    def prompt(self, task, settings):
        return Prompt((Message("user", "anything"),))

    def reference(self, task, check):
        return f"answer {task.task_id}"

    def run_check(self, check, task, sample, ctx):
        return CheckResult(self._prepared(task, ctx) is not None, {})

    def aggregate(self, results, tasks, settings):
        return {"tasks": len(results)}

    def metric_names(self, settings):
        return ("tasks",)


ADAPTER = PrepFamily()
'''


@pytest.fixture
def prep_family(tmp_path, monkeypatch):
    site = install_family(tmp_path / "site", "prepfamily", PREP_FAMILY, "prep")
    monkeypatch.setenv("PYTHONPATH", str(site))
    return site


def test_a_first_run_under_xdist_prepares_only_what_it_selects_in_its_workers(pytester, prep_family):
    state = pytester.path / "state"
    # One worker (two until #45, session 23): what is claimed is controller against worker and
    # selected against not; once per task across workers is the family's own file lock here.
    result = pytester.runpytest_subprocess("--specbench=prep", "--model=reference", f"--specbench-dir={state}",
                                           "-p", "no:cacheprovider", "-n", "1", "-k", "t1[ or t4[", "-rs")
    result.assert_outcomes(passed=2, skipped=2)
    assert "t4: refuted" in result.stdout.str()
    log = (state / "cache" / "prep" / "log").read_text().split()
    prepared = dict(zip(log[::2], log[1::2]))
    # the two selected tasks, once each (two items each), none of the four others, and
    # never by the controller: by the workers that ran them
    assert sorted(prepared) == ["t1", "t4"] and len(log) == 4, log
    assert set(prepared.values()) == {"gw0"}, log


def test_planning_asks_adapters_from_their_caches_only(tmp_path):
    from pytest_specbench.plugin.services import Services

    services = Services(SimpleNamespace(state_dir=tmp_path), [])
    context = services.context()
    planning = context.for_planning()
    assert planning.planning is True and context.planning is False
    assert planning.cache_dir("x") == context.cache_dir("x") == tmp_path / "cache" / "x"


JAVA = shutil.which("javac") is not None and shutil.which("java") is not None


@pytest.mark.skipif(not JAVA, reason="javac/java not found: apt-get install openjdk-17-jdk-headless")
def test_speceval_planning_reads_ground_truths_from_the_cache_and_never_checks_one(tmp_path, monkeypatch):
    from pytest_specbench.benchmarks.speceval import validation
    from pytest_specbench.benchmarks.speceval.adapter import ADAPTER
    from pytest_specbench.plugin.services import Services

    class Settings(SimpleNamespace):
        def option(self, name):
            return {"speceval_validation": "dynamic", "speceval_oracle_refuted": "skip",
                    "speceval_task": "judgement,infilling", "speceval_perturbation": "none"}.get(name)

    checked: list[str] = []

    def check(source, tests, checker, key, path):
        # a stand-in for the JML checker: every ground truth refuted by its tests
        checked.append(key)
        gt = validation.GroundTruth(True, True, "violated", "ensures", 2, "x > 0", "call 0 f(0)")
        validation._GROUND_TRUTH[key] = gt
        path.write_text(json.dumps(gt.__dict__))
        return gt

    monkeypatch.setattr(validation, "_check_ground_truth", check)
    monkeypatch.setattr(validation, "_GROUND_TRUTH", {})
    services = Services(Settings(state_dir=tmp_path, limits=None, sandbox="process"), [])
    try:
        tasks = ADAPTER.load(None, services.settings).tasks
        context = services.context()
        planning = context.for_planning()
        assert all(ADAPTER.skip_reason(ADAPTER.checks_for(t)[0], t, planning) is None for t in tasks)
        assert checked == [] and not list((tmp_path / "cache").rglob("*.json"))
        one = [t for t in tasks if t.data["program"] == "MaxOfTwo"]
        assert all("the ground truth fails its own tests" in ADAPTER.skip_reason(t.data["kind"], t, context)
                   for t in one)
        assert len(checked) == 1  # one program, checked once for its two tasks
        validation._GROUND_TRUTH.clear()  # another process: the planning reads the disk cache
        reasons = {t.task_id: ADAPTER.skip_reason(t.data["kind"], t, planning) for t in tasks}
        assert {k for k, v in reasons.items() if v} == {t.task_id for t in one}
        assert len(checked) == 1
    finally:
        services.close()


def test_postcond_planning_never_exports_a_checkout(tmp_path):
    from pytest_specbench.benchmarks.postcond import repos

    clone = tmp_path / "repos" / "o--r"
    clone.mkdir(parents=True)
    (clone / "f.py").write_text("x = 1\n")
    git = ["git", "-C", str(clone), "-c", "user.name=t", "-c", "user.email=t@t"]
    for args in (["init", "-q"], ["add", "f.py"], ["commit", "-q", "-m", "one"]):
        subprocess.run(git + args, check=True, capture_output=True)
    first = subprocess.run(git + ["rev-parse", "HEAD"], check=True, capture_output=True, text=True).stdout.strip()
    subprocess.run(git + ["commit", "-q", "--allow-empty", "-m", "two"], check=True, capture_output=True)
    data = {"repo": {"github_path": "o/r", "commit": first}}
    # a clone at another commit: the planning would have to export the task's commit, and does not
    assert repos.checkout_for(data, tmp_path / "t.json", tmp_path / "repos", tmp_path / "cache", export=False) is None
    assert not (tmp_path / "cache").exists() or not any((tmp_path / "cache").iterdir())
    with pytest.raises(repos.CheckoutMissing):  # a missing repository is known without exporting
        repos.checkout_for(data, tmp_path / "t.json", tmp_path / "none", tmp_path / "cache", export=False)
    exported = repos.checkout_for(data, tmp_path / "t.json", tmp_path / "repos", tmp_path / "cache")
    assert (exported / "f.py").is_file()  # a worker exports it; the planning then knows it
    assert repos.checkout_for(data, tmp_path / "t.json", tmp_path / "repos", tmp_path / "cache", export=False) == exported
