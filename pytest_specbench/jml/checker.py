"""Check a JML-annotated Java class on calls: translate, compile, run, verdicts.

The API SpecEval builds on (PostcondBench's Java side runs JUnit tests instead:
:mod:`.runners`)::

    checker = JmlChecker(make_executor("jvm", settings, hide))
    report = checker.check(annotated_source, driver)        # driver: inputs.Driver
    report.status      # "checked" | "syntax_error" | "unsupported" | "compile_error" | "no_calls" | "runner_error"
    report.calls       # [CallVerdict]: holds / precondition / violated (kind, line, clause) / crashed / timeout
    report.verdict     # one word for the whole spec on these calls (see SpecReport.verdict)

Verdicts per call (issue 13): ``holds``; ``precondition`` (the call is outside
the spec's domain: not a spec failure); ``violated`` with the clause ``kind``
(``ensures``, ``maintaining``, ``decreases``, ``signals``, ``signals_only``, ``invariant``, ``assignable``,
``assert``, ``assume``, ``requires`` of an inner call, ``undefined`` when a
clause raised), its JML ``line`` and text; ``crashed`` (an exception the spec
does not allow, or a thread that outlived the call); ``timeout``.
"""
from __future__ import annotations

import secrets
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

from ..errors import InfrastructureError
from ..execution.class_sharing import Training, TrainingUnavailable
from ..execution.jvm import JavaJob, JvmExecutor
from . import runners
from .inputs import Driver, driver_from_calls
from .translate import Translation, TranslationError, translate

RUNNER = runners.JML_RUNNER
# Part of result keys: bump when the same spec could get another verdict.
CHECKER_VERSION = "5"  # 2: branch probes; 3: \old(e) of object state (calls, this, fields) evaluated at entry;
# 4: issue 25 (JML comments blanked, \u refused, pure clauses, verdict from the violation that left the call,
# threads the call did not own, one wall bound per check); 5: issue 42 (sources normalised, model methods
# re-printed, ghost code guarded, quantifier ranges that cannot wrap, purity observed, one guard per check)

# The runner's class-data-sharing training (execution/class_sharing.py): a trusted program of the
# harness's own, checked on these calls (each verdict kind but a time-out: a record of each path).
TRAINING_SOURCE = runners.JAVA_DIR / "training" / "SpecbenchTraining.java"
TRAINING_CALLS = ("SpecbenchTraining.find(new int[]{1, 3, 5, 7}, 5)", "SpecbenchTraining.find(new int[]{4, 2}, 2)",
                  "SpecbenchTraining.sum(10)", "SpecbenchTraining.upper(\"abc\")", "SpecbenchTraining.upper(\"\")",
                  "new SpecbenchTraining().add(200)", "SpecbenchTraining.broken(3)", "SpecbenchTraining.broken(-1)")
TRAINING_VOID = frozenset({5})


@dataclass
class CallVerdict:
    index: int
    call: str
    verdict: str  # holds | precondition | violated | crashed | timeout
    kind: str = ""
    line: int = 0
    clause: str = ""
    message: str = ""
    output: str = ""
    cpu_ms: int = 0
    branches: frozenset = frozenset()  # branch probe ids the call reached (coverage.py)

    def as_dict(self) -> dict:
        return {k: (sorted(v) if k == "branches" else v) for k, v in self.__dict__.items()
                if v not in ("", 0, frozenset()) or k in ("index", "verdict")}


