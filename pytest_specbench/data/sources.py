"""Where each family's upstream data comes from, at which revision, and what the
families need.

A *data folder* is one top-level folder of a data root (``evalplus/``,
``contracteval/``, ...): the unit ``specbench data download`` fetches, caches and
verifies.  Each file it holds is pinned in ``registry/<folder>.txt`` as
``<path in the data root> <sha256> <upstream URL or ->``; the sha256 is of the
content after decompression where upstream compresses.  ``-`` marks a file no
upstream publishes (only a mirror can serve it).  ``pin.py`` writes the
registries from a data root laid out like this one.
"""
from __future__ import annotations

from dataclasses import dataclass

from .corpus_pin import read_pin


@dataclass(frozen=True)
class Folder:
    name: str
    upstream: str  # repository @ commit, for people
    license: str  # the license file kept beside the files, or "" when upstream states none
    note: str = ""


CONTRACTEVAL_COMMIT = "518119a7a5dceb59519754311c5ee26644625edc"
HUMANEVALPLUS_VERSION = "v0.1.10"  # evalplus/humanevalplus_release @ 200defce9e3429d28ca215b6dd061c0f7f31c18b
MBPPPLUS_VERSION = "v0.2.0"  # evalplus/mbppplus_release @ 64fc4195b858a17cdfdb3324f0baf37939144e14
VERINA_COMMIT = "d12090a87619cbfcc43b83a8cb08f6deda1ecea8"
CIFE_COMMIT = "e9ac6573a68f7b86996a17b7080a9e24c1a4b337"
SPECGEN_COMMIT = "984d7db1bf9ff5f1d92e983b7a7641a6f4107758"
NL2POSTCOND_COMMIT = "a93052f0ad07c3950d1fb46ebb3647f70ff0c482"
NL2POSTCOND_ROOT = "nl2postcondition-fse2024"

GITHUB_RAW = "https://raw.githubusercontent.com/{repo}/{commit}/{path}"
GITHUB_RELEASE = "https://github.com/{repo}/releases/download/{tag}/{asset}"
GITHUB_ARCHIVE = "https://github.com/{repo}/archive/{commit}.tar.gz"

FOLDERS = {
    "evalplus": Folder("evalplus", f"HumanEval+ {HUMANEVALPLUS_VERSION} and MBPP+ {MBPPPLUS_VERSION} (EvalPlus release assets)",
                       "LICENSE"),
    "contracteval": Folder("contracteval", f"suhanmen/ContractEval @ {CONTRACTEVAL_COMMIT[:8]}", "LICENSE",
                           note="contracteval_rebuilt.jsonl is derived (not published upstream) and this project "
                                "has no rebuild from the raw files in upstream/: only a mirror can serve it"),
    "verina": Folder("verina", f"sunblaze-ucb/verina @ {VERINA_COMMIT[:7]} (datasets/verina)", "LICENSE"),
    "cife": Folder("cife", f"IBM/CIFE @ {CIFE_COMMIT[:7]}", "LICENSE"),
    "specgenbench": Folder("specgenbench", f"LHospital13/SpecGen-Dataset @ {SPECGEN_COMMIT[:7]}", ""),
    "nl2postcond": Folder("nl2postcond", f"microsoft/nl-2-postcond @ {NL2POSTCOND_COMMIT[:7]} ({NL2POSTCOND_ROOT}/)",
                          "LICENSE",
                          note="annotated_postconditions.jsonl, prompts.json and gpt4-simple-with-ref/ are derived "
                               "(upstream's .xlsx sheet, LLMPrompts.py, a zip): only a mirror can serve them; the "
                               "buggy-program corpus is built locally (specbench nl2postcond build-corpus)"),
    "postcondbench": Folder("postcondbench", "zhang-ge-hao/postcond-bench (per-file commits in the registry)", "",
                            note="the tasks run in keon/algorithms at the tasks' commit (fetched into repos/)"),
}

# Names that are a benchmark and a data folder of optional data.
_BENCHMARK_AND_FOLDER = {"nl2postcond"}

# nl2postcond's buggy-program corpus is derived from upstream's programs, so it is
# not served: `specbench data download nl2postcond` fetches the programs (pinned
# above) and `specbench nl2postcond build-corpus` builds it locally; the build of
# the default corpus (base+plus inputs, the exact oracle, the flat 1 s time rule) is
# checked against the pin, registry/corpus/nl2postcond.txt (corpus_pin.py): each
# task's part, and the pinned parts' manifest digest (corpus_pin.corpus_digest of the
# parts joined in task order: what a mirror may serve).
NL2POSTCOND_CORPUS_MANIFEST: str | None = read_pin().manifest

# Repositories PostcondBench tasks run in: fetched as source archives at the
# commit, every file checked against ``registry/repos/<owner>--<name>@<commit>.txt``.
POSTCOND_REPOS = {
    ("keon/algorithms", "5b63e90624bebb371949fbe49bbf20aa3c8e14d0"),
}


def folders_for(names: list[str], download: bool = False) -> list[str]:
    """Data folders for benchmark or folder names (``all``: every folder).  A name
    that is a benchmark and a folder (``nl2postcond``) gives the folders the
    benchmark needs and, with ``download``, the folder of its name too (optional
    data: the benchmark runs without it)."""
    out: list[str] = []
    for name in names:
        if name == "all":
            wanted = list(FOLDERS)
        elif name in FOLDERS and name in _BENCHMARK_AND_FOLDER:
            from ..benchmarks import data_folders

            wanted = list(data_folders(name)) + ([name] if download else [])
        elif name in FOLDERS:
            wanted = [name]
        else:  # a benchmark: the folders its family declares (benchmarks.data_folders)
            from ..benchmarks import data_folders, known_benchmarks

            try:
                wanted = list(data_folders(name))
            except KeyError:
                known = ", ".join(sorted({*FOLDERS, *known_benchmarks()}))
                raise KeyError(f"unknown family {name!r}; known: all, {known}") from None
        out += [w for w in wanted if w not in out]
    return out
