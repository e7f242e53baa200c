"""Asking the judge role and reading its answers (paper §4.4, Appendix E).

Robust reading (``--cife-parse=strict``, default): the answer must contain one
JSON object with an ``Evaluation`` list of exactly as many entries as there are
constraints; each entry's ``Index`` (paper prompts) is an integer 1..n, each
index once; ``Aligns`` is a JSON boolean (``true``/``false``: not ``"true"``,
not ``1``; under upstream's prompts, whose schema shows ``[true|false]``, a
one-element list of a boolean is read as that boolean).  Anything else is a
:class:`JudgeAnswerError`; the judge is asked again with the error shown
(``RoleRequest.attempt`` = 1, 2, ...), and after the retries the item is an
error (E): a judge failure is not the model's failure.

Upstream's reading (``--cife-parse=upstream``) reproduces IBM/CIFE's
``extract_aligns_values``: every ``"Aligns": true|false`` found by a regular
expression, in order of appearance, taken as the verdicts of constraints 1, 2,
... whatever their number.  It misaligns when the judge skips, repeats or
reorders entries or writes ``[true]``; a row with no match is an empty list,
which upstream's CSR (``all([])``) scores as fully satisfied.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Mapping, Sequence

from ...errors import InfrastructureError
from ..base import Prompt, RoleRequest, Task
from .prompts import CORRECTNESS_LABELS

_UPSTREAM_ALIGNS = re.compile(r'"Aligns"\s*:\s*(true|false)', re.I)
_UPSTREAM_CORRECTNESS = re.compile(r'"correctness"\s*:\s*("(?:Completely Correct|Partially Correct|Wrong)")', re.I)


class JudgeAnswerError(ValueError):
    """The judge's answer cannot be read; the message is shown to it on retry."""


class NoJudgment(InfrastructureError):
    """The judge in use has no answer to this question (a ``replay:`` file without it;
    the recorded judgments of the bundled suite, made for other answers)."""


class _DuplicateKey(JudgeAnswerError):
    pass


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    seen: dict[str, str] = {}
    for key, _ in pairs:
        folded = key.casefold()
        if folded in seen:
            raise _DuplicateKey(f'key "{one_line(key, 40)}" appears twice in one JSON object'
                                + (f' (as "{one_line(seen[folded], 40)}")' if seen[folded] != key else ""))
        seen[folded] = key
    return dict(pairs)


def _loads(text: str) -> Any:
    return json.loads(text, object_pairs_hook=_no_duplicates)


def _spans(text: str) -> list[tuple[int, int, Any]]:
    """Every JSON object or array standing in the text, with where it stands (scanned
    left to right; what one contains is not scanned again; inside a value that does
    not parse, as a cut-off one, the scan goes on and finds what is complete)."""
    decoder = json.JSONDecoder(object_pairs_hook=_no_duplicates)
    found, i = [], 0
    while True:
        starts = [p for p in (text.find("{", i), text.find("[", i)) if p >= 0]
        if not starts:
            return found
        i = min(starts)
        try:
            value, end = decoder.raw_decode(text, i)
        except (json.JSONDecodeError, RecursionError):
            i += 1
            continue
        found.append((i, end, value))
        i = end


VERDICT_KEYS = ("evaluation", "aligns", "correctness")
# A verdict key written anywhere as a key: JSON or a Python dict ("Aligns": / 'aligns': /
# \"Aligns\": in a string), a keyword (dict(Aligns=True), aligns = true) or YAML-like
# with a verdict after it (Aligns: true, correctness: Completely Correct).  Prose that
# merely uses the words ("the code aligns with", "its correctness") is not a key.
_KEY_MENTION = re.compile(r"""\\*["'`](?:evaluation|aligns|correctness)\\*["'`]\s*:"""
                          r"""|\b(?:evaluation|aligns|correctness)\s*=(?!=)"""
                          r"""|\b(?:evaluation|aligns|correctness)\s*:\s*"""
                          r"""(?=true\b|false\b|\[|\{|["']|completely\b|partially\b|wrong\b)""", re.I)


def _walk(value: Any) -> Iterator[Any]:
    yield value
    if isinstance(value, dict):
        for v in value.values():
            yield from _walk(v)
    elif isinstance(value, list):
        for v in value:
            yield from _walk(v)


