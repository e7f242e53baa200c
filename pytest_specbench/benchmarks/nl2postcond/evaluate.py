"""A postcondition on recorded cases, through the Python-spec service.

Test-set correctness and completeness are evaluated in *one* job over one pool:
the reference's cases and the corpus's bad outputs, shuffled with a fresh
random order each time, each case evaluated by a spec process that holds that
case alone (:func:`pytest_specbench.pyspec.check_blocks`).  A postcondition thus
cannot tell a reference output from a bad one by anything but the values it is
shown (no job of its own per phase, no position, no other case in memory): the
only way to be both test-set correct and complete is to tell right outputs from
wrong ones, which is what the benchmark measures.  Verdicts do not depend on
the order: each case's outcome is its own (a case that spends its CPU limit is
a time-out, and the cases after it go to a fresh process).  A pool whose text
passes the service's size for one job (HumanEval/15's 3.4 GB of bad outputs)
goes to several jobs in turn, runs of the shuffled batches
(:func:`pytest_specbench.pyspec.blocks.check_blocks`): which cases share a job is
as random as which share a process.

Once a reference case has not held, the postcondition is not test-set correct
whatever the rest says, and completeness counts correct postconditions only
(upstream's kill run too): the job's keeper, which alone knows which cases are
the reference's, evaluates no further case (``skipped``).  HumanEval/49's
``(return_value ** p) % p == (2 ** n) % p`` (an incorrect row of upstream's
sheet) spent the job's whole CPU budget, about 5,800 s, on outputs it cannot
raise to a power of up to a million before (docs/nl2postcond.md, "Session 23").
"""
from __future__ import annotations

import json
import random
from dataclasses import dataclass, replace
from typing import Any, Mapping, Sequence

from ...pyspec.blocks import BlockOutcome, batches_of, check_blocks
from ...execution import wire
from ..contract.evalplus import DIGEST_STRINGS_OVER
from .corpus import Kept, StoredStr, StoredValue, pair_key, stable_text
from .tasks import parameters
from .observe import LongStr, as_case


BATCH = 64  # cases per spec process, of distinct inputs


@dataclass(frozen=True)
class Evaluated:
    """Outcomes of one postcondition: per reference case; per distinct bad output
    (an (input, bad output) pair, :func:`bad_outputs`); per corpus program, the
    indices of its bad outputs among those (``programs``) and of the ones it
    added, no program before it having given them (``added``)."""

    reference: list[BlockOutcome]
    bad: list[BlockOutcome]
    programs: list[tuple[Kept, list[int]]]
    added: list[list[int]] = ()


def input_keys(task: Mapping[str, Any], pairs: str = "str") -> list[Any] | None:
    """What stands for each test input in a pair's key: its value's text (``str`` and ``value``:
    an input HumanEval+ lists twice, a base input again among the plus inputs, is one input), or
    None (``position``: the input's place in the list, the corpus's own selection).

    Upstream's counts are by value: on every task of the sheet where a repeated input holds bad
    outputs and either rule reproduces upstream's ``num_bopi_run``, it is this one (21 tasks of
    HumanEval/0-109 with a part in session 22, and /14, /77, /79, /82, /87-/90, /97, /98 among
    session 24's parts, where the position rule never agrees alone), and EvalPlus's own scripts changed none of
    those tasks' inputs since upstream's HumanEval+ (docs/nl2postcond.md, "Which HumanEval+
    upstream ran"), so its list had the repeats too.  Upstream's script names pairs by position
    (``unique_bopi_id``): ``position`` is that reading on 0.1.10's list."""
    if pairs == "position":
        return None
    return [stable_text(x) for x in list(task["base_input"]) + list(task["plus_input"])]


