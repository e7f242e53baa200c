"""The buggy-program corpus: recorded bad outputs of buggy programs, so that a
postcondition's completeness is judged on data and no buggy program runs again
at evaluation time.

Built (``specbench nl2postcond build-corpus``) from candidate programs (upstream:
``code_mutants/merged_codes_preprocessed.jsonl.zip``, 300 per HumanEval task,
the first 200 from the plain code-generation prompt, *natural*, then 100 from
the prompt that asks for a bug) as upstream describes its EvalPlus run: each
program runs on the task's test inputs in the sandbox; a *bad-output-producing
input* (bopi) is one where it returns, without an error or a time-out, an output
the task's oracle (EvalPlus's, :func:`..contract.evalplus_data.outputs_match`)
does not accept; programs with at least one are kept, and of those the
*distinct* ones, each adding at least one (input, bad output) pair no program
before it in ``response_num`` order gave.  Each kept program's every bopi is
recorded as (input index, arguments after the call, bad output).

One JSON line per kept program: ``{"task_id", "program", "natural", "bopi"}``,
``bopi`` the :mod:`~pytest_specbench.execution.wire` encoding of
``[[input index, [args after...], output], ...]``.  The build resumes: each
task's lines are written to a part file when the task is done, and a re-run
skips finished tasks.
"""
from __future__ import annotations

import ast
import hashlib
import io
import json
import lzma
import os
import pickle
import queue
import re
import threading
import time
import zipfile
from concurrent.futures import ThreadPoolExecutor, wait
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Iterable, Iterator, Mapping, Sequence

from ...data.corpus_pin import LONG_STRING, LONG_VALUE, long_file, long_folder, long_text
from ...data.jsonl import file_digest
from ...errors import DataError
from ...execution import wire
from ..contract.evalplus import DIGEST_STRINGS_OVER
from ..contract.evalplus_data import canonical_program, equality_judged, outputs_match
from .observe import LongStr, StopRule, observe, test_inputs

FORMAT = "3"  # 2: no memory address in an opaque output's text; an opaque bad output is its program's own pair;
# 3: random seeded before each call (observe.observed_program)
NATURAL = 200  # upstream's first 200 programs per task come from the plain code-generation prompt
# A candidate that times out on 10 inputs in a row, or on 30 in all, is stopped (the inputs after are
# time-outs, never bad outputs): one that hangs everywhere costs 10 CPU seconds, not one per input
# (HumanEval/11: a program ran 20 minutes on a loaded machine; HumanEval/13, 991 inputs up to 2.5e12:
# programs that count down to a divisor ran past 18 minutes each).  Upstream's run has no such rule
# (its process deadline, the sum of a program's per-input limits, was never reached by HumanEval/49's
# slowest programs in EvalPlus 0.1.5 itself, session 31): ``--stop-after-timeouts off`` runs as it did.
STOP_AFTER_TIMEOUTS = (10, 30)
# Each candidate's call may take this many times its CPU limit in wall time (the sandbox's default
# is 3): a time-out is then its CPU limit's on a machine at load up to ~20 per core.  A program whose
# time-outs include one the wall clock decided (its CPU limit not reached: the machine's load) runs
# again, alone, with the same factor; if the wall clock still decides one, its task is left for a
# later run (no part file: the resume builds it).  So what a part records never depends on the
# load: each time-out is a CPU limit's.  (With the default factor for the first run, most programs
# that timed out on a loaded machine had a wall stop and ran twice: at load 15-40, HumanEval/13's hanging programs had
# wall stops in 10 of 13.)  None of upstream's 49,200 programs sleeps or waits for input (searched),
# so the larger wall bound costs no wall time on them.
RERUN_WALL_FACTOR = 20.0
# While a task's programs run, a line every this many seconds says how many are done: a task whose
# candidates time out on many inputs (HumanEval/115, /163: each time-out costs its CPU limit) runs
# for tens of minutes, and its only line came at its end.
PROGRESS_EVERY = 60.0

# The per-call time rule (``--time-rule``).  ``flat`` (the default): one limit for every call, the
# executor's ``call_cpu`` (1 s).  ``upstream``: each input's limit is max(0.2 s, 2x the reference's
# time on that input), upstream's `run_postcondition_evaluation.py` (``--min-time-limit 0.2
# --gt-time-limit-factor 2.0``, EvalPlus's ``untrusted_check``), here in CPU seconds (upstream's are
# wall seconds on its machine).  Measured (docs/nl2postcond.md, "Each call's time"): both give the
# same parts byte for byte on HumanEval/0-12; on /13 and /14 ``upstream`` moves the counts away from
# upstream's sheet (a bad output that needs more than 0.4 CPU s: its wall limit was looser than our
# CPU one), so ``flat`` stays the default; ``upstream`` costs /13 299 CPU s where ``flat`` spent
# over 525 s without finishing.
TIME_RULES = ("flat", "upstream")
UPSTREAM_FLOOR, UPSTREAM_FACTOR = 0.2, 2.0
# The reference's CPU time varies a little from run to run (caches, the load); where it may lift a
# limit above the floor it is measured this many times and the least figure taken (the usual
# robust estimate of a deterministic program's time), so the limits, and the bytes, move less.
REFERENCE_TIMINGS = 3


def call_limits(time_rule: str, reference_cpu: Sequence[float], flat_cpu: float) -> list[float]:
    """Each input's CPU-second limit for a candidate under ``time_rule`` (:data:`TIME_RULES`),
    from the reference's CPU seconds on that input."""
    if time_rule == "flat":
        return [flat_cpu] * len(reference_cpu)
    return [round(max(UPSTREAM_FLOOR, UPSTREAM_FACTOR * t), 3) for t in reference_cpu]


def time_rule_stamp(time_rule: str, flat_cpu: float) -> Any:
    """The rule as ``rules.json`` records it (``flat``: the number, as the parts of session 17)."""
    if time_rule == "flat":
        return flat_cpu
    return f"max({UPSTREAM_FLOOR}, {UPSTREAM_FACTOR} x the reference's CPU seconds, least of {REFERENCE_TIMINGS})"


@dataclass(frozen=True)
class Candidate:
    task_id: str
    program: int  # upstream's response_num
    code: str


@dataclass(frozen=True)
class Bopi:
    index: int
    args_after: tuple
    output: Any
    # the output's stable_text, when the selection worked it out (Kept.line writes it, not again)
    text: str | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class Kept:
    task_id: str
    program: int
    natural: bool
    bopi: tuple[Bopi, ...]
    # the program's own parameter names, where they are not the reference's (own_parameters)
    params: tuple[str, ...] | None = None

    def line(self, store: "LongStore | None" = None) -> str:
        """The part's line.  A bad output whose text is over :data:`DIGEST_STRINGS_OVER`
        characters is stored once in ``store`` (:class:`LongStore`, beside the parts) and
        named in the line: a long string known by its digest (:class:`.observe.LongStr`,
        already stored) as ``{"h": [digest, length]}``, any other value by its wire text's
        digest, ``{"v": [digest, length]}``.  A line without one is the bytes it always was."""
        if not any(isinstance(b.output, (LongStr, StoredValue)) for b in self.bopi):
            # stable_text of [[index, [args after...], output], ...], item by item (a list's JSON text
            # is its items' joined): each output's text as the selection keyed it
            bopi = "[" + ",".join(f"[{_plain_text(b.index)},{stable_text(list(b.args_after))},"
                                  f"{stable_text(b.output) if b.text is None else b.text}]" for b in self.bopi) + "]"
            if len(bopi) <= DIGEST_STRINGS_OVER or store is None:
                return self._line(bopi)
        if store is None:
            raise ValueError("a corpus line with a long string known by its digest needs the store that holds it")
        bopi = _plain_text([[b.index, _sorted_sets(wire.to_plain(list(b.args_after))), _stored(b.output, store)]
                            for b in self.bopi])
        return self._line(bopi)

    def _line(self, bopi: str) -> str:
        # "params" only where the names differ: every other line is the bytes it always was
        params = {} if self.params is None else {"params": list(self.params)}
        return json.dumps({"task_id": self.task_id, "program": self.program, "natural": self.natural, **params,
                           "bopi": bopi})


