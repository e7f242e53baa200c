"""CPU per JVM start with and without the AppCDS archive (issue 48; execution/class_sharing.py).

    python -m pytest_specbench.perf.jvm_start [--starts 12] [--work /tmp/specbench-jvm-start]

Three kinds of start, each the executor's own command line (its flags, its class
path as jars, the archive the executor would use), run ``--starts`` times with and
without the archive, interleaved, as plain child processes (the sandbox adds the
same to both), CPU (user + sys) by ``getrusage`` of each child:

- ``jml-runner``: the JML runner (``specbench.jml.JmlRunner``) on a one-call program;
- ``junit``: JUnit 4's ``JUnitCore`` on a two-test class (what the JUnit runner of
  PostcondBench's Java checks loads);
- ``javac``: javac compiling one small class in a JVM with the warm javac's flags
  (``SERVER_FLAGS``), its archive holding ``jdk.compiler``: the start of the warm
  javac, once per worker and executor.

Prints the median and the least CPU per start of each.  The archives are built here
(once per key: the first call of a key builds it without waiting for
``BUILD_AFTER`` starts); the building's own CPU is printed too.  CPU moves far less
than wall time on a loaded machine; wall figures are to be taken on a quiet one.
"""
from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path


def _cpu_of(argv: list[str], cwd: Path, before=None) -> float:
    if before is not None:
        before()
    return cpu_and_output(argv, cwd)[0]


def cpu_and_output(argv: list[str], cwd: Path) -> tuple[float, bytes]:
    """One JVM as a plain child in ``cwd``: its CPU (user + sys, ``getrusage``) and its stdout;
    a failed start ends the script with the JVM's last words (also perf/jvm_flags.py's)."""
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.run(argv, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C.UTF-8",
                               "MALLOC_ARENA_MAX": "2"})
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        sys.exit(f"{Path(sys.argv[0]).stem}: {' '.join(argv[:3])}... {' '.join(argv[-4:])} failed "
                 f"({proc.returncode}): {proc.stderr.decode(errors='replace')[-300:]}")
    return (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime), proc.stdout


def main() -> None:
    from pytest_specbench.execution import class_sharing
    from pytest_specbench.execution.jvm import JVM_FLAGS, SERVER_FLAGS, JvmExecutor
    from pytest_specbench.jml import junit, runners

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--starts", type=int, default=12)
    ap.add_argument("--work", type=Path, default=Path("/tmp/specbench-jvm-start"))
    args = ap.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    class_sharing.BUILD_AFTER = 1  # build each archive at its first use here
    jvm = JvmExecutor(args.work / "jvm", isolate=False, class_sharing=True)
    job_dir = args.work / "job"
    job_dir.mkdir(exist_ok=True)

    kinds = []
    # The JML runner on a one-call program (the program's classes come by their own loader).
    runtime = runners.runtime_classes(jvm)
    program = jvm.compile({"D.java": "public class D { public static Object call(int k) { return k * 2; } }"}).classes
    kinds.append(("jml-runner", (runtime,), JVM_FLAGS, (),
                  [runners.JML_RUNNER, str(program), "D", "2000", "4096", "0"],
                  lambda: (job_dir / "nonce").write_text("0123456789abcdef")))
    jars = junit.jars()
    if jars:
        tests = jvm.compile({"TT.java": "import org.junit.Test; import static org.junit.Assert.*;\n"
                                        "public class TT { @Test public void a() { assertEquals(4, 2 + 2); }\n"
                                        "  @Test public void b() { assertTrue(\"x\".length() == 1); } }"},
                            classpath=jars).classes
        kinds.append(("junit", (*jars, tests), JVM_FLAGS, (), ["org.junit.runner.JUnitCore", "TT"], None))
    source = job_dir / "H.java"
    source.write_text("public class H { public static void main(String[] a) { System.out.println(a.length); } }\n")
    server = jvm.compile(class_sharing.harness_sources(), use_server=False, trusted=True)  # (the warm javac's classes)
    kinds.append(("javac", (server.classes,), SERVER_FLAGS, ("jdk.compiler",),
                  ["com.sun.tools.javac.Main", "-proc:none", "-d", str(job_dir / "out"), str(source)], None))

    print(f"{jvm.jdk_version()}; {args.starts} starts each, interleaved; load {os.getloadavg()[0]:.2f}")
    for name, classpath, flags, modules, main, before in kinds:
        t0 = time.process_time()
        r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        shared = jvm.sharing.share(classpath, flags, modules)
        r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        build = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime) + time.process_time() - t0
        if shared.archive is None:
            print(f"  {name:11s} no archive: {getattr(jvm.sharing, 'last_problem', 'refused')}")
            continue
        plain_cp = os.pathsep.join(str(p) for p in shared.classpath)  # the same jars: only the archive differs
        plain = [jvm.java, *flags, "-cp", plain_cp, *main]
        with_archive = [jvm.java, *flags, *shared.flags, "-cp", plain_cp, *main]
        seen = {"plain": [], "archive": []}
        for _ in range(args.starts):
            seen["plain"].append(_cpu_of(plain, job_dir, before))
            seen["archive"].append(_cpu_of(with_archive, job_dir, before))
        p, a = statistics.median(seen["plain"]), statistics.median(seen["archive"])
        print(f"  {name:11s} CPU per start: plain {p * 1e3:6.0f} ms (least {min(seen['plain']) * 1e3:4.0f}), "
              f"with the archive {a * 1e3:6.0f} ms (least {min(seen['archive']) * 1e3:4.0f}): {100 * (a - p) / p:+.0f}%; "
              f"archive {shared.archive.stat().st_size / 1e6:.1f} MB, "
              + (f"built in {build:.2f} CPU s" if build > 0.005 else "built at the warm javac's first start above"))


if __name__ == "__main__":
    main()
