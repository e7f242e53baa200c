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
  sorry
  -- !benchmark @end code


-- !benchmark @start postcond_aux

-- !benchmark @end postcond_aux


@[reducible, simp]
def countChar_postcond (s : String) (c : Char) (result: Nat) (h_precond : countChar_precond (s) (c)) : Prop :=
  -- !benchmark @start postcond
  result = s.toList.count c
  -- !benchmark @end postcond
#print "specbench:2bab9322d489f3bd7f32:header"

set_option maxHeartbeats 200000 in
#guard decide (countChar_precond ("hello") ('l'))
#print "specbench:2bab9322d489f3bd7f32:precond_sound:0:decide"

set_option maxHeartbeats 200000 in
#guard decide (countChar_precond ("") ('a'))
#print "specbench:2bab9322d489f3bd7f32:precond_sound:1:decide"

set_option maxHeartbeats 200000 in
#guard decide (countChar_precond ("say \"hi\"") ('"'))
#print "specbench:2bab9322d489f3bd7f32:precond_sound:2:decide"

set_option maxHeartbeats 200000 in
#guard decide (¬ (countChar_postcond ("hello") ('l') (1) (by sorry)))
#print "specbench:2bab9322d489f3bd7f32:postcond_sound:0.0:decide"

set_option maxHeartbeats 200000 in
#guard decide (¬ (countChar_postcond ("hello") ('l') (3) (by sorry)))
#print "specbench:2bab9322d489f3bd7f32:postcond_sound:0.1:decide"

set_option maxHeartbeats 200000 in
#guard decide (¬ (countChar_postcond ("") ('a') (1) (by sorry)))
#print "specbench:2bab9322d489f3bd7f32:postcond_sound:1.0:decide"

set_option maxHeartbeats 200000 in
#guard decide (¬ (countChar_postcond ("say \"hi\"") ('"') (0) (by sorry)))
#print "specbench:2bab9322d489f3bd7f32:postcond_sound:2.0:decide"

set_option maxHeartbeats 200000 in
#guard decide (countChar_postcond ("hello") ('l') (2) (by sorry))
#print "specbench:2bab9322d489f3bd7f32:postcond_complete:0:decide"

set_option maxHeartbeats 200000 in
#guard decide (countChar_postcond ("") ('a') (0) (by sorry))
#print "specbench:2bab9322d489f3bd7f32:postcond_complete:1:decide"

set_option maxHeartbeats 200000 in
#guard decide (countChar_postcond ("say \"hi\"") ('"') (2) (by sorry))
#print "specbench:2bab9322d489f3bd7f32:postcond_complete:2:decide"
