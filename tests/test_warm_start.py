"""Warm starts of command jobs (execution/warm.py, issue #45): a job cloned from an
image of its interpreter with its code imported is still a fresh process of its
own sandbox -- nothing of an earlier job in it, nothing it does reaches the image
or the next job -- and a search job gives the same records as an exec'd one."""
import json
import secrets
import sys

import pytest

from pytest_specbench.execution.command import CommandExecutor
from pytest_specbench.execution.protocol import CommandJob, WarmStart

# The job's own module: imported by the image (``base``), then per job its ``main``
# runs in a clone.  The hostile job (argv "attack") reads its secret into memory, marks
# the module and a module of the standard library, writes files everywhere it can, and
# tries to kill, trace or write into every process of the machine but its own; the
# next job ("look") reports what it finds of all that, and who it is.
PROBE = r'''
import ctypes, json, os, signal, socket, sys
import json as _json_module

LOADED_BY = os.getpid()  # the image's pid: a job cloned from it has another
STATE = []


def _others(own):
    """The sandbox's zygote and its children (the seed, the images), but the job's own processes."""
    zygote, out = os.getppid(), {os.getppid(), LOADED_BY}
    for entry in os.listdir("/proc"):
        try:
            with open(f"/proc/{entry}/status") as fh:
                if entry.isdigit() and f"PPid:\t{zygote}\n" in fh.read():
                    out.add(int(entry))
        except OSError:
            continue
    return sorted(out - {os.getpid(), *own})


def _attack(found, helper_pid):
    secret = open("secret.txt").read()
    STATE.append(secret)
    _json_module.SPECBENCH_MARK = secret
    for path in ("/tmp/mark", "/dev/shm/mark", "/var/tmp/mark", os.path.expanduser("~/mark"), "../mark"):
        try:
            with open(path, "w") as fh:
                fh.write(secret)
            found.setdefault("wrote", []).append(path)
        except OSError:
            pass
    libc = ctypes.CDLL(None, use_errno=True)
    found["targets"] = _others([helper_pid])
    for pid in found["targets"]:
        for what in ("kill", "ptrace", "mem"):
            try:
                if what == "kill":
                    os.kill(pid, signal.SIGKILL)
                elif what == "ptrace":
                    if libc.ptrace(16, pid, None, None) != 0:  # PTRACE_ATTACH
                        raise OSError(ctypes.get_errno(), "ptrace")
                else:
                    with open(f"/proc/{pid}/mem", "r+b", buffering=0) as fh:
                        fh.seek(0x400000)
                        fh.write(b"x")
                found.setdefault("reached", []).append([what, pid])
            except OSError:
                pass


def _memory_holds(head, tail):
    """Does any readable mapping of this process hold ``head`` followed by ``tail``?  (Given
    in two halves, never joined here: the search itself must not put the secret in memory.)"""
    with open("/proc/self/maps") as fh:
        regions = [line.split() for line in fh]
    for region in regions:
        if not region[1].startswith("r") or (len(region) > 5 and region[5].startswith("[v")):
            continue
        start, end = (int(x, 16) for x in region[0].split("-"))
        data = ctypes.string_at(start, end - start)
        at = data.find(head)
        while at >= 0:
            if data[at + len(head):at + len(head) + len(tail)] == tail:
                return True
            at = data.find(head, at + 1)
    return False


def main(argv, fd, helper_pid):
    helper = socket.socket(fileno=fd)
    got = b""
    while not got.endswith(b"\n"):
        chunk = helper.recv(65536)
        if not chunk:
            break
        got += chunk
    found = {"pid": os.getpid(), "ppid": os.getppid(), "loaded_by": LOADED_BY, "helper_pid": helper_pid,
             "helper_fds": json.loads(got or b"{}"),
             "fds": {fd: os.readlink(f"/proc/self/fd/{fd}") for fd in map(int, os.listdir("/proc/self/fd"))
                     if os.path.exists(f"/proc/self/fd/{fd}")},
             "uid": os.getuid(), "cwd": os.getcwd(), "argv": argv, "path0": sys.path[0], **_modules()}
    if argv[1] == "attack":
        _attack(found, helper_pid)
    else:
        found.update(state=list(STATE), mark=getattr(_json_module, "SPECBENCH_MARK", None),
                     files=[p for p in ("/tmp/mark", "/dev/shm/mark", "/var/tmp/mark", "../mark") if os.path.exists(p)],
                     in_memory=_memory_holds(argv[2].encode(), argv[3].encode()))
    os.write(3, (json.dumps(found) + "\n").encode())


def _modules():
    """The modules an exec'd script would not have (the harness's, the top layer's), and
    whether this script is __main__ (as when exec'd)."""
    return {"extra": sorted(m for m in sys.modules if m.startswith(("pytest_specbench", "warm_", "_pytest"))),
            "main_is_script": getattr(sys.modules["__main__"], "LOADED_BY", None) is not None}


def helper(argv, fd):
    fds = {fd: os.readlink(f"/proc/self/fd/{fd}") for fd in map(int, os.listdir("/proc/self/fd"))
           if os.path.exists(f"/proc/self/fd/{fd}")}
    socket.socket(fileno=fd).sendall(json.dumps({"fds": fds, "pid": os.getpid(), "uid": os.getuid(),
                                                 **_modules()}).encode() + b"\n")
'''
WARM = WarmStart(main="warm_probe:main", helper="warm_probe:helper", base=("warm_probe",), base_preload=("ctypes",),
                 top=("warm_top",))