def by_input_value(programs: Sequence[Kept], keys: Sequence[Any], key=pair_key
                   ) -> tuple[list[Kept], list[tuple[int, tuple, Any]]]:
    """The corpus's programs selected again in program order with each pair keyed by its input's
    value (``keys``, :func:`input_keys`), and their distinct pairs: a program whose new pairs were
    all on a repeated input adds none, and is not run.  The same as a build that keyed pairs so: a
    program the build did not keep added no (position, output) pair, so it adds no (value, output)
    pair either."""
    pairs, _, _, selected = _pairs(sorted(programs, key=lambda k: k.program), keys, key=key)
    return selected, pairs


def str_pair_key(program: int, index: Any, output: Any, position: int | None = None) -> tuple:
    """What makes a bad output distinct under ``--nl2postcond-pairs=str`` (the default): its
    input and what ``str()`` prints for it, upstream's key.  ``True`` and ``"True"``, ``3`` and
    ``"3"``, ``None`` and ``"None"`` on one input are one bad output: on HumanEval/92 the
    programs returning strings where booleans are due and one returning ``1``/``0`` give 8
    programs and 1,132 pairs this way, upstream's figures to the unit, against 9 and 2,024 keyed
    by the value's type and text (``value``); over HumanEval/0-109 it gives upstream's
    ``num_bopi_run`` on 77 of the 106 tasks with a row correct on both sides, ``value`` on 68,
    and changes no task that agreed (docs/nl2postcond.md, "Bad outputs keyed by their text").

    The text is :func:`python_text`'s, worked out here on decoded data (no answer code runs).
    Where it cannot be what upstream's process printed, the key stays the value's own: an
    opaque value (upstream's text names a memory address) is a pair of its own program's, as
    :func:`.corpus.pair_key` keys it, and a long output (a string over
    :data:`DIGEST_STRINGS_OVER` characters, or another value whose wire text is) is keyed by its
    stored digest (a long list and a long string that prints the same are two pairs here)."""
    if isinstance(output, (LongStr, StoredValue)):  # a StoredStr is a LongStr
        return pair_key(program, index, output, position=position)
    text = python_text(output)
    if text is None:  # holds an opaque value, or an iterator's items
        return pair_key(program, index, output, position=position)
    if len(text) > DIGEST_STRINGS_OVER:  # keep the index small: the text's digest stands for it
        return (index, "\0py " + wire.string_digest(text))
    return (index, text)


def json_pair_key(program: int, index: Any, output: Any, position: int | None = None) -> tuple:
    """What makes a bad output distinct under ``--nl2postcond-pairs=json``: its input and the text
    ``str()`` prints for the output **as a JSON file gives it back** (:func:`as_json_gave_it_back`:
    a tuple is a list, a dict's keys are strings), else as :func:`str_pair_key`.  The hypothesis
    that upstream selected its distinct programs from saved JSON files: on HumanEval/20, whose
    reference returns a tuple, a program returning ``[4.0, 3.9]`` adds nothing after one returning
    ``(4.0, 3.9)``, and this key gives 14,726 pairs against upstream's 14,719, where ``str`` gives
    15,014.  Refuted as upstream's key by the sheet: it moves /35, /68 and /106 off upstream's figures,
    which ``str`` gives (docs/nl2postcond.md, session 32); an option, not the default."""
    if isinstance(output, (LongStr, StoredValue)) or type(output) is str:
        return str_pair_key(program, index, output, position)
    try:
        text = python_text(as_json_gave_it_back(output))
    except RecursionError:
        text = None
    if text is None or len(text) > DIGEST_STRINGS_OVER:
        return str_pair_key(program, index, output, position)
    return (index, text)


def as_json_gave_it_back(value: Any) -> Any:
    """``value`` as ``json.loads(json.dumps(value))`` returns it, where JSON can hold it: a
    tuple is a list, a dict's key a string (``1`` is ``"1"``, ``True`` is ``"true"``, ``None``
    ``"null"``); a value JSON cannot hold (a set, an opaque value) and a key it cannot (a tuple)
    are left as they are.  Decoded data only: no answer code runs here."""
    t = type(value)
    if t is list or t is tuple:
        return [as_json_gave_it_back(x) for x in value]
    if t is dict:
        return {_json_key(k): as_json_gave_it_back(x) for k, x in value.items()}
    return value


