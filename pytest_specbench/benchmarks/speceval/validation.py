"""Dynamic validation: does a specification hold on the program's tests?

SpecEval decides a specification's correctness by running test cases against
the JML-instrumented program (§4.1).  That is the JML runtime checker's job
(issue 13: ``pytest_specbench/jml/`` and the ``jvm`` executor, written alongside this
family).  Every SpecEval check reaches it through :func:`clause_verdicts` only,
so wiring it is this one module.

``--speceval-validation=syntactic`` (or a build without the checker) falls
back to *syntactic* validation: a clause holds iff it is, after
normalisation, a ground-truth clause at the same place; exact for the
reference model, a lower bound on Precision and on infilling accuracy for
others, and no mutant is dropped from Judgement.  Each item's details say
which mode decided it (``validation``).
"""
from __future__ import annotations

import importlib
import os
import weakref
from dataclasses import dataclass
from typing import Any, NamedTuple



@dataclass(frozen=True)
class Verdicts:
    """One verdict per spec clause of the program, in source order (as
    :func:`.jmlspec.spec_blocks` lists them): True not refuted on any test call
    in its precondition's domain, False refuted, None not decided (the spec
    does not translate or compile, the program crashed)."""

    clauses: tuple[bool | None, ...]
    tests: int = 0  # test calls in the precondition's domain
    calls: int = 0  # test calls made
    status: str = "checked"  # the checker's status of the first run
    message: str = ""
    branch_coverage: float | None = None  # of the in-domain calls (first run); None: no branch, not run
    vacuous: bool = False  # no test call in the spec's domain: the clauses left are undecided (issue 25)


def checker_available() -> bool:
    try:
        importlib.import_module("pytest_specbench.jml")
    except ImportError:
        return False
    return True


def mode(requested: str) -> str:
    """``dynamic`` or ``syntactic`` for a ``--speceval-validation`` value
    (``unavailable`` when dynamic is asked for without the checker)."""
    if requested == "syntactic":
        return "syntactic"
    if not checker_available():
        return "unavailable" if requested == "dynamic" else "syntactic"
    return "dynamic"


# One checker per jvm executor, as long as the executor lives (by the object, not its
# id(): a new executor at an old one's address must not get the old checker).
_CHECKERS: "weakref.WeakKeyDictionary[Any, Any]" = weakref.WeakKeyDictionary()


def _jvm(ctx: Any):
    return ctx.executor("jvm")


def _checker(ctx: Any):
    from ...jml import JmlChecker

    jvm = _jvm(ctx)
    if jvm not in _CHECKERS:
        _CHECKERS[jvm] = JmlChecker(jvm)
    return _CHECKERS[jvm]


def jvm_missing(ctx: Any) -> str | None:
    """One line when javac/java are absent (the item is then skipped)."""
    if ctx is None:
        import shutil

        return None if shutil.which("javac") and shutil.which("java") else \
            "javac/java not found: apt-get install openjdk-17-jdk-headless"
    try:
        return _jvm(ctx).available()
    except Exception as exc:  # noqa: BLE001 - an executor kind this version lacks
        return f"the jvm executor is not available: {exc}"


# The verdicts of the checks this process made, per checker, by content (what was checked, the
# source, the tests, the admitted calls, the call limit): a program a perturbation left unchanged
# (one that has no if/else to flip, no independent statements to swap) is the original's again, and
# so is its mutant and, often, a model's answer on it; on SpecGenBench with every perturbation a
# third of the reference's generation and mutant checks were such repeats, each a javac and a JVM.
# The same content gets the same verdict, as for the ground truth (a verdict that a load spike
# made a timeout is not re-drawn by a repeat either).
_VERDICT_MEMO: "weakref.WeakKeyDictionary[Any, dict]" = weakref.WeakKeyDictionary()


def _memoized(what: str, checker: Any, source: str, tests_source: str | None, admitted, compute):
    import hashlib

    h = hashlib.sha256(f"{what}\0{getattr(checker, 'call_seconds', '')}\0".encode())
    h.update(source.encode("utf-8") + b"\0" + (tests_source or "").encode("utf-8") + b"\0")
    h.update(",".join(map(str, sorted(admitted or ()))).encode())
    memo = _VERDICT_MEMO.setdefault(checker, {})
    key = h.hexdigest()
    if key not in memo:
        memo[key] = compute()  # an InfrastructureError is raised, not remembered
    return memo[key]


