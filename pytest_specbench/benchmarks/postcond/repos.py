"""Repository checkouts for tasks: ``--postcond-repos=DIR`` holds one folder per
repository (``owner--name``, ``owner+name``, ``owner/name`` or ``name``): a
checkout at the task's commit is used as it is; a git clone (or a bare git
directory) at another commit is exported at the commit into the cache
(``git archive``), never modified.  Bundled tasks name their checkout relative
to their task file (``repo.local``)."""
from __future__ import annotations

import io
import subprocess
import tarfile
from pathlib import Path

from filelock import FileLock


class CheckoutMissing(LookupError):
    """One-line reason a task's repository is unavailable (its items skip)."""


def _git(path: Path, *args: str) -> str:
    gitdir = ["--git-dir", str(path)] if not (path / ".git").exists() else ["-C", str(path)]
    return subprocess.run(["git", *gitdir, *args], capture_output=True, text=True, timeout=120, check=True).stdout


def candidates(repos_dir: Path, github_path: str) -> list[Path]:
    owner, _, name = github_path.partition("/")
    return [repos_dir / f"{owner}--{name}",
            repos_dir / f"{owner}+{name}" / "repo",  # the layout of a `fetch` mirror (a bare git directory)
            repos_dir / f"{owner}+{name}", repos_dir / owner / name, repos_dir / name]


def checkout_for(task_data: dict, task_source: Path, repos_dir: Path | None, cache: Path,
                 export: bool = True) -> Path | None:
    """The task's checkout (raises :class:`CheckoutMissing`); ``export`` False: None
    instead of exporting one not yet in the cache (the xdist controller's planning:
    the worker that runs the task exports it, #28)."""
    repo = task_data["repo"]
    if repo.get("local"):
        return (task_source.parent / repo["local"]).resolve()
    gh, commit = repo.get("github_path", "?"), repo.get("commit", "?")
    if repos_dir is None:
        raise CheckoutMissing(f"no checkout of {gh}@{commit[:12]}: pass --postcond-repos=DIR")
    for cand in candidates(repos_dir, gh):
        if not cand.exists():
            continue
        if not ((cand / ".git").exists() or (cand / "HEAD").exists()):
            return cand.resolve()  # a plain folder: taken to be at the commit
        try:
            if _git(cand, "rev-parse", "HEAD").strip() == commit and (cand / ".git").exists():
                return cand.resolve()
            target = cache / f"{gh.replace('/', '--')}-{commit[:16]}"
            if not export and not (target / ".specbench-done").exists():
                return None
            with FileLock(str(target) + ".lock"):
                if not (target / ".specbench-done").exists():
                    data = subprocess.run(["git", *(["-C", str(cand)] if (cand / ".git").exists() else ["--git-dir", str(cand)]),
                                           "archive", commit], capture_output=True, timeout=300).stdout
                    if not data:
                        raise CheckoutMissing(f"{gh}: commit {commit[:12]} not found in {cand}")
                    target.mkdir(parents=True, exist_ok=True)
                    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
                        tar.extractall(target, filter="data")
                    (target / ".specbench-done").write_text(commit)
            return target
        except subprocess.CalledProcessError as exc:
            raise CheckoutMissing(f"{gh}: git failed in {cand}: {exc.stderr.strip()[-120:]}") from None
    raise CheckoutMissing(f"no checkout of {gh}@{commit[:12]} under {repos_dir} (tried {gh.replace('/', '--')})")