def _json_key(key: Any) -> Any:
    if type(key) is str:
        return key
    if key is True or key is False or key is None or type(key) in (int, float):
        return json.dumps(key)  # true, false, null, 1, 1.5, Infinity, NaN
    return key


def python_text(value: Any) -> str | None:
    """What ``str(value)`` prints, for decoded plain data, or None where ``value`` holds a value
    equal only to itself (:class:`.wire.Opaque`, :class:`.wire.Iterated`).  Two departures, so that equal values give one text
    in any process: a set's members are in the order of their own texts (Python's order
    follows the process's string hash seed), and an int too long for ``str`` (over 4,300
    digits: ``ValueError`` in Python 3.11) is written in hex behind a NUL, which no printed
    value holds.  A value nested too deeply to walk is keyed by its wire text, behind a NUL."""
    if type(value) is str:
        return value
    try:
        return _printed(value)
    except _HoldsOpaque:
        return None
    except RecursionError:
        return "\0wire " + stable_text(value)


class _HoldsOpaque(Exception):
    pass


def _printed(v: Any) -> str:
    t = type(v)
    if t is str or t is float or t is bool or v is None or t is complex or t is bytes:
        return repr(v)
    if t is int:
        return repr(v) if v.bit_length() < 14_000 else "\0int " + hex(v)  # 10**4300 has 14,285 bits
    if t is list:
        return "[" + ", ".join(map(_printed, v)) + "]"
    if t is tuple:
        return "(" + ", ".join(map(_printed, v)) + (",)" if len(v) == 1 else ")")
    if t is dict:
        return "{" + ", ".join(f"{_printed(k)}: {_printed(x)}" for k, x in v.items()) + "}"
    if t is set or t is frozenset:
        inner = "{" + ", ".join(sorted(map(_printed, v))) + "}"
        if t is set:
            return inner if v else "set()"
        return f"frozenset({inner})" if v else "frozenset()"
    raise _HoldsOpaque  # wire.Opaque or wire.Iterated: the only other types decoded data holds


def pair_key_of(pairs: str):
    """The pair key of ``--nl2postcond-pairs``: ``str`` keys an output by its printed text
    (:func:`str_pair_key`), ``json`` by the text of what a JSON file gives back for it
    (:func:`json_pair_key`), ``value`` and ``position`` by its value (:func:`.corpus.pair_key`)."""
    return str_pair_key if pairs == "str" else json_pair_key if pairs == "json" else pair_key


def equal_to_expected(output: Any, expected: Any) -> bool:
    """Is a recorded bad output equal to the reference's under Python's ``==`` (``eq``, the
    default of ``--nl2postcond-oracle``)?  The corpus records what differs in value *or type*
    (the build's ``exact`` oracle): ``2.0`` or ``True`` where the reference gives ``2`` or ``1``,
    ``[2.0]`` for ``[2]``.  Upstream's counts are of outputs ``==`` rejects (EvalPlus compares
    with ``out == exp``; its float tolerance did not apply to these runs): on HumanEval/2, /18,
    /24, /45, /47, /59, /66, /99, /108 this reproduces upstream's ``num_bopi_run`` to the pair
    (docs/nl2postcond.md, "What a bad output is, upstream").  The values are data the harness
    decoded (the wire's plain types), so comparing them here runs no answer code.  Nothing
    but a ``str`` equals a ``str``: a long string (:class:`.observe.LongStr`) or any output
    against a string reference is unequal without reading it (in the corpus, a ``str`` of
    the reference's own type is there because its value differs)."""
    if isinstance(output, LongStr) or isinstance(expected, str):
        return False
    if isinstance(output, StoredValue):
        output = output.held()
    try:
        return bool(output == expected)
    except Exception:  # noqa: BLE001  (e.g. a RecursionError on a deeply nested value): stays bad
        return False