def _positional_names(code: str, entry_point: str) -> tuple[str, ...] | None:
    """The plain positional parameter names of ``code``'s last top-level ``def entry_point``
    (the one Python binds), or None (no such def, code that does not parse, or a ``*``/``**``
    or keyword-only parameter)."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):
        return None
    defs = [n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == entry_point]
    if not defs or defs[-1].args.vararg or defs[-1].args.kwarg or defs[-1].args.kwonlyargs:
        return None
    return tuple(a.arg for a in (*defs[-1].args.posonlyargs, *defs[-1].args.args))


def own_parameters(code: str, task: Mapping[str, Any], reference: tuple[str, ...] | None) -> tuple[str, ...] | None:
    """A candidate's entry point's parameter names where they are not the reference's (the
    task prompt's), as many and plain positional ones; else None.  Read from its syntax tree,
    nothing run (the last top-level ``def`` of that name, the one Python binds).  Upstream's
    kill run bound a postcondition to each buggy program's own signature: on HumanEval/95 the
    programs naming their parameter ``d``, ``dic`` or ``dct`` leave ``dict`` the builtin, and
    ``len(dict) == 0`` raises there (``--nl2postcond-names=program``, docs/nl2postcond.md).
    Of the 5,899 programs the 164 tasks' parts keep, 8 name their parameters otherwise
    (/5's 1, /95's 6, /115's 1).  ``reference``: :func:`reference_parameters` of the task."""
    names = _positional_names(code, str(task.get("entry_point")))
    if names is None or reference is None or not all(_bindable(n) for n in names):
        return None
    return names if len(names) == len(reference) and names != reference else None


def _bindable(name: Any) -> bool:
    """A name a case's input may be bound to in the spec process's namespace: an identifier,
    not a dunder (``__builtins__`` there would be the module's builtins, not a local as in the
    program's own function) and not ``return_value``, which the case binds itself."""
    return type(name) is str and name.isidentifier() and not name.startswith("__") and name != "return_value"


def reference_parameters(task: Mapping[str, Any]) -> tuple[str, ...] | None:
    """The reference's parameter names (the prompt's ``def``, with its solution)."""
    return _positional_names(str(task.get("prompt", "")) + str(task.get("canonical_solution", "")),
                             str(task.get("entry_point")))


def _stored(output: Any, store: "LongStore") -> Any:
    """An output's plain form in a part line: itself, or a reference into ``store``."""
    if isinstance(output, LongStr):
        return {LONG_STRING: [output.digest, output.length]}
    if isinstance(output, StoredValue):  # stored as it was observed (observe_bad), or read back
        return {LONG_VALUE: [output.digest, output.length]}
    plain = _sorted_sets(wire.to_plain(output))
    text = _plain_text(plain)
    if len(text) <= DIGEST_STRINGS_OVER:
        return plain
    return {LONG_VALUE: [store.put(text), len(text)]}


# A long bad output in a part line (wire's own tags are t, d, s, f, b, c, i and o/r: a plain JSON
# object with one key "h" or "v" is no value wire writes): {"h": [digest, length]}, a string, its
# file the string; {"v": [digest, length]}, any other value, its file the value's wire text
# (data/corpus_pin.py, which the download reads them with too).
LONG_XZ_PRESET = 1
LONG_RULE = (f"bad outputs over {DIGEST_STRINGS_OVER} characters (a string's own, another value's wire text) "
             f"stored once by blake2b-128 digest beside the parts (long/, xz)")


class LongStore:
    """The long bad outputs of a corpus, one file per distinct string or value text, named by the
    digest of its text (:func:`.wire.string_digest`: ``long/<digest>.xz``, UTF-8 with surrogates
    passed, xz-compressed at :data:`LONG_XZ_PRESET`: /15's strings of digits repeat, session 19 measured
    lzma's first preset at 47 kB for 2 MB in 0.07 s): beside
    the parts (``corpus.jsonl.parts/long/``) or beside a corpus file (``corpus.jsonl.long/``).
    HumanEval/15's candidates return strings of up to 6.9 MB on 21 inputs (and some lists of
    as much); written in each kept program's line they made its part about 150 MB a program, most
    of it the same outputs again (a kept program adds one pair at least, and repeats other
    programs' bad outputs).  Each file
    is checked against its name when read: the pin, over the lines, covers the strings too."""

    def __init__(self, folder: Path):
        self.folder = folder

    @staticmethod
    def beside(corpus_file: Path) -> "LongStore":
        """The store of a corpus file: ``FILE.long/`` or, for a build's output, ``FILE.parts/long/``."""
        return LongStore(long_folder(corpus_file))

    def _file(self, digest: str) -> Path:
        return long_file(self.folder, digest)

    def __contains__(self, digest: str) -> bool:
        return self._file(digest).is_file()

    def put(self, text: str) -> str:
        digest = wire.string_digest(text)
        if digest not in self:
            self.folder.mkdir(parents=True, exist_ok=True)
            tmp = self._file(digest).with_name(f"{digest}.{os.getpid()}.{threading.get_ident()}.tmp")  # a writer's own
            tmp.write_bytes(lzma.compress(text.encode("utf-8", "surrogatepass"), preset=LONG_XZ_PRESET))
            os.replace(tmp, self._file(digest))
        return digest

    def get(self, digest: str, length: int) -> str:
        """The string, or ValueError (absent, or not the string its name and length say)."""
        return long_text(self._file(digest), digest, length)


@dataclass(frozen=True)
class StoredStr(LongStr):
    """A long string bad output of a built corpus, read back: its digest and length, its text
    left in the store (:class:`LongStore`) until a job's cases are encoded (:meth:`held`), so
    the evaluation never holds the task's long strings decoded at once (HumanEval/15: 3.4 GB
    of them, one job's share of 96 MB at a time now).  Keyed as the build keyed it
    (:func:`pair_key`: by the digest)."""

    store: "LongStore | None" = field(default=None, compare=False, repr=False, hash=False)
    named_at: tuple = field(default=(), compare=False, repr=False, hash=False)  # (corpus file, line) naming it

    def held(self) -> str:
        """The string (:func:`_stored_text`)."""
        return _stored_text(self)


@dataclass(frozen=True)
class StoredValue:
    """A long bad output of another type than ``str`` (a list of HumanEval/15's strings, an
    int of /49's), read back: its wire text's digest and length, the text left in the store
    until a job's cases are encoded (:meth:`held`).  ``opaque``: the text holds an opaque
    value (:func:`pair_key`: a pair of its own program's).  Its key is the one the value's
    text would get (:func:`pair_key`: the store names a text by :func:`.wire.string_digest`)."""

    digest: str
    length: int
    opaque: bool = False
    store: "LongStore | None" = field(default=None, compare=False, repr=False, hash=False)
    named_at: tuple = field(default=(), compare=False, repr=False, hash=False)

    def held(self) -> Any:
        """The value (:func:`_stored_text`, decoded)."""
        return wire.loads(_stored_text(self))


def _stored_text(stored: "StoredStr | StoredValue") -> str:
    """A stored output's text from its store; a file that is not the text its name says (altered
    since the read found it there) is a :class:`DataError` naming the corpus's line, as the read's own."""
    try:
        return stored.store.get(stored.digest, stored.length)
    except ValueError as exc:
        raise DataError(*(stored.named_at or (stored.store.folder, None)), f"{CORPUS_LINE}: {exc}") from None


def stable_text(value: Any) -> str:
    """``value``'s wire text with the members of every set and frozenset in the order of
    their own text: the same bytes for equal values in any process (a set of strings
    iterates in an order the process's hash seed decides, and the build's process, unlike
    the sandbox's, has no fixed seed), and no memory address in the text of an opaque
    value (an output the sandbox could not send as data, e.g. a generator: its repr,
    ``<generator object f at 0x7fe1c9eeab60>``, names an address that differs from run to
    run).  The corpus's bytes and its distinct (input, bad output) pairs are keyed by it."""
    return _plain_text(_sorted_sets(wire.to_plain(value)))


def pair_key(program: int, index: Any, output: Any, text: str | None = None, position: int | None = None) -> tuple:
    """What makes a bad output distinct: (input index, output text); an output that holds
    an opaque value is equal only to itself (as the sandbox's :class:`~.wire.Opaque` and
    Python's default ``==`` on such objects), so it is a pair of its own program's.  A long
    string known by its digest (:class:`.observe.LongStr`) is keyed by the digest: in one
    build a string of that length always comes as a digest, so equal ones get equal keys
    (the NUL that starts the key starts no JSON text).  Any other text over
    :data:`DIGEST_STRINGS_OVER` characters is keyed by its digest too: equal texts, equal
    keys, and a set of keys does not hold a second copy of each (an evaluation reads
    HumanEval/15's 3.4 GB of long strings whole, and keyed by text held them twice).
    ``text``: ``stable_text(output)``, if known.  ``position``: the input's place in the list,
    where ``index`` is its value (an evaluation's ``--nl2postcond-pairs``): an output equal only
    to itself given on an input listed twice is two objects, two pairs (upstream's key, the
    object's text, names its address: HumanEval/42's ``map`` on its repeated input is one pair
    more than the value key gave, /17's reversed lists two, upstream's figures)."""
    if isinstance(output, LongStr):
        return (index, f"\0str {output.digest} {output.length}")
    if isinstance(output, StoredValue):  # its text is over DIGEST_STRINGS_OVER: stored for that
        return (index, "\0text " + output.digest, program, position) if output.opaque else (index, "\0text " + output.digest)
    text = stable_text(output) if text is None else text
    opaque = _per_program(text)
    if len(text) > DIGEST_STRINGS_OVER:
        text = "\0text " + wire.string_digest(text)
    return (index, text, program, position) if opaque else (index, text)


_OPAQUE_TAG = '{"o":"'  # an opaque value's tag; inside a string the quotes would be escaped
_ITERATED_TAG = '{"g":["'  # an iterator's (wire.Iterated): like the object, equal only to itself


def _per_program(text: str) -> bool:
    """Does a value's wire text hold a value equal only to itself (an opaque value, an
    iterator's items): its pair is its own program's."""
    return _OPAQUE_TAG in text or _ITERATED_TAG in text
_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")


def _plain_text(plain: Any) -> str:
    return json.dumps(plain, allow_nan=True, separators=(",", ":"))  # as wire.dumps writes plain data


def _sorted_sets(plain: Any) -> Any:
    if isinstance(plain, list):
        return [_sorted_sets(v) for v in plain]
    if isinstance(plain, dict) and len(plain) == 1:
        (tag, body), = plain.items()
        if tag in ("s", "f"):
            members = [_sorted_sets(v) for v in body]
            return {tag: [m for _, m in sorted(((_plain_text(m), m) for m in members), key=lambda km: km[0])]}
        if tag in ("t", "d") and isinstance(body, list):
            return {tag: [_sorted_sets(v) for v in body]}
        if tag == "g" and isinstance(body, list) and len(body) == 2 and isinstance(body[1], list):
            return {tag: [body[0], [_sorted_sets(v) for v in body[1]]]}
    if isinstance(plain, dict) and set(plain) == {"o", "r"} and isinstance(plain["r"], str):
        return {"o": plain["o"], "r": _ADDRESS.sub(" at 0x", plain["r"])}
    return plain


def read_candidates(path: Path) -> Iterator[Candidate]:
    """Candidate programs from upstream's zip (or a plain JSON-lines file) with
    ``task_id``, ``response_num`` and ``solution``."""
    if path.suffix == ".zip":
        with zipfile.ZipFile(path) as zf:
            names = [n for n in zf.namelist() if n.endswith(".jsonl")]
            if not names:
                raise DataError(path, None, "no .jsonl file inside")
            lines: Iterable[str] = io.TextIOWrapper(zf.open(names[0]), encoding="utf-8").readlines()
    else:
        lines = path.read_text(encoding="utf-8").splitlines()
    for lineno, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
            yield Candidate(str(obj["task_id"]), int(obj["response_num"]), str(obj["solution"]))
        except (ValueError, KeyError, TypeError):
            raise DataError(path, lineno, "expected task_id, response_num and solution") from None


def exact_match(task: Mapping[str, Any], inp: Any, out: Any, exp: Any) -> bool:
    """``--oracle exact``: equal outputs only (no float tolerance, no special oracle)."""
    try:
        return type(out) is type(exp) and bool(out == exp)
    except Exception:  # noqa: BLE001
        return False


ORACLES = {"evalplus": outputs_match, "exact": exact_match}


def select(task: Mapping[str, Any], reference: Sequence[Any], programs: Sequence[Candidate],
           observations: Mapping[int, Sequence[Any]], oracle: str = "evalplus") -> list[Kept]:
    """The distinct programs with bad outputs, in ``response_num`` order
    (pure: ``observations[program]`` are :class:`.observe.Observation` s); ``oracle``
    decides what a bad output is (:data:`ORACLES`)."""
    is_bad = bad_output_test(task, reference, oracle)
    seen: set[tuple] = set()
    kept = []
    # The copies of a program share its observations (``build`` runs each run_key once): each
    # observation's verdict and text are worked out once, not once per copy (HumanEval/22: 300
    # candidates, 77 runs; the text of every bad output was the build's own largest cost there).
    known: dict[int, Bopi | None] = {}
    reference_names = reference_parameters(task)
    for cand in sorted(programs, key=lambda c: c.program):
        bopi = []
        for o in observations.get(cand.program, ()):
            if id(o) not in known:  # (the mapping holds every observation: no id is reused meanwhile)
                known[id(o)] = Bopi(o.index, o.args_after, o.result, None if isinstance(o.result, (LongStr, StoredValue))
                                    else stable_text(o.result)) \
                    if o.status == "ok" and is_bad(o.index, o.result) else None
            if known[id(o)] is not None:
                bopi.append(known[id(o)])
        pairs = {pair_key(cand.program, b.index, b.output, b.text) for b in bopi}
        if bopi and not pairs <= seen:
            seen |= pairs
            kept.append(Kept(cand.task_id, cand.program, cand.program < NATURAL, tuple(bopi),
                             own_parameters(cand.code, task, reference_names)))
    return kept


def str_digest_over(task: Mapping[str, Any], oracle: str) -> int | None:
    """Above what length a candidate's ``str`` result comes back as a digest
    (:class:`.observe.LongStr`), or None: only where equal strings are a right output and
    unequal ones a bad one (the ``exact`` oracle, or EvalPlus's where it is plain equality)."""
    return DIGEST_STRINGS_OVER if oracle == "exact" or equality_judged(task) else None


def bad_output_test(task: Mapping[str, Any], reference: Sequence[Any], oracle: str):
    """``is_bad(index, output)``: is ``output`` on input ``index`` a bad output under
    ``oracle`` (:data:`ORACLES`)?  A :class:`.observe.LongStr` is a right output iff the
    reference's is a string with its digest (:func:`str_digest_over` says where a build
    asks for digests: there string equality is the oracle's verdict)."""
    matches = ORACLES[oracle]
    inputs = list(task["base_input"]) + list(task["plus_input"])
    digests: dict[int, tuple[str, int] | None] = {}

    def is_bad(index: int, output: Any) -> bool:
        if isinstance(output, LongStr):
            if index not in digests:
                ref = reference[index]
                digests[index] = (wire.string_digest(ref), len(ref)) if type(ref) is str else None
            return digests[index] != (output.digest, output.length)
        return not matches(task, inputs[index], output, reference[index])
    return is_bad


def corpus_key(candidates: Path, evalplus_file: Path, inputs: str, oracle: str = "evalplus",
               time_rule: str = "flat", candidate_inputs: str = "fresh",
               stop_after: Sequence[int] | None = STOP_AFTER_TIMEOUTS) -> str:
    text = f"{FORMAT}|{file_digest(candidates)}|{file_digest(evalplus_file)}|{inputs}|{oracle}"
    text += "" if time_rule == "flat" else f"|{time_rule_stamp(time_rule, 0.0)}"  # flat: the key of session 17
    text += "" if candidate_inputs == "fresh" else f"|candidates on {candidate_inputs} inputs"
    # the default rule: the key it always had; another (or none) is another corpus, not the default's file
    if tuple(stop_after or ()) != STOP_AFTER_TIMEOUTS:
        text += f"|stop after {' '.join(map(str, stop_after)) if stop_after else 'off'}"
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def program_key(code: str) -> str:
    """What decides a program's behaviour, for running each distinct program once:
    its syntax tree without positions (comments, blank lines, quoting and layout
    do not change what it computes; docstrings are in the tree and stay), or its
    exact text when it does not parse.  Of upstream's 49,200 programs, 47,000 are
    distinct as text and 34,978 by this key.  (A program that returns a line
    number of its own would be the exception; none of the corpus's counts moved,
    tests/test_nl2postcond.py.)"""
    try:
        return "ast:" + ast.dump(ast.parse(code), include_attributes=False)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return "text:" + code


def run_key(code: str) -> str:
    """:func:`program_key` with the names a program's functions bind for themselves (parameters,
    and names assigned in a function, a lambda or a comprehension) replaced by their order of first
    appearance: programs that differ only in such names compute the same thing (alpha-equivalence;
    the harness calls the entry point with positional arguments only).  Of upstream's 49,200
    programs 34,978 are distinct by :func:`program_key` and 29,873 by this key (HumanEval/15: 166
    -> 92 runs; docs/nl2postcond.md, "Less work").  Only where no name can be observed as text or
    resolve otherwise (:func:`_renamable`): else :func:`program_key`."""
    try:
        tree = ast.parse(code)
        local = _renamable(code, tree)
        if not local:
            return program_key(code)
        order: dict[str, str] = {}
        for node in ast.walk(tree):  # the walk's order depends on the tree's shape only
            if isinstance(node, ast.Name) and node.id in local:
                node.id = order.setdefault(node.id, f"\0local{len(order)}")  # no identifier has a NUL
            elif isinstance(node, ast.arg) and node.arg in local:
                node.arg = order.setdefault(node.arg, f"\0local{len(order)}")
        return "alpha:" + ast.dump(tree, include_attributes=False)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return program_key(code)


# What lets a program see a name as text, or a frame, a code object or an exception's message (which
# names a variable: "cannot access local variable 'x'"): its local names then are data.
_REFLECTION = frozenset({"locals", "vars", "eval", "exec", "dir", "globals", "compile", "__import__", "breakpoint",
                         "help", "getattr", "setattr", "delattr", "hasattr", "get_type_hints", "signature",
                         "getfullargspec"})
_REFLECTIVE_MODULES = frozenset({"sys", "inspect", "traceback", "dis", "gc", "ctypes", "types", "pdb", "code",
                                 "codeop", "linecache", "logging", "warnings", "builtins", "pickle", "marshal",
                                 "copyreg", "doctest", "pydoc", "ast", "symtable", "tokenize", "importlib"})
_FRAME_PREFIXES = ("_", "f_", "co_", "tb_", "gi_", "cr_", "ag_")


def _renamable(code: str, tree: ast.AST) -> frozenset[str]:
    """The names :func:`run_key` may rename in ``tree``: those bound by an assignment target or a
    parameter inside a function, lambda or comprehension, none of them also a module's or a
    class's name, a global or builtin any function reads, a keyword argument's name or bound
    another way (``def``, ``import``, ``except ... as``, ``match``); empty (rename nothing) when the
    program reflects on itself (:data:`_REFLECTION`, :data:`_REFLECTIVE_MODULES`, an attribute
    named ``_...`` or of a frame or code object, ``global``/``nonlocal``, a ``**`` argument;
    ``f"{x=}"`` needs none: its text is a constant of the tree).  Each name left is, at every
    occurrence, a local of some function's own (the symbol table says how each scope resolves
    it), so renaming it everywhere changes nothing a program computes; the new names contain a
    NUL, so they meet no other name."""
    import symtable

    bound: set[str] = set()
    other: set[str] = set()  # bound otherwise than by a Name or a parameter
    keywords: set[str] = set()

    def visit(node: ast.AST, in_function: bool) -> bool:
        if isinstance(node, (ast.Global, ast.Nonlocal, ast.Match)) or \
                isinstance(node, ast.ExceptHandler) and node.name is not None:
            return False
        if isinstance(node, ast.Name) and node.id in _REFLECTION or isinstance(node, ast.Attribute) and (
                node.attr in _REFLECTION or node.attr.startswith(_FRAME_PREFIXES)):
            return False
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names = [a.name for a in node.names] + ([node.module] if isinstance(node, ast.ImportFrom) and node.module
                                                     else [])
            if any(n.split(".")[0] in _REFLECTIVE_MODULES for n in names) or any(a.name in _REFLECTION
                                                                                 for a in node.names):
                return False
            other.update((a.asname or a.name).split(".")[0] for a in node.names)
        if isinstance(node, ast.keyword):
            if node.arg is None:
                return False
            keywords.add(node.arg)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            other.add(node.name)
        if in_function and isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            bound.add(node.id)
        if isinstance(node, ast.arg):
            bound.add(node.arg)
        inner = in_function or isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ListComp,
                                                 ast.SetComp, ast.DictComp, ast.GeneratorExp))
        return all(visit(child, inner) for child in ast.iter_child_nodes(node))

    if not visit(tree, False):
        return frozenset()
    try:
        table = symtable.symtable(code, "<sample>", "exec")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return frozenset()
    elsewhere: set[str] = set()  # names a module or class scope has, or a function reads as global
    tables = [table]
    while tables:
        scope = tables.pop()
        tables.extend(scope.get_children())
        if str(scope.get_type()) in ("module", "class", "SymbolTableType.MODULE", "SymbolTableType.CLASS"):
            elsewhere.update(s.get_name() for s in scope.get_symbols())
        else:
            elsewhere.update(s.get_name() for s in scope.get_symbols() if s.is_global() or s.is_declared_global())
    return frozenset() if bound & (other | keywords | elsewhere) else frozenset(bound)