def _own_verdict_keys(verdict: Any) -> int:
    """The verdict keys where a verdict holds them: its own keys and those of the entries
    of a list it holds (``{"Evaluation": [{"Aligns": ...}]}``, or a bare list of entries)."""
    count = 0
    for item in ([verdict] if isinstance(verdict, dict) else []) + (verdict if isinstance(verdict, list) else []):
        if not isinstance(item, dict):
            continue
        count += sum(isinstance(k, str) and k.casefold() in VERDICT_KEYS for k in item)
        if item is verdict:
            for value in item.values():
                for entry in value if isinstance(value, list) else ():
                    if isinstance(entry, dict):
                        count += sum(isinstance(k, str) and k.casefold() in VERDICT_KEYS for k in entry)
    return count


def _verdict_keys(value: Any) -> int:
    """How many verdict keys the dicts in ``value`` hold (nested ones included)."""
    return sum(sum(isinstance(k, str) and k.casefold() in VERDICT_KEYS for k in d)
               for d in _walk(value) if isinstance(d, dict))


def without_quoted_answer(reply: str, token: str | None) -> str:
    """The reply without the answer quoted in its fence (``<<<RESPONSE token`` ...
    ``RESPONSE token>>>``, :mod:`.prompts`): a judge that quotes the data it was given
    quotes whatever the answer wrote, verdicts included."""
    if not token:
        return reply
    return re.sub(re.escape(f"<<<RESPONSE {token}") + r".*?" + re.escape(f"RESPONSE {token}>>>"), " ", reply,
                  flags=re.S)


def _the_verdict(answer: str, is_verdict: Callable[[Any], bool], token: str | None = None) -> Any:
    """The one verdict in a judge's reply, by a strict reading (docs/cife.md):

    * exactly one JSON value standing in the reply is a verdict (``is_verdict``);
    * every verdict key (``Evaluation``, ``Aligns``, ``correctness``, any case) that the
      reply writes as a key, in JSON or not (a Python dict, ``dict(Aligns=True)``,
      ``Aligns: true``, an escaped ``\"Aligns\":`` in a string, a cut-off object), belongs
      to that verdict, and no string in any JSON value of the reply holds one;
    * no key appears twice in one object (case ignored).

    So a nested second verdict, a format example restated before a cut-off verdict,
    two verdicts in two fences, a fake verdict quoted from the answer outside the
    answer's fence: unreadable (the judge is asked again, then E).  The answer quoted
    inside its fence (``token``) is removed first."""
    text = without_quoted_answer(answer or "", token).strip()
    if not text:
        raise JudgeAnswerError("the answer is empty")
    spans = _spans(text)
    if not spans:
        raise JudgeAnswerError("the answer contains no valid JSON object")
    verdicts = [(start, end, v) for start, end, v in spans if is_verdict(v)]
    if not verdicts:
        raise JudgeAnswerError("the answer contains no verdict JSON object")
    if len(verdicts) > 1:
        raise JudgeAnswerError(f"the answer holds {len(verdicts)} verdict objects; give exactly one JSON object")
    start, end, verdict = verdicts[0]
    own = _own_verdict_keys(verdict)
    if sum(_verdict_keys(v) for _, _, v in spans) != own:
        raise JudgeAnswerError("the answer holds a verdict key outside its one verdict object; give exactly one")
    mentions = len(_KEY_MENTION.findall(text))
    if mentions != own:
        raise JudgeAnswerError(f"the answer writes verdict keys {mentions} times and its verdict object holds {own}: "
                               "give exactly one JSON object and nothing verdict-like besides it")
    for _, _, value in spans:
        for item in _walk(value):
            if isinstance(item, str) and _KEY_MENTION.search(item):
                raise JudgeAnswerError("a string in the answer's JSON holds a verdict key")
    return verdict


def _exact_keys(obj: dict, allowed: set[str], required: set[str], what: str) -> dict[str, Any]:
    """``obj``'s fields by case-folded key; a key outside ``allowed`` or a missing
    ``required`` one is unreadable (a "Revised" verdict beside the verdict, say)."""
    fields = {k.casefold(): v for k, v in obj.items()}
    extra = sorted(k for k in obj if k.casefold() not in allowed)
    if extra:
        raise JudgeAnswerError(f"{what} has unexpected key(s) {', '.join(json.dumps(one_line(k, 30)) for k in extra)}")
    missing = sorted(required - set(fields))
    if missing:
        raise JudgeAnswerError(f"{what} has no {', '.join(json.dumps(k) for k in missing)}")
    return fields


