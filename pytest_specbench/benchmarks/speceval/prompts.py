"""Prompts and answer parsing for the four tasks (SpecEval §4.3).

The paper's structure: a system message giving the model its role, few-shot
pairs of example requests and replies (learning the task and the answer
format), then the target task.  The paper's own templates are on its website
(sites.google.com/view/speceval, ref. [6]), which the search tools could not
reach; these templates are ours, with our own few-shot example program.

Answers are read tolerantly: prose around the answer, markdown fences and
``Answer:`` lines are all accepted; an answer with nothing usable is a failed
item with a one-line reason.
"""
from __future__ import annotations

import re

from ..base import Message, Prompt

SYSTEM = ("You are an expert in formal verification of Java programs with the Java Modeling Language (JML). "
          "You read Java code and JML specifications (requires, ensures, maintaining, decreases, \\result, "
          "\\old, \\forall, \\exists, ==>, <==>) and answer exactly in the format asked.")

_EXAMPLE = """public class Max {
    //@ requires a.length > 0;
    //@ ensures (\\forall int k; 0 <= k && k < a.length; a[k] <= \\result);
    public static int max(int[] a) {
        int best = a[0];
        //@ maintaining 1 <= i && i <= a.length;
        //@ maintaining (\\forall int k; 0 <= k && k < i; a[k] <= best);
        //@ decreases a.length - i;
        for (int i = 1; i < a.length; i++) {
            if (a[i] > best) best = a[i];
        }
        return best;
    }
}"""

_EXAMPLE_PLAIN = "\n".join(line for line in _EXAMPLE.splitlines() if "//@" not in line)

INSTRUCTIONS = {
    "judgement": ("Decide whether the JML specification named below is correct for the program, i.e. it always "
                  "holds for every execution in its scope. Reply with one line: `Answer: correct` or "
                  "`Answer: incorrect`."),
    "selection": ("The specification at the marked place (<CANDIDATE>) is missing. Choose the most appropriate "
                  "candidate: correct, and the strongest of the correct ones. Reply with one line: `Answer: X` "
                  "where X is A, B, C or D."),
    "infilling": ("The specification below contains the placeholder <FILL>. Fill it in with a sub-expression so "
                  "that the specification is correct for the program. Reply with the completed specification "
                  "in a ```jml fenced block."),
    "generation": ("Write JML specifications for the program: pre- and postconditions (requires/ensures) for "
                   "every method and loop invariants (maintaining, decreases) for every loop. Reply with the "
                   "whole program, annotated with `//@` comments, in one ```java fenced block, without "
                   "changing the code."),
}


def _request(kind: str, program: str, data: dict) -> str:
    parts = [INSTRUCTIONS[kind], "", "```java", program, "```"]
    if kind == "judgement":
        parts += ["", f"Specification (line {data['line']}): `{data['candidate']}`"]
    elif kind == "selection":
        parts += ["", f"Candidates for <CANDIDATE> (line {data['line']}):"]
        parts += [f"{'ABCD'[i]}. `{c}`" for i, c in enumerate(data["candidates"])]
    elif kind == "infilling":
        parts += ["", f"Specification to complete (line {data['line']}): `{data['masked']}`"]
    return "\n".join(parts)


def _shots(kind: str) -> list[tuple[str, str]]:
    if kind == "judgement":
        wrong = _EXAMPLE.replace("a[k] <= \\result", "a[k] < \\result")
        return [(_request(kind, _EXAMPLE, {"line": 3, "candidate":
                 "ensures (\\forall int k; 0 <= k && k < a.length; a[k] <= \\result);"}), "Answer: correct"),
                (_request(kind, wrong, {"line": 3, "candidate":
                 "ensures (\\forall int k; 0 <= k && k < a.length; a[k] < \\result);"}), "Answer: incorrect")]
    if kind == "selection":
        shown = _EXAMPLE.replace("(\\forall int k; 0 <= k && k < a.length; a[k] <= \\result)", "<CANDIDATE>")
        return [(_request(kind, shown, {"line": 3, "candidates": [
            "ensures true;", "ensures (\\exists int k; 0 <= k && k < a.length; a[k] <= \\result);",
            "ensures (\\forall int k; 0 <= k && k < a.length; a[k] <= \\result);",
            "ensures (\\forall int k; 0 <= k && k < a.length; a[k] >= \\result);"]}), "Answer: C")]
    if kind == "infilling":
        masked = "maintaining (\\forall int k; 0 <= k && k < i; a[<FILL>] <= best);"
        shown = _EXAMPLE.replace("maintaining (\\forall int k; 0 <= k && k < i; a[k] <= best);", masked)
        return [(_request(kind, shown, {"line": 7, "masked": masked}),
                 "```jml\nmaintaining (\\forall int k; 0 <= k && k < i; a[k] <= best);\n```")]
    return [(_request(kind, _EXAMPLE_PLAIN, {}), f"```java\n{_EXAMPLE}\n```")]


