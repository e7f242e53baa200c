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
#print "specbench:822f5131650d538989b3:header"

set_option maxHeartbeats 200000 in
#guard safeDiv (7) (2) (by sorry) == (3)
#print "specbench:822f5131650d538989b3:code:0"

set_option maxHeartbeats 200000 in
#guard safeDiv (0) (5) (by sorry) == (0)
#print "specbench:822f5131650d538989b3:code:1"

set_option maxHeartbeats 200000 in
#guard safeDiv (9) (3) (by sorry) == (3)
#print "specbench:822f5131650d538989b3:code:2"
