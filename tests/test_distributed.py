"""Past one machine (docs/distributed.md): a run whose xdist workers sit on a host
that shares no disk with the controller gives the report of ``-n 0``.

The "host" is a private mount namespace on this machine (``tests/private_host.py``):
its ``/tmp`` -- where these tests keep the replay files, the controller's state
folder and the controller's copy of the data -- and its home are a tmpfs of its
own, so a worker that reached for a controller path would find nothing.
Workers start there through execnet's socket server on a free 127.0.0.1 port
(``--px id=h//socket=127.0.0.1:PORT --tx 1*popen//via=h``).  Skipped with one line
where namespaces are refused.  One multi-host run stays (#45, session 17: the others
each started a controller and the host's workers for what the ledger and the
controller decide, asserted in-process in tests/test_engine.py); the ``ssh=``
gateways ``--specbench-hosts`` writes are tested as strings below.
"""
from __future__ import annotations

import json
import subprocess
import sys
from types import SimpleNamespace

import pytest

from private_host import REPO, PrivateHost, require_namespace, sshd_refusal, start_sshd

REMOTE_DATA = "/tmp/data"  # the data root on the private host (copied in at its start)


@pytest.fixture(scope="module")
def host(tmp_path_factory):
    require_namespace()
    folder = tmp_path_factory.mktemp("private-host")
    server = PrivateHost.socket_server(folder / "server.log", setup=f"cp -r {REPO}/benchmarks/contract {REMOTE_DATA};")
    yield server
    server.close()


def remote(host, workers: int = 2) -> list[str]:
    return ["--px", f"id=h//socket=127.0.0.1:{host.port}", "--tx", f"{workers}*popen//via=h", "--dist", "load"]


def run(pytester, name: str, *args: str):
    """A run in a Python of its own (the controller of workers on the other host)."""
    return pytester.runpytest_subprocess(*_run_args(pytester, name, *args))


def run_alone(pytester, name: str, *args: str):
    """The run with ``-n 0`` each spread run is compared with, in this process: it only
    gives the report to compare (a Python of its own was most of its cost)."""
    return pytester.runpytest_inprocess(*_run_args(pytester, name, *args, "-n", "0"))


def _run_args(pytester, name: str, *args: str) -> tuple[str, ...]:
    return ("-p", "no:cacheprovider", f"--specbench-dir={pytester.path / ('state-' + name)}",
            f"--specbench-report={pytester.path / (name + '.json')}", *args)


TIMINGS = {"wall", "cpu", "seconds"}  # measured times in a check's details: differ between any two runs


def sections(pytester, name: str) -> dict:
    def strip(value):
        if isinstance(value, dict):
            return {k: strip(v) for k, v in value.items() if k not in TIMINGS}
        if isinstance(value, list):
            return [strip(v) for v in value]
        return value

    return strip(json.loads((pytester.path / f"{name}.json").read_text())["benchmarks"])


def outcomes(result) -> dict:
    """pytest's outcome counts; xdist's controller does not count deselected items."""
    # "warnings": an in-process run also counts the ResourceWarnings of objects that other
    # tests of this worker left to the garbage collector; they are not the subject here.
    return {k: v for k, v in result.parseoutcomes().items() if k not in ("deselected", "warnings")}


