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

import re
from pathlib import Path

import pytest

from pytest_specbench.benchmarks.verina import prompts
from pytest_specbench.benchmarks.verina.answers import AnswerError, parse_answer
from pytest_specbench.benchmarks.verina.screen import code_text, screen
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
    "run_elab_after_open_in": ("precond_aux", "open Lean Elab in run_elab pure ()", "Elab"),
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


# Issue #43: each of these would run code, or change what a check means, while Lean
# elaborates; each fooled the screen before it read the raw text as well.  Value:
# (field, answer text, what the one-line refusal names).
HOSTILE_43 = {
    # IO inside a pure definition: #guard evaluates it, and the action runs
    "io_exit_in_pure_def": ("code_aux", "def f (n : Nat) : Nat :=\n  let _ := (IO.Process.exit 0 : IO Unit).run ()\n  n",
                            "IO.Process.exit"),
    "io_in_code_body": ("code", "match (IO.println \"x\" : IO Unit) () with | _ => 0", "IO.println"),
    "eio_type": ("code_aux", "def g : EIO String Unit := pure ()", "EIO"),
    "baseio": ("code_aux", "def g : BaseIO Unit := pure ()", "BaseIO"),
    "realworld": ("code_aux", "def w : IO.RealWorld := ()", "IO.RealWorld"),
    "quoted_io_name": ("code", "(«IO».println \"x\")", "IO"),
    "open_io_then_unqualified": ("code_aux", "open IO in\ndef f : Nat := 0", "IO"),
    "system_filepath": ("code", "(System.FilePath.pathExists \"/etc\") ()", "System.FilePath.pathExists"),
    "lean_elab": ("code_aux", "def f := Lean.Elab.Command.elabCommand", "Lean.Elab"),
    "lean_meta": ("postcond_aux", "def f := Lean.Meta.whnf", "Lean.Meta"),
    "open_lean_meta": ("code_aux", "open Lean Meta in\ndef f := 0", "Meta"),
    "metam": ("code_aux", "def f : MetaM Unit := pure ()", "MetaM"),
    "unsafe_cast": ("code", "unsafeCast 0", "unsafeCast"),
    "unsafe_io": ("code", "unsafeIO (pure 0)", "unsafeIO"),
    "ptr_addr_unsafe": ("code", "ptrAddrUnsafe xs", "ptrAddrUnsafe"),
    "partial_def_with_io": ("code_aux", "partial def loop : IO Unit := loop", "IO"),
    # options: only autoImplicit, relaxedAutoImplicit and linter.*
    "trace_profiler_output": ("code_aux", 'set_option trace.profiler.output "/tmp/x" in\ndef f := 0',
                              "trace.profiler.output"),
    "trace_profiler": ("code_aux", "set_option trace.profiler true", "trace.profiler"),
    "trace_any": ("code_aux", "set_option trace.Meta.synthInstance true", "trace.Meta"),
    "pp_option": ("code_aux", "set_option pp.all true", "pp.all"),
    "max_rec_depth": ("code_aux", "set_option maxRecDepth 100000", "maxRecDepth"),
    "option_quoted_component": ("code_aux", "set_option trace.«profiler».output \"x\"", "set_option trace."),
    "linter_quoted_component": ("code_aux", "set_option linter.«x» false", "linter."),
    "option_after_comment": ("code_aux", "set_option /- -/ trace.profiler.output \"x\"", "trace.profiler.output"),
    "option_in_comment": ("code_aux", "-- set_option debug.skipKernelTC true\ndef f := 0", "debug.skipKernelTC"),
    "option_in_term": ("code", "set_option maxHeartbeats 0 in 0", "maxHeartbeats"),
    # attributes: read with nested brackets; only those that register no metaprogram
    "aesop_then_command_elab": ("code_aux", "@[aesop safe (rule_sets := [builtin]), command_elab Lean.guardCmd]\n"
                                            "def f := 0", "aesop"),
    "simp_then_command_elab": ("code_aux", "@[simp (rule_sets := [x]), command_elab guardCmd] def f := 0",
                               "command_elab"),
    "nested_brackets_then_macro": ("code_aux", "@[simp [a, [b]], macro «term_==_»] def f := 0", "macro"),
    "aesop": ("code_aux", "@[aesop safe] theorem t : True := trivial", "aesop"),
    "norm_num": ("code_aux", "@[norm_num _ + _] def ev := 0", "norm_num"),
    "term_elab": ("code_aux", "@[term_elab guard] def f := 0", "term_elab"),
    "tactic_attr": ("proof_aux", "@[tactic decide] def f := 0", "tactic"),
    "init_attr": ("code_aux", "@[init] def f : Nat := 0", "init"),
    "export_attr": ("code_aux", "@[export foo] def f : Nat := 0", "export"),
    "default_instance": ("code_aux", "@[default_instance] def f : BEq Nat := ⟨fun _ _ => true⟩", "default_instance"),
    "attribute_in_comment": ("code_aux", "-- @[command_elab guardCmd]\ndef f := 0", "command_elab"),
    "attribute_in_string": ("code", '"@[macro x]".length', "macro"),
    "local_then_bad": ("code_aux", "@[local simp, scoped csimp] def f := 0", "csimp"),
    # commands the word list missed
    "simproc": ("code_aux", "simproc reduceFoo (foo _) := fun _ => return .continue", "simproc"),
    "dsimproc": ("code_aux", "dsimproc reduceFoo (foo _) := fun _ => return .continue", "dsimproc"),
    "simproc_decl": ("code_aux", "simproc_decl s (foo _) := fun _ => return .continue", "simproc_decl"),
    "notation3": ("code_aux", 'notation3 "∑" => True', "notation3"),
    "grind_pattern": ("proof_aux", "grind_pattern t => f x", "grind_pattern"),
    "register_simp_attr": ("code_aux", "register_simp_attr my_simp", "register_simp_attr"),
    "builtin_initialize": ("code_aux", "builtin_initialize r : Nat ← pure 0", "builtin_initialize"),
    "declare_aesop_rule_sets": ("code_aux", "declare_aesop_rule_sets [Cheat]", "declare_aesop_rule_sets"),
    "add_aesop_rules": ("proof_aux", "add_aesop_rules safe t", "add_aesop_rules"),
    "scoped_bracket_notation": ("code_aux", 'scoped[Foo] notation "x" => 0', "notation"),
    "irreducible_def": ("code_aux", "irreducible_def f : Nat := 0", "irreducible_def"),
    "seal": ("code_aux", "seal f", "seal"),
    "opaque": ("code_aux", "opaque cheat : Nat → Nat", "opaque"),
    "class": ("code_aux", "class Cheat (α : Type) where x : α", "class"),
    "alias": ("code_aux", "alias g := f", "alias"),
    "export_command": ("code_aux", "export Nat (add)", "export"),
    "compile_inductive": ("code_aux", "compile_inductive% Foo", "compile_inductive%"),
    # the check file holds every #guard's expected output: read it, answer from it
    "include_str_reads_the_check_file": ("code_aux", 'def leaked : String := include_str "check.lean"', "include_str"),
    "unif_hint": ("code_aux", "unif_hint (n : Nat) where n =?= 0 ⊢ n + 0 =?= 0", "unif_hint"),
    "proof_wanted": ("proof_aux", "proof_wanted t : False", "proof_wanted"),
    "run_cmd_after_open_in": ("code_aux", "open Nat in run_cmd pure ()", "run_cmd"),
    "eval_after_open_in": ("code_aux", "open Nat in\n#eval 1", "#eval"),
    "hash_after_semicolon": ("code", "0 #exit", "#exit"),
    "hash_check": ("code_aux", "#check Nat", "#check"),
    "hash_in_comment": ("code", "-- #eval IO.println 1\nxs.foldl (· + ·) 0", "#eval"),
    "command_in_block_comment": ("code", "/- instance, macro, #exit -/ a + b", "macro"),
    "english_command_in_string": ("code", 's.startsWith "prefix"', "prefix"),
    "decreasing_by_sorry": ("code_aux", "def f : Nat → Nat\n  | 0 => 0\n  | n+1 => f n\ndecreasing_by sorry", "sorry"),
    "decreasing_by_run_tac": ("code_aux", "def f (n : Nat) : Nat := f (n - 1)\ndecreasing_by run_tac pure ()",
                              "run_tac"),
    "termination_by_elab": ("code_aux", "def f (n : Nat) : Nat := 0\ntermination_by by_elab pure (Lean.mkNatLit 0)",
                            "by_elab"),
    # the lexer and Lean disagreeing about where a string or char ends
    "brace_in_plain_string": ("code_aux", 'def s := "{" ++ "a".push \'}\'\n#eval 1\n-- "', "#eval"),
    "brace_in_plain_string_hides_macro": ("code_aux", 'def s := "a{" ++ toString \'}\'\nmacro "x" : term => `(0) -- "',
                                          "macro"),
    "quote_after_dot": ("code_aux", "def c := x.'\"'\n#eval 1\ndef d := \"\"", "#eval"),
    "quote_after_digit": ("code_aux", "def c := 1'\"'\n#eval 1\ndef d := \"\"", "#eval"),
    "raw_string_backslash": ("code_aux", 'def s := r"a\\"\n#eval 1\ndef t := "x"', "#eval"),
    "raw_string_hash": ("code_aux", 'def s := r#"a"b"#\n#eval 1\ndef t := "x"', "#eval"),
    "raw_string_after_lambda": ("code_aux", 'def f := λr#"a"b"#\n#eval 1\ndef t := "x"', "#eval"),
    "raw_string_two_hashes": ("code_aux", 'def s := r##"a"#b"##\nelab "x" : term => pure (Lean.mkNatLit 0)', "elab"),
    "quoted_name_with_quote": ("code_aux", 'def «"» := 1\n#eval 1\ndef «x"» := 2', "#eval"),
    "interpolation_with_nested_string": ("code", 's!"{"}" ++ "x"} #eval"', "#eval"),
    "interpolation_hides_comment_end": ("code", 's!"{ "-/" }" /- x -/ ++ (unsafeIO 1)', "unsafeIO"),
    "escaped_quote_then_command": ("code_aux", 'def s := "a\\" -- "\n#eval 1', "#eval"),
    # Python's \w and Lean's names disagreeing: Lean reads a token, then the keyword
    "hash_command_after_name": ("code", "x#eval IO.println 1", "#eval"),
    "hash_command_after_digit": ("code", "1#exit", "#exit"),
    "keyword_after_lambda": ("code", "λmacro \"x\" : term => `(0)", "macro"),
    "keyword_after_pi": ("code_aux", "def t := Πrun_cmd pure ()", "run_cmd"),
    "keyword_after_latin1_letter": ("code_aux", "def é := 0\n\u00e9elab \"x\" : term => pure default", "elab"),
    "keyword_after_cjk": ("code_aux", "\u4e2dsimproc s (f _) := fun _ => return .continue", "simproc"),
    "keyword_after_number": ("code", "1run_tac pure ()", "run_tac"),
    "io_after_number": ("code", "0IO.println \"x\"", "IO"),
    "sorry_after_lambda": ("postcond", "λsorry", "sorry"),
    # characters Lean and Python split differently, and look-alikes
    "carriage_return": ("code_aux", "def f := 0\r#eval 1", "U+000D"),
    "line_separator": ("code_aux", "-- x\u2028#eval 1", "LINE SEPARATOR"),
    "zero_width_space_in_keyword": ("code_aux", "#ev\u200bal 1", "ZERO WIDTH SPACE"),
    "zero_width_joiner": ("code_aux", "mac\u200dro \"x\" : term => `(0)", "ZERO WIDTH JOINER"),
    "bidi_override": ("code", "0 -- \u202e\n", "RIGHT-TO-LEFT OVERRIDE"),
    "bom": ("code", "\ufeff0", "ZERO WIDTH NO-BREAK SPACE"),
    "vertical_tab": ("code_aux", "def f := 0\x0b#eval 1", "U+000B"),
    "cyrillic_e_in_elab": ("code_aux", "\u0435lab \"x\" : term => pure default", "mixes Latin"),
    "cyrillic_in_instance": ("code_aux", "inst\u0430nce : BEq Nat := ⟨fun _ _ => true⟩", "mixes Latin"),
    "fullwidth_hash_eval": ("code_aux", "\uff03eval 1", "#eval"),
    "fullwidth_letters_macro": ("code_aux", "\uff4d\uff41\uff43\uff52\uff4f \"x\" : term => `(0)", "macro"),
}


