"""The package's floors, read from its import statements (``ast``: nothing is
imported, so this costs milliseconds and leaves ``sys.modules`` alone).  Every
import counts, at the top of a file or inside a function.

- ``types.py`` (the shared vocabulary) is the ground floor: it imports nothing
  of the package.
- The shared services speak that vocabulary and never import ``benchmarks/``
  (the adapters and their registry), save the exceptions listed with why.
- What is private to pytest (``_pytest``) is imported under ``plugin/`` only,
  and the gate's logic (``reports/gate.py``) imports nothing of pytest, not
  even through the modules it imports.
"""
from __future__ import annotations

import ast
from functools import lru_cache
from pathlib import Path

import pytest_specbench

PACKAGE = Path(pytest_specbench.__file__).resolve().parent
ROOT = "pytest_specbench"

# The floors below the adapters: none imports pytest_specbench.benchmarks.
SERVICES = ("models", "execution", "engine", "metrics", "reports", "pyspec", "jml", "data")
# (file, module imported) -> why it stays.
EXCEPTIONS = {
    ("data/sources.py", "pytest_specbench.benchmarks"):
        "`specbench data download FAMILY` and the download cache's check (`data.fetch.holds`) turn a family "
        "name into its data folders through the registry (benchmarks/__init__.py reads each family folder's "
        "`DATA`); a lazy import of the registry, which imports no adapter",
    ("pyspec/tiers/z3_tier.py", "pytest_specbench.benchmarks.contract.synthesis"):
        "the z3 tier (#47) reuses the contract family's assert-to-z3 translator (its CVT synthesis) rather "
        "than a copy; the translator is pytest-free and imports no adapter; moving it to a shared service "
        "is left for a later round",
}


def files(folder: Path, mentioning: str) -> list[Path]:
    """The package's files under ``folder`` whose text names ``mentioning`` (only they
    can import it: the rest is not parsed)."""
    return [p for p in sorted(folder.rglob("*.py")) if mentioning in p.read_text(encoding="utf-8")]


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE).with_suffix("").parts
    return ".".join((ROOT, *(parts[:-1] if parts[-1] == "__init__" else parts)))


@lru_cache(maxsize=None)
def imports(path: Path) -> tuple[tuple[int, str], ...]:
    """(line, absolute module name) of every import in ``path``; ``from A import b``
    gives both ``A`` and ``A.b`` (``b`` may be a module)."""
    name = module_name(path)
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package[:len(package) - node.level + 1] + ([node.module] if node.module else []))
            out += [(node.lineno, base)] + [(node.lineno, f"{base}.{a.name}") for a in node.names]
    return tuple(out)


def file_of(module: str) -> Path | None:
    """The package's file for ``module`` (None: not a module of the package)."""
    if module != ROOT and not module.startswith(ROOT + "."):
        return None
    rel = PACKAGE.joinpath(*module.split(".")[1:])
    for path in (rel / "__init__.py", rel.with_suffix(".py")):
        if path.is_file():
            return path
    return None


def closure(module: str) -> set[Path]:
    """The package's files that importing ``module`` may import (with their parent packages)."""
    seen: set[Path] = set()
    todo = [module]
    while todo:
        name = todo.pop()
        parts = name.split(".")
        for i in range(1, len(parts) + 1):  # a module imports its packages first
            path = file_of(".".join(parts[:i]))
            if path is not None and path not in seen:
                seen.add(path)
                todo += [m for _, m in imports(path)]
    return seen


def is_under(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def test_the_vocabulary_is_the_ground_floor():
    own = [(line, m) for line, m in imports(PACKAGE / "types.py") if is_under(m, ROOT)]
    assert own == []


def test_no_shared_service_imports_the_adapters_save_the_listed_exceptions():
    found = set()
    wrong = []
    for floor in SERVICES:
        for path in files(PACKAGE / floor, "benchmarks"):
            rel = path.relative_to(PACKAGE).as_posix()
            for line, module in imports(path):
                if is_under(module, f"{ROOT}.benchmarks"):
                    allowed = [key for key in EXCEPTIONS if key[0] == rel and is_under(module, key[1])]
                    if allowed:
                        found.update(allowed)
                    else:
                        wrong.append(f"{rel}:{line} imports {module}")
    assert sorted(set(wrong)) == []
    assert found == set(EXCEPTIONS), "an exception no longer needed: remove it from EXCEPTIONS"


def test_models_reach_nothing_of_the_adapters_even_indirectly():
    reached = {path.relative_to(PACKAGE).as_posix() for path in closure(f"{ROOT}.models")}
    assert "types.py" in reached  # the vocabulary it speaks (the walk is not empty)
    assert [p for p in sorted(reached) if p.startswith("benchmarks/")] == []


def test_only_the_plugin_imports_what_is_private_to_pytest():
    wrong = [f"{path.relative_to(PACKAGE).as_posix()}:{line} imports {module}"
             for path in files(PACKAGE, "_pytest") if "plugin" not in path.relative_to(PACKAGE).parts
             for line, module in imports(path) if is_under(module, "_pytest")]
    assert wrong == []


def test_the_gate_s_logic_imports_nothing_of_pytest():
    reached = closure(f"{ROOT}.reports.gate")
    assert PACKAGE / "reports" / "summary.py" in reached  # the walk follows imports inside functions
    wrong = [f"{path.relative_to(PACKAGE).as_posix()}:{line} imports {module}"
             for path in sorted(reached) for line, module in imports(path)
             if is_under(module, "pytest") or is_under(module, "_pytest")]
    assert wrong == []
