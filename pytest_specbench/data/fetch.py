"""``specbench data download``: upstream data at pinned revisions, every file checked.

pooch fetches each file (into a staging folder, moved into the data root only
after its sha256 matches the pin in ``registry/<folder>.txt``), tqdm draws a
progress bar per file on a terminal, platformdirs gives the default cache
folder.  A file whose hash differs is never used: one line names it with the
expected and actual hash, and it is fetched again (or, offline, reported
missing).  An interrupted download leaves nothing in the data root (pooch writes
to a temporary file, removed on failure); the next run starts that file again.

Environment:

- ``SPECBENCH_DATA``: the data root (default: the user cache folder, e.g.
  ``~/.cache/pytest-specbench/data``); without ``pytest --specbench-data`` each
  selected benchmark reads it when it holds every data folder that benchmark
  needs, and its bundled suite otherwise (:func:`cache_readers`);
- ``SPECBENCH_OFFLINE=1``: never touch the network;
- ``SPECBENCH_DATA_MIRROR=URL``: fetch ``URL/<folder>/<file>`` (a server laid out
  like a data root) instead of upstream.
"""
from __future__ import annotations

import gzip
import hashlib
import logging
import os
import shutil
import sys
import tarfile
import tempfile
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Callable, TextIO

from . import sources as S

REGISTRY = Path(str(resources.files("pytest_specbench.data") / "registry"))
PARALLEL = 6  # files fetched at once
SHOWN_ERRORS = 5  # per folder; then a count
GIVE_UP = 12  # failures before the first success after which a folder's other files are not tried
FILE_MODE, DIR_MODE = 0o644, 0o755  # readable by the sandbox's uids
MARKER = ".specbench-verified"  # in each folder: the registry digest it was verified against


@dataclass(frozen=True)
class Entry:
    rel: str  # path in the data root, ``<folder>/<file>``
    sha256: str  # of the content (decompressed where the file is gzip)
    url: str | None  # upstream; None: no upstream publishes it


class DownloadError(Exception):
    """A file could not be had; the message is one line.  ``unreachable``: the host
    (``host``) could not be reached at all (no network, DNS, refused), not a bad file."""

    def __init__(self, message: str, unreachable: bool = False, host: str = ""):
        super().__init__(message)
        self.unreachable, self.host = unreachable, host


def default_root() -> Path:
    env = os.environ.get("SPECBENCH_DATA")
    if env:
        return Path(env).expanduser()
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("pytest-specbench")) / "data"


def offline() -> bool:
    return os.environ.get("SPECBENCH_OFFLINE", "").strip().lower() in ("1", "true", "yes", "on")


def mirror() -> str | None:
    url = os.environ.get("SPECBENCH_DATA_MIRROR", "").strip()
    return url.rstrip("/") if url else None


def content_sha256(path: Path) -> str:
    """sha256 of a file's content; of what it decompresses to when it is gzip."""
    if path.name.endswith(".gz"):
        h = hashlib.sha256()
        with gzip.open(path, "rb") as f:
            for chunk in iter(lambda: f.read(1 << 20), b""):
                h.update(chunk)
        return h.hexdigest()
    import pooch

    return pooch.file_hash(str(path), alg="sha256")


def _registry_text(name: str) -> str:
    path = REGISTRY / name
    if not path.is_file():
        raise DownloadError(f"no pinned registry {name} in this installation")
    return path.read_text(encoding="utf-8")


def entries(folder: str) -> list[Entry]:
    out = []
    for line in _registry_text(f"{folder}.txt").splitlines():
        if line.strip():
            rel, sha, url = line.split(" ", 2)
            out.append(Entry(rel, sha, None if url == "-" else url))
    return out


def _digest(folder: str) -> str:
    return hashlib.sha256(_registry_text(f"{folder}.txt").encode()).hexdigest()


def is_complete(root: Path, folder: str) -> bool:
    """Whether ``root/folder`` was downloaded whole and verified against this registry."""
    marker = root / folder / MARKER
    try:
        return marker.read_text().strip() == _digest(folder)
    except (OSError, DownloadError):
        return False


