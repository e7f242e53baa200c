"""Where the JUnit 4 jars are: ``SPECBENCH_JUNIT_JAR`` (the junit jar; hamcrest is
looked for beside it unless ``SPECBENCH_HAMCREST_JAR`` names it), else Debian's
``junit4`` package (``/usr/share/java/junit4.jar`` and ``hamcrest.jar``)."""
from __future__ import annotations

import os
from pathlib import Path

INSTALL_HINT = "apt-get install junit4"
DEBIAN = Path("/usr/share/java")
_JUNIT_NAMES = ("junit4.jar", "junit.jar")
_HAMCREST_NAMES = ("hamcrest.jar", "hamcrest-core.jar", "hamcrest-all.jar")


def _first(folder: Path, names) -> Path | None:
    return next((folder / n for n in names if (folder / n).is_file()), None)


def jars() -> tuple[Path, Path] | str:
    """``(junit, hamcrest)`` resolved to real files, or one line saying what is
    missing and how to install it."""
    env_junit = os.environ.get("SPECBENCH_JUNIT_JAR")
    if env_junit:
        junit = Path(env_junit)
        if not junit.is_file():
            return f"SPECBENCH_JUNIT_JAR={env_junit}: no such file (unset it to use Debian's: {INSTALL_HINT})"
        env_ham = os.environ.get("SPECBENCH_HAMCREST_JAR")
        hamcrest = Path(env_ham) if env_ham else _first(junit.parent, _HAMCREST_NAMES) or _first(DEBIAN, _HAMCREST_NAMES)
        if hamcrest is None or not hamcrest.is_file():
            return f"no hamcrest jar beside {junit}: set SPECBENCH_HAMCREST_JAR or {INSTALL_HINT}"
        return junit.resolve(), hamcrest.resolve()
    junit = _first(DEBIAN, _JUNIT_NAMES)
    hamcrest = _first(DEBIAN, _HAMCREST_NAMES)
    if junit is None or hamcrest is None:
        return f"JUnit 4 not found (no {DEBIAN}/junit4.jar): {INSTALL_HINT}, or set SPECBENCH_JUNIT_JAR"
    return junit.resolve(), hamcrest.resolve()


def missing() -> str | None:
    found = jars()
    return found if isinstance(found, str) else None