def distinct_programs(programs: Sequence[Candidate], key=None) -> dict[str, list[Candidate]]:
    """``{key: [candidates]}`` (``key``: :func:`run_key`, or :func:`program_key`), each group in
    ``response_num`` order."""
    key = key or run_key
    groups: dict[str, list[Candidate]] = {}
    for cand in sorted(programs, key=lambda c: c.program):
        groups.setdefault(key(cand.code), []).append(cand)
    return groups


class ExecutorPool:
    """At most ``len(executors)`` sandbox jobs at a time, one per executor (an
    executor is not thread-safe: a thread takes one from the queue for a job and
    gives it back).  Each program runs in a job of its own, as before: a child
    forked for it alone, so no candidate sees another's state or outputs."""

    def __init__(self, executors: Sequence[Any]):
        self.executors = list(executors)
        self._free: queue.Queue = queue.Queue()
        for ex in self.executors:
            self._free.put(ex)
        self._threads = ThreadPoolExecutor(max_workers=len(self.executors))

    def run(self, fn, *args):
        """``fn(executor, *args)`` on a free executor (a future)."""
        def job():
            ex = self._free.get()
            try:
                return fn(ex, *args)
            finally:
                self._free.put(ex)
        return self._threads.submit(job)

    def close(self) -> None:
        self._threads.shutdown(wait=True)


