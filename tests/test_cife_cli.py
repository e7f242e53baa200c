"""``specbench cife ...`` subcommands (run through the family's own ``main``)."""
from __future__ import annotations

import json

from pytest_specbench.benchmarks.base import RoleRequest, Prompt
from pytest_specbench.benchmarks.cife.adapter import ADAPTER, BUNDLED
from pytest_specbench.benchmarks.cife.cli import main
from pytest_specbench.models.roles import ReplayRole


def test_rules_coverage_on_the_bundled_suite(capsys):
    assert main(["cife", "rules", "--data", str(BUNDLED / "benchmark_data.jsonl")]) == 0
    out = capsys.readouterr().out
    assert out.startswith("coverage: ") and "/43 constraints" in out


def test_rules_without_input_is_one_line(capsys):
    assert main(["cife", "rules"]) == 2
    assert capsys.readouterr().err.strip() == "specbench: error: cife rules: give --data and/or --judged"


def test_import_upstream_layout_round_trips_through_loader_and_replay_judge(tmp_path):
    judged = tmp_path / "m_results_llmjudge.jsonl"  # the layout of IBM/CIFE's judged files, with our own content
    row = {"id": 7, "dataset": "own", "instruction": "Add.", "combined_instruction": "Add two numbers. Name it `add`.",
           "final_constraints": "[{'type': 'Code Structure and Modularity', 'constraint': 'Name the function `add`.'}]",
           "response": "```python\ndef add(a, b):\n    return a + b\n```",
           "constraint_adherence_responses": '{"Evaluation": [{"Constraint": "x", "Reason": "y", "Aligns": [true]}]}'}
    judged.write_text(json.dumps(row) + "\n")
    assert main(["cife", "import-upstream", str(judged), "--out", str(tmp_path / "out")]) == 0
    ts = ADAPTER.load(tmp_path / "out", None)
    (task,) = ts.tasks
    assert task.data["instruction"].startswith("Add two numbers") and ADAPTER.checks_for(task)[0].startswith("adherence[0-")
    responses = [json.loads(l) for l in (tmp_path / "out" / "responses.jsonl").read_text().splitlines()]
    assert responses == [{"task_id": "7", "solution": row["response"]}]
    judge = ReplayRole("judge", tmp_path / "out" / "judgments.jsonl")
    req = RoleRequest("cife", task, 0, "adherence", Prompt(()), 0)
    assert judge.ask(req) == row["constraint_adherence_responses"]
