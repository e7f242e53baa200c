"""Hostile VERINA answers: Lean code that wants a pass it has not earned.

Lean is not installed here, so nothing below runs Lean; what is tested is the
harness's side of the wall: every answer field is screened (comments blanked,
strings kept, keywords found as tokens) before a file is assembled.  What a
refused answer tried, and why it would have worked:

* code run while Lean elaborates (``#eval``, ``run_cmd``, ``run_tac``, an
  ``unsafe`` term): it can read its own file (the nonce), write the harness's
  sentinel lines to fd 1 in ``lean --json`` form and exit before a failing check;
* instances (``BEq``, ``Decidable``) and notation: ``#guard f x == y`` and
  ``decide`` would use the sample's ``==`` / decision procedure;
* ``variable`` + ``include``, axioms, ``sorry`` in a spec, ``set_option
  debug.skipKernelTC``: a check that proves less than it says.

Every reference answer (bundled tasks, and the 189 shared upstream tasks when
present) passes the same screen, so the reference keeps its 100%.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from pytest_specbench.benchmarks.verina import prompts
from pytest_specbench.benchmarks.verina.answers import AnswerError, code_text, parse_answer, screen
from pytest_specbench.benchmarks.verina.kinds import KINDS
from pytest_specbench.benchmarks.verina.loader import load_tasks
from shared_data import SHARED_DATA

BUNDLED = Path(__file__).resolve().parents[1] / "benchmarks" / "verina"

HOSTILE = {
    # elaboration-time code
    "eval_exit": ("code_aux", '#eval (IO.Process.exit 0 : IO Unit)', "#eval"),
    "eval_after_string_with_dashes": ("code", 'let s := "--"; s.length\n#eval IO.println "x"', "#eval"),
    "eval_after_char_quote": ("code_aux", "def q := '\"'  def r := \"--\"\n#eval 1", "#eval"),
    "eval_in_one_line_block_comment_end": ("code_aux", "/- a /- nested -/ still comment -/ #eval 1", "#eval"),
    "run_cmd": ("code_aux", "run_cmd Lean.logInfo \"x\"", "run_cmd"),
    "run_elab_after_open_in": ("precond_aux", "open Lean Elab in run_elab pure ()", "run_elab"),
    "run_meta": ("postcond_aux", "run_meta pure ()", "run_meta"),
    "run_tac": ("proof", "run_tac (pure ())", "run_tac"),
    "by_elab": ("code", "by_elab pure (Lean.mkNatLit 0)", "by_elab"),
    "initialize": ("code_aux", "initialize counter : IO.Ref Nat ← IO.mkRef 0", "initialize"),
    "unsafe_term": ("code", "unsafe (unsafeBaseIO (pure 0))", "unsafe"),
    "unsafe_def": ("code_aux", "unsafe def leak : Nat := 0", "unsafe"),
    "exit": ("code", "0\n#exit", "#exit"),
    "unsafe_in_interpolation": ("code", 's!"{unsafe (unsafeBaseIO (pure 0))}"', "unsafe"),
    "eval_after_escaped_quote": ("code_aux", 'def s := "a\\" -- "\n#eval 1', "#eval"),
    "print_sentinel": ("code_aux", '#print "specbench:0000:case0"', "#print"),
    "guard_msgs": ("code_aux", "#guard_msgs in #eval 1", "#guard_msgs"),
    # syntax: rewrite the harness's commands or ==
    "macro_rules": ("code_aux", "macro_rules | `(#guard $e) => `(#check 1)", "macro_rules"),
    "macro_private": ("code_aux", "private macro \"x\" : term => `(0)", "macro"),
    "notation_split_lines": ("code_aux", 'notation:50 a " == " b\n  => True', "notation"),
    "infix_after_doc_comment": ("code_aux", '/-- doc -/ infix:50 " == " => fun _ _ => true', "infix"),
    "syntax": ("code_aux", 'syntax "cheat" : tactic', "syntax"),
    "elab": ("code_aux", 'elab "cheat" : tactic => pure ()', "elab"),
    "scoped_notation": ("postcond_aux", 'scoped notation "⊤⊤" => True', "notation"),
    # compiled code other than what the kernel sees
    "implemented_by": ("code_aux", "@[implemented_by foo] def bar := 1", "implemented_by"),
    "extern": ("code_aux", '@[extern "lean_nat_add"] opaque cheat : Nat → Nat', "extern"),
    "csimp": ("code_aux", "@[csimp] theorem t : @f = @g := rfl", "csimp"),
    "export_attribute": ("code_aux", "@[export lean_io_prim_put_str] def p (s : String) : Nat := 0", "export"),
    # instances change ==, decide and plausible
    "beq_instance": ("code_aux", "instance : BEq (List Nat) := ⟨fun _ _ => true⟩", "instance"),
    "priority_instance": ("code_aux", "instance (priority := high) : BEq Nat := ⟨fun _ _ => true⟩", "instance"),
    "decidable_instance": ("postcond_aux", "instance (x : Nat) : Decidable (x = x) := isTrue rfl", "instance"),
    "instance_attribute": ("code_aux", "@[instance] def cheatBEq : BEq Nat := ⟨fun _ _ => true⟩", "instance"),
    "attribute_command": ("code_aux", "attribute [instance] cheatBEq", "attribute"),
    "deriving_instance": ("code_aux", "deriving instance BEq for Nat", "instance"),
    # assumptions and weakened checks
    "axiom": ("postcond_aux", "@[simp] axiom cheat : ∀ n : Nat, n = 0", "axiom"),
    "variable_include": ("proof_aux", "variable (h : False)\ninclude h", "variable"),
    "include_alone": ("proof_aux", "include h", "include"),
    "namespace": ("code_aux", "namespace Hidden", "namespace"),
    "section": ("code_aux", "section", "section"),
    "sorry_in_spec": ("postcond", "sorry", "sorry"),
    "sorry_simp_lemma": ("postcond_aux", "@[simp] theorem t : False := by sorry", "sorry"),
    "admit_in_code": ("code", "by admit", "admit"),
    "skip_kernel": ("proof_aux", "set_option debug.skipKernelTC true", "debug.skipKernelTC"),
    "heartbeats": ("code_aux", "set_option maxHeartbeats 0 in\ndef x := 1", "maxHeartbeats"),
    "marker": ("code", "x -- !benchmark @end code", "marker"),
    "import_then_eval": ("imports", "import Mathlib\n#eval IO.println 1", "non-import"),
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_answer_is_refused_with_one_line(name):
    field, value, word = HOSTILE[name]
    with pytest.raises(AnswerError) as info:
        screen({field: value})
    message = str(info.value)
    assert word in message and "\n" not in message and field in message


@pytest.mark.parametrize("field,value", [
    ("code", "-- #eval IO.println 1\nxs.foldl (· + ·) 0"),           # a command inside a comment
    ("code", "/- instance, macro, #exit -/ a + b"),
    ("code", 's.startsWith "prefix" && s != "-- not a comment"'),     # strings are not comments
    ("code", "#[1, 2, 3].size"),                                       # array literals are not commands
    ("code", "let x' := 1\nx' + 1"),                                   # a quote in a name is no char literal
    ("code_aux", "@[simp, reducible] def twice (n : Nat) : Nat := 2 * n"),
    ("code_aux", "structure P where\n  a : Nat\nderiving BEq, Repr"),  # deriving for a new type is fine
    ("proof", "sorry"),                                                # a proof's axioms decide it
    ("proof_aux", "set_option maxRecDepth 1000 in\ntheorem t : 1 = 1 := rfl".replace("maxRecDepth 1000", "pp.all true")),
    ("postcond", "result % 2 = 0 ∧ n%2 = 0"),
])
def test_ordinary_answers_pass_the_screen(field, value):
    screen({field: value})


def test_code_text_blanks_comments_and_keeps_strings_and_lines():
    text = 'a -- c\n/- x /- y -/ z -/ b "--" \'"\' c'
    out = code_text(text)
    assert out.count("\n") == text.count("\n") and len(out) == len(text)
    assert "c\n" not in out and "x" not in out and "z" not in out
    assert out.endswith('b "  " \'"\' c')
    assert code_text('s!"a {unsafe x} b"') == 's!"  {unsafe x}  "'  # interpolation is code


def _reference_fields(tasks):
    for task in tasks:
        for kind in KINDS.values():
            answer = prompts.answer_text(prompts.reference_fields(task, kind))
            yield task.task_id, kind, parse_answer(answer, kind.fields)


def test_every_bundled_reference_answer_passes_the_screen():
    for task_id, kind, fields in _reference_fields(load_tasks(BUNDLED)):
        screen(fields)


@pytest.mark.realdata
def test_every_upstream_reference_answer_passes_the_screen():
    root = SHARED_DATA / "verina"
    if not root.is_dir():
        pytest.skip("VERINA data not found at ../shared/datasets/verina")
    refused = []
    for task_id, kind, fields in _reference_fields(load_tasks(root)):
        try:
            screen(fields)
        except AnswerError as exc:
            refused.append(f"{task_id} {kind.name}: {exc}")
    assert not refused, refused[:5]
