"""Programs and the four SpecEval tasks built from them (§3.2), deterministic
from a seed.

A program is read from the SpecGenBench layout (``oracle/<Name>/<Name>.java``
with ground-truth JML, ``common/`` plain, ``daikon/`` with a ``main()`` of
concrete calls: the test inputs).  Tasks are built on the *original* program,
then carried through a perturbation by rewriting the program with the task's
specification text already in place: every JML comment of the original gets a
sentinel ``/*#S<k>*/`` in front of it, the perturbation rewrites program and
comments together (renaming variables in the candidate as in the program), and
the sentinel finds the comment again afterwards.  So the perturbed task asks the
same question (§3.3.1: "task prompts involving specifications have to be
mutated as well").
"""
from __future__ import annotations

import random
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from .jmlspec import (ARITHMETIC, JAVA_WORDS, LOGICAL, RELATIONAL, Clause, SpecBlock, normalize, spec_blocks,
                      strip_jml, tokenize)
from .options import TASKS  # noqa: F401 - the four task kinds, declared with the options
from .perturb import perturb

MUTABLE = ("requires", "ensures", "maintaining", "loop_invariant", "decreases", "decreasing")
SELECTABLE = ("requires", "ensures", "maintaining", "loop_invariant")
# "pre-defined simple specifications that are too weak to be incorrect" (§3.2.2)
TRIVIAL = ("true", "!false", "0 == 0", "true || false", "1 <= 1")
PLACEHOLDER = "<FILL>"
CANDIDATE = "<CANDIDATE>"
_SENTINEL = re.compile(r"/\*#S(\d+)\*/")


@dataclass(frozen=True)
class Program:
    name: str
    oracle: Path
    common: Path | None
    daikon: Path | None

    @property
    def source(self) -> str:
        return _read(self.oracle)