@dataclass
class SpecReport:
    status: str  # checked | syntax_error | unsupported | compile_error | no_calls | runner_error | sample_error
    message: str = ""
    line: int = 0  # JML source line of a syntax/compile error or unsupported construct
    calls: list[CallVerdict] = field(default_factory=list)
    translation: Translation | None = None
    unsupported: list[tuple[str, int]] = field(default_factory=list)
    jvm_starts: int = 0
    wall: float = 0.0

    @property
    def in_domain(self) -> list[CallVerdict]:
        return [c for c in self.calls if c.verdict != "precondition"]

    @property
    def branches(self) -> int:
        """Branches of the program (0: none, or compiled without probes)."""
        return len(self.translation.branches) if self.translation is not None else 0

    @property
    def branch_coverage(self) -> float | None:
        """Share of the program's branches the in-domain calls took (the test
        inputs the spec was checked on); None when the program has no branch
        or was checked without probes."""
        if not self.branches:
            return None
        reached = set().union(*(c.branches for c in self.in_domain)) if self.in_domain else set()
        return len({b for b in reached if 0 <= b < self.branches}) / self.branches

    @property
    def failures(self) -> list[CallVerdict]:
        return [c for c in self.calls if c.verdict not in ("holds", "precondition")]

    @property
    def verdict(self) -> str:
        """``holds`` (every in-domain call held, at least one in domain), ``violated``
        (a clause failed: the first one is in ``failures[0]``), ``crashed``, ``timeout``,
        ``vacuous`` (no call satisfied the precondition), or the status when not checked."""
        if self.status != "checked":
            return self.status
        bad = self.failures
        if bad:
            return bad[0].verdict
        return "holds" if self.in_domain else "vacuous"

    def summary(self) -> str:
        if self.status != "checked":
            return f"{self.status} (line {self.line}): {self.message}" if self.line else f"{self.status}: {self.message}"
        bad = self.failures
        if not bad:
            return f"{self.verdict}: {len(self.in_domain)} of {len(self.calls)} calls in the precondition's domain"
        c = bad[0]
        where = f" {c.kind} (line {c.line}): {c.clause}" if c.kind else f": {c.message}"
        return f"{c.verdict} on call {c.index} {c.call}{where}"