def verify_folder(root: Path, folder: str) -> list[str]:
    """One line per missing or altered file of a verified folder (empty: intact)."""
    problems = []
    for e in entries(folder):
        path = root / e.rel
        if not path.is_file():
            problems.append(f"{path}: missing")
            continue
        actual = content_sha256(path)
        if actual != e.sha256:
            problems.append(f"{path}: sha256 {actual} does not match the pinned {e.sha256}")
    return problems


def altered_files(root: Path, digests: dict[str, str]) -> list[tuple[Path, str, str, str]]:
    """``(path, folder, actual, pinned)`` of each file a run read (``digests``: its raw
    sha256 by path, as the run hashes its data for the manifest) that lies in a folder
    ``specbench data download`` verified (its marker) and no longer has its pinned hash.
    A folder without the marker is a user's own and is not compared."""
    root = Path(root).resolve()
    pins: dict[str, dict[str, str] | None] = {}
    out = []
    for name, digest in digests.items():
        path = Path(name).resolve()
        try:
            rel = path.relative_to(root)
        except ValueError:
            continue
        folder = rel.parts[0] if rel.parts else ""
        if folder not in pins:
            pins[folder] = ({e.rel: e.sha256 for e in entries(folder)}
                            if folder in S.FOLDERS and is_complete(root, folder) else None)
        pinned = (pins[folder] or {}).get(rel.as_posix())
        if pinned is None:
            continue
        try:  # the pin is of the content: a file kept compressed is hashed decompressed
            actual = content_sha256(path) if path.name.endswith(".gz") else digest
        except (OSError, EOFError):
            actual = "unreadable"
        if actual != pinned:
            out.append((path, folder, actual, pinned))
    return out


def holds(root: Path, benchmarks: list[str]) -> bool:
    """Whether ``root`` holds, verified, every data folder these benchmarks need."""
    try:
        folders = S.folders_for(benchmarks)
    except KeyError:
        return False
    return bool(folders) and all(is_complete(root, f) for f in folders)


def cache_readers(root: Path, benchmarks: list[str]) -> tuple[list[str], dict[str, str]]:
    """Which benchmarks read the download cache ``root``, each on its own: one that
    declares data folders reads it when it holds every one of them, verified; any
    other reads its bundled suite.  Returns the readers and ``{benchmark: why}`` for
    the others: one line saying which folders are missing, when the cache holds a
    folder of this run (another benchmark's, or part of this one's), else "" (no
    cache in use: the bundled suites are the usual default, nothing to say)."""
    declared = {}
    for name in benchmarks:
        try:
            declared[name] = S.folders_for([name])
        except KeyError:  # not a family this registry knows: nothing of it is in the cache
            declared[name] = []
    present = {f for folders in declared.values() for f in folders if is_complete(root, f)}
    readers, bundled = [], {}
    for name, folders in declared.items():
        missing = [f for f in folders if f not in present]
        if folders and not missing:
            readers.append(name)
        else:
            bundled[name] = (f"{name} reads its bundled sample suite: the download cache {root} has no verified "
                             f"{', '.join(m + '/' for m in missing)} (`specbench data download {name}` fetches it)"
                             if folders and present else "")
    return readers, bundled


# ----------------------------------------------------------------------- fetching

def _progress(name: str):
    """A progress bar for one file, on a terminal only (logs get the per-folder lines)."""
    if not sys.stderr.isatty():
        return False
    from tqdm import tqdm

    class FileBar(tqdm):
        def __bool__(self) -> bool:  # pooch tests the bar for truth before it knows the size
            return True

    return FileBar(desc=name, unit="B", unit_scale=True, leave=False, file=sys.stderr)


# The bytes pooch reads, writes, flushes and counts on the bar at a time.  Its default, 1 KiB,
# cost ~0.5 CPU s of this process per 19 MB (the ContractEval folders from a local mirror: a
# Python loop turn, a write and a flush per KiB); 64 KiB ~0.2 s, the same files and hashes.
CHUNK_BYTES = 1 << 16


