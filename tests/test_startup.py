"""What a run's start-up pays before its first item (docs/timing.md, session 20).

Cheap: one fresh interpreter per test, so the modules a step imports are seen."""
from __future__ import annotations

import json
import subprocess
import sys

_DESCRIBE_THEN_COMPARE = r"""
import hashlib, json, sys
from pytest_specbench.execution.environments import describe_here
mine = describe_here(None)
parsed = "email.feedparser" in sys.modules
import importlib.metadata as md
seen = sorted({((d.metadata["Name"] or "").lower().replace("_", "-"), d.version) for d in md.distributions()})
print(json.dumps({"email_parsed": parsed, "mine": mine,
                  "by_email": hashlib.sha256(json.dumps(seen).encode()).hexdigest()[:16], "count": len(seen)}))
"""


def test_describing_the_environment_reads_only_the_metadata_headers_and_hashes_what_email_reads():
    """The environment's hash (the run key, the manifest, each worker's first zygote) reads
    each distribution's Name and Version from its metadata's header block: the email
    parser (every long description, twice) was ~0.05 CPU s of each ~0.09 s describe.
    The hash stays the one the email parser's reading gives (no result key changes)."""
    out = subprocess.run([sys.executable, "-c", _DESCRIBE_THEN_COMPARE], capture_output=True, text=True, check=True)
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert not got["email_parsed"]
    assert got["mine"]["distributions"] == got["by_email"]
    assert got["mine"]["distribution_count"] == got["count"] > 0


def test_the_header_reader_takes_what_email_takes_on_awkward_metadata():
    """Folded values, header names in any case, a repeated header, a body that looks like
    headers, a unix-from line, CR and CRLF line ends, no metadata at all."""
    import email

    from pytest_specbench.execution.environments import DESCRIBE

    scope: dict = {}
    exec(DESCRIBE, scope)  # noqa: S102 - our own constant
    texts = [
        "Metadata-Version: 2.1\nName: plain\nVersion: 1.0\n\nName: body\nVersion: 9\n",
        "name: lower\nVERSION:   2.0  \n",
        "Name: first\nName: second\nVersion: 1\n",
        "Name: folded\n  more\nVersion: 3\n\tx\n",
        "From someone\nName: unixfrom\nVersion: 4\n",
        "Name: crlf\r\nVersion: 5\r\n\r\nbody",
        "Name: cr\rVersion: 6\r",
        "Summary: no name\nbroken line\nName: after-break\nVersion: 7\n",
        ": nameless\nName: x\nVersion: 8\n",
        "",
        None,
    ]
    for text in texts:
        msg = email.message_from_string(text or "")
        assert scope["_name_version"](text) == (msg["Name"], msg["Version"]), text
