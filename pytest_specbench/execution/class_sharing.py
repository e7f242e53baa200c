"""Application class-data sharing (AppCDS) for the ``jvm`` executor's JVMs (issue 48).

A JVM spends much of a short job's start parsing and verifying classes: the JDK's
own base archive (``lib/server/classes.jsa``) covers the classes every JVM loads,
not JUnit's, the JML runtime's or javac's (``jdk.compiler``).  A dynamic archive
(JDK 17: ``-XX:ArchiveClassesAtExit`` to write, ``-XX:SharedArchiveFile`` to use)
holds those too, for one class path.

- **What is archived.**  A trusted training run (:data:`WARMUP`,
  ``java/specbench/jvm/ClassWarmup.java``) loads, without initialising, every
  class of the class path's jars and of the JDK modules a job kind names (the warm
  javac: ``jdk.compiler``); a job kind may also name a :class:`Training`, a trusted
  main the run then executes (the JML runner on a trusted program: its security
  manager's and policy's JDK classes and lambda proxies, made at every start, are
  archived too; docs/timing.md, "Session 19").  No job's code runs in it, so no
  sample can shape an archive.  CDS takes classes from jars only (a non-empty class folder on the
  class path stops the JVM): the trusted class folders the executor compiled are
  packed into jars in the executor's store (:mod:`.jvm_store`: shared by state
  folders; named by their content, deterministic bytes), and the jobs run on the jars, the warm-up jar last (the archive's class
  path must be a prefix of the job's).
- **Key.**  ``java -version``'s whole output, the JVM flags, the modules, the
  training run's source and :class:`Training`, and each class-path entry's path and content (SHA-256):
  a new JDK, other flags or other runtime classes give another archive; an old
  one is never read.
- **Built once, when it pays.**  Building costs a javac run (the training class,
  once per store) and two starts of the JVM; the archive is built after
  :data:`BUILD_AFTER` plain starts of its key have been counted in the store
  (a file, one byte per start; until then nothing is made; a job kind may ask for
  fewer: the warm javac's is built at its first start), under a file lock
  (two workers never build the same archive), then published as a sealed,
  read-only store entry: a damaged one (its seal differs, checked once per
  process) is moved aside and built again.
- **Refused: plain start.**  An archive the JVM does not take (``-Xshare:on`` with
  it fails) is not used; the reason is kept in a ``.refused`` file (the JVM's
  answer is deterministic for a key).  A training run that times out keeps
  nothing (the machine's load may have caused it).  At run time the JVM is given
  ``-Xshare:auto``: an archive it cannot map means a plain start, never a failed
  job.  JVM warnings go to stderr, never onto a job's record channel.
- **Sandbox.**  The archive and the jars are bound read-only into a job, as the
  class path is; nothing else of the store or the state folder is visible.

``SPECBENCH_JVM_CDS=0`` turns it off (plain starts: for measuring).  Figures:
docs/timing.md, "Session 15".
"""
from __future__ import annotations

import hashlib
import os
import resource
import shutil
import subprocess
import tempfile
import time
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

from . import jvm_store

FORMAT = "1"  # of the key: a change of how archives are made builds new ones
WARMUP = "specbench.jvm.ClassWarmup"
HARNESS_JAVA = Path(__file__).with_name("java") / "specbench" / "jvm"  # ClassWarmup, the warm javac's CompileServer
WARMUP_SOURCE = HARNESS_JAVA / "ClassWarmup.java"
BUILD_AFTER = 8  # plain starts of a key counted in the state folder before its archive is built
TRAINING_SECONDS = 300.0
# At run time: JVM messages (a refused archive's warning included) on stderr only.
RUN_FLAGS = ("-Xshare:auto", "-Xlog:disable", "-Xlog:all=warning:stderr")
ENV_SWITCH = "SPECBENCH_JVM_CDS"
ARCHIVE, JAR = "archive.jsa", "classes.jar"  # the file of a store entry of kind "cds", "jars"

