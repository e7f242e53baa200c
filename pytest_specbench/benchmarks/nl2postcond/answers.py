"""A model's answer -> the postcondition text, as upstream's preprocessing reads it.

Upstream (microsoft/nl-2-postcond, EvalPlus half) keeps, of a model's answer, the
code of its fenced block (or the whole text), and evaluates it inside a wrapper::

    def ENTRY(ARGS):
        return_value = ENTRY_original(ARGS)
        import re
        <the postcondition, comment lines kept>
        return return_value

Its preprocessed files carry the postcondition alone (``postcondition_alone``)
and the whole wrapper (``solution``); its qualitative sheet the text with its
comment lines (``postcondition``).  :func:`postcondition_text` accepts each of
these forms and returns the block of statements that runs after the call.
Nothing here runs the answer: it is parsed, never executed (the spec service
runs it, :mod:`pytest_specbench.pyspec`).
"""
from __future__ import annotations

import ast
import re
import textwrap
import warnings

MAX_CHARS = 64_000  # longer answers are refused (one line), never parsed
_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_+-]*)[^\n]*\n(.*?)```", re.S)
_BINDING = re.compile(r"^(?P<indent>[ \t]+)return_value\s*=\s*\w+_original\(.*\)\s*$", re.M)


class AnswerError(ValueError):
    """The answer holds no postcondition (one line: the sample's fault, F)."""


def _fenced(text: str) -> str:
    blocks = [body for lang, body in _FENCE.findall(text) if lang.lower() in ("", "python", "py", "python3")]
    return blocks[-1] if blocks else text


def _from_wrapper(text: str) -> str | None:
    """The statements between ``return_value = ..._original(...)`` and
    ``return return_value`` of upstream's wrapper, dedented; None when the text
    is no such wrapper."""
    match = _BINDING.search(text)
    if not match:
        return None
    indent = match.group("indent")
    body: list[str] = []
    for line in text[match.end():].split("\n")[1:]:
        if line.strip() == "return return_value" and line.startswith(indent):
            break
        if line.strip() and not line.startswith(indent):
            break  # left the wrapper's body
        body.append(line)
    block = textwrap.dedent("\n".join(body)).strip("\n")
    # Upstream's wrapper adds `import re` before every postcondition: it belongs to the
    # wrapper (the evaluation preamble has it), not to the answer.
    lines = block.split("\n")
    while lines and lines[0].strip() in ("", "# Adding imports that might be useful for postconditions", "import re"):
        lines.pop(0)
    return "\n".join(lines)


def postcondition_text(answer: str) -> str:
    """The postcondition block of ``answer`` (a raw model answer, upstream's
    ``postcondition``/``postcondition_alone`` text, or its ``solution`` wrapper).
    Raises :class:`AnswerError` with one line when there is none or it does not parse."""
    if not isinstance(answer, str) or not answer.strip():
        raise AnswerError("the answer is empty")
    if len(answer) > MAX_CHARS:
        raise AnswerError(f"the answer has {len(answer):,} characters (at most {MAX_CHARS:,})")
    if "\x00" in answer or any(0xD800 <= ord(c) <= 0xDFFF for c in answer):
        raise AnswerError("the answer holds a NUL or a lone surrogate")
    text = answer.replace("\r\n", "\n").replace("\r", "\n")
    wrapped = _from_wrapper(text)
    block = wrapped if wrapped is not None else textwrap.dedent(_fenced(text)).strip("\n")
    try:
        with warnings.catch_warnings():
            # an answer's own style ('\d' in a plain string: DeprecationWarning, SyntaxWarning) is not
            # the run's: pytest listed each as a warning of its item, "<unknown>:2" (HumanEval/124)
            warnings.simplefilter("ignore")
            tree = ast.parse(block)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        raise AnswerError(f"the postcondition does not parse: {type(exc).__name__}") from None
    if not any(isinstance(node, ast.Assert) for node in ast.walk(tree)):
        raise AnswerError("the answer has no assert statement")
    return block
