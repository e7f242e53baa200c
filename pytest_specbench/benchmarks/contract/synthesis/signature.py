"""The parameter names of a task's entry point (shared by the pipeline and the LLM fallback)."""
from __future__ import annotations

import ast


def function_params(reference: str, entry_point: str) -> list:
    tree = ast.parse(reference)
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == entry_point:
            a = node.args
            if a.vararg or a.kwarg:
                raise ValueError(f"{entry_point}() takes *args/**kwargs")
            return [x.arg for x in a.posonlyargs + a.args + a.kwonlyargs]
    raise ValueError(f"reference has no function {entry_point!r}")
