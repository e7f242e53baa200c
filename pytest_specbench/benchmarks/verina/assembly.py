"""Lean files for each check (VERINA Appendix C.5, Figures 10-12).

A file is: imports, the task's auxiliary definitions, then the precondition,
code, postcondition and theorem rendered from the signature (the shape of every
upstream ``task.lean``), each body taken from the candidate or the ground truth,
then the check commands.  Every check command is followed by a sentinel
``#print "specbench:<nonce>:<case>"``; the verdict parser (:mod:`.verdicts`)
attributes Lean's messages to cases by line, and counts a case as run only when
its sentinel was printed (a file that times out or crashes leaves the rest
without sentinels: those cases fail with the reason, they never pass by default).
The nonce is fresh per file content and unknown to the sample.
"""
from __future__ import annotations

import functools
import hashlib
import re
from dataclasses import dataclass, field

from .loader import LeanTemplate, VerinaTask, reassemble
from .values import render

PLAUSIBLE = ("plausible (config := {{ numInst := {budget}, maxSize := 100, numRetries := 20, "
             "randomSeed := some {seed} }})")
HEADER_IMPORTS = ("import Mathlib", "import Plausible")


def ground_truth(task: VerinaTask) -> dict[str, str]:
    """The task's own sections, by field (a fresh dict each call: callers may change it)."""
    return dict(_template_fields(task.template))


@functools.lru_cache(maxsize=512)
def _template_fields(t: LeanTemplate) -> dict[str, str]:
    """Computed once per template: every file of every check of a task asks for them
    (about 20 times per task and kind; VERINA's 189 tasks over its nine kinds took
    ~3.5 CPU s in tests/test_verina_realdata.py, most of it here)."""
    return {
        "task_imports": t.text("import", "task"),
        "imports": "\n".join(x for x in (t.text("import", "solution"), t.text("import", "llm")) if x),
        "task_aux": t.text("task_aux"), "solution_aux": t.text("solution_aux"),
        "precond_aux": t.text("precond_aux"), "precond": t.text("precond"),
        "code_aux": t.text("code_aux"), "code": t.text("code"),
        "postcond_aux": t.text("postcond_aux"), "postcond": t.text("postcond"),
        "proof_aux": t.text("proof_aux"), "proof": t.text("proof"),
    }


def defined_names(text: str) -> set[str]:
    return set(re.findall(r"(?m)^\s*(?:@\[[^\]]*\]\s*)?(?:private\s+|noncomputable\s+|partial\s+)*"
                          r"(?:def|abbrev|theorem|lemma|instance|structure|inductive|class)\s+([^\s:({\[]+)", text))


def _indent(body: str, pad: str = "  ") -> str:
    body = body.strip("\n")
    return "\n".join(pad + ln if ln.strip() else ln for ln in body.split("\n")) if body.strip() else pad + "sorry"


class Signature:
    def __init__(self, sig: dict) -> None:
        self.name = sig["name"]
        self.params = [(p["param_name"], p["param_type"]) for p in sig["parameters"]]
        self.ret = sig["return_type"]

    @property
    def binders(self) -> str:
        return " ".join(f"({n} : {t})" for n, t in self.params)

    @property
    def args(self) -> str:
        return " ".join(f"({n})" for n, _ in self.params)

    def precond(self, body: str) -> str:
        return f"@[reducible, simp]\ndef {self.name}_precond {self.binders} : Prop :=\n{_indent(body)}\n"

    def code(self, body: str) -> str:
        return (f"def {self.name} {self.binders} (h_precond : {self.name}_precond {self.args}) : {self.ret} :=\n"
                f"{_indent(body)}\n")

    def postcond(self, body: str) -> str:
        return (f"@[reducible, simp]\ndef {self.name}_postcond {self.binders} (result: {self.ret}) "
                f"(h_precond : {self.name}_precond {self.args}) : Prop :=\n{_indent(body)}\n")

    def theorem(self, body: str) -> str:
        return (f"theorem {self.name}_spec_satisfied {self.binders} (h_precond : {self.name}_precond {self.args}) :\n"
                f"    {self.name}_postcond {self.args} ({self.name} {self.args} h_precond) h_precond := by\n"
                f"{_indent(body)}\n")


