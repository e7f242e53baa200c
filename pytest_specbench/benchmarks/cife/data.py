"""Reading CIFE tasks (upstream ``benchmark_data.jsonl``).

One JSON object per line: ``id``, ``source_dataset``, ``instruction`` (the
constraints already merged in, paper §4.3), ``constraints`` and
``instruction_difficulty``.  ``constraints`` is a list of ``{type, constraint}``;
upstream's released file holds it as a JSON list, its pipeline's intermediate
files as a Python literal (``"[{'type': ...}]"``): both are accepted, the literal
read with :func:`ast.literal_eval` (never ``eval``).  The bundled suite adds
``reference_answer`` (what ``--model=reference`` answers).
"""
from __future__ import annotations

import ast
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, Sequence

from ...errors import DataError
from ...data.jsonl import read_jsonl

REQUIRED = ("id", "instruction", "constraints")
DATA_FILE = "cife/benchmark_data.jsonl"  # under --specbench-data


@dataclass(frozen=True)
class Constraint:
    index: int  # 0-based position in the task's list (item names show it)
    category: str  # upstream "type": one of the paper's 13 categories (§3.1)
    text: str


def parse_constraints(raw: Any) -> list[Constraint]:
    """The constraint list of one row; ``ValueError`` with a readable reason."""
    if isinstance(raw, str):
        text = raw.strip()
        try:
            raw = json.loads(text)
        except json.JSONDecodeError:
            try:
                raw = ast.literal_eval(text)
            except (ValueError, SyntaxError, MemoryError, RecursionError) as exc:
                raise ValueError(f"'constraints' is neither a JSON nor a Python-literal list ({type(exc).__name__})") from None
    if not isinstance(raw, (list, tuple)):
        raise ValueError(f"'constraints' must be a list, got {type(raw).__name__}")
    if not raw:
        raise ValueError("'constraints' is empty")
    out = []
    for i, item in enumerate(raw):
        if isinstance(item, dict):
            category, text = item.get("type"), item.get("constraint")
        else:
            category, text = None, None
        if not isinstance(text, str) or not text.strip():
            raise ValueError(f"constraint {i} has no 'constraint' text")
        if not isinstance(category, str) or not category.strip():
            raise ValueError(f"constraint {i} has no 'type' (category)")
        out.append(Constraint(i, category.strip(), text.strip()))
    return out


def read_tasks(path: Path) -> Iterator[tuple[int, dict[str, Any], list[Constraint]]]:
    """``(line, row, constraints)`` per row; a bad row raises :class:`DataError`."""
    seen: dict[str, int] = {}
    for line, row in read_jsonl(path, REQUIRED):
        if not isinstance(row["instruction"], str) or not row["instruction"].strip():
            raise DataError(path, line, "'instruction' must be a non-empty string")
        try:
            constraints = parse_constraints(row["constraints"])
        except ValueError as exc:
            raise DataError(path, line, str(exc)) from None
        task_id = str(row["id"])
        if task_id in seen:
            raise DataError(path, line, f"duplicate id {task_id!r} (first on line {seen[task_id]})")
        seen[task_id] = line
        yield line, row, constraints


def constraints_of(data: Any) -> Sequence[Constraint]:
    """The parsed constraints stored in a task's data by the adapter."""
    return data["_constraints"]