def unequal_only(programs: Sequence[Kept], expected: Sequence[Any]) -> list[Kept]:
    """The programs with the bad outputs that Python's ``==`` does not take for the reference's
    (:func:`equal_to_expected`; ``expected``: the reference's output per test input, base then
    plus).  A program left with none is selected out by :func:`_pairs`."""
    out = []
    for kept in programs:
        # (an index past the reference's outputs, a corpus of other inputs taken with --nl2postcond-corpus-pin=off,
        # has nothing to compare with: it stays, as the corpus recorded it)
        bopi = tuple(b for b in kept.bopi if b.index >= len(expected) or not equal_to_expected(b.output, expected[b.index]))
        out.append(kept if len(bopi) == len(kept.bopi) else replace(kept, bopi=bopi))
    return out


def bad_outputs(programs: Sequence[Kept], keys: Sequence[Any] | None = None, key=pair_key
                ) -> tuple[list[tuple[int, tuple, Any]], list[list[int]]]:
    """The distinct (input, bad output) pairs of the corpus's programs, in program
    order (the arguments after the call from the first program that gave the pair),
    and each program's pairs by index; ``keys``: by input value (:func:`input_keys`).
    Upstream's ``num_bopi_run`` counts these pairs: on HumanEval/0 its 6 programs give
    2,983 (program, input) bad outputs and 1,819 distinct pairs, against upstream's 1,820
    (docs/nl2postcond.md)."""
    pairs, members, _, _ = _pairs(programs, keys, key=key)
    return pairs, members


def added_outputs(programs: Sequence[Kept], keys: Sequence[Any] | None = None, key=pair_key) -> list[list[int]]:
    """Per program, the indices of the pairs it added (no earlier program gave them):
    upstream's ``unique_bopi_id``, the bad outputs its run tries each program on."""
    return _pairs(programs, keys, key=key)[2]


def _pairs(programs: Sequence[Kept], keys: Sequence[Any] | None = None, select: bool = False, key=pair_key):
    """(pairs, each program's pairs, each program's added pairs, the programs): with ``keys``
    (by input value), ``select`` (bad outputs dropped, :func:`unequal_only`) or a ``key`` other
    than the build's (:func:`str_pair_key`), a program that adds no pair is left out
    (:func:`by_input_value`), its pairs being all in the index already; each pair's key is
    worked out once."""
    select = select or keys is not None or key is not pair_key
    index: dict[tuple, int] = {}
    pairs: list[tuple[int, tuple, Any]] = []
    members: list[list[int]] = []
    added: list[list[int]] = []
    selected: list[Kept] = []
    for kept in programs:
        mine, new = [], []
        for b in kept.bopi:
            k = key(kept.program, b.index if keys is None else keys[b.index], b.output, position=b.index)
            if k not in index:
                index[k] = len(pairs)
                pairs.append((b.index, b.args_after, b.output))
                new.append(index[k])
            mine.append(index[k])
        if select and not new:
            continue
        selected.append(kept)
        members.append(sorted(set(mine)))
        added.append(sorted(set(new)))
    return pairs, members, added, selected


