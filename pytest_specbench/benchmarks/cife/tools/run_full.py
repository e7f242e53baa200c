"""The full CIFE run against a local scripted judge, killed and resumed.

    python -m pytest_specbench.benchmarks.cife.tools.run_full --data ../shared/datasets [--kill-after 20] [-n 2]

1. writes a replay file of answers for all 1,000 tasks (a stub program per task:
   the tasks' own starter code where BigCodeBench gives one; the figures are
   about the harness, not a model);
2. starts tests/openai_server.py's server answering with the scripted judge
   (:mod:`pytest_specbench.benchmarks.cife.scripted_judge`, 5% garbage first
   answers so retries happen);
3. runs ``pytest --specbench=cife ... -n N``, SIGKILLs the whole process group
   after ``--kill-after`` seconds, resumes with ``--specbench-resume``;
4. runs the same thing once more uninterrupted into a fresh state folder, and
   prints: judge calls of each phase, whether the resumed report's metrics equal
   the uninterrupted one's, wall times.

``--judge-flags`` is how the judge is pointed at the server (a format string
with ``{url}``); its default assumes the plugin's ``--judge-model`` and
``--judge-model-base-url``.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# Run from the checkout: the judge server is the test suite's (tests/openai_server.py).
ROOT = Path.cwd()
sys.path.insert(0, str(ROOT / "tests"))


def stub_answer(row: dict) -> str:
    m = re.search(r"starting\s+with:?\s*```(?:python)?[ \t]*\n(.*?)```", row["instruction"], re.S)
    body = m.group(1).rstrip() + "\n    return None\n" if m else "def solve(x):\n    \"\"\"Solve the task.\"\"\"\n    return x\n"
    return f"Here is the code:\n```python\n{body}```\n"


def run(args: list[str], env: dict, cwd: Path, kill_after: float | None = None) -> tuple[float, bool]:
    t0 = time.time()
    proc = subprocess.Popen([sys.executable, "-m", "pytest", *args], cwd=cwd, env=env, start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        proc.wait(timeout=kill_after)
        return time.time() - t0, False
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        return time.time() - t0, True


def main() -> int:
    from openai_server import StubOpenAIServer

    from pytest_specbench.benchmarks.cife.scripted_judge import answer

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, required=True, help="data root with cife/benchmark_data.jsonl")
    ap.add_argument("-n", default="2")
    ap.add_argument("--kill-after", type=float, default=20.0)
    ap.add_argument("--judge-flags", default="--judge-model=openai:judge --judge-model-base-url={url}")
    a = ap.parse_args()
    data = a.data.resolve()
    work = Path(tempfile.mkdtemp(prefix="cife-full-"))
    rows = [json.loads(l) for l in (data / "cife" / "benchmark_data.jsonl").read_text().splitlines()]
    (work / "answers.jsonl").write_text("".join(json.dumps({"task_id": str(r["id"]), "solution": stub_answer(r)}) + "\n"
                                                for r in rows))
    scripted = lambda req: answer(req["messages"], garbage=0.05, satisfied=0.85, correct=0.6)  # noqa: E731
    with StubOpenAIServer(answer=scripted, known_models=("judge",)) as server:
        base = ["--specbench=cife", f"--specbench-data={data}", f"--model=replay:{work / 'answers.jsonl'}",
                *shlex.split(a.judge_flags.format(url=server.url)), "-n", a.n, "-p", "no:cacheprovider",
                "--specbench-result-cache=off", "-q", f"--rootdir={ROOT}", "-c", str(ROOT / "pyproject.toml")]
        env = dict(os.environ, SPECBENCH_DIR=str(work / "state"))
        t_kill, killed = run([*base, "--specbench-report=killed.json"], env, work, a.kill_after)
        calls_first = server.chat_count
        t_resume, _ = run([*base, "--specbench-resume", "--specbench-report=resumed.json",
                                   "--specbench-html=resumed.html"], env, work)
        calls_resume = server.chat_count - calls_first
        env2 = dict(os.environ, SPECBENCH_DIR=str(work / "state2"))
        t_full, _ = run([*base, "--specbench-report=full.json"], env2, work)
        calls_full = server.chat_count - calls_first - calls_resume
        asked = [json.dumps(r["body"].get("messages"), sort_keys=True) for r in server.chat_requests()[:calls_first + calls_resume]]
        repeated = len(asked) - len(set(asked))
    resumed = json.loads((work / "resumed.json").read_text())["benchmarks"]["cife"]["metrics"]
    full = json.loads((work / "full.json").read_text())["benchmarks"]["cife"]["metrics"]
    print(f"killed after {t_kill:.1f}s (SIGKILL: {killed}): {calls_first} judge calls")
    print(f"resumed run: {t_resume:.1f}s, {calls_resume} judge calls")
    print(f"uninterrupted run in a fresh state folder: {t_full:.1f}s, {calls_full} judge calls "
          f"(the judge's answers are cached by question in the model cache, shared by state folders: 0 means none re-asked)")
    print(f"judge calls killed+resumed = {calls_first + calls_resume} vs uninterrupted {calls_full}; questions asked "
          f"twice across kill and resume: {repeated} (at most the calls in flight at the kill); "
          f"metrics identical: {resumed == full}")
    print(f"HTML report of the resumed run: {work / 'resumed.html'}")
    print(f"csr {full.get('csr')}, ssr {full.get('ssr')}, c2a {full.get('c2a')}, kappa {full.get('rule_judge_kappa')}")
    return 0 if resumed == full and repeated <= int(a.n) else 1


if __name__ == "__main__":
    sys.exit(main())
