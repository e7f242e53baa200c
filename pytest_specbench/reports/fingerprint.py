"""The run fingerprint: what the machine and the software were, once per run.

The report's ``manifest.fingerprint``: the interpreter, the versions of this
project and of the packages verdicts depend on, each toolchain's version
(java, javac, lean, lake: "absent" when not installed), each executor's
version, the sandbox mode and its limits, and every data file's sha256 (by
benchmark and file name, so two hosts with the data at other paths agree).
The gate (``reports/gate.py``) prints what differs between a baseline's
fingerprint and the candidate's beside the metric deltas: a drop that comes
with a new JDK or another sandbox limit reads differently from one that does
not.  Pure data: built by the session, compared here.
"""
from __future__ import annotations

import json
import platform
import sys
from typing import Any, Mapping

# The distributions a verdict or a metric can depend on (the project's own first).
PACKAGES = ("pytest-specbench", "pytest", "pytest-xdist", "execnet", "z3-solver", "icontract", "hypothesis",
            "coverage", "openai", "numpy", "filelock")


def package_versions(names: tuple[str, ...] = PACKAGES) -> dict[str, str]:
    from importlib import metadata

    out = {}
    for name in names:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = "absent"
    return out


def build(*, sandbox: str, limits: Mapping[str, Any], data_files: Mapping[str, Mapping[str, str]],
          executors: Mapping[str, str], sample_environment: Mapping[str, Any], toolchains: Mapping[str, str],
          packages: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The fingerprint of this process's run (``packages``: looked up when not given;
    ``toolchains``: ``plugin/remote.py``'s ``toolchain_versions``, as the host check sees them)."""
    return {
        "python": {"version": platform.python_version(), "implementation": platform.python_implementation(),
                   "build": " ".join(sys.version.split()[1:])},
        "platform": platform.platform(),
        "packages": dict(packages if packages is not None else package_versions()),
        "toolchains": dict(toolchains),
        "executors": dict(executors),
        "sample_environment": _digest(sample_environment),
        "sandbox": {"mode": sandbox, "limits": dict(limits)},
        "data_files": {bench: dict(files) for bench, files in data_files.items()},
    }


def _digest(value: Any) -> str:
    import hashlib

    return hashlib.sha256(json.dumps(value, sort_keys=True, default=str).encode()).hexdigest()[:16]


def differences(baseline: Mapping[str, Any] | None, candidate: Mapping[str, Any] | None) -> list[str]:
    """One line per leaf that differs (``toolchains.java: java 17.0.15 -> java 21.0.1``);
    a baseline without a fingerprint (an older report) is one line saying so."""
    if not candidate:
        return []
    if not baseline:
        return ["the baseline report has no fingerprint (made by an older pytest-specbench): not compared"]
    lines: list[str] = []
    _walk(baseline, candidate, "", lines)
    return lines


def _walk(before: Any, now: Any, path: str, lines: list[str]) -> None:
    if isinstance(before, Mapping) and isinstance(now, Mapping):
        for key in sorted(set(before) | set(now), key=str):
            where = f"{path}.{key}" if path else str(key)
            if key not in before:
                lines.append(f"{where}: only in this run ({_short(now[key])})")
            elif key not in now:
                lines.append(f"{where}: only in the baseline ({_short(before[key])})")
            else:
                _walk(before[key], now[key], where, lines)
    elif before != now:
        lines.append(f"{path}: {_short(before)} -> {_short(now)}")


def _short(value: Any, width: int = 60) -> str:
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True)
    return text if len(text) <= width else text[:width - 3] + "..."
