"""CI gating: statistics units, option parsing, and the gate as pytest sees it."""
from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest

from pytest_specbench.errors import DataError, OptionError
from pytest_specbench.reports import gate, stats

BUNDLED = Path(__file__).resolve().parents[1] / "benchmarks" / "contract"
IDS = [json.loads(line)["task_id"] for line in (BUNDLED / "contracteval" / "contracteval_rebuilt.jsonl").open()]


# ------------------------------------------------------------------ stats
def _results(outcomes: list[int]) -> dict:
    return {f"t{i}": [{"index": 0, "checks": {"functional": {"passed": bool(o)}}}] for i, o in enumerate(outcomes)}


def _mean_passed(results) -> dict:
    values = [s[0]["checks"]["functional"]["passed"] for s in results.values()]
    return {"rate": sum(values) / len(values), "count": len(values)} if values else {}


def test_bootstrap_ci_is_deterministic_and_brackets_the_estimate():
    res = _results([1, 0, 1, 1, 0, 1, 1, 1, 0, 1] * 3)
    first = stats.bootstrap_ci(_mean_passed, res, _mean_passed(res))
    again = stats.bootstrap_ci(_mean_passed, res, _mean_passed(res))
    assert first == again
    lo, hi = first["metrics_ci"]["rate"]
    assert lo < 0.7 < hi and 0.45 < lo and hi < 0.9
    assert first["resamples"] == 1000
    # a task mean is vectorised; the fast path agrees with calling aggregate per replicate
    tv = stats.TaskValues(_mean_passed, res, ["rate", "count"])
    assert tv.linear == {"rate"}
    slow = [_mean_passed(stats._resampled(tv.task_ids, res, d))["rate"]
            for d in stats._draws(len(res), 1000, stats.SEED)]
    assert [round(x, 12) for x in stats._interval(slow, 0.95)] == [round(x, 12) for x in (lo, hi)]


def test_a_count_over_tasks_is_summed_per_replicate_not_aggregated_again():
    """A total over tasks (ContractEval's cvt_tasks, cvts_run) gets the interval that calling
    ``aggregate`` on every replicate gives, from sums of its per-task values: the probe's
    calls only, not one per replicate (1,000 calls were ~0.2 CPU s of each small report)."""
    res = _results([1, 0, 1, 1, 0, 1, 1, 1, 0, 1])  # (10 tasks: the slow side below is 4,000 calls)
    calls = []

    def counted(results):
        calls.append(1)
        out = _mean_passed(results)
        return {**out, "passed": sum(s[0]["checks"]["functional"]["passed"] for s in results.values())}

    got = stats.bootstrap_ci(counted, res, counted(res))
    assert len(calls) <= 1 + len(res) + 1 + 3  # the full set, each task, the full set again, 3 confirmations
    tv = stats.TaskValues(_mean_passed, res, ["rate", "count"])
    assert tv.linear == {"rate"} and tv.totals == {"count"}
    draws = stats._draws(len(res), 1000, stats.SEED)
    for metric in ("count", "passed"):
        slow = [counted(stats._resampled(tv.task_ids, res, d))[metric] for d in draws]
        assert got["metrics_ci"][metric] == stats._interval(slow, 0.95)
    # paired: the same replicates on both sides
    worse = _results([0, 0, 1, 1, 0, 1, 0, 1, 0, 1])
    delta = stats.paired_deltas(counted, res, worse, ["passed"])["passed"]
    slow = [counted(stats._resampled(tv.task_ids, worse, d))["passed"]
            - counted(stats._resampled(tv.task_ids, res, d))["passed"] for d in draws]
    assert delta["delta"] == -2 and delta["ci"] == stats._interval(slow, 0.95) and delta["resamples"] == 1000
    # A pooled ratio of two totals the report shows (CIFE's rule_decided_share over rule_decided
    # and constraints_recorded): found among the totals, the same interval, no aggregate per replicate.
    weights = {f"t{i}": 1 + i % 4 for i in range(len(res))}

    def pooled(results):
        calls.append(1)
        hits = sum(s[0]["checks"]["functional"]["passed"] * weights[t.partition("#")[0]] for t, s in results.items())
        size = sum(weights[t.partition("#")[0]] for t in results)
        return {"hits": hits, "size": size, "share": hits / size}

    calls.clear()
    got = stats.bootstrap_ci(pooled, res, pooled(res))
    assert len(calls) <= 1 + len(res) + 1 + 3
    assert stats.TaskValues(pooled, res, ["hits", "size", "share"]).ratios == {"share": ("hits", "size")}
    slow = [pooled(stats._resampled(tv.task_ids, res, d))["share"] for d in draws]
    assert got["metrics_ci"]["share"] == stats._interval(slow, 0.95)
    # A comparison asks for the ratio alone: its parts are still read from the report's numbers.
    calls.clear()
    delta = stats.paired_deltas(pooled, res, worse, ["share"])["share"]
    assert len(calls) <= 2 * (1 + len(res) + 1 + 3) + 2
    slow = [pooled(stats._resampled(tv.task_ids, worse, d))["share"]
            - pooled(stats._resampled(tv.task_ids, res, d))["share"] for d in draws]
    assert delta["ci"] == stats._interval(slow, 0.95)


