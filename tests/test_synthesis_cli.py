"""The `specbench contract ...` commands: one-line errors, end-to-end on a tiny file."""
from __future__ import annotations

import json

from pytest_specbench.cli import main

from test_synthesis_pipeline import make_task


def test_cli_errors_are_one_line(tmp_path, capsys):
    assert main(["contract", "synthesize", "--input", str(tmp_path / "missing.jsonl")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "file not found" in err and "Traceback" not in err
    f = tmp_path / "t.jsonl"
    f.write_text(json.dumps(make_task()) + "\n")
    assert main(["contract", "synthesize", "--input", str(f), "--tasks", "Nope/*"]) == 2
    assert "--tasks" in capsys.readouterr().err
    assert main(["contract", "synthesize", "--input", str(f), "--translator", "gpt"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--translator: unknown model 'gpt'" in err
    assert main(["contract", "bogus"]) == 2
    assert capsys.readouterr().err.count("\n") == 1


def test_cli_synthesize_then_metrics(tmp_path, capsys):
    f = tmp_path / "t.jsonl"
    f.write_text(json.dumps(make_task()) + "\n")
    out = tmp_path / "o" / "contracteval" / "contracteval_rebuilt.jsonl"
    assert main(["contract", "synthesize", "--input", str(f), "--out", str(out), "--jobs", "1",
                 "--max-models", "1", "--quiet"]) == 0
    text = capsys.readouterr().out
    assert "asserts translated without a model: 2/2" in text
    assert main(["contract", "cvt-metrics", str(out), "--json"]) == 0
    agg = json.loads(capsys.readouterr().out)["aggregate"]
    assert agg["tasks_with_cvt"] == 1 and agg["avc"] == 1.0
    work = out.with_name(out.name + ".work.jsonl")
    assert main(["contract", "cvt-metrics", str(work), "--candidates"]) == 0
    assert "AVC" in capsys.readouterr().out
