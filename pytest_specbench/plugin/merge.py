"""``specbench merge --report OUT.json [--html OUT.html] JOURNAL...``: one report from the shards.

The shards' journals are joined (``reports/merge.py``: one run key, every shard
once) into one journal, and the run is started again in this process with the
arguments the shards were started with (their journal header's
``invocation``), without the options that only place or spread the work
(``-n``, ``--tx``, ``--specbench-shard``, ``--specbench-hosts``, ...), and with
``--specbench-merge``: the session then takes every item's outcome from the
joined journal and runs none (``plugin/session.py``).  So the metrics,
bootstrap intervals, gate, Markdown and HTML come from the code that ends a
single run, on the same tasks; the session refuses (one line) when its own run
key -- the data it loads here, the model, the options -- is not the shards'.
"""
from __future__ import annotations

import json
import shlex
import tempfile
from pathlib import Path

from ..errors import SpecbenchError
from ..reports.merge import join

MERGE_OPTION = "--specbench-merge"
# Options (with a value) that place or spread a run's work, or name its outputs: not the merge's.
_DROPPED_WITH_VALUE = ("-n", "--numprocesses", "--maxprocesses", "--tx", "--px", "--dist", "--rsyncdir",
                       "--specbench-hosts", "--specbench-remote-python", "--specbench-remote-data",
                       "--specbench-shard", "--specbench-resume", "--specbench-report", "--specbench-html",
                       "--specbench-markdown", "--junitxml", "--junit-xml", "--basetemp", "--specbench-dir",
                       "--result-log", "--resultlog", MERGE_OPTION)
# Flags that select by an earlier run's cache, or stop early: not the merge's either.
_DROPPED_FLAGS = ("--lf", "--last-failed", "--ff", "--failed-first", "--sw", "--stepwise", "-x", "--exitfirst",
                  "--specbench-resume")
# Options with a value as a separate argument that are kept (so their value is not taken for a test path).
_KEPT_WITH_VALUE = ("-k", "-m", "-p", "-c", "-o", "--override-ini", "--rootdir", "--confcutdir", "-W",
                    "--pythonwarnings", "--tb", "-r")


def register(subparsers) -> None:
    p = subparsers.add_parser("merge", help="one report from the journals of a sharded run (--specbench-shard)",
                              description="Join the journals of the shards of one run (--specbench-shard=I/N) and "
                                          "write the report a single run would have written.  Run it where the "
                                          "shards' data and ini file are (the same arguments are used again).")
    p.add_argument("--report", required=True, metavar="OUT.json", help="write the JSON report here")
    p.add_argument("--html", metavar="OUT.html", help="also write the HTML report here")
    p.add_argument("--markdown", metavar="OUT.md", help="also write the Markdown summary here")
    p.add_argument("--pytest-args", default="", metavar="ARGS",
                   help="more pytest arguments, appended (e.g. \"--specbench-data=/mnt/data\" when the data "
                        "is at another path here than on the shards)")
    p.add_argument("journals", nargs="+", metavar="JOURNAL",
                   help="each shard's journal: SPECBENCH_DIR/runs/RUN_ID or its journal.jsonl")
    p.set_defaults(func=run)


def run(args) -> int:
    import pytest

    joined = join(args.journals)
    try:
        extra = shlex.split(args.pytest_args or "")
    except ValueError as exc:
        raise SpecbenchError(f"--pytest-args: {exc}") from None
    with tempfile.TemporaryDirectory(prefix="specbench-merge-") as folder:
        merged = Path(folder) / "journal.jsonl"
        with open(merged, "w", encoding="utf-8") as fh:
            fh.write(json.dumps({**joined.header, "merged": {"journals": joined.sources, "shards": joined.shards,
                                                           "fingerprint_differences": joined.fingerprint_differences}})
                     + "\n")
            for nodeid, entry in joined.entries.items():
                fh.write(json.dumps({"nodeid": nodeid, **entry}) + "\n")
        argv = [*rerun_arguments(joined.invocation.get("args") or []), f"{MERGE_OPTION}={merged}",
                f"--specbench-report={args.report}", "-p", "no:cacheprovider",
                *([f"--specbench-html={args.html}"] if args.html else []),
                *([f"--specbench-markdown={args.markdown}"] if args.markdown else []), *extra]
        return int(pytest.main(argv))


def recorded_arguments(args: list[str]) -> list[str]:
    """A run's arguments as its journal header keeps them: a URL (``--model-base-url``,
    ``-o ...=URL``) without the credentials it may carry (``models/endpoints.py``).  The
    merge never calls the model, and the run key has the redacted endpoint too."""
    from ..models.endpoints import redact_url

    out = []
    for arg in map(str, args):
        name, sep, value = arg.partition("=")
        if sep and "://" in value and "://" not in name:
            out.append(f"{name}={redact_url(value)}")
        elif "://" in arg:
            out.append(redact_url(arg))
        else:
            out.append(arg)
    return out


def rerun_arguments(args: list[str]) -> list[str]:
    """A shard's pytest arguments without what places or spreads its work, names its
    outputs, or names test files (the merge runs no tests)."""
    out: list[str] = []
    it = iter(args)
    for arg in it:
        name = arg.split("=", 1)[0]
        if name in _DROPPED_FLAGS and "=" not in arg and name != "--specbench-resume":
            continue
        if name in _DROPPED_WITH_VALUE:
            if "=" not in arg and name != "--specbench-resume":
                next(it, None)  # its value
            continue
        if any(arg.startswith(short) and len(arg) > 2 for short in ("-n",)) and not arg.startswith("--"):
            continue  # -n2
        if name in _KEPT_WITH_VALUE and "=" not in arg:
            out += [arg, next(it, "")]
            continue
        if not arg.startswith("-") and not arg.startswith("specbench::"):
            continue  # a test file or folder
        out.append(arg)
    return out