def test_pooled_metric_goes_through_aggregate():
    def pooled(results):
        num = sum(s["checks"]["functional"]["k"] for v in results.values() for s in v)
        den = sum(s["checks"]["functional"]["n"] for v in results.values() for s in v)
        return {"pooled": num / den}

    res = {f"t{i}": [{"index": 0, "checks": {"functional": {"passed": True, "k": i % 3, "n": 1 + i}}}]
           for i in range(12)}
    out = stats.bootstrap_ci(pooled, res, pooled(res))
    lo, hi = out["metrics_ci"]["pooled"]
    assert lo <= pooled(res)["pooled"] <= hi


@pytest.mark.parametrize("b, c, p", [
    (0, 0, 1.0),
    (1, 6, 16 / 128),          # 2 * (1 + 7) / 2**7
    (0, 5, 2 / 32),
    (2, 10, 2 * (1 + 12 + 66) / 4096),
    (5, 5, 1.0),
])
def test_mcnemar_exact_known_tables(b, c, p):
    assert math.isclose(stats.mcnemar_exact(b, c), p, rel_tol=1e-9)
    assert math.isclose(stats.mcnemar_exact(c, b), p, rel_tol=1e-9)


def test_mcnemar_without_scipy_matches(monkeypatch):
    import builtins

    real = builtins.__import__

    def no_scipy(name, *args, **kw):
        if name.startswith("scipy"):
            raise ImportError(name)
        return real(name, *args, **kw)

    monkeypatch.setattr(builtins, "__import__", no_scipy)
    assert math.isclose(stats.mcnemar_exact(2, 10), 2 * (1 + 12 + 66) / 4096)


def test_paired_deltas_and_flips():
    base = _results([1] * 20 + [0] * 10)
    cand = _results([0] * 12 + [1] * 8 + [0] * 9 + [1])
    d = stats.paired_deltas(_mean_passed, base, cand, ["rate"])["rate"]
    assert math.isclose(d["delta"], 9 / 30 - 20 / 30)
    assert d["binary"] and d["ci"][1] < 0 < -d["ci"][0]
    f = gate.flips(base, cand, ["functional"])["functional"]
    assert len(f["newly_failing"]) == 12 and f["newly_passing"] == ["t29"]


# ---------------------------------------------------------------- parsing
def test_threshold_parsing():
    rules = gate.parse_thresholds("contract:csr=0.45, pass@1=70%", ["contract"])
    assert [(r.bench, r.metric, r.value) for r in rules] == [("contract", "csr", 0.45), (None, "pass@1", 0.7)]
    tols = gate.parse_tolerances("contract:pass@1:-2%,csr:-0.02", ["contract"])
    assert [(t.bench, t.metric, t.amount, t.relative) for t in tols] == [
        ("contract", "pass@1", 0.02, True), (None, "csr", 0.02, False)]
    assert math.isclose(tols[0].allowed(0.5), 0.01)


@pytest.mark.parametrize("text, message", [
    ("pass@1", "expected [BENCH:]METRIC=VALUE"),
    ("pass@1=high", "expected a number"),
    ("evalplus:pass@1=0.5", "benchmark 'evalplus' is not in this run"),
    ("=0.5", "expected [BENCH:]METRIC"),
])
def test_malformed_thresholds(text, message):
    with pytest.raises(OptionError, match="--specbench-fail-under") as err:
        gate.parse_thresholds(text, ["contract"])
    assert message in str(err.value) and "\n" not in str(err.value)


@pytest.mark.parametrize("text, message", [("pass@1", "expected [BENCH:]METRIC:TOLERANCE"),
                                           ("pass@1:2%", "write -2%"), ("pass@1:x", "expected a number")])
