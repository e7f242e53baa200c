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
#print "specbench:2c55f7f516c3e1e68884:header"

set_option maxHeartbeats 200000 in
example : (safeDiv_precond (7) (2)) := by
  unfold safeDiv_precond
  simp_all! (config := { failIfUnchanged := false })
  simp (config := { failIfUnchanged := false }) [*]
  plausible (config := { numInst := 1000, maxSize := 100, numRetries := 20, randomSeed := some 42 })
#print "specbench:2c55f7f516c3e1e68884:precond_sound:0:plausible"

set_option maxHeartbeats 200000 in
example : ¬ (safeDiv_precond (7) (2)) := by
  unfold safeDiv_precond
  simp_all! (config := { failIfUnchanged := false })
  simp (config := { failIfUnchanged := false }) [*]
  plausible (config := { numInst := 1000, maxSize := 100, numRetries := 20, randomSeed := some 42 })
#print "specbench:2c55f7f516c3e1e68884:precond_sound:0:plausible_neg"

set_option maxHeartbeats 200000 in
example : (safeDiv_precond (0) (5)) := by
  unfold safeDiv_precond
  simp_all! (config := { failIfUnchanged := false })
  simp (config := { failIfUnchanged := false }) [*]
  plausible (config := { numInst := 1000, maxSize := 100, numRetries := 20, randomSeed := some 42 })
#print "specbench:2c55f7f516c3e1e68884:precond_sound:1:plausible"

set_option maxHeartbeats 200000 in
example : ¬ (safeDiv_precond (0) (5)) := by
  unfold safeDiv_precond
  simp_all! (config := { failIfUnchanged := false })
  simp (config := { failIfUnchanged := false }) [*]
  plausible (config := { numInst := 1000, maxSize := 100, numRetries := 20, randomSeed := some 42 })
#print "specbench:2c55f7f516c3e1e68884:precond_sound:1:plausible_neg"

set_option maxHeartbeats 200000 in
example : (safeDiv_precond (9) (3)) := by
  unfold safeDiv_precond
  simp_all! (config := { failIfUnchanged := false })
  simp (config := { failIfUnchanged := false }) [*]
  plausible (config := { numInst := 1000, maxSize := 100, numRetries := 20, randomSeed := some 42 })
#print "specbench:2c55f7f516c3e1e68884:precond_sound:2:plausible"

set_option maxHeartbeats 200000 in
example : ¬ (safeDiv_precond (9) (3)) := by
  unfold safeDiv_precond
  simp_all! (config := { failIfUnchanged := false })
  simp (config := { failIfUnchanged := false }) [*]
  plausible (config := { numInst := 1000, maxSize := 100, numRetries := 20, randomSeed := some 42 })
#print "specbench:2c55f7f516c3e1e68884:precond_sound:2:plausible_neg"

set_option maxHeartbeats 200000 in
example : (¬ (safeDiv_precond (4) (0))) := by
  unfold safeDiv_precond
  simp_all! (config := { failIfUnchanged := false })
  simp (config := { failIfUnchanged := false }) [*]
  plausible (config := { numInst := 1000, maxSize := 100, numRetries := 20, randomSeed := some 42 })
#print "specbench:2c55f7f516c3e1e68884:precond_complete:0:plausible"

set_option maxHeartbeats 200000 in
example : ¬ (¬ (safeDiv_precond (4) (0))) := by
  unfold safeDiv_precond
  simp_all! (config := { failIfUnchanged := false })
  simp (config := { failIfUnchanged := false }) [*]
  plausible (config := { numInst := 1000, maxSize := 100, numRetries := 20, randomSeed := some 42 })
#print "specbench:2c55f7f516c3e1e68884:precond_complete:0:plausible_neg"

set_option maxHeartbeats 200000 in
example : (¬ (safeDiv_precond (0) (0))) := by
  unfold safeDiv_precond
  simp_all! (config := { failIfUnchanged := false })
  simp (config := { failIfUnchanged := false }) [*]
  plausible (config := { numInst := 1000, maxSize := 100, numRetries := 20, randomSeed := some 42 })
#print "specbench:2c55f7f516c3e1e68884:precond_complete:1:plausible"

