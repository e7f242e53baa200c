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
#print "specbench:541b1696e6b29892092f:header"

set_option maxHeartbeats 200000 in
example : (sumList_precond ([1, 2, 3])) := by
  unfold sumList_precond
  simp_all! (config := { failIfUnchanged := false })
  simp (config := { failIfUnchanged := false }) [*]
  plausible (config := { numInst := 1000, maxSize := 100, numRetries := 20, randomSeed := some 42 })
#print "specbench:541b1696e6b29892092f:precond_sound:0:plausible"

set_option maxHeartbeats 200000 in
example : ¬ (sumList_precond ([1, 2, 3])) := by
  unfold sumList_precond
  simp_all! (config := { failIfUnchanged := false })
  simp (config := { failIfUnchanged := false }) [*]
  plausible (config := { numInst := 1000, maxSize := 100, numRetries := 20, randomSeed := some 42 })
#print "specbench:541b1696e6b29892092f:precond_sound:0:plausible_neg"

set_option maxHeartbeats 200000 in
example : (sumList_precond ([])) := by
  unfold sumList_precond
  simp_all! (config := { failIfUnchanged := false })
  simp (config := { failIfUnchanged := false }) [*]
  plausible (config := { numInst := 1000, maxSize := 100, numRetries := 20, randomSeed := some 42 })
#print "specbench:541b1696e6b29892092f:precond_sound:1:plausible"

set_option maxHeartbeats 200000 in
example : ¬ (sumList_precond ([])) := by
  unfold sumList_precond
  simp_all! (config := { failIfUnchanged := false })
  simp (config := { failIfUnchanged := false }) [*]
  plausible (config := { numInst := 1000, maxSize := 100, numRetries := 20, randomSeed := some 42 })
#print "specbench:541b1696e6b29892092f:precond_sound:1:plausible_neg"

set_option maxHeartbeats 200000 in
example : (sumList_precond ([-4, 4, 10])) := by
  unfold sumList_precond
  simp_all! (config := { failIfUnchanged := false })
  simp (config := { failIfUnchanged := false }) [*]
  plausible (config := { numInst := 1000, maxSize := 100, numRetries := 20, randomSeed := some 42 })
#print "specbench:541b1696e6b29892092f:precond_sound:2:plausible"

set_option maxHeartbeats 200000 in
example : ¬ (sumList_precond ([-4, 4, 10])) := by
  unfold sumList_precond
  simp_all! (config := { failIfUnchanged := false })
  simp (config := { failIfUnchanged := false }) [*]
  plausible (config := { numInst := 1000, maxSize := 100, numRetries := 20, randomSeed := some 42 })
#print "specbench:541b1696e6b29892092f:precond_sound:2:plausible_neg"

set_option maxHeartbeats 200000 in
example : (¬ (sumList_postcond ([1, 2, 3]) (5) (by sorry))) := by
  unfold sumList_postcond
  simp_all! (config := { failIfUnchanged := false })
  simp (config := { failIfUnchanged := false }) [*]
  plausible (config := { numInst := 1000, maxSize := 100, numRetries := 20, randomSeed := some 42 })
#print "specbench:541b1696e6b29892092f:postcond_sound:0.0:plausible"

set_option maxHeartbeats 200000 in
example : ¬ (¬ (sumList_postcond ([1, 2, 3]) (5) (by sorry))) := by
  unfold sumList_postcond
  simp_all! (config := { failIfUnchanged := false })
  simp (config := { failIfUnchanged := false }) [*]
  plausible (config := { numInst := 1000, maxSize := 100, numRetries := 20, randomSeed := some 42 })
#print "specbench:541b1696e6b29892092f:postcond_sound:0.0:plausible_neg"

set_option maxHeartbeats 200000 in
example : (¬ (sumList_postcond ([1, 2, 3]) (0) (by sorry))) := by
  unfold sumList_postcond
  simp_all! (config := { failIfUnchanged := false })
  simp (config := { failIfUnchanged := false }) [*]
  plausible (config := { numInst := 1000, maxSize := 100, numRetries := 20, randomSeed := some 42 })
#print "specbench:541b1696e6b29892092f:postcond_sound:0.1:plausible"

set_option maxHeartbeats 200000 in
example : ¬ (¬ (sumList_postcond ([1, 2, 3]) (0) (by sorry))) := by
  unfold sumList_postcond
  simp_all! (config := { failIfUnchanged := false })
  simp (config := { failIfUnchanged := false }) [*]
  plausible (config := { numInst := 1000, maxSize := 100, numRetries := 20, randomSeed := some 42 })
#print "specbench:541b1696e6b29892092f:postcond_sound:0.1:plausible_neg"

