import Mathlib
import Plausible
-- !benchmark @start import type=solution

-- !benchmark @end import

-- !benchmark @start solution_aux

-- !benchmark @end solution_aux

-- !benchmark @start precond_aux

-- !benchmark @end precond_aux

@[reducible, simp]
def maxOfTwo_precond (a : Int) (b : Int) : Prop :=
  -- !benchmark @start precond
  True
  -- !benchmark @end precond


-- !benchmark @start code_aux

-- !benchmark @end code_aux


def maxOfTwo (a : Int) (b : Int) (h_precond : maxOfTwo_precond (a) (b)) : Int :=
  -- !benchmark @start code
  if a ≥ b then a else b
  -- !benchmark @end code


-- !benchmark @start postcond_aux

-- !benchmark @end postcond_aux


@[reducible, simp]
def maxOfTwo_postcond (a : Int) (b : Int) (result: Int) (h_precond : maxOfTwo_precond (a) (b)) : Prop :=
  -- !benchmark @start postcond
  (result = a ∨ result = b) ∧ result ≥ a ∧ result ≥ b
  -- !benchmark @end postcond


-- !benchmark @start proof_aux

-- !benchmark @end proof_aux


theorem maxOfTwo_spec_satisfied (a: Int) (b: Int) (h_precond : maxOfTwo_precond (a) (b)) :
    maxOfTwo_postcond (a) (b) (maxOfTwo (a) (b) h_precond) h_precond := by
  -- !benchmark @start proof
  unfold maxOfTwo maxOfTwo_postcond
  split <;> omega
  -- !benchmark @end proof
#print "specbench:d4f7ad3d822439e89f0d:header"

set_option maxHeartbeats 200000 in
#print axioms maxOfTwo_spec_satisfied
#print "specbench:d4f7ad3d822439e89f0d:axioms"
