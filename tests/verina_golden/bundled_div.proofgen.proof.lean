import Mathlib
import Plausible
-- !benchmark @start import type=solution

-- !benchmark @end import

-- !benchmark @start solution_aux

-- !benchmark @end solution_aux

-- !benchmark @start precond_aux

-- !benchmark @end precond_aux

@[reducible, simp]
def safeDiv_precond (a : Nat) (b : Nat) : Prop :=
  -- !benchmark @start precond
  b > 0
  -- !benchmark @end precond


-- !benchmark @start code_aux

-- !benchmark @end code_aux


def safeDiv (a : Nat) (b : Nat) (h_precond : safeDiv_precond (a) (b)) : Nat :=
  -- !benchmark @start code
  a / b
  -- !benchmark @end code


-- !benchmark @start postcond_aux

-- !benchmark @end postcond_aux


@[reducible, simp]
def safeDiv_postcond (a : Nat) (b : Nat) (result: Nat) (h_precond : safeDiv_precond (a) (b)) : Prop :=
  -- !benchmark @start postcond
  result * b ≤ a ∧ a < (result + 1) * b
  -- !benchmark @end postcond


-- !benchmark @start proof_aux

-- !benchmark @end proof_aux


theorem safeDiv_spec_satisfied (a: Nat) (b: Nat) (h_precond : safeDiv_precond (a) (b)) :
    safeDiv_postcond (a) (b) (safeDiv (a) (b) h_precond) h_precond := by
  -- !benchmark @start proof
  sorry
  -- !benchmark @end proof
#print "specbench:69964793df0602146991:header"

set_option maxHeartbeats 200000 in
#print axioms safeDiv_spec_satisfied
#print "specbench:69964793df0602146991:axioms"
