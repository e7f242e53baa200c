"""Metrics of PostcondBench (Appendix D.3; Table 2; Figure 3).

Corr@k / Comp@k: the probability that at least one of k sets drawn from the n
generated ones is correct / complete, with the unbiased estimator
1 - C(n-c, k) / C(n, k) averaged over methods.  Δ@k = Corr@k - Comp@k (eq. 1),
ρ@k = Comp@k / Corr@k (eq. 2).  Per-method gap (Figure 3): corr_rate - comp_rate
over methods with at least one correct set.
"""
from __future__ import annotations

from math import comb
from typing import Any, Mapping, Sequence

KS = (1, 3, 5)


def at_k(n: int, c: int, k: int) -> float | None:
    if n < k:
        return None
    if n - c < k:
        return 1.0
    return 1.0 - comb(n - c, k) / comb(n, k)


def summarize(per_method: Mapping[str, Sequence[tuple[bool, bool]]], ks: Sequence[int] = KS) -> dict[str, Any]:
    """``per_method``: method -> [(correct, complete)] per sample."""
    out: dict[str, Any] = {}
    for k in ks:
        corr = [at_k(len(v), sum(c for c, _ in v), k) for v in per_method.values()]
        comp = [at_k(len(v), sum(c and m for c, m in v), k) for v in per_method.values()]
        pairs = [(a, b) for a, b in zip(corr, comp) if a is not None]
        if not pairs:
            continue
        corr_k = sum(a for a, _ in pairs) / len(pairs)
        comp_k = sum(b for _, b in pairs) / len(pairs)
        out[f"Corr@{k}"] = corr_k
        out[f"Comp@{k}"] = comp_k
        out[f"Delta@{k}"] = corr_k - comp_k
        out[f"rho@{k}"] = comp_k / corr_k if corr_k else None
    gaps = {}
    for method, v in per_method.items():
        if v and any(c for c, _ in v):
            gaps[method] = sum(c for c, _ in v) / len(v) - sum(c and m for c, m in v) / len(v)
    out["gaps"] = gaps
    return out


def is_standalone(file_text: str) -> bool:
    """Table 3 / §5.4 "Dependency Complexity": a method is *standalone* (Solo.)
    if it runs with only built-in types and the standard library, otherwise
    non-standalone (Dep.).  Upstream's released task files carry no such label,
    so it is derived here from the method's module: standalone iff every import
    is a standard-library module (``sys.stdlib_module_names``) and none is
    relative.  A task's own ``standalone`` field, when present, wins."""
    import ast
    import sys

    try:
        tree = ast.parse(file_text)
    except SyntaxError:
        return False
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                return False
            names = [node.module or ""]
        else:
            continue
        if any(n.split(".")[0] not in sys.stdlib_module_names for n in names):
            return False
    return True


def by_group(per_method: Mapping[str, Sequence[tuple[bool, bool]]], groups: Mapping[str, str]) -> dict[str, Any]:
    """Table 3: Corr@1 and Comp@1 per dependency group (``Dep.``/``Solo.``),
    each averaged over the group's methods (Appendix D.3 estimator)."""
    out: dict[str, Any] = {}
    for group in ("Dep", "Solo"):
        members = {m: v for m, v in per_method.items() if groups.get(m) == group}
        s = summarize(members, ks=(1,))
        for name in ("Corr@1", "Comp@1"):
            if name in s:
                out[f"{name}[{group}]"] = s[name]
        out[f"methods[{group}]"] = len(members)
    return out


def is_standalone_java(file_text: str) -> bool:
    """Table 3's *standalone* for a Java method, from its file: every import is of
    the JDK (``java.*``, ``javax.*``).  An approximation: classes of the file's own
    package need no import and are not seen."""
    import re

    imports = re.findall(r"^\s*import\s+(?:static\s+)?([\w.]+)", file_text, re.M)
    return all(name.startswith(("java.", "javax.")) for name in imports)


LANGUAGES = {"python": "Python", "java": "Java"}


def by_language(per_method: Mapping[str, Sequence[tuple[bool, bool]]], languages: Mapping[str, str]) -> dict[str, Any]:
    """Table 2 reports each language apart: Corr@1 and Comp@1 per language
    (``Corr@1[Python]``, ``Corr@1[Java]``), for the languages present."""
    out: dict[str, Any] = {}
    for lang, label in LANGUAGES.items():
        members = {m: v for m, v in per_method.items() if languages.get(m) == lang}
        if not members:
            continue
        s = summarize(members, ks=(1,))
        for name in ("Corr@1", "Comp@1"):
            if name in s:
                out[f"{name}[{label}]"] = s[name]
        out[f"methods[{label}]"] = len(members)
    return out
