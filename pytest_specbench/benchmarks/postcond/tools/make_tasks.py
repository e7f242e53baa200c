"""Rebuild the bundled tasks with the authors' tools (``specbench postcond make-task``
for minilib, ``specbench postcond make-java-task`` for javalib):

    python -m pytest_specbench.benchmarks.postcond.tools.make_tasks [--language python|java]

from a checkout with an editable install: it writes into the bundled suite (``benchmarks/postcond/``).
"""
import argparse
import sys
from pathlib import Path

from pytest_specbench.benchmarks.postcond import cli
from pytest_specbench.data.bundled import bundled_suite

HERE = bundled_suite("postcond")  # lib/, javalib/, refs/ in; tasks/ out
TASKS = [  # (file, method, tests)
    ("minilib/numbers.py", "clamp", ["tests/test_numbers.py::test_clamp"]),
    ("minilib/numbers.py", "gcd", ["tests/test_numbers.py::test_gcd"]),
    ("minilib/numbers.py", "digit_sum", ["tests/test_numbers.py::test_digit_sum"]),
    ("minilib/seqs.py", "running_max", ["tests/test_seqs.py::test_running_max"]),
    ("minilib/seqs.py", "dedupe", ["tests/test_seqs.py::test_dedupe"]),
    ("minilib/stack.py", "BoundedStack.push", ["tests/test_stack.py::test_push_until_full",
                                               "tests/test_stack.py::test_push_zero_capacity"]),
]
JAVA = "src/main/java/javalib/"
JAVA_TASKS = [  # (file, method, tests)
    (JAVA + "Numbers.java", "Numbers.clamp", ["javalib.NumbersTest#clampInside", "javalib.NumbersTest#clampOutside"]),
    (JAVA + "Numbers.java", "Numbers.isPrime", ["javalib.NumbersTest#primes", "javalib.NumbersTest#nonPrimes"]),
    (JAVA + "Numbers.java", "Numbers.digitSum", ["javalib.NumbersTest#digitSums"]),
    (JAVA + "Seqs.java", "Seqs.maxIndex", ["javalib.SeqsTest#maxIndexFindsTheLargest",
                                           "javalib.SeqsTest#maxIndexTakesTheFirstOfEqualMaxima"]),
    (JAVA + "IntStack.java", "IntStack.push", ["javalib.IntStackTest#pushUntilFull",
                                               "javalib.IntStackTest#pushOnZeroCapacity"]),
    (JAVA + "Account.java", "Account.withdraw", ["javalib.AccountTest#withdrawCovered",
                                                 "javalib.AccountTest#withdrawRefused"]),
]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--language", choices=("python", "java"), default=None, help="rebuild one side only")
    lang = ap.parse_args().language
    parser = argparse.ArgumentParser(prog="specbench")
    cli.register(parser.add_subparsers(dest="group"))
    status = 0
    for rel, method, tests in TASKS if lang in (None, "python") else ():
        name = method.split(".")[-1]
        args = parser.parse_args(["postcond", "make-task", "--repo", str(HERE / "lib"), "--file", rel, "--method", method,
                                  "--tests", *tests, "--ref", str(HERE / "refs" / f"{name}.txt"),
                                  "--out", str(HERE / "tasks" / f"minilib--{name}.json"),
                                  "--github-path", "specbench/minilib", "--local-checkout", "../lib", "--timeout", "10"])
        status |= args.func(args)
    for rel, method, tests in JAVA_TASKS if lang in (None, "java") else ():
        name = method.split(".")[-1]
        args = parser.parse_args(["postcond", "make-java-task", "--repo", str(HERE / "javalib"), "--file", rel,
                                  "--method", method, "--tests", *tests,
                                  "--ref", str(HERE / "refs" / "java" / f"{name}.txt"),
                                  "--out", str(HERE / "tasks" / f"javalib--{name}.json"),
                                  "--github-path", "specbench/javalib", "--local-checkout", "../javalib",
                                  "--timeout", "10"])
        status |= args.func(args)
    return status


if __name__ == "__main__":
    sys.exit(main())
