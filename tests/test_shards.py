"""Shards for batch schedulers and ``specbench merge`` (docs/distributed.md).

The split and the joining of journals are pure (in-process); one set of runs
checks that two shards of the bundled ``--specbench=all --model=reference``
run, merged, give the report of one run (volatile fields aside); the real
ContractEval slice in 4 shards is in ``test_realdata.py``.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_specbench.cli import main as specbench_main
from pytest_specbench.engine.shards import assign, parse_shard, unit_costs
from pytest_specbench.errors import OptionError, SpecbenchError
from pytest_specbench.plugin.merge import recorded_arguments, rerun_arguments
from pytest_specbench.reports.merge import join
from shared_runs import postcond_bundled_state  # noqa: F401  (a fixture: the session's JVM class cache)

# What describes the process that wrote a report, not the run's results.
VOLATILE_MANIFEST = ("started", "finished", "journal", "resumed", "shard", "merged")


def comparable(report: dict) -> dict:
    """A report without its volatile fields: times, its journal, which shard or merge
    wrote it, the judge's question counter (work done in that process) and the
    sandbox's isolation probe (a run whose verdicts all came from the result cache
    starts no sandbox)."""
    report = json.loads(json.dumps(report))
    manifest = report["manifest"]
    for key in VOLATILE_MANIFEST:
        manifest.pop(key, None)
    manifest["sandbox"].pop("isolation", None)
    for role in manifest.get("roles", {}).values():
        role.pop("asked", None)
    return report


# ------------------------------------------------------------------ the split
def test_shard_option_is_i_of_n_counted_from_zero():
    assert parse_shard(None) is None and parse_shard("") is None
    assert parse_shard("0/4") == (0, 4) and parse_shard(" 3 / 4 ") == (3, 4)
    for bad in ("4/4", "1/0", "-1/2", "a/b", "1", "1/2/3"):
        with pytest.raises(OptionError, match="--specbench-shard"):
            parse_shard(bad)


def test_every_unit_lands_in_exactly_one_shard_the_same_way_every_time_balanced_by_cost():
    costs = unit_costs([("contract", f"T{i}", float(i % 7) + 0.5) for i in range(40)]
                       + [("contract", "T0", 3.0), ("speceval", "big", 30.0)])
    first = assign(costs, 4)
    assert set(first) == set(costs) and set(first.values()) == {0, 1, 2, 3}
    assert assign(dict(reversed(list(costs.items()))), 4) == first  # independent of the order given
    loads = [sum(c for u, c in costs.items() if first[u] == s) for s in range(4)]
    assert max(loads) - min(loads) <= max(costs.values())  # LPT: within one unit's cost
    assert first["contract::T0"] == first.get("contract::T0")  # both rows of T0 are one unit
    assert assign({"a": float("nan"), "b": -1.0, "c": 2.0}, 2)["c"] in (0, 1)


def test_merge_reruns_the_shard_command_without_what_spreads_or_places_work():
    args = ["-p", "no:cacheprovider", "--specbench=all", "--model=reference", "--specbench-shard=1/2", "-n", "2",
            "--dist=load", "--tx", "2*popen", "--basetemp=/tmp/x", "-k", "HumanEval", "--specbench-report=r.json",
            "--specbench-resume", "tests/test_x.py", "specbench::contract::HumanEval/0", "-n2", "-x", "-q"]
    assert rerun_arguments(args) == ["-p", "no:cacheprovider", "--specbench=all", "--model=reference", "-k",
                                     "HumanEval", "specbench::contract::HumanEval/0", "-q"]
    # The journal keeps no credential a URL carried (the endpoint's identity stays)
    assert recorded_arguments(["--model-base-url=http://me:s3cret@host:8000/v1?api-key=k&x=1", "--judge-model-base-url",
                               "https://u:p@judge/v1", "-o", "specbench_model_base_url=http://a:b@h/v1", "-q"]) == [
        "--model-base-url=http://host:8000/v1?api-key=REDACTED&x=1", "--judge-model-base-url", "https://judge/v1",
        "-o", "specbench_model_base_url=http://h/v1", "-q"]


# ------------------------------------------------------------------ joining
def _journal(folder: Path, name: str, shard, lines, end=True, java="java 17", **header) -> Path:
    path = folder / name / "journal.jsonl"
    path.parent.mkdir(parents=True)
    head = {"specbench_journal": 1, "run_id": name, "specbench_version": "0.1.0", "benchmarks": ["contract"],
            "data_files": {"d.jsonl": "ab"}, "model": {"spec": "reference"}, "checks": None, "samples": None,
            "limits": {"call_cpu": 1.0}, "sandbox": "process", "options": {}, "invocation": {"args": [name]},
            **({"shard": shard} if shard else {}), **header}
    ends = [{"fingerprint": {"toolchains": {"java": java}}, "complete": end}] if end is not None else []
    path.write_text("\n".join(json.dumps(x) for x in [head, *lines, *ends]) + "\n", encoding="utf-8")
    return path


def _ok(nodeid: str, passed: bool = True) -> dict:
    return {"nodeid": nodeid, "benchmark": "contract", "task_id": "T", "sample": 0, "check": "c",
            "passed": passed, "details": {}, "message": ""}


def test_join_takes_every_line_of_every_shard_and_refuses_what_is_not_one_run(tmp_path):
    a = _journal(tmp_path, "a", [0, 2], [_ok("x"), {"nodeid": "s", "skipped": "no java"}])
    b = _journal(tmp_path, "b", [1, 2], [{"nodeid": "y", "error": "E", "benchmark": "contract"}, _ok("z", False)],
                 java="java 21")
    joined = join([a, b.parent])  # a journal or its run folder
    assert joined.shards == 2 and set(joined.entries) == {"x", "s", "y", "z"}
    assert joined.header["fingerprint"] == {"toolchains": {"java": "java 17"}}  # the first's; the others' differences:
    assert joined.fingerprint_differences == [f"{b.parent}: toolchains.java: java 17 -> java 21"]
    assert joined.invocation == {"args": ["a"]} and "shard" not in joined.header and "run_id" not in joined.header

    other_model = _journal(tmp_path, "c", [1, 2], [], model={"spec": "replay:x.jsonl"})
    other_data = _journal(tmp_path, "d", [1, 2], [], data_files={"d.jsonl": "cd"})
    four = _journal(tmp_path, "e", [1, 4], [])
    again = _journal(tmp_path, "f", [0, 2], [])
    plain = _journal(tmp_path, "g", None, [])
    flipped = _journal(tmp_path, "h", [1, 2], [_ok("x", False)])
    killed = _journal(tmp_path, "i", [1, 2], [_ok("y")], end=None)  # no end line: killed
    stopped = _journal(tmp_path, "j", [1, 2], [_ok("y")], end=False)  # -x, Ctrl-C
    refusals = {
        (a, other_model): "is not of the same run as .*: its model differ: spec was \"reference\", now \"replay:x.jsonl\"",
        (a, other_data): "data file d.jsonl changed",
        (a, four): "shards of 2 and 4",
        (a, again): "are both shard 0/2",
        (a,): "shard 1/2 missing",
        (a, plain): "is not a shard's journal",
        (a, flipped): "item x has two verdicts",
        (a, killed): "i/journal.jsonl: its run did not finish .*resume it",
        (a, stopped): "j/journal.jsonl: its run did not finish",
        (tmp_path / "nowhere",): "no such journal",
    }
    for journals, message in refusals.items():
        with pytest.raises(SpecbenchError, match=message) as caught:
            join(journals)
        assert "\n" not in str(caught.value)


def test_headers_compare_as_json_has_them():
    """A header read back has lists where the run's own has tuples (a declared option's
    default, SpecEval's perturbations): not a difference (a resume or merge of such a
    run was refused)."""
    from pytest_specbench.reports.journal import header_difference

    run = {"options": {"speceval": {"options": {"speceval_perturbation": ("original",)}}}}
    assert header_difference(json.loads(json.dumps(run)), run) == ""
    assert header_difference({"shard": [0, 2]}, {"shard": [1, 2]}).startswith("its shard")
    assert header_difference({"shard": [0, 2]}, {"shard": [1, 2]}, ignore=("shard",)) == ""


def test_merge_command_refuses_a_journal_of_another_run_key_in_one_line(tmp_path, capsys):
    a = _journal(tmp_path, "a", [0, 2], [])
    b = _journal(tmp_path, "b", [1, 2], [], limits={"call_cpu": 2.0})
    assert specbench_main(["merge", "--report", str(tmp_path / "r.json"), str(a), str(b)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("specbench: error: merge: ") and "its sandbox limits differ: call_cpu was 1.0, now 2.0" in err
    assert "\n" not in err and not (tmp_path / "r.json").exists()


# ------------------------------------------------------------------ end to end
# PostcondBench by its Python task alone: its Java task (javalib--clamp: the project's and
# each mutant's compile, a JVM run per mutant) was 40% of this test's CPU (22 -> 13 CPU s
# without it), and the joining does not look at a language; SpecEval keeps a JVM in the run.
# The cheapest task of each family that has several: PostcondBench's running_max (one mutant;
# gcd has three, each a sandboxed pytest run) and SpecEval's selection task (its ground truth is
# checked in a JVM, without a JVM more for a generated spec): the shards' runs 7.5 -> 6.5 CPU s.
ONE_OR_TWO_PER_FAMILY = ",".join(("HumanEval-S/0", "HumanEval-S/1", "b01", "HumanEval-N/0", "minilib--running_max",
                                   "CountAbove/selection/original", "bundled_count"))


@pytest.mark.slow
def test_two_shards_of_the_bundled_suites_merged_are_the_report_of_one_run(pytester, monkeypatch,
                                                                           postcond_bundled_state):
    """Shards first (they fill the result cache), then the merge, then one run of
    everything (its verdicts from that cache: the equality is of the joining,
    not of the checks, which other tests hold to their upstreams).  ``postcond_bundled_state``
    fills the suite's JVM store (execution/jvm_store.py) with the trusted Java classes first:
    building them again was 60% of the first shard's CPU (SpecEval's item: 6.7 -> 2.9 CPU s),
    and how they are built is not this test's subject."""
    monkeypatch.setenv("SPECBENCH_DIR", str(pytester.path / "state"))
    # Every family, a task or two each (the whole bundled run costs ~4x as much and the
    # joining is the same): two shards must each get work, every family outcomes.
    base = ["-p", "no:cacheprovider", "--specbench=all", "--model=reference", f"--specbench-tasks={ONE_OR_TWO_PER_FAMILY}"]
    journals = []
    for index in range(2):
        result = pytester.runpytest_inprocess(*base, f"--specbench-shard={index}/2")
        result.stdout.fnmatch_lines(["*deselected*"])
        journals.append(next(line.split("run journal ")[1] for line in result.outlines if "run journal " in line))
    assert journals[0] != journals[1]
    # (The merge's --html is test_realdata.py's 4-shard merge: one family's plots, not the 13 of
    # every family here, ~2 CPU s of matplotlib; #45, session 21.)
    assert specbench_main(["merge", "--report", "merged.json", *journals]) == 0
    whole = pytester.runpytest_inprocess(*base, "--specbench-report=one.json")
    assert whole.ret == 0
    merged = json.loads((pytester.path / "merged.json").read_text())
    one = json.loads((pytester.path / "one.json").read_text())
    assert merged["manifest"]["merged"]["shards"] == 2
    fingerprint = one["manifest"]["fingerprint"]  # the run fingerprint, once per run, the shards' in the merge
    assert {"java", "javac", "lean", "lake"} <= set(fingerprint["toolchains"])
    assert fingerprint["packages"]["pytest-specbench"] and fingerprint["sandbox"]["mode"] == "process"
    assert fingerprint["data_files"]["contract"]["contracteval_rebuilt.jsonl"] == \
        one["benchmarks"]["contract"]["data_files"]["contracteval_rebuilt.jsonl"]
    for name, section in one["benchmarks"].items():
        assert section["tasks"] or section["skipped"], name  # nothing vacuous: every family has outcomes
    assert comparable(merged) == comparable(one)
