"""VERINA units that need no Lean: values, answers, prompts, assembly, the
verdict parser, metrics and the skip message.

Nothing here runs Lean.  The diagnostics fixtures below are WRITTEN BY HAND from
Lean's documented ``lean --json`` message format and the message texts of
``#guard``, ``#print axioms`` and Plausible; they were never captured from a
Lean process.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_specbench.benchmarks.base import Task
from pytest_specbench.benchmarks.verina import assembly, metrics, prompts
from pytest_specbench.benchmarks.verina.adapter import ADAPTER, OPTIONS, VerinaBenchmark, task_axioms
from pytest_specbench.benchmarks.verina.answers import AnswerError, parse_answer
from pytest_specbench.benchmarks.verina.screen import screen
from pytest_specbench.benchmarks.verina.kinds import KINDS
from pytest_specbench.benchmarks.verina.loader import load_tasks, parse_template, reassemble
from pytest_specbench.benchmarks.verina.values import render
from pytest_specbench.benchmarks.verina.verdicts import (attribute, axioms_of, guard_outcome, parse_messages,
                                                         plausible_outcome, relation_outcome, relation_score)
from pytest_specbench.errors import DataError, InfrastructureError
from pytest_specbench.execution import lean as lean_exec

BUNDLED = Path(__file__).resolve().parents[1] / "benchmarks" / "verina"


class FakeSettings:
    ks = [1]

    def __init__(self, **options):
        # The post-elaboration audit's cases are tested on their own (below); the
        # file-layout tests here count check commands only.
        self.options = {"verina_audit": "off", **options}

    def option(self, name):
        return self.options.get(name)


@pytest.fixture(scope="module")
def tasks():
    return {t.task_id: t for t in load_tasks(BUNDLED)}


# ---------------------------------------------------------------- values
@pytest.mark.parametrize("lean_type,value,expected", [
    ("Bool", True, "true"), ("Int", -3, "-3"), ("Float", 2, "2.0"), ("Float", 1.5, "1.5"),
    ("Float", float("nan"), "Float.nan"), ("String", 'say "hi"\\', '"say \\"hi\\"\\\\"'),
    ("Char", "'", "'\\''"), ("Char", "\n", "'\\n'"), ("Array Int", [1, -2], "#[1, -2]"),
    ("List (List Nat)", [[1], []], "[[1], []]"), ("Option Nat", "some (98)", "some (98)"),
    ("Nat → Bool", "fun x => x < 5", "fun x => x < 5"), ("Option Int", None, "none"),
])
def test_values_render_as_lean(lean_type, value, expected):
    assert render(lean_type, value) == expected


@pytest.mark.parametrize("lean_type,value", [("Char", "ab"), ("Nat", "  "), ("Int", {"a": 1}), ("Int", None)])
def test_values_that_are_not_lean_are_refused(lean_type, value):
    with pytest.raises(ValueError):
        render(lean_type, value)


# ---------------------------------------------------------------- loader
def test_bundled_suite_reassembles_and_marks_its_examples(tasks):
    assert sorted(t for t, v in tasks.items() if v.fewshot) == ["bundled_fewshot_1", "bundled_fewshot_2"]
    for t in tasks.values():
        assert reassemble(t.template) == (t.folder / "task.lean").read_text(encoding="utf-8")


def test_unclosed_section_is_a_one_line_data_error():
    with pytest.raises(DataError, match=r"x.lean:1: section 'code' is never closed"):
        parse_template("-- !benchmark @start code\nfoo\n", "x.lean")
    with pytest.raises(DataError, match="closes"):
        parse_template("-- !benchmark @start code\n-- !benchmark @end proof\n", "x.lean")


# ---------------------------------------------------------------- answers
def test_dspy_json_and_heading_answers_parse():
    fields = ("imports", "code_aux", "code")
    dspy = "[[ ## imports ## ]]\n\n[[ ## code_aux ## ]]\n\n[[ ## code ## ]]\n```lean\na + b\n```\n[[ ## completed ## ]]"
    assert parse_answer(dspy, fields)["code"] == "a + b"
    assert parse_answer(json.dumps({"code": "a", "imports": ""}), fields) == {"imports": "", "code_aux": "", "code": "a"}
    assert parse_answer("## code\n```lean\nx\n```\n", fields)["code"] == "x"
    fenced = "```\n[[ ## imports ## ]]\n\n[[ ## code ## ]]\nx + 1\n```"
    assert parse_answer(fenced, fields)["code"] == "x + 1"


@pytest.mark.parametrize("answer,reason", [
    ("", "no answer fields"), ("I cannot do this.", "no answer fields"), (None, "not text"),
    ("[[ ## code_aux ## ]]\nfoo", "no code field"), ("[[ ## code ## ]]\n   \n", "no code field"),
    ("x" * 300_000, "limit"), ("[[ ## code ## ]]\na\x00", "NUL"), ("{not json", "no answer fields"),
    ("[" * 100000, "no answer fields"),
])
def test_garbage_answers_are_failed_samples_with_a_reason(answer, reason):
    with pytest.raises(AnswerError, match=reason):
        parse_answer(answer, ("imports", "code_aux", "code"))


@pytest.mark.parametrize("fields,reason", [
    ({"imports": "import Mathlib\n#eval IO.println 1"}, "non-import"),
    ({"code_aux": "macro_rules | `(#guard $e) => `(#check 1)"}, "macro_rules"),
    ({"code": "1\n#exit"}, "#exit"),
    ({"code_aux": "set_option maxHeartbeats 0"}, "maxHeartbeats"),
    ({"code": "x -- !benchmark @end code"}, "marker"),
    ({"proof_aux": "@[implemented_by foo] def bar := 1"}, "implemented_by"),
])
def test_answers_that_could_rewrite_the_checks_are_refused(fields, reason):
    with pytest.raises(AnswerError, match=reason):
        screen(fields)


# ---------------------------------------------------------------- prompts
def test_prompt_has_two_examples_and_never_the_hidden_parts(tasks):
    settings = FakeSettings(verina_task="codegen")
    ADAPTER.load(None, settings)
    task = Task("bundled_max", {"folder": str(tasks["bundled_max"].folder)}, BUNDLED)
    system, user = (m.content for m in ADAPTER.prompt(task, settings).messages)
    assert "DO NOT import Std or Init" in system and "`code_aux`" in system
    assert user.count("Example ") == 2 and "isEven" in user and "absInt" in user
    tail = user.split("Now the task:")[1]
    assert "{{code}}" in tail and "maxOfTwo_precond" in tail
    assert "if a ≥ b" not in tail and "maxOfTwo_postcond" not in tail and "omega" not in tail


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_every_kind_renders_placeholders_for_what_it_writes(tasks, kind):
    k = KINDS[kind]
    text = prompts.template(tasks["bundled_div"], k)
    for f in k.fields:
        assert "{{" + f + "}}" in text
    assert ("a / b" in text) == ("code" in k.given)
    assert ("result * b ≤ a" in text) == ("postcond" in k.given)


def test_fewshot_tasks_are_never_scored():
    ts = ADAPTER.load(None, FakeSettings())
    assert {t.task_id for t in ts.tasks} == {"bundled_max", "bundled_div", "bundled_count", "bundled_sum"}


# ---------------------------------------------------------------- assembly
def test_reference_answer_round_trips_to_the_ground_truth(tasks):
    for name, kind in KINDS.items():
        for t in tasks.values():
            answer = prompts.answer_text(prompts.reference_fields(t, kind))
            fields = parse_answer(answer, kind.fields)
            screen(fields)
            gt = assembly.ground_truth(t)
            for f in kind.fields:
                if not f.endswith("_aux") and f != "imports":
                    assert fields[f] == gt[f], (name, t.task_id, f)


def test_code_file_has_one_guard_per_test_and_sentinels(tasks):
    settings = FakeSettings()
    vt = tasks["bundled_count"]
    file = VerinaBenchmark().code_file(vt, KINDS["codegen"], {"imports": "", "code_aux": "", "code": "0"}, settings)
    lines = file.text.split("\n")
    assert lines[0] == "import Mathlib" and lines[1] == "import Plausible"
    assert len(file.cases) == 3
    assert '#guard countChar ("say \\"hi\\"") (\'"\') (by sorry) == (2)' in file.text
    for case in file.cases:
        assert lines[case.sentinel_line - 1] == f'#print "specbench:{file.nonce}:{case.key}"'
        assert lines[case.first_line - 1].startswith("set_option maxHeartbeats 200000 in")
    assert "countChar_postcond" not in file.text


def test_spec_files_cover_every_case_of_the_four_relations(tasks):
    vt, b = tasks["bundled_div"], VerinaBenchmark()
    fields = prompts.reference_fields(vt, KINDS["specgen"])
    first = b.spec_files(vt, KINDS["specgen"], fields, FakeSettings())
    keys = [c.key for c in first.cases]
    assert len(keys) == 3 + 2 + 3 + 5  # sound 3 tests, complete 2 rejects, post complete 3, post sound 5 unexpected
    assert "precond_complete:1:decide" in keys and "postcond_sound:0.1:decide" in keys
    assert "#guard decide (¬ (safeDiv_postcond (7) (2) (2) (by sorry)))" in first.text
    second = b.spec_files(vt, KINDS["specgen"], fields, FakeSettings(verina_plausible_budget="10"),
                          {"precond_sound:0": "undecidable"})
    assert [c.key for c in second.cases] == ["precond_sound:0:plausible", "precond_sound:0:plausible_neg"]
    assert "numInst := 10," in second.text and "randomSeed := some 42" in second.text
    assert "a / b" not in first.text  # spec checks never need the code


def test_proof_file_prints_axioms_and_allows_task_axioms(tasks):
    vt = tasks["bundled_max"]
    file = VerinaBenchmark().proof_file(vt, KINDS["proofgen"], {"imports": "", "proof_aux": "", "proof": "omega"},
                                        FakeSettings())
    assert "#print axioms maxOfTwo_spec_satisfied" in file.text and "  omega" in file.text
    assert task_axioms(vt) == set()


def test_e2e_proof_targets_the_ground_truth_spec_unless_upstream(tasks):
    vt, b = tasks["bundled_max"], VerinaBenchmark()
    fields = {"imports": "", "code_aux": "", "code": "a", "precond_aux": "", "precond": "True", "postcond_aux": "",
              "postcond": "result = a", "proof_aux": "", "proof": "rfl"}
    paper = b.proof_file(vt, KINDS["code_spec_proof"], fields, FakeSettings())
    upstream = b.proof_file(vt, KINDS["code_spec_proof"], fields, FakeSettings(verina_e2e_proof_target="generated"))
    assert "result ≥ a ∧ result ≥ b" in paper.text and "  result = a\n" in upstream.text


def test_nonce_changes_with_the_sample(tasks):
    b, vt = VerinaBenchmark(), tasks["bundled_max"]
    f1 = b.code_file(vt, KINDS["codegen"], {"code": "a"}, FakeSettings())
    f2 = b.code_file(vt, KINDS["codegen"], {"code": "b"}, FakeSettings())
    assert f1.nonce != f2.nonce and f1.nonce not in f2.text


# ---------------------------------------------------------------- verdicts (hand-written diagnostics)
def _msg(line, severity, data):
    return json.dumps({"fileName": "check.lean", "pos": {"line": line, "column": 0}, "severity": severity,
                       "data": data})


def _sentinels(file, skip=()):
    out = [_msg(file.header_lines + 1, "information", f"specbench:{file.nonce}:header")]
    out += [_msg(c.sentinel_line, "information", f"specbench:{file.nonce}:{c.key}") for c in file.cases
            if c.key not in skip]
    return out


def test_guard_outcomes_from_documented_messages(tasks):
    file = VerinaBenchmark().code_file(tasks["bundled_max"], KINDS["codegen"], {"code": "a"}, FakeSettings())
    c0, c1, c2 = file.cases
    stdout = "\n".join(_sentinels(file, skip=("code:2",)) + [
        _msg(c1.first_line + 1, "error", "Expression\n  maxOfTwo (-2) (-9) ⋯ == -2\ndid not evaluate to `true`")])
    report = attribute(file, parse_messages(stdout), "Lean stopped: time limit")
    assert report.compiled
    assert guard_outcome(report, "code:0")[0] == "passed"
    assert guard_outcome(report, "code:1")[0] == "failed"
    assert guard_outcome(report, "code:2") == ("not_run", "Lean stopped: time limit")


def test_forged_sentinel_elsewhere_does_not_count(tasks):
    file = VerinaBenchmark().code_file(tasks["bundled_max"], KINDS["codegen"], {"code": "a"}, FakeSettings())
    forged = [_msg(3, "information", f"specbench:{file.nonce}:code:0"),
              _msg(file.header_lines + 1, "information", f"specbench:{file.nonce}:header")]
    report = attribute(file, parse_messages("\n".join(forged)))
    assert guard_outcome(report, "code:0")[0] == "not_run"


def test_compile_error_in_definitions_is_cannot_compile(tasks):
    file = VerinaBenchmark().code_file(tasks["bundled_max"], KINDS["codegen"], {"code": "a +"}, FakeSettings())
    stdout = "\n".join([_msg(9, "error", "unexpected token 'def'; expected term")] + _sentinels(file))
    report = attribute(file, parse_messages(stdout))
    assert not report.compiled and "unexpected token" in report.compile_error
    crashed = attribute(file, parse_messages("INTERNAL PANIC: out of memory"))
    assert not crashed.compiled and "out of memory" in crashed.compile_error


def test_plausible_and_decide_outcomes(tasks):
    vt, b = tasks["bundled_div"], VerinaBenchmark()
    file = b.spec_files(vt, KINDS["specgen"], {"precond": "True", "postcond": "True"}, FakeSettings(),
                        {"precond_sound:0": "undecidable", "precond_sound:1": "undecidable",
                         "precond_sound:2": "undecidable", "precond_complete:0": "undecidable"})
    where = {c.key: c for c in file.cases}
    msgs = _sentinels(file) + [
        _msg(where["precond_sound:0:plausible"].first_line + 5, "error",
             "Found a counter-example!\nx := 3\nissue: False does not hold\n(0 shrinks)"),
        _msg(where["precond_sound:1:plausible"].first_line + 5, "warning", "Unable to find a counter-example"),
        _msg(where["precond_sound:1:plausible_neg"].first_line + 5, "warning", "Unable to find a counter-example"),
        _msg(where["precond_sound:2:plausible"].first_line + 5, "error",
             "Gave up after failing to generate values that fulfill the preconditions 100 times."),
        _msg(where["precond_sound:2:plausible_neg"].first_line + 5, "warning", "Unable to find a counter-example"),
        _msg(where["precond_complete:0:plausible"].first_line + 5, "error", "no goals to be solved"),
    ]
    report = attribute(file, parse_messages("\n".join(msgs)))
    po = lambda k: plausible_outcome(report, k)  # noqa: E731
    assert po("precond_sound:0:plausible") == "counterexample"
    assert relation_outcome("undecidable", po("precond_sound:0:plausible"), po("precond_sound:0:plausible_neg")) == "counterexample"
    assert relation_outcome("undecidable", po("precond_sound:1:plausible"), po("precond_sound:1:plausible_neg")) == "might_hold"
    assert relation_outcome("undecidable", po("precond_sound:2:plausible"), po("precond_sound:2:plausible_neg")) == "unknown"
    assert relation_outcome("undecidable", po("precond_complete:0:plausible"), po("precond_complete:0:plausible_neg")) == "proved"
    assert relation_outcome("passed", None, None) == "proved"
    assert relation_outcome("failed", None, None) == "counterexample"
    assert relation_outcome("undecidable", "no_counterexample", "counterexample") == "proved"
    assert relation_outcome("undecidable", "counterexample", "counterexample") == "counterexample"  # fail wins


def test_relation_scores():
    assert relation_score([]) == "pass"
    assert relation_score(["proved", "might_hold"]) == "pass"
    assert relation_score(["proved", "unknown"]) == "unknown"
    assert relation_score(["unknown", "counterexample"]) == "fail"
    assert relation_score(["proved", "not_run"]) == "fail"


def test_print_axioms_outputs(tasks):
    vt, b = tasks["bundled_max"], VerinaBenchmark()
    file = b.proof_file(vt, KINDS["proofgen"], {"proof": "omega"}, FakeSettings())
    line = file.cases[0].first_line + 1
    for data, expected in [
        ("'maxOfTwo_spec_satisfied' depends on axioms: [propext, Classical.choice, Quot.sound]",
         {"propext", "Classical.choice", "Quot.sound"}),
        ("'maxOfTwo_spec_satisfied' depends on axioms: [propext, sorryAx]", {"propext", "sorryAx"}),
        ("'maxOfTwo_spec_satisfied' depends on axioms: [Lean.ofReduceBool]", {"Lean.ofReduceBool"}),
        ("'maxOfTwo_spec_satisfied' does not depend on any axioms", set()),
    ]:
        report = attribute(file, parse_messages("\n".join(_sentinels(file) + [_msg(line, "information", data)])))
        assert axioms_of(report, "axioms", "maxOfTwo_spec_satisfied")[0] == expected
    # A sample printing the same text from its own lines is not the harness's report.
    report = attribute(file, parse_messages("\n".join(_sentinels(file) + [
        _msg(5, "information", "'maxOfTwo_spec_satisfied' does not depend on any axioms")])))
    assert axioms_of(report, "axioms", "maxOfTwo_spec_satisfied")[0] is None


def test_task_declared_axioms_are_allowed():
    vt = load_tasks(BUNDLED)[0]
    template = parse_template("-- !benchmark @start task_aux\naxiom Float.foo (n : Nat) : True\n-- !benchmark @end task_aux\n")
    assert task_axioms(type(vt)(**{**vt.__dict__, "template": template})) == {"Float.foo"}


# ---------------------------------------------------------------- metrics (hand-made verdict tables)
def _row(i, **scores):
    return {"index": i, "checks": {c: ({"score": s} if isinstance(s, str) else s) for c, s in scores.items()}}


SPEC = ("precond_sound", "precond_complete", "postcond_sound", "postcond_complete")


def test_bounds_on_a_hand_made_table():
    unknown_no_pass = {"score": "unknown", "cases": 2, "pass_cases": 0}
    unknown_with_pass = {"score": "unknown", "cases": 2, "pass_cases": 1}
    results = {
        "t1": [_row(0, precond_sound="pass", precond_complete="pass", postcond_sound="pass", postcond_complete="pass")],
        "t2": [_row(0, precond_sound="pass", precond_complete="pass", postcond_sound=unknown_no_pass,
                    postcond_complete="pass")],
        "t3": [_row(0, precond_sound="pass", precond_complete="pass", postcond_sound=unknown_with_pass,
                    postcond_complete="fail")],
        "t4": [_row(0, precond_sound="fail", precond_complete="pass", postcond_sound=unknown_with_pass,
                    postcond_complete="pass")],
    }
    paper = metrics.aggregate(results, SPEC, [1], "paper")
    assert paper["spec_pass@1"] == 0.25 and paper["spec_pass@1_upper"] == 0.5
    assert paper["postcond_sound_pass@1"] == 0.25 and paper["postcond_sound_pass@1_upper"] == 1.0
    assert paper["precond_pass@1"] == 0.75 and paper["postcond_pass@1_upper"] == 0.75
    upstream = metrics.aggregate(results, SPEC, [1], "upstream")
    assert upstream["postcond_sound_pass@1_upper"] == 0.75  # t2's unknown had no passing case
    assert upstream["spec_pass@1_upper"] == 0.25


def test_pass_at_k_over_five_samples_and_composites():
    rows = [_row(i, code="pass" if i < 2 else "fail", proof="pass" if i == 0 else "fail") for i in range(5)]
    m = metrics.aggregate({"t": rows}, ("code", "proof"), [1, 5])
    assert m["code_pass@1"] == pytest.approx(0.4) and m["code_pass@5"] == 1.0
    assert m["all_pass@1"] == pytest.approx(0.2)
    assert "code_pass@1_upper" not in m
    cs = metrics.aggregate({"t": [_row(0, code="pass", **dict.fromkeys(SPEC, "pass"))]}, ("code",) + SPEC, [1])
    assert cs["code_spec_pass@1"] == 1.0


def test_empty_relation_vacuous_or_excluded():
    results = {"a": [_row(0, precond_complete={"score": "pass", "cases": 0})],
               "b": [_row(0, precond_complete={"score": "fail", "cases": 2})]}
    assert metrics.aggregate(results, ("precond_complete",), [1])["precond_complete_pass@1"] == 0.5
    assert metrics.aggregate(results, ("precond_complete",), [1], empty_relation="exclude")["precond_complete_pass@1"] == 0.0
    assert metrics.aggregate(results, ("precond_complete",), [1])["precond_complete_untested_tasks"] == 1


def test_errored_items_leave_the_metrics_and_figures_have_error_bars():
    results = {"a": [_row(0, code="pass"), {"index": 1, "checks": {}}]}
    m = metrics.aggregate(results, ("code",), [1])
    assert m["code_pass@1"] == 1.0
    spec = metrics.aggregate({"a": [_row(0, **dict.fromkeys(SPEC, "unknown"))]}, SPEC, [1])
    fig = metrics.figures(spec, SPEC)[0]
    assert fig["kind"] == "errorbar" and fig["lo"][fig["x"].index("spec")] == 0.0 and fig["hi"][fig["x"].index("spec")] == 1.0


def test_adapter_metric_names_follow_the_kind():
    names = ADAPTER.metric_names(FakeSettings(verina_task="code_spec_proof"))
    assert "code_spec_pass@1" in names and "all_pass@1_upper" in names and "spec_pass@1" in names
    assert ADAPTER.metric_names(FakeSettings(verina_task="codegen")) == ["code_pass@1"]


# ---------------------------------------------------------------- the Lean executor, without Lean
def test_skip_message_names_what_to_install_and_how_to_point_at_it(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("SPECBENCH_LEAN_PROJECT", raising=False)
    hint = lean_exec.make(FakeSettings(), ()).available()
    assert "\n" not in hint and "elan" in hint
    assert "verina" not in hint.lower()  # the executor knows no family: VERINA's adapter adds its own part
    settings = FakeSettings(verina_task="codegen")
    task = ADAPTER.load(None, settings).tasks[0]
    ctx = type("Ctx", (), {"settings": settings, "option": settings.option,
                           "executor": lambda _s, kind: lean_exec.make(settings, ())})()
    reason = ADAPTER.skip_reason("code", task, ctx)
    assert reason.startswith(hint) and "\n" not in reason
    assert "--verina-lean-project=DIR" in reason and "verina_lean_project" in reason


def test_project_checks_when_lake_is_on_path(monkeypatch, tmp_path):
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "lake").write_text("#!/bin/sh\nexit 1\n")
    (fake / "lake").chmod(0o755)
    monkeypatch.setenv("PATH", str(fake))
    monkeypatch.delenv("SPECBENCH_LEAN_PROJECT", raising=False)
    task = ADAPTER.load(None, FakeSettings(verina_task="codegen")).tasks[0]

    def reason(**options):
        settings = FakeSettings(verina_task="codegen", **options)
        ctx = type("Ctx", (), {"settings": settings, "option": settings.option,
                               "executor": lambda _s, kind: lean_exec.make(settings, ())})()
        return ADAPTER.skip_reason("code", task, ctx)

    assert lean_exec.make(FakeSettings(), ()).available() is None  # lake found: the executor has what it needs
    assert "no VERINA Lean project" in reason()
    project = tmp_path / "proj"
    project.mkdir()
    assert reason(verina_lean_project=str(project)) == (f"--verina-lean-project={project.resolve()}: "
                                                        "no lakefile.lean or lakefile.toml there")
    (project / "lakefile.lean").write_text("")
    assert "mathlib is not built" in reason(verina_lean_project=str(project))
    monkeypatch.setenv("SPECBENCH_LEAN_PROJECT", str(project))  # the environment variable when the option is unset
    assert "mathlib is not built" in reason()
    (project / ".lake" / "packages" / "mathlib").mkdir(parents=True)
    assert reason(verina_lean_project=str(project)) is None


def test_a_lean_job_without_a_project_is_a_harness_fault(monkeypatch, tmp_path):
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "lake").write_text("#!/bin/sh\nexit 1\n")
    (fake / "lake").chmod(0o755)
    monkeypatch.setenv("PATH", str(fake))
    with pytest.raises(InfrastructureError, match="no Lean project given"):
        lean_exec.make(FakeSettings(), ()).run(None, lean_exec.LeanJob("#eval 1\n"))
    with pytest.raises(InfrastructureError, match="no lakefile"):
        lean_exec.make(FakeSettings(), ()).run(None, lean_exec.LeanJob("#eval 1\n", project=str(tmp_path)))


def test_lean_job_runs_lean_json_with_cpu_limit_scaled_by_commands():
    from pytest_specbench.execution.protocol import Environment, Prepared
    ex = lean_exec.make(FakeSettings(), ())
    prepared = Prepared(Environment("lean-project", "k"), readonly=(Path("/p"),), executables={"lean": "/t/bin/lean"},
                        info={"LEAN_PATH": "/p/.lake/build/lib"})
    job = ex.command_job(prepared, lean_exec.LeanJob("#eval 1\n", commands=10))
    assert job.argv == ("/t/bin/lean", "--json", "check.lean") and job.files["check.lean"] == b"#eval 1\n"
    assert job.cpu_seconds == 120 + 20 * 10 and job.env["LEAN_PATH"] == "/p/.lake/build/lib"


def test_every_option_is_declared_with_a_default():
    assert {o.name for o in OPTIONS} >= {"verina_task", "verina_lean_project", "verina_plausible_budget",
                                         "verina_plausible_seed", "verina_upper_bound", "verina_proof_check",
                                         "verina_unfinished_tests", "verina_empty_relation",
                                         "verina_e2e_proof_target"}
    assert ADAPTER.name == "verina" and ADAPTER.version


def test_lean_results_are_cached_by_content(tmp_path):
    """A fake command executor stands in for the sandbox; no Lean runs."""
    from pytest_specbench.execution.protocol import CommandResult, Environment, Prepared

    class FakeCommand:
        def __init__(self):
            self.jobs = []

        def run(self, prepared, job):
            self.jobs.append(job)
            return CommandResult(exit_code=0, stdout='{"severity": "information", "pos": {"line": 1}, "data": "x"}')

        def close(self):
            pass

    settings = FakeSettings()
    settings.state_dir = tmp_path
    ex = lean_exec.make(settings, ())
    ex._command = FakeCommand()
    prepared = Prepared(Environment("lean-project", "k1"), executables={"lean": "/t/lean"})
    first = ex.run(prepared, lean_exec.LeanJob("#print \"a\"\n"))
    again = ex.run(prepared, lean_exec.LeanJob("#print \"a\"\n"))
    other = ex.run(prepared, lean_exec.LeanJob("#print \"b\"\n"))
    assert first.stdout == again.stdout and len(ex._command.jobs) == 2 and other.exit_code == 0
    ex2 = lean_exec.make(settings, ())
    ex2._command = FakeCommand()
    ex2.run(Prepared(Environment("lean-project", "k2"), executables={"lean": "/t/lean"}), lean_exec.LeanJob("#print \"a\"\n"))
    assert len(ex2._command.jobs) == 1  # another toolchain/project: not the same result


def test_aggregate_is_pure_and_serves_the_reports_bootstrap():
    """The report's bootstrap calls ``aggregate`` again on resampled tasks (``reports.stats``):
    the same results give the same metrics, and every interval brackets its point estimate."""
    from pytest_specbench.reports import stats
    settings = FakeSettings(verina_task="specgen")
    settings.ks = [1]
    unknown = {"score": "unknown", "cases": 2, "pass_cases": 1}
    results = {f"t{i}": [_row(j, precond_sound="pass", precond_complete="pass" if (i + j) % 3 else "fail",
                              postcond_sound=unknown if i % 2 else "pass", postcond_complete="pass")
                         for j in range(3)] for i in range(8)}
    agg = lambda r: ADAPTER.aggregate(r, {}, settings)  # noqa: E731
    first, again = agg(results), agg(results)
    assert first == again and first["spec_pass@1"] < first["spec_pass@1_upper"]
    assert agg({"t1": results["t1"]})["postcond_sound_pass@1"] == 0.0
    ci = stats.bootstrap_ci(agg, results, first, resamples=200)
    for name in ("spec_pass@1", "spec_pass@1_upper", "precond_complete_pass@1"):
        lo, hi = ci["metrics_ci"][name]
        assert lo <= first[name] <= hi
    assert agg(results) == first  # the bootstrap left no state behind


def test_output_flood_fails_the_unfinished_checks_with_a_reason():
    """A sample flooding ``#eval`` output: the executor caps it (``output_truncated``); the checks whose
    sentinel was lost fail, naming the output limit (never pass)."""
    from pytest_specbench.execution.protocol import CommandResult

    class Flooded:
        def run(self, prepared, job):
            return CommandResult(exit_code=0, stdout="x" * 100, output_truncated=True)

    settings = FakeSettings(verina_task="codegen")
    task = ADAPTER.load(None, settings).tasks[0]
    ctx = type("Ctx", (), {"settings": settings, "option": settings.option,
                           "executor": lambda _s, kind: Flooded()})()
    result = ADAPTER.run_check("code", task, ADAPTER.reference(task, "code"), ctx)
    assert not result.passed and "output limit" in result.message, result.message


def test_heartbeat_timeout_sorry_warning_and_undecidable_from_documented_messages(tasks):
    """Hand-written from Lean's documented message texts (never captured from Lean): the
    ``maxHeartbeats`` timeout in one ``#guard`` is that test's error (the others still count),
    the ``declaration uses 'sorry'`` warning from ``(by sorry)`` precondition arguments is not an
    error, and ``failed to synthesize Decidable`` sends a ``decide`` case on to plausible."""
    b = VerinaBenchmark()
    file = b.code_file(tasks["bundled_max"], KINDS["codegen"], {"code": "a"}, FakeSettings())
    c0, c1, _ = file.cases
    stdout = "\n".join(_sentinels(file) + [
        _msg(c0.first_line + 1, "warning", "declaration uses 'sorry'"),
        _msg(c1.first_line + 1, "error", "(deterministic) timeout at `whnf`, maximum number of heartbeats "
                                         "(200000) has been reached\nUse `set_option maxHeartbeats <num>` to set "
                                         "the limit.")])
    report = attribute(file, parse_messages(stdout))
    assert guard_outcome(report, "code:0")[0] == "passed"
    assert guard_outcome(report, "code:1")[0] == "error" and "heartbeats" in guard_outcome(report, "code:1")[1]
    assert guard_outcome(report, "code:2")[0] == "passed"
    spec = b.spec_files(tasks["bundled_div"], KINDS["specgen"], {}, FakeSettings())
    case = spec.cases[0]
    stdout = "\n".join(_sentinels(spec) + [_msg(case.first_line + 1, "error",
                                                "failed to synthesize\n  Decidable (∀ x, x < 5)\nAdditional "
                                                "diagnostic information may be available using the "
                                                "`set_option diagnostics true` command.")])
    assert guard_outcome(attribute(spec, parse_messages(stdout)), case.key)[0] == "undecidable"


# ---------------------------------------------------------------- #49 point 7: a timeout is unknown (§4.1)
def _lean_answering(first_cases: int, timed_out: bool):
    """A fake lean executor: each file prints its header sentinel and the sentinels
    of its first ``first_cases`` check commands (no error: a decide/plausible
    that ran passed), then ends, by the time limit when ``timed_out``."""
    from pytest_specbench.execution.protocol import CommandResult

    def respond(_prepared, job):
        lines = job.text.split("\n")
        printed = [(n + 1, ln.split('"')[1]) for n, ln in enumerate(lines) if ln.startswith('#print "specbench:')]
        audit = [(n - 1, "specbench-audit: ") for n, text in printed if text.endswith(":audit:environment")]
        checks = [p for p in printed if ":audit:" not in p[1]]
        shown = printed[:len(printed) - len(checks) + 1 + first_cases] if timed_out else printed
        stdout = "\n".join(_msg(n, "information", text) for n, text in audit + shown)
        return CommandResult(exit_code=None if timed_out else 0, timed_out=timed_out,
                             killed="CPU limit (180 s)" if timed_out else None, stdout=stdout)
    return respond


def test_a_relation_the_time_limit_stopped_is_unknown_as_the_paper_counts_it():
    """§4.1: a relation whose testing is inconclusive is ``unknown``, counted as
    not holding in the lower bound and as holding in the upper one (Pass% and
    Pass% + Unknown%).  Hand-checked: one task, two SpecGen samples; sample A's
    Lean runs stop at the time limit after the first decide case (which passed);
    sample B's run to the end with every decide passing.  Every relation of A is
    unknown (precond_sound's case 0 proved, the others never decided), B's pass:
    pass@1 lower = 1/2, upper = 2/2 for each relation and for spec.  (The code
    before #49 counted A's unreached cases as failures: upper 1/2.)"""
    from fakes import FakeExecutor, fake_context

    adapter = VerinaBenchmark()
    task = next(t for t in adapter.load(None, FakeSettings(verina_task="specgen")).tasks if t.task_id == "bundled_div")
    answer = prompts.answer_text({"imports": "", "precond_aux": "", "precond": "b ≠ 0", "postcond_aux": "",
                                  "postcond": "result = a / b"})
    rows = []
    for index, respond in enumerate((_lean_answering(1, timed_out=True), _lean_answering(0, timed_out=False))):
        lean = FakeExecutor(respond)
        ctx = fake_context(executors={"lean": lean}, verina_task="specgen")
        checks = {c: adapter.run_check(c, task, answer, ctx).details for c in SPEC}
        rows.append({"index": index, "checks": checks, "lean_runs": len(lean.calls)})
    got = metrics.aggregate({"bundled_div": rows}, SPEC, [1])
    for metric in SPEC + ("precond", "postcond", "spec"):
        assert (got[f"{metric}_pass@1"], got[f"{metric}_pass@1_upper"]) == (0.5, 1.0), metric
    assert {c: rows[0]["checks"][c]["score"] for c in SPEC} == dict.fromkeys(SPEC, "unknown")
    assert rows[0]["checks"]["precond_sound"]["outcomes"] == {"0": "proved", "1": "unknown", "2": "unknown"}
    assert {c: rows[1]["checks"][c]["score"] for c in SPEC} == dict.fromkeys(SPEC, "pass")
    assert [r["lean_runs"] for r in rows] == [8, 4]  # A: decide, then plausible on the cases left, per check
    # A side the time limit stopped decides nothing; the other side still can.
    assert relation_outcome("undecidable", "timed_out", "timed_out") == "unknown"
    assert relation_outcome("undecidable", "timed_out", "counterexample") == "proved"
    assert relation_outcome("undecidable", "counterexample", "timed_out") == "counterexample"
    assert relation_score(["proved", "not_run"]) == "fail"  # a crash or signal still fails the relation


def test_a_refused_answer_counts_as_a_failure_under_either_empty_relation_rule():
    """A screened-out answer fails the relation with the task's own case count: under
    --verina-empty-relation=exclude it stays in the metric (it was left out, as if the
    task had no reject inputs, before), and it never makes the task 'untested'."""
    from fakes import fake_context

    adapter = VerinaBenchmark()
    task = next(t for t in adapter.load(None, FakeSettings(verina_task="specgen")).tasks if t.task_id == "bundled_div")
    ctx = fake_context(executors={}, verina_task="specgen")
    refused = adapter.run_check("precond_complete", task, "[[ ## precond ## ]]\n#eval 1\n[[ ## postcond ## ]]\nTrue", ctx)
    assert not refused.passed and refused.details["cases"] == 2 and "#eval" in refused.message
    passing = {"score": "pass", "cases": 2, "pass_cases": 2}
    rows = {"bundled_div": [_row(0, precond_complete=refused.details), _row(1, precond_complete=passing)]}
    for rule in ("vacuous", "exclude"):
        got = metrics.aggregate(rows, ("precond_complete",), [1], empty_relation=rule)
        assert got["precond_complete_pass@1"] == 0.5 and got["precond_complete_untested_tasks"] == 0, rule
