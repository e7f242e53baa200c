"""How a benchmark's metrics are laid out in the reports people read (terminal,
Markdown, HTML): which are single values, which form a breakdown table, which
are per-item values, and how a value is written.

An adapter's ``aggregate`` returns one flat mapping. Three shapes occur in it:

* single values: ``csr``, ``pass@1``, ``cvt_tasks``;
* breakdowns, by key name: ``PREFIX/PART`` (``category_micro/Security and
  Privacy``, ``judgement_acc/original``) or ``PREFIX[PART]`` (``Corr@1[Java]``).
  Prefixes that share parts are one table (rows and columns chosen so the
  table is taller than wide): SpecEval's accuracies by category are its Table 1;
* per-item values, by value type: a mapping (``pcs_by_program``: program ->
  value), possibly hundreds of entries, shown folded with a summary line.

Keys starting with ``_`` are private (data an adapter hands to its own
``figures``): they never reach a report.
"""
from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

# A cell of a report table never holds more than this many characters (a long
# value is cut, its full text is in the JSON report).
CELL_LIMIT = 80

_BREAKDOWN = re.compile(r"^(?P<prefix>[^/\[\]]+?)(?:/(?P<slash>.+)|\[(?P<bracket>[^\[\]]+)\])$")

UNDEFINED = "n/a"
UNDEFINED_NOTE = "n/a: not defined on these results"


def is_private(key: str) -> bool:
    return key.startswith("_")


def public(metrics: Mapping[str, Any]) -> dict[str, Any]:
    """The metrics without private keys (what a report may show or write)."""
    return {k: v for k, v in metrics.items() if not is_private(k)}


def is_undefined(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


# Metrics that are coefficients in [-1, 1], not shares: printed as 0.68, never 68%.
_COEFFICIENT = re.compile(r"(^|_)kappa($|[_/\[@])")


def is_coefficient(name: str | None) -> bool:
    return bool(name) and bool(_COEFFICIENT.search(name))


def fmt(value: Any, limit: int = CELL_LIMIT, name: str | None = None) -> str:
    """One value as every report writes it: a rate as a percentage, a coefficient
    (Cohen's kappa, by ``name``) with two decimals, a count as an integer, an
    undefined value (None or NaN) as ``n/a``."""
    if is_undefined(value):
        return UNDEFINED
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.2f}" if is_coefficient(name) else f"{100 * value:.2f}%"
    return cut(str(value), limit)


def cut(text: str, limit: int = CELL_LIMIT) -> str:
    return text if len(text) <= limit else text[:limit - 1] + "…"


def split_key(key: str) -> tuple[str, str] | None:
    """``("category_micro", "Security and Privacy")`` for a breakdown key, else None."""
    m = _BREAKDOWN.match(key)
    if not m:
        return None
    return m.group("prefix"), m.group("slash") if m.group("slash") is not None else m.group("bracket")


def _scalar(value: Any) -> bool:
    return value is None or isinstance(value, (int, float, str, bool))


@dataclass
class Breakdown:
    """Prefixes that share parts: ``cell[(prefix, part)]`` is the metric key."""

    prefixes: list[str]
    parts: list[str]
    cell: dict[tuple[str, str], str] = field(default_factory=dict)
    bracket: bool = False  # keys were PREFIX[PART]

    @property
    def rows_are_prefixes(self) -> bool:
        return len(self.prefixes) >= len(self.parts)

    def grid(self) -> tuple[list[str], list[str], list[list[str | None]]]:
        """``(row labels, column labels, metric key or None per cell)``."""
        rows, cols = (self.prefixes, self.parts) if self.rows_are_prefixes else (self.parts, self.prefixes)
        grid = [[self.cell.get((r, c) if self.rows_are_prefixes else (c, r)) for c in cols] for r in rows]
        return rows, cols, grid

    def key(self, prefix: str, part: str) -> str:
        return f"{prefix}[{part}]" if self.bracket else f"{prefix}/{part}"

    @property
    def title(self) -> str:
        if len(self.prefixes) <= 3:
            return ", ".join(self.prefixes)
        return f"{', '.join(self.prefixes[:2])}, … ({len(self.prefixes)} metrics)"


@dataclass
class PerItem:
    """Mappings with the same keys (``pcs_by_program``, ``test_branch_coverage_by_program``)."""

    names: list[str]
    keys: list[str]
    values: dict[str, Mapping[str, Any]]

    def summary(self, name: str) -> str:
        """``4 values: mean 97.50%, min 90.00%, max 100.00%`` (numbers only)."""
        vals = [v for v in self.values[name].values()
                if isinstance(v, (int, float)) and not isinstance(v, bool) and not is_undefined(v)]
        text = f"{len(self.values[name])} values"
        if vals:
            mean = sum(vals) / len(vals)
            text += f": mean {fmt(float(mean) if any(isinstance(v, float) for v in vals) else mean)}"
            text += f", min {fmt(min(vals))}, max {fmt(max(vals))}"
        return text


