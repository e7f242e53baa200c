import Mathlib
import Plausible
-- !benchmark @start import type=solution

-- !benchmark @end import

-- !benchmark @start solution_aux

-- !benchmark @end solution_aux

-- !benchmark @start precond_aux

-- !benchmark @end precond_aux

@[reducible, simp]
def countChar_precond (s : String) (c : Char) : Prop :=
  -- !benchmark @start precond
  True
  -- !benchmark @end precond


-- !benchmark @start code_aux

-- !benchmark @end code_aux


def countChar (s : String) (c : Char) (h_precond : countChar_precond (s) (c)) : Nat :=
  -- !benchmark @start code
  s.toList.count c
  -- !benchmark @end code


-- !benchmark @start postcond_aux

-- !benchmark @end postcond_aux


@[reducible, simp]
def countChar_postcond (s : String) (c : Char) (result: Nat) (h_precond : countChar_precond (s) (c)) : Prop :=
  -- !benchmark @start postcond
  result = s.toList.count c
  -- !benchmark @end postcond


-- !benchmark @start proof_aux

-- !benchmark @end proof_aux


theorem countChar_spec_satisfied (s: String) (c: Char) (h_precond : countChar_precond (s) (c)) :
    countChar_postcond (s) (c) (countChar (s) (c) h_precond) h_precond := by
  -- !benchmark @start proof
  unfold countChar countChar_postcond
  rfl
  -- !benchmark @end proof
#print "specbench:a87bb9ace7b98ca29c06:header"

set_option maxHeartbeats 200000 in
#print axioms countChar_spec_satisfied
#print "specbench:a87bb9ace7b98ca29c06:axioms"
