"""The store of the ``jvm`` executor's trusted build products, shared by state folders (issues 45, 48).

A fresh state folder used to pay about 9 CPU s of JVM set-up before its first job:
javac of the harness's own Java (the warm javac's ``CompileServer``, the JML runtime,
the JUnit runner, a bundled project, the class-sharing training class), the jars
packed of them and the AppCDS archives (:mod:`.class_sharing`).  None of it depends
on a sample, so one store holds it for every state folder of a machine (several
runs, shards on one host, CI, the test suite): keyed as before by content, ``java
-version`` and the flags, built once, read by all.

- **Where.**  ``$SPECBENCH_JVM_STORE``; else ``<user cache>/pytest-specbench/jvm``;
  ``SPECBENCH_JVM_STORE=off`` (or a store that cannot be made or is not safe, see
  below): each state folder keeps its own, ``<state>/jvm/store`` (the fallback).
- **What.**  Entries are folders: ``classes/KEY`` (a trusted class folder),
  ``jars/NAME`` (``classes.jar``), ``cds/KEY`` (``archive.jsa``); beside them only
  the harness's counters, locks and the store's key.  Untrusted products (a sample's
  classes, javac's verdicts on them) never go here: they stay in the state folder.
- **Written by the harness only, atomically.**  An entry is made in a temporary
  folder inside the store, its files 0444 and folders 0555, sealed, then renamed into
  place: a reader sees a whole entry or none.  No job writes one: javac's classes come
  back over the job's channel and the harness writes them; the archives' training
  runs are the harness's own trusted processes.
- **Jobs see it read-only or not at all.**  Every sandbox hides the store's folder
  (:meth:`.sandbox.SandboxClient._zygote_cfg`, as ``$HOME``); a JVM job gets the entries
  on its class path bound read-only (and, as root, runs under a uid of its own that
  owns nothing here); the warm javac gets ``classes/`` (0711: passable, not listable)
  bound whole, read-only, so that entries made after its start are on it.  The key is in no entry: no job can read it.
- **Checked before use.**  Each entry carries a seal (``.seal``): HMAC-SHA256 of its
  content (names and bytes) under the store's key (``key``, 0400, made with the
  store).  The first time a process uses an entry it checks the seal, that every file
  is this user's, not a link and not writable by group or others; a damaged, foreign
  or unsealed entry is moved aside and built again, never used.  The store's folders
  themselves must be this user's and writable by nobody else, or the store is not
  used (the fallback).

``SPECBENCH_JVM_LOG=FILE`` (off by default) appends one JSON line per build the
executor does (a trusted javac, the warm javac's start, a jar, an archive) with its
wall and CPU seconds: what a state folder's set-up costs (docs/timing.md, "Session 18").
"""
from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
import shutil
import stat
import time
from pathlib import Path
from typing import Callable, Mapping

ENV = "SPECBENCH_JVM_STORE"
LOG_ENV = "SPECBENCH_JVM_LOG"
SEAL = ".seal"
KINDS = ("classes", "jars", "cds")
_CHECKED: dict[Path, tuple[int, int]] = {}  # entry -> (inode, mtime_ns) sealed entries this process checked
_STORES: dict[Path, "JvmStore | None"] = {}


def shared_root() -> Path | None:
    """The shared store's folder (``$SPECBENCH_JVM_STORE``, else under the user's cache),
    or None when it is turned off."""
    value = os.environ.get(ENV, "").strip()
    if value.lower() in ("off", "0", "none"):
        return None
    if value:
        return Path(os.path.abspath(os.path.expanduser(value)))
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("pytest-specbench")) / "jvm"


def for_state(cache_dir: Path, root: Path | None | bool = True) -> "JvmStore":
    """The store an executor of ``cache_dir`` uses: ``root`` (True: :func:`shared_root`)
    when it can be made and is safe, else the state folder's own."""
    shared = shared_root() if root is True else (root or None)
    store = opened(Path(shared)) if shared else None
    return store if store is not None else (opened(Path(cache_dir) / "store") or JvmStore(Path(cache_dir) / "store"))


def opened(root: Path) -> "JvmStore | None":
    """The store at ``root``, made if missing; None when it is not safe or cannot be made
    (once per process and folder)."""
    root = Path(os.path.abspath(root))
    if root not in _STORES:
        store = JvmStore(root)
        _STORES[root] = store if store.ready() else None
    return _STORES[root]


def log(event: str, **fields) -> None:
    """One line in ``$SPECBENCH_JVM_LOG`` (nothing when unset)."""
    path = os.environ.get(LOG_ENV)
    if not path:
        return
    line = json.dumps({"event": event, "pid": os.getpid(), "time": round(time.time(), 3), **fields}) + "\n"
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, line.encode())
        finally:
            os.close(fd)
    except OSError:
        pass


def _private(st: os.stat_result) -> bool:
    """This user's, and writable by nobody else."""
    return st.st_uid == os.geteuid() and not st.st_mode & 0o022