_DIGESTS: dict[tuple[str, int, int], str] = {}  # (path, mtime_ns, size) -> sha256, per process
_FOLDERS: dict[Path, tuple[str, tuple[Path, ...]]] = {}  # class folder -> (content digest, class files)
_SOURCE: str | None = None  # the training run's source digest


def harness_sources() -> dict[str, str]:
    """The execution layer's own Java (``specbench.jvm``: :data:`WARMUP` and the warm javac's
    ``CompileServer``), compiled as one trusted class folder by whichever needs it first: one
    javac job per store for both, not one each (~0.7-1 CPU s a javac job)."""
    return {f"specbench/jvm/{p.name}": p.read_text() for p in sorted(HARNESS_JAVA.glob("*.java"))}


@dataclass(frozen=True)
class Training:
    """What the training run executes after loading the class path: a trusted ``main`` on the
    class path (never a job's code).  ``prepare()`` gives its arguments and the files of its
    working folder; it is called only when the archive is built (it may compile the trusted
    program the main runs), and raises :class:`TrainingUnavailable` when it cannot.  ``key``
    names everything ``prepare`` depends on (the program's source, the calls): it enters the
    archive's key."""

    main: str
    key: str
    prepare: Callable[[], tuple[tuple[str, ...], tuple[tuple[str, bytes], ...]]] = field(compare=False)

    def key_parts(self) -> tuple[str, ...]:
        return ("\0training", self.main, self.key)


class TrainingUnavailable(Exception):
    """The training's program could not be made; ``lasting`` False when the machine's load may
    have caused it (a time-out): the next start tries again, else the key is refused."""

    def __init__(self, message: str, lasting: bool = True):
        super().__init__(message)
        self.lasting = lasting


@dataclass(frozen=True)
class Shared:
    """How to start one JVM: its class path, extra flags and paths it must read."""

    classpath: tuple[Path, ...]
    flags: tuple[str, ...] = ()
    readonly: tuple[Path, ...] = ()
    archive: Path | None = None


