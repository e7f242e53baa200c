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
  sorry
  -- !benchmark @end code


-- !benchmark @start postcond_aux

-- !benchmark @end postcond_aux


@[reducible, simp]
def sumList_postcond (xs : List Int) (result: Int) (h_precond : sumList_precond (xs)) : Prop :=
  -- !benchmark @start postcond
  result = xs.sum
  -- !benchmark @end postcond
#print "specbench:610b44f4d8642251eee3:header"

set_option maxHeartbeats 200000 in
#guard decide (sumList_precond ([1, 2, 3]))
#print "specbench:610b44f4d8642251eee3:precond_sound:0:decide"

set_option maxHeartbeats 200000 in
#guard decide (sumList_precond ([]))
#print "specbench:610b44f4d8642251eee3:precond_sound:1:decide"

set_option maxHeartbeats 200000 in
#guard decide (sumList_precond ([-4, 4, 10]))
#print "specbench:610b44f4d8642251eee3:precond_sound:2:decide"

set_option maxHeartbeats 200000 in
#guard decide (¬ (sumList_postcond ([1, 2, 3]) (5) (by sorry)))
#print "specbench:610b44f4d8642251eee3:postcond_sound:0.0:decide"

set_option maxHeartbeats 200000 in
#guard decide (¬ (sumList_postcond ([1, 2, 3]) (0) (by sorry)))
#print "specbench:610b44f4d8642251eee3:postcond_sound:0.1:decide"

set_option maxHeartbeats 200000 in
#guard decide (¬ (sumList_postcond ([]) (1) (by sorry)))
#print "specbench:610b44f4d8642251eee3:postcond_sound:1.0:decide"

set_option maxHeartbeats 200000 in
#guard decide (¬ (sumList_postcond ([-4, 4, 10]) (18) (by sorry)))
#print "specbench:610b44f4d8642251eee3:postcond_sound:2.0:decide"

set_option maxHeartbeats 200000 in
#guard decide (sumList_postcond ([1, 2, 3]) (6) (by sorry))
#print "specbench:610b44f4d8642251eee3:postcond_complete:0:decide"

set_option maxHeartbeats 200000 in
#guard decide (sumList_postcond ([]) (0) (by sorry))
#print "specbench:610b44f4d8642251eee3:postcond_complete:1:decide"

set_option maxHeartbeats 200000 in
#guard decide (sumList_postcond ([-4, 4, 10]) (10) (by sorry))
#print "specbench:610b44f4d8642251eee3:postcond_complete:2:decide"
