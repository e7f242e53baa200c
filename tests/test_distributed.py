"""Past one machine (docs/distributed.md): a run whose xdist workers sit on a host
that shares no disk with the controller gives the report of ``-n 0``.

The "host" is a private mount namespace on this machine (``tests/private_host.py``):
its ``/tmp`` -- where these tests keep the replay files, the controller's state
folder and the controller's copy of the data -- and its home are a tmpfs of its
own, so a worker that reached for a controller path would find nothing.
Workers start there through execnet's socket server on a free 127.0.0.1 port
(``--px id=h//socket=127.0.0.1:PORT --tx 2*popen//via=h``), or over a throwaway
loopback sshd (``ssh=``).  Skipped with one line where namespaces are refused.
"""
from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from private_host import REPO, PrivateHost, require_namespace, sshd_refusal, start_sshd
from shared_runs import UNUSED_PLUGINS, postcond_bundled_state  # noqa: F401  (a fixture: PostcondBench's Java classes, built once)
from test_resume import uninterrupted  # noqa: F401  (a fixture: the slow samples' uninterrupted run, made once)

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


def dedupe_counts(result) -> tuple[int, int]:
    m = re.search(r"specbench: dedupe: (\d+) programs evaluated, (\d+) copies", result.stdout.str())
    assert m, result.stdout.str()[-2000:]
    return int(m.group(1)), int(m.group(2))


def few_tasks_with_copies(path: Path, tasks: int = 4) -> None:
    from test_dedupe import duplicated_samples

    rows = duplicated_samples(path)
    keep = sorted({r["task_id"] for r in rows})[:tasks]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows if r["task_id"] in keep))


@pytest.mark.slow
def test_contract_with_copies_on_a_host_without_our_disk_equals_n0(pytester, host):
    samples = pytester.path / "dups.jsonl"  # in /tmp: invisible on the host
    few_tasks_with_copies(samples)
    data = pytester.path / "data"  # the controller's data root; the host's is REMOTE_DATA
    subprocess.run(["cp", "-r", str(REPO / "benchmarks" / "contract"), str(data)], check=True)
    args = ["--specbench=contract", f"--model=replay:{samples}", f"--specbench-data={data}",
            "--specbench-checks=functional", "--specbench-result-cache=off"]
    alone = run_alone(pytester, "alone", *args)
    spread = run(pytester, "spread", *args, *remote(host), f"--specbench-remote-data={REMOTE_DATA}")
    assert outcomes(spread) == outcomes(alone)
    assert spread.ret == alone.ret == 1  # the wrong copies fail
    assert sections(pytester, "spread") == sections(pytester, "alone")
    # Every distinct program evaluated once across the hosts' workers, and its copies
    # took its verdict (from the controller when they ran on the other worker).
    assert dedupe_counts(spread) == dedupe_counts(alone)
    assert dedupe_counts(spread)[1] > 0
    # The workers kept their caches on their own disk: nothing of theirs here.
    assert not (pytester.path / "state-spread" / "cache" / "results").exists()


@pytest.mark.slow
def test_a_rerun_on_a_host_with_a_fresh_disk_takes_every_known_verdict_from_the_controller(pytester, host):
    # The run's one store of verdicts is the controller's (engine/ledger.py): a re-run whose
    # worker sits on a host that never saw this state folder still takes every verdict the
    # first run (here -n 0, on the controller's disk) reached, pushed with its items.  Workers
    # kept result caches on their own disks before: this one had none (0 of 4 on main).
    args = ["-p", "no:cacheprovider", f"--specbench-dir={pytester.path / 'state'}", "--specbench=contract",
            "--model=reference", "--specbench-checks=functional", "-k"]
    first = pytester.runpytest_inprocess(*args, "HumanEval-S/0 or HumanEval-S/1", "-n", "0")
    again = pytester.runpytest_subprocess(*args, "HumanEval-S/0 or HumanEval-S/1 or HumanEval-S/2 or Mbpp-S/2",
                                          *remote(host, workers=1))
    assert outcomes(first) == {"passed": 2} and outcomes(again) == {"passed": 4}, again.stdout.str()[-2000:]
    again.stdout.fnmatch_lines(["*specbench: 2 of 4 results came from the result cache*"])