@pytest.mark.slow
def test_a_rerun_on_a_host_with_a_fresh_disk_takes_every_known_verdict_from_the_controller(pytester, host):
    """The one multi-host run of the suite (#45: "one multi-host run stays"; the data refusal
    below stops before any item runs).  The run's one store of verdicts is the controller's
    (engine/ledger.py): a re-run whose workers sit on a host that never saw this state folder
    still takes every verdict the first run (here -n 0, on the controller's disk) reached,
    pushed with its items, and its report is the report of -n 0.  Workers kept result caches
    on their own disks before: this one had none (0 of 4 on main).

    What the multi-host runs that were here asserted, the ledger and the controller decide;
    they are asserted in-process against mock nodes (tests/test_engine.py: copies on another
    worker take the pushed verdict; a resumed run reports what the uninterrupted run reports)
    and by local end-to-end runs (test_dedupe.py: -n 2 = -n 0 with copies; test_resume.py:
    SIGKILL and resume; test_wire_safe.py: the judge asked once across xdist workers, over
    the same link a remote worker uses)."""
    selected = "HumanEval-S/0 or HumanEval-S/1 or HumanEval-S/2 or Mbpp-S/2"
    args = ["-p", "no:cacheprovider", "--specbench=contract", "--model=reference", "--specbench-checks=functional", "-k"]
    state = f"--specbench-dir={pytester.path / 'state'}"
    first = pytester.runpytest_inprocess(state, *args, "HumanEval-S/0 or HumanEval-S/1", "-n", "0")
    again = pytester.runpytest_subprocess(state, f"--specbench-report={pytester.path / 'spread.json'}", *args, selected,
                                          *remote(host, workers=1))
    assert outcomes(first) == {"passed": 2} and outcomes(again) == {"passed": 4}, again.stdout.str()[-2000:]
    again.stdout.fnmatch_lines(["*specbench: 2 of 4 results came from the result cache*"])
    alone = run_alone(pytester, "alone", *args[2:], selected, "--specbench-result-cache=off")
    assert outcomes(alone) == outcomes(again)
    assert sections(pytester, "spread") == sections(pytester, "alone")


def test_a_host_whose_data_differs_is_refused_in_one_line(pytester, host):
    data = pytester.path / "data"
    subprocess.run(["cp", "-r", str(REPO / "benchmarks" / "contract"), str(data)], check=True)
    # A file of the task set (the folder also holds replay answer files, which no host compares:
    # editing one of those, as rglob's first match may be, refuses nothing)
    edited = data / "evalplus" / "HumanEvalPlus.jsonl"
    edited.write_text(edited.read_text() + "\n")  # still loads; another hash
    # one worker: the host's data is compared once per host, not per worker.  The controller
    # in this process (a Python of its own until #45, session 23): it refuses the host before
    # any item, and what reaches the user is its one line either way
    result = pytester.runpytest_inprocess(*_run_args(pytester, "refused", "--specbench=contract", "--model=reference",
                                                     f"--specbench-data={data}", *remote(host, workers=1),
                                                     f"--specbench-remote-data={REMOTE_DATA}"))
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    lines = [line for line in result.stderr.lines + result.stdout.lines if "specbench: host" in line]
    assert len(lines) == 1, result.stderr.str() + result.stdout.str()
    assert "data differs" in lines[0] and edited.name in lines[0]
    assert "Traceback" not in result.stderr.str() + result.stdout.str()


@pytest.mark.slow
def test_ssh_gateway_to_a_loopback_sshd_equals_n0(pytester, tmp_path):
    require_namespace()
    reason = sshd_refusal()
    if reason:
        pytest.skip(f"ssh form: {reason}")
    sshd, config = start_sshd(tmp_path / "sshd")
    try:
        args = ["--specbench=contract", "--model=reference", "--specbench-checks=functional",
                "-k", "HumanEval-S/0 or HumanEval-S/1 or Mbpp-S/2"]
        alone = run_alone(pytester, "alone", *args)
        spread = run(pytester, "spread", *args, "--px", f"id=lo//ssh=-F {config} specbench-private//python={sys.executable}//execmodel=thread",
                     "--tx", "1*popen//via=lo", "--dist", "load")  # the gateway's form is the point
    finally:
        sshd.close()
    if spread.ret != 0 and "Permission denied" in spread.stderr.str() + spread.stdout.str():
        pytest.skip("ssh form: the loopback sshd refused the throwaway key here")
    assert outcomes(spread) == outcomes(alone)
    assert sections(pytester, "spread") == sections(pytester, "alone")


# ----------------------------------------------------------- in-process units

