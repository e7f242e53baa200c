"""The run journal: a header line, then one JSON line per finished item, appended as it finishes.

Nothing is lost if the run dies: every result already reported is written to
the file as it arrives (flushed line by line, so it survives a killed or crashed
process), and fsynced at most FSYNC_INTERVAL seconds later and at the end (so a
machine that loses power loses at most that last second; an fsync per line
cost 3 ms an item, 90 s on a 28,600-sample run).  ``--specbench-resume``
continues the run from it.  Layout: ``STATE_DIR/runs/RUN_ID/journal.jsonl``.

The first line is the header: what the results depend on (specbench version,
benchmarks, data file hashes, model, checks, samples, limits, sandbox, benchmark
options).  A run is only resumed with the same header, so that a resumed run's
report is the report the uninterrupted run would have written.  Result lines
are ``{"nodeid": ..., <the item's outcome>}``; an item that errored (harness
trouble, E) has an ``"error"`` line instead and is run again on resume; a
skipped item has a ``"skipped"`` line (its reason), which a resume decides
again and ``specbench merge`` reports as the run that skipped it did; a run
that ends writes a ``{"fingerprint": ..., "complete": ...}`` line (its
fingerprint, ``reports/fingerprint.py``, and whether every selected item ran).  The
header also carries the run's ``shard`` (``[I, N]``, ``--specbench-shard``) and
its ``invocation`` (arguments and folder, which ``specbench merge`` runs again
without the items); neither is part of the run key.
"""
from __future__ import annotations

import json
import os
import time
import uuid
from pathlib import Path
from typing import Any

from ..errors import InfrastructureError, OptionError

JOURNAL_NAME = "journal.jsonl"
HEADER_KEY = "specbench_journal"  # the header line carries this key (value: format version)
FORMAT = 1
LATEST = "latest"
FINGERPRINT_KEY = "fingerprint"  # a line written at the end of a run: its fingerprint (reports/fingerprint.py)
COMPLETE_KEY = "complete"  # ... and whether every selected item ran
FSYNC_INTERVAL = 1.0  # seconds between fsyncs of the journal (every line is flushed at once)

# header key -> how to name it in a refusal
_HEADER_LABELS = {
    "specbench_version": "specbench version", "benchmarks": "benchmark list", "data_files": "data files",
    "model": "model", "checks": "checks", "samples": "samples per task", "limits": "sandbox limits",
    "sandbox": "sandbox mode", "options": "benchmark options", "shard": "shard (--specbench-shard)",
}
# What may differ between the journals ``specbench merge`` joins: the rest is the run key.
MERGE_FREE = ("shard",)


def addoption(group, addini) -> None:
    group.addoption(
        "--specbench-resume", dest="specbench_resume", nargs="?", const=LATEST, default=None, metavar="RUN_ID",
        help="continue an interrupted run: items already in its journal are not run again and new results "
             "are appended to it (RUN_ID: a folder under SPECBENCH_DIR/runs; no value: the latest run). "
             "Write --specbench-resume=RUN_ID, not a separate argument. Refused if the benchmarks, data, "
             "model, checks or limits differ.")
    group.addoption(
        "--specbench-max-errors", dest="specbench_max_errors", default=None, metavar="N",
        help="harness errors (E: sandbox or toolchain trouble, not the model's fault) the run tolerates. "
             "Errors are never counted as model failures; with at most N of them and no failures the run "
             "passes (exit 0), with more than N it fails (exit 1). Default 0: any error fails the run, "
             "as in plain pytest.")
    addini("specbench_max_errors", "default for --specbench-max-errors", default="0")


def max_errors(settings) -> int:
    raw = settings.option("specbench_max_errors")
    try:
        value = int(str(raw if raw not in (None, "") else 0))
    except ValueError:
        raise OptionError("--specbench-max-errors", f"expected a whole number, got {raw!r}") from None
    if value < 0:
        raise OptionError("--specbench-max-errors", f"must be 0 or more, got {value}")
    return value


