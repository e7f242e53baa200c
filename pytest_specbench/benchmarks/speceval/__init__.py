"""SpecEval family (SpecEval: JML judgement, selection, infilling, generation).

Its JML runtime assertion checker lives in :mod:`.jml`; the adapters come with
the SpecEval issue.
"""

ADAPTERS: dict[str, str] = {}
