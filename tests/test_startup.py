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
import importlib.metadata as md
seen = sorted({((d.metadata["Name"] or "").lower().replace("_", "-"), d.version) for d in md.distributions()})
print(json.dumps({"mine": mine, "by_email": hashlib.sha256(json.dumps(seen).encode()).hexdigest()[:16],
                  "count": len(seen)}))
"""


def test_describing_the_environment_hashes_what_the_whole_metadata_parse_reads():
    """The environment's hash (the run key, the manifest, each worker's first zygote) reads
    each distribution's Name and Version with the email package's HeaderParser, not the
    whole parse ``Distribution.metadata`` makes (every long description, twice: ~0.05
    CPU s of each ~0.09 s describe); the hash must stay the one the whole parse gives, or
    every result key of a user's earlier runs would change."""
    out = subprocess.run([sys.executable, "-c", _DESCRIBE_THEN_COMPARE], capture_output=True, text=True, check=True)
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["mine"]["distributions"] == got["by_email"]
    assert got["mine"]["distribution_count"] == got["count"] > 0


_PROBE = """
import json, os, sys
def pytest_unconfigure(config):
    with open(os.environ["STARTUP_PROBE_OUT"], "w") as fh:
        json.dump({"imported": "hypothesis" in sys.modules,
                   "registered": config.pluginmanager.get_plugin("hypothesispytest") is not None}, fh)
"""


def test_a_run_of_specbench_items_alone_does_not_import_hypothesis_for_its_plugin(tmp_path):
    """Hypothesis's pytest plugin imports ``hypothesis`` in its terminal summary (every
    process: the controller and each xdist worker), ~0.2 CPU s each after the last item;
    a run whose items are all specbench items drops the plugin at collection.  A run that
    also collects a test of the user's keeps it.  (``--collect-only``: collection
    and the terminal summary run, no item does.)"""
    import importlib.util

    if importlib.util.find_spec("_hypothesis_pytestplugin") is None:
        import pytest

        pytest.skip("hypothesis is not installed: pip install hypothesis")
    (tmp_path / "startup_probe.py").write_text(_PROBE)
    (tmp_path / "test_users_own.py").write_text("def test_users_own():\n    pass\n")
    seen = {}
    for name, extra in (("specbench alone", []), ("with a test of the user's", ["test_users_own.py"])):
        out = tmp_path / f"{len(seen)}.json"
        env = {**__import__("os").environ, "PYTHONPATH": str(tmp_path), "STARTUP_PROBE_OUT": str(out)}
        env.pop("PYTEST_ADDOPTS", None)
        env.pop("PYTEST_XDIST_WORKER", None)
        proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:anyio", "-p", "startup_probe",
                               "--collect-only", "--specbench=evalplus", "--model=reference",
                               f"--specbench-dir={tmp_path / 'state'}", *extra],
                              cwd=tmp_path, env=env, capture_output=True, text=True)
        assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
        seen[name] = json.loads(out.read_text())
    assert seen["specbench alone"] == {"imported": False, "registered": False}
    assert seen["with a test of the user's"]["registered"]