@lru_cache(maxsize=512)
def _read(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def load_programs(root: Path) -> list[Program]:
    """The programs under a SpecGenBench root (``oracle/`` required)."""
    oracle = root / "oracle"
    out = []
    for d in sorted(p for p in oracle.iterdir() if p.is_dir()):
        java = d / f"{d.name}.java"
        if not java.is_file():
            continue
        common = root / "common" / d.name / f"{d.name}.java"
        daikon = root / "daikon" / d.name / f"{d.name}.java"
        out.append(Program(d.name, java, common if common.is_file() else None, daikon if daikon.is_file() else None))
    return out


# --- tagging -----------------------------------------------------------------
def tag(source: str) -> tuple[str, list[SpecBlock]]:
    """The source with a sentinel before each JML comment, and its blocks (whose
    offsets refer to the tagged source)."""
    blocks = spec_blocks(source)
    out = source
    for k, b in sorted(enumerate(blocks), key=lambda kb: kb[1].start, reverse=True):
        out = out[:_char(source, b.start)] + f"/*#S{k}*/" + out[_char(source, b.start):]
    return out, spec_blocks(out)


def _char(source: str, byte_offset: int) -> int:
    return len(source.encode("utf-8")[:byte_offset].decode("utf-8"))


def untag(source: str) -> str:
    return _SENTINEL.sub("", source)


def blocks_by_sentinel(tagged: str) -> dict[int, SpecBlock]:
    src = tagged.encode("utf-8")
    out = {}
    starts = {b.start: b for b in spec_blocks(tagged)}
    for m in _SENTINEL.finditer(tagged):
        end = len(tagged[:m.end()].encode("utf-8"))
        if end in starts:
            out[int(m.group(1))] = starts[end]
    del src
    return out


def replace_expr(tagged: str, clause: Clause, new_expr: str) -> str:
    b = tagged.encode("utf-8")
    return (b[:clause.start] + new_expr.encode("utf-8") + b[clause.end:]).decode("utf-8")


@dataclass(frozen=True)
class ClauseRef:
    block: int  # sentinel id
    index: int  # clause index within the block


def clause_at(tagged: str, ref: ClauseRef) -> Clause:
    return blocks_by_sentinel(tagged)[ref.block].clauses[ref.index]


def line_of(tagged: str, clause: Clause) -> int:
    return tagged.encode("utf-8")[:clause.start].count(b"\n") + 1


# --- mutation (§3.2.1) -------------------------------------------------------
def _peers(name: str, variables: tuple[str, ...], types: dict) -> list[str]:
    """Other variables in scope of the same declared type (so that a mutant is
    still a well-typed specification, as a hand-made wrong spec would be)."""
    t = types.get(name)
    if t is None or t == "?":
        return []
    return [v for v in variables if v != name and types.get(v) == t]


def components(expr: str, variables: tuple[str, ...], types: dict | None = None) -> list[tuple[int, int, str]]:
    """(start, end, kind) of each mutable component: a variable in scope (with
    another variable of its type in scope), an operator, a quantifier."""
    types = types or {}
    toks = tokenize(expr)
    out = []
    for i, t in enumerate(toks):
        prev = toks[i - 1].text if i else ""
        if t.kind == "ident" and t.text in variables and prev != "." and _peers(t.text, variables, types):
            out.append((t.start, t.end, "variable"))
        elif t.kind == "op" and (t.text in RELATIONAL or t.text in LOGICAL or
                                 (t.text in ARITHMETIC and prev not in ("", "(", "[", ",") and
                                  toks[i - 1].kind != "op" or t.text in ARITHMETIC and toks[i - 1].text in (")", "]"))):
            out.append((t.start, t.end, "operator"))
        elif t.kind == "bskw" and t.text in ("\\forall", "\\exists"):
            out.append((t.start, t.end, "quantifier"))
    return out


def _replacement(kind: str, old: str, variables: tuple[str, ...], types: dict, rng: random.Random) -> str:
    if kind == "variable":
        return rng.choice(_peers(old, variables, types))
    if kind == "quantifier":
        return "\\exists" if old == "\\forall" else "\\forall"
    # ==/!= apply to any type, <,<=,>,>= to numbers only: swap within each group
    for group in (("==", "!="), ("<", "<=", ">", ">="), LOGICAL, ARITHMETIC):
        if old in group:
            return rng.choice([o for o in group if o != old])
    return old


def mutate(expr: str, variables: tuple[str, ...], rng: random.Random, types: dict | None = None) -> str | None:
    """Each component modified with probability 0.5, at least one (§3.2.1); None
    when the clause has no component or every try reproduces it."""
    types = types or {}
    comps = components(expr, variables, types)
    if not comps:
        return None
    for _ in range(10):
        chosen = [c for c in comps if rng.random() < 0.5] or [rng.choice(comps)]
        out = expr
        for s, e, kind in sorted(chosen, reverse=True):
            out = out[:s] + _replacement(kind, expr[s:e], variables, types, rng) + out[e:]
        if normalize(out) != normalize(expr):
            return out
    return None


# --- masking (§3.2.3) --------------------------------------------------------
def maskable(expr: str, variables: tuple[str, ...]) -> list[tuple[int, int, str]]:
    """Array indices, variable and method names, quantifier ranges."""
    toks = tokenize(expr)
    out = []
    for i, t in enumerate(toks):
        prev = toks[i - 1].text if i else ""
        if t.kind == "ident" and t.text not in JAVA_WORDS and prev != "." and not (
                i + 1 < len(toks) and toks[i + 1].kind == "ident") and (
                t.text in variables or (i + 1 < len(toks) and toks[i + 1].text == "(")):
            out.append((t.start, t.end, "name"))
        if t.text == "[":
            depth, j = 0, i
            while j < len(toks):
                depth += toks[j].text == "["
                depth -= toks[j].text == "]"
                if depth == 0:
                    break
                j += 1
            if j < len(toks) and j > i + 1:
                out.append((toks[i + 1].start, toks[j - 1].end, "array-index"))
        if t.kind == "bskw" and t.text in ("\\forall", "\\exists"):
            semis = []
            depth = 0
            for u in toks[i + 1:]:
                depth += u.text in "([{" and len(u.text) == 1
                depth -= u.text in ")]}" and len(u.text) == 1
                if depth < 0:
                    break
                if u.text == ";" and depth == 0:
                    semis.append(u)
                    if len(semis) == 2:
                        break
            if len(semis) == 2:
                rng_toks = [u for u in toks if semis[0].end <= u.start and u.end <= semis[1].start]
                if rng_toks:
                    out.append((rng_toks[0].start, rng_toks[-1].end, "quantifier-range"))
    return out


# --- task construction -------------------------------------------------------
def _refs(blocks: list[SpecBlock], keywords: tuple[str, ...]) -> list[tuple[ClauseRef, Clause, SpecBlock]]:
    return [(ClauseRef(k, i), c, b) for k, b in enumerate(blocks) for i, c in enumerate(b.clauses)
            if c.keyword in keywords]


def build(program_name: str, source: str, task: str, seed: int) -> dict | None:
    """The task on the original program: a JSON-able plan (which clause, which
    candidates), or None when the program offers nothing for it."""
    rng = random.Random(f"{seed}:{program_name}:{task}")
    tagged, blocks = tag(source)
    if task == "generation":
        return {"kind": "generation"} if _refs(blocks, MUTABLE) else None
    if task == "judgement":
        options = [(r, c, b) for r, c, b in _refs(blocks, MUTABLE) if components(c.expr, b.variables, b.types)]
        if not options:
            return None
        ref, clause, block = rng.choice(options)
        correct = rng.random() < 0.5
        cand = clause.expr if correct else mutate(clause.expr, block.variables, rng, block.types)
        if cand is None:
            cand, correct = clause.expr, True
        return {"kind": "judgement", "ref": [ref.block, ref.index], "candidate": cand, "label": correct}
    if task == "selection":
        options = [(r, c, b) for r, c, b in _refs(blocks, SELECTABLE) if components(c.expr, b.variables, b.types)]
        if not options:
            return None
        ref, clause, block = rng.choice(options)
        cands = [clause.expr]
        seen = {normalize(clause.expr)}
        trivial = [t for t in TRIVIAL]
        rng.shuffle(trivial)
        while len(cands) < 4:
            pick = None
            if rng.random() < 0.5 or not trivial:
                for _ in range(5):
                    m = mutate(clause.expr, block.variables, rng, block.types)
                    if m is not None and normalize(m) not in seen:
                        pick = m
                        break
            if pick is None:
                pick = trivial.pop() if trivial else None
            if pick is None:
                return None
            seen.add(normalize(pick))
            cands.append(pick)
        order = list(range(4))
        rng.shuffle(order)
        return {"kind": "selection", "ref": [ref.block, ref.index], "candidates": [cands[i] for i in order],
                "answer": order.index(0)}
    if task == "infilling":
        options = [(r, c, b, m) for r, c, b in _refs(blocks, MUTABLE) for m in maskable(c.expr, b.variables)]
        if not options:
            return None
        ref, clause, block, (s, e, kind) = rng.choice(options)
        return {"kind": "infilling", "ref": [ref.block, ref.index],
                "masked": clause.expr[:s] + PLACEHOLDER + clause.expr[e:], "component": kind}
    raise ValueError(f"unknown task {task!r}")


@dataclass(frozen=True)
class Instance:
    """One task under one perturbation: what the prompt shows and the answer."""

    program: str  # the program shown (specs as the task wants them), sentinels removed
    data: dict


def instantiate(source: str, plan: dict, perturbation: str, seed: int) -> Instance:
    """Carry a task plan through a perturbation (see the module docstring)."""
    tagged, _ = tag(source)

    def variant(expr: str | None) -> tuple[str, Clause | None]:
        """The perturbed tagged source with the task clause's text set to ``expr``."""
        src = tagged
        if expr is not None:
            src = replace_expr(tagged, clause_at(tagged, ClauseRef(*plan["ref"])), expr)
        out = perturb(src, perturbation, seed).source
        return out, (clause_at(out, ClauseRef(*plan["ref"])) if expr is not None else None)

    kind = plan["kind"]
    applied = perturb(tagged, perturbation, seed).applied
    if kind == "generation":
        full, _ = variant(None)
        gt = untag(full)
        return Instance(strip_jml(gt), {"kind": kind, "ground_truth": gt, "applied": applied})
    if kind == "judgement":
        shown, clause = variant(plan["candidate"])
        return Instance(untag(shown), {"kind": kind, "candidate": clause.render(), "line": line_of(shown, clause),
                                       "label": plan["label"], "applied": applied})
    if kind == "selection":
        rendered = []
        for expr in plan["candidates"]:
            _, clause = variant(expr)
            rendered.append(clause.render())
        shown, clause = variant(CANDIDATE)
        return Instance(untag(shown), {"kind": kind, "candidates": rendered, "answer": plan["answer"],
                                       "line": line_of(shown, clause), "applied": applied})
    if kind == "infilling":
        gt_src, gt = variant(clause_at(tagged, ClauseRef(*plan["ref"])).expr)
        shown, masked = variant(plan["masked"])
        pre, _, post = masked.expr.partition(PLACEHOLDER)
        answer = gt.expr[len(pre):len(gt.expr) - len(post)]
        return Instance(untag(shown), {"kind": kind, "masked": masked.render(), "answer": answer,
                                       "ground_truth": gt.render(), "line": line_of(shown, masked),
                                       "component": plan["component"], "applied": applied,
                                       "full_program": untag(gt_src)})
    raise ValueError(kind)