def one_line(text: Any, limit: int = 500) -> str:
    """A judge's (or anyone's) text as one line of at most ``limit`` characters."""
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def judge_text(code: str) -> str:
    """The model's code as shown to the judge: every character encodable (a
    lone surrogate becomes its escape, ``\\ud800``), so the request can be sent."""
    try:
        code.encode("utf-8")
        return code
    except UnicodeEncodeError:
        return code.encode("utf-8", "backslashreplace").decode("utf-8")


def _has_key(name: str) -> Callable[[Any], bool]:
    return lambda v: isinstance(v, dict) and any(isinstance(k, str) and k.lower() == name for k in v)


def _strict_bool(value: Any, list_ok: bool) -> bool | None:
    if isinstance(value, bool):
        return value
    if list_ok and isinstance(value, list) and len(value) == 1 and isinstance(value[0], bool):
        return value[0]
    return None


ENTRY_KEYS = {"index", "constraint", "reason", "aligns"}


def parse_adherence(answer: str, n: int, indexed: bool, list_ok: bool = False,
                    token: str | None = None) -> list[tuple[bool, str]]:
    """``[(aligns, reason)]`` for constraints 1..n, or :class:`JudgeAnswerError`.

    The reply's one verdict (:func:`_the_verdict`) is ``{"Evaluation": [...]}`` and
    nothing else; each entry holds ``Aligns`` (and ``Index`` under the paper's
    prompts), and may hold ``Constraint`` and ``Reason``, nothing else.  Under
    upstream's prompts a bare list of entries is read too (``list_ok``)."""
    def is_verdict(v: Any) -> bool:
        return _has_key("evaluation")(v) or (list_ok and isinstance(v, list) and bool(v)
                                             and all(_has_key("aligns")(e) for e in v))

    obj = _the_verdict(answer, is_verdict, token)
    if isinstance(obj, dict):
        entries = _exact_keys(obj, {"evaluation"}, {"evaluation"}, "the verdict object")["evaluation"]
    else:
        entries = obj
    if not isinstance(entries, list):
        raise JudgeAnswerError('no "Evaluation" list in the JSON object')
    if len(entries) != n:
        raise JudgeAnswerError(f'"Evaluation" has {len(entries)} entries; there are {n} constraints')
    verdicts: list[tuple[bool, str] | None] = [None] * n
    allowed = ENTRY_KEYS if indexed else ENTRY_KEYS - {"index"}
    for pos, entry in enumerate(entries, 1):
        if not isinstance(entry, dict):
            raise JudgeAnswerError(f"entry {pos} is not a JSON object")
        fields = _exact_keys(entry, allowed, {"aligns"}, f"entry {pos}")
        if indexed:
            index = fields.get("index")
            if not isinstance(index, int) or isinstance(index, bool):
                raise JudgeAnswerError(f'entry {pos} has no integer "Index"')
            if not 1 <= index <= n:
                raise JudgeAnswerError(f'entry {pos} has "Index" {index}, outside 1..{n}')
            if verdicts[index - 1] is not None:
                raise JudgeAnswerError(f'"Index" {index} appears twice')
        else:
            index = pos
        aligns = _strict_bool(fields.get("aligns"), list_ok)
        if aligns is None:
            raise JudgeAnswerError(f'entry {pos} ("Index" {index}): "Aligns" must be true or false, '
                                   f'got {json.dumps(fields.get("aligns"))[:40]}')
        reason = fields.get("reason")
        verdicts[index - 1] = (aligns, one_line(reason) if isinstance(reason, str) else "")
    return [v for v in verdicts if v is not None]


def parse_adherence_upstream(answer: str) -> list[bool]:
    """IBM/CIFE's positional reading (see the module docstring)."""
    return [m.lower() == "true" for m in _UPSTREAM_ALIGNS.findall(answer or "")]


def parse_correctness(answer: str, token: str | None = None) -> tuple[str, str]:
    """``(label, reason)``: the reply's one verdict (:func:`_the_verdict`) is
    ``{"reason", "correctness"}`` (``reason`` optional, nothing else), the label one of
    the three of Figure 21 (case and surrounding spaces ignored), or :class:`JudgeAnswerError`."""
    obj = _the_verdict(answer, _has_key("correctness"), token)
    if not isinstance(obj, dict):
        raise JudgeAnswerError("the JSON is not an object")
    fields = _exact_keys(obj, {"reason", "correctness"}, {"correctness"}, "the verdict object")
    label = fields.get("correctness")
    if not isinstance(label, str):
        raise JudgeAnswerError('no "correctness" string in the JSON object')
    canonical = {l.lower(): l for l in CORRECTNESS_LABELS}.get(" ".join(label.split()).lower())
    if canonical is None:
        raise JudgeAnswerError(f'"correctness" is {label[:60]!r}; expected one of {", ".join(CORRECTNESS_LABELS)}')
    reason = fields.get("reason")
    return canonical, one_line(reason) if isinstance(reason, str) else ""