class TaskRunsJournal:
    """The runs of a task's distinct programs, a record each as it finishes
    (``<task>.runs`` beside the parts; not ``*.jsonl``, so never taken for a part): a build
    stopped within a task (HumanEval/163's 192 distinct programs take about an hour) resumes
    without running again the programs it has run.  A record holds the program's key
    (:func:`program_key`) and its observations as :func:`observe_bad` returned them, pickled:
    the selection reads their types (``exact``) and texts, and the wire's own text is not a
    round trip of every value the sandbox sends (an opaque value decoded, encoded again, is
    wrapped once more); read back by an unpickler that makes no object but plain data, the
    observations and the sandbox's opaque values (:data:`JOURNAL_CLASSES`).  A later record
    for a key stands (a program run again alone after a wall-clock stop); the part written,
    the journal is removed.  A record a stop cut short (the last one) is not taken: that
    program runs again.  Each record names the limits its run had (``limits``: each call's
    CPU limit and the stop rule, which under ``--time-rule upstream`` follow the reference's
    timing of that run); a record of other limits is not taken."""

    def __init__(self, path: Path, limits: Any = None):
        self.path = path
        self.limits = hashlib.sha256(json.dumps(limits).encode()).hexdigest()[:16]
        self._lock = threading.Lock()

    def read(self) -> dict[str, list]:
        runs: dict[str, list] = {}
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            return runs
        at = 0
        while at + 8 <= len(data):
            size = int.from_bytes(data[at:at + 8], "big")
            record = data[at + 8:at + 8 + size]
            at += 8 + size
            if len(record) < size:
                break  # cut short by a stop: the program runs again
            try:
                limits, key, observations = _JournalUnpickler(io.BytesIO(record)).load()
            except Exception:  # noqa: BLE001 - a damaged record is one program run again, not a failed build
                continue
            if limits == self.limits:
                runs[str(key)] = list(observations)
        return runs

    def add(self, key: str, observations: Sequence[Any]) -> None:
        record = pickle.dumps((self.limits, key, list(observations)), protocol=5)
        with self._lock, self.path.open("ab") as fh:
            fh.write(len(record).to_bytes(8, "big") + record)

    def remove(self) -> None:
        self.path.unlink(missing_ok=True)


