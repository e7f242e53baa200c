"""The post-elaboration audit (issue #43): what the answer's definitions left in
Lean's environment, asked of Lean itself after they elaborated.

The screen (:mod:`.screen`) reads the answer's text; this reads what Lean made
of it.  Every file that holds an answer gets, right after the definitions and
before any check command:

- ``#print axioms T`` for every theorem and lemma the answer declares: only
  ``propext``, ``Classical.choice``, ``Quot.sound`` (and the axioms the task
  itself declares) may appear (§4.1's proof rule, applied to the answer's own
  lemmas, which the checks may use);
- one harness-written command (:data:`ENVIRONMENT_AUDIT`) listing every
  constant the file added that is ``unsafe``, ``@[extern]``,
  ``@[implemented_by]``, ``@[export]``, an instance, an ``initialize``, or whose
  type or value uses IO, the elaborator, the parser or a metaprogram type.  It
  prints one line ``specbench-audit: ...`` (the findings, ``;``-separated, none
  when clean), attributed by its line like every other case.

It runs only where Lean is installed (written against Lean 4.18's documented
``#print axioms`` output and the ``Lean`` API of that version; never executed
on the machines this was built on).  It is an audit after the fact: a sample
that managed to run code while elaborating could also forge its line; that is
what the screen is for.  The audit catches what the screen's lists miss without
running code (a package's attribute or command keyword added later, an
instance declared in a way no regular expression foresaw).
"""
from __future__ import annotations

import re

from .verdicts import STANDARD_AXIOMS, FileReport, axioms_of
from .screen import code_text

AUDIT_PREFIX = "specbench-audit:"

# Lean 4.18: `env.constants.map₂` holds the constants this file added.  The names
# it compares with are written with single backquotes (not resolved at elaboration).
ENVIRONMENT_AUDIT = r"""open Lean in
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
"""

_DECLARED = re.compile(r"(?<![\w'.])(?:theorem|lemma)\s+([^\s:({\[]+)")


def declared_theorems(fields: dict[str, str]) -> list[str]:
    """Theorems and lemmas the answer's fields declare (comments and strings
    blanked first), in order."""
    names: list[str] = []
    for value in fields.values():
        if "theorem" not in value and "lemma" not in value:
            continue
        for name in _DECLARED.findall(code_text(value)):
            if name not in names:
                names.append(name)
    return names


def add_audit(builder, fields: dict[str, str]) -> None:
    """Put the audit's cases into a :class:`~.assembly.FileBuilder`, before its checks."""
    for name in declared_theorems(fields):
        builder.add(f"audit:axioms:{name}", f"#print axioms {name}")
    builder.add("audit:environment", ENVIRONMENT_AUDIT.rstrip("\n"))


def environment_findings(report: FileReport) -> list[str] | None:
    """The findings of the environment audit (empty: clean), or None when its
    line is not there (the file stopped before it, or the command failed)."""
    if "audit:environment" not in report.reached:
        return None
    for m in report.by_case.get("audit:environment", []):
        text = " ".join(m.text.split())
        if m.severity == "information" and text.startswith(AUDIT_PREFIX):
            rest = text[len(AUDIT_PREFIX):].strip()
            return [f.strip() for f in rest.split(";") if f.strip()]
    return None


def audit_problem(report: FileReport, file_cases: list[str], allowed_axioms: set[str]) -> str:
    """One line saying what the audit found, "" when it is clean or did not run
    (a file the time limit stopped before the audit: its checks did not run either)."""
    if "audit:environment" not in file_cases or "audit:environment" not in report.reached:
        return ""
    for key in file_cases:
        if key.startswith("audit:axioms:"):
            name = key[len("audit:axioms:"):]
            axioms, why = axioms_of(report, key, name)
            if axioms is None:
                return f"audit: no '#print axioms {name}' report ({why})"
            extra = sorted(axioms - STANDARD_AXIOMS - allowed_axioms)
            if extra:
                return f"audit: the answer's '{name}' depends on {', '.join(extra)}"
    # An error in the audit command means it did not run as written (on Lean 4.18 only
    # the answer could cause that, e.g. by shadowing a name it uses): not a clean audit.
    errors = [m.text for m in report.by_case.get("audit:environment", []) if m.severity == "error"]
    if errors:
        return f"audit: the environment audit failed ({' '.join(errors[0].split())[:200]})"
    findings = environment_findings(report)
    if findings is None:
        return "audit: the environment audit did not report (no 'specbench-audit:' line)"
    if findings:
        return f"audit: the answer added {'; '.join(findings)[:250]}"
    return ""
