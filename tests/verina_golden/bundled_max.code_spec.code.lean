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
#print "specbench:e8a3a955663c78548746:header"

set_option maxHeartbeats 200000 in
#guard maxOfTwo (3) (7) (by sorry) == (7)
#print "specbench:e8a3a955663c78548746:code:0"

set_option maxHeartbeats 200000 in
#guard maxOfTwo (-2) (-9) (by sorry) == (-2)
#print "specbench:e8a3a955663c78548746:code:1"

set_option maxHeartbeats 200000 in
#guard maxOfTwo (4) (4) (by sorry) == (4)
#print "specbench:e8a3a955663c78548746:code:2"