# What a journal's records may make: plain data, and these (module, name).
JOURNAL_CLASSES = frozenset({("builtins", "set"), ("builtins", "frozenset"), ("builtins", "complex"),
                             ("pytest_specbench.benchmarks.nl2postcond.observe", "Observation"),
                             ("pytest_specbench.benchmarks.nl2postcond.observe", "LongStr"),
                             ("pytest_specbench.benchmarks.nl2postcond.corpus", "StoredValue"),
                             ("pytest_specbench.execution.wire", "Opaque"),
                             ("pytest_specbench.execution.wire", "Iterated")})


class _JournalUnpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:
        if (module, name) not in JOURNAL_CLASSES:
            raise pickle.UnpicklingError(f"{module}.{name} is not in a task's runs journal")
        return super().find_class(module, name)


def _observed_and_journaled(executor, journal: TaskRunsJournal, key: str, *args) -> list:
    observations = observe_bad(executor, *args)
    journal.add(key, observations)
    return observations


def build(tasks: Mapping[str, Mapping[str, Any]], candidates: Path, out: Path, executors, limits, inputs: str,
          only: Sequence[str] = (), log=None, oracle: str = "evalplus", time_rule: str = "flat",
          stop_after: tuple[int, int] | None = STOP_AFTER_TIMEOUTS, progress_every: float = PROGRESS_EVERY,
          candidate_inputs: str = "fresh") -> dict[str, Any]:
    """Build the corpus into ``out`` (resuming from ``out``'s part folder); returns figures.

    ``executors``: one executor, or several run side by side (a bounded pool,
    :class:`ExecutorPool`).  Each distinct program (:func:`program_key`) runs
    once; its observations stand for every candidate with its key, and the
    selection sees all candidates in ``response_num`` order as before (a later
    copy adds no pair, so it is never kept): the counts are the same.  Each call's CPU limit
    follows ``time_rule`` (:func:`call_limits`); ``stop_after`` is the stop rule (time-outs in a
    row, in all: :data:`STOP_AFTER_TIMEOUTS`); while a task's programs run, a line every
    ``progress_every`` seconds says how many are done.  ``candidate_inputs``: ``fresh`` (each
    candidate gets the task's inputs as stored) or ``after-reference`` (as the reference's call
    left them, upstream's EvalPlus 0.1.5: :func:`inputs_after_reference`)."""
    log = log or (lambda line: print(line, flush=True))
    executors = list(executors) if isinstance(executors, (list, tuple)) else [executors]
    pool = ExecutorPool(executors)
    parts = out.with_name(out.name + ".parts")
    parts.mkdir(parents=True, exist_ok=True)
    stop_after = tuple(stop_after) if stop_after else None  # None: no stop rule (--stop-after-timeouts off)
    rules = build_rules(candidates, limits, inputs, oracle, time_rule, stop_after, candidate_inputs)
    _check_rules(parts, rules, log)
    long_store = LongStore(parts / "long")
    by_task: dict[str, list[Candidate]] = {}
    for cand in read_candidates(candidates):
        by_task.setdefault(cand.task_id, []).append(cand)
    wanted = [t for t in tasks if t in by_task and (not only or t in only)]
    figures = {"tasks": len(wanted), "programs": 0, "runs": 0, "kept": 0, "bopi": 0, "wall": 0.0,
               "skipped_tasks": 0, "left_out": []}
    start, cpu0 = time.monotonic(), time.process_time()
    try:
        for n, task_id in enumerate(sorted(wanted, key=task_order), 1):
            part = parts / (task_id.replace("/", "_") + ".jsonl")
            if part.exists():
                figures["skipped_tasks"] += 1
                continue
            task, t0 = tasks[task_id], time.monotonic()
            calls = test_inputs(task, inputs)
            key = f"{task_id}:nl2postcond-corpus-{inputs}"
            ref = observe(executors[0], canonical_program(task), task, key, calls, limits.call_cpu * 20)
            if any(o.status != "ok" for o in ref):
                log(f"{task_id}: the reference fails on a test input; task left out")
                figures["left_out"].append(task_id)
                continue
            reference = [o.result for o in ref]
            per_call = call_limits(time_rule, _reference_cpu(executors[0], task, key, calls, limits, ref, time_rule),
                                   limits.call_cpu)
            if candidate_inputs == "after-reference":
                calls, key = inputs_after_reference(calls, ref, key)
            groups = distinct_programs(by_task[task_id])
            journal = TaskRunsJournal(part.with_suffix(".runs"), [per_call, stop_after])  # as JSON: the list it was
            done = {k: obs for k, obs in journal.read().items() if k in groups}
            if done:
                log(f"{task_id}: {len(done)} of {len(groups)} distinct programs' runs taken from {journal.path.name} "
                    f"(a build stopped within the task)")
            futures = {k: pool.run(_observed_and_journaled, journal, k, group[0].code, task, key, calls, per_call,
                                   stop_after, RERUN_WALL_FACTOR, reference, oracle, long_store)
                       for k, group in groups.items() if k not in done}
            seen = {**done, **_results_with_progress(futures, task_id, t0, log, progress_every)}
            seen = {k: seen[k] for k in groups}  # the order of a build that was not stopped
            loaded = [k for k, obs in seen.items() if any(o.wall_stop for o in obs)]
            for k in loaded:  # the pool is idle now: one program at a time
                seen[k] = _observed_and_journaled(executors[0], journal, k, groups[k][0].code, task, key, calls,
                                                  per_call, stop_after, RERUN_WALL_FACTOR, reference, oracle,
                                                  long_store)
            still = [k for k in loaded if any(o.wall_stop for o in seen[k])]
            if still:
                load, cores, names = machine_load(), os.cpu_count() or 1, [groups[k][0].program for k in still][:5]
                if load >= cores:
                    log(f"{task_id}: programs {names} were stopped by the wall clock with CPU time to spare (the "
                        f"machine's load, {load:.1f} on {cores} cores), run alone too; task left for a later run "
                        f"(resume builds it)")
                    figures["left_out"].append(task_id)
                    continue
                # Run alone on a machine that was not overloaded, and stopped by the wall clock again:
                # the program's own time-outs (it computed, then blocked: HumanEval/129's program 35
                # spends 0.2 CPU s on some inputs before it waits on an empty queue for ever).
                log(f"{task_id}: programs {names} were stopped by the wall clock again, run alone at load "
                    f"{load:.1f} on {cores} cores: their own time-outs")
                for k in still:
                    seen[k] = [replace(o, wall_stop=False) for o in seen[k]]
            stopped = sum(stop_decided(obs, stop_after) for obs in seen.values())
            observations = {c.program: seen[k] for k, group in groups.items() for c in group}
            kept = select(task, reference, by_task[task_id], observations, oracle)
            del seen, observations
            code = {c.program: c.code for c in by_task[task_id]}
            tmp = part.with_suffix(".tmp")
            try:
                with tmp.open("w", encoding="utf-8") as fh:
                    for k in kept:
                        store_long_outputs(executors[0], k, code[k.program], task, key, calls,
                                           limits.call_cpu * 20, long_store, per_call, stop_after, oracle)
                        fh.write(k.line(long_store) + "\n")
            except NotReproduced as exc:
                tmp.unlink()
                if isinstance(exc, StoreLost):
                    journal.remove()
                log(f"{task_id}: {exc}; task left for a later run (resume builds it)")
                figures["left_out"].append(task_id)
                continue
            os.replace(tmp, part)
            journal.remove()
            pin_note = _against_part_pin(task_id, part, rules)
            bopi = sum(len(k.bopi) for k in kept)
            figures["programs"] += len(by_task[task_id])
            figures["runs"] += len(groups)
            figures["kept"] += len(kept)
            figures["bopi"] += bopi
            figures["reruns"] = figures.get("reruns", 0) + len(loaded)
            figures["stopped"] = figures.get("stopped", 0) + stopped
            log(f"[{n}/{len(wanted)}] {task_id}: {len(by_task[task_id])} programs ({len(groups)} distinct, run"
                f"{f'; {len(loaded)} again, alone, after a wall-clock stop' if loaded else ''}), "
                f"{len(kept)} kept, {bopi} bopi ({time.monotonic() - t0:.1f} s)"
                f"{f'; {stopped} stopped by the stop rule, their later inputs counted as time-outs' if stopped else ''}"
                f"{pin_note}")
    finally:
        pool.close()
    done = parts_in_order(parts)
    # Every task with candidates has its part (whatever --tasks this run had: a build in chunks
    # completes too): the corpus is whole, and its hash can be checked against the pin.
    figures["whole"] = {p.stem for p in done} >= {t.replace("/", "_") for t in tasks if t in by_task}
    tmp = out.with_suffix(".tmp")
    with tmp.open("w", encoding="utf-8") as fh:
        for part in done:
            fh.write(part.read_text(encoding="utf-8"))
    os.replace(tmp, out)
    figures["wall"] = round(time.monotonic() - start, 1)
    figures["harness_cpu"] = round(time.process_time() - cpu0, 1)
    return figures