def program(task: VerinaTask, parts: dict[str, str], *, with_code: bool = True, with_postcond: bool = True,
            with_theorem: bool = False, placeholders: bool = False) -> str:
    """The definitions part of a file, bodies from ``parts`` (candidate fields
    merged over the ground truth by the caller)."""
    sig = Signature(task.signature)
    out: list[str] = []
    imports = [ln for ln in (parts.get("task_imports", "") + "\n" + parts.get("imports", "")).splitlines()
               if ln.strip()]
    if not placeholders:
        imports = list(HEADER_IMPORTS) + [ln for ln in imports if ln.strip() not in HEADER_IMPORTS]
    out.append("\n".join(imports) + "\n")
    for aux in ("task_aux", "solution_aux", "precond_aux"):
        if parts.get(aux, "").strip():
            out.append(parts[aux].strip("\n") + "\n")
    out.append(sig.precond(parts["precond"]))
    if with_code:
        if parts.get("code_aux", "").strip():
            out.append(parts["code_aux"].strip("\n") + "\n")
        out.append(sig.code(parts["code"]))
    if with_postcond:
        if parts.get("postcond_aux", "").strip():
            out.append(parts["postcond_aux"].strip("\n") + "\n")
        out.append(sig.postcond(parts["postcond"]))
    if with_theorem:
        if parts.get("proof_aux", "").strip():
            out.append(parts["proof_aux"].strip("\n") + "\n")
        out.append(sig.theorem(parts["proof"]))
    return "\n".join(out)


def keeps_solution_aux(task: VerinaTask, writes: tuple[str, ...], given: tuple[str, ...]) -> bool:
    """Whether the ground truth's ``solution_aux`` stays in a kind's files: when a
    ground-truth part the kind is given uses one of its names (a candidate's own
    helper of the same name would clash otherwise).  The reference answer carries
    it in its first auxiliary field exactly when it does not stay."""
    gt = ground_truth(task)
    kept_text = " ".join(gt[f] for part in given for f in (part, part + "_aux"))
    names = defined_names(gt["solution_aux"])
    if gt["solution_aux"].strip() and not names:
        return True  # only directives such as 'open Std': nothing a candidate could clash with
    return any(re.search(rf"(?<![\w.]){re.escape(n)}(?![\w'])", kept_text) for n in names)


def check_program(task: VerinaTask, parts: dict[str, str], upto: str) -> str:
    """The task's own ``task.lean`` with every section's body from ``parts`` (the
    signatures and attributes stay exactly as the task writes them), cut before
    ``postcond_aux`` (``upto="code"``) or ``proof_aux`` (``"spec"``), or whole
    (``"proof"``); Mathlib and Plausible imported first."""
    header = list(HEADER_IMPORTS)
    imports = [ln for ln in parts.get("imports", "").splitlines() if ln.strip() and ln.strip() not in header]
    replace = {"import:solution": "\n".join(imports), "import:llm": "", "import:test": ""}
    for name in ("task_aux", "solution_aux", "precond_aux", "precond", "code_aux", "code", "postcond_aux",
                 "postcond", "proof_aux", "proof"):
        replace[name] = parts.get(name, "")
    stop = {"code": "postcond_aux", "spec": "proof_aux", "proof": None}[upto]
    return "\n".join(header) + "\n" + reassemble(task.template, replace, stop_before=stop)


def merge(task: VerinaTask, candidate: dict[str, str], writes: tuple[str, ...],
          shown: tuple[str, ...] = ("precond", "code", "postcond")) -> dict[str, str]:
    """Candidate fields over the ground truth.  The ground truth's ``solution_aux``
    stays only where a ground-truth part still in the file uses one of its names
    (a candidate's own helper of the same name would clash otherwise)."""
    parts = ground_truth(task)
    written = {f for part in writes for f in _PART_FIELDS[part]} | {"imports"}
    for f in written:
        parts[f] = candidate.get(f, "")
    if not keeps_solution_aux(task, writes, shown):
        parts["solution_aux"] = ""
    return parts


_PART_FIELDS = {"code": ("code_aux", "code"), "spec": ("precond_aux", "precond", "postcond_aux", "postcond"),
                "proof": ("proof_aux", "proof")}


