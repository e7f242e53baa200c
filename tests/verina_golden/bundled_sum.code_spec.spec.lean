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
#print "specbench:bd60a6db75903cf5d2e9:header"

set_option maxHeartbeats 200000 in
open Lean in
run_cmd do
  let env ← getEnv
  let effects : List Name := [`IO, `EIO, `BaseIO, `IO.RealWorld, `EStateM, `Lean.MetaM, `Lean.Meta.MetaM,
    `Lean.CoreM, `Lean.Core.CoreM, `Lean.Elab.Term.TermElabM, `Lean.Elab.Command.CommandElabM,
    `Lean.Elab.Tactic.TacticM, `Lean.MacroM, `Lean.Macro, `Lean.ParserDescr, `Lean.TrailingParserDescr,
    `Lean.Parser.Parser, `Lean.Parser.TrailingParser, `Lean.Elab.Term.TermElab, `Lean.Elab.Command.CommandElab,
    `Lean.Elab.Tactic.Tactic, `Lean.Meta.Simp.Simproc, `Lean.Meta.Simp.DSimproc]
  let roots : List Name := [`IO, `EIO, `BaseIO, `System, `Lean.Elab, `Lean.Meta, `Lean.Parser, `Lean.Compiler]
  let bad (c : Name) : Bool :=
    effects.contains c || roots.any (·.isPrefixOf c) ||
      ((env.find? c).map (fun i => i.type.getUsedConstants.any effects.contains)).getD false
  let ownType (c : Name) : Bool := env.constants.map₂.contains c && ((env.find? c).map (·.isInductive)).getD false
  let mut found : Array String := #[]
  for (n, ci) in env.constants.map₂.toList do
    if n.isInternal then continue
    if ci.isUnsafe then found := found.push s!"unsafe {n}"
    if isExtern env n then found := found.push s!"extern {n}"
    -- a `partial def` is compiled through its own `_unsafe_rec`: that one is Lean's, not the answer's
    if let some impl := Compiler.implementedByAttr.getParam? env n then
      if impl != n ++ `_unsafe_rec then found := found.push s!"implemented_by {n}"
    if (getExportNameFor? env n).isSome then found := found.push s!"export {n}"
    -- a `deriving` clause of a type the file declares is fine; any other instance is not
    if Meta.isInstanceCore env n && !(ci.type.getUsedConstants.any ownType) then
      found := found.push s!"instance {n}"
    if isIOUnitInitFn env n || isIOUnitBuiltinInitFn env n || hasInitAttr env n then
      found := found.push s!"initialize {n}"
    let used := ci.type.getUsedConstants ++ ((ci.value?.map (·.getUsedConstants)).getD #[])
    for c in used do
      if bad c then
        found := found.push s!"{n} uses {c}"
        break
  logInfo m!"specbench-audit: {String.intercalate "; " found.toList}"
#print "specbench:bd60a6db75903cf5d2e9:audit:environment"

set_option maxHeartbeats 200000 in
#guard decide (sumList_precond ([1, 2, 3]))
#print "specbench:bd60a6db75903cf5d2e9:precond_sound:0:decide"

set_option maxHeartbeats 200000 in
#guard decide (sumList_precond ([]))
#print "specbench:bd60a6db75903cf5d2e9:precond_sound:1:decide"

set_option maxHeartbeats 200000 in
#guard decide (sumList_precond ([-4, 4, 10]))
#print "specbench:bd60a6db75903cf5d2e9:precond_sound:2:decide"

set_option maxHeartbeats 200000 in
#guard decide (¬ (sumList_postcond ([1, 2, 3]) (5) (by sorry)))
#print "specbench:bd60a6db75903cf5d2e9:postcond_sound:0.0:decide"

set_option maxHeartbeats 200000 in
#guard decide (¬ (sumList_postcond ([1, 2, 3]) (0) (by sorry)))
#print "specbench:bd60a6db75903cf5d2e9:postcond_sound:0.1:decide"

set_option maxHeartbeats 200000 in
#guard decide (¬ (sumList_postcond ([]) (1) (by sorry)))
#print "specbench:bd60a6db75903cf5d2e9:postcond_sound:1.0:decide"

set_option maxHeartbeats 200000 in
#guard decide (¬ (sumList_postcond ([-4, 4, 10]) (18) (by sorry)))
#print "specbench:bd60a6db75903cf5d2e9:postcond_sound:2.0:decide"

set_option maxHeartbeats 200000 in
#guard decide (sumList_postcond ([1, 2, 3]) (6) (by sorry))
#print "specbench:bd60a6db75903cf5d2e9:postcond_complete:0:decide"

set_option maxHeartbeats 200000 in
#guard decide (sumList_postcond ([]) (0) (by sorry))
#print "specbench:bd60a6db75903cf5d2e9:postcond_complete:1:decide"

set_option maxHeartbeats 200000 in
#guard decide (sumList_postcond ([-4, 4, 10]) (10) (by sorry))
#print "specbench:bd60a6db75903cf5d2e9:postcond_complete:2:decide"