def test_malformed_tolerances(text, message):
    with pytest.raises(OptionError) as err:
        gate.parse_tolerances(text, ["contract"])
    assert message in str(err.value)


def test_baseline_that_is_not_a_report(tmp_path):
    bad = tmp_path / "b.json"
    bad.write_text('{"results": []}')
    with pytest.raises(DataError, match="not a specbench JSON report"):
        gate.load_baseline(bad)
    bad.write_text("not json")
    with pytest.raises(DataError, match="not JSON"):
        gate.load_baseline(bad)


# ------------------------------------------------------------ with pytest
def _replay(path: Path, failing: set[str]) -> Path:
    """A replay file answering the reference solution, except a wrong one for ``failing``."""
    rows = []
    for line in (BUNDLED / "contracteval" / "contracteval_rebuilt.jsonl").open():
        row = json.loads(line)
        entry = row["entry_point"]
        solution = row["reference_with_contracts"]
        if row["task_id"] in failing:
            solution = f"def {entry}(*args, **kwargs):\n    return None\n"
        rows.append({"task_id": row["task_id"], "sample_index": 0, "solution": solution})
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _run(pytester, *args):
    # In this process: most of these runs stop at a usage error or read the results of the
    # run before from the state folder, and a Python of their own was most of their cost.
    return pytester.runpytest_inprocess("-p", "no:cacheprovider", "--specbench=contract", "--model=reference",
                                        f"--specbench-dir={pytester.path / '.sb'}", *args)


@pytest.fixture(scope="module")
def _baseline_memo(tmp_path_factory):
    return {"folder": tmp_path_factory.mktemp("gate-baseline")}


@pytest.fixture
def reports(pytester, _baseline_memo):
    """The bundled suite's reference report (all pass) as a baseline, made once for the module
    by the first test that asks, in this process (a Python of its own was ~1 CPU s more: #45,
    session 21), and kept outside that test's folder for the others."""
    base = _baseline_memo["folder"] / "base.json"
    if not base.exists():
        result = pytester.runpytest_inprocess("-p", "no:cacheprovider", "--specbench=contract", "--model=reference",
                                              f"--specbench-dir={pytester.path / '.sb-base'}",
                                              f"--specbench-report={base}", "--specbench-checks=functional")
        assert result.ret == 0
    return base


def test_gate_pass_exits_0_with_failing_items_and_fail_exits_1(pytester):
    replay = _replay(pytester.path / "r.jsonl", {"HumanEval-S/1", "Mbpp-S/2"})
    met = _run(pytester, f"--model=replay:{replay}", "--specbench-checks=functional",
               "--specbench-fail-under=pass@1=0.8", f"--specbench-markdown={pytester.path / 's.md'}")
    met.stdout.fnmatch_lines(["*specbench gate: PASSED*", "*2 failed, 10 passed*"])
    assert met.ret == 0
    assert "✅ passed" in (pytester.path / "s.md").read_text()
    unmet = _run(pytester, f"--model=replay:{replay}", "--specbench-checks=functional",
                 "--specbench-fail-under=contract:pass@1=0.9")
    unmet.stdout.fnmatch_lines(["*specbench gate: FAILED*", "*[[]FAIL[]] contract:pass@1 >= 90.00%: 83.33% < 90.00%*"])
    assert unmet.ret == 1
    plain = _run(pytester, f"--model=replay:{replay}", "--specbench-checks=functional")
    assert plain.ret == 1  # no gate options: pytest's usual semantics


