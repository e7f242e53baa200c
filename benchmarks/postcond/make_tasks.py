"""Rebuild the bundled tasks with the authors' tool (``specbench postcond make-task``):

    python benchmarks/postcond/make_tasks.py
"""
import argparse
import sys
from pathlib import Path

from pytest_specbench.benchmarks.postcond import cli

HERE = Path(__file__).resolve().parent
TASKS = [  # (file, method, tests)
    ("minilib/numbers.py", "clamp", ["tests/test_numbers.py::test_clamp"]),
    ("minilib/numbers.py", "gcd", ["tests/test_numbers.py::test_gcd"]),
    ("minilib/numbers.py", "digit_sum", ["tests/test_numbers.py::test_digit_sum"]),
    ("minilib/seqs.py", "running_max", ["tests/test_seqs.py::test_running_max"]),
    ("minilib/seqs.py", "dedupe", ["tests/test_seqs.py::test_dedupe"]),
    ("minilib/stack.py", "BoundedStack.push", ["tests/test_stack.py::test_push_until_full",
                                               "tests/test_stack.py::test_push_zero_capacity"]),
]


def main() -> int:
    parser = argparse.ArgumentParser(prog="specbench")
    cli.register(parser.add_subparsers(dest="group"))
    status = 0
    for rel, method, tests in TASKS:
        name = method.split(".")[-1]
        args = parser.parse_args(["postcond", "make-task", "--repo", str(HERE / "lib"), "--file", rel, "--method", method,
                                  "--tests", *tests, "--ref", str(HERE / "refs" / f"{name}.txt"),
                                  "--out", str(HERE / "tasks" / f"minilib--{name}.json"),
                                  "--github-path", "specbench/minilib", "--local-checkout", "../lib", "--timeout", "10"])
        status |= args.func(args)
    return status


if __name__ == "__main__":
    sys.exit(main())
