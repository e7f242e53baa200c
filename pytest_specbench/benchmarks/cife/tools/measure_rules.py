"""Print rule figures (same as ``specbench cife rules``):

    python -m pytest_specbench.benchmarks.cife.tools.measure_rules --data ../shared/datasets/cife/benchmark_data.jsonl \
        [--judged PATH_TO_UPSTREAM_llmjudge.jsonl]
"""
import sys

from pytest_specbench.benchmarks.cife.cli import main

if __name__ == "__main__":
    sys.exit(main(["cife", "rules", *sys.argv[1:]]))