set_option maxHeartbeats 200000 in
example : ¬ (¬ (safeDiv_precond (0) (0))) := by
  unfold safeDiv_precond
  simp_all! (config := { failIfUnchanged := false })
  simp (config := { failIfUnchanged := false }) [*]
  plausible (config := { numInst := 1000, maxSize := 100, numRetries := 20, randomSeed := some 42 })
#print "specbench:2c55f7f516c3e1e68884:precond_complete:1:plausible_neg"

set_option maxHeartbeats 200000 in
example : (¬ (safeDiv_postcond (7) (2) (4) (by sorry))) := by
  unfold safeDiv_postcond
  simp_all! (config := { failIfUnchanged := false })
  simp (config := { failIfUnchanged := false }) [*]
  plausible (config := { numInst := 1000, maxSize := 100, numRetries := 20, randomSeed := some 42 })
#print "specbench:2c55f7f516c3e1e68884:postcond_sound:0.0:plausible"

set_option maxHeartbeats 200000 in
example : ¬ (¬ (safeDiv_postcond (7) (2) (4) (by sorry))) := by
  unfold safeDiv_postcond
  simp_all! (config := { failIfUnchanged := false })
  simp (config := { failIfUnchanged := false }) [*]
  plausible (config := { numInst := 1000, maxSize := 100, numRetries := 20, randomSeed := some 42 })
#print "specbench:2c55f7f516c3e1e68884:postcond_sound:0.0:plausible_neg"

set_option maxHeartbeats 200000 in
example : (¬ (safeDiv_postcond (7) (2) (2) (by sorry))) := by
  unfold safeDiv_postcond
  simp_all! (config := { failIfUnchanged := false })
  simp (config := { failIfUnchanged := false }) [*]
  plausible (config := { numInst := 1000, maxSize := 100, numRetries := 20, randomSeed := some 42 })
#print "specbench:2c55f7f516c3e1e68884:postcond_sound:0.1:plausible"

set_option maxHeartbeats 200000 in
example : ¬ (¬ (safeDiv_postcond (7) (2) (2) (by sorry))) := by
  unfold safeDiv_postcond
  simp_all! (config := { failIfUnchanged := false })
  simp (config := { failIfUnchanged := false }) [*]
  plausible (config := { numInst := 1000, maxSize := 100, numRetries := 20, randomSeed := some 42 })
#print "specbench:2c55f7f516c3e1e68884:postcond_sound:0.1:plausible_neg"

set_option maxHeartbeats 200000 in
example : (¬ (safeDiv_postcond (0) (5) (1) (by sorry))) := by
  unfold safeDiv_postcond
  simp_all! (config := { failIfUnchanged := false })
  simp (config := { failIfUnchanged := false }) [*]
  plausible (config := { numInst := 1000, maxSize := 100, numRetries := 20, randomSeed := some 42 })
#print "specbench:2c55f7f516c3e1e68884:postcond_sound:1.0:plausible"

set_option maxHeartbeats 200000 in
example : ¬ (¬ (safeDiv_postcond (0) (5) (1) (by sorry))) := by
  unfold safeDiv_postcond
  simp_all! (config := { failIfUnchanged := false })
  simp (config := { failIfUnchanged := false }) [*]
  plausible (config := { numInst := 1000, maxSize := 100, numRetries := 20, randomSeed := some 42 })
#print "specbench:2c55f7f516c3e1e68884:postcond_sound:1.0:plausible_neg"

set_option maxHeartbeats 200000 in
example : (¬ (safeDiv_postcond (9) (3) (2) (by sorry))) := by
  unfold safeDiv_postcond
  simp_all! (config := { failIfUnchanged := false })
  simp (config := { failIfUnchanged := false }) [*]
  plausible (config := { numInst := 1000, maxSize := 100, numRetries := 20, randomSeed := some 42 })
#print "specbench:2c55f7f516c3e1e68884:postcond_sound:2.0:plausible"

set_option maxHeartbeats 200000 in
example : ¬ (¬ (safeDiv_postcond (9) (3) (2) (by sorry))) := by
  unfold safeDiv_postcond
  simp_all! (config := { failIfUnchanged := false })
  simp (config := { failIfUnchanged := false }) [*]
  plausible (config := { numInst := 1000, maxSize := 100, numRetries := 20, randomSeed := some 42 })