set_option maxHeartbeats 200000 in
example : (¬ (sumList_postcond ([]) (1) (by sorry))) := by
  unfold sumList_postcond
  simp_all! (config := { failIfUnchanged := false })
  simp (config := { failIfUnchanged := false }) [*]
  plausible (config := { numInst := 1000, maxSize := 100, numRetries := 20, randomSeed := some 42 })
#print "specbench:541b1696e6b29892092f:postcond_sound:1.0:plausible"

set_option maxHeartbeats 200000 in
example : ¬ (¬ (sumList_postcond ([]) (1) (by sorry))) := by
  unfold sumList_postcond
  simp_all! (config := { failIfUnchanged := false })
  simp (config := { failIfUnchanged := false }) [*]
  plausible (config := { numInst := 1000, maxSize := 100, numRetries := 20, randomSeed := some 42 })
#print "specbench:541b1696e6b29892092f:postcond_sound:1.0:plausible_neg"

set_option maxHeartbeats 200000 in
example : (¬ (sumList_postcond ([-4, 4, 10]) (18) (by sorry))) := by
  unfold sumList_postcond
  simp_all! (config := { failIfUnchanged := false })
  simp (config := { failIfUnchanged := false }) [*]
  plausible (config := { numInst := 1000, maxSize := 100, numRetries := 20, randomSeed := some 42 })
#print "specbench:541b1696e6b29892092f:postcond_sound:2.0:plausible"

set_option maxHeartbeats 200000 in
example : ¬ (¬ (sumList_postcond ([-4, 4, 10]) (18) (by sorry))) := by
  unfold sumList_postcond
  simp_all! (config := { failIfUnchanged := false })
  simp (config := { failIfUnchanged := false }) [*]
  plausible (config := { numInst := 1000, maxSize := 100, numRetries := 20, randomSeed := some 42 })
#print "specbench:541b1696e6b29892092f:postcond_sound:2.0:plausible_neg"

set_option maxHeartbeats 200000 in
example : (sumList_postcond ([1, 2, 3]) (6) (by sorry)) := by
  unfold sumList_postcond
  simp_all! (config := { failIfUnchanged := false })
  simp (config := { failIfUnchanged := false }) [*]
  plausible (config := { numInst := 1000, maxSize := 100, numRetries := 20, randomSeed := some 42 })
#print "specbench:541b1696e6b29892092f:postcond_complete:0:plausible"

set_option maxHeartbeats 200000 in
example : ¬ (sumList_postcond ([1, 2, 3]) (6) (by sorry)) := by
  unfold sumList_postcond
  simp_all! (config := { failIfUnchanged := false })
  simp (config := { failIfUnchanged := false }) [*]
  plausible (config := { numInst := 1000, maxSize := 100, numRetries := 20, randomSeed := some 42 })
#print "specbench:541b1696e6b29892092f:postcond_complete:0:plausible_neg"

set_option maxHeartbeats 200000 in
example : (sumList_postcond ([]) (0) (by sorry)) := by
  unfold sumList_postcond
  simp_all! (config := { failIfUnchanged := false })
  simp (config := { failIfUnchanged := false }) [*]
  plausible (config := { numInst := 1000, maxSize := 100, numRetries := 20, randomSeed := some 42 })
#print "specbench:541b1696e6b29892092f:postcond_complete:1:plausible"

set_option maxHeartbeats 200000 in
example : ¬ (sumList_postcond ([]) (0) (by sorry)) := by
  unfold sumList_postcond
  simp_all! (config := { failIfUnchanged := false })
  simp (config := { failIfUnchanged := false }) [*]
  plausible (config := { numInst := 1000, maxSize := 100, numRetries := 20, randomSeed := some 42 })
#print "specbench:541b1696e6b29892092f:postcond_complete:1:plausible_neg"

set_option maxHeartbeats 200000 in
example : (sumList_postcond ([-4, 4, 10]) (10) (by sorry)) := by
  unfold sumList_postcond
  simp_all! (config := { failIfUnchanged := false })
  simp (config := { failIfUnchanged := false }) [*]
  plausible (config := { numInst := 1000, maxSize := 100, numRetries := 20, randomSeed := some 42 })
#print "specbench:541b1696e6b29892092f:postcond_complete:2:plausible"

set_option maxHeartbeats 200000 in
example : ¬ (sumList_postcond ([-4, 4, 10]) (10) (by sorry)) := by
  unfold sumList_postcond
  simp_all! (config := { failIfUnchanged := false })
  simp (config := { failIfUnchanged := false }) [*]
  plausible (config := { numInst := 1000, maxSize := 100, numRetries := 20, randomSeed := some 42 })
#print "specbench:541b1696e6b29892092f:postcond_complete:2:plausible_neg"