class JvmStore:
    def __init__(self, root: Path):
        self.root = Path(root)
        self.problem = ""
        self._key: bytes | None = None

    def ready(self) -> bool:
        """Make the store's folders and key when missing; False (``problem`` says why)
        when they are not this user's alone."""
        try:
            for folder in (self.root, *(self.root / k for k in KINDS), self.root / "aside"):
                folder.mkdir(mode=0o700, parents=True, exist_ok=True)
                st = os.lstat(folder)
                if not stat.S_ISDIR(st.st_mode) or not _private(st):
                    self.problem = f"{folder} is not a folder of this user's alone"
                    return False
                if folder == self.root / "classes" and stat.S_IMODE(st.st_mode) != 0o711:
                    # passable, not listable, by the uid a sandboxed job runs under as root: the
                    # warm javac gets this folder bound whole (jvm._JavacServer.start), each entry
                    # being 0555 (the store's root stays 0700: no other user reaches it on the host)
                    os.chmod(folder, 0o711)
            self.key()
        except OSError as exc:
            self.problem = f"{self.root}: {exc.strerror or exc}"
            return False
        return True

    def key(self) -> bytes:
        """The seals' key: made once (0400, linked into place: two processes agree on one)."""
        if self._key is None:
            path = self.root / "key"
            if not path.exists():
                tmp = self.root / f"key.{os.getpid()}.{secrets.token_hex(4)}"
                fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o400)
                try:
                    os.write(fd, secrets.token_bytes(32))
                finally:
                    os.close(fd)
                try:
                    os.link(tmp, path)
                except FileExistsError:
                    pass
                finally:
                    os.unlink(tmp)
            st = os.lstat(path)
            if not stat.S_ISREG(st.st_mode) or st.st_uid != os.geteuid() or st.st_mode & 0o077:
                raise OSError(0, f"{path} is not this user's alone")
            self._key = path.read_bytes()
        return self._key

    # ------------------------------------------------------------------ entries
    def path(self, kind: str, name: str) -> Path:
        return self.root / kind / name

    def get(self, kind: str, name: str) -> Path | None:
        """The entry when it is whole and sealed by this store (checked once per process);
        a damaged or foreign one is moved aside (None: build it again)."""
        entry = self.path(kind, name)
        try:
            st = os.lstat(entry)
        except FileNotFoundError:
            return None
        if _CHECKED.get(entry) == (st.st_ino, st.st_mtime_ns):
            return entry
        if self._sealed(entry, st):
            _CHECKED[entry] = (st.st_ino, st.st_mtime_ns)
            return entry
        self.discard(entry)
        return None

    def put(self, kind: str, name: str, files: Mapping[str, bytes] | Callable[[Path], None]) -> Path:
        """Publish an entry: ``files`` (relative name -> bytes), or a callable that writes
        them into the folder it is given.  Returns the entry (another process's, when it
        published the same one first)."""
        entry = self.path(kind, name)
        tmp = self.root / kind / f".tmp-{name}-{os.getpid()}-{secrets.token_hex(4)}"
        tmp.mkdir(mode=0o700)
        try:
            if callable(files):
                files(tmp)
            else:
                for rel, data in files.items():
                    target = (tmp / rel).resolve()
                    if not str(target).startswith(str(tmp.resolve()) + os.sep) or Path(rel).name == SEAL:
                        raise ValueError(f"bad entry file name {rel!r}")
                    target.parent.mkdir(parents=True, exist_ok=True)
                    target.write_bytes(data)
            (tmp / SEAL).write_text(self._seal(tmp))
            for path in sorted(tmp.rglob("*"), reverse=True):
                os.chmod(path, 0o555 if path.is_dir() else 0o444)
            os.chmod(tmp, 0o555)
            try:
                os.rename(tmp, entry)
            except OSError:  # published meanwhile by another process
                got = self.get(kind, name)
                if got is None:
                    raise
                return got
            tmp = None
        finally:
            if tmp is not None:
                _remove(tmp)
        st = os.lstat(entry)
        _CHECKED[entry] = (st.st_ino, st.st_mtime_ns)
        return entry

    def discard(self, entry: Path) -> None:
        """Move a bad entry out of the way (then remove it): never used again."""
        _CHECKED.pop(entry, None)
        aside = self.root / "aside" / f"{entry.parent.name}-{entry.name}-{os.getpid()}-{secrets.token_hex(4)}"
        try:
            os.rename(entry, aside)
        except OSError:
            return
        log("store-discard", entry=str(entry))
        _remove(aside)

    def _sealed(self, entry: Path, st: os.stat_result) -> bool:
        if not stat.S_ISDIR(st.st_mode) or not _private(st):
            return False
        try:
            want = (entry / SEAL).read_text().strip()
            return hmac.compare_digest(want, self._seal(entry))
        except (OSError, ValueError):
            return False

    def _seal(self, folder: Path) -> str:
        """HMAC of the folder's content: every name (relative) and file's bytes; ValueError
        on a link, another user's file or one others may write."""
        mac = hmac.new(self.key(), digestmod=hashlib.sha256)
        for path in sorted(folder.rglob("*")):
            st = os.lstat(path)
            if stat.S_ISLNK(st.st_mode) or not _private(st) or not (stat.S_ISDIR(st.st_mode) or stat.S_ISREG(st.st_mode)):
                raise ValueError(f"{path}: not a plain file of this user's alone")
            rel = path.relative_to(folder).as_posix()
            if rel == SEAL:
                continue
            mac.update(rel.encode() + (b"\0d\0" if stat.S_ISDIR(st.st_mode) else b"\0f\0"))
            if stat.S_ISREG(st.st_mode):
                mac.update(hashlib.sha256(path.read_bytes()).digest())
        return mac.hexdigest()


def _remove(folder: Path) -> None:
    """Remove an entry's folder (its folders are 0555: made writable first)."""
    for path in [folder, *folder.rglob("*")]:
        try:
            if path.is_dir() and not path.is_symlink():
                os.chmod(path, 0o700)
        except OSError:
            pass
    shutil.rmtree(folder, ignore_errors=True)