class JmlChecker:
    def __init__(self, jvm: JvmExecutor, call_seconds: float = 2.0, output_bytes: int = 4096,
                 max_jvm_starts: int = 8):
        self.jvm = jvm
        self.call_seconds = call_seconds
        self.output_bytes = output_bytes
        self.max_jvm_starts = max_jvm_starts
        self._runtime: Path | None = None
        self._training: Training | None | bool = None  # False: none can be made
        import time

        self.clock = time.monotonic  # of the check's wall bound (a test may advance its own)

    def available(self) -> str | None:
        return self.jvm.available()

    def runtime(self) -> Path:
        """The compiled runner and JmlRt (trusted; compiled once per content)."""
        if self._runtime is None:
            self._runtime = runners.runtime_classes(self.jvm)
        return self._runtime

    def training(self) -> Training | None:
        """What trains the runner's class-data-sharing archive: the runner on
        :data:`TRAINING_SOURCE`, translated here and compiled (trusted, into the store) only
        when the archive is built.  None (an archive of the class path's classes only) when
        the training program cannot be read or translated: a check never depends on it."""
        if self._training is None:
            try:
                self._training = self._make_training()
            except (OSError, TranslationError, ValueError):
                self._training = False
        return self._training or None

    def _make_training(self) -> Training:
        import hashlib

        tr = translate(TRAINING_SOURCE.read_text(encoding="utf-8"))
        driver = driver_from_calls(list(TRAINING_CALLS), void=set(TRAINING_VOID))
        sources = self._sources(tr, driver)
        indices = tuple(str(c.index) for c in driver.calls)
        digest = hashlib.sha256()
        for name in sorted(sources):
            digest.update(name.encode() + b"\0" + sources[name].encode("utf-8") + b"\0")
        digest.update(" ".join(indices).encode())

        def prepare() -> tuple[tuple[str, ...], tuple[tuple[str, bytes], ...]]:
            res = self.jvm.compile(sources, (self.runtime(),), trusted=True)
            if not res.ok:
                first = (res.diagnostics.strip().splitlines() or ["javac failed"])[0]
                raise TrainingUnavailable(f"the training program did not compile: {first[:200]}",
                                          lasting="timed out" not in res.diagnostics)
            args = (str(res.classes), driver.class_name, str(int(self.call_seconds * 1000)),
                    str(self.output_bytes), *indices)
            return args, (("nonce", b"specbench-training"),)

        return Training(RUNNER, digest.hexdigest()[:32], prepare)

    # ------------------------------------------------------------- compile
    def compile(self, source: str, driver: Driver | None, class_name: str | None = None
                ) -> tuple[SpecReport | None, Translation | None, Path | None]:
        try:
            tr = translate(source, class_name)
        except TranslationError as exc:
            return SpecReport("syntax_error", str(exc).split(": ", 1)[-1], exc.line), None, None
        except RecursionError:  # a backstop: the parser's own limits should have said it first
            return SpecReport("syntax_error", "the specification is nested too deeply", 1), None, None
        if tr.unsupported:
            what, line = tr.unsupported[0]
            return SpecReport("unsupported", what, line, translation=tr, unsupported=tr.unsupported), tr, None
        res = self.jvm.compile(self._sources(tr, driver), (self.runtime(),))
        if not res.ok and tr.branches:
            # The probes themselves should never break compilation; if they do (a
            # construct coverage.py does not foresee), the verdict must not suffer:
            # check without them, coverage unknown.
            bare = translate(source, class_name, probes=False)
            res_bare = self.jvm.compile(self._sources(bare, driver), (self.runtime(),))
            if res_bare.ok:
                return None, bare, res_bare.classes
        if not res.ok:
            line, msg = _map_javac(res.diagnostics, tr)
            return SpecReport("compile_error", msg, line, translation=tr), tr, None
        return None, tr, res.classes

    @staticmethod
    def _sources(tr: Translation, driver: Driver | None) -> dict[str, str]:
        sources = {f"{tr.class_name}.java": tr.source}
        if driver is not None:
            sources[f"{driver.class_name}.java"] = driver.source
        return sources

    # --------------------------------------------------------------- check
    def check(self, source: str, driver: Driver, class_name: str | None = None,
              indices: Sequence[int] | None = None) -> SpecReport:
        """The spec's report on the driver's calls.  One guard around the whole path (parse,
        translate, compile, run, read; issue 42): what the sample causes is a report with one
        line (``syntax_error``, or ``sample_error`` naming the exception), never an exception;
        only the harness's faults (:class:`InfrastructureError`, the machine's ``OSError`` and
        ``MemoryError``) propagate, to be E."""
        try:
            return self._check(source, driver, class_name, indices)
        except (InfrastructureError, OSError, MemoryError):
            raise
        except Exception as exc:  # noqa: BLE001 - the sample's fault, whatever it is
            return sample_fault(exc)

    def _check(self, source: str, driver: Driver, class_name: str | None = None,
               indices: Sequence[int] | None = None) -> SpecReport:
        t0 = self.clock()
        early, tr, classes = self.compile(source, driver, class_name)
        if early is not None:
            return early
        calls = {c.index: c for c in driver.calls}
        todo = list(indices if indices is not None else calls)
        report = SpecReport("checked", translation=tr)
        if not todo:
            report.status, report.message = "no_calls", "no input calls for this program"
            return report
        got: dict[int, CallVerdict] = {}
        died_once: set[int] = set()
        runner_errors: set[str] = set()
        # One wall bound for the whole check (issue 25): retries in fresh JVMs share it, so a
        # sample that kills or blocks each JVM cannot multiply it by max_jvm_starts.
        deadline = self.clock() + self.check_wall(len(todo))  # from the first run (compiling is not the sample's)
        while todo and report.jvm_starts < self.max_jvm_starts:
            left = deadline - self.clock()
            if left < 1.0:
                break
            report.jvm_starts += 1
            records, result = self._run_jvm(classes, driver, todo, left)
            if records and "load_error" in records[0]:
                report.status, report.message = "runner_error", records[0]["load_error"]
                return report
            for r in records:
                k = r.get("call")
                if isinstance(k, int) and k in calls and k not in got:
                    got[k] = _verdict(r, calls[k].text)
            done_all = any(r.get("done") is True for r in records)
            rest = [k for k in todo if k not in got]
            stopped = bool(records) and (records[-1].get("verdict") == "timeout" or records[-1].get("outlived"))
            runner_error = next((r["runner_error"] for r in records if "runner_error" in r), None)
            if rest and not done_all and not stopped and (runner_error or rest[0] not in died_once):
                # The runner failed or the JVM died inside a call: once, that may be the machine
                # (memory, load); run the rest again in a fresh JVM before blaming the call.
                if runner_error and runner_error in runner_errors:
                    raise InfrastructureError(f"JML runner failed twice: {runner_error}")
                runner_errors.add(runner_error or "")
                died_once.add(rest[0])
                todo = rest
                continue
            if rest and not done_all and not stopped:
                # The JVM died inside this call twice: the call's fault; go on in a fresh JVM.
                k = rest[0]
                why = ("JVM ended: " + (result.killed or (f"signal {result.signal}" if result.signal else
                                                          f"exit status {result.exit_code}"))
                       + (": " + result.stderr.strip().splitlines()[-1][:200] if result.stderr.strip() else ""))
                got[k] = CallVerdict(k, calls[k].text, "timeout" if result.timed_out else "crashed", message=why)
                rest = rest[1:]
            elif rest and done_all:
                raise InfrastructureError(f"JML runner finished without records for calls {rest[:5]}")
            todo = rest
        for k in todo:
            if report.jvm_starts >= self.max_jvm_starts:
                got[k] = CallVerdict(k, calls[k].text, "crashed", message="not run: too many JVM restarts")
            else:
                got[k] = CallVerdict(k, calls[k].text, "timeout", message="not run: the check's wall bound is spent")
        report.calls = [got[k] for k in sorted(got)]
        report.wall = self.clock() - t0
        return report

    def check_wall(self, calls: int) -> float:
        """The wall-clock bound of one check of ``calls`` calls, all JVM starts included."""
        return self.call_seconds * calls * 3 + 20

    def _run_jvm(self, classes: Path, driver: Driver, todo: list[int], budget: float | None = None):
        nonce = secrets.token_hex(16)
        wall = self.check_wall(len(todo))
        if budget is not None:
            wall = max(1.0, min(wall, budget))
        job = JavaJob(main=RUNNER, args=(str(classes), driver.class_name, str(int(self.call_seconds * 1000)),
                                         str(self.output_bytes), *map(str, todo)),
                      classpath=(self.runtime(),), readonly=(classes,), files={"nonce": nonce.encode()},
                      wall_seconds=wall, cpu_seconds=wall, training=self.training())
        result = self.jvm.run(None, job)
        return runners.read_records(result.stdout, nonce), result