def machine_load() -> float:
    """The machine's load over the last minutes (the larger of the 1- and 5-minute averages):
    a program stopped by the wall clock again while run alone on a machine below its core count
    was not starved (:func:`build`)."""
    one, five, _ = os.getloadavg()
    return max(one, five)


def _results_with_progress(futures: Mapping[str, Any], task_id: str, t0: float, log, every: float) -> dict:
    """Each future's result by its key, with a line every ``every`` seconds (0: none) until all are done."""
    pending, total = set(futures.values()), len(futures)
    next_line = time.monotonic() + every
    while pending:
        _, pending = wait(pending, timeout=max(0.0, next_line - time.monotonic()) if every else None)
        if pending and time.monotonic() >= next_line:
            log(f"{task_id}: {total - len(pending)} of {total} distinct programs run "
                f"({time.monotonic() - t0:.0f} s)")
            next_line += every
    return {k: f.result() for k, f in futures.items()}


def parse_stop_rule(words: Sequence[str]) -> tuple[int, int] | None:
    """``--stop-after-timeouts``: IN_A_ROW IN_ALL (positive counts), or ``off``: every program runs
    on every input, as in upstream's EvalPlus run (docs/nl2postcond.md, "The stop rule").  A count
    of 0 would end every program after its first call, so it is refused, as is anything else."""
    if [w.lower() for w in words] == ["off"]:
        return None
    try:
        counts = tuple(int(w) for w in words)
    except ValueError:
        counts = ()
    if len(counts) != 2 or min(counts) < 1:
        raise ValueError(f"--stop-after-timeouts: two positive counts (IN_A_ROW IN_ALL) or off, got {' '.join(words)!r}")
    return counts  # type: ignore[return-value]


def stop_decided(observations: Sequence[Any], stop_after: Sequence[int] | None) -> bool:
    """Did the stop rule end this program before its last input (``stop_after``: time-outs in a
    row, in all)?  Its inputs after the stop are time-outs it may not have had: HumanEval/94's
    programs 208 and 229, stopped at input 148, give 420 more bad outputs each when run on every
    input (docs/nl2postcond.md, "The stop rule drops bad outputs upstream had"), so the build
    says how many programs of a task the rule ended."""
    rule = StopRule(stop_after)
    for n, o in enumerate(observations):
        if not rule.go_on(o.status == "timeout"):
            return n < len(observations) - 1
    return False


def inputs_after_reference(calls: Sequence[tuple[tuple, dict]], ref: Sequence[Any], key: str) -> tuple[list, str]:
    """The calls the candidates run under ``--candidate-inputs after-reference``: each input as the
    reference's call left it, and the key of that list.  Upstream ran its candidates in EvalPlus
    0.1.5 (its Dockerfile), whose ground truth (``evalplus.gen.util.trusted_exec``) calls the
    reference on the task's own input lists, no copy made, before the candidates run on the same
    lists: an input the reference changes in place reaches the candidates changed.  Of HumanEval+'s 164 references one does, HumanEval/20's
    (``numbers.sort()``), on 4 of its 1,005 inputs (its base inputs; EvalPlus's plus inputs are
    stored sorted).  Run on the sorted lists, its candidates give upstream's 25 programs and 2
    natural ones; on the inputs as stored, 29 and 3 (docs/nl2postcond.md, 'Session 30').
    An input the reference left as it was (the same wire text) stays the object it was; the
    key changes only if some input changed, so the sandbox's cached inputs of every other task
    are the ones it had."""
    out, changed = [], False
    for call, obs in zip(calls, ref):
        (args, kwargs), after = call, tuple(obs.args_after)
        try:
            same = len(after) != len(args) or wire.dumps(list(after)) == wire.dumps(list(args))
        except Exception:  # noqa: BLE001 - a value the wire does not take: keep the input as it was
            same = True
        out.append(call if same else (after, kwargs))
        changed = changed or not same
    return (out, key + ":after-reference") if changed else (list(calls), key)


def observe_bad(executor, code: str, task: Mapping[str, Any], key: str, calls, per_call, stop_after, wall_factor,
                reference: Sequence[Any], oracle: str, store: "LongStore | None" = None) -> list:
    """A candidate's observations (:func:`.observe.observe`) with each output the oracle
    accepts dropped as soon as the program is done (status ``good``: the selection reads
    only bad outputs).  A task's programs' right outputs were all held until its selection:
    HumanEval/15's, strings of up to 6.9 MB on its large inputs, took the build to 3.9 GB.

    With ``store``, a bad output whose text is over :data:`DIGEST_STRINGS_OVER` characters
    goes into it at once and the observation holds a :class:`StoredValue` (digest and length):
    the part's line names it so anyway (:meth:`Kept.line`), and the selection keys it by that
    digest (:func:`pair_key`).  HumanEval/163's 192 programs' bad lists, held decoded until
    the selection, took the build's harness past 8.5 GB in session 26."""
    from .observe import Observation

    is_bad = bad_output_test(task, reference, oracle)
    return [Observation(o.index, "good") if o.status == "ok" and not is_bad(o.index, o.result)
            else _stored_at_once(o, store) if o.status == "ok" and store is not None else o
            for o in observe(executor, code, task, key, calls, per_call, stop_after, wall_factor,
                             str_digest_over(task, oracle))]


def _stored_at_once(observation, store: "LongStore"):
    """``observation`` with its bad output put in ``store`` if its text is long (:func:`observe_bad`)."""
    if isinstance(observation.result, LongStr):
        return observation  # a digest already: fetched whole only if its program is kept
    text = stable_text(observation.result)
    if len(text) <= DIGEST_STRINGS_OVER:
        return observation
    return replace(observation, result=StoredValue(store.put(text), len(text), _per_program(text)))


class NotReproduced(Exception):
    """A kept program's long string output, run again to fetch it whole, was not the one
    its digest named (a program whose output changes from run to run, or a time-out)."""


class StoreLost(NotReproduced):
    """A kept program's long output its run put in the store is not there any more (the
    store's folder emptied between a stopped build and its resume): the task's journal,
    which names it, is dropped and the task runs again."""