@pytest.mark.parametrize("name", sorted(HOSTILE) + [f"43:{n}" for n in sorted(HOSTILE_43)])
def test_hostile_answer_is_refused_with_one_line(name):
    field, value, word = HOSTILE_43[name[3:]] if name.startswith("43:") else HOSTILE[name]
    with pytest.raises(AnswerError) as info:
        screen({field: value})
    message = str(info.value)
    assert word in message and "\n" not in message and message.startswith(field), message


@pytest.mark.parametrize("name", [n for n in sorted(HOSTILE_43) if n.startswith(
    ("brace_in_plain", "quote_after", "raw_string", "quoted_name"))])
def test_the_lexed_reading_alone_sees_what_follows_a_string(name):
    """The lexer fixes on their own (the raw reading backs them up): the command
    after each string-ending trick is code in the lexed text, as it is for Lean."""
    _, value, word = HOSTILE_43[name]
    assert word in code_text(value)


def test_command_keywords_are_either_allowed_or_refused_never_both():
    from pytest_specbench.benchmarks.verina.screen import ALLOWED_COMMANDS, ENGLISH_COMMANDS, KNOWN_COMMANDS

    assert not ALLOWED_COMMANDS & set(KNOWN_COMMANDS) and ENGLISH_COMMANDS <= set(KNOWN_COMMANDS)
    for keyword in sorted(KNOWN_COMMANDS):
        with pytest.raises(AnswerError, match=re.escape(keyword)):
            screen({"code_aux": f"def f := 0\n{keyword} x"})


