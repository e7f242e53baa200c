"""The pin of nl2postcond's buggy-program corpus (``registry/corpus/nl2postcond.txt``).

The corpus is derived from upstream's programs and built by the user (no one hosts
it), so what can be pinned is its content: the sha256 of each task's part (the
task's lines, as the build's part file holds them), the rules they were built
under (the parts folder's ``rules.json``) and the *manifest digest*: the sha256 of the
list of pinned parts, one ``<task id> <sha256>\n`` line each in task order (tasks with no
kept program, whose part is empty, are left out, as a corpus file has no line for them).
A corpus file's own manifest digest is worked out from its lines (``corpus_digest``), so
it equals the pin's exactly when the file is the pinned parts joined in task order, and a
pin can take new parts from a later build without the bytes of the parts it holds
(``pin_corpus --add``; until session 24 ``whole`` was the sha256 of the joined bytes,
which only a machine holding every part could extend).  Written by ``python -m
pytest_specbench.benchmarks.nl2postcond.tools.pin_corpus`` from a parts folder; read by
the family (a corpus whose pinned task differs is refused), by the build (each part it
writes is compared) and by ``specbench data download`` (a mirror's corpus is kept only
with the manifest digest).

File format, one item a line: ``rules <json>``, ``manifest <sha256>``,
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
    manifest: str | None = None
    parts: dict[str, str] = field(default_factory=dict)


EMPTY_PART = hashlib.sha256(b"").hexdigest()  # a task with no kept program: no line in the corpus


def manifest_digest(parts: dict[str, str] | list[tuple[str, str]]) -> str:
    """The sha256 of ``<task id> <sha256>\n`` for each non-empty part, in the given order
    (task order: a pin's, or a corpus file's, whose build writes its tasks in that order)."""
    pairs = parts.items() if isinstance(parts, dict) else parts
    text = "".join(f"{task} {sha}\n" for task, sha in pairs if sha != EMPTY_PART)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class CorpusParts:
    """What one pass over a corpus file gives: each task's part sha256 (its lines, wherever
    they are) and the file's manifest digest, which lists a task at each place its lines
    start, so a file whose task's lines are apart (no build writes that) never has a pin's."""
    digests: dict[str, str]
    manifest: str


def read_parts(corpus: Path) -> CorpusParts:
    hashes: dict[str, Any] = {}
    starts: list[str] = []  # the task of each run of lines, in file order
    with corpus.open("rb") as fh:
        for line in fh:
            task = line_task(line) or ""
            if not starts or starts[-1] != task:
                starts.append(task)
            hashes.setdefault(task, hashlib.sha256()).update(line if line.endswith(b"\n") else line + b"\n")
    digests = {task: h.hexdigest() for task, h in hashes.items()}
    return CorpusParts(digests, manifest_digest([(task, digests[task]) for task in starts]))


def corpus_digest(corpus: Path) -> str:
    """A corpus file's manifest digest: the pin's ``manifest`` when it is the pinned parts,
    joined in task order (a reordered or altered file, one with a task more or fewer, or one
    whose task's lines are apart, is not)."""
    return read_parts(corpus).manifest


def read_pin(path: Path = PIN_FILE) -> CorpusPin:
    """The pin (empty when the file is absent)."""
    if not path.is_file():
        return CorpusPin()
    rules: dict[str, Any] = {}
    manifest, parts = None, {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        key, _, value = line.partition(" ")
        if key == "rules":
            rules = json.loads(value)
        elif key == "manifest":
            manifest = value.strip()
        else:
            parts[key] = value.strip()
    return CorpusPin(rules, manifest, parts)


def write_pin(pin: CorpusPin, path: Path = PIN_FILE) -> None:
    lines = ["# nl2postcond's buggy-program corpus: the sha256 of each task's part, the rules they were built",
             "# under and the manifest digest: the sha256 of the '<task> <sha256>' lines below, non-empty parts",
             "# only (tools/pin_corpus.py; data/corpus_pin.py; docs/nl2postcond.md)",
             f"rules {json.dumps(pin.rules, sort_keys=True)}"]
    lines += [f"manifest {pin.manifest}"] if pin.manifest else []
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
    return read_parts(corpus).digests


def differing_tasks(corpus: Path | dict[str, str], pin: CorpusPin | None = None) -> list[tuple[str, str, str]]:
    """(task, its sha256, the pinned sha256) of each pinned task whose lines in ``corpus``
    (a file, or its :func:`part_digests` already read) differ from its pin (tasks absent
    from the corpus or unpinned are not listed)."""
    pin = pin or read_pin()
    digests = corpus if isinstance(corpus, dict) else part_digests(corpus)
    return [(task, sha, pin.parts[task]) for task, sha in digests.items()
            if task in pin.parts and pin.parts[task] != sha]


# ---------------------------------------------------------------- long outputs
# A bad output whose text is over 64 K characters is not in its corpus line: the line names it,
# {"h": [digest, length]} (a string: the file is the string) or {"v": [digest, length]} (another
# value: the file is its wire text), and the text is a file ``<digest>.xz`` beside the corpus
# (``FILE.long/``, or a build's ``FILE.parts/long/``).  The pin covers the lines, so the names;
# each file is checked against its name (blake2b-128 of the UTF-8 text) and length when read.
LONG_STRING, LONG_VALUE = "h", "v"
_LONG_TAG = re.compile(rb'\{\\"[hv]\\": ?\[')  # inside a line's bopi text (a JSON string in the line)
_DIGEST = re.compile(r"[0-9a-f]{32}")


def long_folder(corpus: Path) -> Path:
    """Where ``corpus``'s long outputs are: ``FILE.long/``, or a build's ``FILE.parts/long/``
    when only that exists."""
    own = corpus.with_name(corpus.name + ".long")
    parts = corpus.with_name(corpus.name + ".parts") / "long"
    return parts if not own.is_dir() and parts.is_dir() else own


def long_file(folder: Path, digest: str) -> Path:
    if not _DIGEST.fullmatch(digest):
        raise ValueError(f"not a digest: {digest[:40]!r}")
    return folder / f"{digest}.xz"


def long_text(path: Path, digest: str, length: int) -> str:
    """The text of the long output file ``path``, or ValueError naming it (absent, not xz, or
    not the text its digest and length say)."""
    import lzma

    from ..execution.wire import string_digest

    try:
        data = lzma.decompress(path.read_bytes())
    except OSError:
        raise ValueError(f"long output {digest} is not in {path.parent}") from None
    except lzma.LZMAError:
        raise ValueError(f"{path} is not the string its name says") from None
    text = data.decode("utf-8", "surrogatepass")
    if len(text) != length or string_digest(text) != digest:
        raise ValueError(f"{path} is not the string its name says")
    return text


def long_outputs(corpus: Path) -> dict[str, int]:
    """``{digest: length}`` of every long output ``corpus``'s lines name (only lines that hold
    a long output's tag are parsed).  A malformed line raises ValueError naming it."""
    named: dict[str, int] = {}
    with corpus.open("rb") as fh:
        for lineno, line in enumerate(fh, 1):
            if not _LONG_TAG.search(line):
                continue
            try:
                _named_in(json.loads(json.loads(line)["bopi"]), named)
            except (ValueError, KeyError, TypeError) as exc:
                raise ValueError(f"{corpus}:{lineno}: not a corpus line ({exc})") from None
    return named


def _named_in(plain: Any, named: dict[str, int]) -> None:
    """Collect the long outputs named in a line's plain bopi (the wire's plain form: a dict is
    always one tag, so a one-key dict ``h``/``v`` is a reference, never an output's value)."""
    stack = [plain]
    while stack:
        value = stack.pop()
        if isinstance(value, list):
            stack.extend(value)
        elif isinstance(value, dict):
            if len(value) == 1 and next(iter(value)) in (LONG_STRING, LONG_VALUE):
                digest, length = next(iter(value.values()))
                if not isinstance(digest, str) or not _DIGEST.fullmatch(digest) or type(length) is not int:
                    raise ValueError(f"a long output's name is not [digest, length]: {value!r:.80}")
                named[digest] = length
            else:
                stack.extend(value.values())