def build_prompt(kind: str, program: str, data: dict) -> Prompt:
    messages = [Message("system", SYSTEM)]
    for request, reply in _shots(kind):
        messages += [Message("user", request), Message("assistant", reply)]
    messages.append(Message("user", _request(kind, program, data)))
    return Prompt(tuple(messages), parameters={"temperature": 0.0})


# --- answers -------------------------------------------------------------
_FENCE = re.compile(r"```[ \t]*([A-Za-z]*)[^\n]*\n(.*?)```", re.S)


def fenced(answer: str, prefer: tuple[str, ...] = ()) -> str | None:
    blocks = _FENCE.findall(answer)
    for lang, body in blocks:
        if lang.lower() in prefer:
            return body.strip()
    return blocks[0][1].strip() if blocks else None


def parse_judgement(answer: str) -> bool | None:
    """True (correct) / False (incorrect) / None (no verdict found)."""
    text = answer.lower()
    m = re.findall(r"answer\s*[:=]?\s*\**\s*`?(incorrect|not correct|correct|true|false|yes|no)\b", text)
    words = m or re.findall(r"\b(incorrect|not correct|correct|wrong|invalid|valid|true|false)\b", text)
    if not words:
        return None
    return words[-1] in ("correct", "true", "yes", "valid")


def parse_selection(answer: str, candidates: list[str]) -> int | None:
    m = re.findall(r"answer\s*[:=]?\s*\**\s*\(?([A-Da-d])\b", answer, re.I)
    if m:
        return "abcd".index(m[-1].lower())
    letters = re.findall(r"(?<![A-Za-z])\(?([A-D])[).:]?(?![A-Za-z])", answer)
    if letters:
        return "ABCD".index(letters[-1])
    squashed = re.sub(r"\s+", "", answer)
    hits = [i for i, c in enumerate(candidates) if re.sub(r"\s+", "", c) in squashed]
    return hits[0] if len(hits) == 1 else None


def parse_infilling(answer: str, masked: str) -> str | None:
    """The filled sub-expression: from a completed specification (matched
    around the placeholder) or a bare fill."""
    body = fenced(answer, ("jml", "java")) or answer.strip()
    m = re.findall(r"`([^`\n]+)`", body) if "`" in body else []
    candidates = ([body] + m) if body else m
    pre, _, post = masked.partition("<FILL>")
    squash = lambda s: re.sub(r"\s+", "", s)  # noqa: E731
    for cand in candidates:
        for line in [cand] + cand.splitlines():
            line = re.sub(r"^\s*(//@|/\*@|@)\s*", "", line).strip()
            s = squash(line)
            p, q = squash(pre), squash(post)
            if s.startswith(p) and s.endswith(q) and len(s) >= len(p) + len(q):
                return s[len(p):len(s) - len(q)] if q else s[len(p):]
    # a bare fill: the last non-empty line, without 'Answer:'
    lines = [ln.strip() for ln in body.splitlines() if ln.strip()]
    if not lines:
        return None
    fill = re.sub(r"^answer\s*[:=]\s*", "", lines[-1], flags=re.I).strip("` ")
    return fill or None


def parse_generation(answer: str) -> str | None:
    body = fenced(answer, ("java",))
    if body is None and "class" in answer:
        body = answer[answer.index("class") - 0:]
        body = answer[max(0, answer.rfind("\n", 0, answer.index("class")) + 1):]
    return body