#print "specbench:2c55f7f516c3e1e68884:postcond_sound:2.0:plausible_neg"

set_option maxHeartbeats 200000 in
example : (¬ (safeDiv_postcond (9) (3) (4) (by sorry))) := by
  unfold safeDiv_postcond
  simp_all! (config := { failIfUnchanged := false })
  simp (config := { failIfUnchanged := false }) [*]
  plausible (config := { numInst := 1000, maxSize := 100, numRetries := 20, randomSeed := some 42 })
#print "specbench:2c55f7f516c3e1e68884:postcond_sound:2.1:plausible"

set_option maxHeartbeats 200000 in
example : ¬ (¬ (safeDiv_postcond (9) (3) (4) (by sorry))) := by
  unfold safeDiv_postcond
  simp_all! (config := { failIfUnchanged := false })
  simp (config := { failIfUnchanged := false }) [*]
  plausible (config := { numInst := 1000, maxSize := 100, numRetries := 20, randomSeed := some 42 })
#print "specbench:2c55f7f516c3e1e68884:postcond_sound:2.1:plausible_neg"

set_option maxHeartbeats 200000 in
example : (safeDiv_postcond (7) (2) (3) (by sorry)) := by
  unfold safeDiv_postcond
  simp_all! (config := { failIfUnchanged := false })
  simp (config := { failIfUnchanged := false }) [*]
  plausible (config := { numInst := 1000, maxSize := 100, numRetries := 20, randomSeed := some 42 })
#print "specbench:2c55f7f516c3e1e68884:postcond_complete:0:plausible"

set_option maxHeartbeats 200000 in
example : ¬ (safeDiv_postcond (7) (2) (3) (by sorry)) := by
  unfold safeDiv_postcond
  simp_all! (config := { failIfUnchanged := false })
  simp (config := { failIfUnchanged := false }) [*]
  plausible (config := { numInst := 1000, maxSize := 100, numRetries := 20, randomSeed := some 42 })
#print "specbench:2c55f7f516c3e1e68884:postcond_complete:0:plausible_neg"

set_option maxHeartbeats 200000 in
example : (safeDiv_postcond (0) (5) (0) (by sorry)) := by
  unfold safeDiv_postcond
  simp_all! (config := { failIfUnchanged := false })
  simp (config := { failIfUnchanged := false }) [*]
  plausible (config := { numInst := 1000, maxSize := 100, numRetries := 20, randomSeed := some 42 })
#print "specbench:2c55f7f516c3e1e68884:postcond_complete:1:plausible"

set_option maxHeartbeats 200000 in
example : ¬ (safeDiv_postcond (0) (5) (0) (by sorry)) := by
  unfold safeDiv_postcond
  simp_all! (config := { failIfUnchanged := false })
  simp (config := { failIfUnchanged := false }) [*]
  plausible (config := { numInst := 1000, maxSize := 100, numRetries := 20, randomSeed := some 42 })
#print "specbench:2c55f7f516c3e1e68884:postcond_complete:1:plausible_neg"

set_option maxHeartbeats 200000 in
example : (safeDiv_postcond (9) (3) (3) (by sorry)) := by
  unfold safeDiv_postcond
  simp_all! (config := { failIfUnchanged := false })
  simp (config := { failIfUnchanged := false }) [*]
  plausible (config := { numInst := 1000, maxSize := 100, numRetries := 20, randomSeed := some 42 })
#print "specbench:2c55f7f516c3e1e68884:postcond_complete:2:plausible"

set_option maxHeartbeats 200000 in
example : ¬ (safeDiv_postcond (9) (3) (3) (by sorry)) := by
  unfold safeDiv_postcond
  simp_all! (config := { failIfUnchanged := false })
  simp (config := { failIfUnchanged := false }) [*]
  plausible (config := { numInst := 1000, maxSize := 100, numRetries := 20, randomSeed := some 42 })
#print "specbench:2c55f7f516c3e1e68884:postcond_complete:2:plausible_neg"
