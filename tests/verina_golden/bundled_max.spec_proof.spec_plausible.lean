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
  sorry
  -- !benchmark @end code


-- !benchmark @start postcond_aux

-- !benchmark @end postcond_aux


@[reducible, simp]
def maxOfTwo_postcond (a : Int) (b : Int) (result: Int) (h_precond : maxOfTwo_precond (a) (b)) : Prop :=
  -- !benchmark @start postcond
  (result = a ∨ result = b) ∧ result ≥ a ∧ result ≥ b
  -- !benchmark @end postcond
#print "specbench:2836320f796ae60095c4:header"

set_option maxHeartbeats 200000 in
example : (maxOfTwo_precond (3) (7)) := by
  unfold maxOfTwo_precond
  simp_all! (config := { failIfUnchanged := false })
  simp (config := { failIfUnchanged := false }) [*]
  plausible (config := { numInst := 1000, maxSize := 100, numRetries := 20, randomSeed := some 42 })
#print "specbench:2836320f796ae60095c4:precond_sound:0:plausible"

set_option maxHeartbeats 200000 in
example : ¬ (maxOfTwo_precond (3) (7)) := by
  unfold maxOfTwo_precond
  simp_all! (config := { failIfUnchanged := false })
  simp (config := { failIfUnchanged := false }) [*]
  plausible (config := { numInst := 1000, maxSize := 100, numRetries := 20, randomSeed := some 42 })
#print "specbench:2836320f796ae60095c4:precond_sound:0:plausible_neg"

set_option maxHeartbeats 200000 in
example : (maxOfTwo_precond (-2) (-9)) := by
  unfold maxOfTwo_precond
  simp_all! (config := { failIfUnchanged := false })
  simp (config := { failIfUnchanged := false }) [*]
  plausible (config := { numInst := 1000, maxSize := 100, numRetries := 20, randomSeed := some 42 })
#print "specbench:2836320f796ae60095c4:precond_sound:1:plausible"

set_option maxHeartbeats 200000 in
example : ¬ (maxOfTwo_precond (-2) (-9)) := by
  unfold maxOfTwo_precond
  simp_all! (config := { failIfUnchanged := false })
  simp (config := { failIfUnchanged := false }) [*]
  plausible (config := { numInst := 1000, maxSize := 100, numRetries := 20, randomSeed := some 42 })
#print "specbench:2836320f796ae60095c4:precond_sound:1:plausible_neg"

set_option maxHeartbeats 200000 in
example : (maxOfTwo_precond (4) (4)) := by
  unfold maxOfTwo_precond
  simp_all! (config := { failIfUnchanged := false })
  simp (config := { failIfUnchanged := false }) [*]
  plausible (config := { numInst := 1000, maxSize := 100, numRetries := 20, randomSeed := some 42 })
#print "specbench:2836320f796ae60095c4:precond_sound:2:plausible"

set_option maxHeartbeats 200000 in
example : ¬ (maxOfTwo_precond (4) (4)) := by
  unfold maxOfTwo_precond
  simp_all! (config := { failIfUnchanged := false })
  simp (config := { failIfUnchanged := false }) [*]
  plausible (config := { numInst := 1000, maxSize := 100, numRetries := 20, randomSeed := some 42 })
#print "specbench:2836320f796ae60095c4:precond_sound:2:plausible_neg"

set_option maxHeartbeats 200000 in
example : (¬ (maxOfTwo_postcond (3) (7) (3) (by sorry))) := by
  unfold maxOfTwo_postcond
  simp_all! (config := { failIfUnchanged := false })
  simp (config := { failIfUnchanged := false }) [*]
  plausible (config := { numInst := 1000, maxSize := 100, numRetries := 20, randomSeed := some 42 })
#print "specbench:2836320f796ae60095c4:postcond_sound:0.0:plausible"

set_option maxHeartbeats 200000 in
example : ¬ (¬ (maxOfTwo_postcond (3) (7) (3) (by sorry))) := by
  unfold maxOfTwo_postcond
  simp_all! (config := { failIfUnchanged := false })
  simp (config := { failIfUnchanged := false }) [*]
  plausible (config := { numInst := 1000, maxSize := 100, numRetries := 20, randomSeed := some 42 })
#print "specbench:2836320f796ae60095c4:postcond_sound:0.0:plausible_neg"

set_option maxHeartbeats 200000 in
example : (¬ (maxOfTwo_postcond (3) (7) (10) (by sorry))) := by
  unfold maxOfTwo_postcond
  simp_all! (config := { failIfUnchanged := false })
  simp (config := { failIfUnchanged := false }) [*]
  plausible (config := { numInst := 1000, maxSize := 100, numRetries := 20, randomSeed := some 42 })
#print "specbench:2836320f796ae60095c4:postcond_sound:0.1:plausible"

set_option maxHeartbeats 200000 in
example : ¬ (¬ (maxOfTwo_postcond (3) (7) (10) (by sorry))) := by
  unfold maxOfTwo_postcond
  simp_all! (config := { failIfUnchanged := false })
  simp (config := { failIfUnchanged := false }) [*]
  plausible (config := { numInst := 1000, maxSize := 100, numRetries := 20, randomSeed := some 42 })
#print "specbench:2836320f796ae60095c4:postcond_sound:0.1:plausible_neg"

set_option maxHeartbeats 200000 in
example : (¬ (maxOfTwo_postcond (-2) (-9) (-9) (by sorry))) := by
  unfold maxOfTwo_postcond
  simp_all! (config := { failIfUnchanged := false })
  simp (config := { failIfUnchanged := false }) [*]
  plausible (config := { numInst := 1000, maxSize := 100, numRetries := 20, randomSeed := some 42 })