def _fetch(url: str, staging: Path, name: str) -> Path:
    """Download ``url`` into ``staging`` with pooch (a temporary file, moved on success)."""
    import pooch
    import requests

    pooch.get_logger().setLevel(logging.WARNING)  # it logs each URL and hash at INFO
    downloader = pooch.HTTPDownloader(progressbar=_progress(name), timeout=60, chunk_size=CHUNK_BYTES)
    try:
        return Path(pooch.retrieve(url, known_hash=None, fname=name, path=staging, downloader=downloader))
    except requests.exceptions.HTTPError as exc:
        code = exc.response.status_code if exc.response is not None else "?"
        raise DownloadError(f"{url}: HTTP {code}") from None
    except (requests.exceptions.ConnectionError, requests.exceptions.Timeout) as exc:
        from urllib.parse import urlsplit

        raise DownloadError(f"{url}: {type(exc).__name__}", unreachable=True,
                            host=urlsplit(url).netloc) from None
    except Exception as exc:  # noqa: BLE001 - whatever the transfer raised is one line, never a traceback
        raise DownloadError(f"{url}: {type(exc).__name__}: {str(exc).splitlines()[0][:160] if str(exc) else ''}") from None


def fetch_file(root: Path, e: Entry, base: str | None, staging: Path,
               digest: Callable[[Path], str] = content_sha256) -> None:
    """Fetch one pinned file into ``root``; never leaves an unverified file there.
    ``digest`` is what the pin holds of the file (its content's sha256, or nl2postcond's
    corpus manifest digest)."""
    url = f"{base}/{e.rel}" if base else e.url
    if url is None:
        raise DownloadError(f"{e.rel}: not published upstream; only a mirror (SPECBENCH_DATA_MIRROR) can serve it",
                            host="")
    target = root / e.rel
    staged = _fetch(url, staging / Path(e.rel).parent, Path(url).name if url.endswith(".gz") else target.name)
    try:
        if url.endswith(".gz") and not target.name.endswith(".gz"):  # upstream compresses, the root keeps it plain
            plain = staged.with_suffix(".plain")
            try:
                with gzip.open(staged, "rb") as src, open(plain, "wb") as dst:
                    shutil.copyfileobj(src, dst)
            except (OSError, EOFError) as exc:
                plain.unlink(missing_ok=True)
                raise DownloadError(f"{e.rel}: not a whole gzip file ({exc})") from None
            staged.unlink()
            staged = plain
        try:
            actual = digest(staged)
        except (OSError, EOFError) as exc:  # a truncated .gz
            raise DownloadError(f"{e.rel}: unreadable download ({type(exc).__name__}: {exc}); not used") from None
        if actual != e.sha256:
            raise DownloadError(f"{e.rel}: {'sha256' if digest is content_sha256 else 'manifest digest'} {actual} "
                                f"does not match the pinned {e.sha256} "
                                f"(from {url}); not used")
        target.parent.mkdir(parents=True, exist_ok=True)
        # pooch's temporary file is private (0600); data files are read by sandboxed
        # children running under a uid of their own
        os.chmod(staged, FILE_MODE)
        os.replace(staged, target)
    finally:
        staged.unlink(missing_ok=True)


_SAY = threading.Lock()


def _say(out: TextIO, text: str) -> None:
    with _SAY:  # whole lines, from the download threads too
        out.write(text + "\n")
        out.flush()


def download(folders: list[str], root: Path | None = None, *, out: TextIO = sys.stderr) -> int:
    """Bring ``folders`` into ``root``; 0 when every one is whole and verified."""
    from filelock import FileLock

    root = (root or default_root()).expanduser().resolve()
    base, is_offline = mirror(), offline()
    root.mkdir(parents=True, exist_ok=True)
    failed = False
    with FileLock(str(root / ".download.lock")):
        staging = root / ".partial"
        shutil.rmtree(staging, ignore_errors=True)  # leftovers of a killed run are never used
        staging.mkdir()
        try:
            missing_offline: list[str] = []
            unreachable: set[str] = set()  # hosts that could not be reached: not asked again
            for folder in folders:
                ok = _download_folder(root, folder, base, is_offline, staging, out, missing_offline, unreachable)
                if folder == "postcondbench" and not is_offline and not unreachable:
                    _download_repos(root, base, staging, out)
                if folder == "nl2postcond" and ok:
                    _say(out, nl2postcond_corpus_line(root, base if not is_offline else None, staging))
                failed |= not ok
            if missing_offline:
                shown = ", ".join(missing_offline[:3]) + (f" and {len(missing_offline) - 3} more"
                                                          if len(missing_offline) > 3 else "")
                _say(out, f"specbench data: offline (SPECBENCH_OFFLINE=1), not in {root}: {shown}")
        finally:
            shutil.rmtree(staging, ignore_errors=True)
    return 1 if failed else 0


