"""A plain-subprocess stand-in for the ``command`` executor, for the authors'
tool run on the author's OWN repository (``specbench postcond make-task``) when
the sandbox is unavailable, and for unit tests on the bundled library.  It is
NOT a sandbox: checks of model answers always go through ``ctx.executor("command")``."""
from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from ...execution.protocol import CommandJob, CommandResult, Environment, Prepared


class LocalExecutor:
    kind = "command"
    version = "local-1"

    def __init__(self, python: str | None = None):
        self.python = python or sys.executable
        self.jobs = 0

    def available(self) -> str | None:
        return None

    def prepare(self, env: Environment) -> Prepared:
        return Prepared(env, executables={"python": self.python})

    def run(self, prepared: Prepared | None, job: CommandJob) -> CommandResult:
        self.jobs += 1
        python = (prepared.executables.get("python") if prepared else None) or self.python
        argv = [python if a == "python" else a for a in job.argv]
        with tempfile.TemporaryDirectory(prefix="postcond-local-") as tmp:
            for rel, data in job.files.items():
                path = Path(tmp, rel)
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(data)
            env = {"PATH": os.path.dirname(python) + os.pathsep + os.environ.get("PATH", ""), "HOME": tmp,
                   "LANG": "C.UTF-8", **job.env}
            timed_out = False
            try:
                proc = subprocess.run(argv, cwd=tmp, env=env, capture_output=True, timeout=job.wall_seconds or 120)
                code, out, err = proc.returncode, proc.stdout, proc.stderr
            except subprocess.TimeoutExpired as exc:
                timed_out, code, out, err = True, None, exc.stdout or b"", exc.stderr or b""
            files = {}
            for rel in job.collect:
                path = Path(tmp, rel)
                if path.is_file() and not path.is_symlink():
                    files[rel] = path.read_bytes()[: job.output_bytes or (1 << 20)]
        return CommandResult(exit_code=code, timed_out=timed_out, killed="time limit" if timed_out else None,
                             stdout=out.decode("utf-8", "replace"), stderr=err.decode("utf-8", "replace"), files=files)

    def close(self) -> None:
        pass
