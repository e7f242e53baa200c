"""Read VERINA task folders (upstream layout, ``datasets/verina/<task>/``).

A folder holds ``task.json`` (signature, NL spec), ``description.txt``,
``task.lean`` with ``-- !benchmark @start NAME [attrs]`` / ``-- !benchmark @end NAME``
sections, ``test.json`` (positive tests: ``input``, ``expected``, ``unexpected``) and
``reject_inputs.json`` (inputs violating the precondition).  ``task.lean`` is kept
as a list of segments (plain text and sections) so that the task's own sections
put back reproduce the file byte for byte (:func:`reassemble`).
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...errors import DataError

START = re.compile(r"^(?P<indent>[ \t]*)-- !benchmark @start (?P<name>\w+)(?P<attrs>[^\n]*)$")
END = re.compile(r"^[ \t]*-- !benchmark @end (?P<name>\w+)[ \t]*$")

# Task ids upstream uses as the two prompt examples (Appendix C.3): never scored.
FEWSHOT_IDS = ("verina_basic_15", "verina_basic_44")


@dataclass(frozen=True)
class Section:
    name: str  # import, task_aux, solution_aux, precond_aux, precond, code_aux, code, ...
    attrs: str  # e.g. " type=solution"
    indent: str  # indentation of the marker lines (bodies inside a definition)
    start_line: str  # the marker lines as written, with their line endings
    body: str  # raw text between the markers
    end_line: str

    @property
    def kind(self) -> str:
        m = re.search(r"type=(\w+)", self.attrs)
        return m.group(1) if m else ""


@dataclass(frozen=True)
class LeanTemplate:
    segments: tuple[str | Section, ...]

    def sections(self, name: str) -> list[Section]:
        return [s for s in self.segments if isinstance(s, Section) and s.name == name]

    def text(self, name: str, kind: str | None = None) -> str:
        """The dedented body of every section ``name`` (of ``type=kind`` if given), joined."""
        parts = [dedent_body(s.body, s.indent) for s in self.sections(name) if kind is None or s.kind == kind]
        return "\n".join(p for p in parts if p.strip())


def dedent_body(body: str, indent: str) -> str:
    lines = body.splitlines()
    out = [ln[len(indent):] if indent and ln.startswith(indent) else ln for ln in lines]
    return "\n".join(out).strip("\n")


def parse_template(text: str, path: Path | str = "task.lean") -> LeanTemplate:
    segments: list[str | Section] = []
    lines = text.splitlines(keepends=True)
    plain: list[str] = []
    i = 0
    while i < len(lines):
        m = START.match(lines[i].rstrip("\r\n"))
        if not m:
            plain.append(lines[i])
            i += 1
            continue
        if plain:
            segments.append("".join(plain))
            plain = []
        name = m.group("name")
        j = i + 1
        while j < len(lines):
            e = END.match(lines[j].rstrip("\r\n"))
            if e:
                if e.group("name") != name:
                    raise DataError(path, j + 1, f"'@end {e.group('name')}' closes '@start {name}' (line {i + 1})")
                break
            if START.match(lines[j].rstrip("\r\n")):
                raise DataError(path, j + 1, f"'@start' inside section {name!r} (opened at line {i + 1})")
            j += 1
        else:
            raise DataError(path, i + 1, f"section {name!r} is never closed")
        segments.append(Section(name, m.group("attrs"), m.group("indent"), lines[i], "".join(lines[i + 1:j]), lines[j]))
        i = j + 1
    if plain:
        segments.append("".join(plain))
    return LeanTemplate(tuple(segments))


def reassemble(template: LeanTemplate, replace: dict[str, str] | None = None, stop_before: str | None = None) -> str:
    """The file with each section's body; ``replace`` maps a section name to new
    (dedented) text, re-indented to the section's markers.  Several sections of
    one name (``import type=solution`` / ``type=llm``): the first takes the text, the
    others are emptied, unless the key is ``name:kind``."""
    replace = replace or {}
    out: list[str] = []
    used: set[str] = set()
    for seg in template.segments:
        if isinstance(seg, str):
            out.append(seg)
            continue
        if seg.name == stop_before:
            # The plain text before this section that belongs to it (none in upstream files) stays.
            break
        key = f"{seg.name}:{seg.kind}" if f"{seg.name}:{seg.kind}" in replace else seg.name
        if key not in replace:
            body = seg.body
        elif key in used:
            body = ""
        else:
            used.add(key)
            body = indent_body(replace[key], seg.indent)
        out.append(seg.start_line + body + seg.end_line)
    return "".join(out)


def indent_body(text: str, indent: str) -> str:
    text = text.strip("\n")
    if not text.strip():
        return "\n"
    return "".join((indent + ln if ln.strip() else ln) + "\n" for ln in text.split("\n"))


@dataclass(frozen=True)
class VerinaTask:
    task_id: str
    folder: Path
    signature: dict[str, Any]
    description: str
    spec_text: dict[str, str]
    template: LeanTemplate
    tests: list[dict[str, Any]]
    reject_inputs: list[dict[str, Any]]
    lean_text: str
    metadata: dict[str, Any] = field(default_factory=dict)

    @property
    def fewshot(self) -> bool:
        return self.task_id in FEWSHOT_IDS or bool(self.metadata.get("fewshot"))

    @property
    def has_proof(self) -> bool:
        proof = self.template.text("proof")
        return bool(proof.strip()) and not re.search(r"\bsorry\b", proof)


def _json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise DataError(path, None, "missing file") from None
    except json.JSONDecodeError as exc:
        raise DataError(path, exc.lineno, f"invalid JSON: {exc.msg}") from None


def load_task(folder: Path) -> VerinaTask:
    meta = _json(folder / "task.json")
    sig = meta.get("signature")
    if not isinstance(sig, dict) or "name" not in sig or not isinstance(sig.get("parameters"), list):
        raise DataError(folder / "task.json", None, "'signature' needs 'name', 'parameters' and 'return_type'")
    lean_path = folder / meta.get("lean_file", "task.lean")
    try:
        lean_text = lean_path.read_bytes().decode("utf-8")
    except FileNotFoundError:
        raise DataError(lean_path, None, "missing file") from None
    template = parse_template(lean_text, lean_path)
    for required in ("precond", "code", "postcond", "proof"):
        if not template.sections(required):
            raise DataError(lean_path, None, f"no '-- !benchmark @start {required}' section")
    tests = _json(folder / meta.get("test_file", "test.json"))
    rejects_path = folder / meta.get("reject_inputs_file", "reject_inputs.json")
    rejects = _json(rejects_path) if rejects_path.exists() else []
    names = [p["param_name"] for p in sig["parameters"]]
    for kind, rows, path in (("test", tests, folder / "test.json"), ("reject input", rejects, rejects_path)):
        if not isinstance(rows, list):
            raise DataError(path, None, f"expected a list of {kind}s")
        for n, row in enumerate(rows):
            if not isinstance(row, dict) or not isinstance(row.get("input"), dict) or set(row["input"]) != set(names):
                raise DataError(path, None, f"{kind} {n}: 'input' must name exactly the parameters {names}")
            if kind == "test" and ("expected" not in row or not isinstance(row.get("unexpected", []), list)):
                raise DataError(path, None, f"test {n}: needs 'expected' and a list 'unexpected'")
    desc_path = folder / meta.get("description_file", "description.txt")
    description = desc_path.read_text(encoding="utf-8") if desc_path.exists() else ""
    return VerinaTask(
        task_id=meta.get("id", folder.name), folder=folder, signature=sig, description=description,
        spec_text=dict(meta.get("specification") or {}), template=template, tests=tests,
        reject_inputs=rejects, lean_text=lean_text, metadata=dict(meta.get("metadata") or {}))


def task_folders(root: Path) -> list[Path]:
    """Task folders under ``root`` (a folder holding ``task.json`` files one level down)."""
    if (root / "task.json").exists():
        return [root]
    folders = [p for p in root.iterdir() if p.is_dir() and (p / "task.json").exists()]
    return sorted(folders, key=_natural)


def _natural(p: Path) -> list[Any]:
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", p.name)]


def load_tasks(root: Path) -> list[VerinaTask]:
    folders = task_folders(root)
    if not folders:
        raise DataError(root, None, "no VERINA task folders (a folder with task.json per task)")
    return [load_task(f) for f in folders]
