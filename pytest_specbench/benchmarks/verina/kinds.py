"""The task kinds (``--verina-task``): what a model writes, what it is given, and
which checks score it (VERINA §4.1 foundational tasks, §4.2 combinations,
Figure 9 ablations)."""
from __future__ import annotations

from dataclasses import dataclass

SPEC_CHECKS = ("precond_sound", "precond_complete", "postcond_sound", "postcond_complete")


@dataclass(frozen=True)
class Kind:
    name: str
    writes: tuple[str, ...]  # parts the model writes: code, spec, proof
    given: tuple[str, ...]  # ground-truth parts shown in the template
    doc: str

    @property
    def fields(self) -> tuple[str, ...]:
        out = ["imports"]
        for part in self.writes:
            out += {"code": ["code_aux", "code"],
                    "spec": ["precond_aux", "precond", "postcond_aux", "postcond"],
                    "proof": ["proof_aux", "proof"]}[part]
        return tuple(out)

    @property
    def checks(self) -> tuple[str, ...]:
        out: list[str] = []
        if "code" in self.writes:
            out.append("code")
        if "spec" in self.writes:
            out += SPEC_CHECKS
        if "proof" in self.writes:
            out.append("proof")
        return tuple(out)


KINDS = {k.name: k for k in (
    Kind("codegen", ("code",), ("precond",), "CodeGen (§4.1): code from the description and signature"),
    Kind("codegen_with_spec", ("code",), ("precond", "postcond"), "CodeGen given the ground-truth spec (Figure 9)"),
    Kind("specgen", ("spec",), (), "SpecGen (§4.1): pre- and postcondition from the description"),
    Kind("specgen_with_code", ("spec",), ("code",), "SpecGen given the ground-truth code (Figure 9)"),
    Kind("proofgen", ("proof",), ("precond", "code", "postcond"), "ProofGen (§4.1): proof of the ground-truth spec"),
    Kind("code_spec", ("code", "spec"), (), "Code & Spec (§4.2)"),
    Kind("code_proof", ("code", "proof"), ("precond", "postcond"), "spec-guided code + proof (§4.2)"),
    Kind("spec_proof", ("spec", "proof"), ("code",), "spec inference from code: spec + proof (§4.2)"),
    Kind("code_spec_proof", ("code", "spec", "proof"), (), "end-to-end code + spec + proof (§4.2)"),
)}
