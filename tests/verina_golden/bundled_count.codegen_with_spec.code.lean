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
#print "specbench:8951a0b64da85353ae74:header"

set_option maxHeartbeats 200000 in
#guard countChar ("hello") ('l') (by sorry) == (2)
#print "specbench:8951a0b64da85353ae74:code:0"

set_option maxHeartbeats 200000 in
#guard countChar ("") ('a') (by sorry) == (0)
#print "specbench:8951a0b64da85353ae74:code:1"

set_option maxHeartbeats 200000 in
#guard countChar ("say \"hi\"") ('"') (by sorry) == (2)
#print "specbench:8951a0b64da85353ae74:code:2"