def parse_correctness_upstream(answer: str) -> str | None:
    found = _UPSTREAM_CORRECTNESS.findall(answer or "")
    return found[0].strip('"') if found else None


@dataclass
class Asked:
    """What asking the judge came to: the parsed value, the raw answers, attempts used."""

    value: Any
    answers: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


def adherence_schema(n: int, indexed: bool) -> dict[str, Any]:
    """The JSON schema of a readable adherence verdict (what :func:`parse_adherence` reads):
    sent as structured output with ``--judge-model-structured=on``.  "Reason" comes before
    "Aligns", so a model constrained to it gives its reason first, as the prompts ask."""
    fields = {**({"Index": {"type": "integer"}} if indexed else {}),
              "Reason": {"type": "string"}, "Aligns": {"type": "boolean"}}
    entry = {"type": "object", "properties": fields, "required": list(fields), "additionalProperties": False}
    return {"type": "object", "additionalProperties": False, "required": ["Evaluation"],
            "properties": {"Evaluation": {"type": "array", "items": entry, "minItems": n, "maxItems": n}}}


def correctness_schema() -> dict[str, Any]:
    """The JSON schema of a readable correctness verdict (:func:`parse_correctness`)."""
    from .prompts import CORRECTNESS_LABELS

    return {"type": "object", "additionalProperties": False, "required": ["reason", "correctness"],
            "properties": {"reason": {"type": "string"}, "correctness": {"enum": list(CORRECTNESS_LABELS)}}}


def ask_until_readable(judge: Any, benchmark: str, task: Task, sample_index: int, purpose: str,
                       make_prompt: Callable[[str | None], Prompt], parse: Callable[[str], Any],
                       retries: int, question: str = "", schema: Mapping[str, Any] | None = None) -> Asked:
    """Ask; on an unreadable answer ask again with the error shown, ``retries`` times.

    The role caches each (prompt, attempt): a resumed run or another item of the
    same sample re-reads the answers without a new call.  After the last retry
    raises :class:`InfrastructureError` (the item is E, not F); a judge without an
    answer to the question (``question``: :func:`.prompts.question_digest`) raises
    :class:`NoJudgment`.
    """
    from ...models.base import SampleMissing

    asked = Asked(None)
    error: str | None = None
    for attempt in range(retries + 1):
        request = RoleRequest(benchmark, task, sample_index, purpose, make_prompt(error), attempt, question, schema)
        try:
            answer = judge.ask(request)
        except SampleMissing as exc:
            raise NoJudgment(f"judge has no recorded {purpose} answer for task {task.task_id} "
                                      f"sample {sample_index} attempt {attempt} ({exc})") from None
        asked.answers.append(answer)
        try:
            asked.value = parse(answer)
            return asked
        except JudgeAnswerError as exc:
            asked.errors.append(str(exc))
            error = f"{retry_reason(answer, str(exc))} (this is attempt {attempt + 2} of {retries + 1})"
    raise InfrastructureError(f"judge's {purpose} answer unreadable after {retries + 1} attempt(s): "
                              f"{asked.errors[-1] if asked.errors else error}")


def retry_reason(answer: str, error: str) -> str:
    """What the retry prompt says was wrong with the last answer: the parse error, the
    answer's length, whether it looks cut off, and how it ended.  An answer that repeats
    itself thus gets a prompt that differs from the one before (the role also varies the
    seed per attempt, ``models/roles.py``), instead of the identical request that a judge
    at temperature 0-0.1 would answer identically (issue #32)."""
    text = (answer or "").rstrip()
    if not text:
        return error
    note = f"{error}; it had {len(text)} characters"
    if text.count("{") > text.count("}") or text.count("[") > text.count("]") or text.count("```") % 2:
        note += " and looks cut off (an unclosed bracket or fence): keep the reasons short"
    tail = " ".join(text[-80:].split())
    return f"{note}; it ended with: ...{tail}"
