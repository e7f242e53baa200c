"""Conformance suites users can run (as Hypothesis and Inspect let providers prove themselves).

* :func:`check_family` (:mod:`.family`): a benchmark family -- a folder of this
  package or an adapter from another package's ``specbench.benchmarks`` entry
  point -- keeps the plugin's promises on its bundled suite: a version, tasks
  that load, the reference passing every check it does not skip, details that
  survive the journal's JSON, metric names that ``aggregate`` returns.
* :func:`check_executor` (:mod:`.executor`): a sandboxed executor keeps the
  execution contract (limits, no network, hidden paths, clean jobs, crashes
  and setup faults reported as such).

Both raise ``AssertionError`` naming what is broken; call them from a test.
"""
from .executor import Subject, check_executor
from .family import FamilyCheck, check_family, family_settings

__all__ = ["FamilyCheck", "Subject", "check_executor", "check_family", "family_settings"]
