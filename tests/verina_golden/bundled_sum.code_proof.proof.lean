import Mathlib
import Plausible
-- !benchmark @start import type=solution

-- !benchmark @end import

-- !benchmark @start solution_aux

-- !benchmark @end solution_aux

-- !benchmark @start precond_aux

-- !benchmark @end precond_aux

@[reducible, simp]
def sumList_precond (xs : List Int) : Prop :=
  -- !benchmark @start precond
  True
  -- !benchmark @end precond


-- !benchmark @start code_aux

-- !benchmark @end code_aux


def sumList (xs : List Int) (h_precond : sumList_precond (xs)) : Int :=
  -- !benchmark @start code
  xs.foldl (· + ·) 0
  -- !benchmark @end code


-- !benchmark @start postcond_aux

-- !benchmark @end postcond_aux


@[reducible, simp]
def sumList_postcond (xs : List Int) (result: Int) (h_precond : sumList_precond (xs)) : Prop :=
  -- !benchmark @start postcond
  result = xs.sum
  -- !benchmark @end postcond


-- !benchmark @start proof_aux

-- !benchmark @end proof_aux


theorem sumList_spec_satisfied (xs: List Int) (h_precond : sumList_precond (xs)) :
    sumList_postcond (xs) (sumList (xs) h_precond) h_precond := by
  -- !benchmark @start proof
  sorry
  -- !benchmark @end proof
#print "specbench:19e2164015afc1af90ee:header"

set_option maxHeartbeats 200000 in
#print axioms sumList_spec_satisfied
#print "specbench:19e2164015afc1af90ee:axioms"
