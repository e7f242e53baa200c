"""JSON-lines reading that names the file and line of any problem."""
from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any, Iterator

from ..errors import DataError


def open_text(path: Path):
    return gzip.open(path, "rt", encoding="utf-8") if path.suffix == ".gz" else open(path, encoding="utf-8")


def parse_line(path: Path, lineno: int, line: str | bytes, required: tuple[str, ...] = ()) -> dict[str, Any]:
    """One non-blank line as a JSON object with the ``required`` fields; else a
    :class:`DataError` naming the file and line."""
    try:
        obj = json.loads(line)
    except json.JSONDecodeError as exc:
        raise DataError(path, lineno, f"malformed JSON ({exc.msg} at column {exc.colno})") from None
    if not isinstance(obj, dict):
        raise DataError(path, lineno, f"expected a JSON object, got {type(obj).__name__}")
    missing = [k for k in required if k not in obj]
    if missing:
        raise DataError(path, lineno, f"missing field {', '.join(map(repr, missing))}")
    return obj


def read_jsonl(path: Path, required: tuple[str, ...] = ()) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(line_number, object)``; a bad line raises :class:`DataError` naming it."""
    path = Path(path)
    if not path.is_file():
        raise DataError(path, None, "file not found")
    try:
        with open_text(path) as fh:
            for lineno, line in enumerate(fh, 1):
                if line.strip():
                    yield lineno, parse_line(path, lineno, line, required)
    except (OSError, EOFError, UnicodeDecodeError) as exc:
        raise DataError(path, None, f"cannot read: {exc}") from None


def file_digest(path: Path) -> str:
    """sha256 of a data file, for cache keys and the report manifest."""
    import hashlib

    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()
