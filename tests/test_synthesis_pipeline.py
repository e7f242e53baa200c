"""Subset enumeration, decoding, the feasibility filter, resumability and bad-input
reports of the CVT synthesis pipeline (ContractEval §3.2), on hand-made tasks."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_specbench.benchmarks.contract.synthesis import pipeline
from pytest_specbench.benchmarks.contract.synthesis.feasibility import run_calls
from pytest_specbench.benchmarks.contract.synthesis.solve import enumerate_candidates
from pytest_specbench.benchmarks.contract.synthesis.translate import translate_contract
from pytest_specbench.benchmarks.contract.synthesis.variants import VariantError, build_variants


def make_task(task_id="T/0", contract_lines=("assert isinstance(n, int)", "assert n >= 0"),
              body="    return n * 2", params="n", entry="f"):
    contract = "\n".join(f"    {c}, \"invalid inputs\" # $_CONTRACT_$" for c in contract_lines)
    return {
        "task_id": task_id, "entry_point": entry, "original_prompt": f"def {entry}({params}):\n",
        "contract": "\n" + contract + "\n",
        "contracts": {f"assert_{k}": c + ', "invalid inputs' for k, c in enumerate(contract_lines)},
        "reference_with_contracts": f"def {entry}({params}):\n\n{contract}\n{body}\n",
        "cs_system": "s", "cs_user": "u", "eas_system": "s", "eas_user": "u",
        "contract_aware_description": "d", "eas_examples": {}, "cvts": [{"input": {"n": 1}}],
    }


# ---------------------------------------------------------------- solving
def test_subsets_unsat_dropped_and_k_distinct_models():
    model = translate_contract("assert x > 0\nassert x > 1", ["x"], ["assert_0", "assert_1"])
    cands, stats = enumerate_candidates(model, k_models=3)
    assert stats.subsets == 3 and stats.unsat == 1 and stats.sat == 2  # violating only x > 0 is impossible
    sections = {c.smt_section for c in cands}
    assert sections == {"satisfied_assert_0, violated_assert_1", "satisfied_, violated_assert_0;assert_1"}
    by_section = {}
    for c in cands:
        by_section.setdefault(c.smt_section, []).append(json.dumps(c.input, sort_keys=True))
    for inputs in by_section.values():
        assert len(inputs) == 3 and len(set(inputs)) == 3  # blocking clauses give distinct models
    for c in cands:  # decoded values really violate what they should
        x = c.input["x"]
        ok0 = isinstance(x, (int, float)) and x > 0
        ok1 = isinstance(x, (int, float)) and x > 1
        assert ("assert_0" in c.intended) == (not ok0) and ("assert_1" in c.intended) == (not ok1)


def test_decoded_values_are_exact_json_values():
    model = translate_contract("assert isinstance(v, float) and v > 0.3\nassert len(s) == 2 and s.isupper()",
                               ["v", "s"], ["assert_0", "assert_1"])
    cands, _ = enumerate_candidates(model, k_models=4)
    assert cands
    for c in cands:
        assert json.loads(json.dumps(c.input)) == c.input  # survives the JSON output unchanged
        v, s = c.input["v"], c.input["s"]
        assert ("assert_0" in c.intended) == (not (isinstance(v, float) and v > 0.3))
        assert ("assert_1" in c.intended) == (not (isinstance(s, str) and len(s) == 2 and s.isupper()))


def test_pins_keep_untouched_parameters_at_the_valid_example():
    model = translate_contract("assert isinstance(a, int)\nassert isinstance(b, str)", ["a", "b"],
                               ["assert_0", "assert_1"])
    cands, _ = enumerate_candidates(model, k_models=2, examples={"a": 7, "b": "xy"})
    only_a = [c for c in cands if c.intended == ["assert_0"]]
    assert only_a and all(c.input["b"] == "xy" for c in only_a)


# ---------------------------------------------------------------- reference runs
def test_variants_and_child_runner():
    task = make_task()
    v = build_variants(task["reference_with_contracts"], task["contract"], "f", 2)
    assert set(v.sources) == {"no_contract", "full", "assert_0", "assert_1"}
    order = ["full", "assert_0", "assert_1", "no_contract"]
    res = run_calls(v.sources, "f", [json.dumps({"n": -1}), json.dumps({"n": 1.5}), json.dumps({"n": 3})], order)
    assert res[0] == {"full": "AssertionError", "assert_0": "passed", "assert_1": "AssertionError", "no_contract": "ok"}
    assert res[1]["full"] == "AssertionError" and res[1]["assert_0"] == "AssertionError"
    assert res[2]["full"] == "passed"


def test_runner_survives_hangs_and_prints():
    src = {"v": "import time\ndef g(x):\n    print('noise')\n    while x: pass\n    return 1\n"}
    res = run_calls(src, "g", [json.dumps({"x": 1}), json.dumps({"x": 0})], ["v"], per_call_timeout=0.2)
    assert res == [{"v": "timeout"}, {"v": "ok"}]


def test_bad_reference_is_reported():
    with pytest.raises(VariantError):
        build_variants("def g(n):\n    return n\n", "assert n > 0", "f", 1)


def test_feasibility_filter_keeps_only_feasible_cvts():
    # n == 3 violates only assert_1 and the body runs; a non-number crashes the body
    task = make_task(contract_lines=("assert isinstance(n, (int, float))", "assert n != 3"),
                     body="    return 10 / (n - 1)")
    rec = pipeline.synthesize_task(task, pipeline.Options(max_models=2), example=[5])
    assert rec["status"] == "ok" and rec["cvts"]
    for cvt in rec["cvts"]:
        assert set(cvt) == set(pipeline.CVT_KEYS)
        n = cvt["input"]["n"]
        assert n == 3
        assert cvt["fired_individually"] == cvt["intended_violated"] == ["assert_1"]
    # every candidate violating assert_0 (non-numbers) crashes the body: recorded but not kept
    dropped = [c for c in rec["candidates"] if "assert_0" in c["intended_violated"]]
    assert dropped and all(c["no_contract"] != "ok" for c in dropped)


def test_bad_inputs_are_reported_per_task_not_raised():
    broken_contract = make_task("T/1")
    broken_contract["contract"] = "    assert (n >\n"
    loops = make_task("T/2", contract_lines=("assert n > 0",), body="    while True: pass")
    unsupported = make_task("T/3", contract_lines=("assert n > 0", "assert helper(n)"))
    # search_rounds=0: the first enumeration only.  Every call of T/2's reference hangs until
    # its 0.2 s limit, and each guided round (7 with no feasible CVT) asked for more of them
    # (about 5 s of waiting); a hanging reference is reported the same after one enumeration,
    # and the rounds have tests of their own (test_guided_rounds_*)
    opts = pipeline.Options(call_timeout_s=0.2, max_models=1, search_rounds=0)
    recs = {t["task_id"]: pipeline.synthesize_task(t, opts) for t in (broken_contract, loops, unsupported)}
    assert recs["T/1"]["status"] == "error"
    assert recs["T/1"]["problems"][0]["kind"] == "contract does not parse"
    assert any(p["kind"] == "no feasible CVT" for p in recs["T/2"]["problems"])
    assert recs["T/3"]["unsupported"]["assert_1"]["category"] == "name defined outside the contract"
    assert recs["T/3"]["status"] == "ok"
    summary = pipeline.summarize(recs.values())
    assert "T/1" in summary["errors"] and summary["unsupported_by_category"]


# ---------------------------------------------------------------- the run
def test_run_writes_schema_and_resumes(tmp_path: Path):
    tasks = [make_task("T/0"), make_task("T/1", contract_lines=("assert isinstance(s, str)",),
                                         params="s", body="    return len(str(s))")]
    out = tmp_path / "contracteval" / "contracteval_rebuilt.jsonl"
    work = tmp_path / "work.jsonl"
    opts = pipeline.Options(max_models=1)
    first = pipeline.run(tasks, out, work, opts, jobs=1)
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["task_id"] for r in rows] == ["T/0", "T/1"]
    for task, row in zip(tasks, rows):
        assert {k: v for k, v in row.items() if k != "cvts"} == {k: v for k, v in task.items() if k != "cvts"}
        assert row["cvts"] and all(set(c) == set(pipeline.CVT_KEYS) for c in row["cvts"])
    # a torn last line (interrupted run) is ignored; finished tasks are not redone
    with open(work, "a") as fh:
        fh.write('{"version": 1, "task_id": "T/')
    calls = []
    second = pipeline.run(tasks, out, work, opts, jobs=1, resume=True, progress=lambda r, d, t: calls.append(r))
    assert second.resumed == 2 and calls == []
    assert [r["cvts"] for r in second.records] == [r["cvts"] for r in first.records]
    # a changed task is redone
    tasks[1]["contract"] = tasks[1]["contract"].replace("str", "(str, list)")
    tasks[1]["reference_with_contracts"] = tasks[1]["reference_with_contracts"].replace("str)", "(str, list))", 1)
    tasks[1]["contracts"]["assert_0"] = "assert isinstance(s, (str, list)), \"invalid inputs"
    third = pipeline.run(tasks, out, work, opts, jobs=1, resume=True)
    assert third.resumed == 1


# ---------------------------------------------------------------- feasibility in the loop
def _plain(task: dict, kwargs: dict):
    """Call the hand-written reference of ``task`` without its contract, in this process."""
    from pytest_specbench.benchmarks.contract.synthesis.variants import build_variants

    v = build_variants(task["reference_with_contracts"], task["contract"], task["entry_point"],
                       len(task["contracts"]))
    ns: dict = {"__name__": "plain"}
    exec(v.sources["no_contract"], ns)
    return ns[task["entry_point"]](**kwargs)


NEGATIVE_FLOAT_ONLY = dict(contract_lines=("assert isinstance(n, int)",),
                           body="    if n < 0:\n        return 0\n    return [0] * n")


def test_guided_rounds_find_a_feasible_cvt_after_crashing_models():
    # Only a negative float violates the contract *and* runs in the body: the first
    # models (0.0, strings, lists ...) crash it; the guided rounds must find one.
    task = make_task(**NEGATIVE_FLOAT_ONLY)
    rec = pipeline.synthesize_task(task, pipeline.Options(max_models=1, explore=1), example=[4])
    # Its first stage (the candidates before the rounds') is a synthesis with search_rounds=0,
    # made on its own until session 21: every candidate crashed the reference, none was kept.
    first = rec["candidates"][:len(rec["candidates"]) - sum(r["candidates"] for r in rec["search"]["rounds"])]
    assert first and first[0]["no_contract"] == "TypeError", first
    assert all(c["full_contract"] == "AssertionError" and c["no_contract"] != "ok" for c in first), first
    assert rec["status"] == "ok" and len(rec["cvts"]) == 1
    cvt = rec["cvts"][0]
    n = cvt["input"]["n"]
    assert isinstance(n, float) and n < 0 and _plain(task, cvt["input"]) == 0
    assert cvt["intended_violated"] == cvt["fired_individually"] == ["assert_0"] and cvt["case_index"] == 1
    # the kept model came after crashing ones of the same section, in a guided round
    crashed = [c for c in rec["candidates"] if c["no_contract"] != "ok"]
    assert crashed and all(c["smt_section"] == cvt["smt_section"] for c in crashed)
    assert rec["search"]["rounds"][-1]["kept"] == 1 and sum(r["kept"] for r in rec["search"]["rounds"]) == 1
    assert "uncovered" not in rec and rec["coverage"] == {"paper": True, "upstream": True}
    # deterministic: the same task gives the same candidates
    again = pipeline.synthesize_task(task, pipeline.Options(max_models=1, explore=1), example=[4])
    assert again["candidates"] == rec["candidates"] and again["cvts"] == rec["cvts"]


def test_same_type_round_for_two_parameters():
    # max("a", 1) raises, max("a", "b") does not: only both-violated, same-type inputs are feasible
    task = make_task(contract_lines=("assert isinstance(a, (int, float))", "assert isinstance(b, (int, float))"),
                     params="a, b", body="    return max(a, b)")
    rec = pipeline.synthesize_task(task, pipeline.Options(max_models=1, explore=1), example=[1, 2])
    assert rec["cvts"]
    for cvt in rec["cvts"]:
        assert cvt["intended_violated"] == ["assert_0", "assert_1"]
        a, b = cvt["input"]["a"], cvt["input"]["b"]
        assert type(a) is type(b) and _plain(task, cvt["input"]) == max(a, b)


def test_task_without_feasible_cvt_is_explained_and_upstream_mode_keeps_it():
    # every non-str value crashes s.upper(): no feasible CVT under the paper's rule
    task = make_task(contract_lines=("assert isinstance(s, str)",), params="s", body="    return s.upper()")
    rec = pipeline.synthesize_task(task, pipeline.Options(max_models=1), example=["ab"])
    assert rec["cvts"] == [] and len(rec["search"]["rounds"]) == len(pipeline.STEERS)
    assert all(c["full_contract"] == "AssertionError" and c["no_contract"] == "AttributeError"
               for c in rec["candidates"])
    assert rec["uncovered"]["category"] == "reference raises on every candidate"
    assert "AttributeError" in rec["uncovered"]["detail"]
    assert rec["coverage"] == {"paper": False, "upstream": True}

    up = pipeline.synthesize_task(task, pipeline.Options(max_models=1, feasibility="upstream"), example=["ab"])
    assert up["search"] == {"feasibility": "upstream", "rounds": []}
    assert len(up["cvts"]) == 1 and up["cvts"][0]["fired_individually"] == ["assert_0"]
    with pytest.raises(AttributeError):
        _plain(task, up["cvts"][0]["input"])

    summary = pipeline.summarize([rec, up])
    assert summary["coverage"] == {"paper": 0, "upstream": 2}
    assert summary["uncovered_by_category"] == {"reference raises on every candidate": ["T/0"]}
    assert summary["feasibility"] == ["paper", "upstream"]


def test_uncovered_reasons_for_unsupported_and_unsat_tasks():
    only_unsupported = make_task("T/5", contract_lines=("assert helper(n)",))
    unsat = make_task("T/6", contract_lines=("assert isinstance(n, int) or True",))
    partly = make_task("T/7", contract_lines=("assert isinstance(n, int)", "assert helper(n)"),
                       body="    return n + 1")
    recs = [pipeline.synthesize_task(t, pipeline.Options(max_models=1, search_rounds=1), example=[3])
            for t in (only_unsupported, unsat, partly)]
    assert recs[0]["uncovered"]["category"] == "no assert translated"
    assert recs[1]["uncovered"]["category"] == "no violation satisfiable in the bounded model"
    if not recs[2]["cvts"]:  # a float for n is feasible for n + 1: expected to be found
        pytest.fail(f"no CVT: {recs[2]['uncovered']}")
    bad = pipeline.uncovered_reason({"asserts": ["assert_0", "assert_1"], "unsupported": {"assert_1": {}},
                                     "candidates": [{"full_contract": "AssertionError", "no_contract": "timeout"}],
                                     "problems": []})
    assert bad["category"] == "reference times out on every candidate; unsupported asserts not searched"


def test_cli_feasibility_option_and_summary(tmp_path, capsys):
    from pytest_specbench.cli import main

    f = tmp_path / "t.jsonl"
    f.write_text(json.dumps(make_task(contract_lines=("assert isinstance(s, str)",), params="s",
                                      body="    return s.upper()")) + "\n")
    for mode, kept in (("paper", 0), ("upstream", 1)):
        out = tmp_path / mode / "contracteval" / "contracteval_rebuilt.jsonl"
        assert main(["contract", "synthesize", "--input", str(f), "--out", str(out), "--jobs", "1",
                     "--max-models", "1", "--quiet", "--feasibility", mode, "--search-rounds", "1"]) == 0
        text = capsys.readouterr().out
        assert "paper (§3.2) 0/1" in text and "upstream (contract raises AssertionError) 1/1" in text
        summary = json.loads(out.with_name(out.name + ".summary.json").read_text())["summary"]
        assert summary["tasks_with_cvt"] == kept and summary["feasibility"] == [mode]
        if mode == "paper":
            assert "reference raises on every candidate: 1: T/0" in text
            assert summary["uncovered"]["T/0"]["category"] == "reference raises on every candidate"
    assert main(["contract", "synthesize", "--input", str(f), "--feasibility", "loose"]) == 2
    assert main(["contract", "synthesize", "--input", str(f), "--search-rounds", "-1"]) == 2
