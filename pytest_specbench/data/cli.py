"""``specbench data ...``: the upstream data root (download, where it is)."""
from __future__ import annotations

import argparse
from pathlib import Path

from ..errors import SpecbenchError


def register(sub: argparse._SubParsersAction) -> None:
    group = sub.add_parser("data", help="upstream benchmark data: download at pinned revisions, checked by sha256")
    cmds = group.add_subparsers(dest="data_command", required=True, parser_class=type(group))
    dl = cmds.add_parser("download", help="fetch families' upstream files into the data root and verify each "
                                          "(SPECBENCH_DATA, SPECBENCH_DATA_MIRROR, SPECBENCH_OFFLINE)")
    dl.add_argument("families", nargs="*", default=["all"], metavar="FAMILY",
                    help="all (default), a benchmark (contract, contract-cvt, evalplus, postcond, verina, speceval, "
                         "cife, nl2postcond) or a data folder (contracteval, evalplus, verina, cife, specgenbench, "
                         "postcondbench, nl2postcond)")
    dl.add_argument("--root", type=Path, default=None,
                    help="data root (default: $SPECBENCH_DATA, else the user cache folder)")
    dl.set_defaults(func=_download)
    where = cmds.add_parser("path", help="print the data root and which folders it holds, verified")
    where.set_defaults(func=_path)


def _download(args: argparse.Namespace) -> int:
    from . import fetch, sources

    try:
        folders = sources.folders_for(args.families or ["all"], download=True)
    except KeyError as exc:
        raise SpecbenchError(f"data download: {exc.args[0]}") from None
    return fetch.download(folders, args.root)


def _path(args: argparse.Namespace) -> int:
    from . import fetch, sources

    root = fetch.default_root()
    held, altered = [], []
    for folder in sources.FOLDERS:
        if fetch.is_complete(root, folder):  # downloaded whole once: are its files still the pinned ones?
            (altered if fetch.verify_folder(root, folder) else held).append(folder)
    print(f"{root} ({', '.join(held) if held else 'no verified folders'})")
    for folder in altered:
        print(f"{root / folder}: altered since it was downloaded (files missing or not the pinned ones); "
              f"not used: run `specbench data download {folder}` to repair it")
    return 1 if altered else 0
