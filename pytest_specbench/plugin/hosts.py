"""``--specbench-hosts=hostA:8,hostB:8``: pytest-xdist's remote gateways, spelled short.

Each ``HOST:N`` becomes one ssh connection to the host (an xdist 3.7 proxy
gateway) and ``N`` workers started there through it::

    --px id=hostA//ssh=hostA//python=PY//execmodel=thread --tx 8*popen//via=hostA

with ``PY`` from ``--specbench-remote-python`` (default ``python3``).  The proxy
needs ``execmodel=thread``: xdist's default for gateways, ``main_thread_only``,
refuses the second worker's start through one proxy ("concurrent remote_exec
would cause deadlock"); execnet's socket server is ``thread`` already.  xdist
gives ``popen//via`` workers the controller's ``sys.path``, so that form needs
the remote venv at the same path as the controller's; when
``--specbench-remote-python`` names another interpreter than the controller's,
each worker gets its own ssh connection instead (``--tx 8*ssh=hostA//python=PY``),
which keeps the remote interpreter's own ``sys.path``.  Nothing here is a
scheduler: xdist runs the gateways (docs/distributed.md).
"""
from __future__ import annotations

import re
import sys

import pytest

from ..errors import OptionError

OPTIONS = (
    ("--specbench-hosts", "specbench_hosts", "run xdist workers on these hosts over ssh: HOST:N[,HOST:N] "
     "(N workers each; expands to --px/--tx, docs/distributed.md)"),
    ("--specbench-remote-python", "specbench_remote_python", "the Python (a venv's bin/python with this plugin "
     "installed) on the hosts of --specbench-hosts (default: python3)"),
    ("--specbench-remote-data", "specbench_remote_data", "the data root on remote xdist workers' hosts (default: "
     "the --specbench-data path); checked by hash against the controller's at start"),
)


def addoption(group, addini) -> None:
    for flag, dest, text in OPTIONS:
        group.addoption(flag, dest=dest, default=None, help=text)


def parse_hosts(text: str) -> list[tuple[str, int]]:
    hosts = []
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        host, sep, count = part.rpartition(":")
        if not sep or not host or not count.isdigit() or int(count) < 1:
            raise OptionError("--specbench-hosts", f"expected HOST:N (N workers, N >= 1), got {part!r}")
        hosts.append((host, int(count)))
    if not hosts:
        raise OptionError("--specbench-hosts", "expected HOST:N[,HOST:N]")
    return hosts


def expand(hosts: list[tuple[str, int]], python: str, controller_python: str = sys.executable) -> tuple[list[str], list[str]]:
    """The ``--px`` and ``--tx`` values for ``hosts``."""
    px, tx = [], []
    same_path = python == controller_python
    for number, (host, count) in enumerate(hosts):
        ident = re.sub(r"\W", "_", host) + f"_{number}"
        if same_path:
            px.append(f"id={ident}//ssh={host}//python={python}//execmodel=thread")
            tx.append(f"{count}*popen//via={ident}")
        else:
            tx.append(f"{count}*ssh={host}//python={python}")
    return px, tx


def apply(config: pytest.Config) -> None:
    """``pytest_cmdline_main`` (before xdist's): turn --specbench-hosts into --px/--tx."""
    text = config.getoption("specbench_hosts", None)
    if not text or hasattr(config, "workerinput"):
        return
    if getattr(config.option, "numprocesses", None):
        raise OptionError("--specbench-hosts", "give it or -n, not both (-n starts local workers)")
    if not hasattr(config.option, "tx"):
        raise OptionError("--specbench-hosts", "needs pytest-xdist (pip install pytest-xdist)")
    python = config.getoption("specbench_remote_python", None) or "python3"
    px, tx = expand(parse_hosts(str(text)), str(python))
    config.option.px = list(getattr(config.option, "px", None) or []) + px
    config.option.tx = list(config.option.tx or []) + tx
    if config.option.dist == "no":
        config.option.dist = "load"
