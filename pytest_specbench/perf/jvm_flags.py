"""Where a JML runner JVM's CPU goes: a bare start against the runner on real jobs, per flag set (issue 48).

    python -m pytest_specbench.perf.jvm_flags [--rounds 12] [--programs BinarySearch,BubbleSort,Calculator,Abs]
        [--data ../shared/datasets] [--work /tmp/specbench-jvm-flags] [--variant NAME=FLAG,FLAG ...]
        [--java NAME=PATH ...]

Each start is the executor's own command line (``JvmExecutor.argv``: ``JVM_FLAGS``, the
runtime's jars and, when one is built, its AppCDS archive: built here at the first start, by
the checker's training) run as a plain child process (the sandbox adds the same to every
start), CPU (user + sys, every thread of the JVM) by ``getrusage``; the kinds, interleaved
round by round so that a change of the machine's load falls on all of them:

- ``bare``: an empty ``main`` with the runner's flags (what any JVM start costs);
- ``runner``: the JML runner on the ground truth of each of ``--programs`` (SpecGenBench's
  oracle, its ``daikon/`` calls), the programs compiled as the checker compiles them;
- ``runner, plain``: the same without the archive;
- ``runner, no C1 thresholds``: the same with C1's default thresholds (``Tier3*`` flags left out);
- one row per ``--variant NAME=FLAG,FLAG`` (flags added after ``JVM_FLAGS``), e.g.
  ``--variant g1=-XX:-UseSerialGC,-XX:+UseG1GC`` (a later flag wins);
- two rows per ``--java NAME=PATH``: the bare start and the runner started by another ``java``
  binary, e.g. a smaller image made by ``jlink --add-modules java.base --generate-cds-archive
  --output IMG`` (``--java jlink=IMG/bin/java``), with archives of its own (a store of its own:
  an archive is tied to the JVM that wrote it, while ``java -version`` reads the same).

Each runner start's records are compared with the first kind's, timings aside: a flag that
changes a verdict is reported.  CPU moves far less than wall time on a loaded machine;
compare rows of one run only (docs/timing.md, "Session 19").
"""
from __future__ import annotations

import argparse
import os
import re
import statistics
import sys
from pathlib import Path

EMPTY = "public class SpecbenchEmpty { public static void main(String[] a) { } }\n"
THRESHOLDS = ("-XX:Tier3InvocationThreshold", "-XX:Tier3MinInvocationThreshold", "-XX:Tier3CompileThreshold")


def _run(argv: list[str], cwd: Path, files: dict[str, bytes]) -> tuple[float, bytes]:
    """CPU of one start and its records, timings left out (they differ from start to start)."""
    from pytest_specbench.perf.jvm_start import cpu_and_output

    for name, data in files.items():
        (cwd / name).write_bytes(data)
    cpu, out = cpu_and_output(argv, cwd)
    return cpu, re.sub(rb'"(cpu_ms|wall_ms)":\d+', b"", out)


