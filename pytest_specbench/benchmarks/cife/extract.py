"""One policy for turning a raw model answer into the code that is judged.

The judge and the rules see the same text (:func:`extract_code`), so a rule
verdict and a judge verdict are about the same program.  The steps, in order:

1. **Reasoning traces.**  Everything up to the last ``</think>`` is dropped
   (reasoning models such as Qwen3 and Granite-Reasoning, paper §6); a
   ``<think>`` that is never closed (a truncated trace) drops the rest of the
   answer.
2. **Fenced blocks.**  If the answer has Markdown fences (```` ``` ```` or
   ``~~~``), the code is every block tagged ``python``/``py``/``python3`` or
   untagged, in order, joined by a blank line: answers often give the
   implementation, then usage or tests, in separate blocks, and constraints
   may be about either.  Blocks in other languages (``bash``, ``json``,
   ``text``, ...) are left out unless nothing else is fenced.  A fence left
   open at the end (a truncated answer) runs to the end of the text.
3. **DS-1000's ``</code>``.**  DS-1000 prompts end in ``BEGIN SOLUTION
   <code>`` and models often answer ``...code...</code>``: without fences, the
   text before the first ``</code>`` (after a ``<code>`` if one precedes it).
4. Otherwise the whole answer (prose and all: the judge reads it as given;
   AST rules then usually find it does not parse and stay undecided).

Upstream (IBM/CIFE) gives the judge the raw answer inside a ``python`` fence.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

_THINK_CLOSE = re.compile(r"</think\s*>", re.I)
_THINK_OPEN = re.compile(r"<think\s*>", re.I)
_FENCE = re.compile(r"^[ \t]*(`{3,}|~{3,})[ \t]*([\w+#.-]*)[^\n]*\n", re.M)
PYTHON_TAGS = {"", "python", "py", "python3", "py3"}


@dataclass(frozen=True)
class Extraction:
    code: str
    how: str  # which step produced it, for the item's details


def _strip_think(text: str) -> tuple[str, bool]:
    closes = list(_THINK_CLOSE.finditer(text))
    if closes:
        return text[closes[-1].end():], True
    opened = _THINK_OPEN.search(text)
    if opened:
        return text[:opened.start()], True
    return text, False


def _blocks(text: str) -> list[tuple[str, str]]:
    """``(tag, body)`` of each fenced block in order."""
    out = []
    pos = 0
    while True:
        m = _FENCE.search(text, pos)
        if not m:
            return out
        fence, tag = m.group(1), m.group(2).lower()
        close = re.compile(r"^[ \t]*" + re.escape(fence[0]) + "{" + str(len(fence)) + r",}[ \t]*$", re.M)
        end = close.search(text, m.end())
        if end is None:
            out.append((tag, text[m.end():]))
            return out
        out.append((tag, text[m.end():end.start()]))
        pos = end.end()


def extract_code(answer: str) -> Extraction:
    text, thought = _strip_think(answer or "")
    prefix = "think-stripped, " if thought else ""
    blocks = _blocks(text)
    if blocks:
        python = [body for tag, body in blocks if tag in PYTHON_TAGS]
        chosen = python or [body for _, body in blocks]
        code = "\n\n".join(b.strip("\n") for b in chosen)
        kind = "python" if python else "non-python"
        return Extraction(code.strip("\n") + "\n" if code.strip() else "", f"{prefix}{len(chosen)} {kind} fenced block(s)")
    if "</code>" in text:
        head = text.split("</code>", 1)[0]
        if "<code>" in head:
            head = head.rsplit("<code>", 1)[1]
        return Extraction(head.strip("\n") + "\n", f"{prefix}text before </code>")
    stripped = text.strip()
    return Extraction(stripped + "\n" if stripped else "", f"{prefix}whole answer")