def store_long_outputs(executor, kept: Kept, code: str, task: Mapping[str, Any], key: str, calls,
                       cpu: float, store: "LongStore", per_call: Sequence[float], stop_after: tuple[int, int] | None,
                       oracle: str) -> None:
    """Put ``kept``'s long string bad outputs (:class:`.observe.LongStr`) that ``store`` does not
    hold yet into it: the program runs again, alone, and each output must have the digest and
    arguments after the call the first run gave (else :class:`NotReproduced`).
    A string another program gave is not fetched again; only a kept program's long outputs ever cross
    the sandbox's boundary whole, one call's at a time into the store.

    The second run replays the first one's calls from input #0 up to the last output it fetches, in
    one process, with the first run's limits (``per_call``, ``stop_after``; ``cpu`` seconds for each
    fetched call: the first run already decided that it ends in time), the other long strings
    coming back as digests again: a call's time can depend on what ran before it in its process.
    HumanEval/44's program 295 (``res += str(remainder)``, 1,111,111 times) took 0.2-0.3 CPU s on
    input #117 after inputs #0-#116, and over 20 s run alone or after #112-#116 only (how the
    allocator grows the string depends on the process's history): run on the fetched inputs alone,
    the build left the task out."""
    for b in kept.bopi:
        if isinstance(b.output, StoredValue) and b.output.digest not in store:
            raise StoreLost(f"program {kept.program}, input #{b.index}: its {b.output.length}-character output "
                            f"{b.output.digest} is not in {store.folder} any more; the task runs again")
    wanted = {b.index: b for b in kept.bopi if isinstance(b.output, LongStr) and b.output.digest not in store}
    if not wanted:
        return
    upto = range(max(wanted) + 1)
    limits = [cpu if i in wanted else per_call[i] for i in upto]
    for o in observe(executor, code, task, key, calls, limits, stop_after, RERUN_WALL_FACTOR,
                     str_digest_over(task, oracle), indices=upto, whole=sorted(wanted)):
        if o.index not in wanted:
            continue
        long = wanted[o.index].output
        if not (o.status == "ok" and type(o.result) is str and len(o.result) == long.length
                and wire.string_digest(o.result) == long.digest
                and stable_text(list(o.args_after)) == stable_text(list(wanted[o.index].args_after))):
            got = "another output" if o.status == "ok" else f"{o.status} {o.exc_type}".rstrip()
            raise NotReproduced(f"program {kept.program}, input #{o.index}: run again to fetch its "
                                f"{long.length}-character output whole, it gave {got}")
        store.put(o.result)


def reference_outputs(executor, task: Mapping[str, Any], inputs: str, limits) -> list[Any]:
    """The reference's output per test input (base then plus, ``inputs``), run in the sandbox
    with the build's limits: what a recorded bad output is compared with under Python's ``==``
    (``--nl2postcond-oracle=eq``) where no evaluation runs (``agreement --runs-only``)."""
    calls = test_inputs(task, inputs)
    ref = observe(executor, canonical_program(task), task, f"{task['task_id']}:nl2postcond-corpus-{inputs}", calls,
                  limits.call_cpu * 20)
    failed = next((o for o in ref if o.status != "ok"), None)
    if failed is not None:
        raise DataError(f"{task['task_id']}: the reference fails on test input #{failed.index} "
                        f"({failed.status} {failed.exc_type})".rstrip())
    return [o.result for o in ref]


def _reference_cpu(executor, task, key, calls, limits, first, time_rule: str) -> list[float]:
    """The reference's CPU seconds per input: ``first``'s, or where one may lift a limit
    above the floor, the least of :data:`REFERENCE_TIMINGS` runs."""
    cpu = [o.cpu for o in first]
    if time_rule == "flat" or all(UPSTREAM_FACTOR * t < UPSTREAM_FLOOR / 2 for t in cpu):
        return cpu
    for _ in range(REFERENCE_TIMINGS - 1):
        again = observe(executor, canonical_program(task), task, key, calls, limits.call_cpu * 20)
        cpu = [min(t, o.cpu) if o.status == "ok" else t for t, o in zip(cpu, again)]
    return cpu


def _against_part_pin(task_id: str, part: Path, rules: Mapping[str, Any]) -> str:
    """The build's note on a part it wrote: the pinned part's bytes or not (only under the
    pin's rules; a part of other rules has nothing to be compared with)."""
    from ...data.corpus_pin import read_pin

    pin = read_pin()
    if pin.rules != dict(rules) or task_id not in pin.parts:
        return ""
    same = hashlib.sha256(part.read_bytes()).hexdigest() == pin.parts[task_id]
    return "; the pinned part" if same else "; DIFFERS from the pinned part (a program near its CPU limit?)"


RULES_FILE = "rules.json"


def build_rules(candidates: Path, limits, inputs: str, oracle: str, time_rule: str = "flat",
                stop_after: Sequence[int] | None = STOP_AFTER_TIMEOUTS, candidate_inputs: str = "fresh") -> dict[str, Any]:
    """Everything besides the task data that decides a part's bytes: the candidates,
    the per-call CPU limit (:func:`time_rule_stamp`), the stop rule, the inputs and the oracle;
    ``candidate_inputs`` only where it is not ``fresh`` (every folder built before it was, so their
    rules stay as they were)."""
    rules = {"format": FORMAT, "candidates": file_digest(candidates), "call_cpu": time_rule_stamp(time_rule, limits.call_cpu),
             "stop_after_timeouts": list(stop_after) if stop_after else None, "inputs": inputs, "oracle": oracle, "long_outputs": LONG_RULE}
    if candidate_inputs != "fresh":
        rules["candidate_inputs"] = candidate_inputs
    return rules


def _check_rules(parts: Path, rules: Mapping[str, Any], log=None) -> None:
    """A resumed build takes only parts built under its own rules (``parts/rules.json``):
    parts of other rules (older code, another limit or oracle) joined with new ones would
    make a corpus no single build writes.  HumanEval/1's parts of two builds differed so
    (docs/nl2postcond.md, 'Deterministic'): the first was built before the stop rule.
    A folder of the rules before long outputs were stored apart (no ``long_outputs``) is the
    same bytes when none of its parts holds a long output: its ``rules.json`` is brought up to
    date (:func:`upgrade_rules`); one that holds one is refused as of other rules."""
    stamp = parts / RULES_FILE
    if stamp.is_file():
        try:
            theirs = json.loads(stamp.read_text(encoding="utf-8"))
        except ValueError:
            theirs = None
        if isinstance(theirs, dict) and "long_outputs" not in theirs and theirs == {
                k: v for k, v in rules.items() if k != "long_outputs"} and upgrade_rules(parts):
            (log or print)(f"{parts}: no part holds a long output: {RULES_FILE} now records where long outputs go")
            theirs = dict(rules)
        if theirs != dict(rules):
            changed = sorted(k for k in {*rules, *(theirs if isinstance(theirs, dict) else ())}
                             if not isinstance(theirs, dict) or theirs.get(k) != rules.get(k))
            raise DataError(parts, None, f"its parts were built under other rules ({', '.join(changed) or 'unreadable'}"
                                         f" differ): use another --out, or remove the folder to build afresh")
    elif any(parts.glob("*.jsonl")):
        raise DataError(parts, None, f"parts without {RULES_FILE} (built by older code, under rules not recorded): "
                                     f"use another --out, or remove the folder to build afresh")
    else:
        stamp.write_text(json.dumps(rules, sort_keys=True) + "\n", encoding="utf-8")


def upgrade_rules(parts: Path) -> bool:
    """Record :data:`LONG_RULE` in a parts folder of the rules before it, if none of its parts
    holds a long output (:func:`holds_long_output`: such a folder's parts are the bytes this
    code writes); True if the folder's rules now have it."""
    stamp = parts / RULES_FILE
    rules = json.loads(stamp.read_text(encoding="utf-8"))
    if "long_outputs" in rules:
        return True
    if holds_long_output(parts):
        return False
    rules["long_outputs"] = LONG_RULE
    tmp = stamp.with_suffix(".tmp")
    tmp.write_text(json.dumps(rules, sort_keys=True) + "\n", encoding="utf-8")
    os.replace(tmp, stamp)
    return True


def holds_long_output(parts: Path) -> bool:
    """Does a part of the folder hold a bad output whose text is over :data:`DIGEST_STRINGS_OVER`
    characters, written whole (older code's way)?  Only lines longer than that are parsed."""
    for part in parts_in_order(parts):
        with part.open("rb") as fh:
            for line in fh:
                if len(line) > DIGEST_STRINGS_OVER and any(
                        len(stable_text(o)) > DIGEST_STRINGS_OVER for _, _, o in wire.loads(json.loads(line)["bopi"])):
                    return True
    return False