def test_specbench_hosts_expands_to_proxy_gateways_and_workers():
    from pytest_specbench.plugin.hosts import expand, parse_hosts

    hosts = parse_hosts("hostA:8, user@hostB:4")
    assert hosts == [("hostA", 8), ("user@hostB", 4)]
    px, tx = expand(hosts, "/srv/venv/bin/python", controller_python="/srv/venv/bin/python")
    assert px == ["id=hostA_0//ssh=hostA//python=/srv/venv/bin/python//execmodel=thread",
                  "id=user_hostB_1//ssh=user@hostB//python=/srv/venv/bin/python//execmodel=thread"]
    assert tx == ["8*popen//via=hostA_0", "4*popen//via=user_hostB_1"]
    # Another interpreter path than the controller's: one ssh gateway per worker
    # (xdist gives popen//via workers the controller's sys.path).
    assert expand([("hostA", 2)], "/opt/py/bin/python", controller_python="/srv/venv/bin/python") == \
        ([], ["2*ssh=hostA//python=/opt/py/bin/python"])


@pytest.mark.parametrize("value", ["hostA", "hostA:0", "hostA:x", ":3", ""])
def test_bad_specbench_hosts_is_one_line(value):
    from pytest_specbench.errors import OptionError
    from pytest_specbench.plugin.hosts import parse_hosts

    with pytest.raises(OptionError, match="--specbench-hosts"):
        parse_hosts(value)


def test_version_differences_are_one_line_each_and_other_data_is_refused():
    from pytest_specbench.plugin.remote import ControllerLink, HostRefused

    mine = {"versions": {"specbench": "0.1.0", "java": "java 17.0.15", "python": "3.11.2"},
            "files": {"contract/0/a.jsonl": "aa", "contract/1/b.jsonl": "bb"}}
    link = ControllerLink(plan=None, role_model=None, worker_start=None, host_facts=lambda: mine, model_is_local=True)
    node = SimpleNamespace(gateway=SimpleNamespace(id="gw0", spec=SimpleNamespace(socket="10.0.0.2:8888")))
    link.facts["gw0"] = {"versions": {**mine["versions"], "java": "java 21.0.1", "python": "3.12.1"},
                         "files": dict(mine["files"])}
    lines = link.check_node(node)
    assert lines == ["specbench: host socket=10.0.0.2:8888 (gw0): java java 21.0.1 there, java 17.0.15 here",
                     "specbench: host socket=10.0.0.2:8888 (gw0): python 3.12.1 there, 3.11.2 here"]
    link.facts["gw0"]["files"]["contract/1/b.jsonl"] = "cc"
    with pytest.raises(HostRefused, match=r"data differs .*b\.jsonl"):
        link.check_node(node)


def test_a_remote_host_s_facts_arriving_after_its_collection_are_still_checked(monkeypatch):
    """A remote worker sends its facts on the link's channel before it collects; the
    controller learns of the collection on xdist's channel, and two channels keep no
    order: the check waits for the facts (before, it skipped the check of a host whose
    facts came second), and refuses a host that never sends them."""
    import threading

    from pytest_specbench.plugin import remote as link_module
    from pytest_specbench.plugin.remote import ControllerLink, HostRefused

    mine = {"versions": {}, "files": {"contract/0/a.jsonl": "aa"}}
    link = ControllerLink(plan=None, role_model=None, worker_start=lambda remote: {}, host_facts=lambda: mine,
                          model_is_local=True)
    sent = []
    channel = SimpleNamespace(setcallback=lambda callback: sent.append(callback))
    class Node:  # xdist's node: hashable, a gateway and a workerinput
        def __init__(self, gid):
            self.gateway = SimpleNamespace(id=gid, spec=SimpleNamespace(socket="10.0.0.2:8888"),
                                           newchannel=lambda: channel)
            self.workerinput = {}

    node = Node("gw0")
    monkeypatch.setattr(link_module, "is_remote_spec", lambda spec: True)
    link.configure_node(node)
    late = threading.Timer(0.3, sent[0], args=(("facts", '{"versions": {}, "files": {"contract/0/a.jsonl": "zz"}}'),))
    late.start()
    with pytest.raises(HostRefused, match=r"data differs .*a\.jsonl"):
        link.check_node(node)  # before the wait: the facts were not there, and the host ran
    late.join()

    monkeypatch.setattr(link_module, "FACTS_SECONDS", 0.2)
    silent = Node("gw1")
    link.configure_node(silent)
    with pytest.raises(HostRefused, match="did not report its data"):
        link.check_node(silent)