@pytest.mark.parametrize("field,value", [
    ("code", 's != "-- not a comment" && s.length > 2'),                # strings are not comments
    ("code", "#[1, 2, 3].size + #v[1].size"),                          # array and vector literals are not commands
    ("code", "let αmacro := 1\nlet x1run_cmd := αmacro\nx1run_cmd"),   # keywords inside Lean names are names
    ("code", "let x' := 1\nx' + 1"),                                   # a quote in a name is no char literal
    ("code", "let h₁' := 1\nlet x1' := h₁'\nx1' + 1"),                 # nor after a digit inside a name
    ("code", "xs.map (fun c => if c = '\"' then 'a' else c)"),          # char literals holding quotes
    ("code", 's!"{n}: {"-".pushn \'x\' 2}"'),                          # interpolation with a nested string
    ("code", 'r#"a "quoted" b"#.length + "{".length'),                  # raw strings; a plain brace
    ("code_aux", "-- Helper: prefix[i] is the product of the prefix sums\ndef twice (n : Nat) : Nat := 2 * n"),
    ("code_aux", "-- System of equations; Parser for the digits\ndef twice (n : Nat) : Nat := 2 * n"),
    ("code_aux", "@[simp, reducible] def twice (n : Nat) : Nat := 2 * n"),
    ("code_aux", "@[simp ←] theorem t : 1 + 1 = 2 := rfl"),
    ("code_aux", "structure P where\n  a : Nat\nderiving BEq, Repr"),  # deriving for a new type is fine
    ("code_aux", "set_option linter.unusedVariables false in\ndef f (x : Nat) : Nat := 0"),
    ("code_aux", "mutual\ndef ev : Nat → Bool\n  | 0 => true\n  | n+1 => od n\ndef od : Nat → Bool\n  | 0 => false\n"
                 "  | n+1 => ev n\nend"),
    ("code_aux", "def f : Nat → Nat\n  | 0 => 0\n  | n+1 => f n\ntermination_by n => n\ndecreasing_by simp_wf; omega"),
    ("proof", "sorry"),                                                # a proof's axioms decide it
    ("proof", "intro x hα\nsimp [List.foldl] at *\nomega"),            # Greek names are ordinary
    ("postcond", "result % 2 = 0 ∧ n%2 = 0 ∧ ∀ i < xs.length, xs[i]! ≤ result"),
    ("code", "xs.foldl (init := 0) fun acc x =>\n\tacc + x"),          # a tab is not a control character here
])
def test_ordinary_answers_pass_the_screen(field, value):
    screen({field: value})


def test_code_text_blanks_comments_strings_and_chars_and_keeps_lines():
    text = 'a -- c\n/- x /- y -/ z -/ b "--" \'"\' c'
    out = code_text(text)
    assert out.count("\n") == text.count("\n") and len(out) == len(text)
    assert "c\n" not in out and "x" not in out and "z" not in out
    assert out.endswith("b \"  \" ' ' c")
    assert code_text('s!"a {unsafe x} b"') == 's!"  {unsafe x}  "'  # interpolation is code
    assert code_text('"a {unsafe x} b"') == '"              "'      # a plain string's braces are text
    assert code_text('r#"x"y"# z') == 'r#"' + " " * 5 + " z"
    assert code_text('s!"{"}"}" t') == 's!"{" "}" t'  # a string inside the braces is a string


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
    refused, seen = [], set()
    for task_id, kind, fields in _reference_fields(load_tasks(root)):
        for name, value in fields.items():
            if (name, value) in seen:  # the task kinds share most fields: each is screened once
                continue
            seen.add((name, value))
            try:
                screen({name: value})
            except AnswerError as exc:
                refused.append(f"{task_id} {kind.name}: {exc}")
    assert len(seen) > 500 and not refused, refused[:5]
