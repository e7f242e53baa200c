"""VERINA through pytest and through run_check with a fake Lean.

Lean never runs here.  ``FakeLean`` answers with hand-written ``lean --json``
messages (sentinels for every command, plus chosen errors), to test the path
from an answer to a verdict; it says nothing about what real Lean would report.
The plugin runs are in this process (``runpytest_inprocess``: nothing here depends on a
Python of its own, and a subprocess each cost an interpreter start and the plugin's
imports, most of each run), but the one under xdist.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from pytest_specbench.benchmarks.verina.adapter import ADAPTER
from pytest_specbench.execution.protocol import CommandResult
from fakes import fake_context
from shared_data import SHARED_DATA

DATA = SHARED_DATA


def test_reference_run_skips_every_lean_item_with_the_hint(pytester, monkeypatch):
    monkeypatch.delenv("SPECBENCH_LEAN_PROJECT", raising=False)
    result = pytester.runpytest_inprocess("--specbench=verina", "--model=reference", "-rs", "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.NO_TESTS_COLLECTED  # every item skipped: nothing evaluated (issue 26)
    result.assert_outcomes(skipped=4)  # four scored bundled tasks, codegen by default
    assert re.search(r"SKIPPED \[4\] .*(Lean 4 not found|no VERINA Lean project).*--verina-lean-project=DIR",
                     result.stdout.str())


def test_every_kind_skips_and_bad_option_is_one_line(pytester, monkeypatch):
    monkeypatch.delenv("SPECBENCH_LEAN_PROJECT", raising=False)
    result = pytester.runpytest_inprocess("--specbench=verina", "--model=reference", "--verina-task=code_spec_proof",
                                           "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.NO_TESTS_COLLECTED  # every item skipped: nothing evaluated (issue 26)
    result.assert_outcomes(skipped=4 * 6)
    bad = pytester.runpytest_inprocess("--specbench=verina", "--model=reference", "--verina-task=nope",
                                        "-p", "no:cacheprovider")
    assert bad.ret != 0 and "--verina-task: expected one of" in bad.stderr.str() + bad.stdout.str()


@pytest.mark.realdata
def test_reference_on_real_data_skips_and_exits_5(pytester, monkeypatch):
    if not (DATA / "verina").is_dir():
        pytest.skip("VERINA data not found")
    monkeypatch.delenv("SPECBENCH_LEAN_PROJECT", raising=False)
    # codegen (the default): one item per task; every check kind's skip is the bundled test's above
    result = pytester.runpytest_inprocess("--specbench=verina", f"--specbench-data={DATA}", "--model=reference",
                                           "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.NO_TESTS_COLLECTED  # every item skipped: nothing evaluated (issue 26)
    result.assert_outcomes(skipped=187)


# ---------------------------------------------------------------- run_check with a fake Lean
class FakeLean:
    """Answers each file with its sentinels; ``errors`` maps a case-key pattern to a message."""

    kind, version = "lean", "fake"

    def __init__(self, errors=None, stop_after=None):
        self.errors = errors or {}
        self.stop_after = stop_after
        self.files = []

    def available(self):
        return None

    def run(self, prepared, job):
        self.files.append(job.text)
        lines = job.text.split("\n")
        out, n = [], 0
        for i, line in enumerate(lines, 1):
            m = re.match(r'#print "(specbench:[0-9a-f]+:(.*))"$', line)
            if not m:
                continue
            key = m.group(2)
            if self.stop_after is not None and n > self.stop_after:
                return CommandResult(exit_code=None, timed_out=True, killed="CPU time limit", stdout="\n".join(out))
            n += 0 if key.startswith("audit:") else 1  # the audit's cases come first in every file
            if key == "audit:environment":  # the post-elaboration audit's one line (clean unless told)
                out.append(json.dumps({"pos": {"line": i - 1}, "severity": "information",
                                       "data": self.errors.get("@audit", "specbench-audit: ")}))
            if key.startswith("audit:axioms:"):
                name = key.split(":", 2)[2]
                out.append(json.dumps({"pos": {"line": i - 1}, "severity": "information",
                                       "data": self.errors.get("@audit_axioms", f"'{name}' depends on axioms: [propext]")
                                       .replace("NAME", name)}))
            for pattern, text in self.errors.items():
                if re.fullmatch(pattern, key):
                    out.append(json.dumps({"pos": {"line": i - 1}, "severity": "error" if "Unable" not in text
                                           else "warning", "data": text}))
            if key == "axioms":
                name = re.search(r"#print axioms (\S+)", lines[i - 2]).group(1)
                out.append(json.dumps({"pos": {"line": i - 1}, "severity": "information",
                                       "data": self.errors.get("@axioms", f"'{name}' depends on axioms: [propext]")}))
            out.append(json.dumps({"pos": {"line": i}, "severity": "information", "data": m.group(1)}))
        return CommandResult(exit_code=0, stdout="\n".join(out))


def Ctx(lean, **options):
    return fake_context(executors={"lean": lean} if lean is not None else None, **options)


def _task(kind, task_id="bundled_div", **options):
    settings = Ctx(None, verina_task=kind, **options).settings
    tasks = {t.task_id: t for t in ADAPTER.load(None, settings).tasks}
    return tasks[task_id]


def test_reference_code_passes_with_clean_diagnostics():
    task = _task("codegen")
    lean = FakeLean()
    result = ADAPTER.run_check("code", task, ADAPTER.reference(task, "code"), Ctx(lean, verina_task="codegen"))
    assert result.passed and result.details["cases"] == 3 and len(lean.files) == 1


def test_failed_guard_and_timeout_fail_with_reasons_upstream_reading_passes_them():
    task = _task("codegen")
    answer = ADAPTER.reference(task, "code")
    lean = FakeLean({"code:1": "Expression\n  x\ndid not evaluate to `true`"})
    r = ADAPTER.run_check("code", task, answer, Ctx(lean, verina_task="codegen"))
    assert not r.passed and r.message.startswith("test 1 failed")
    timeout = ADAPTER.run_check("code", task, answer, Ctx(FakeLean(stop_after=1), verina_task="codegen"))
    assert not timeout.passed and "not run" in timeout.message and "CPU time limit" in timeout.message
    upstream = ADAPTER.run_check("code", task, answer, Ctx(FakeLean(stop_after=1), verina_task="codegen",
                                                         verina_unfinished_tests="pass"))
    assert upstream.passed


def test_garbage_answer_fails_without_running_lean():
    task = _task("codegen")
    lean = FakeLean()
    r = ADAPTER.run_check("code", task, "Sure! Here is the code: a / b", Ctx(lean, verina_task="codegen"))
    assert not r.passed and r.message.startswith("unreadable answer") and not lean.files


def test_spec_check_decide_then_plausible_and_one_file_per_pass():
    task = _task("specgen")
    answer = ADAPTER.reference(task, "precond_sound")
    lean = FakeLean({r"postcond_sound:0\.0:decide": "failed to synthesize\n  Decidable (∀ x, x = x)",
                     r"postcond_sound:0\.0:plausible": "Unable to find a counter-example",
                     r"postcond_sound:0\.0:plausible_neg": "Unable to find a counter-example"})
    ctx = Ctx(lean, verina_task="specgen")
    sound = ADAPTER.run_check("postcond_sound", task, answer, ctx)
    assert sound.passed and sound.details["outcomes"]["0.0"] == "might_hold"
    complete = ADAPTER.run_check("precond_complete", task, answer, ctx)
    assert complete.passed and complete.details["cases"] == 2
    assert len(lean.files) == 4 and lean.files[0] == lean.files[2]  # the same files: the executor's cache hits them


def test_proof_axioms_rule_and_upstream_substring_rule():
    task = _task("proofgen", "bundled_max")
    answer = ADAPTER.reference(task, "proof")
    ok = ADAPTER.run_check("proof", task, answer, Ctx(FakeLean(), verina_task="proofgen"))
    assert ok.passed and ok.details["axioms"] == ["propext"]
    sneaky = FakeLean({"@axioms": "'maxOfTwo_spec_satisfied' depends on axioms: [propext, sorryAx]"})
    r = ADAPTER.run_check("proof", task, answer, Ctx(sneaky, verina_task="proofgen"))
    assert not r.passed and "sorryAx" in r.message
    upstream = ADAPTER.run_check("proof", task, answer, Ctx(sneaky, verina_task="proofgen", verina_proof_check="substring"))
    assert upstream.passed  # upstream's substring test misses a sorry that is not in the proof text


def test_skip_path_under_xdist_is_one_summary_line_per_check_kind(pytester, monkeypatch):
    """Without Lean, a run under xdist still exits 5 (nothing evaluated) and the short summary folds the skips: one
    line per check kind (the same hint), not one line per item.  One worker (#45): the skips reach the
    controller as reports either way, and the controller folds them.  The controller in this
    process (session 21: its own Python and the plugin's import were ~0.5 CPU s); the worker is
    a Python of its own either way."""
    monkeypatch.delenv("SPECBENCH_LEAN_PROJECT", raising=False)
    result = pytester.runpytest_inprocess("--specbench=verina", "--model=reference", "--verina-task=specgen",
                                          "-n", "1", "-rs", "-p", "no:cacheprovider")
    result.stdout.fnmatch_lines(["*1 worker [[]16 items[]]*"])  # the items were skipped on it
    assert result.ret == pytest.ExitCode.NO_TESTS_COLLECTED  # every item skipped: nothing evaluated (issue 26)
    result.assert_outcomes(skipped=4 * 4)
    lines = [ln for ln in result.stdout.lines if ln.startswith("SKIPPED")]
    assert 1 <= len(lines) <= 4, lines
    assert all("--verina-lean-project=DIR" in ln for ln in lines)


def _copy_bundled(pytester):
    import shutil
    root = Path(__file__).resolve().parents[1] / "benchmarks" / "verina"
    data = pytester.path / "data" / "verina"
    shutil.copytree(root, data)
    return data


@pytest.mark.parametrize("breakage,expected", [
    (lambda d: (d / "bundled_div" / "test.json").write_text("[{\"input\": {\"a\": 1}", encoding="utf-8"),
     r"bundled_div/test.json:\d+: invalid JSON"),
    (lambda d: (d / "bundled_div" / "task.lean").write_text("-- !benchmark @start code\nx\n", encoding="utf-8"),
     r"bundled_div/task.lean:1: section 'code' is never closed"),
    (lambda d: (d / "bundled_div" / "task.json").write_text("{}", encoding="utf-8"),
     r"bundled_div/task.json: 'signature' needs"),
])
def test_malformed_upstream_task_is_one_line_naming_the_file(pytester, monkeypatch, breakage, expected):
    monkeypatch.delenv("SPECBENCH_LEAN_PROJECT", raising=False)
    data = _copy_bundled(pytester)
    breakage(data)
    result = pytester.runpytest_inprocess("--specbench=verina", f"--specbench-data={data.parent}",
                                           "--model=reference", "-p", "no:cacheprovider")
    out = result.stdout.str() + result.stderr.str()
    assert result.ret != 0 and re.search(expected, out), out[-2000:]
    assert "Traceback" not in out


@pytest.mark.parametrize("flag,value", [("--verina-plausible-budget", "0"), ("--verina-heartbeats", "many"),
                                        ("--verina-upper-bound", "both")])
def test_bad_option_value_is_one_line_naming_the_option(pytester, flag, value):
    result = pytester.runpytest_inprocess("--specbench=verina", "--model=reference", f"{flag}={value}",
                                           "-p", "no:cacheprovider")
    out = result.stdout.str() + result.stderr.str()
    assert result.ret != 0 and flag in out and "Traceback" not in out


# ---------------------------------------------------------------- the post-elaboration audit (issue #43)
# Lean's documented '#print axioms' forms, and the audit command's own line; the
# messages are hand-written (Lean never runs here).
def test_audit_is_in_every_answer_file_before_the_checks_and_names_the_answers_theorems():
    from pytest_specbench.benchmarks.verina.audit import declared_theorems

    fields = {"code_aux": "-- theorem inComment : True := trivial\ntheorem helper : 1 = 1 := rfl\n"
                          "private lemma helper₂ (n : Nat) : n = n := rfl\ndef s := \"theorem inString\"",
              "code": "xs.length"}
    assert declared_theorems(fields) == ["helper", "helper₂"]
    task = _task("codegen")
    lean = FakeLean()
    answer = "[[ ## code_aux ## ]]\n" + fields["code_aux"] + "\n[[ ## code ## ]]\na / b"
    result = ADAPTER.run_check("code", task, answer, Ctx(lean, verina_task="codegen"))
    assert result.passed, result.message
    text = lean.files[0]
    assert text.index("#print axioms helper\n") < text.index("#print axioms helper₂") < text.index(
        "specbench-audit:") < text.index("#guard ")
    off = FakeLean()
    ADAPTER.run_check("code", task, answer, Ctx(off, verina_task="codegen", verina_audit="off"))
    assert "specbench-audit" not in off.files[0] and "#print axioms" not in off.files[0]


@pytest.mark.parametrize("kind,check", [("codegen", "code"), ("specgen", "precond_sound"), ("proofgen", "proof")])
@pytest.mark.parametrize("errors,expected", [
    ({"@audit": "specbench-audit: instance instBEqNat; extern cheat"}, "audit: the answer added instance instBEqNat"),
    ({"@audit": "specbench-audit: f uses IO.Process.exit"}, "f uses IO.Process.exit"),
    ({"@audit": "an unexpected line"}, "the environment audit did not report"),
    ({r"audit:environment": "unknown identifier 'Lean.isExtern'"}, "environment audit failed (unknown identifier"),
    ({"@audit_axioms": "'NAME' depends on axioms: [propext, sorryAx]"}, "'helper' depends on sorryAx"),
    ({"@audit_axioms": "'NAME' depends on axioms:\n  [propext,\n   Classical.choice, cheat]"}, "depends on cheat"),
])
def test_audit_findings_fail_the_sample_with_one_line(kind, check, errors, expected):
    task = _task(kind, "bundled_max")
    aux = {"codegen": "code_aux", "specgen": "precond_aux", "proofgen": "proof_aux"}[kind]
    fields = dict(__import__("pytest_specbench.benchmarks.verina.prompts", fromlist=["x"]).reference_fields(
        ADAPTER.task(task), ADAPTER.kind(Ctx(None, verina_task=kind))))
    fields[aux] = (fields.get(aux, "") + "\ntheorem helper : True := trivial").strip("\n")
    from pytest_specbench.benchmarks.verina.prompts import answer_text
    result = ADAPTER.run_check(check, task, answer_text(fields), Ctx(FakeLean(errors), verina_task=kind))
    assert not result.passed and result.details["outcome"] == "audit", result
    assert expected in result.message and "\n" not in result.message


def test_clean_audit_forms_pass():
    """'does not depend on any axioms', the standard three, and an empty findings line are clean."""
    task = _task("codegen", "bundled_max")
    answer = "[[ ## code_aux ## ]]\ntheorem helper : True := trivial\n[[ ## code ## ]]\nif a ≥ b then a else b"
    for axioms in ("'NAME' does not depend on any axioms",
                   "'NAME' depends on axioms: [propext, Classical.choice, Quot.sound]"):
        result = ADAPTER.run_check("code", task, answer, Ctx(FakeLean({"@audit_axioms": axioms}), verina_task="codegen"))
        assert result.passed, result.message
