"""The run fingerprint (reports/fingerprint.py) and the gate's report of what differs."""
from __future__ import annotations

import json

from pytest_specbench.reports import fingerprint
from pytest_specbench.reports.gate import evaluate, render_gate
from pytest_specbench.reports.summary import html_report, markdown_summary


def _fingerprint(**changes) -> dict:
    base = fingerprint.build(sandbox="process", limits={"call_cpu": 1.0, "memory_mb": 4096},
                             data_files={"contract": {"contracteval_rebuilt.jsonl": "b9adaef6"}},
                             executors={"python": "4"}, sample_environment={"executable": "/venv/bin/python"},
                             toolchains={"java": "java 17.0.15", "javac": "javac 17.0.15", "lean": "absent",
                                         "lake": "absent"},
                             packages={"pytest-specbench": "0.1.0", "z3-solver": "4.13.0"})
    for path, value in changes.items():
        *parents, leaf = path.split("__")
        node = base
        for key in parents:
            node = node[key]
        node[leaf] = value
    return base


def test_fingerprint_says_interpreter_versions_toolchains_sandbox_and_data():
    fp = _fingerprint()
    assert fp["python"]["version"].count(".") == 2 and fp["python"]["implementation"]
    assert fp["toolchains"]["java"] == "java 17.0.15" and fp["sandbox"]["limits"]["memory_mb"] == 4096
    assert fp["data_files"]["contract"]["contracteval_rebuilt.jsonl"] == "b9adaef6"
    assert len(fp["sample_environment"]) == 16 and json.loads(json.dumps(fp)) == fp
    found = fingerprint.package_versions(("pytest", "no-such-distribution-xyz"))
    assert found["pytest"][0].isdigit() and found["no-such-distribution-xyz"] == "absent"


def test_gate_shows_what_differs_between_baseline_and_candidate_fingerprints():
    old = _fingerprint()
    new = _fingerprint(toolchains__java="java 21.0.1", sandbox__limits__call_cpu=2.0,
                       packages__pytest_specbench="0.2.0")
    new["packages"]["pytest-specbench"] = new["packages"].pop("pytest_specbench")
    del new["toolchains"]["lake"]
    report = {"benchmarks": {}, "manifest": {"model": {"spec": "reference"}, "fingerprint": new}}
    baseline = {"benchmarks": {}, "manifest": {"model": {"spec": "reference"}, "fingerprint": old}}
    verdict = evaluate(report, baseline, [], [], 0.05, {}, active=False)
    assert verdict["fingerprint_differences"] == [
        "packages.pytest-specbench: 0.1.0 -> 0.2.0",
        "sandbox.limits.call_cpu: 1.0 -> 2.0",
        "toolchains.java: java 17.0.15 -> java 21.0.1",
        "toolchains.lake: only in the baseline (absent)",
    ]
    lines = render_gate(verdict)
    assert lines[0] == "specbench fingerprint vs baseline: 4 differences"
    assert "  toolchains.java: java 17.0.15 -> java 21.0.1" in lines
    full = {**report, "gate": verdict}
    assert "toolchains.java: java 17.0.15 -> java 21.0.1" in markdown_summary(full)
    assert "toolchains.java: java 17.0.15 -&gt; java 21.0.1" in html_report(full)
    same = evaluate(report, {**baseline, "manifest": {"fingerprint": new}}, [], [], 0.05, {}, active=False)
    assert same["fingerprint_differences"] == [] and not any("fingerprint" in line for line in render_gate(same))
    older = evaluate(report, {"benchmarks": {}, "manifest": {}}, [], [], 0.05, {}, active=False)
    assert older["fingerprint_differences"] == [
        "the baseline report has no fingerprint (made by an older pytest-specbench): not compared"]