def evaluate(executor, task: Mapping[str, Any], block: str, preamble: str, reference_cases: Sequence[dict],
             programs: Sequence[Kept], base_seconds: float, case_seconds: float, pairs_by: str = "str",
             expected: Sequence[Any] | None = None, names_by: str = "reference") -> Evaluated:
    """Both checks' cases in one job, whose budget is ``base_seconds`` plus
    ``case_seconds`` per case; ``pairs_by``: what makes a bad output distinct (:func:`input_keys`);
    ``expected``: the reference's output per test input (base then plus), to keep only the bad
    outputs Python's ``==`` rejects (``--nl2postcond-oracle=eq``; None: the corpus's, ``exact``);
    ``names_by``: the names a bad output's inputs are bound to (:func:`case_names`)."""
    names = parameters(task)
    keys = input_keys(task, pairs_by) if programs else None
    if expected is not None and programs:
        programs = unequal_only(programs, expected)
    # (the corpus's lines are in program order)
    pairs, members, added, programs = _pairs(programs, keys, select=expected is not None, key=pair_key_of(pairs_by))
    pool = list(reference_cases) + [as_case(n, args, out)
                                     for n, (_, args, out) in zip(case_names(names, programs, added, len(pairs), names_by), pairs)]
    order = list(range(len(pool)))
    random.SystemRandom().shuffle(order)
    # One spec process per batch of cases of distinct inputs: a process never holds two
    # outputs for one input (which could tell the reference's from a bad one by
    # counting), and costs a fork per BATCH cases instead of per case.
    n = len(reference_cases)
    keys = [i if i < n else pairs[i - n][0] for i in order]  # the input index of each case
    outcomes = check_blocks(executor, preamble, block, [pool[i] for i in order],
                            timeout=base_seconds + case_seconds * len(pool),
                            batches=batches_of(keys, BATCH),
                            decisive=[position for position, i in enumerate(order) if i < n], case_timer=True,
                            encode=case_text)
    by_slot: list[BlockOutcome] = [BlockOutcome("raised")] * len(pool)  # every slot is filled below
    for position, i in enumerate(order):
        by_slot[i] = outcomes[position]
    return Evaluated(by_slot[:n], by_slot[n:], list(zip(programs, members)), added)


def case_names(names: Sequence[str], programs: Sequence[Kept], added: Sequence[Sequence[int]], count: int,
               names_by: str = "reference") -> list[Sequence[str]]:
    """The parameter names each of ``count`` bad outputs' inputs are bound to, by
    ``--nl2postcond-names``: the reference's (``reference``, the default), or those of the
    program that added the pair, where the corpus records its own (``program``: upstream's
    kill run, which wraps each buggy program in its own signature; ``added``: each program's
    new pairs, :func:`_pairs`).

    ``reference`` is the default because a name is not a value: bound to a buggy program's own
    names, a postcondition could tell its bad outputs from the reference's by the names it sees
    (``'d' in dir()``) and reject them all, complete without telling right from wrong.  Under
    it, an output reaches the postcondition as the reference's would, by value alone.  On
    upstream's sheet the two differ on HumanEval/95 only (r_num 2, ``len(dict) == 0``: upstream
    84 bad outputs killed, 83 of them given by programs naming their parameter ``d``, ``dic`` or
    ``dct``, where ``dict`` is the builtin)."""
    out: list[Sequence[str]] = [names] * count
    if names_by == "program":
        for kept, new in zip(programs, added):
            if kept.params is not None:
                for i in new:
                    out[i] = kept.params
    return out


def case_text(case: Mapping[str, Any]) -> str:
    """A case's wire text, a long output (:class:`.corpus.StoredStr`, :class:`.corpus.StoredValue`)
    read from its store now: the text the case would have had with the output held all along."""
    value = case["return_value"]
    if isinstance(value, (StoredStr, StoredValue)):
        return wire.dumps({**case, "return_value": value.held()})
    if isinstance(value, LongStr):  # a build's digest, with no store to read it from
        raise ValueError(f"a long output known by its digest only ({value.digest}) cannot be evaluated")
    return wire.dumps(case)


def rejects(outcome: BlockOutcome, kill: str) -> bool:
    """Does the postcondition reject this output?  ``any`` (the default): it
    raised, whatever the exception; ``assertion``: an ``AssertionError`` only
    (``--nl2postcond-kill``).  Calibrated on upstream's sheet (docs/nl2postcond.md,
    "Kill rule"): on HumanEval/2, a program that returns strings makes ``0 <=
    return_value`` raise ``TypeError``, and upstream counts those bad outputs killed."""
    return outcome.kind == "violated" or (kill == "any" and outcome.kind == "raised")


