"""Golden tests up to the Lean toolchain boundary (Lean never runs here).

For every bundled VERINA task and every check kind, the exact Lean file the
adapter hands to the ``lean`` executor for the reference answer is compared
with a file under ``tests/verina_golden/``, and the exact sandboxed command
(``lean --json check.lean``, files, read-only paths, environment, limits) is
checked.  Regenerate the golden files after an intended change with
``SPECBENCH_REGOLD=1 pytest tests/test_verina_golden.py`` and review the diff.
"""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from pytest_specbench.benchmarks.verina.adapter import ADAPTER, VerinaBenchmark
from pytest_specbench.benchmarks.verina.answers import parse_answer
from pytest_specbench.benchmarks.verina.kinds import KINDS
from pytest_specbench.benchmarks.verina.loader import load_tasks
from pytest_specbench.execution import lean as lean_exec
from pytest_specbench.execution.protocol import CommandJob, Environment, Prepared

BUNDLED = Path(__file__).resolve().parents[1] / "benchmarks" / "verina"
GOLDEN = Path(__file__).resolve().parent / "verina_golden"
TASKS = [t for t in load_tasks(BUNDLED) if not t.fewshot]


class Options:
    ks = [1]

    def __init__(self, **values):
        self.values = values

    def option(self, name):
        return self.values.get(name)


def _files(vt, kind_name):
    """(name, Lean text) of every file the reference answer's checks produce (pass 1 for specs)."""
    kind = KINDS[kind_name]
    opts = Options(verina_task=kind_name)
    from pytest_specbench.benchmarks.verina import prompts
    fields = parse_answer(prompts.answer_text(prompts.reference_fields(vt, kind)), kind.fields)
    bench = VerinaBenchmark()
    out = []
    if "code" in kind.checks:
        out.append(("code", bench.code_file(vt, kind, fields, opts).text))
    if any(c.endswith(("_sound", "_complete")) for c in kind.checks):
        out.append(("spec", bench.spec_files(vt, kind, fields, opts).text))
        undecided = {c.key.rsplit(":", 1)[0]: "undecidable" for c in bench.spec_files(vt, kind, fields, opts).cases}
        out.append(("spec_plausible", bench.spec_files(vt, kind, fields, opts, undecided).text))
    if "proof" in kind.checks:
        out.append(("proof", bench.proof_file(vt, kind, fields, opts).text))
    return out


CASES = [(vt, kind) for vt in TASKS for kind in KINDS]


@pytest.mark.parametrize("vt,kind", CASES, ids=[f"{vt.task_id}-{kind}" for vt, kind in CASES])
def test_lean_files_match_golden(vt, kind):
    # With SPECBENCH_REGOLD a file that differs (or is missing) is rewritten and the test
    # skips naming it, so a regolding run never reports a pass it did not check.
    rewritten = []
    for name, text in _files(vt, kind):
        path = GOLDEN / f"{vt.task_id}.{kind}.{name}.lean"
        if path.is_file() and path.read_text(encoding="utf-8") == text:
            continue
        if os.environ.get("SPECBENCH_REGOLD"):
            path.write_text(text, encoding="utf-8")
            rewritten.append(path.name)
            continue
        assert path.is_file(), f"{path} missing: run with SPECBENCH_REGOLD=1"
        assert text == path.read_text(encoding="utf-8"), f"{path.name} differs from the golden file"
    if rewritten:
        pytest.skip(f"SPECBENCH_REGOLD: rewrote {', '.join(rewritten)}; review the diff")


def test_every_golden_file_is_produced_by_a_case():
    """A golden file no case produces any more (a renamed kind or task) is stale, not a check."""
    produced = {f"{vt.task_id}.{kind}.{name}.lean" for vt, kind in CASES for name, _ in _files(vt, kind)}
    assert {p.name for p in GOLDEN.glob("*.lean")} == produced


