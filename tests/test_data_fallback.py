"""Without --specbench-data, each benchmark reads the download cache when it holds
that benchmark's folders, and its bundled suite otherwise, on its own: a family
missing from the cache no longer sends every other family of ``--specbench=all``
back to its bundled suite in silence; the one that fell back says so in one line.
In-process: the choice (``data.fetch.cache_readers``) and the plan over recording
adapters; ``tests/test_packaging.py`` reads the choice from a parsed config."""
from __future__ import annotations

from pathlib import Path

from pytest_specbench.benchmarks.base import TaskSet
from pytest_specbench.data import fetch
from pytest_specbench.engine.plan import RunPlan
from pytest_specbench.models.reference import ReferenceModel
from fakes import FakeSettings, fake_context


def _downloaded(root: Path, *folders: str) -> None:
    for folder in folders:  # as `specbench data download` leaves a verified folder
        (root / folder).mkdir(parents=True)
        (root / folder / fetch.MARKER).write_text(fetch._digest(folder))


def test_each_family_reads_the_cache_when_it_holds_its_folders_and_the_others_fall_back_alone(tmp_path):
    from pytest_specbench.benchmarks import known_benchmarks

    root = tmp_path / "cache"
    _downloaded(root, "contracteval", "evalplus")  # `specbench data download contract`
    readers, bundled = fetch.cache_readers(root, known_benchmarks())  # --specbench=all
    assert readers == ["contract", "contract-cvt", "evalplus", "nl2postcond"]  # nl2postcond reads evalplus/
    assert sorted(bundled) == ["cife", "postcond", "speceval", "verina"]
    for name, folder in [("cife", "cife"), ("postcond", "postcondbench"), ("speceval", "specgenbench"),
                         ("verina", "verina")]:
        line = bundled[name]
        assert "\n" not in line and line.startswith(f"{name} reads its bundled sample suite"), line
        assert f"{root} has no verified {folder}/ (" in line and f"`specbench data download {name}`" in line, line

    # Half of a family's folders: it falls back, naming the missing one.
    (root / "contracteval" / fetch.MARKER).unlink()
    readers, bundled = fetch.cache_readers(root, ["contract", "cife"])
    assert readers == [] and "has no verified contracteval/ (" in bundled["contract"]
    assert "has no verified cife/ (" in bundled["cife"]

    # No folder of the run in the cache: the bundled suites are the usual default, nothing to
    # say; nor for a name that declares no folder (an entry point's family: its own data).
    assert fetch.cache_readers(root, ["cife", "verina", "no-such-family"]) == (
        [], {"cife": "", "verina": "", "no-such-family": ""})


class Recording:
    """A family that records the data root it is given."""

    version = "1"

    def __init__(self, name: str):
        self.name, self.roots = name, []

    def load(self, data_root, settings):
        self.roots.append(data_root)
        return TaskSet((), (), bundled=data_root is None, warnings=("its own warning",))


def test_the_plan_gives_a_family_that_fell_back_no_data_root_and_its_one_line(tmp_path):
    line = "b reads its bundled sample suite: the download cache /c has no verified b/ (...)"
    settings = FakeSettings(tmp_path, data_root=tmp_path / "cache", data_bundled={"b": line, "entry": ""})
    adapters = {name: Recording(name) for name in ("a", "b", "entry")}
    plan = RunPlan(settings, adapters, ReferenceModel(), fake_context(settings, cache=tmp_path))
    assert plan.taskset("a").warnings == ("its own warning",) and not plan.taskset("a").bundled
    assert plan.taskset("b").warnings == (line, "its own warning") and plan.taskset("b").bundled
    # A family that declares no data folder (an entry point's): its bundled suite, nothing said.
    assert plan.taskset("entry").warnings == ("its own warning",) and plan.taskset("entry").bundled
    assert {n: a.roots for n, a in adapters.items()} == {"a": [tmp_path / "cache"], "b": [None], "entry": [None]}