class Journal:
    def __init__(self, path: Path, header: dict[str, Any] | None = None):
        self.path = Path(path)
        self.header = header
        self._fh = None
        self._synced = 0.0  # monotonic time of the last fsync

    @property
    def run_id(self) -> str:
        return self.path.parent.name

    # ----------------------------------------------------------- creating
    @classmethod
    def create(cls, runs_dir: Path, header: dict[str, Any]) -> "Journal":
        """A new run; its header is written now, so an unwritable folder is known before any work."""
        run_id = time.strftime("%Y%m%d-%H%M%S") + "-" + uuid.uuid4().hex[:6]
        journal = cls(Path(runs_dir) / run_id / JOURNAL_NAME, header)
        try:
            journal._write_line({HEADER_KEY: FORMAT, "run_id": run_id, **header})
        except InfrastructureError as exc:
            raise OptionError("--specbench-dir", str(exc)) from None
        return journal

    @classmethod
    def resume(cls, runs_dir: Path, run_id: str, header: dict[str, Any]) -> tuple["Journal", dict[str, dict]]:
        """The journal of run ``run_id`` (or the latest) and its finished items ``{nodeid: outcome}``.

        Raises :class:`OptionError` (one line) when the run does not exist or was made
        with different inputs.
        """
        runs_dir = Path(runs_dir)
        path = cls._find(runs_dir, run_id)
        old_header, finished = cls.read(path)
        if old_header is None:
            raise OptionError("--specbench-resume", f"{path} has no journal header (not a specbench run journal)")
        if old_header.get(HEADER_KEY) != FORMAT:
            raise OptionError("--specbench-resume", f"{path} is journal format {old_header.get(HEADER_KEY)!r}, "
                                                    f"this specbench writes {FORMAT}; start a new run")
        difference = header_difference(old_header, header)
        if difference:
            raise OptionError("--specbench-resume", f"cannot resume run {path.parent.name}: {difference}; "
                                                    "start a new run (without --specbench-resume)")
        journal = cls(path, header)
        try:
            journal._drop_partial_line()
        except OSError as exc:
            raise OptionError("--specbench-resume", f"cannot write the run journal {path}: {exc.strerror}") from None
        return journal, finished

    @staticmethod
    def _find(runs_dir: Path, run_id: str) -> Path:
        if run_id == LATEST:
            journals = list(runs_dir.glob(f"*/{JOURNAL_NAME}")) if runs_dir.is_dir() else []
            # The newest run with a result (a run that finished with none removed its folder). Where
            # no run has one, the newest run killed before its first result (e.g. while generating):
            # resuming it evaluates everything, its answers served by the generation cache.
            if not journals:
                raise OptionError("--specbench-resume", f"no run with results to resume under {runs_dir}")
            with_results = [p for p in journals if _has_results(p)] or journals
            return max(with_results, key=lambda p: (p.stat().st_mtime, p.parent.name))
        path = runs_dir / run_id / JOURNAL_NAME
        if "/" in run_id or run_id in (".", "..") or not path.is_file():
            known = sorted(p.parent.name for p in runs_dir.glob(f"*/{JOURNAL_NAME}")) if runs_dir.is_dir() else []
            hint = f"; runs there: {', '.join(known[-5:])}" if known else "; there are no runs there"
            raise OptionError("--specbench-resume", f"no run {run_id!r} under {runs_dir}{hint}")
        return path

    # ------------------------------------------------------------ reading
    @staticmethod
    def read(path: Path) -> tuple[dict[str, Any] | None, dict[str, dict]]:
        """``(header, {nodeid: outcome})`` of the items with a result (errored ones are left
        out: they run again; so are skipped ones, decided again).  A line cut short by a
        crash is ignored."""
        header, entries = Journal.read_entries(path)
        return header, {nodeid: entry for nodeid, entry in entries.items()
                        if "error" not in entry and "skipped" not in entry}

    @staticmethod
    def read_entries(path: Path) -> tuple[dict[str, Any] | None, dict[str, dict]]:
        """``(header, {nodeid: last line})`` with every kind of line (result, ``error``,
        ``skipped``): what ``specbench merge`` joins; the header has the last
        ``fingerprint`` line's.  A line cut short by a crash is ignored."""
        header, entries = None, {}
        try:
            with open(path, encoding="utf-8") as fh:
                for lineno, line in enumerate(fh):
                    if not line.endswith("\n"):
                        break  # the run died while writing this line
                    try:
                        entry = json.loads(line)
                    except ValueError:
                        continue
                    if not isinstance(entry, dict):
                        continue
                    if lineno == 0 and HEADER_KEY in entry:
                        header = entry
                    elif FINGERPRINT_KEY in entry and header is not None:  # the end of a run (the last one's)
                        header = {**header, FINGERPRINT_KEY: entry[FINGERPRINT_KEY],
                                  COMPLETE_KEY: bool(entry.get(COMPLETE_KEY))}
                    elif isinstance(entry.get("nodeid"), str):
                        entries[entry.pop("nodeid")] = entry  # a resumed run's later line wins
        except OSError as exc:
            raise InfrastructureError(f"cannot read the run journal {path}: {exc.strerror}") from None
        except UnicodeDecodeError:
            raise InfrastructureError(f"{path} is not a run journal (not UTF-8 text)") from None
        return header, entries

    # ------------------------------------------------------------ writing
    def append(self, nodeid: str, outcome: dict[str, Any]) -> None:
        self._write_line({"nodeid": nodeid, **outcome})

    def append_end(self, fingerprint: dict[str, Any], complete: bool) -> None:
        """The line a run ends with: its fingerprint, and whether every selected item ran
        (not interrupted, not stopped by -x or --maxfail).  A resumed run adds its own."""
        self._write_line({FINGERPRINT_KEY: fingerprint, COMPLETE_KEY: complete})

    def _write_line(self, obj: dict[str, Any]) -> None:
        try:
            if self._fh is None:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                self._fh = open(self.path, "a", encoding="utf-8")
            self._fh.write(json.dumps(obj) + "\n")
            self._fh.flush()
            now = time.monotonic()
            if now - self._synced >= FSYNC_INTERVAL:
                os.fsync(self._fh.fileno())
                self._synced = now
        except OSError as exc:
            raise InfrastructureError(f"cannot write the run journal {self.path}: {exc.strerror or exc}") from None

    def _drop_partial_line(self) -> None:
        """Cut a last line the crash left unfinished, so the next line starts clean."""
        with open(self.path, "rb+") as fh:
            data = fh.read()
            if data and not data.endswith(b"\n"):
                fh.truncate(data.rfind(b"\n") + 1)

    def discard(self) -> None:
        """Remove this run's folder (a run that evaluated nothing leaves none behind)."""
        import shutil

        self.close()
        shutil.rmtree(self.path.parent, ignore_errors=True)

    def close(self) -> None:
        if self._fh is not None:
            try:
                os.fsync(self._fh.fileno())
            except OSError:
                pass
            self._fh.close()
            self._fh = None