def clause_verdicts(source_with_specs: str, tests_source: str | None, ctx: Any,
                    admitted: tuple | set | None = None) -> Verdicts:
    """Run the program's test calls (its ``daikon/`` driver, plus the checker's
    generated inputs where those are few) against the JML-instrumented program
    in the sandbox, and attribute each violation to its clause.

    The checker stops a call at its first violated clause, so the clauses are
    decided by rounds: a round's violated clauses are recorded as refuted and
    replaced by ``true``, and the program is checked again, until a round finds
    no violation (at most one round per clause).

    Vacuity is not success (issue 25): a call of the program's own tests (its daikon
    ``main``) that the ground truth admits (``admitted``: their indices, from
    :attr:`GroundTruth.domain`) refutes a ``requires`` that excludes it (the daikon mains
    also call outside the oracles' own domains on purpose: those prove nothing); when no
    call at all is in the domain, the clauses still standing are undecided (``vacuous``),
    never held.  Checked once per content in a process (``_VERDICT_MEMO``)."""
    checker = _checker(ctx)
    return _memoized("clauses", checker, source_with_specs, tests_source, admitted,
                     lambda: _clause_verdicts(source_with_specs, tests_source, checker, admitted))


def _clause_verdicts(source_with_specs: str, tests_source: str | None, checker: Any,
                     admitted: tuple | set | None) -> Verdicts:
    from ...jml import TranslationError, driver_from_daikon, translate
    from .jmlspec import spec_blocks

    blocks = spec_blocks(source_with_specs)
    n = sum(len(b.clauses) for b in blocks)
    verdicts: list[bool | None] = [True] * n
    src = source_with_specs
    try:
        tr = translate(src)
    except TranslationError as exc:
        return Verdicts((None,) * n, status="syntax_error", message=str(exc))
    driver = driver_from_daikon(tests_source or "class X {}", tr)
    own = {c.index for c in driver.calls if not c.generated} & set(admitted or ())
    first = rep = None
    for _ in range(n + 1):
        rep = checker.check(src, driver)
        if first is None:
            first = rep
        if rep.status != "checked":
            undecided = [i for i, v in enumerate(verdicts) if v is True]
            for i in undecided:
                verdicts[i] = None
            return Verdicts(tuple(verdicts), len(first.in_domain), len(first.calls), rep.status, rep.summary(),
                            first.branch_coverage)
        bad = rep.failures + _excluded(rep, own)
        if not bad:
            break
        lines = {c.line for c in bad if c.verdict in ("violated", "precondition") and c.line}
        cur = [(b, c) for b in spec_blocks(src) for c in b.clauses]
        hit = [i for i, (b, c) in enumerate(cur) if _line(src, c.start) in lines and verdicts[i] is True]
        if not hit:  # a crash or timeout no clause is named for: leave the rest undecided
            for i, v in enumerate(verdicts):
                if v is True:
                    verdicts[i] = None
            return Verdicts(tuple(verdicts), len(first.in_domain), len(first.calls), "checked", rep.summary(),
                            first.branch_coverage)
        raw = src.encode("utf-8")
        for i in sorted(hit, key=lambda i: cur[i][1].start, reverse=True):
            verdicts[i] = False
            c = cur[i][1]
            raw = raw[:c.start] + b"true" + raw[c.end:]
        src = raw.decode("utf-8")
    if rep is not None and rep.status == "checked" and rep.calls and not rep.in_domain:
        verdicts = [None if v is True else v for v in verdicts]
        return Verdicts(tuple(verdicts), 0, len(first.calls), "checked",
                        "vacuous: no test call is in the specification's domain; its clauses are undecided",
                        first.branch_coverage, vacuous=True)
    return Verdicts(tuple(verdicts), len(first.in_domain), len(first.calls), "checked",
                    first.summary() if first else "", first.branch_coverage if first else None)