def _download_folder(root: Path, folder: str, base: str | None, is_offline: bool, staging: Path,
                     out: TextIO, missing_offline: list[str], unreachable: set[str] | None = None) -> bool:
    info = S.FOLDERS[folder]
    todo: list[Entry] = []
    pinned = entries(folder)
    for e in pinned:
        path = root / e.rel
        if path.is_file():
            try:
                actual = content_sha256(path)
            except (OSError, EOFError):
                actual = "unreadable"
            if actual == e.sha256:
                continue
            _say(out, f"{path}: sha256 {actual} does not match the pinned {e.sha256}; not used"
                      + ("" if is_offline else ", fetching it again"))
            path.unlink()
        todo.append(e)
    (root / folder / MARKER).unlink(missing_ok=True)
    if is_offline:
        missing_offline.extend(e.rel for e in todo)
        if not todo:
            _mark(root, folder)
            _say(out, f"{folder}: {len(pinned)} files verified (offline, nothing fetched)")
        return not todo

    said: list[DownloadError] = []
    fetched: list[str] = []
    unreachable = set() if unreachable is None else unreachable

    def one(e: Entry) -> bool:
        if len(said) >= GIVE_UP and not fetched:  # nothing gets through (no network?): stop asking
            said.append(DownloadError(f"{e.rel}: not tried", unreachable=said[-1].unreachable, host=said[-1].host))
            return False
        url_host = (base or e.url or "").split("/")[2] if "://" in (base or e.url or "") else ""
        if url_host and url_host in unreachable:  # an earlier folder found the host unreachable
            said.append(DownloadError(f"{e.rel}: not tried", unreachable=True, host=url_host))
            return False
        try:
            fetch_file(root, e, base, staging)
            fetched.append(e.rel)
            return True
        except DownloadError as exc:
            said.append(exc)
            return False

    # A few files at a time: most folders are many small files (VERINA: 1,217).
    with ThreadPoolExecutor(max_workers=PARALLEL) as pool:
        errors = sum(not ok for ok in pool.map(one, todo))
    have = len(pinned) - errors
    source = base or info.upstream
    # (a file no upstream publishes fails without a host either way: it does not hide an outage)
    if errors and not fetched and any(exc.unreachable for exc in said) and all(
            exc.unreachable or "not published upstream" in str(exc) for exc in said):
        # No network (or a mirror that is down): one line, with the ways out, not a line per file.
        hosts = sorted({exc.host for exc in said if exc.host})
        unreachable.update(hosts)
        where = (f"the mirror {', '.join(hosts) or base} (SPECBENCH_DATA_MIRROR)" if base
                 else ", ".join(hosts) or source)
        _say(out, f"{folder}: cannot reach {where}: {have}/{len(pinned)} files here, nothing fetched; "
                  f"on a machine without network set SPECBENCH_DATA_MIRROR=URL (a server laid out like a data "
                  f"root) or copy a data root's {folder}/ folder into {root} by hand")
        return False
    for exc in said[:SHOWN_ERRORS]:  # one line per file, up to a few
        _say(out, f"specbench data: {exc}")
    if len(said) > SHOWN_ERRORS:
        _say(out, f"specbench data: ... and {len(said) - SHOWN_ERRORS} more file(s) of {folder} not fetched")
    if errors:
        _say(out, f"{folder}: {have}/{len(pinned)} files verified, {errors} missing (from {source}); "
                  "run the command again to retry")
        if info.note:
            _say(out, f"{folder}: note: {info.note}")
        return False
    _mark(root, folder)
    license_note = (f"license: {folder}/{info.license}" if info.license
                    else "no license file: upstream states none (check its terms before redistributing)")
    fetched_text = f"{len(todo)} fetched from {source}" if todo else "already here, nothing fetched"
    _say(out, f"{folder}: {len(pinned)} files verified ({fetched_text}); {license_note}")
    return True


