"""The perf scripts' profiling hooks (issue #28: a profile of each miss).

perf/profile.py records a run with py-spy and buckets its samples; perf/timeline.py
is a pytest plugin writing each process's timeline.  These check the mechanisms
(a profile is written and read, the buckets and the timeline's parts come out),
never a time.
"""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from pytest_specbench.perf import profile, timeline
from shared_runs import UNUSED_PLUGINS

REPO = Path(__file__).resolve().parents[1]


def test_collapsed_stacks_are_bucketed_by_role_and_work(tmp_path):
    raw = tmp_path / "run.txt"
    # py-spy's raw format; a process frame's command line may span lines (python -c "...").
    raw.write_text(
        'process 10:"python -m pytest -p pytest_specbench.perf.timeline --specbench=evalplus";main (pytest/__main__.py:5);'
        'perform_collect (_pytest/main.py:700) 30\n'
        'process 11:"python -u -c import sys;exec(eval(sys.stdin.readline()))";serve (execnet/gateway_base.py:1);'
        'functional_check (pytest_specbench/benchmarks/contract/evalplus.py:400) 20\n'
        'process 10:"python -m pytest --specbench=evalplus";process 12:"python -s -m pytest_specbench.execution._zygote";'
        'process 14:"python -s -m pytest_specbench.execution._zygote";run_child (pytest_specbench/execution/python_child.py:178);'
        'value_hash (pytest_specbench/execution/wire.py:476) 10\n'
        'process 10:"python -m pytest --specbench=evalplus";process 12:"python -s -m pytest_specbench.execution._zygote";'
        'process 14:"python -s -m pytest_specbench.execution._zygote";run_child (pytest_specbench/execution/python_child.py:177);'
        'combinations_colors (<sample>:4) 35\n'
        'process 10:"python -m pytest --specbench=evalplus";process 12:"python -s -m pytest_specbench.execution._zygote";'
        'serve (pytest_specbench/execution/_zygote.py:9) 5\n'
        'process 13:"python -c \nimport json\nns = {\\"__name__\\": \\"__plain__\\"}\n";'
        'f (<program>:2) 5\n')
    s = profile.summarize(raw)
    assert s["total"] == 105
    assert s["roles"] == {"pytest controller": 30, "xdist worker": 20, "sandboxed job child (the sample)": 45,
                          "sandbox zygote": 5, "plain program (no isolation)": 5}
    assert s["buckets"]["zygote: fork / serve jobs"] == 5
    assert s["buckets"]["the sample's own code"] == 40
    assert s["buckets"]["child: value hash (wire.value_hash: type/str checks, hash())"] == 10
    assert s["buckets"]["harness: collection"] == 30
    assert s["buckets"]["harness: the item's check (functional_check, verdicts)"] == 20
    text = profile.format_summary(s, rate=100)
    assert "38.1%" in text and "by role and bucket" in text


@pytest.mark.skipif(profile.py_spy() is None, reason="py-spy not installed: pip install py-spy (in the test extra)")
def test_py_spy_records_a_profile_of_a_child_process(tmp_path):
    out = tmp_path / "spin.txt"
    script = textwrap.dedent("""
        import time
        def spin_for_the_profile():
            end = time.process_time() + 0.3  # ~60 samples at 200 Hz (1 s until #45, session 22)
            while time.process_time() < end:
                pass
        spin_for_the_profile()
    """)
    proc = subprocess.run(profile.profiled([sys.executable, "-c", script], out, rate=200), capture_output=True,
                          text=True, timeout=120)
    if proc.returncode != 0 and "ermission" in proc.stderr and not out.exists():
        # py-spy reads the child's memory (ptrace): a container without that capability
        # cannot profile at all, which is the machine's limit, not a fault of profile.py.
        pytest.skip("py-spy may not trace processes here (ptrace denied): run as root or set "
                    "kernel.yama.ptrace_scope=0 / add CAP_SYS_PTRACE")
    assert proc.returncode == 0, proc.stderr[-500:]
    assert out.exists(), proc.stderr[-500:]
    leaves = dict(profile.top_frames(out))
    assert any("spin_for_the_profile" in frame for frame in leaves), leaves
    assert "spin_for_the_profile" in profile.report(out, 200) or out.with_suffix(".summary.txt").exists()


def test_timeline_plugin_writes_each_process_timeline(tmp_path):
    (tmp_path / "test_two.py").write_text("def test_a():\n    pass\n\ndef test_b():\n    pass\n")
    folder = tmp_path / "timeline"
    env = {**os.environ, timeline.ENV: str(folder),
           "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
    # (UNUSED_PLUGINS: Hypothesis' and anyio's pytest plugins, which this run does not use, left out
    # of its controller and worker as in the suite's other runs: ~0.3 CPU s; #45, session 22)
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", *UNUSED_PLUGINS, "-p", "no:cacheprovider",
                           "-p", "no:specbench", "-p", "pytest_specbench.perf.timeline", "-n", "1", "test_two.py"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-800:] + proc.stderr[-800:]
    files = sorted(p.name.split("-")[0] for p in folder.glob("*.jsonl"))
    assert files == ["controller", "gw0"], files  # -p reaches the xdist worker
    result = timeline.analyse(folder)
    worker = next(v for k, v in result.items() if k.startswith("gw0"))
    assert worker["items"] == 2
    assert worker["start_to_configure"] >= 0 and worker["busy"] >= 0
    assert worker["wall"] >= worker["busy"]
    assert "gw0" in timeline.format_analysis(result)