def test_significant_regression_against_baseline(pytester, reports):
    # 7 of 12 newly failing: McNemar p = 2/2**7 < 0.05, far beyond -2%
    broken = set(IDS[:7])
    replay = _replay(pytester.path / "r.jsonl", broken)
    html = pytester.path / "r.html"
    result = _run(pytester, f"--model=replay:{replay}", "--specbench-checks=functional",
                  f"--specbench-baseline={reports}", "--specbench-compare-fail=pass@1:-2%",
                  f"--specbench-html={html}", f"--specbench-report={pytester.path / 'c.json'}")
    result.stdout.fnmatch_lines(["*McNemar p=0.0156 (-7 / +0)*", "*specbench gate: FAILED*",
                                 "*beyond tolerance (-2% relative = -2.00 pp): yes*significant at alpha=0.05: yes*",
                                 "*regression: beyond tolerance and significant*"])
    assert result.ret == 1
    report = json.loads((pytester.path / "c.json").read_text())
    assert report["gate"]["passed"] is False
    assert sorted(report["gate"]["comparison"]["contract"]["flips"]["functional"]["newly_failing"]) == sorted(broken)
    assert set(report["benchmarks"]["contract"]["metrics_ci"]) >= {"pass@1", "pass@1_base"}
    page = html.read_text()
    assert "Gate FAILED" in page and "sbFilter" in page and "<svg" in page
    assert not re.search(r"""(src|href)=["']?https?:|@import|url\(http""", page)  # nothing fetched from the network
    # one flip only: beyond tolerance but not significant at alpha 0.05 -> the gate holds
    one = _replay(pytester.path / "one.jsonl", {IDS[0]})
    soft = _run(pytester, f"--model=replay:{one}", "--specbench-checks=functional",
                f"--specbench-baseline={reports}", "--specbench-compare-fail=pass@1:-2%")
    soft.stdout.fnmatch_lines(["*specbench gate: PASSED*", "*beyond tolerance (*): yes; significant at alpha=0.05: no*",
                               "*not a regression (only beyond tolerance)*"])
    assert soft.ret == 0


def test_bad_baselines_and_metrics(pytester, reports):
    ok = "--specbench-checks=functional"
    unknown = _run(pytester, "--model=reference", ok, "--specbench-fail-under=pass@2=0.5")
    assert unknown.ret == 4
    unknown.stderr.fnmatch_lines(["*--specbench-fail-under: unknown metric 'pass@2' (known: contract: *pass@1*)"])
    lacks = _run(pytester, "--model=reference", ok, f"--specbench-baseline={reports}",
                 "--specbench-compare-fail=csr:-1%", "--specbench-fail-under=pass@1=0.1")
    assert lacks.ret == 4  # csr is known in general but this run (functional only) has no contract check
    report = json.loads(reports.read_text())
    other = pytester.path / "other.json"
    other.write_text(json.dumps({**report, "benchmarks": {"evalplus": report["benchmarks"]["contract"]}}))
    wrong = _run(pytester, "--model=reference", ok, f"--specbench-baseline={other}")
    assert wrong.ret == 4
    wrong.stderr.fnmatch_lines(["*baseline is a report of evalplus, this run is contract*"])
    lacking = pytester.path / "lacking.json"
    section = dict(report["benchmarks"]["contract"], metrics={"pass@1_base": 1.0})
    lacking.write_text(json.dumps({**report, "benchmarks": {"contract": section}}))
    no_metric = _run(pytester, "--model=reference", ok, f"--specbench-baseline={lacking}",
                     "--specbench-compare-fail=pass@1:-2%")
    no_metric.stderr.fnmatch_lines(["*has no metric 'pass@1' for contract (it has: pass@1_base)*"])
    checks = _run(pytester, "--model=reference", f"--specbench-baseline={reports}")
    checks.stderr.fnmatch_lines(["*refusing to compare: contract checks differ (baseline functional; "
                                 "this run functional,contract)*"])
    changed = pytester.path / "changed.json"
    section = dict(report["benchmarks"]["contract"], data_files={**report["benchmarks"]["contract"]["data_files"], "MbppPlus.jsonl": "0" * 64})
    changed.write_text(json.dumps({**report, "benchmarks": {"contract": section}}))
    hashes = _run(pytester, "--model=reference", ok, f"--specbench-baseline={changed}")
    hashes.stderr.fnmatch_lines(["*refusing to compare: contract data hashes differ (MbppPlus.jsonl)*"])
    forced = _run(pytester, "--model=reference", ok, f"--specbench-baseline={changed}", "--specbench-compare-force")
    forced.stdout.fnmatch_lines(["*note: compared despite: contract data hashes differ*"])
    assert forced.ret == 0
    notreport = pytester.path / "x.json"
    notreport.write_text("[1, 2]")
    bad = _run(pytester, "--model=reference", ok, f"--specbench-baseline={notreport}")
    bad.stderr.fnmatch_lines(["*x.json: not a specbench JSON report*"])


# The JUnit properties under xdist (the controller's, whatever the workers' number): asserted on
# the one xdist run of ContractEval, tests/test_dedupe.py::
# test_under_xdist_the_report_is_the_serial_one_and_no_program_is_evaluated_twice (#45, session 21).


