"""The pin of nl2postcond's buggy-program corpus (``registry/corpus/nl2postcond.txt``).

The corpus is derived from upstream's programs and built by the user (no one hosts
it), so what can be pinned is its content: the sha256 of each task's part (the
task's lines, as the build's part file holds them), the rules they were built
under (the parts folder's ``rules.json``) and the sha256 of the pinned parts joined
in task order (the file a whole build of those tasks writes, which a mirror may
serve).  Written by ``python -m pytest_specbench.benchmarks.nl2postcond.tools.pin_corpus``
from a parts folder; read by the family (a corpus whose pinned task differs is
refused), by the build (each part it writes is compared) and by ``specbench data
download`` (a mirror's corpus is kept only with the joined hash).

File format, one item a line: ``rules <json>``, ``whole <sha256>``,
``<task id> <sha256>``; ``#`` lines are comments.
"""
from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

PIN_FILE = Path(str(resources.files("pytest_specbench.data") / "registry" / "corpus" / "nl2postcond.txt"))


@dataclass(frozen=True)
class CorpusPin:
    rules: dict[str, Any] = field(default_factory=dict)
    whole: str | None = None
    parts: dict[str, str] = field(default_factory=dict)


def read_pin(path: Path = PIN_FILE) -> CorpusPin:
    """The pin (empty when the file is absent)."""
    if not path.is_file():
        return CorpusPin()
    rules: dict[str, Any] = {}
    whole, parts = None, {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        key, _, value = line.partition(" ")
        if key == "rules":
            rules = json.loads(value)
        elif key == "whole":
            whole = value.strip()
        else:
            parts[key] = value.strip()
    return CorpusPin(rules, whole, parts)


def write_pin(pin: CorpusPin, path: Path = PIN_FILE) -> None:
    lines = ["# nl2postcond's buggy-program corpus: the sha256 of each task's part, the rules they were built",
             "# under and of the parts joined in task order (tools/pin_corpus.py; docs/nl2postcond.md)",
             f"rules {json.dumps(pin.rules, sort_keys=True)}"]
    lines += [f"whole {pin.whole}"] if pin.whole else []
    lines += [f"{task} {sha}" for task, sha in pin.parts.items()]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


_TASK_PREFIX = re.compile(rb'^\{"task_id": "((?:[^"\\]|\\.)*)"')


def line_task(line: bytes) -> str | None:
    """The task id a corpus line starts with (``Kept.line`` writes it first), or None."""
    found = _TASK_PREFIX.match(line)
    return json.loads(b'"' + found.group(1) + b'"') if found else None


def part_digests(corpus: Path) -> dict[str, str]:
    """``{task id: sha256 of its lines}`` of a corpus file (a build writes each task's
    lines together, in task order, as its part file holds them)."""
    digests: dict[str, Any] = {}
    with corpus.open("rb") as fh:
        for line in fh:
            task = line_task(line) or ""
            digests.setdefault(task, hashlib.sha256()).update(line if line.endswith(b"\n") else line + b"\n")
    return {task: h.hexdigest() for task, h in digests.items()}


def differing_tasks(corpus: Path, pin: CorpusPin | None = None) -> list[tuple[str, str, str]]:
    """(task, its sha256, the pinned sha256) of each pinned task whose lines in
    ``corpus`` differ from its pin (tasks absent from the corpus or unpinned are not listed)."""
    pin = pin or read_pin()
    return [(task, sha, pin.parts[task]) for task, sha in part_digests(corpus).items()
            if task in pin.parts and pin.parts[task] != sha]
