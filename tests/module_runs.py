"""Whole pytest runs shared by the tests of one module.

``pytester`` is function-scoped: when several tests assert on the same run (its
outcomes, report, journal, output), each used to make it again.  A
:class:`PytestRuns` makes each named run once, in one folder, as
``pytester.runpytest_subprocess`` would (same environment: ``HOME`` in the
folder, no ``PYTEST_ADDOPTS``, no colours, the folder on ``PYTHONPATH``, a
``--basetemp`` of its own), and returns pytest's own :class:`pytest.RunResult`.
The ``module_runs`` fixture of ``tests/conftest.py`` gives one per module.

Under ``pytest -n 2`` a module's tests are spread over the xdist workers, each with
its own module-scoped fixtures: the folder is then one for the whole session
(under the workers' common temporary root) and a run is made under a file lock by
the first worker that needs it; the others wait for it and read its saved result
(pytest-xdist's recipe for a fixture made once per session).
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable

import pytest
from filelock import FileLock

from shared_runs import run_pytest


class PytestRuns:
    def __init__(self, path: Path):
        self.path = Path(path)
        self.path.mkdir(parents=True, exist_ok=True)
        self.results: dict[str, pytest.RunResult] = {}

    def write_once(self, name: str, text: str) -> Path:
        """The file ``name`` in :attr:`path` with ``text`` (written by the first worker only:
        another may be running pytest over it)."""
        path = self.path / name
        with FileLock(str(path) + ".lock"):
            if not path.exists():
                partial = path.with_name(path.name + ".partial")
                partial.write_text(text)
                partial.replace(path)
        assert path.read_text() == text, f"{path}: another test wrote other contents"
        return path

    def run(self, *args: str, env: dict[str, str] | None = None) -> pytest.RunResult:
        """One ``python -m pytest ARGS`` in :attr:`path` (not memoised)."""
        done = run_pytest(self.path, *args, env=env)
        print("running:", *args, "\n     in:", self.path, "\n" + "\n".join(done.outlines[-60:] + done.errlines[-60:]))
        return done

    def once(self, name: str, *args: str, env: dict[str, str] | None = None,
             check: Callable[[pytest.RunResult], None] | None = None) -> pytest.RunResult:
        """The run called ``name``: made on first use, the same result for every later test."""
        if name not in self.results:
            def make() -> dict:
                result = self.run(*args, env=env)
                return {"ret": int(result.ret), "outlines": result.outlines, "errlines": result.errlines}

            done = made_once(self.path, f"{name}.run", make)
            ret = done["ret"]
            if ret in set(pytest.ExitCode):
                ret = pytest.ExitCode(ret)
            result = pytest.RunResult(ret, done["outlines"], done["errlines"], 0.0)
            if check is not None:
                check(result)
            self.results[name] = result
        return self.results[name]


def made_once(folder: Path, name: str, make: Callable[[], Any]) -> Any:
    """``make()``'s result (plain JSON data), made by the first process of the session that
    needs it, under a file lock, and saved in ``folder`` as ``NAME.json``; the others (the
    other xdist workers, each with its own module-scoped fixtures) wait for it and read it."""
    saved = Path(folder) / f"{name}.json"
    with FileLock(str(Path(folder) / f"{name}.lock")):
        if saved.exists():
            return json.loads(saved.read_text())
        made = make()
        saved.write_text(json.dumps(made))
    return json.loads(saved.read_text())  # (the same form the other workers read)