def _has_results(path: Path) -> bool:
    """Whether a journal has a complete line after its header (read no further)."""
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            fh.readline()
            return fh.readline().endswith("\n")
    except OSError:
        return False


def header_difference(old: dict[str, Any], new: dict[str, Any], ignore: tuple[str, ...] = ()) -> str:
    """One phrase saying how two journal headers differ ('' if they do not); keys in
    ``ignore`` are not compared.  Both are compared as JSON has them (a header read
    back has lists where the run's own has tuples: a declared option's default)."""
    old, new = json.loads(json.dumps(old)), json.loads(json.dumps(new))
    for key, label in _HEADER_LABELS.items():
        if key in ignore:
            continue
        before, now = old.get(key), new.get(key)
        if before == now:
            continue
        if key == "data_files" and isinstance(before, dict) and isinstance(now, dict):
            for name in sorted(set(before) | set(now)):
                if before.get(name) != now.get(name):
                    if name not in now:
                        return f"it used data file {name}, this run does not"
                    if name not in before:
                        return f"this run uses data file {name}, it did not"
                    return (f"data file {name} changed (sha256 {str(before[name])[:12]}... then, "
                            f"{str(now[name])[:12]}... now)")
        if isinstance(before, dict) and isinstance(now, dict):
            name = next(k for k in sorted(set(before) | set(now)) if before.get(k) != now.get(k))
            return f"its {label} differ: {name} was {_short(before.get(name))}, now {_short(now.get(name))}"
        return f"its {label} differ: {_short(before)} then, {_short(now)} now"
    return ""


def _short(value: Any, width: int = 120) -> str:
    text = json.dumps(value, sort_keys=True)
    return text if len(text) <= width else text[:width - 3] + "..."
