"""A "remote host" on this machine that shares no disk with the tests: a process in
a mount namespace of its own (``unshare --mount``, as root) in which ``/tmp`` --
where the tests' files, the controller's state folder and the replay files
live -- is a fresh private tmpfs holding its own ``HOME``, ``SPECBENCH_DIR`` and
temp folder.  The checkout and the venv stay visible (the host's installed
plugin), the network is the machine's (servers bind 127.0.0.1 only).

``PrivateHost.socket_server()`` runs execnet's socket server there on a free
127.0.0.1 port (never execnet's default ``:8888`` on all interfaces: that server
runs whatever a client sends, unauthenticated); ``start_sshd()`` runs a
throwaway OpenSSH server there instead, with a key made for the test.
"""
from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PRIVATE = "/tmp"  # what the namespace covers with its own tmpfs


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def namespace_refusal() -> str | None:
    """Why a private mount namespace cannot be made here (None: it can)."""
    if os.geteuid() != 0:
        return "needs root for unshare --mount (run as root, e.g. in CI's container)"
    if shutil.which("unshare") is None:
        return "needs unshare (util-linux)"
    # The namespace covers /tmp: a venv or checkout that lives there (e.g. .ci/run's venv when
    # TMPDIR is /tmp) would vanish from the "host", which then cannot start Python or the plugin.
    for what, path in (("the Python environment", Path(sys.prefix)), ("the checkout", REPO)):
        if Path(PRIVATE) in path.resolve().parents:
            return f"{what} ({path}) is under {PRIVATE}, which the private host covers; run from elsewhere"
    done = subprocess.run(["unshare", "--mount", "--propagation", "private", "sh", "-c",
                           f"mount -t tmpfs tmpfs {PRIVATE}"], capture_output=True, text=True)
    if done.returncode:
        return f"unshare --mount refused here: {(done.stderr or done.stdout).strip()[:200]}"
    return None


def require_namespace() -> None:
    reason = namespace_refusal()
    if reason:
        pytest.skip(f"private host: {reason}")


class PrivateHost:
    """One process tree in a private mount namespace (see the module docstring)."""

    def __init__(self, command: str, log: Path, before: str = "", setup: str = ""):
        self.log = log
        # HOME points into the private tmpfs (the real home stays mounted: the
        # interpreter may live there, e.g. under ~/.pyenv).
        script = (f"set -e; {before} mount -t tmpfs tmpfs {PRIVATE}; "
                  f"mkdir -p {PRIVATE}/home {PRIVATE}/specbench; cd {PRIVATE}; {setup} exec {command}")
        env = {**os.environ, "HOME": f"{PRIVATE}/home", "SPECBENCH_DIR": f"{PRIVATE}/specbench",
               "TMPDIR": PRIVATE}
        for name in ("PYTEST_XDIST_WORKER", "PYTEST_XDIST_TESTRUNUID", "PYTEST_XDIST_WORKER_COUNT",
                     "PYTEST_CURRENT_TEST", "PYTEST_ADDOPTS"):
            env.pop(name, None)
        self._out = open(log, "wb")
        self.proc = subprocess.Popen(["unshare", "--mount", "--propagation", "private", "sh", "-c", script],
                                     stdout=self._out, stderr=subprocess.STDOUT, env=env, start_new_session=True)

    @classmethod
    def socket_server(cls, log: Path, setup: str = "") -> "PrivateHost":
        port = free_port()
        host = cls(f"{sys.executable} -m execnet.script.socketserver 127.0.0.1:{port}", log, setup=setup)
        host.port = port
        host.wait_listening(port)
        return host

    def wait_listening(self, port: int, timeout: float = 60.0) -> None:
        """Until something listens on 127.0.0.1:port (read from /proc: a probe
        connection would be one more client of a one-client-at-a-time server)."""
        wanted = f"0100007F:{port:04X}"
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"private host exited: {self.log.read_text()[-1000:]}")
            with open("/proc/net/tcp") as fh:
                if any(line.split()[1] == wanted and line.split()[3] == "0A" for line in fh.readlines()[1:]):
                    return
            time.sleep(0.05)
        raise RuntimeError(f"nothing listens on 127.0.0.1:{port}: {self.log.read_text()[-1000:]}")

    def close(self) -> None:
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, 9)  # its own session: the server and the workers it started
            except ProcessLookupError:
                pass
            self.proc.wait()
        self._out.close()


def sshd_refusal() -> str | None:
    if shutil.which("sshd") is None and not Path("/usr/sbin/sshd").exists():
        return "needs OpenSSH's server (apt-get install openssh-server)"
    if shutil.which("ssh") is None or shutil.which("ssh-keygen") is None:
        return "needs the OpenSSH client (apt-get install openssh-client)"
    return None


def start_sshd(folder: Path) -> tuple[PrivateHost, Path]:
    """A throwaway sshd on a free 127.0.0.1 port in a private namespace; returns it
    and an ssh client config naming the host ``specbench-private``."""
    sshd = shutil.which("sshd") or "/usr/sbin/sshd"
    folder.mkdir(parents=True, exist_ok=True)
    for name in ("host_key", "client_key"):
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(folder / name)], check=True)
    (folder / "authorized_keys").write_text((folder / "client_key.pub").read_text())
    os.chmod(folder, 0o700)
    port = free_port()
    # The key files live in the tests' /tmp, which the namespace hides: copied in first.
    inside = f"{PRIVATE}/sshd"
    (folder / "sshd_config").write_text("\n".join([
        f"ListenAddress 127.0.0.1", f"Port {port}", f"HostKey {inside}/host_key",
        f"AuthorizedKeysFile {inside}/authorized_keys", "PasswordAuthentication no",
        "KbdInteractiveAuthentication no", "PermitRootLogin prohibit-password", "UsePAM no",
        "StrictModes no", f"PidFile {inside}/sshd.pid",
        f"SetEnv HOME={PRIVATE}/home SPECBENCH_DIR={PRIVATE}/specbench TMPDIR={PRIVATE}", ""]))
    # The keys live in the tests' /tmp, which the namespace covers: staged outside it
    # before the tmpfs is mounted, moved in after.
    stage = f"/run/specbench-sshd-{port}"
    before = f"mkdir -p {stage} /run/sshd; cp {folder}/host_key {folder}/authorized_keys {folder}/sshd_config {stage}/;"
    setup = f"mkdir -p {inside}; mv {stage}/* {inside}/; rmdir {stage}; chmod 600 {inside}/host_key;"
    host = PrivateHost(f"{sshd} -D -e -f {inside}/sshd_config", folder / "sshd.log", before=before, setup=setup)
    host.port = port
    host.wait_listening(port)
    (folder / "ssh_config").write_text("\n".join([
        "Host specbench-private", "  HostName 127.0.0.1", f"  Port {port}", "  User root",
        f"  IdentityFile {folder / 'client_key'}", "  IdentitiesOnly yes", "  BatchMode yes",
        "  StrictHostKeyChecking no", "  UserKnownHostsFile /dev/null", "  LogLevel ERROR", ""]))
    return host, folder / "ssh_config"