def test_bootstrap_draws_whole_clusters_of_tasks():
    """Tasks of one cluster (a program and its perturbed variants) are drawn together:
    a cluster of identical outcomes widens the interval, as one observation, not four."""
    from pytest_specbench.benchmarks.base import Task

    # Four variants of one program all pass, four of another all fail, two independent tasks.
    outcomes = {**{f"p1v{i}": True for i in range(4)}, **{f"p2v{i}": False for i in range(4)}, "a": True, "b": False}
    res = {t: [{"index": 0, "checks": {"functional": {"passed": ok}}}] for t, ok in outcomes.items()}
    tasks = {t: Task(t, {}, None, 0, group=t[:2] if t.startswith("p") else "") for t in outcomes}
    seen = []

    def aggregate(results, tks):
        seen.append(tks)
        return _mean_passed(results)

    clustered = stats.bootstrap_ci(aggregate, res, _mean_passed(res), tasks=tasks)
    plain = stats.bootstrap_ci(_mean_passed, res, _mean_passed(res))
    assert clustered["unit"] == "cluster" and clustered["clusters"] == 4 and plain["unit"] == "task"
    (lo_c, hi_c), (lo_p, hi_p) = clustered["metrics_ci"]["rate"], plain["metrics_ci"]["rate"]
    assert hi_c - lo_c > hi_p - lo_p
    # aggregate saw the resampled tasks, every variant of a drawn program together.
    drawn = [k for k in seen[-1] if k.startswith("p1")]
    assert len(drawn) % 4 == 0 and all(seen[-1][k].task_id == k.split("#")[0] for k in seen[-1])


def _with_borderline(results: dict, tasks: set[str]) -> dict:
    for t in tasks:
        results[t][0]["checks"]["functional"]["borderline"] = [{"input": 3, "limit": 1.0, "cpu": [1.2, 1.1, 1.3, 1.2],
                                                               "passed": False}]
    return results


def test_borderline_flips_are_counted_apart_and_alone_do_not_fail_the_gate():
    # 12 of 30 newly failing: a significant drop far beyond -2%.
    base = _results([1] * 20 + [0] * 10)
    cand = _results([0] * 12 + [1] * 8 + [0] * 10)
    d = stats.paired_deltas(_mean_passed, base, cand, ["rate"])["rate"]
    per_task = d.pop("per_task")
    pairs = list(zip(per_task["baseline"], per_task["candidate"]))
    d["mcnemar"] = {"newly_failing": sum(1 for x, y in pairs if x > y), "newly_passing": 0,
                    "p": stats.mcnemar_exact(12, 0)}
    tol = gate.parse_tolerances("rate:-2%", ["b"])[0]
    # All 12 newly failing items are borderline (timing at the limit): reported, not failing.
    timing = gate.flips(base, _with_borderline(cand, {f"t{i}" for i in range(12)}), ["functional"])
    assert timing["functional"]["newly_failing_borderline"] == timing["functional"]["newly_failing"]
    rule = gate._compare_rule(tol, "b", d, 0.05, timing)
    assert rule["passed"] and rule["only_borderline"] and rule["beyond_tolerance"] and rule["significant"]
    assert "all 12 newly failing task(s) are borderline" in rule["why"]
    lines = "\n".join(gate.render_gate({"active": True, "passed": True, "rules": [rule], "baseline": "x",
                                        "comparison": {"b": {"tasks_compared": 30, "only_in_baseline": 0,
                                                             "only_in_candidate": 0, "metrics": {},
                                                             "flips": timing}}}))
    assert "of which borderline (CPU time at the limit, measured again): 12 newly failing" in lines
    assert "made only of borderline flips" in lines
    # One solid flip among them: the usual rule applies, and the borderline ones are still counted apart.
    mixed = gate.flips(base, _with_borderline(_results([0] * 12 + [1] * 8 + [0] * 10), {f"t{i}" for i in range(11)}),
                       ["functional"])
    assert len(mixed["functional"]["newly_failing_borderline"]) == 11
    rule = gate._compare_rule(tol, "b", d, 0.05, mixed)
    assert not rule["passed"] and not rule["only_borderline"]
    # A mark in the baseline counts too (it passed there at the limit).
    marked_base = gate.flips(_with_borderline(_results([1] * 20 + [0] * 10), {"t0"}), _results([0] + [1] * 19 + [0] * 10),
                             ["functional"])
    assert marked_base["functional"]["newly_failing_borderline"] == ["t0"]
    assert gate.only_borderline_failing(marked_base) == 1
    assert gate.only_borderline_failing(gate.flips(base, base, ["functional"])) == 0
