"""Entry point of the sandbox zygote (``python -s -m pytest_specbench.execution._zygote``).

The sandbox itself (isolation, supervision, reaping) is :mod:`.sandbox`; the
child runners are :mod:`.python_child` (calls of a Python function) and
:mod:`.command` (exec of a command line).  This module only starts it, under a
name that process listings (tests, the perf script) recognise.
"""
from pytest_specbench.execution.sandbox import main

if __name__ == "__main__":
    main()
