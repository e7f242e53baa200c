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
  sorry
  -- !benchmark @end code


-- !benchmark @start postcond_aux

-- !benchmark @end postcond_aux


@[reducible, simp]
def safeDiv_postcond (a : Nat) (b : Nat) (result: Nat) (h_precond : safeDiv_precond (a) (b)) : Prop :=
  -- !benchmark @start postcond
  result * b ≤ a ∧ a < (result + 1) * b
  -- !benchmark @end postcond
#print "specbench:44bde7760d464c848f67:header"

set_option maxHeartbeats 200000 in
#guard decide (safeDiv_precond (7) (2))
#print "specbench:44bde7760d464c848f67:precond_sound:0:decide"

set_option maxHeartbeats 200000 in
#guard decide (safeDiv_precond (0) (5))
#print "specbench:44bde7760d464c848f67:precond_sound:1:decide"

set_option maxHeartbeats 200000 in
#guard decide (safeDiv_precond (9) (3))
#print "specbench:44bde7760d464c848f67:precond_sound:2:decide"

set_option maxHeartbeats 200000 in
#guard decide (¬ (safeDiv_precond (4) (0)))
#print "specbench:44bde7760d464c848f67:precond_complete:0:decide"

set_option maxHeartbeats 200000 in
#guard decide (¬ (safeDiv_precond (0) (0)))
#print "specbench:44bde7760d464c848f67:precond_complete:1:decide"

set_option maxHeartbeats 200000 in
#guard decide (¬ (safeDiv_postcond (7) (2) (4) (by sorry)))
#print "specbench:44bde7760d464c848f67:postcond_sound:0.0:decide"

set_option maxHeartbeats 200000 in
#guard decide (¬ (safeDiv_postcond (7) (2) (2) (by sorry)))
#print "specbench:44bde7760d464c848f67:postcond_sound:0.1:decide"

set_option maxHeartbeats 200000 in
#guard decide (¬ (safeDiv_postcond (0) (5) (1) (by sorry)))
#print "specbench:44bde7760d464c848f67:postcond_sound:1.0:decide"

set_option maxHeartbeats 200000 in
#guard decide (¬ (safeDiv_postcond (9) (3) (2) (by sorry)))
#print "specbench:44bde7760d464c848f67:postcond_sound:2.0:decide"

set_option maxHeartbeats 200000 in
#guard decide (¬ (safeDiv_postcond (9) (3) (4) (by sorry)))
#print "specbench:44bde7760d464c848f67:postcond_sound:2.1:decide"

set_option maxHeartbeats 200000 in
#guard decide (safeDiv_postcond (7) (2) (3) (by sorry))
#print "specbench:44bde7760d464c848f67:postcond_complete:0:decide"

set_option maxHeartbeats 200000 in
#guard decide (safeDiv_postcond (0) (5) (0) (by sorry))
#print "specbench:44bde7760d464c848f67:postcond_complete:1:decide"

set_option maxHeartbeats 200000 in
#guard decide (safeDiv_postcond (9) (3) (3) (by sorry))
#print "specbench:44bde7760d464c848f67:postcond_complete:2:decide"
