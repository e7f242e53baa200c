"""Write the pinned registries (``registry/*.txt``) from a data root whose files
are copies of upstream at the pinned revisions (a maintainer's tool)::

    python -m pytest_specbench.data.pin ../shared/datasets [--repos /path/to/keon+algorithms/repo]

Each line is ``<path in the data root> <sha256 of the content> <upstream URL or ->``;
the hash of a gzip file is the hash of what it decompresses to.  ``--repos``
names git directories of PostcondBench's repositories: each pinned
``(repository, commit)`` gets ``registry/repos/<owner>--<name>@<commit>.txt``
(the sha256 of every regular file of the tree at that commit).
"""
from __future__ import annotations

import argparse
import hashlib
import re
import subprocess
import sys
from pathlib import Path

from . import sources as S
from .fetch import REGISTRY, content_sha256


def _raw(repo: str, commit: str, path: str) -> str:
    return S.GITHUB_RAW.format(repo=repo, commit=commit, path=path)


def upstream_url(folder: str, rel: str, notes: dict[str, str]) -> str | None:
    """The upstream URL of ``folder/rel`` (None: no upstream publishes it)."""
    if folder == "evalplus":
        return {
            "HumanEvalPlus-v0.1.10.jsonl.gz": S.GITHUB_RELEASE.format(
                repo="evalplus/humanevalplus_release", tag=S.HUMANEVALPLUS_VERSION, asset="HumanEvalPlus.jsonl.gz"),
            "MbppPlus-v0.2.0.jsonl": S.GITHUB_RELEASE.format(
                repo="evalplus/mbppplus_release", tag=S.MBPPPLUS_VERSION, asset="MbppPlus.jsonl.gz"),
            "LICENSE": _raw("evalplus/humanevalplus_release", "200defce9e3429d28ca215b6dd061c0f7f31c18b", "LICENSE"),
        }[rel]
    if folder == "contracteval":
        if rel == "contracteval_rebuilt.jsonl":
            return None
        if rel == "LICENSE":
            return _raw("suhanmen/ContractEval", S.CONTRACTEVAL_COMMIT, "LICENSE")
        m = re.fullmatch(r"upstream/(humaneval|mbpp)/(.+)", rel)
        if m:
            path = f"data/code_generation/{m[1]}/CODE_GENERATION_CT/o4-mini/{m[2]}"
        else:
            m = re.fullmatch(r"upstream/total_(CS|CT)/total\.jsonl", rel)
            path = f"data/code_generation/total/CODE_GENERATION_{m[1]}/o4-mini/total.jsonl"
        return _raw("suhanmen/ContractEval", S.CONTRACTEVAL_COMMIT, path)
    if folder == "verina":
        return _raw("sunblaze-ucb/verina", S.VERINA_COMMIT, rel if rel == "LICENSE" else f"datasets/verina/{rel}")
    if folder == "cife":
        return _raw("IBM/CIFE", S.CIFE_COMMIT, rel)
    if folder == "specgenbench":
        return _raw("LHospital13/SpecGen-Dataset", S.SPECGEN_COMMIT, rel)
    if folder == "nl2postcond":  # upstream's own files; the others are derived (sources.FOLDERS' note)
        path = {"LICENSE": "LICENSE", "code_mutants/merged_codes_preprocessed.jsonl.zip":
                f"{S.NL2POSTCOND_ROOT}/nl2postcondition_source_evalplus/code_mutants/merged_codes_preprocessed.jsonl.zip"}
        return _raw("microsoft/nl-2-postcond", S.NL2POSTCOND_COMMIT, path[rel]) if rel in path else None
    if folder == "postcondbench":
        model, name = rel.split("/")
        return _raw("zhang-ge-hao/postcond-bench", notes[rel], f"data/step/9.{model}/{name}")
    raise KeyError(folder)


def _postcond_commits(root: Path) -> dict[str, str]:
    """``model/file`` -> upstream commit, from the copy's README table."""
    text = (root / "postcondbench" / "README.md").read_text(encoding="utf-8")
    return {m[1]: m[2] for m in re.finditer(r"^\| (\S+/\S+\.json) \| \S+ \| ([0-9a-f]{40}) \|", text, re.M)}


def pin_folder(root: Path, folder: str) -> list[str]:
    notes = _postcond_commits(root) if folder == "postcondbench" else {}
    lines = []
    for path in sorted(p for p in (root / folder).rglob("*") if p.is_file()):
        rel = path.relative_to(root / folder).as_posix()
        if folder == "postcondbench" and rel == "README.md":
            continue  # the copy's own provenance note, not upstream data
        lines.append(f"{folder}/{rel} {content_sha256(path)} {upstream_url(folder, rel, notes) or '-'}")
    return lines


def pin_repo(gitdir: Path, repo: str, commit: str) -> list[str]:
    """sha256 of every regular file of ``repo`` at ``commit`` (paths as in its source archive)."""
    listing = subprocess.run(["git", "--git-dir", str(gitdir), "ls-tree", "-r", "-z", commit],
                             capture_output=True, check=True).stdout.decode().split("\0")
    lines = []
    for entry in filter(None, listing):
        meta, path = entry.split("\t", 1)
        mode, kind, blob = meta.split()
        if kind != "blob" or mode not in ("100644", "100755"):
            continue  # symlinks and submodules are not checked
        data = subprocess.run(["git", "--git-dir", str(gitdir), "cat-file", "blob", blob],
                              capture_output=True, check=True).stdout
        lines.append(f"{path} {hashlib.sha256(data).hexdigest()}")
    return sorted(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m pytest_specbench.data.pin", description=__doc__.split("\n\n")[0])
    ap.add_argument("root", type=Path)
    ap.add_argument("--repos", type=Path, nargs="*", default=[], help="git directories of PostcondBench's repositories")
    args = ap.parse_args(argv)
    REGISTRY.mkdir(exist_ok=True)
    for folder in S.FOLDERS:
        lines = pin_folder(args.root, folder)
        (REGISTRY / f"{folder}.txt").write_text("\n".join(lines) + "\n")
        print(f"{folder}: {len(lines)} files", file=sys.stderr)
    for gitdir in args.repos:
        for repo, commit in S.POSTCOND_REPOS:
            if repo.replace("/", "+") not in str(gitdir):
                continue
            lines = pin_repo(gitdir, repo, commit)
            out = REGISTRY / "repos" / f"{repo.replace('/', '--')}@{commit}.txt"
            out.parent.mkdir(exist_ok=True)
            out.write_text("\n".join(lines) + "\n")
            print(f"{repo}@{commit[:12]}: {len(lines)} files", file=sys.stderr)
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
