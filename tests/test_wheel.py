"""The project as a user who installs it from a package index gets it: a wheel
built from the checkout's files, installed in a fresh venv (no system site
packages), runs the main job from an unrelated folder with every family passing
as it does from the checkout (Lean and JUnit skips aside), and docs/ci.md's
recipe runs as written.

Slow (a wheel build, a venv with the dependencies from pip's cache, and the whole
main job: minutes): it runs when ``SPECBENCH_TEST_WHEEL=1`` is set, e.g.
``SPECBENCH_TEST_WHEEL=1 pytest tests/test_wheel.py``.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

CHECKOUT = Path(__file__).resolve().parent.parent

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(os.environ.get("SPECBENCH_TEST_WHEEL") != "1",
                       reason="wheel test: set SPECBENCH_TEST_WHEEL=1 (builds, installs and runs the main job: minutes)"),
]


def _run(argv: list, cwd: Path, env: dict | None = None, timeout: int = 1500) -> subprocess.CompletedProcess:
    return subprocess.run([str(a) for a in argv], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


def _source_tree(dest: Path) -> Path:
    """The checkout's files as git sees them (tracked, and new ones not ignored): no venv, no build leftovers."""
    listed = _run(["git", "ls-files", "-co", "--exclude-standard", "-z"], CHECKOUT)
    if listed.returncode != 0:
        pytest.skip("not a git checkout")
    for rel in filter(None, listed.stdout.split("\0")):
        src = CHECKOUT / rel
        if src.is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / rel)
    return dest


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Path:
    """A fresh venv with the wheel installed; returns its bin folder."""
    work = tmp_path_factory.mktemp("wheel")
    src = _source_tree(work / "src")
    # The README's own two lines (build the wheel in the checkout, install it), as written.
    build, install = _readme_install_lines()
    here = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    built = _run(["bash", "-c", build], src, env=here)
    assert built.returncode == 0, built.stderr[-2000:]
    wheel = next((src / "dist").glob("pytest_specbench-*.whl"))
    venv = work / "venv"
    made = _run([sys.executable, "-m", "venv", venv], work)
    assert made.returncode == 0, made.stderr[-2000:]
    bin_ = venv / "bin"
    fresh = {**here, "PATH": f"{bin_}{os.pathsep}{os.environ.get('PATH', '')}", "VIRTUAL_ENV": str(venv)}
    got = _run(["bash", "-c", install], src, env=fresh)
    assert got.returncode == 0, got.stderr[-2000:]
    got = _run([bin_ / "python", "-m", "pip", "install", "-q", f"{wheel}[html]"], work)  # docs/ci.md's extra
    assert got.returncode == 0, got.stderr[-2000:]
    return bin_


def _readme_install_lines() -> tuple[str, str]:
    """The README's quick start: the line that builds the wheel and the one that installs it."""
    lines = [re.sub(r"\s+#\s.*$", "", line).strip() for line in (CHECKOUT / "README.md").read_text().splitlines()[:12]]
    build = next(line for line in lines if line.startswith("pip wheel "))
    install = next(line for line in lines if line.startswith("pip install dist/"))
    return build, install


def _env(bin_: Path, tmp: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "SPECBENCH_", "VIRTUAL_ENV", "PYTHON"))}
    env["PATH"] = f"{bin_}{os.pathsep}{env.get('PATH', '')}"
    env["SPECBENCH_DATA"] = str(tmp / "no-download-cache")  # the bundled suites, whatever the user cache holds
    return env


def test_wheel_carries_the_suites_and_no_test_data(installed):
    out = _run([installed / "python", "-c",
                "import pytest_specbench.data.bundled as b, pytest_specbench as p; "
                "print(b.suites_root()); print(p.__file__)"], Path("/"))
    assert out.returncode == 0, out.stderr
    suites, package = out.stdout.split()
    assert str(CHECKOUT) not in suites and "site-packages" in suites
    files = [p.relative_to(Path(package).parent.parent).as_posix() for p in Path(package).parent.rglob("*") if p.is_file()]
    assert any(f.startswith("pytest_specbench/suites/verina/") for f in files)
    assert any(f.startswith("pytest_specbench/data/registry/repos/") for f in files)
    assert not any("verina_golden" in f or f.startswith("tests/") for f in files)


def test_main_job_from_an_unrelated_folder_passes_every_family(installed, tmp_path):
    start = time.monotonic()
    run = _run([installed / "pytest", "-p", "no:cacheprovider", "--specbench=all", "--model=reference", "-n", "2"],
               tmp_path, env=_env(installed, tmp_path))
    elapsed = time.monotonic() - start
    tail = run.stdout[-3000:]
    assert run.returncode == 0, tail + run.stderr[-2000:]
    for family in ("cife", "contract", "contract-cvt", "evalplus", "postcond", "speceval", "verina"):
        assert re.search(rf"specbench: {re.escape(family)} on the bundled sample suite \(\d+ tasks\)", run.stdout), family
    assert " failed" not in tail and " error" not in tail, tail
    print(f"wheel main job: {tail.strip().splitlines()[-1]} ({elapsed:.0f} s)")


def test_docs_ci_recipe_runs_as_written(installed, tmp_path):
    """docs/ci.md's workflow: installed with the html extra (the fixture), then its gate
    step as written, with the reference as the candidate, against a baseline made first."""
    recipe = (CHECKOUT / "docs" / "ci.md").read_text()
    block = re.search(r"^ *run: \|\n((?: +pytest --specbench=contract.*\n(?: +.*\\\n)*(?: +.*\n)))", recipe, re.M)
    assert block, "docs/ci.md has no `run: | pytest --specbench=contract ...` step"
    command = re.sub(r"\\\n\s*", " ", block[1]).strip()
    argv = command.replace('"$CANDIDATE"', "reference").replace("-n auto", "-n 2").split()
    assert argv[0] == "pytest" and "--specbench-baseline=ci/specbench-baseline.json" in argv, argv
    env = _env(installed, tmp_path)
    (tmp_path / "ci").mkdir()
    base = _run([installed / "pytest", "-p", "no:cacheprovider", "--specbench=contract", "--model=reference", "-q",
                 "--specbench-report=ci/specbench-baseline.json"], tmp_path, env=env)
    assert base.returncode == 0, base.stdout[-3000:]
    run = _run([installed / "pytest", "-p", "no:cacheprovider", *argv[1:]], tmp_path, env=env)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    for produced in ("specbench-report.json", "specbench-report.html", "specbench-summary.md", "specbench-junit.xml"):
        assert (tmp_path / produced).is_file(), produced