def task_order(task_id: str) -> tuple[str, int]:
    """A sort key that puts HumanEval/2 before HumanEval/10."""
    prefix, _, number = task_id.rpartition("/")
    return (prefix, int(number)) if number.isdigit() else (task_id, -1)


def part_task(part: Path) -> str:
    """The task id a parts folder's file holds (``HumanEval_3.jsonl``: HumanEval/3)."""
    return part.stem.replace("_", "/")


def parts_in_order(parts: Path) -> list[Path]:
    """A build's parts folder's task files, in task order (the order the joined corpus has)."""
    return sorted(parts.glob("*.jsonl"), key=lambda p: task_order(part_task(p)))


def check_pinned(path: Path, pin=None, warn: bool = False, digests: Mapping[str, str] | None = None) -> list[str]:
    """Refuse, with one line, a corpus whose lines for a pinned task are not the pinned
    build's part (``registry/corpus/nl2postcond.txt``): built under other rules (another time
    rule, stop rule, oracle, inputs or candidates) or, rarely, a program that ended on the
    other side of its CPU limit on this machine (HumanEval/14 and /49 were built otherwise on
    two machines: docs/nl2postcond.md).  Tasks without a pin are taken as they are.  With
    ``warn`` (``--nl2postcond-corpus-pin=warn``) such tasks are taken too, and the one
    warning line naming them is returned (else nothing).  ``digests``: the file's part
    digests, if already read (:func:`.corpus_pin.read_parts`)."""
    from ...data.corpus_pin import differing_tasks

    differ = differing_tasks(path if digests is None else dict(digests), pin)
    if not differ:
        return []
    if warn:
        shown = ", ".join(task for task, _, _ in differ[:8]) + (" ..." if len(differ) > 8 else "")
        return [f"{path}: {len(differ)} task(s) not the pinned build's parts, taken as they are "
                f"(--nl2postcond-corpus-pin=warn): {shown}; their kill columns may differ from the pinned corpus's"]
    task, sha, pinned = differ[0]
    more = f" (and {len(differ) - 1} other task(s))" if len(differ) > 1 else ""
    raise DataError(path, None, f"{task}: not the pinned build's part{more} (sha256 {sha[:16]}..., pinned "
                                f"{pinned[:16]}...): built under other rules, or a program ended otherwise on "
                                f"this machine; rebuild it, or pass --nl2postcond-corpus-pin=warn (take it, "
                                f"named in a warning) or =off")


_LOADED: dict[Path, "CorpusFile"] = {}
CORPUS_LINE = "not a corpus line (task_id, program, natural, bopi)"


class CorpusFile(Mapping[str, list[Kept]]):
    """A built corpus read **task by task**: ``{task_id: [kept program]}`` as a mapping whose
    index (each task's lines: byte offset, length, first line number) is made by one pass over
    the file's bytes, and whose values are parsed only when a task is asked for.  The family
    needs one task's programs at a time (the adapter's ``correct`` check); reading the whole
    corpus at once held every task's bad outputs (86 MB of text for 34 tasks; HumanEval/15's
    part alone would be several GB).  A long output stays in the store (:class:`StoredStr`,
    :class:`StoredValue`: HumanEval/15's 9.7 MB of lines name 3.4 GB of them), read again
    when a job's cases are encoded.  The last tasks read are kept, within :data:`KEEP_BYTES`
    of their lines (always the last one), for the samples that follow."""

    KEEP_BYTES = 256 << 20

    def __init__(self, path: Path):
        from ...data.corpus_pin import line_task

        self.path = path
        self.long_store = LongStore.beside(path)
        self._index: dict[str, list[int]] = {}  # task -> [offset, length, first line number]
        self._kept: dict[str, list[Kept]] = {}  # insertion order = least recently read first
        self._held: dict[str, int] = {}  # task -> characters of its lines
        with path.open("rb") as fh:
            offset, lineno, last = 0, 0, None
            for lineno, line in enumerate(fh, 1):
                if line.strip():
                    task = line_task(line)
                    if task is None:
                        raise DataError(path, lineno, CORPUS_LINE)
                    if task != last and task in self._index:
                        raise DataError(path, lineno, f"{task}'s lines are not together (a build writes each "
                                                      f"task's lines as one part)")
                    entry = self._index.setdefault(task, [offset, 0, lineno])
                    entry[1] = offset + len(line) - entry[0]
                    last = task
                offset += len(line)

    def __getitem__(self, task_id: str) -> list[Kept]:
        if task_id in self._kept:
            self._kept[task_id] = self._kept.pop(task_id)  # most recently read
            return self._kept[task_id]
        offset, length, first = self._index[task_id]
        with self.path.open("rb") as fh:
            fh.seek(offset)
            text = fh.read(length).decode("utf-8")
        programs = []
        longs: dict[str, Any] = {}  # one reference to each long output for the task's programs

        def long_string(body: Any) -> StoredStr:
            # not read here: the text is read when a job's cases are encoded (StoredStr.held),
            # each string once per evaluation; its file is checked to be there now
            digest, size = body
            if digest not in longs:
                if str(digest) not in self.long_store:
                    raise ValueError(f"long output {digest} is not in {self.long_store.folder}")
                longs[digest] = StoredStr(str(digest), int(size), self.long_store, (self.path, lineno))
            return longs[digest]

        def long_value(body: Any) -> StoredValue:
            # read now to check it (and whether it holds an opaque value), not kept: decoded,
            # HumanEval/15's 190 MB of such texts were 1.5 GB of lists
            digest, size = body
            if digest not in longs:
                text = self.long_store.get(str(digest), int(size))
                longs[digest] = StoredValue(str(digest), int(size), _per_program(text), self.long_store,
                                            (self.path, lineno))
            return longs[digest]

        for lineno, line in enumerate(text.splitlines(), first):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
                bopi = tuple(Bopi(int(i), tuple(a), o) for i, a, o in wire.loads(obj["bopi"], {LONG_STRING: long_string,
                                                                                     LONG_VALUE: long_value}))
                params = obj.get("params")
                if params is not None and (type(params) is not list or not all(_bindable(n) for n in params)):
                    raise ValueError("params is not a list of names")
                programs.append(Kept(str(obj["task_id"]), int(obj["program"]), bool(obj["natural"]), bopi,
                                     None if params is None else tuple(params)))
            except (ValueError, KeyError, TypeError) as exc:
                why = f": {exc}" if str(exc).startswith(("long output", str(self.long_store.folder))) else ""
                raise DataError(self.path, lineno, f"{CORPUS_LINE}{why}") from None
        del text
        self._kept[task_id] = programs
        self._held[task_id] = length
        while len(self._kept) > 1 and sum(self._held[t] for t in self._kept) > self.KEEP_BYTES:
            del self._kept[next(iter(self._kept))]
        return programs

    def held(self) -> list[str]:
        """The tasks kept in memory, least recently read first."""
        return list(self._kept)

    def __iter__(self) -> Iterator[str]:
        return iter(self._index)

    def __len__(self) -> int:
        return len(self._index)

    def __contains__(self, task_id: object) -> bool:
        return task_id in self._index


def load(path: Path) -> CorpusFile:
    """A built corpus (:class:`CorpusFile`: indexed once per process, each task parsed when read)."""
    path = path.resolve()
    if path not in _LOADED:
        _LOADED[path] = CorpusFile(path)
    return _LOADED[path]


def tasks_with_part(digests: Mapping[str, str]) -> set[str]:
    """The tasks a corpus has a part for: those with lines in it (``digests``: its
    :func:`.corpus_pin.read_parts`), and those the pin records as empty (a task whose build
    kept no program has no line: :data:`.corpus_pin.EMPTY_PART`)."""
    from ...data.corpus_pin import EMPTY_PART, read_pin

    return set(digests) | {task for task, sha in read_pin().parts.items() if sha == EMPTY_PART}


def default_path(data_root: Path | None) -> Path | None:
    """Where the adapter looks for the corpus: the bundled suite's, or
    ``ROOT/nl2postcond/corpus.jsonl`` (what ``build-corpus`` writes by default)."""
    if data_root is None:
        from ...data.bundled import bundled_suite

        return bundled_suite("nl2postcond") / "corpus.jsonl"
    path = data_root / "nl2postcond" / "corpus.jsonl"
    return path if path.is_file() else None