def sample_fault(exc: BaseException) -> SpecReport:
    """The report of an exception a sample caused on the checker's path: one line, no traceback."""
    if isinstance(exc, TranslationError):
        return SpecReport("syntax_error", str(exc).split(": ", 1)[-1], exc.line)
    if isinstance(exc, RecursionError):
        return SpecReport("syntax_error", "the program or its specification is nested too deeply", 1)
    what = " ".join(str(exc).split())[:200]
    return SpecReport("sample_error", f"the checker could not read this sample ({type(exc).__name__}: {what})")


def _verdict(r: dict, call: str) -> CallVerdict:
    v = r.get("verdict", "crashed")
    msg = r.get("message", "") or ""
    if r.get("outlived"):
        thread = r.get("thread") if isinstance(r.get("thread"), str) else ""
        v, msg = "crashed", (f"a thread the call did not own ({thread[:60]}) was alive after it" if thread
                             and thread != "specbench-call" else "a thread started by the call outlived it")
    elif v == "crashed" and r.get("exception"):
        msg = f"{r['exception']}: {msg}"
    elif v == "timeout":
        msg = "call time limit"
    msg = " ".join(str(msg).splitlines())  # one line, whatever the program's message held
    reached = r.get("branches")
    branches = frozenset(b for b in reached if isinstance(b, int)) if isinstance(reached, list) else frozenset()
    return CallVerdict(int(r["call"]), call, v, r.get("kind", ""), int(r.get("line", 0) or 0),
                       r.get("clause", ""), msg, r.get("output", ""), int(r.get("cpu_ms", 0) or 0), branches)


def _map_javac(diag: str, tr: Translation) -> tuple[int, str]:
    """(JML line, javac's message) for the first error: a generated helper
    carries its clause's line in a ``/*@jml:LINE*/`` marker."""
    found = runners.first_javac_error(diag)
    if found is None:
        return 0, (diag.strip().splitlines() or ["javac failed"])[0]
    file, line, msg = found
    if file == f"{tr.class_name}.java":
        clause = runners.clause_line(tr.source, line)
        return (clause, msg) if clause else (0, f"{msg} (translated line {line})")
    return 0, f"{file}: {msg}"