def test_a_host_whose_data_differs_is_refused_in_one_line(pytester, host):
    data = pytester.path / "data"
    subprocess.run(["cp", "-r", str(REPO / "benchmarks" / "contract"), str(data)], check=True)
    # A file of the task set (the folder also holds replay answer files, which no host compares:
    # editing one of those, as rglob's first match may be, refuses nothing)
    edited = data / "evalplus" / "HumanEvalPlus.jsonl"
    edited.write_text(edited.read_text() + "\n")  # still loads; another hash
    # one worker: the host's data is compared once per host, not per worker
    result = run(pytester, "refused", "--specbench=contract", "--model=reference", f"--specbench-data={data}",
                 *remote(host, workers=1), f"--specbench-remote-data={REMOTE_DATA}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    lines = [line for line in result.stderr.lines + result.stdout.lines if "specbench: host" in line]
    assert len(lines) == 1, result.stderr.str() + result.stdout.str()
    assert "data differs" in lines[0] and edited.name in lines[0]
    assert "Traceback" not in result.stderr.str() + result.stdout.str()


@pytest.mark.slow
def test_cife_judge_asked_once_across_hosts_equals_n0(pytester, host):
    from openai_server import StubOpenAIServer

    from pytest_specbench.benchmarks.cife.scripted_judge import answer

    with StubOpenAIServer(answer=lambda req: answer(req["messages"]), known_models=("judge",)) as server:
        # 4 of the 12 tasks (20 items, each task's 4 adherence items one question): spread over
        # the two remote workers, a task's items can land on both, as with all 12.
        args = ["--specbench=cife", "--model=reference", "--judge-model=openai:judge",
                f"--judge-model-base-url={server.url}", "--specbench-result-cache=off",
                "-k", "b01 or b02 or b03 or b04"]
        alone = run_alone(pytester, "alone", *args)
        asked_alone = server.chat_count
        spread = run(pytester, "spread", *args, *remote(host))
        asked_spread = server.chat_count - asked_alone
        questions = [json.dumps(r["body"]["messages"], sort_keys=True) for r in server.chat_requests()[asked_alone:]]
    assert outcomes(spread) == outcomes(alone)
    assert sections(pytester, "spread") == sections(pytester, "alone")
    assert asked_spread == asked_alone > 0
    assert len(set(questions)) == len(questions)  # each question once across the two workers


@pytest.mark.slow
def test_postcond_on_a_host_without_our_disk_equals_n0(pytester, host, postcond_bundled_state):
    # One Java task (JUnit 4 and the JML ensures in the host's own sandbox): its two checks,
    # on one worker there (two would each start a JVM for one item; what is shared between
    # workers is proven by the contract and CIFE tests above).  javalib--push: 3 mutants, the
    # fewest of a Java task (every JVM run of its complete check is made on both sides).  The
    # run here is made in this process (as run_alone: only its report is compared) in the
    # session's state folder, whose Java toolchain and project are built (tests/shared_runs.py);
    # the host has only its own disk and builds them itself.  No result cache on either side:
    # every verdict is evaluated.
    args = ["--specbench=postcond", "--model=reference", "-k", "javalib and push", "--specbench-result-cache=off"]
    alone = pytester.runpytest_inprocess("-p", "no:cacheprovider", f"--specbench-dir={postcond_bundled_state}",
                                         f"--specbench-report={pytester.path / 'alone.json'}", *args, "-n", "0")
    spread = run(pytester, "spread", *args, *remote(host, workers=1))
    assert outcomes(spread) == outcomes(alone)
    assert sections(pytester, "spread") == sections(pytester, "alone")


@pytest.mark.slow
def test_killed_controller_resumes_on_the_remote_workers(pytester, tmp_path, uninterrupted):
    from test_resume import KILL_AFTER, comparable, journal_lines

    require_namespace()
    hosts = [PrivateHost.socket_server(tmp_path / "server.log")]
    try:
        # The samples (in /tmp: invisible on the host) and their uninterrupted -n 0 run are
        # test_resume.py's, made once for the session.
        samples, n_items, full = uninterrupted.samples, uninterrupted.n_items, uninterrupted.result
        args = ["--specbench=contract", f"--model=replay:{samples}", "--specbench-k=1"]
        state = pytester.path / "state-crash"
        cmd = [sys.executable, "-m", "pytest", *UNUSED_PLUGINS, "-p", "no:cacheprovider", f"--specbench-dir={state}",
               f"--specbench-report={pytester.path / 'crash.json'}", *args, *remote(hosts[0], workers=1)]
        proc = subprocess.Popen(cmd, cwd=pytester.path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                start_new_session=True)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if list((state / "runs").glob("*/journal.jsonl")) and len(journal_lines(state)) >= KILL_AFTER:
                break
            assert proc.poll() is None, "the run ended before it could be killed"
            time.sleep(0.02)
        os.killpg(proc.pid, signal.SIGKILL)  # the controller only: the workers are on the other "host"
        proc.wait()
        before = journal_lines(state)
        assert KILL_AFTER <= len(before) < n_items - 1, "the kill did not land mid-run"
        # execnet's socket server may end with a connection that died (when, depends on the
        # machine's load): the host's operator (here, the test) starts a new one, in a fresh
        # namespace, so nothing the killed run left on the host can serve the resumed one.
        hosts[0].close()
        hosts.append(PrivateHost.socket_server(tmp_path / "server2.log"))
        resumed = pytester.runpytest_subprocess("-p", "no:cacheprovider", f"--specbench-dir={state}",
                                                f"--specbench-report={pytester.path / 'resumed.json'}", *args,
                                                *remote(hosts[-1], workers=1), "--specbench-resume")
    finally:
        for host in hosts:
            host.close()
    resumed.stdout.fnmatch_lines([f"*specbench: resuming run *: {len(before)} items already finished*"])
    assert outcomes(resumed) == outcomes(full)
    assert comparable(pytester.path / "resumed.json") == comparable(uninterrupted.report)
    after = journal_lines(state)
    assert after[:len(before)] == before
    assert len({e["nodeid"] for e in after}) == len(after) == n_items - 1


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