def _mark(root: Path, folder: str) -> None:
    (root / folder).mkdir(parents=True, exist_ok=True)
    (root / folder / MARKER).write_text(_digest(folder) + "\n")


def nl2postcond_corpus_line(root: Path, base: str | None = None, staging: Path | None = None) -> str:
    """What to do for nl2postcond's buggy-program corpus, which is derived from the
    upstream programs just fetched, so no upstream serves it: a mirror of the user's
    (``SPECBENCH_DATA_MIRROR``, ``base``) may, checked against the pin's manifest digest
    (each part's sha256, in task order; without a pin nothing could check it: not
    fetched); else build it here, and the build checks its parts against the pin
    (docs/nl2postcond.md)."""
    from .corpus_pin import corpus_digest

    corpus = root / "nl2postcond" / "corpus.jsonl"
    pin = S.NL2POSTCOND_CORPUS_MANIFEST
    if not corpus.is_file() and base and pin and staging is not None:
        try:
            fetch_file(root, Entry("nl2postcond/corpus.jsonl", pin, None), base, staging, digest=corpus_digest)
            return (f"nl2postcond: {corpus}: verified (from the mirror, manifest digest {pin[:16]}...)"
                    + _nl2postcond_long_outputs(corpus, base, staging))
        except DownloadError as exc:
            mirrored = f" (the mirror's corpus: {exc})"
    else:
        mirrored = ""
    if corpus.is_file():
        from .corpus_pin import differing_tasks, read_parts

        read = read_parts(corpus)  # one pass over a file of up to GBs
        differ = [task for task, _, _ in differing_tasks(read.digests)] if pin else []
        state = ("verified" if read.manifest == pin else
                 f"present; not the pinned parts on {', '.join(differ[:5])} (the family refuses it)" if differ else
                 "present; its pinned tasks are the pinned parts" if pin else
                 "present (no pinned hash to check it against)")
        return f"nl2postcond: {corpus}: {state}" + _nl2postcond_long_outputs(corpus, base, staging)
    check = f"; its parts are checked against the pin (manifest digest {pin[:16]}...)" if pin else ""
    return (f"nl2postcond: the buggy-program corpus is derived from upstream's programs and built here, not "
            f"downloaded: specbench nl2postcond build-corpus --specbench-data {root} --out {corpus} (resumable; "
            f"hours on two cores, docs/timing.md){check}{mirrored}")


def _nl2postcond_long_outputs(corpus: Path, base: str | None, staging: Path | None) -> str:
    """The long outputs ``corpus``'s lines name (``corpus.jsonl.long/<digest>.xz``,
    docs/nl2postcond.md "Long outputs"): each one absent or not the text its name says is fetched
    from the mirror (``MIRROR/nl2postcond/corpus.jsonl.long/<digest>.xz``, the layout of a data
    root) and kept only if its digest and length are the ones its line names; the pin covers the
    lines, so the names.  What is said: a count, and one line per file still missing or wrong
    (up to a few; the family would refuse that task with one line when it reads it)."""
    from .corpus_pin import long_file, long_folder, long_outputs, long_text

    try:
        named = long_outputs(corpus)
    except ValueError as exc:
        return f"\nnl2postcond: {exc}"
    if not named:
        return ""
    folder = long_folder(corpus)
    fetched: list[str] = []

    def problem(digest: str, length: int) -> str | None:
        target = long_file(folder, digest)
        try:
            long_text(target, digest, length)
            return None
        except ValueError as exc:
            why = str(exc)
        if not base or staging is None:
            return f"{target}: {why}"
        rel = f"nl2postcond/{corpus.name}.long/{target.name}"  # a mirror is laid out like a data root
        try:
            staged = _fetch(f"{base}/{rel}", staging / "long", target.name)
        except DownloadError as exc:
            return f"{target}: {why}; the mirror's: {exc}"
        try:
            long_text(staged, digest, length)
        except ValueError:
            staged.unlink(missing_ok=True)
            return f"{target}: {why}; the mirror's {rel} is not the text its name says (blake2b-128 and length); not used"
        folder.mkdir(parents=True, exist_ok=True)
        os.chmod(staged, FILE_MODE)
        os.replace(staged, target)
        fetched.append(digest)
        return None

    with ThreadPoolExecutor(max_workers=PARALLEL) as pool:
        problems = [p for p in pool.map(lambda item: problem(*item), sorted(named.items())) if p]
    lines = [f"; {len(named) - len(problems)} of its {len(named)} long outputs verified in {folder}"
             + (f" ({len(fetched)} fetched from the mirror)" if fetched else "")]
    lines += [f"\nnl2postcond: {p}" for p in problems[:SHOWN_ERRORS]]
    if len(problems) > SHOWN_ERRORS:
        lines.append(f"\nnl2postcond: ... and {len(problems) - SHOWN_ERRORS} more long output(s) missing or wrong")
    return "".join(lines)