#print "specbench:2836320f796ae60095c4:postcond_sound:1.0:plausible"

set_option maxHeartbeats 200000 in
example : ¬ (¬ (maxOfTwo_postcond (-2) (-9) (-9) (by sorry))) := by
  unfold maxOfTwo_postcond
  simp_all! (config := { failIfUnchanged := false })
  simp (config := { failIfUnchanged := false }) [*]
  plausible (config := { numInst := 1000, maxSize := 100, numRetries := 20, randomSeed := some 42 })
#print "specbench:2836320f796ae60095c4:postcond_sound:1.0:plausible_neg"

set_option maxHeartbeats 200000 in
example : (¬ (maxOfTwo_postcond (4) (4) (0) (by sorry))) := by
  unfold maxOfTwo_postcond
  simp_all! (config := { failIfUnchanged := false })
  simp (config := { failIfUnchanged := false }) [*]
  plausible (config := { numInst := 1000, maxSize := 100, numRetries := 20, randomSeed := some 42 })
#print "specbench:2836320f796ae60095c4:postcond_sound:2.0:plausible"

set_option maxHeartbeats 200000 in
example : ¬ (¬ (maxOfTwo_postcond (4) (4) (0) (by sorry))) := by
  unfold maxOfTwo_postcond
  simp_all! (config := { failIfUnchanged := false })
  simp (config := { failIfUnchanged := false }) [*]
  plausible (config := { numInst := 1000, maxSize := 100, numRetries := 20, randomSeed := some 42 })
#print "specbench:2836320f796ae60095c4:postcond_sound:2.0:plausible_neg"

set_option maxHeartbeats 200000 in
example : (¬ (maxOfTwo_postcond (4) (4) (8) (by sorry))) := by
  unfold maxOfTwo_postcond
  simp_all! (config := { failIfUnchanged := false })
  simp (config := { failIfUnchanged := false }) [*]
  plausible (config := { numInst := 1000, maxSize := 100, numRetries := 20, randomSeed := some 42 })
#print "specbench:2836320f796ae60095c4:postcond_sound:2.1:plausible"

set_option maxHeartbeats 200000 in
example : ¬ (¬ (maxOfTwo_postcond (4) (4) (8) (by sorry))) := by
  unfold maxOfTwo_postcond
  simp_all! (config := { failIfUnchanged := false })
  simp (config := { failIfUnchanged := false }) [*]
  plausible (config := { numInst := 1000, maxSize := 100, numRetries := 20, randomSeed := some 42 })
#print "specbench:2836320f796ae60095c4:postcond_sound:2.1:plausible_neg"

set_option maxHeartbeats 200000 in
example : (maxOfTwo_postcond (3) (7) (7) (by sorry)) := by
  unfold maxOfTwo_postcond
  simp_all! (config := { failIfUnchanged := false })
  simp (config := { failIfUnchanged := false }) [*]
  plausible (config := { numInst := 1000, maxSize := 100, numRetries := 20, randomSeed := some 42 })
#print "specbench:2836320f796ae60095c4:postcond_complete:0:plausible"

set_option maxHeartbeats 200000 in
example : ¬ (maxOfTwo_postcond (3) (7) (7) (by sorry)) := by
  unfold maxOfTwo_postcond
  simp_all! (config := { failIfUnchanged := false })
  simp (config := { failIfUnchanged := false }) [*]
  plausible (config := { numInst := 1000, maxSize := 100, numRetries := 20, randomSeed := some 42 })
#print "specbench:2836320f796ae60095c4:postcond_complete:0:plausible_neg"

set_option maxHeartbeats 200000 in
example : (maxOfTwo_postcond (-2) (-9) (-2) (by sorry)) := by
  unfold maxOfTwo_postcond
  simp_all! (config := { failIfUnchanged := false })
  simp (config := { failIfUnchanged := false }) [*]
  plausible (config := { numInst := 1000, maxSize := 100, numRetries := 20, randomSeed := some 42 })
#print "specbench:2836320f796ae60095c4:postcond_complete:1:plausible"

set_option maxHeartbeats 200000 in
example : ¬ (maxOfTwo_postcond (-2) (-9) (-2) (by sorry)) := by
  unfold maxOfTwo_postcond
  simp_all! (config := { failIfUnchanged := false })
  simp (config := { failIfUnchanged := false }) [*]
  plausible (config := { numInst := 1000, maxSize := 100, numRetries := 20, randomSeed := some 42 })
#print "specbench:2836320f796ae60095c4:postcond_complete:1:plausible_neg"

set_option maxHeartbeats 200000 in
example : (maxOfTwo_postcond (4) (4) (4) (by sorry)) := by
  unfold maxOfTwo_postcond
  simp_all! (config := { failIfUnchanged := false })
  simp (config := { failIfUnchanged := false }) [*]
  plausible (config := { numInst := 1000, maxSize := 100, numRetries := 20, randomSeed := some 42 })
#print "specbench:2836320f796ae60095c4:postcond_complete:2:plausible"

set_option maxHeartbeats 200000 in
example : ¬ (maxOfTwo_postcond (4) (4) (4) (by sorry)) := by
  unfold maxOfTwo_postcond
  simp_all! (config := { failIfUnchanged := false })
  simp (config := { failIfUnchanged := false }) [*]
  plausible (config := { numInst := 1000, maxSize := 100, numRetries := 20, randomSeed := some 42 })
#print "specbench:2836320f796ae60095c4:postcond_complete:2:plausible_neg"
