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
#print "specbench:94083c4defe536e7bb9d:header"

set_option maxHeartbeats 200000 in
example : (countChar_precond ("hello") ('l')) := by
  unfold countChar_precond
  simp_all! (config := { failIfUnchanged := false })
  simp (config := { failIfUnchanged := false }) [*]
  plausible (config := { numInst := 1000, maxSize := 100, numRetries := 20, randomSeed := some 42 })
#print "specbench:94083c4defe536e7bb9d:precond_sound:0:plausible"

set_option maxHeartbeats 200000 in
example : ¬ (countChar_precond ("hello") ('l')) := by
  unfold countChar_precond
  simp_all! (config := { failIfUnchanged := false })
  simp (config := { failIfUnchanged := false }) [*]
  plausible (config := { numInst := 1000, maxSize := 100, numRetries := 20, randomSeed := some 42 })
#print "specbench:94083c4defe536e7bb9d:precond_sound:0:plausible_neg"

set_option maxHeartbeats 200000 in
example : (countChar_precond ("") ('a')) := by
  unfold countChar_precond
  simp_all! (config := { failIfUnchanged := false })
  simp (config := { failIfUnchanged := false }) [*]
  plausible (config := { numInst := 1000, maxSize := 100, numRetries := 20, randomSeed := some 42 })
#print "specbench:94083c4defe536e7bb9d:precond_sound:1:plausible"

set_option maxHeartbeats 200000 in
example : ¬ (countChar_precond ("") ('a')) := by
  unfold countChar_precond
  simp_all! (config := { failIfUnchanged := false })
  simp (config := { failIfUnchanged := false }) [*]
  plausible (config := { numInst := 1000, maxSize := 100, numRetries := 20, randomSeed := some 42 })
#print "specbench:94083c4defe536e7bb9d:precond_sound:1:plausible_neg"

set_option maxHeartbeats 200000 in
example : (countChar_precond ("say \"hi\"") ('"')) := by
  unfold countChar_precond
  simp_all! (config := { failIfUnchanged := false })
  simp (config := { failIfUnchanged := false }) [*]
  plausible (config := { numInst := 1000, maxSize := 100, numRetries := 20, randomSeed := some 42 })
#print "specbench:94083c4defe536e7bb9d:precond_sound:2:plausible"

set_option maxHeartbeats 200000 in
example : ¬ (countChar_precond ("say \"hi\"") ('"')) := by
  unfold countChar_precond
  simp_all! (config := { failIfUnchanged := false })
  simp (config := { failIfUnchanged := false }) [*]
  plausible (config := { numInst := 1000, maxSize := 100, numRetries := 20, randomSeed := some 42 })
#print "specbench:94083c4defe536e7bb9d:precond_sound:2:plausible_neg"

set_option maxHeartbeats 200000 in
example : (¬ (countChar_postcond ("hello") ('l') (1) (by sorry))) := by
  unfold countChar_postcond
  simp_all! (config := { failIfUnchanged := false })
  simp (config := { failIfUnchanged := false }) [*]
  plausible (config := { numInst := 1000, maxSize := 100, numRetries := 20, randomSeed := some 42 })
#print "specbench:94083c4defe536e7bb9d:postcond_sound:0.0:plausible"

set_option maxHeartbeats 200000 in
example : ¬ (¬ (countChar_postcond ("hello") ('l') (1) (by sorry))) := by
  unfold countChar_postcond
  simp_all! (config := { failIfUnchanged := false })
  simp (config := { failIfUnchanged := false }) [*]
  plausible (config := { numInst := 1000, maxSize := 100, numRetries := 20, randomSeed := some 42 })
#print "specbench:94083c4defe536e7bb9d:postcond_sound:0.0:plausible_neg"

set_option maxHeartbeats 200000 in
example : (¬ (countChar_postcond ("hello") ('l') (3) (by sorry))) := by
  unfold countChar_postcond
  simp_all! (config := { failIfUnchanged := false })
  simp (config := { failIfUnchanged := false }) [*]
  plausible (config := { numInst := 1000, maxSize := 100, numRetries := 20, randomSeed := some 42 })
#print "specbench:94083c4defe536e7bb9d:postcond_sound:0.1:plausible"

set_option maxHeartbeats 200000 in
example : ¬ (¬ (countChar_postcond ("hello") ('l') (3) (by sorry))) := by
  unfold countChar_postcond
  simp_all! (config := { failIfUnchanged := false })
  simp (config := { failIfUnchanged := false }) [*]
  plausible (config := { numInst := 1000, maxSize := 100, numRetries := 20, randomSeed := some 42 })
#print "specbench:94083c4defe536e7bb9d:postcond_sound:0.1:plausible_neg"

