"""Joining the journals of a sharded run, pytest-free (``specbench merge``).

Each shard (``--specbench-shard=I/N``) journals its own items.  Joining checks
what makes them one run: the same run key (the journal header without the
shard: versions, benchmarks, data hashes, model, checks, samples, limits,
sandbox, options; the first difference is named in one line), the shards
``0..N-1`` each once, each run finished (its journal's last run wrote its end
line: an item missing from a finished shard was deselected there, by ``-k``
say), and no item with two different verdicts.  The report is
then built by ``plugin/merge.py`` from the joined lines, by the same code a
single run ends with.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

from ..errors import InfrastructureError, SpecbenchError
from . import fingerprint
from .journal import COMPLETE_KEY, HEADER_KEY, JOURNAL_NAME, MERGE_FREE, Journal, header_difference

# Journal header keys that are no part of the run key and differ from shard to shard.
_PER_JOURNAL = ("run_id", "invocation", COMPLETE_KEY, *MERGE_FREE)


@dataclass
class Joined:
    header: dict[str, Any]  # the first journal's header, without its shard
    entries: dict[str, dict[str, Any]]  # nodeid -> result, {"error": ...} or {"skipped": ...}
    shards: int | None  # N of the shards, or None for journals of unsharded runs
    sources: list[str]  # the journals, as named
    invocation: dict[str, Any]  # the first journal's: {"args": [...], "dir": ...}
    fingerprint_differences: list[str]  # how the other journals' fingerprints differ from the first's


def journal_path(name: str | Path) -> Path:
    """A journal given as its file or its run folder (``SPECBENCH_DIR/runs/RUN_ID``)."""
    path = Path(name)
    return path / JOURNAL_NAME if path.is_dir() else path


def join(names: Iterable[str | Path]) -> Joined:
    """The joined journals; :class:`SpecbenchError` (one line) when they are not one run."""
    names = [str(n) for n in names]
    if not names:
        raise SpecbenchError("merge: name the journals to merge (SPECBENCH_DIR/runs/RUN_ID or its journal.jsonl)")
    first_name, first, entries, shards, differences = None, None, {}, {}, []
    for name in names:
        path = journal_path(name)
        if not path.is_file():
            raise SpecbenchError(f"merge: {name}: no such journal")
        try:
            header, lines = Journal.read_entries(path)
        except InfrastructureError as exc:
            raise SpecbenchError(f"merge: {exc}") from None
        if header is None:
            raise SpecbenchError(f"merge: {name}: no journal header (not a specbench run journal)")
        if first is None:
            first_name, first = name, header
        elif header.get(HEADER_KEY) != first.get(HEADER_KEY):
            raise SpecbenchError(f"merge: {name} is journal format {header.get(HEADER_KEY)!r}, "
                                 f"{first_name} is {first.get(HEADER_KEY)!r}")
        else:
            difference = header_difference(first, header, ignore=MERGE_FREE)
            if difference:
                raise SpecbenchError(f"merge: {name} is not of the same run as {first_name}: {difference}")
        if not header.get(COMPLETE_KEY):
            raise SpecbenchError(f"merge: {name}: its run did not finish (killed, interrupted, or stopped early by "
                                 "-x/--maxfail): resume it (--specbench-resume=RUN_ID) and merge again")
        shards[name] = _shard(header.get("shard"), name)
        if header is not first:  # hosts of one run may still differ (a JDK, a kernel): said, not refused
            differences += [f"{name}: {line}" for line in fingerprint.differences(first.get("fingerprint"),
                                                                                  header.get("fingerprint"))]
        for nodeid, entry in lines.items():
            before = entries.get(nodeid)
            if before is None or _RANK[_verdict(entry)] > _RANK[_verdict(before)]:
                entries[nodeid] = entry  # a verdict over an error over a skip
            elif _RANK[_verdict(before)] == 2 and _verdict(entry) != _verdict(before) and _RANK[_verdict(entry)] == 2:
                raise SpecbenchError(f"merge: item {nodeid} has two verdicts ({_verdict(before)} in an earlier "
                                     f"journal, {_verdict(entry)} in {name}); merge each item's journal once")
    count = _check_shards(shards)
    header = {k: v for k, v in first.items() if k not in _PER_JOURNAL}
    return Joined(header, entries, count, names, dict(first.get("invocation") or {}), differences)


def _shard(value: Any, name: str) -> tuple[int, int] | None:
    if value is None:
        return None
    if (not isinstance(value, list) or len(value) != 2 or not all(isinstance(v, int) for v in value)
            or not 0 <= value[0] < value[1]):
        raise SpecbenchError(f"merge: {name}: its header's shard {json.dumps(value)} is not [I, N]")
    return value[0], value[1]


def _check_shards(shards: dict[str, tuple[int, int] | None]) -> int | None:
    """N when the journals are the shards 0..N-1 of one run, each once; None when no
    journal is a shard's.  Anything else is one line."""
    sharded = {name: s for name, s in shards.items() if s is not None}
    if not sharded:
        return None
    if len(sharded) < len(shards):
        plain = next(name for name, s in shards.items() if s is None)
        raise SpecbenchError(f"merge: {plain} is not a shard's journal (no --specbench-shard), the others are")
    counts = sorted({n for _, n in sharded.values()})
    if len(counts) > 1:
        raise SpecbenchError(f"merge: the journals are shards of {' and '.join(map(str, counts))}: "
                             "merge the shards of one split (--specbench-shard=I/N with one N)")
    count = counts[0]
    seen: dict[int, str] = {}
    for name, (index, _) in sharded.items():
        if index in seen:
            raise SpecbenchError(f"merge: {seen[index]} and {name} are both shard {index}/{count}")
        seen[index] = name
    missing = [i for i in range(count) if i not in seen]
    if missing:
        raise SpecbenchError(f"merge: shard{'s' if len(missing) > 1 else ''} "
                             f"{', '.join(f'{i}/{count}' for i in missing)} missing: merge all {count} shards' journals")
    return count


_RANK = {"skipped": 0, "error": 1, "pass": 2, "fail": 2}


def _verdict(entry: dict[str, Any]) -> str:
    if "skipped" in entry:
        return "skipped"
    if "error" in entry:
        return "error"
    return "pass" if entry.get("passed") else "fail"