def _probe_job(*args, secret=b""):
    files = {"warm_probe.py": PROBE.encode(), "warm_top.py": b"TOP = True\n"}
    if secret:
        files["secret.txt"] = secret
    return CommandJob(argv=(sys.executable, "-s", "-E", "warm_probe.py", *args), files=files, warm=WARM,
                      cpu_seconds=30, wall_seconds=120)


@pytest.fixture(scope="module")
def warm_command():
    executor = CommandExecutor(warm=True)  # (whatever $SPECBENCH_WARM_STARTS says)
    executor.ensure_started()
    if executor.isolation.get("uid") is None:
        executor.close()
        pytest.skip("jobs get no uid of their own here (not root): no warm starts, every job is exec'd")
    yield executor
    executor.close()


@pytest.fixture(scope="module")
def exec_command():
    """The module's executor whose jobs are all exec'd (the "before" of each comparison with a
    warm job): one sandbox zygote for the module's tests, not one per test (~0.3 CPU s a start)."""
    executor = CommandExecutor(warm=False)
    yield executor
    executor.close()


def test_a_warm_job_is_a_fresh_process_that_reaches_neither_its_image_nor_the_next_job(warm_command):
    # both jobs in one pass (two jobs, no Hypothesis): the attacker first, then a job that looks
    secret = secrets.token_hex(24)
    attack = warm_command.run(None, _probe_job("attack", secret=secret.encode()))
    look = warm_command.run(None, _probe_job("look", secret[:24], secret[24:]))
    (a,), (b,) = attack.records, look.records
    assert attack.exit_code == 0 and look.exit_code == 0, (attack.stderr, look.stderr)
    for job in (a, b):
        # warm: cloned from the image (which imported the module under another pid), a child
        # of the sandbox's zygote, under the job's uid, in its own folder, with argv as exec'd
        assert job["loaded_by"] != job["pid"] and job["ppid"] != job["loaded_by"], job
        assert job["uid"] not in (0, 1000) and job["cwd"] == job["path0"], job
        assert job["argv"][0] == "warm_probe.py", job
        # the main process: stdin, output pipes, the result channel, the status pipe closed, the
        # helper's socket; the helper: no result channel (its 3 and 4 are /dev/null)
        assert sorted(map(int, job["fds"])) == [0, 1, 2, 3, 5], job["fds"]
        helper = job["helper_fds"]
        assert helper["pid"] == job["helper_pid"] and helper["uid"] == job["uid"], helper
        assert helper["fds"]["3"] == helper["fds"]["4"] == "/dev/null", helper
        # the modules of an exec'd script, the script as __main__: none of the harness's (the image
        # is a fresh interpreter, never a fork of the zygote); the top layer in the main process only
        assert job["main_is_script"] and helper["main_is_script"], (job, helper)
        assert job["extra"] == ["warm_top"] and helper["extra"] == [], (job["extra"], helper["extra"])
    assert a["pid"] != b["pid"]
    # the attacker reached no process (not its image, not the zygote, nobody's memory)
    assert not a.get("reached") and len(a["targets"]) >= 4, a  # the zygote, the seed, both images
    # and the next job finds nothing of it: not its module state, not its mark on a module of the
    # standard library, not its files, not its secret anywhere in its memory; its image was not killed
    assert b["state"] == [] and b["mark"] is None and b["files"] == [], b
    assert b["in_memory"] is False


def _stable(record):
    """A search job's record less what differs between two runs: the nonce, CPU figures."""
    out = {k: v for k, v in record.items() if k not in ("nonce", "seconds")}
    if isinstance(out.get("outcome"), dict):
        out["outcome"] = {k: v for k, v in out["outcome"].items() if k != "cpu"}
    return out


def test_a_warm_search_job_gives_the_records_of_an_exec_d_one(warm_command, exec_command):
    from pytest_specbench.pyspec.blocks import blocks_job

    config = {"program": "def f(xs):\n    return sorted(set(xs))\n", "entry_point": "f", "params": ["xs"],
              "types": {"xs": ["list", "int"]}, "contract": "", "examples": 6, "seconds": 30,
              "relations": ["AC", "RW"]}
    spec = "assert all(a <= b for a, b in zip(return_value, return_value[1:]))"
    runs = []
    for executor in (warm_command, exec_command):
        job, nonce = blocks_job("import re", spec, [], 2.0, 60.0, search=config)
        result = executor.run(None, job)
        runs.append([_stable(r) for r in result.records if r.get("nonce") == nonce])
    warm, exec_d = runs
    assert warm == exec_d and [r.get("status") for r in warm if r.get("event") == "search"] == ["passed", "refuted"]
    assert json.dumps(warm)  # plain data