class ClassSharing:
    """The archives of one ``jvm`` executor, in its store (:mod:`.jvm_store`: shared by state
    folders, or the state folder's own)."""

    def __init__(self, jvm: Any, store: Any, enabled: bool | None = None):
        self.jvm = jvm
        self.store = store
        self.folder = store.root / "cds"  # the harness's counters, locks and refusals
        self.enabled = os.environ.get(ENV_SWITCH, "1") != "0" if enabled is None else enabled
        self.builds = 0  # archives this object built (tests, perf)
        self._memo: dict[tuple, Shared] = {}

    def share(self, classpath: Sequence[Path], flags: Sequence[str], modules: Sequence[str] = (),
              training: Training | None = None, build_after: int | None = None) -> Shared:
        """The start of a JVM with ``flags`` on ``classpath``: with an archive when
        there is one for its key (built when ``build_after``, default :data:`BUILD_AFTER`,
        starts were counted; trained by ``training`` when given), else plain.  Never raises:
        any trouble here is a plain start."""
        plain = Shared(tuple(Path(p) for p in classpath))
        if not self.enabled:
            return plain
        memo = (plain.classpath, tuple(flags), tuple(modules), training.key_parts() if training else ())
        shared = self._memo.get(memo)
        if shared is not None:
            return shared
        try:
            shared = self._share(plain.classpath, tuple(flags), tuple(modules), training,
                                 BUILD_AFTER if build_after is None else build_after)
        except (OSError, ValueError, subprocess.SubprocessError, zipfile.BadZipFile) as exc:
            shared = None
            self.last_problem = str(exc)
        except Exception as exc:  # noqa: BLE001 - the harness's own classes failed to compile etc.: plain
            shared = None
            self.last_problem = f"{type(exc).__name__}: {exc}"
        if shared is None:
            return plain  # not remembered: the next start counts and may build it
        if shared.archive is not None:
            self._memo[memo] = shared
        return shared

    # ------------------------------------------------------------ internals
    def _share(self, classpath: tuple[Path, ...], flags: tuple[str, ...], modules: tuple[str, ...],
               training: Training | None, build_after: int) -> Shared | None:
        if not all(p.is_dir() or p.is_file() for p in classpath):
            return None  # a missing entry: the job reports it
        # Everything here is read, not made, until the archive is to be built: a store
        # that never reaches BUILD_AFTER starts of a key pays a few stat calls.
        entries = [(p, _folder_digest(p) if p.is_dir() else _digest(p)) for p in classpath]
        key = self.key(entries, flags, modules, training)
        names = [d if p.is_dir() else None for p, d in entries] + [f"warmup-{_source_digest()}"]
        if (self.folder / f"{key}.refused").exists():
            return None
        found = self._found(key, entries, names)
        if found is None:
            if not self._count(key, build_after):
                return None
            from filelock import FileLock

            with FileLock(str(self.folder / f"{key}.lock")):
                found = self._found(key, entries, names)
                if found is None:
                    jars = [self._jar(p, name) if name else p for (p, _), name in zip(entries, names)]
                    jars.append(self._warmup(names[-1]))
                    if not self._build(key, tuple(jars), flags, modules, training):
                        return None
                    found = self._found(key, entries, names)
                    if found is None:
                        return None
        archive, jars = found
        return Shared(jars, (f"-XX:SharedArchiveFile={archive}", *RUN_FLAGS), (archive, *jars), archive)

    def _found(self, key: str, entries, names) -> tuple[Path, tuple[Path, ...]] | None:
        """The archive and the class path's jars when all are in the store (sealed)."""
        archive = self.store.get("cds", key)
        if archive is None:
            return None
        jars = []
        for (path, _), name in zip(entries + [(None, "")], names):
            if name is None:
                jars.append(path)
                continue
            entry = self.store.get("jars", name)
            if entry is None:
                return None
            jars.append(entry / JAR)
        return archive / ARCHIVE, tuple(jars)

    def key(self, entries: Sequence[tuple[Path, str]], flags: Sequence[str], modules: Sequence[str],
            training: Training | None = None) -> str:
        """The archive's name: the JVM's build, the flags, the modules, the training
        run's source and what it runs, each class-path entry's path and content."""
        h = hashlib.sha256(f"{FORMAT}\0{self.jvm.jdk_version(full=True)}\0{_source_digest()}\0".encode())
        for part in (*flags, "\0modules", *modules, *(training.key_parts() if training else ()), "\0classpath"):
            h.update(part.encode() + b"\0")
        for path, digest in entries:
            h.update(str(path).encode() + b"\0" + digest.encode() + b"\0")
        return h.hexdigest()[:32]

    def _count(self, key: str, build_after: int) -> bool:
        """Count one plain start of ``key``; True once ``build_after`` were counted."""
        fd = os.open(self.folder / f"{key}.starts", os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, b".")
            return os.fstat(fd).st_size >= build_after
        finally:
            os.close(fd)

    def _build(self, key: str, jars: tuple[Path, ...], flags: tuple[str, ...], modules: tuple[str, ...],
               training: Training | None = None) -> bool:
        """Train, dump, check that the JVM takes the archive, then publish it."""
        cp = os.pathsep.join(str(p) for p in jars)
        java = self.jvm.java
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C.UTF-8", "MALLOC_ARENA_MAX": "2"}
        started, ru = time.monotonic(), resource.getrusage(resource.RUSAGE_CHILDREN)
        with tempfile.TemporaryDirectory(prefix="specbench-cds-") as work:
            tmp = Path(work) / ARCHIVE
            run: tuple[str, ...] = ()
            if training is not None:
                try:
                    args, files = training.prepare()
                except TrainingUnavailable as exc:
                    return self._refuse(key, f"training: {exc}") if exc.lasting else False
                run = ("--run", training.main, *args)
                for name, data in files:
                    (Path(work) / name).write_bytes(data)
            try:
                train = subprocess.run([java, *flags, f"-XX:ArchiveClassesAtExit={tmp}", "-cp", cp, WARMUP, *modules,
                                        *run],
                                       capture_output=True, text=True, timeout=TRAINING_SECONDS, env=env, cwd=work)
                if train.returncode != 0 or not tmp.is_file():
                    return self._refuse(key, "training run: " + _last_line(train, f"exit status {train.returncode}"))
                check = subprocess.run([java, *flags, "-Xshare:on", f"-XX:SharedArchiveFile={tmp}", "-cp", cp,
                                        "-version"], capture_output=True, text=True, timeout=TRAINING_SECONDS,
                                       env=env, cwd=work)
                if check.returncode != 0:
                    return self._refuse(key, "the JVM refused it: " + _last_line(check, f"exit status {check.returncode}"))
            except subprocess.TimeoutExpired:
                return False  # the machine's load may have caused it: nothing kept, tried again later
            self.store.put("cds", key, lambda entry: shutil.move(str(tmp), str(entry / ARCHIVE)))
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        jvm_store.log("cds", key=key, modules=list(modules), state=str(self.jvm.cache_dir),
                      wall=round(time.monotonic() - started, 3),
                      cpu=round(after.ru_utime + after.ru_stime - ru.ru_utime - ru.ru_stime, 3))
        self.builds += 1
        return True

    def _refuse(self, key: str, reason: str) -> bool:
        (self.folder / f"{key}.refused").write_text(reason[:500] + "\n")
        return False

    def _warmup(self, name: str) -> Path:
        """The training run's jar (named by its source, so that a key is known before it is built)."""
        entry = self.store.get("jars", name)
        if entry is not None:
            return entry / JAR
        res = self.jvm.compile(harness_sources(), use_server=False, trusted=True)
        if not res.ok:
            raise ValueError(f"ClassWarmup did not compile: {res.diagnostics[:200]}")
        return self._jar(res.classes, name)

    def _jar(self, folder: Path, name: str) -> Path:
        """The jar of a trusted class folder, named by the classes' content (same classes,
        same jar, same bytes)."""
        entry = self.store.get("jars", name)
        if entry is not None:
            return entry / JAR
        _folder_digest(folder)
        started = time.monotonic()

        def write(target: Path) -> None:
            with zipfile.ZipFile(target / JAR, "w", zipfile.ZIP_STORED) as zf:
                for path in _FOLDERS[folder][1]:
                    info = zipfile.ZipInfo(path.relative_to(folder).as_posix(), date_time=(1980, 1, 1, 0, 0, 0))
                    info.external_attr = 0o644 << 16
                    zf.writestr(info, path.read_bytes())

        entry = self.store.put("jars", name, write)
        jvm_store.log("jar", name=name, state=str(self.jvm.cache_dir), wall=round(time.monotonic() - started, 3))
        return entry / JAR


def _folder_digest(folder: Path) -> str:
    """The content of a class folder (its .class files, by relative name), once per process."""
    content = _FOLDERS.get(folder)
    if content is None:
        files = sorted(p for p in folder.rglob("*") if p.is_file() and p.suffix == ".class")
        h = hashlib.sha256()
        for path in files:
            h.update(path.relative_to(folder).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
        content = _FOLDERS[folder] = (h.hexdigest()[:24], tuple(files))
    return content[0]


def _source_digest() -> str:
    global _SOURCE
    if _SOURCE is None:
        _SOURCE = hashlib.sha256("\0".join(f"{k}\0{v}" for k, v in harness_sources().items()).encode()).hexdigest()[:16]
    return _SOURCE


def _digest(path: Path) -> str:
    st = path.stat()
    memo = (str(path), st.st_mtime_ns, st.st_size)
    if memo not in _DIGESTS:
        h = hashlib.sha256()
        with open(path, "rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                h.update(block)
        _DIGESTS[memo] = h.hexdigest()
    return _DIGESTS[memo]


def _last_line(proc: subprocess.CompletedProcess, default: str) -> str:
    lines = [ln for ln in (proc.stderr + proc.stdout).splitlines() if ln.strip()]
    return lines[-1].strip() if lines else default