def main() -> None:
    from pytest_specbench.execution import class_sharing
    from pytest_specbench.execution.jvm import JVM_FLAGS, JavaJob, JvmExecutor
    from pytest_specbench.jml import JML_RUNNER, JmlChecker, driver_from_daikon, translate

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=12)
    ap.add_argument("--programs", default="BinarySearch,BubbleSort,Calculator,Abs")
    ap.add_argument("--data", type=Path, default=Path("../shared/datasets"))
    ap.add_argument("--work", type=Path, default=Path("/tmp/specbench-jvm-flags"))
    ap.add_argument("--variant", action="append", default=[], metavar="NAME=FLAG,FLAG")
    ap.add_argument("--java", action="append", default=[], metavar="NAME=PATH")
    args = ap.parse_args()
    for spec in args.java:
        label, _, path = spec.partition("=")
        if not label or not os.path.isfile(path) or not os.access(path, os.X_OK):
            sys.exit(f"jvm_flags: --java {spec}: NAME=PATH, PATH an executable java (e.g. IMG/bin/java)")
    root = args.data / "specgenbench"
    if not (root / "oracle").is_dir():
        sys.exit(f"jvm_flags: no SpecGenBench under {args.data} (--data: the shared data root)")
    args.work.mkdir(parents=True, exist_ok=True)
    class_sharing.BUILD_AFTER = 1  # the archive at the first start
    jvm = JvmExecutor(args.work / "jvm", isolate=False, class_sharing=True, store=args.work / "store")
    checker = JmlChecker(jvm)
    job_dir = args.work / "job"
    job_dir.mkdir(exist_ok=True)

    jobs = []  # (name, JavaJob) of the runner, as the checker makes them
    for name in args.programs.split(","):
        source = (root / "oracle" / name / f"{name}.java").read_text(encoding="utf-8")
        tests = (root / "daikon" / name / f"{name}.java").read_text(encoding="utf-8")
        driver = driver_from_daikon(tests, translate(source))
        early, _, classes = checker.compile(source, driver)
        if early is not None:
            sys.exit(f"jvm_flags: {name}: {early.summary()}")
        calls = tuple(str(c.index) for c in driver.calls)
        jobs.append((name, JavaJob(main=JML_RUNNER, classpath=(checker.runtime(),), readonly=(classes,),
                                   args=(str(classes), driver.class_name, "2000", "4096", *calls),
                                   files={"nonce": b"0123456789abcdef"}, training=checker.training())))
    empty = jvm.compile({"SpecbenchEmpty.java": EMPTY}, use_server=False).classes

    def argv(job: JavaJob, shared: bool, extra=(), drop=(), on: JvmExecutor = jvm) -> list[str]:
        flags = tuple(f for f in JVM_FLAGS if not f.startswith(drop)) if drop else JVM_FLAGS
        if shared:
            s = on.sharing.share(job.classpath, JVM_FLAGS + tuple(job.flags), training=job.training)
            cp, more = s.classpath, s.flags
        else:
            cp, more = job.classpath, ()
        return [on.java, *flags, *more, *extra, "-cp", os.pathsep.join(map(str, cp)), job.main, *job.args]

    kinds = [("bare (empty main)", lambda job: argv(JavaJob(main="SpecbenchEmpty", classpath=(empty,)), False), False),
             ("runner", lambda job: argv(job, True), True),
             ("runner, plain (no archive)", lambda job: argv(job, False), True),
             ("runner, no C1 thresholds", lambda job: argv(job, True, drop=THRESHOLDS), True)]
    for spec in args.variant:
        label, _, flags = spec.partition("=")
        kinds.append((f"runner, {label}", lambda job, f=tuple(flags.split(",")): argv(job, True, extra=f), True))
    for spec in args.java:
        label, _, path = spec.partition("=")
        other = JvmExecutor(args.work / f"jvm-{label}", isolate=False, class_sharing=True,
                            store=args.work / f"store-{label}")
        other.java = path
        kinds.append((f"bare, java {label}", lambda job, o=other: argv(JavaJob(main="SpecbenchEmpty", classpath=(empty,)),
                                                                       False, on=o), False))
        kinds.append((f"runner, java {label}", lambda job, o=other: argv(job, True, on=o), True))
    print(f"{jvm.jdk_version()}; {args.rounds} rounds x {len(jobs)} programs; load {os.getloadavg()[0]:.2f}")
    if jvm.sharing.share(jobs[0][1].classpath, JVM_FLAGS, training=jobs[0][1].training).archive is None:
        print(f"  (no archive: {getattr(jvm.sharing, 'last_problem', 'refused')})")
    seen: dict[str, list[float]] = {k: [] for k, _, _ in kinds}
    records: dict[str, bytes] = {}
    differs: set[str] = set()
    for _ in range(args.rounds):
        for label, make, is_runner in kinds:
            for name, job in jobs:
                cpu, out = _run(make(job), job_dir, dict(job.files) if is_runner else {})
                seen[label].append(cpu)
                if is_runner and records.setdefault(name, out) != out:
                    differs.add(f"{label} on {name}")
    base = statistics.median(seen["runner"])
    for label, values in seen.items():
        m = statistics.median(values)
        print(f"  {label:34s} CPU per start: median {m * 1e3:5.0f} ms, least {min(values) * 1e3:4.0f}, "
              f"mean {statistics.mean(values) * 1e3:5.0f} ({100 * (m - base) / base:+.0f}% against the runner)")
    print(f"  load after {os.getloadavg()[0]:.2f}; records " +
          ("equal in every kind" if not differs else "DIFFER: " + "; ".join(sorted(differs))))


if __name__ == "__main__":
    main()