# The other kind (PostcondBench's runs, benchmarks/postcond/execute.py): ``PYTHON -m MODULE`` of any
# interpreter, one process cloned from an image of that interpreter with installed modules imported
# (``main=None``), set up as the interpreter starts.  The module reports the state it starts in;
# with "attack"/"look" it is the hostile pair above, the image now the one the job is cloned from.
M_PROBE = r'''
import atexit, json, os, site, sys
import warm_probe

state = {"warm": "icontract" in sys.modules, "path": sys.path, "argv": sys.argv, "flags": list(sys.flags),
         "dont_write_bytecode": sys.dont_write_bytecode, "main": [__name__, __file__, __spec__.name],
         "main_module": sorted(k for k in vars(sys.modules["__main__"]) if not k.startswith("__")),
         "user_site": site.USER_SITE, "executable": sys.executable, "cwd": os.getcwd(), "uid": os.getuid(),
         "pid": os.getpid()}
import icontract
state["shadow"] = getattr(icontract, "SHADOW", None)
if sys.argv[1] == "attack":
    warm_probe.STATE.append(open("secret.txt").read())
    warm_probe._attack(state, 0)
    sys.modules["icontract"].SPECBENCH_MARK = warm_probe.STATE[0]
elif sys.argv[1] == "look":
    state.update(mark=getattr(sys.modules.get("icontract"), "SPECBENCH_MARK", None),
                 files=[p for p in ("/tmp/mark", "/dev/shm/mark", "/var/tmp/mark", "../mark") if os.path.exists(p)],
                 in_memory=warm_probe._memory_holds(sys.argv[2].encode(), sys.argv[3].encode()))
atexit.register(lambda: os.write(3, b'{"atexit": true}\n'))
os.write(3, (json.dumps(state) + "\n").encode())
sys.exit("the module's own exit message")
'''
M_WARM = WarmStart(main=None, top_preload=("json",), top_optional=("icontract", "no_such_module_here"))


def _module_job(*args, secret=b"", pythonpath="pp", files=None, env=None):
    return CommandJob(argv=(sys.executable, "-m", "warm_m", *args),
                      files={"warm_m.py": M_PROBE.encode(), "warm_probe.py": PROBE.encode(), "pp/keep.txt": b"",
                             **({"secret.txt": secret} if secret else {}), **(files or {})},
                      env={"PYTHONPATH": f"{pythonpath}:.", "PYTHONDONTWRITEBYTECODE": "1", **(env or {})}, warm=M_WARM,
                      cpu_seconds=30, wall_seconds=120)


def test_a_module_job_starts_warm_as_the_interpreter_would_and_reaches_nothing(warm_command, exec_command):
    runs = [ex.run(None, _module_job("state")) for ex in (warm_command, exec_command)]
    # a namesake of a module the image imported, on the job's $PYTHONPATH: that job is exec'd,
    # and imports the namesake, as an exec'd job does
    shadowed = warm_command.run(None, _module_job("state", files={"pp/icontract.py": b"SHADOW = 1\n"}))
    # another locale (the image's streams were made in its own) or start variable: exec'd too
    others = [warm_command.run(None, _module_job("state", env=env)) for env in ({"LC_ALL": "C"},
                                                                                {"PYTHONHASHSEED": "7"})]
    (warm, warm_exit), (cold, cold_exit) = (r.records for r in runs)
    assert warm["warm"] and not cold["warm"], (warm, cold)  # cloned from the image, and exec'd
    assert warm_exit == cold_exit == {"atexit": True}
    for r in runs:
        assert r.exit_code == 1 and r.stderr.strip().endswith("the module's own exit message"), r.stderr
    # the state it starts in is the exec'd one's (less the job's own folder's name, and pid)
    same = lambda s: json.loads(json.dumps({k: v for k, v in s.items() if k not in ("warm", "pid", "uid")})
                                .replace(s["cwd"], "JOBDIR"))  # noqa: E731
    assert same(warm) == same(cold), (same(warm), same(cold))
    assert warm["dont_write_bytecode"] and warm["path"][:3] == [warm["cwd"], warm["cwd"] + "/pp", warm["cwd"]]
    assert shadowed.records[0]["shadow"] == 1 and not shadowed.records[0]["warm"], shadowed.records
    assert [r.records[0]["warm"] for r in others] == [False, False], [r.stderr for r in others]
    # the hostile pair: the attacker reaches no process, the next job (cloned from the same image)
    # finds nothing of it: not its mark on a module the image imported, its files, its secret
    secret = secrets.token_hex(24)
    attack = warm_command.run(None, _module_job("attack", secret=secret.encode()))
    look = warm_command.run(None, _module_job("look", secret[:24], secret[24:]))
    a, b = attack.records[0], look.records[0]
    assert a["warm"] and b["warm"] and a["pid"] != b["pid"] and a["uid"] not in (0, 1000), (a, b)
    assert not a.get("reached") and len(a["targets"]) >= 3, a  # the zygote, the seed(s), the images
    assert b["mark"] is None and b["files"] == [] and b["in_memory"] is False, b
