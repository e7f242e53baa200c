-- !benchmark @start import type=solution
import Mathlib
-- !benchmark @end import

-- !benchmark @start solution_aux

-- !benchmark @end solution_aux

-- !benchmark @start precond_aux

-- !benchmark @end precond_aux

@[reducible, simp]
def absInt_precond (x : Int) : Prop :=
  -- !benchmark @start precond
  True
  -- !benchmark @end precond


-- !benchmark @start code_aux

-- !benchmark @end code_aux


def absInt (x : Int) (h_precond : absInt_precond (x)) : Int :=
  -- !benchmark @start code
  if x < 0 then -x else x
  -- !benchmark @end code


-- !benchmark @start postcond_aux

-- !benchmark @end postcond_aux


@[reducible, simp]
def absInt_postcond (x : Int) (result: Int) (h_precond : absInt_precond (x)) : Prop :=
  -- !benchmark @start postcond
  (result = x ∨ result = -x) ∧ result ≥ 0
  -- !benchmark @end postcond


-- !benchmark @start proof_aux

-- !benchmark @end proof_aux


theorem absInt_spec_satisfied (x: Int) (h_precond : absInt_precond (x)) :
    absInt_postcond (x) (absInt (x) h_precond) h_precond := by
  -- !benchmark @start proof
  unfold absInt absInt_postcond
  split <;> omega
  -- !benchmark @end proof