@dataclass
class Case:
    """One check command in a file, located by line for attribution."""

    key: str  # e.g. "code:3", "precond_sound:0:decide", "postcond_sound:2.1:plausible_neg"
    first_line: int
    last_line: int
    sentinel_line: int


@dataclass
class LeanFile:
    text: str
    nonce: str
    header_lines: int  # lines 1..header_lines are the definitions (compile errors there: cannot compile)
    cases: list[Case] = field(default_factory=list)

    @property
    def digest(self) -> str:
        return hashlib.sha256(self.text.encode("utf-8")).hexdigest()


class FileBuilder:
    def __init__(self, header: str, heartbeats: int) -> None:
        self.header = header.rstrip("\n") + "\n"
        self.heartbeats = heartbeats
        self.commands: list[tuple[str, str]] = []

    def add(self, key: str, command: str) -> None:
        self.commands.append((key, command.rstrip("\n")))

    def build(self) -> LeanFile:
        # The nonce depends on everything in the file, sample included, and on a
        # secret-free salt: the sample cannot know it without knowing its own hash.
        nonce = hashlib.sha256(("specbench-verina\0" + self.header + repr(self.commands)).encode()).hexdigest()[:20]
        lines = self.header.split("\n")[:-1]
        header_lines = len(lines)
        lines.append(f'#print "specbench:{nonce}:header"')
        cases = []
        for key, command in self.commands:
            lines.append("")
            first = len(lines) + 1
            cmd_lines = command.split("\n")
            cmd_lines[0] = f"set_option maxHeartbeats {self.heartbeats} in\n" + cmd_lines[0]
            lines.extend("\n".join(cmd_lines).split("\n"))
            last = len(lines)
            lines.append(f'#print "specbench:{nonce}:{key}"')
            cases.append(Case(key, first, last, len(lines)))
        return LeanFile("\n".join(lines) + "\n", nonce, header_lines, cases)


def call_args(task: VerinaTask, inputs: dict) -> str:
    return " ".join(f"({render(t, inputs[n])})" for n, t in Signature(task.signature).params)


def code_test(task: VerinaTask, i: int, test: dict) -> str:
    sig = Signature(task.signature)
    return f"#guard {sig.name} {call_args(task, test['input'])} (by sorry) == ({render(sig.ret, test['expected'])})"


def spec_relations(task: VerinaTask, check: str) -> list[tuple[str, str]]:
    """(case id, Lean proposition) for one spec check (Appendix C.5): soundness of
    P̂ on positive inputs, completeness of P̂ (¬P̂) on reject inputs, completeness of
    Q̂ on expected outputs, soundness of Q̂ (¬Q̂) on each unexpected output."""
    sig = Signature(task.signature)
    out: list[tuple[str, str]] = []
    if check == "precond_sound":
        for i, t in enumerate(task.tests):
            out.append((str(i), f"{sig.name}_precond {call_args(task, t['input'])}"))
    elif check == "precond_complete":
        for i, t in enumerate(task.reject_inputs):
            out.append((str(i), f"¬ ({sig.name}_precond {call_args(task, t['input'])})"))
    elif check == "postcond_complete":
        for i, t in enumerate(task.tests):
            out.append((str(i), f"{sig.name}_postcond {call_args(task, t['input'])} "
                                f"({render(sig.ret, t['expected'])}) (by sorry)"))
    elif check == "postcond_sound":
        for i, t in enumerate(task.tests):
            for j, u in enumerate(t["unexpected"]):
                out.append((f"{i}.{j}", f"¬ ({sig.name}_postcond {call_args(task, t['input'])} "
                                        f"({render(sig.ret, u)}) (by sorry))"))
    else:
        raise ValueError(check)
    return out


def plausible_tactic(task: VerinaTask, prop: str, budget: int, seed: int, unfold: str) -> str:
    """``unfold``: ``precond`` or ``postcond``, the definition the proposition uses."""
    name = task.signature["name"]
    return (f"example : {prop} := by\n"
            f"  unfold {name}_{unfold}\n"
            f"  simp_all! (config := {{ failIfUnchanged := false }})\n"
            f"  simp (config := {{ failIfUnchanged := false }}) [*]\n"
            f"  {PLAUSIBLE.format(budget=budget, seed=seed)}")
