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
#print "specbench:0bc2f30eef91e534533c:header"

set_option maxHeartbeats 200000 in
#guard sumList ([1, 2, 3]) (by sorry) == (6)
#print "specbench:0bc2f30eef91e534533c:code:0"

set_option maxHeartbeats 200000 in
#guard sumList ([]) (by sorry) == (0)
#print "specbench:0bc2f30eef91e534533c:code:1"

set_option maxHeartbeats 200000 in
#guard sumList ([-4, 4, 10]) (by sorry) == (10)
#print "specbench:0bc2f30eef91e534533c:code:2"
