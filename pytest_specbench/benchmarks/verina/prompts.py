"""Prompts (VERINA Appendix C.3): the instructions of Prompts 1-3, 2-shot.

Upstream prompts through DSPy: input fields ``task_description`` and
``task_template`` (the Lean template with ``{{field}}`` placeholders for what
the model writes and the ground truth it is given), output fields in
``[[ ## name ## ]]`` blocks.  The two examples are fixed tasks
(``verina_basic_15``, ``verina_basic_44`` upstream; never scored), answered with
their ground truth in the same format.
"""
from __future__ import annotations

from .assembly import ground_truth, keeps_solution_aux, merge, program
from .kinds import Kind
from .loader import VerinaTask

_COMMON = """The generated {what} should:
- Be well-documented with comments if necessary
- Follow Lean 4 best practices and use appropriate Lean 4 syntax and features
- DO NOT use Lean 3 syntax or features
- DO NOT import Std or Init
{extra}
Hint:
- Use `a[i]!` instead of `a[i]` when `a` is an array or a list when necessary"""

INSTRUCTIONS = {
    "code": ("You are an expert in Lean 4 programming and theorem proving. Please generate a Lean 4 program "
             "that finishes the task described in `task_description` using the template provided in "
             "`task_template`. The `task_template` is a Lean 4 code snippet that contains placeholders "
             "(wrapped with `{{}}`) for the code to be generated.",
             _COMMON.format(what="program", extra="")),
    "spec": ("You are an expert in Lean 4 programming and theorem proving. Please generate a Lean 4 "
             "specification that constrains the program implementation using the template provided in "
             "`task_template`. The `task_template` is a Lean 4 code snippet that contains placeholders "
             "(wrapped with `{{}}`) for the spec to be generated. The precondition should be as permissive "
             "as possible, and the postcondition should model a sound and complete relationship between input "
             "and output of the program based on the `task_description`.",
             _COMMON.format(what="specification", extra=(
                 "- Only use `precond_aux` or `postcond_aux` when you cannot express the precondition or "
                 "postcondition in the main body of the specification\n"
                 "- add `@[reducible, simp]` attribute to the definitions in `precond_aux` or `postcond_aux`\n"))),
    "proof": ("You are an expert in Lean 4 programming and theorem proving. Please generate a Lean 4 proof "
              "that the program satisfies the specification, using the template provided in `task_template`. "
              "The `task_template` is a Lean 4 code snippet that contains placeholders (wrapped with `{{}}`) "
              "for the proof to be generated.",
              _COMMON.format(what="proof", extra="- DO NOT use `sorry`, `admit` or new axioms\n")),
}

FIELD_DOC = {
    "imports": "Imports needed for the generated parts. Keep it empty if not needed.",
    "code_aux": "Auxiliary definitions for `code`. Keep it empty if not needed.",
    "code": "Generated Lean 4 code following the template signature and completing the task.",
    "precond_aux": "Auxiliary definitions for `precond`. Keep it empty if not needed.",
    "precond": "Generated Lean 4 code specifying the precondition.",
    "postcond_aux": "Auxiliary definitions for `postcond`. Keep it empty if not needed.",
    "postcond": "Generated Lean 4 code specifying the postcondition.",
    "proof_aux": "Auxiliary definitions and lemmas for `proof`. Keep it empty if not needed.",
    "proof": "Generated Lean 4 proof (the tactics after `by`).",
}


def template(task: VerinaTask, kind: Kind) -> str:
    """The ``task_template``: placeholders for what the model writes, the ground
    truth it is given, nothing of what it is not."""
    parts = ground_truth(task)
    writes = set(kind.writes)
    for f in kind.fields:
        parts[f] = "{{" + f + "}}"
    if "code" not in writes and "code" not in kind.given:
        parts["code_aux"] = ""
    if "spec" not in writes and "precond" not in kind.given:
        parts["precond_aux"] = ""
    if "spec" not in writes and "postcond" not in kind.given:
        parts["postcond_aux"] = ""
    merged = merge(task, {f: parts[f] for f in kind.fields}, kind.writes, kind.given)
    merged.update({f: parts[f] for f in kind.fields})
    if "proof" not in writes:
        merged["proof_aux"] = ""
    show_code = "code" in writes or "code" in kind.given
    show_post = "spec" in writes or "postcond" in kind.given
    if not show_code:
        merged["code"] = "-- (not shown)"
    text = program(task, merged, with_code=show_code, with_postcond=show_post,
                   with_theorem="proof" in writes, placeholders=True)
    return text


def answer_text(fields: dict[str, str]) -> str:
    return "\n\n".join(f"[[ ## {name} ## ]]\n{value}" for name, value in fields.items()) + "\n\n[[ ## completed ## ]]"


def reference_fields(task: VerinaTask, kind: Kind) -> dict[str, str]:
    """The ground truth as an answer.  ``solution_aux`` (the ground truth's shared
    helpers) goes into the first auxiliary field the model writes."""
    gt = ground_truth(task)
    fields = {f: gt[f] for f in kind.fields}
    if gt["solution_aux"].strip() and not keeps_solution_aux(task, kind.writes, kind.given):
        for aux in ("precond_aux", "code_aux", "postcond_aux", "proof_aux"):
            if aux in fields:
                fields[aux] = (gt["solution_aux"] + "\n\n" + fields[aux]).strip("\n")
                break
    return fields


def user_block(task: VerinaTask, kind: Kind) -> str:
    return (f"[[ ## task_description ## ]]\n{task.description.strip()}\n\n"
            f"[[ ## task_template ## ]]\n{template(task, kind)}")


def render(task: VerinaTask, kind: Kind, examples: list[VerinaTask]) -> tuple[str, str]:
    """(system, user) messages: instructions and fields, then the two examples
    answered, then the task."""
    head, rules = INSTRUCTIONS["proof" if kind.writes == ("proof",) else
                               "spec" if kind.writes == ("spec",) else "code"]
    if len(kind.writes) > 1:  # combinations (§4.2): the instructions of each part
        head = " ".join(INSTRUCTIONS[p][0] for p in kind.writes)
    fields = "\n".join(f"- `{f}`: {FIELD_DOC[f]}" for f in kind.fields)
    system = (f"{head}\n\n{rules}\n\nInput fields:\n- `task_description`\n- `task_template`\n\n"
              f"Output fields:\n{fields}\n\nAnswer with each output field under its own header, "
              f"`[[ ## field ## ]]`, in this order, then `[[ ## completed ## ]]`.")
    shots = []
    for n, ex in enumerate(examples, 1):
        shots.append(f"Example {n}:\n{user_block(ex, kind)}\n\n{answer_text(reference_fields(ex, kind))}")
    user = ("\n\n---\n\n".join(shots) + "\n\n---\n\nNow the task:\n" if shots else "") + user_block(task, kind)
    return system, user