@dataclass
class Layout:
    single: list[str]
    breakdowns: list[Breakdown]
    per_item: list[PerItem]


def layout(metrics: Mapping[str, Any], order: Sequence[str] = ()) -> Layout:
    """Sort ``metrics`` into single values (the keys in ``order`` first, e.g. the
    adapter's headline), breakdown tables and per-item tables; private keys are left out."""
    keys = [k for k in order if k in metrics] + [k for k in metrics if k not in set(order)]
    single, by_prefix, mappings = [], {}, {}
    bracket: dict[str, bool] = {}
    for k in metrics:  # breakdowns in the adapter's own order (its parts are ordered: categories, counts)
        if is_private(k):
            continue
        v = metrics[k]
        if isinstance(v, Mapping):
            mappings[k] = v
            continue
        if not _scalar(v):  # a list or other structure: shown as text, cut
            single.append(k)
            continue
        split = split_key(k)
        if split is None:
            single.append(k)
            continue
        prefix, part = split
        by_prefix.setdefault(prefix, {})[part] = k
        bracket[prefix] = k.endswith("]")
    breakdowns = _group(by_prefix, bracket)
    position = {k: i for i, k in enumerate(keys)}
    for b in breakdowns:  # prefixes in display order (the headline's first), parts in the adapter's
        b.prefixes.sort(key=lambda p: min(position[k] for (q, _), k in b.cell.items() if q == p))
    # a prefix with one part that shares it with nobody reads better as a single value
    for b in list(breakdowns):
        if len(b.prefixes) == 1 and len(b.parts) == 1:
            breakdowns.remove(b)
            single.append(b.cell[(b.prefixes[0], b.parts[0])])
    single.sort(key=keys.index)
    per_item: list[PerItem] = []
    for name, mapping in mappings.items():
        same = next((p for p in per_item if set(p.keys) == set(map(str, mapping))), None)
        if same is None:
            per_item.append(PerItem([name], [str(k) for k in mapping], {name: mapping}))
        else:
            same.names.append(name)
            same.values[name] = mapping
    return Layout(single, breakdowns, per_item)


def _group(by_prefix: Mapping[str, Mapping[str, str]], bracket: Mapping[str, bool]) -> list[Breakdown]:
    """Prefixes whose parts overlap form one table (connected components, in first-seen order)."""
    groups: list[Breakdown] = []
    for prefix, parts in by_prefix.items():
        joined = [g for g in groups if g.bracket == bracket[prefix] and set(g.parts) & set(parts)]
        position = min((groups.index(g) for g in joined), default=len(groups))
        target = Breakdown([], [], {}, bracket[prefix])
        for g in joined:
            groups.remove(g)
            target.prefixes += g.prefixes
            target.parts += [p for p in g.parts if p not in target.parts]
            target.cell.update(g.cell)
        target.prefixes.append(prefix)
        target.parts += [p for p in parts if p not in target.parts]
        target.cell.update({(prefix, part): key for part, key in parts.items()})
        groups.insert(position, target)
    return groups


def note_for(key: str, notes: Mapping[str, str]) -> str | None:
    """The adapter's note (``metric_notes``) for a metric or for its breakdown prefix."""
    if key in notes:
        return notes[key]
    split = split_key(key)
    return notes.get(split[0]) if split else None


def undefined_notes(keys: Sequence[str], notes: Mapping[str, str]) -> list[str]:
    """Lines explaining ``n/a`` values: the general meaning, then each adapter note once."""
    out = [UNDEFINED_NOTE + (":" if any(note_for(k, notes) for k in keys) else "")]
    seen: dict[str, list[str]] = {}
    for k in keys:
        note = note_for(k, notes)
        if note:
            seen.setdefault(note, []).append(k)
    for note, ks in seen.items():
        names = ", ".join(ks[:3]) + (f" and {len(ks) - 3} more" if len(ks) > 3 else "")
        out.append(f"  {names}: {note}")
    return out


def evaluated_tasks(section: Mapping[str, Any]) -> int:
    """Tasks of a benchmark's report section with at least one verdict (pass or F): a task
    whose every item was a harness error (E) is in the section, but nothing was evaluated."""
    return sum(1 for task in section.get("tasks", {}).values()
               if any("error" not in v for s in task.get("samples", []) for v in s.get("checks", {}).values()))


def tasks_line(section: Mapping[str, Any]) -> str:
    """``12 tasks evaluated``, or ``0 of 12 tasks evaluated (12 with harness errors only)``."""
    n_tasks, evaluated = len(section.get("tasks", {})), evaluated_tasks(section)
    if evaluated == n_tasks:
        return f"{n_tasks} tasks evaluated"
    return f"{evaluated} of {n_tasks} tasks evaluated ({n_tasks - evaluated} with harness errors only)"


def shown_path(path: Any) -> str:
    """A data path as the reports print it: normalised (``p/../shared/datasets`` -> ``shared/datasets``)."""
    return os.path.normpath(str(path)) if path not in (None, "", "bundled") else str(path)
