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
#print "specbench:ee44eb28289be391c1d7:header"

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
#print "specbench:ee44eb28289be391c1d7:audit:environment"

set_option maxHeartbeats 200000 in
#guard countChar ("hello") ('l') (by sorry) == (2)
#print "specbench:ee44eb28289be391c1d7:code:0"

set_option maxHeartbeats 200000 in
#guard countChar ("") ('a') (by sorry) == (0)
#print "specbench:ee44eb28289be391c1d7:code:1"

set_option maxHeartbeats 200000 in
#guard countChar ("say \"hi\"") ('"') (by sorry) == (2)
#print "specbench:ee44eb28289be391c1d7:code:2"