def _excluded(rep, own: set[int]) -> list:
    """Calls of ``own`` (the program's own tests the ground truth admits) that the spec's
    precondition excluded (top-level ``requires`` failures): each refutes that ``requires``."""
    return [c for c in rep.calls if c.verdict == "precondition" and c.index in own
            and "non_null by default" not in c.clause]


class SpecCheck(NamedTuple):
    """Whole-spec verdict: ``holds`` True when no test call refutes it, None when
    it could not be checked, False refuted; the checker's summary; the in-domain
    calls (``tests``) and their branch coverage."""

    holds: bool | None
    summary: str
    tests: int
    branch_coverage: float | None = None


def spec_holds(source_with_specs: str, tests_source: str | None, ctx: Any,
               admitted: tuple | set | None = None) -> SpecCheck:
    """Whole-spec verdict on the program's tests; a spec excluding one of the ``admitted``
    daikon calls (in the ground truth's domain) does not hold, nor does a vacuous one.
    Checked once per content in a process (``_VERDICT_MEMO``)."""
    checker = _checker(ctx)
    return _memoized("spec", checker, source_with_specs, tests_source, admitted,
                     lambda: _spec_holds(source_with_specs, tests_source, checker, admitted))


def _spec_holds(source_with_specs: str, tests_source: str | None, checker: Any,
                admitted: tuple | set | None) -> SpecCheck:
    from ...jml import TranslationError, driver_from_daikon, translate

    rep = None
    try:
        tr = translate(source_with_specs)
    except TranslationError as exc:
        return SpecCheck(None, f"JML syntax error: {exc}", 0)
    driver = driver_from_daikon(tests_source or "class X {}", tr)
    rep = checker.check(source_with_specs, driver)
    if rep.status != "checked":
        return SpecCheck(None, rep.summary(), 0)
    own = {c.index for c in driver.calls if not c.generated} & set(admitted or ())
    excluded = _excluded(rep, own)
    if not rep.failures and excluded:
        c = excluded[0]
        return SpecCheck(False, f"requires (line {c.line}) excludes the program's own test call {c.index} {c.call}",
                         len(rep.in_domain), rep.branch_coverage)
    if rep.verdict == "vacuous":
        # issue 25: no call in the domain decides nothing; the spec is not taken to hold
        return SpecCheck(False, "vacuous: " + rep.summary(), 0, rep.branch_coverage)
    return SpecCheck(rep.verdict == "holds", rep.summary(), len(rep.in_domain), rep.branch_coverage)


def _line(source: str, byte_offset: int) -> int:
    return source.encode("utf-8")[:byte_offset].count(b"\n") + 1


@dataclass(frozen=True)
class GroundTruth:
    """The ground-truth specification checked on its own tests.

    ``fails``: a test call violated a clause, crashed or timed out: the task's
    own answer is refuted, a benchmark-construction defect (an oracle bug or a
    test outside what the oracle intends), not something a model can be scored
    on.  ``checkable`` False: the checker could not run it (``status``)."""

    fails: bool
    checkable: bool
    verdict: str  # holds | vacuous | violated | crashed | timeout | <status>
    kind: str = ""
    line: int = 0
    clause: str = ""
    call: str = ""
    summary: str = ""
    tests: int = 0  # test calls in the ground truth's precondition domain
    branch_coverage: float | None = None  # of those calls (None: no branch in the program)
    domain: tuple = ()  # the program's own test calls (daikon main, by index) in the ground truth's domain

    def reason(self, program: str) -> str:
        """One line naming the program and what refuted its ground truth."""
        if self.verdict == "violated":
            clause = " ".join(self.clause.split())
            clause = clause if len(clause) <= 90 else clause[:87] + "..."
            what = f"{self.kind} (line {self.line}) `{clause}` refuted on {self.call}"
        else:
            what = f"{self.verdict} on {self.call}"
        return f"{program}: the ground truth fails its own tests: {what}"


_GROUND_TRUTH: dict[str, GroundTruth] = {}
GROUND_TRUTH_CACHE = "speceval-ground-truth"


