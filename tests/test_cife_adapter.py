"""CIFE adapter end to end on the bundled suite, with fake check contexts and scripted judges."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_specbench.models.roles import ReplayRole

from pytest_specbench.benchmarks.cife.adapter import ADAPTER, BUNDLED, BUNDLED_JUDGMENTS
from pytest_specbench.benchmarks.cife.metrics import (JUDGED, Adherence, Correctness, TaskInfo, adherence_details,
                                                      cohen_kappa, compute, correctness_details, figures)
from pytest_specbench.errors import InfrastructureError
from pytest_specbench.execution.limits import Limits
from pytest_specbench.execution.python import PythonExecutor
from pytest_specbench.models.base import Completion
from fakes import FakeModel, fake_context

PROJECT = Path(__file__).resolve().parents[1]


def Ctx(executor, judge=None, **options):
    """A check context: options, the python executor, and a judge role (or none)."""
    return fake_context(executors={"python": executor} if executor else None,
                        models={"judge": judge} if judge else None, **options)


@pytest.fixture(scope="module")
def executor():
    ex = PythonExecutor(Limits(), hide=[str(PROJECT)])
    yield ex
    ex.close()


def run_all(ctx, answer=None, tasks=None):
    results = {}
    for task in tasks or ADAPTER.load(None, None).tasks:
        checks = {}
        for check in ADAPTER.checks_for(task):
            text = answer(task) if answer else ADAPTER.reference(task, check)
            r = ADAPTER.run_check(check, task, Completion(text), ctx)
            checks[check] = {**r.details, "_passed": r.passed}
        results[task.task_id] = [{"index": 0, "checks": checks}]
    return results


def test_bundled_suite_reference_with_shipped_judgments_scores_100(executor):
    ts = ADAPTER.load(None, None)
    assert ts.bundled and len(ts.tasks) == 12
    results = run_all(Ctx(executor, judge=ReplayRole("judge", BUNDLED_JUDGMENTS)))  # the bundled suite's default judge
    assert all(d["_passed"] for s in results.values() for d in s[0]["checks"].values())
    m = compute(results)
    assert m["csr"] == m["ssr"] == m["c2a"] == m["completely_correct"] == m["hybrid_csr"] == 1.0
    assert m["rule_decided"] >= 30 and m["rule_judge_agreement"] == 1.0
    assert {f["title"].split(":")[1].strip()[:10] for f in figures(m)} >= {"constraint", "CSR by num", "CSR by ins"}


def test_check_names_carry_index_and_category():
    task = ADAPTER.load(None, None).tasks[0]
    assert ADAPTER.checks_for(task)[:2] == ["adherence[0-code-structure-and-modularity]",
                                            "adherence[1-error-handling-and-robustness]"]
    assert ADAPTER.checks_for(task)[-1] == "correctness"


def test_judge_is_asked_once_per_sample_and_purpose_from_the_roles_cache(executor):
    cache = {}
    inner = FakeModel(lambda r: json.dumps({"Evaluation": [
        {"Index": i + 1, "Aligns": i != 1, "Reason": "r"} for i in range(len(r.task.data["_constraints"]))]})
        if r.purpose == "adherence" else '{"correctness": "Partially Correct", "reason": "edge"}')

    class Cached(FakeModel):  # what the real role does: cache by prompt
        def ask(self, request):
            key = (request.purpose, request.prompt.messages)
            if key not in cache:
                cache[key] = inner.ask(request)
            return cache[key]

    task = ADAPTER.load(None, None).tasks[0]
    results = run_all(Ctx(executor, Cached(None)), tasks=[task])
    assert len(inner.requests) == 2  # one adherence, one correctness question for 5 items
    checks = results[task.task_id][0]["checks"]
    assert checks["adherence[1-error-handling-and-robustness]"]["_passed"] is False
    m = compute(results)
    assert m["csr"] == 0.0 and m["ssr"] == 0.75 and m["c2a"] == 0.0 and m["partially_correct"] == 1.0
    # the rule decided constraint 1 (raises ValueError on []) against the judge: kappa counts the disagreement
    assert m["hybrid_csr"] == 1.0 and m["rule_judge_agreement"] < 1.0


def test_garbage_judge_retries_with_the_error_then_errors(executor):
    judge = FakeModel(lambda r: "I am sorry, I cannot help with that.")
    task = ADAPTER.load(None, None).tasks[0]
    with pytest.raises(InfrastructureError, match=r"adherence answer unreadable after 3 attempt\(s\): the answer contains no valid JSON"):
        ADAPTER.run_check(ADAPTER.checks_for(task)[0], task, Completion(task.data["reference_answer"]),
                          Ctx(executor, judge))
    assert [r.attempt for r in judge.requests] == [0, 1, 2]
    assert "previous answer could not be used" in judge.requests[2].prompt.messages[-1].content


def test_too_few_verdicts_then_fixed_on_retry(executor):
    task = ADAPTER.load(None, None).tasks[0]
    n = len(task.data["_constraints"])

    def answer(r):
        if r.purpose == "correctness":
            return '{"correctness": "Completely Correct"}'
        k = n - 1 if r.attempt == 0 else n
        return json.dumps({"Evaluation": [{"Index": i + 1, "Aligns": True} for i in range(k)]})
    judge = FakeModel(answer)
    r = ADAPTER.run_check(ADAPTER.checks_for(task)[2], task, Completion(task.data["reference_answer"]), Ctx(executor, judge))
    assert r.passed and r.details["attempts"] == 2


def test_upstream_parse_mode_reproduces_positional_reading(executor):
    task = ADAPTER.load(None, None).tasks[0]  # 4 constraints
    # the judge answers 3 entries, constraint 1 false: upstream shifts nothing but loses the last verdict
    judge = FakeModel(lambda r: json.dumps({"Evaluation": [{"Aligns": False}, {"Aligns": True}, {"Aligns": True}]})
                          if r.purpose == "adherence" else '{"correctness": "Wrong"}')
    ctx = Ctx(executor, judge, cife_parse="upstream", cife_prompts="upstream")
    results = run_all(ctx, tasks=[task])
    m = compute(results)
    assert m["csr_upstream_reading"] == 0.0 and m["ssr_upstream_reading"] == pytest.approx(2 / 3)
    last = results[task.task_id][0]["checks"]["adherence[3-library-and-api-usage]"]
    assert last["_passed"] is True and last["upstream_vector"] == [False, True, True]


def test_real_data_has_no_reference_answers():
    task = ADAPTER.load(None, None).tasks[0]
    bare = type(task)("5", {k: v for k, v in task.data.items() if k != "reference_answer"}, task.source)
    assert "no reference answers" in ADAPTER.skip_reason("correctness", bare, Ctx(None))
    assert ADAPTER.skip_reason("correctness", task, Ctx(None)) is None


def _info(n, source="S", difficulty="easy"):
    return TaskInfo(source, difficulty, n)


def _adh(i, judge, n, cat="A", rule=None, kind=JUDGED):
    return adherence_details(Adherence(kind, i, cat, judge, rule, _info(n)))


def _cor(label, n, kind=JUDGED):
    return correctness_details(Correctness(kind, label, _info(n)))


def test_metrics_scored_denominator_excludes_incomplete_samples_and_label_breakdowns():
    results = {
        "1": [{"index": 0, "checks": {"adherence[0]": _adh(0, True, 2), "adherence[1]": _adh(1, False, 2, "B", rule=True),
                                      "correctness": _cor("Completely Correct", 2)}}],
        "2": [{"index": 0, "checks": {"adherence[0]": _adh(0, True, 2)}}],  # adherence[1], correctness errored
    }
    m = compute(results, "scored")
    assert m["samples_scored"] == 1 and m["samples_incomplete"] == 1
    assert m["csr"] == 0.0 and m["ssr"] == 0.5 and m["hybrid_csr"] == 1.0
    assert m["category_micro/B"] == 0.0 and m["category_macro/A"] == 1.0
    assert m["csr_by_source/S"] == 0.0 and m["ssr_by_count/2"] == 0.5
    # the paper's N (default): the incomplete sample counts, its lost verdicts not satisfied
    m = compute(results)
    assert m["samples_scored"] == 2 and m["samples_incomplete"] == 1
    assert m["csr"] == 0.0 and m["ssr"] == 0.5 and m["completely_correct"] == 0.5 and m["c2a"] == 0.0


def test_breakdowns_by_constraint_count_are_in_numeric_order():
    def sample(n):
        return [{"index": 0, "checks": {f"adherence[{i}]": _adh(i, True, n) for i in range(n)}}]
    m = compute({str(n): sample(n) for n in (10, 2, 1)})
    assert [k for k in m if k.startswith("csr_by_count/")] == ["csr_by_count/1", "csr_by_count/2", "csr_by_count/10"]


@pytest.mark.parametrize("denominator", ["all", "scored"])
def test_pooled_metrics_get_the_intervals_of_aggregate_without_calling_it_per_replicate(denominator):
    """Category micro averages, rule-judge agreement and kappa are pooled over constraints: the
    bootstrap draws their per-task counts (``pooled_metrics``) and gets the same replicates, so
    the same intervals, as calling ``aggregate`` on every resample (what it did before)."""
    from pytest_specbench.reports import stats

    results = {}
    for t in range(8):  # categories and counts vary by task; one sample incomplete
        n = 2 + t % 3
        checks = {f"adherence[{i}]": _adh(i, (t * 7 + i * 3) % 5 < 3, n, cat="AB"[(t + i) % 2 if i else t % 2],
                                          rule=None if (t + i) % 3 == 0 else (t * i) % 4 < 2)
                  for i in range(n) if (t, i) != (5, 1)}
        checks["correctness"] = _cor("Completely Correct" if t % 4 else "Wrong", n)
        results[f"t{t}"] = [{"index": 0, "checks": checks}]
    settings = type("Settings", (), {"cife_n": denominator})()

    def plain(res, tasks=None):  # the same aggregate, no pooled metrics declared
        return ADAPTER.aggregate(res, tasks, settings)

    metrics = ADAPTER.aggregate(results, None, settings)
    pooled = ["category_micro/A", "category_micro/B", "rule_judge_agreement", "rule_judge_kappa"]
    assert all(0 < metrics[m] < 1 for m in pooled[:3]) and metrics["rule_judge_kappa"] == metrics["rule_judge_kappa"]
    generic = stats.bootstrap_ci(plain, results, metrics, resamples=50)
    assert not any(stats.TaskValues(plain, results, pooled).fast(m) for m in pooled)  # each went through aggregate
    declared = stats.AdapterAggregate(ADAPTER, settings)
    fast = stats.bootstrap_ci(declared, results, metrics, resamples=50)
    assert fast == generic and all(m in fast["metrics_ci"] for m in pooled)
    tv = stats.TaskValues(declared, results, pooled)
    assert all(tv.fast(m) for m in pooled), [(m, m in tv.linear, m in tv.pooled) for m in pooled]


def test_cohen_kappa():
    assert cohen_kappa([(True, True), (False, False)]) == 1.0
    assert cohen_kappa([(True, False), (False, True)]) == -1.0
    assert cohen_kappa([(True, True), (True, False), (False, False), (False, False)]) == pytest.approx(0.5)


def test_shipped_judgments_cover_the_bundled_suite():
    lines = [json.loads(l) for l in (BUNDLED / "judgments.jsonl").read_text().splitlines()]
    ids = {t.task_id for t in ADAPTER.load(None, None).tasks}
    assert {(l["task_id"], l["purpose"]) for l in lines} == {(i, p) for i in ids for p in ("adherence", "correctness")}


class ScriptedRole(FakeModel):
    """The scripted judge behind a fake role (the real role sends the same messages over HTTP)."""

    def __init__(self, garbage=0.0, satisfied=1.0):
        from pytest_specbench.benchmarks.cife.scripted_judge import answer
        super().__init__(lambda r: answer([{"role": m.role, "content": m.content} for m in r.prompt.messages],
                                          garbage, satisfied, satisfied))


@pytest.mark.parametrize("style", ["paper", "upstream"])
def test_scripted_judge_answers_both_prompt_styles(executor, style):
    judge = ScriptedRole(garbage=0.5, satisfied=0.85)
    results = run_all(Ctx(executor, judge, cife_prompts=style))
    m = compute(results)
    assert m["samples_scored"] == 12 and m["samples_incomplete"] == 0
    assert any(r.attempt == 1 for r in judge.requests)  # garbage first answers were retried
    # the scripted judge follows AST rules where they decide (not the sandboxed ones): mostly agrees
    assert m["rule_judge_agreement"] > 0.7 and 0 < m["csr"] < 1


def test_reference_with_the_scripted_judge_scores_100(executor):
    judge = ScriptedRole(garbage=0.3)
    m = compute(run_all(Ctx(executor, judge)))
    assert m["csr"] == m["ssr"] == m["c2a"] == m["hybrid_csr"] == 1.0 and m["samples_scored"] == 12
    assert any(r.attempt == 1 for r in judge.requests)


def test_manifest_names_prompts_hashes_and_parameters():
    paper = ADAPTER.manifest(Ctx(None).settings)
    upstream = ADAPTER.manifest(Ctx(None, cife_prompts="upstream").settings)
    assert paper["prompts"] == "paper" and upstream["prompts"] == "upstream"
    assert paper["prompt_sha256"]["adherence"] != upstream["prompt_sha256"]["adherence"]
    assert paper["judge_parameters_asked"]["adherence"] == {"temperature": 0.1, "max_tokens": 2048}
    assert upstream["generation_parameters"] == {"temperature": 0.0, "max_tokens": 1024}


def test_upstream_unreadable_correctness_label_counts_as_not_completely_correct():
    results = {"1": [{"index": 0, "checks": {"adherence[0]": _adh(0, True, 1), "correctness": _cor(None, 1)}}],
               "2": [{"index": 0, "checks": {"adherence[0]": _adh(0, True, 1),
                                             "correctness": _cor("Completely Correct", 1)}}]}
    for denominator in ("all", "scored"):
        m = compute(results, denominator)
        assert m["completely_correct"] == 0.5 and m["c2a"] == 0.5 and m["csr"] == 1.0
