"""VERINA's declared options (``--verina-*``), importable without the adapter.

Every pytest start lists each family's options; they come from this module
(and the task kinds of :mod:`.kinds`) alone, so a run that selects another
family never imports VERINA's Lean machinery.
"""
from __future__ import annotations

from ..base import Option, existing_folder, positive_int as _positive_int
from .kinds import KINDS


def _int(text: str) -> int:
    try:
        return int(str(text))
    except ValueError:
        raise ValueError(f"expected a whole number, got {text!r}") from None


OPTIONS = (
    Option("verina_task", "VERINA task kind: " + "; ".join(f"{k.name}: {k.doc}" for k in KINDS.values()),
           default="codegen", choices=tuple(KINDS)),
    Option("verina_lean_project", "a built VERINA Lean project (lake exe cache get && lake build in a clone "
                                  "of sunblaze-ucb/verina); lake from PATH or ~/.elan/bin", default="",
           parse=existing_folder),
    Option("verina_plausible_budget", "plausible's numInst per case (Table 6; default 1000)", default=1000,
           parse=_positive_int),
    Option("verina_plausible_seed", "plausible's randomSeed (default 42)", default=42, parse=_int),
    Option("verina_heartbeats", "maxHeartbeats per check command (Lean's deterministic work limit)",
           default=200000, parse=_positive_int),
    Option("verina_upper_bound", "upper bound: paper (unknown counts as holding) or upstream (only when the "
                                 "relation also has a passing case)", default="paper", choices=("paper", "upstream")),
    Option("verina_proof_check", "proof acceptance: axioms (#print axioms: Lean's standard axioms only; paper §4.1) "
                                 "or substring (upstream: no 'sorry'/'admit' in the proof text)",
           default="axioms", choices=("axioms", "substring")),
    Option("verina_unfinished_tests", "code tests after a timeout or crash: fail (ours, with the reason) or pass "
                                      "(upstream scores them as passing)", default="fail", choices=("fail", "pass")),
    Option("verina_empty_relation", "a relation with no test cases (112 tasks have no reject inputs): vacuous "
                                    "(holds) or exclude (task left out of that metric)",
           default="vacuous", choices=("vacuous", "exclude")),
    Option("verina_audit", "post-elaboration audit in every Lean file (issue #43): on (#print axioms of the "
                           "answer's theorems, and a listing of the unsafe/extern/instance/IO constants it added) or "
                           "off (only if the audit command fails on a Lean version other than 4.18)",
           default="on", choices=("on", "off")),
    Option("verina_e2e_proof_target", "end-to-end proof target: ground_truth spec (paper §4.2) or generated "
                                      "(upstream HEAD)", default="ground_truth", choices=("ground_truth", "generated")),
)
