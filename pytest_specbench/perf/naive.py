"""Naive baselines of the families' perf rows (perf/families.py), run the way upstream runs them.

    python -m pytest_specbench.perf.naive speceval --root DIR/specgenbench --programs A,B --categories original,... --out F
    python -m pytest_specbench.perf.naive postcond --state STATE [--data DIR] [--repos DIR] --tasks T1,T2 --out F
    python -m pytest_specbench.perf.naive cife --data-file F --answers F --url URL --model NAME --out F

Run as a child of families.measure(): this driver process is the harness side,
its children (javac, java, the repository's pytest) the toolchain; for CIFE the
judge server is the toolchain.

* speceval: SpecEval checks specs with OpenJML, one tool process per program
  (per perturbed variant).  OpenJML cannot be installed here; the equivalent with
  our runtime checking is one ``javac`` and one ``java`` process per (program,
  category): the ground truth (perturbed for a perturbation) translated by our JML
  translator, compiled by a plain javac (no warm javac server, no class cache:
  a fresh cache folder per check) and run on the program's daikon calls in one
  plain JVM (no sandbox).  The JML runtime itself is compiled once.  Only the
  ground truth is checked: less than the plugin's run does (its mutants and
  generated specs), so the plugin / naive ratio is in the naive baseline's favour.
* postcond: upstream (zhang-ge-hao/postcond-bench) writes the postcondition into
  the repository and runs its pytest once per (sample, program): here one plain
  ``python -m pytest --tb=short -q COVER_TESTS`` of the repository's venv per
  original and per mutant, in a scratch copy of the checkout (copied once per
  task; the target file rewritten for each run), no sandbox, no runner plugin;
  verdict read from the text as upstream does (``ViolationError`` in the output:
  killed; exit status 0: passed), plus icontract's "Failed to recompute" error,
  which replaces the ViolationError when icontract cannot render a violated
  condition's message (nested lambdas; verdict.py counts it as a violation too).
* cife: upstream's llm_judge (IBM/CIFE) asks per answer one adherence question
  (all constraints of the task) and one correctness question, with no cache and
  no rule checks; here in that order, one request at a time (upstream's thread
  pool gains nothing against a server that answers one request at a time), with
  upstream's prompts (our ``--cife-prompts=upstream`` text).
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def speceval(args) -> dict:
    from pytest_specbench.benchmarks.speceval.perturb import perturb
    from pytest_specbench.benchmarks.speceval.tasks import load_programs
    from pytest_specbench.execution.jvm import JvmExecutor
    from pytest_specbench.jml import JmlChecker, TranslationError, driver_from_daikon, translate
    from pytest_specbench.jml import runners

    class OneShotJvm(JvmExecutor):
        """javac as one plain process per compilation (no warm server)."""

        def compile(self, sources, classpath=(), timeout=120.0, use_server=True, trusted=False):
            return super().compile(sources, classpath, timeout=timeout, use_server=False, trusted=trusted)

        def _javac_start(self, sources):  # the javac launcher, not the plugin's warm javac's archive
            return (self.javac,), None

    wanted = set(args.programs.split(",")) if args.programs else None
    programs = [p for p in load_programs(Path(args.root)) if wanted is None or p.name in wanted]
    scratch = Path(tempfile.mkdtemp(prefix="naive-speceval-"))
    runtime_jvm = OneShotJvm(scratch / "runtime", isolate=False)
    runtime = runners.runtime_classes(runtime_jvm)
    verdicts: dict[str, int] = {}
    checks = 0
    try:
        for prog in programs:
            daikon = prog.daikon.read_text(encoding="utf-8") if prog.daikon else None
            for cat in args.categories.split(","):
                src = perturb(prog.source, cat, 0).source
                checks += 1
                jvm = OneShotJvm(scratch / f"c{checks}", isolate=False)  # a fresh class cache: javac every time
                checker = JmlChecker(jvm)
                checker._runtime = runtime
                try:
                    driver = driver_from_daikon(daikon or "class X {}", translate(src))
                    verdict = checker.check(src, driver).verdict
                except TranslationError:
                    verdict = "syntax_error"
                verdicts[verdict] = verdicts.get(verdict, 0) + 1
                shutil.rmtree(scratch / f"c{checks}", ignore_errors=True)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return {"checks": checks, "verdicts": verdicts}


def postcond(args) -> dict:
    from pytest_specbench.benchmarks.postcond import repos, source
    from pytest_specbench.benchmarks.postcond.adapter import _task_folder, load_tasks
    from pytest_specbench.benchmarks.postcond.execute import environment_for, mutant_programs, tests_to_run
    from pytest_specbench.data.bundled import bundled_suite

    root = _task_folder(Path(args.data)) if args.data else bundled_suite("postcond") / "tasks"
    tasks, _ = load_tasks(root)
    wanted = set(args.tasks.split(",")) if args.tasks else None
    state = Path(args.state).absolute()  # not resolve(): the venv's bin/python is a link
    verdicts: dict[str, int] = {}
    runs = 0
    skipped = []
    examples: list[str] = []
    for task in tasks:
        data = dict(task.data)
        if wanted is not None and task.task_id not in wanted:
            continue
        if data["repo"].get("language", "python") != "python":
            skipped.append(task.task_id)
            continue
        checkout = repos.checkout_for(data, task.source, Path(args.repos) if args.repos else None,
                                      state / "cache" / "postcond" / "checkouts")
        env_spec = environment_for(data, checkout)
        # No bytecode written: each program is written over the same file of one copy, and a
        # mutant of the same size written within the same second as the program before it
        # would run that program's cached bytecode (a pyc is checked by whole-second mtime and
        # size): on a quiet machine 3 of the slice's 100 mutants "passed" that way.
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C.UTF-8", "PYTHONDONTWRITEBYTECODE": "1"}
        if env_spec.kind == "interpreter":
            python = sys.executable
            env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"  # as the plugin runs bundled tasks
        else:
            venvs = sorted(state.glob(f"**/*{env_spec.key}*/bin/python"))
            if not venvs:
                sys.exit(f"naive postcond: no venv {env_spec.key} under {state}: run the plugin once first")
            python = str(venvs[0])
        rel = data["file"].removeprefix("./")
        with tempfile.TemporaryDirectory(prefix="naive-postcond-") as tmp:
            copy = Path(tmp) / "repo"
            shutil.copytree(checkout, copy, symlinks=True)
            original = (checkout / rel).read_text(encoding="utf-8")
            programs = [("original", original)] + [(p.label, p.file_text) for p in mutant_programs(data, original)]
            tests = tests_to_run(data)
            for label, text in programs:
                injected = source.inject(text, data["name"], data["start_line"], data["end_line"],
                                         data["ref_postcond"], "fixed")
                # upstream's way: the decorators in the test process itself (no pyspec guard)
                (copy / rel).write_text(injected.text.replace(source.HEAD, "import icontract", 1), encoding="utf-8")
                runs += 1
                try:
                    r = subprocess.run([python, "-m", "pytest", "--tb=short", "-q", "-p", "no:cacheprovider", *tests],
                                       cwd=copy, env={**env, "PYTHONPATH": str(copy)}, capture_output=True, text=True,
                                       timeout=30)
                    out = r.stdout + r.stderr
                    # A violated condition whose message icontract cannot render raises RuntimeError
                    # "Failed to recompute ..." from _create_violation_error instead (verdict.py): a violation.
                    violation = "ViolationError" in out or "Failed to recompute" in out
                    verdict = "icontract_fail" if violation else "passed" if r.returncode == 0 else "failed"
                except subprocess.TimeoutExpired:
                    verdict = "timeout"
                key = f"{'original' if label == 'original' else 'mutant'} {verdict}"
                unexpected = verdict != ("passed" if label == "original" else "icontract_fail")
                if unexpected and len(examples) < 5:
                    tail = [ln for ln in out.splitlines() if ln.startswith("E ")][:2] or out.strip().splitlines()[-1:]
                    examples.append(f"{task.task_id} {label}: {' | '.join(tail)[:300]}")
                verdicts[key] = verdicts.get(key, 0) + 1
    return {"runs": runs, "verdicts": verdicts, "skipped (not python)": skipped,
            "unexpected (an original not passing, a mutant not killed)": examples}


def cife(args) -> dict:
    from openai import OpenAI

    from pytest_specbench.benchmarks.cife.data import read_tasks
    from pytest_specbench.benchmarks.cife.prompts import adherence_prompt, correctness_prompt

    answers = {}
    with open(args.answers, encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                row = json.loads(line)
                answers[str(row["task_id"])] = row["solution"]
    client = OpenAI(base_url=args.url, api_key=os.environ.get("OPENAI_API_KEY", "local"), max_retries=0,
                    timeout=600)
    requests = 0
    tokens = 0
    for _, row, constraints in read_tasks(Path(args.data_file)):
        task_id = str(row["id"])
        if task_id not in answers:
            continue
        raw = answers[task_id]  # upstream shows the judge the raw answer
        for prompt in (adherence_prompt(row["instruction"], constraints, raw, "upstream"),
                       correctness_prompt(row["instruction"], raw, "upstream")):
            params = dict(prompt.parameters)
            params["max_tokens"] = args.max_tokens  # as the plugin's run (--judge-model-max-tokens)
            reply = client.chat.completions.create(
                model=args.model, messages=[{"role": m.role, "content": m.content} for m in prompt.messages], **params)
            requests += 1
            tokens += getattr(reply.usage, "completion_tokens", 0) or 0
    return {"requests": requests, "completion_tokens": tokens}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="family", required=True)
    s = sub.add_parser("speceval")
    s.add_argument("--root", required=True)
    s.add_argument("--programs", default="")
    s.add_argument("--categories", default="original")
    p = sub.add_parser("postcond")
    p.add_argument("--state", required=True)
    p.add_argument("--data")
    p.add_argument("--repos")
    p.add_argument("--tasks", default="")
    c = sub.add_parser("cife")
    c.add_argument("--data-file", required=True)
    c.add_argument("--answers", required=True)
    c.add_argument("--url", required=True)
    c.add_argument("--model", required=True)
    c.add_argument("--max-tokens", type=int, default=384)
    for q in (s, p, c):
        q.add_argument("--out", required=True)
    args = ap.parse_args()
    t0 = time.perf_counter()
    result = {"speceval": speceval, "postcond": postcond, "cife": cife}[args.family](args)
    result["wall_s"] = round(time.perf_counter() - t0, 2)
    Path(args.out).write_text(json.dumps(result))
    print(json.dumps(result))


if __name__ == "__main__":
    main()
