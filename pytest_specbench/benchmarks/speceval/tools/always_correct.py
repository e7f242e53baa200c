"""Write a replay file in which every Judgement task is answered "correct" (a
deliberately wrong model: its accuracy is the share of correct labels among the
scored tasks, which the survey predicts).

Usage: python -m pytest_specbench.benchmarks.speceval.tools.always_correct [DATA_ROOT] > always_correct.jsonl
then:  pytest --specbench=speceval --speceval-task=judgement --speceval-perturbation=all \\
           --model=replay:always_correct.jsonl --specbench-data=DATA_ROOT -n 2"""
import json
import sys
from pathlib import Path
from types import SimpleNamespace

from pytest_specbench.benchmarks.speceval.adapter import ADAPTER

root = Path(sys.argv[1]) if len(sys.argv) > 1 else None
settings = SimpleNamespace(option=lambda name: {"speceval_task": "judgement", "speceval_perturbation": "all"}.get(name))
for task in ADAPTER.load(root, settings).tasks:
    print(json.dumps({"task_id": task.task_id, "solution": "Answer: correct"}))