# Upstream's per-input time rule (run_postcondition_evaluation.py, microsoft/nl-2-postcond@a93052f:
# --min-time-limit 0.2, --gt-time-limit-factor 2.0, EvalPlus's untrusted_check): the wrapped
# call, the reference and then the postcondition, must end within max(0.2 s, 2.0 x the
# reference's time on that input).  The paper (§4) states no time rule.
UPSTREAM_MIN_SECONDS, UPSTREAM_FACTOR = 0.2, 2.0


def upstream_time_limit(reference_seconds: float) -> float:
    """What upstream's limit leaves the postcondition on one input: the wrapped call's
    limit less the reference's own time (here both CPU seconds in the sandbox)."""
    return max(UPSTREAM_MIN_SECONDS, UPSTREAM_FACTOR * reference_seconds) - reference_seconds


def over_upstream_time(outcomes: Sequence[BlockOutcome], reference_seconds: Sequence[float]) -> list[BlockOutcome]:
    """``outcomes`` (of the reference's cases) with each case over upstream's limit
    made ``raised`` (a time-out, as upstream's run counts it: not a success).  A case's
    CPU seconds are its spec process's figure raised by whatever CPU of that process's
    batch the figures do not explain (measured outside it: ``block_job._charge_unexplained``)."""
    out = []
    for outcome, seconds in zip(outcomes, reference_seconds):
        limit = upstream_time_limit(seconds)
        if outcome.kind == "holds" and outcome.cpu is None:  # an honest spec process always has a figure
            outcome = BlockOutcome("raised", "TimeLimit", "no CPU figure for this case")
        elif outcome.kind == "holds" and outcome.cpu > limit:
            outcome = BlockOutcome("raised", "TimeLimit", f"took {outcome.cpu:.3f} s, over upstream's limit of "
                                                          f"{limit:.3f} s (the reference's {seconds:.3f} s)")
        out.append(outcome)
    return out


# CPython's default limit on converting an int to text (``sys.int_info.default_max_str_digits``:
# 3.11, and 3.9.14/3.10.7 on; upstream's Docker image is python:3.9-slim-buster).  Upstream's
# run marks every postcondition of HumanEval/83 test-set incorrect, ``return_value >= 0``
# included: its reference returns ints of up to a million digits, and a harness that renders
# outputs as text fails there whatever the postcondition (docs/nl2postcond.md, "HumanEval/83").
UPSTREAM_INT_DIGITS = 4300
_TOO_LONG = 10 ** UPSTREAM_INT_DIGITS


def has_long_int(value: Any) -> bool:
    """Whether ``value`` (plain data: containers, numbers, text) holds an int of more
    than :data:`UPSTREAM_INT_DIGITS` digits."""
    stack = [value]
    while stack:
        v = stack.pop()
        if type(v) is int:
            if v.bit_length() > 14_000 and abs(v) >= _TOO_LONG:  # 10**4300 has 14,285 bits
                return True
        elif isinstance(v, (list, tuple, set, frozenset)):
            stack.extend(v)
        elif isinstance(v, dict):
            stack.extend(v.keys())
            stack.extend(v.values())
    return False


def over_upstream_digits(outcomes: Sequence[BlockOutcome], cases: Sequence[Mapping[str, Any]]) -> list[BlockOutcome]:
    """``outcomes`` (of the reference's cases) with each case whose output holds an int
    of more than 4,300 digits made ``raised`` (``--nl2postcond-long-ints=upstream``: the
    ValueError upstream's harness met rendering it; the paper compares values, the default)."""
    return [BlockOutcome("raised", "ValueError", f"the output holds an int of more than {UPSTREAM_INT_DIGITS} "
                                                 f"digits, which upstream's harness could not render as text")
            if outcome.kind == "holds" and has_long_int(case.get("return_value")) else outcome
            for outcome, case in zip(outcomes, cases)]
