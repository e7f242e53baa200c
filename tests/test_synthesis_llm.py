"""The LLM fallback translator (``--translator=openai:MODEL``) against a real local HTTP server."""
from __future__ import annotations

import json

import pytest

from openai_server import StubOpenAIServer
from pytest_specbench.cli import main
from pytest_specbench.benchmarks.contract.synthesis.llm import parse_answer, rewrite_contract


def task_row(task_id="T/7", lines=("assert isinstance(n, int)", "assert n.real >= 0")):
    contract = "\n".join(f"    {c}, \"invalid inputs\" # $_CONTRACT_$" for c in lines)
    return {"task_id": task_id, "entry_point": "f", "original_prompt": "def f(n):\n    \"\"\"Double n.\"\"\"\n",
            "contract": "\n" + contract + "\n",
            "contracts": {f"assert_{k}": c + ', "invalid inputs' for k, c in enumerate(lines)},
            "reference_with_contracts": f"def f(n):\n\n{contract}\n    return n * 2\n",
            "cs_system": "s", "cs_user": "u", "eas_system": "s", "eas_user": "u",
            "contract_aware_description": "d", "eas_examples": {}, "cvts": []}


def synthesize(tmp_path, monkeypatch, server, name):
    monkeypatch.setenv("OPENAI_BASE_URL", server.url)
    monkeypatch.setenv("SPECBENCH_DIR", str(tmp_path / "state"))
    src = tmp_path / "in.jsonl"
    src.write_text(json.dumps(task_row()) + "\n")
    out = tmp_path / name / "contracteval_rebuilt.jsonl"
    code = main(["contract", "synthesize", "--input", str(src), "--out", str(out), "--jobs", "1",
                 "--max-models", "1", "--quiet", "--translator", "openai:stub"])
    work = [json.loads(line) for line in out.with_name(out.name + ".work.jsonl").read_text().splitlines()]
    return code, work[0]


def test_unsupported_assert_is_translated_by_the_model(tmp_path, monkeypatch, capsys):
    answers = []

    def answer(request):
        user = request["messages"][-1]["content"]
        answers.append(user)
        return 'Here:\n```json\n{"assert_1": "n >= 0"}\n```'

    with StubOpenAIServer(answer) as server:
        code, rec = synthesize(tmp_path, monkeypatch, server, "a")
        assert code == 0
        # Only the unsupported assert was sent, with the Appendix G-style prompt.
        assert server.chat_count == 1 and "Rewrite assert_1: assert n.real >= 0" in answers[0]
        assert "translator openai:stub: 1 unsupported asserts asked, 1 translated" in capsys.readouterr().out
        assert rec["llm_translated"] == {"assert_1": "n >= 0"} and rec["unsupported"] == {}
        # CVTs for the translated assert exist and were verified on the real reference.
        fired = [c for c in rec["cvts"] if c["intended_violated"] == ["assert_1"]]
        assert fired and all(c["fired_individually"] == ["assert_1"] for c in fired)
        assert all(isinstance(c["input"]["n"], int) and c["input"]["n"] < 0 for c in fired)
        # A second run asks nothing: the answer comes from the generation cache.
        code, rec2 = synthesize(tmp_path, monkeypatch, server, "b")
        assert code == 0 and server.chat_count == 1 and rec2["llm_translated"] == rec["llm_translated"]


@pytest.mark.parametrize("reply, reason", [
    ("Sorry, I cannot do that.", "not a Python expression"),
    ('```json\n{"assert_1": "hasattr(n, \'real\') and n.real >= 0"}\n```', "outside the subset too"),
])
def test_garbage_answers_leave_the_assert_unsupported_with_a_reason(tmp_path, monkeypatch, capsys, reply, reason):
    with StubOpenAIServer(lambda request: reply) as server:
        code, rec = synthesize(tmp_path, monkeypatch, server, "g")
    assert code == 0 and not rec.get("llm_translated")
    detail = rec["unsupported"]["assert_1"]["detail"]
    assert "LLM fallback failed" in detail and reason in detail
    assert "Traceback" not in capsys.readouterr().err


def test_unreachable_translator_is_a_reason_not_a_crash(tmp_path, monkeypatch):
    server = StubOpenAIServer(lambda request: "x").start()
    server.stop()  # nothing listens there any more
    code, rec = synthesize(tmp_path, monkeypatch, server, "u")
    assert code == 0 and "cannot reach" in rec["unsupported"]["assert_1"]["detail"]


def test_parse_and_rewrite_units():
    assert parse_answer('```python\nassert n >= 0, "invalid inputs"\n```', "assert_1") == ("n >= 0", "")
    assert parse_answer('{"assert_1": "len(s) > 2"}', "assert_1") == ("len(s) > 2", "")
    assert parse_answer("", "assert_1")[0] is None
    contract = "\n    for x in xs:\n        if x:\n            assert x > 0\n    assert len(xs) > 1\n"
    out = rewrite_contract(contract, ["assert_0", "assert_1"], {"assert_0": "all(x > 0 for x in xs if x)"})
    assert out.splitlines()[0] == 'assert (all(x > 0 for x in xs if x)), "invalid inputs"'
    assert out.splitlines()[1] == "assert len(xs) > 1"