def ground_truth(source_with_specs: str, tests_source: str | None, ctx: Any,
                 cached_only: bool = False) -> GroundTruth | None:
    """The ground truth of one program checked once on its tests, cached by
    content (the source, the tests, the checker's version and call limit) in
    this process and, when the context has a cache folder, on disk: items and
    xdist workers reuse the verdict instead of re-checking it, and a second run
    decides exactly as the first.  A verdict the machine's load may have caused
    (a time-out, a killed JVM: :func:`_load_may_have_caused`) holds for this
    process only and is not written: the next run checks again (#48).

    Checked when an item of the program first needs it, in the process running
    that item (an xdist worker; a file lock keeps two workers from checking the
    same program at once); ``cached_only``: the cached verdict, or None when the
    program was not checked yet (the controller's planning, #28)."""
    import hashlib

    from ...jml import CHECKER_VERSION

    checker = _checker(ctx)
    h = hashlib.sha256(f"{CHECKER_VERSION}\0{checker.call_seconds}\0".encode())
    h.update(source_with_specs.encode("utf-8") + b"\0" + (tests_source or "").encode("utf-8"))
    key = h.hexdigest()[:40]
    if key in _GROUND_TRUTH:
        return _GROUND_TRUTH[key]
    path = None
    if callable(getattr(ctx, "cache_dir", None)):
        path = ctx.cache_dir(GROUND_TRUTH_CACHE) / f"{key}.json"
        cached = _cached_ground_truth(path)
        if cached is not None:
            _GROUND_TRUTH[key] = cached
            return cached
    if cached_only:
        return None
    if path is None:
        return _check_ground_truth(source_with_specs, tests_source, checker, key, None)
    from filelock import FileLock

    with FileLock(str(path.with_suffix(".lock"))):
        cached = _cached_ground_truth(path)  # another worker checked it while this one waited
        if cached is not None:
            _GROUND_TRUTH[key] = cached
            return cached
        return _check_ground_truth(source_with_specs, tests_source, checker, key, path)


def _cached_ground_truth(path) -> GroundTruth | None:
    import json

    try:
        return GroundTruth(**json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError, TypeError):
        return None


def _load_may_have_caused(rep: Any) -> bool:
    """Whether the ground truth's report holds an end the machine's load may have
    caused (#48): a call's time-out, a JVM that died (killed, out of memory) or
    was not started again, the runner's failure, javac's time-out.  Such a
    verdict holds for this process only (every item of the run reads the same);
    the disk cache keeps only what the next run would find again."""
    if rep is None:  # not translated: the text's own fault
        return False
    if rep.status == "runner_error" or (rep.status == "compile_error" and "timed out" in rep.message):
        return True
    return any(c.verdict == "timeout" or (c.verdict == "crashed" and c.message.startswith(("JVM ended", "not run:")))
               for c in rep.calls)


def _check_ground_truth(source_with_specs: str, tests_source: str | None, checker: Any, key: str,
                        path) -> GroundTruth:
    """Run the checker on the ground truth, record the verdict in memory and at ``path``."""
    import json

    from ...jml import TranslationError, driver_from_daikon, translate

    rep = None
    try:
        tr = translate(source_with_specs)
        driver = driver_from_daikon(tests_source or "class X {}", tr)
        rep = checker.check(source_with_specs, driver)
    except TranslationError as exc:
        gt = GroundTruth(False, False, "syntax_error", summary=str(exc))
    else:
        if rep.status != "checked":
            gt = GroundTruth(False, False, rep.status, line=rep.line, summary=rep.summary())
        elif rep.failures:
            c = rep.failures[0]
            gt = GroundTruth(True, True, c.verdict, c.kind, c.line, c.clause, f"call {c.index} {c.call}",
                             rep.summary(), len(rep.in_domain), rep.branch_coverage)
        else:
            own = {c.index for c in driver.calls if not c.generated}
            gt = GroundTruth(False, True, rep.verdict, summary=rep.summary(), tests=len(rep.in_domain),
                             branch_coverage=rep.branch_coverage,
                             domain=tuple(sorted(c.index for c in rep.in_domain if c.index in own)))
    _GROUND_TRUTH[key] = gt
    if path is not None and not _load_may_have_caused(rep):
        tmp = path.with_name(f"{key}.{os.getpid()}.tmp")
        try:
            tmp.write_text(json.dumps(gt.__dict__), encoding="utf-8")
            os.replace(tmp, path)
        except OSError:
            pass  # a cache that cannot be written only costs a re-check
    return gt