set_option maxHeartbeats 200000 in
example : (¬ (countChar_postcond ("") ('a') (1) (by sorry))) := by
  unfold countChar_postcond
  simp_all! (config := { failIfUnchanged := false })
  simp (config := { failIfUnchanged := false }) [*]
  plausible (config := { numInst := 1000, maxSize := 100, numRetries := 20, randomSeed := some 42 })
#print "specbench:94083c4defe536e7bb9d:postcond_sound:1.0:plausible"

set_option maxHeartbeats 200000 in
example : ¬ (¬ (countChar_postcond ("") ('a') (1) (by sorry))) := by
  unfold countChar_postcond
  simp_all! (config := { failIfUnchanged := false })
  simp (config := { failIfUnchanged := false }) [*]
  plausible (config := { numInst := 1000, maxSize := 100, numRetries := 20, randomSeed := some 42 })
#print "specbench:94083c4defe536e7bb9d:postcond_sound:1.0:plausible_neg"

set_option maxHeartbeats 200000 in
example : (¬ (countChar_postcond ("say \"hi\"") ('"') (0) (by sorry))) := by
  unfold countChar_postcond
  simp_all! (config := { failIfUnchanged := false })
  simp (config := { failIfUnchanged := false }) [*]
  plausible (config := { numInst := 1000, maxSize := 100, numRetries := 20, randomSeed := some 42 })
#print "specbench:94083c4defe536e7bb9d:postcond_sound:2.0:plausible"

set_option maxHeartbeats 200000 in
example : ¬ (¬ (countChar_postcond ("say \"hi\"") ('"') (0) (by sorry))) := by
  unfold countChar_postcond
  simp_all! (config := { failIfUnchanged := false })
  simp (config := { failIfUnchanged := false }) [*]
  plausible (config := { numInst := 1000, maxSize := 100, numRetries := 20, randomSeed := some 42 })
#print "specbench:94083c4defe536e7bb9d:postcond_sound:2.0:plausible_neg"

set_option maxHeartbeats 200000 in
example : (countChar_postcond ("hello") ('l') (2) (by sorry)) := by
  unfold countChar_postcond
  simp_all! (config := { failIfUnchanged := false })
  simp (config := { failIfUnchanged := false }) [*]
  plausible (config := { numInst := 1000, maxSize := 100, numRetries := 20, randomSeed := some 42 })
#print "specbench:94083c4defe536e7bb9d:postcond_complete:0:plausible"

set_option maxHeartbeats 200000 in
example : ¬ (countChar_postcond ("hello") ('l') (2) (by sorry)) := by
  unfold countChar_postcond
  simp_all! (config := { failIfUnchanged := false })
  simp (config := { failIfUnchanged := false }) [*]
  plausible (config := { numInst := 1000, maxSize := 100, numRetries := 20, randomSeed := some 42 })
#print "specbench:94083c4defe536e7bb9d:postcond_complete:0:plausible_neg"

set_option maxHeartbeats 200000 in
example : (countChar_postcond ("") ('a') (0) (by sorry)) := by
  unfold countChar_postcond
  simp_all! (config := { failIfUnchanged := false })
  simp (config := { failIfUnchanged := false }) [*]
  plausible (config := { numInst := 1000, maxSize := 100, numRetries := 20, randomSeed := some 42 })
#print "specbench:94083c4defe536e7bb9d:postcond_complete:1:plausible"

set_option maxHeartbeats 200000 in
example : ¬ (countChar_postcond ("") ('a') (0) (by sorry)) := by
  unfold countChar_postcond
  simp_all! (config := { failIfUnchanged := false })
  simp (config := { failIfUnchanged := false }) [*]
  plausible (config := { numInst := 1000, maxSize := 100, numRetries := 20, randomSeed := some 42 })
#print "specbench:94083c4defe536e7bb9d:postcond_complete:1:plausible_neg"

set_option maxHeartbeats 200000 in
example : (countChar_postcond ("say \"hi\"") ('"') (2) (by sorry)) := by
  unfold countChar_postcond
  simp_all! (config := { failIfUnchanged := false })
  simp (config := { failIfUnchanged := false }) [*]
  plausible (config := { numInst := 1000, maxSize := 100, numRetries := 20, randomSeed := some 42 })
#print "specbench:94083c4defe536e7bb9d:postcond_complete:2:plausible"

set_option maxHeartbeats 200000 in
example : ¬ (countChar_postcond ("say \"hi\"") ('"') (2) (by sorry)) := by
  unfold countChar_postcond
  simp_all! (config := { failIfUnchanged := false })
  simp (config := { failIfUnchanged := false }) [*]
  plausible (config := { numInst := 1000, maxSize := 100, numRetries := 20, randomSeed := some 42 })
#print "specbench:94083c4defe536e7bb9d:postcond_complete:2:plausible_neg"