def test_golden_files_have_the_documented_shape():
    """Every check command is bounded by maxHeartbeats and followed by its sentinel; the proof file asks
    ``#print axioms`` of the spec theorem; plausible calls carry the budget and seed."""
    code = (GOLDEN / "bundled_div.codegen.code.lean").read_text(encoding="utf-8")
    # every #guard, and the post-elaboration audit before them (issue #43)
    assert code.count("set_option maxHeartbeats 200000 in") == code.count("#guard ") + 1 >= 2
    assert code.index("specbench-audit:") < code.index("#guard ")
    assert code.count('#print "specbench:') >= code.count("#guard ")
    proof = (GOLDEN / "bundled_div.proofgen.proof.lean").read_text(encoding="utf-8")
    assert "#print axioms " in proof and "_spec_satisfied" in proof
    plaus = (GOLDEN / "bundled_div.specgen.spec_plausible.lean").read_text(encoding="utf-8")
    assert "plausible" in plaus and "1000" in plaus and "42" in plaus
    spec = (GOLDEN / "bundled_div.specgen.spec.lean").read_text(encoding="utf-8")
    assert "#guard decide (" in spec


def test_command_line_and_limits_of_a_lean_job(tmp_path):
    """The exact sandboxed job: ``lean --json check.lean`` with the project and toolchain read-only,
    LEAN_PATH from ``lake env``, CPU limits scaled by the number of commands (not wall time)."""
    ex = lean_exec.make(Options(), ())
    prepared = Prepared(env=Environment(kind="lean-project", key="k", spec={"project": str(tmp_path)}),
                        readonly=(tmp_path, Path("/opt/elan/toolchains/v4.18.0")),
                        executables={"lean": "/opt/elan/toolchains/v4.18.0/bin/lean"},
                        info={"LEAN_PATH": "/p/.lake/build/lib:/p/.lake/packages/mathlib/.lake/build/lib"})
    job = ex.command_job(prepared, lean_exec.LeanJob("#eval 1\n", commands=3))
    assert isinstance(job, CommandJob)
    assert job.argv == ("/opt/elan/toolchains/v4.18.0/bin/lean", "--json", "check.lean")
    assert job.files == {"check.lean": b"#eval 1\n"}
    assert job.readonly == (tmp_path, Path("/opt/elan/toolchains/v4.18.0"))
    assert job.env["LEAN_PATH"].startswith("/p/.lake/build/lib")
    assert job.cpu_seconds == 120.0 + 3 * 20.0 and job.wall_seconds == job.cpu_seconds * 4
    assert job.memory_mb == 16384 and job.output_bytes == 8 << 20 and job.processes == 64


def test_lean_executor_runs_through_the_command_executor(tmp_path):
    """The Lean job goes to the ``command`` executor (the sandbox) with the prepared environment;
    its result is cached by content (a second run of the same file does not execute)."""
    from pytest_specbench.execution.protocol import CommandResult

    class Recorder:
        def __init__(self):
            self.jobs = []

        def run(self, prepared, job):
            self.jobs.append((prepared, job))
            return CommandResult(exit_code=0, stdout='{"severity":"information","data":"ok"}')

    opts = Options()
    opts.state_dir = tmp_path
    ex = lean_exec.make(opts, ())
    ex._command = rec = Recorder()
    prepared = Prepared(env=Environment(kind="lean-project", key="k", spec={}), readonly=(tmp_path,),
                        executables={"lean": "/x/bin/lean"}, info={"LEAN_PATH": ""})
    first = ex.run(prepared, lean_exec.LeanJob("#eval 1\n"))
    second = ex.run(prepared, lean_exec.LeanJob("#eval 1\n"))
    assert len(rec.jobs) == 1 and rec.jobs[0][0] is prepared
    assert first.stdout == second.stdout and first.exit_code == second.exit_code == 0


def test_damaged_cache_entry_is_checked_again(tmp_path):
    from pytest_specbench.execution.protocol import CommandResult

    class Counter:
        runs = 0

        def run(self, prepared, job):
            Counter.runs += 1
            return CommandResult(exit_code=0, stdout="")

    opts = Options()
    opts.state_dir = tmp_path
    ex = lean_exec.make(opts, ())
    ex._command = Counter()
    prepared = Prepared(env=Environment(kind="lean-project", key="k", spec={}), executables={"lean": "/x/lean"})
    job = lean_exec.LeanJob("#eval 2\n")
    ex.run(prepared, job)
    ex._cache_path(prepared, job).write_text("{half", encoding="utf-8")
    ex.run(prepared, job)
    ex.run(prepared, job)
    assert Counter.runs == 2