# ----------------------------------------------------------- PostcondBench repositories

def repo_folder(root: Path, repo: str) -> Path:
    """Where a PostcondBench repository goes (``--postcond-repos`` takes its parent)."""
    return root / "postcondbench" / "repos" / repo.replace("/", "--")


def _download_repos(root: Path, base: str | None, staging: Path, out: TextIO) -> None:
    """Each repository PostcondBench's tasks run in, as a source archive at the
    tasks' commit, every file checked; one line per repository that cannot be had."""
    for repo, commit in sorted(S.POSTCOND_REPOS):
        target = repo_folder(root, repo)
        name = f"{repo.replace('/', '--')}@{commit}"
        if (target / MARKER).is_file() and (target / MARKER).read_text().strip() == commit:
            continue
        try:
            pinned = dict(line.split(" ", 1) for line in _registry_text(f"repos/{name}.txt").splitlines() if line)
        except DownloadError:
            _say(out, f"postcondbench: skipped {repo}@{commit[:12]}: no pinned file list in this installation")
            continue
        url = f"{base}/postcondbench/repos/{name}.tar.gz" if base else S.GITHUB_ARCHIVE.format(repo=repo, commit=commit)
        try:
            archive = _fetch(url, staging, f"{name}.tar.gz")
            unpacked = Path(tempfile.mkdtemp(dir=staging))
            _unpack_checked(archive, unpacked, pinned)
        except (DownloadError, tarfile.TarError, OSError, EOFError) as exc:
            _say(out, f"postcondbench: skipped {repo}@{commit[:12]}: {exc}")
            continue
        shutil.rmtree(target, ignore_errors=True)
        target.parent.mkdir(parents=True, exist_ok=True)
        os.chmod(unpacked, DIR_MODE)  # mkdtemp's is 0700: the tests run under a sandbox uid of their own
        os.replace(unpacked, target)
        (target / MARKER).write_text(commit + "\n")
        _say(out, f"postcondbench: {repo}@{commit[:12]}: {len(pinned)} files verified "
                  f"into {target.parent} (the postcond family's default --postcond-repos on this root)")


def _unpack_checked(archive: Path, dest: Path, pinned: dict[str, str]) -> None:
    """Unpack a source archive (one top folder, as GitHub's) and check every pinned file."""
    with tarfile.open(archive) as tar:
        members = [m for m in tar.getmembers() if m.isfile()]
        for m in members:
            rel = m.name.split("/", 1)[1] if "/" in m.name else m.name
            if rel not in pinned:
                continue  # not a regular file at the commit (e.g. a file git-archive adds): left out
            data = tar.extractfile(m).read()
            actual = hashlib.sha256(data).hexdigest()
            if actual != pinned[rel]:
                raise DownloadError(f"{rel}: sha256 {actual} does not match the pinned {pinned[rel]}; not used")
            path = dest / rel
            path.parent.mkdir(mode=DIR_MODE, parents=True, exist_ok=True)
            path.write_bytes(data)
            path.chmod(DIR_MODE if m.mode & 0o111 else FILE_MODE)
    absent = [rel for rel in pinned if not (dest / rel).is_file()]
    if absent:
        raise DownloadError(f"{len(absent)} pinned file(s) not in the archive, e.g. {absent[0]}")
