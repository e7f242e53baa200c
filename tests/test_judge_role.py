"""The judge role against a real local HTTP server (issue #32: what a real model showed).

Each test checks one finding of the real-model trial without the real model
(``tests/openai_server.py`` plays the server; the ``openai`` client is used as is):
the judge's own parameters, the parameters recorded as sent, its counters under
xdist, no credential of any endpoint anywhere, retries that differ from the
request before, and what upstream's reading warns about.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from openai_server import StubOpenAIServer
from pytest_specbench.benchmarks.base import Message, Prompt, RoleRequest, Task
from pytest_specbench.benchmarks.cife.judge import ask_until_readable, parse_adherence
from pytest_specbench.benchmarks.cife.prompts import adherence_prompt
from pytest_specbench.benchmarks.cife.data import Constraint
from pytest_specbench.errors import InfrastructureError, OptionError
from pytest_specbench.models.endpoints import redact_url
from pytest_specbench.models.roles import load_role

BUNDLED_CIFE = Path(__file__).resolve().parents[1] / "benchmarks" / "cife" / "benchmark_data.jsonl"


class FakeSettings:
    def __init__(self, state_dir: Path, **options: Any):
        self.state_dir, self.samples, self.config = state_dir, None, None
        self.options = {"model_retries": "0", "model_timeout": "10", **options}

    def option(self, name: str) -> Any:
        return self.options.get(name)


@pytest.fixture(autouse=True)
def _api_key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)


def _request(parameters: dict, attempt: int = 0, purpose: str = "adherence") -> RoleRequest:
    task = Task("T/1", {"instruction": "x"}, Path("t.jsonl"), 1)
    prompt = Prompt((Message("user", f"judge this ({attempt})"),), parameters=parameters)
    return RoleRequest("cife", task, 0, purpose, prompt, attempt)


def _cache_entries(state: Path) -> list[dict]:
    return [json.loads(p.read_text()) for p in (state / "cache").rglob("*.json")]


def test_the_judge_is_not_capped_by_model_max_tokens_and_records_what_it_sent(tmp_path):
    """Points 2 and 3: --model-* never reaches the judge; the benchmark's parameters apply
    unless --judge-model-* is given; the manifest lists exactly what the cache entries and
    the server saw."""
    with StubOpenAIServer(answer=lambda body: "{}", known_models=("judge",)) as server:
        settings = FakeSettings(tmp_path / "s", judge_model_base_url=server.url, model_max_tokens="64",
                                model_temperature="0.7", model_seed="5")
        role = load_role("judge", "openai:judge", settings)
        role.ask(_request({"temperature": 0.1, "max_tokens": 2048}))
        role.ask(_request({}, purpose="correctness"))  # no benchmark parameters: the CIFE paper's
        sent = [r["body"] for r in server.chat_requests()]
        assert [(b["temperature"], b["max_tokens"], b.get("seed")) for b in sent] == [(0.1, 2048, None)] * 2
        manifest = role.manifest()
        assert manifest["parameters"] == {"adherence": [{"temperature": 0.1, "max_tokens": 2048, "seed": None}],
                                          "correctness": [{"temperature": 0.1, "max_tokens": 2048, "seed": None}]}
        cached = sorted(json.dumps(e["parameters"], sort_keys=True) for e in _cache_entries(tmp_path / "s"))
        listed = sorted(json.dumps(p, sort_keys=True) for ps in manifest["parameters"].values() for p in ps)
        assert cached == listed
        assert manifest["questions"]["called"] == manifest["questions"]["http_requests"] == 2

        # The judge's own options win over the benchmark's.
        settings = FakeSettings(tmp_path / "s2", judge_model_base_url=server.url, judge_model_max_tokens="300",
                                judge_model_temperature="0", judge_model_seed="7")
        role = load_role("judge", "openai:judge", settings)
        role.ask(_request({"temperature": 0.1, "max_tokens": 2048}))
        body = server.chat_requests()[-1]["body"]
        assert (body["temperature"], body["max_tokens"], body["seed"]) == (0.0, 300, 7)
        assert role.manifest()["parameter_defaults"]["set_by_user"] == ["max_tokens", "seed", "temperature"]


@pytest.mark.parametrize("options, message", [
    ({"judge_model_max_tokens": "0"}, "--judge-model-max-tokens: must be at least 1"),
    ({"judge_model_seed": "x"}, "--judge-model-seed: expected a whole number"),
])
def test_bad_judge_parameters_are_one_line_errors(tmp_path, options, message):
    with pytest.raises(OptionError, match=message):
        load_role("judge", "openai:judge", FakeSettings(tmp_path, judge_model_base_url="http://127.0.0.1:9/v1", **options))


def test_a_retry_says_what_was_wrong_and_varies_the_seed(tmp_path):
    """Point 6: a judge at temperature 0.1 with a fixed server seed repeats itself; each
    retry's prompt quotes what was wrong (here: cut off) and its seed is seed + attempt."""
    cut_off = '{"Evaluation": [{"Index": 1, "Constraint": "use a loop", "Reason": "The code uses a for'
    with StubOpenAIServer(answer=lambda body: cut_off, known_models=("judge",)) as server:
        role = load_role("judge", "openai:judge", FakeSettings(tmp_path, judge_model_base_url=server.url))
        task = Task("T/1", {"instruction": "x"}, Path("t.jsonl"), 1)
        constraints = [Constraint(0, "Code Structure", "use a loop")]
        with pytest.raises(InfrastructureError, match=r"unreadable after 3 attempt\(s\): the answer contains no valid JSON"):
            ask_until_readable(role, "cife", task, 0, "adherence",
                               lambda err: adherence_prompt("x", constraints, "for i in y: pass\n", "paper", err),
                               lambda a: parse_adherence(a, 1, indexed=True), retries=2)
        bodies = [r["body"] for r in server.chat_requests()]
        assert [b.get("seed") for b in bodies] == [None, 1, 2]
        prompts = [b["messages"][-1]["content"] for b in bodies]
        assert len(set(prompts)) == 3  # no request repeats the one before
        assert "could not be used: the answer contains no valid JSON object" in prompts[1]
        assert "looks cut off" in prompts[1] and "uses a for" in prompts[1] and "attempt 2 of 3" in prompts[1]
        assert "attempt 3 of 3" in prompts[2]


def test_redacted_urls_keep_the_endpoint_and_drop_credentials():
    assert redact_url("http://user:s3cret@127.0.0.1:8080/v1") == "http://127.0.0.1:8080/v1"
    assert redact_url("https://h.example/openai?api-version=1&api-key=s3cret") == \
        "https://h.example/openai?api-version=1&api-key=REDACTED"
    assert redact_url("http://127.0.0.1:8080/v1") == "http://127.0.0.1:8080/v1"  # cache keys unchanged


BAD = "\ud800"  # a lone surrogate: execnet refuses a string holding one (issue 29)


def _cife_answers(body: dict) -> str:
    """The tested model answers the bundled suite's reference; the judge is the scripted one,
    except that it calls the answers of tasks b01 and b02 "Wrong" and puts a lone surrogate
    in the reason of each of its answers about them (issue 29's hostile judge)."""
    from pytest_specbench.benchmarks.cife.scripted_judge import answer

    rows = [json.loads(line) for line in BUNDLED_CIFE.read_text().splitlines() if line.strip()]
    if body["model"] == "judge":
        asked = body["messages"][-1]["content"]
        if any(r["instruction"] in asked for r in rows if r["id"] in ("b01", "b02")):
            return answer(body["messages"], correct=0.0).replace('"scripted"', '"scripted ' + BAD + '"')
        return answer(body["messages"])
    by_instruction = {r["instruction"]: r["reference_answer"] for r in rows}
    return by_instruction.get(body["messages"][-1]["content"], "no idea")


def test_under_xdist_judge_counters_reach_the_report_no_secret_is_written_and_a_lone_surrogate_crosses(pytester):
    """Points 2-5 through the plugin with -n 2: the judge's counters of both workers are in
    the manifest, every question was sent with the judge's parameters (not --model-max-tokens),
    the manifest and the cache entries agree, and the credentials of both base URLs appear
    in no report, journal, cache file, key or output line.  The same run is issue 29's
    (tests/test_wire_safe.py): the judge's reasons about two tasks hold a lone surrogate,
    which must cross xdist's channel (failures, not INTERNALERROR), reach the terminal and
    the judge's cache (paid once: a run without xdist asks nothing again).  One ``-n 2`` run
    for both (until session 22 each had its own: a controller and two workers, ~3 CPU s)."""
    # 4 of the 12 bundled tasks: 20 items (each task's 4 adherence items and its correctness
    # item), 4 generations and 8 judge questions, spread over both workers as all 12 are.
    with StubOpenAIServer(answer=_cife_answers, known_models=("gen", "judge")) as server:
        host = f"127.0.0.1:{server.port}"
        args = ["--specbench=cife", "--model=openai:gen", f"--model-base-url=http://u:s3cret-model@{host}/v1",
                "--judge-model=openai:judge", f"--judge-model-base-url=http://u:s3cret-judge@{host}/v1",
                "--model-max-tokens=64", "-p", "no:cacheprovider", "-k", "b01 or b02 or b03 or b04"]
        result = pytester.runpytest_inprocess(*args, "--specbench-report=r.json", "-n", "2")
        assert result.ret == 1, result.stdout.str()[-2000:]  # failures, not INTERNALERROR (3)
        outcomes = result.parseoutcomes()
        assert outcomes.get("failed") == 2 and outcomes.get("passed") == 18 and not outcomes.get("error")
        assert "\\ud800" in result.stdout.str()
        # The generations are the controller's, once per task for both workers (was
        # test_generation_cache.py's own -n 2 run until #45, session 23): its progress line
        result.stdout.fnmatch_lines(["specbench: generating with openai:gen: 4/4 *"])
        chats = server.chat_requests()
        to_judge = [r for r in server.requests if r["path"] == "/v1/models/judge" or (r["body"] or {}).get("model") == "judge"]
        # without xdist the same messages reach the terminal from the caches (the generations'
        # and the judge's: nothing is asked again; the result cache is off, so the items are
        # judged again); in this process: what crosses xdist's channel is the first run's subject
        again = pytester.runpytest_inprocess(*args, "--specbench-report=again.json", "-n", "0",
                                             "--specbench-result-cache=off")
        assert again.ret == 1 and again.parseoutcomes().get("failed") == 2, again.stdout.str()[-2000:]
        assert "\\ud800" in again.stdout.str()
        assert len(server.chat_requests()) == len(chats)
    judge_bodies = [r["body"] for r in chats if r["body"]["model"] == "judge"]
    gen_bodies = [r["body"] for r in chats if r["body"]["model"] == "gen"]
    assert len(gen_bodies) == 4 and {b["max_tokens"] for b in gen_bodies} == {64}
    assert len(judge_bodies) == 8 and {(b["temperature"], b["max_tokens"]) for b in judge_bodies} == {(0.1, 2048)}
    report = json.loads((pytester.path / "r.json").read_text())
    generation = report["manifest"]["model"]["generation"]  # the controller's counters reach the report
    assert generation["generated"] == 4 and generation["api_requests"] == 4, generation
    judge = report["manifest"]["roles"]["judge"]
    assert judge["questions"]["called"] == 8
    # The requests that may be billed: the controller's reachability probe (GET) is not one.
    assert judge["questions"]["http_requests"] == len([r for r in to_judge if r["method"] == "POST"]) == 8
    assert judge["questions"]["asked"] == 20  # one question per item; the rest came from the role's cache
    assert judge["endpoint"] == f"http://{host}/v1"
    assert report["benchmarks"]["cife"]["metrics"]["csr"] == 1.0  # b01's and b02's constraints hold, their code is "Wrong"
    entries = [e for e in _cache_entries(pytester.path / ".specbench") if e.get("role") == "judge"]
    cached = {json.dumps(e["parameters"], sort_keys=True) for e in entries}
    assert cached == {json.dumps(p, sort_keys=True) for ps in judge["parameters"].values() for p in ps}
    # b01's and b02's answers (adherence, correctness) with the surrogate are in the judge's
    # cache (the old store's failed write made every later run ask again)
    assert len([e for e in entries if BAD in json.dumps(e, ensure_ascii=False)]) == 4
    # No credential anywhere: output, report, journal, cache entries and their file names.
    assert "s3cret" not in result.stdout.str() + result.stderr.str() + again.stdout.str()
    for path in pytester.path.rglob("*"):
        assert "s3cret" not in str(path)
        if path.is_file():
            assert b"s3cret" not in path.read_bytes(), path


def test_upstream_reading_keeps_its_scoring_and_warns_once_about_answers_without_verdicts(pytester):
    """Point 7: under --cife-parse=upstream a judge that gives no verdict scores CSR 100%
    (upstream's all([])); kept, with one warning line counting such answers."""
    rows = [json.loads(line) for line in BUNDLED_CIFE.read_text().splitlines() if line.strip()]
    judgments = pytester.path / "judgments.jsonl"
    judgments.write_text("".join(json.dumps({"task_id": str(r["id"]), "purpose": purpose, "answer": "I cannot judge this."}) + "\n"
                                 for r in rows for purpose in ("adherence", "correctness")))
    # Two of the 12 bundled tasks (the judgments file still answers all 12): what is claimed --
    # upstream's all([]) scores each task's verdict-less answer, and the answers of several
    # tasks are counted in one warning line -- needs more than one task, not all twelve; the
    # rest were each a reference's sandboxed checks more (~0.1 CPU s a task).
    result = pytester.runpytest_inprocess("--specbench=cife", "--model=reference", f"--judge-model=replay:{judgments}",
                                          "--cife-parse=upstream", "--specbench-report=r.json", "-p", "no:cacheprovider",
                                          "-k", "b01 or b02")
    metrics = json.loads((pytester.path / "r.json").read_text())["benchmarks"]["cife"]["metrics"]
    assert metrics["csr_upstream_reading"] == 1.0 and metrics["upstream_answers_without_verdict"] == 2
    warnings = [line for line in result.stdout.lines if "warning: --cife-parse=upstream" in line]
    assert len(warnings) == 1
    assert "2 judge adherence answer(s) had no verdict" in warnings[0] and "2 correctness answer(s) had no label" in warnings[0]


def _verdict(body: dict):
    """A server that takes response_format as the test's "kind" of server does (see below)."""
    from openai_server import Reply

    kind = body["model"]
    form = (body.get("response_format") or {}).get("type")
    if form == "json_schema" and kind != "openai-like":  # llama-cpp-python's server: HTTP 500
        return Reply(status=500, body={"error": {"message": "unsupported response_format"}})
    if form == "json_object" and kind == "plain":
        return Reply(status=400, body={"error": {"message": "unknown response_format"}})
    return '{"Evaluation": [{"Index": 1, "Reason": "a loop", "Aligns": true}]}'


@pytest.mark.parametrize("kind, forms, found", [
    ("openai-like", [["json_schema"], ["json_schema"]], "json_schema"),
    ("llama-like", [["json_schema", "json_object"], ["json_object"]], "json_object"),
    ("plain", [["json_schema", "json_object", None], [None]], "none"),
])
def test_structured_judge_output_takes_the_form_the_endpoint_accepts(tmp_path, kind, forms, found):
    """#44, point 7: --judge-model-structured=on sends the verdict's JSON schema as
    response_format: json_schema (OpenAI, vLLM), else json_object with the schema
    (llama-cpp-python's server, which answers the first form with HTTP 500), else none.
    The form is found once, by the first question, without retrying a refused form."""
    from pytest_specbench.benchmarks.cife.judge import adherence_schema

    schema = adherence_schema(1, indexed=True)
    with StubOpenAIServer(answer=_verdict, known_models=(kind,)) as server:
        settings = FakeSettings(tmp_path / kind, judge_model_base_url=server.url, judge_model_structured="on",
                                model_retries="3")
        role = load_role("judge", f"openai:{kind}", settings)
        sent = []
        for attempt in range(2):
            before = len(server.chat_requests())
            request = _request({}, attempt=attempt)
            answer = role.ask(RoleRequest(request.benchmark, request.task, 0, "adherence", request.prompt,
                                          attempt, schema=schema))
            assert parse_adherence(answer, 1, indexed=True) == [(True, "a loop")]
            sent.append([r["body"].get("response_format") for r in server.chat_requests()[before:]])
        assert [[f and f["type"] for f in one] for one in sent] == forms
        formats = [f for one in sent for f in one if f]
        if formats[0]["type"] == "json_schema":  # OpenAI's strict subset: no length bounds
            assert formats[0]["json_schema"]["strict"] is True
            assert "minItems" not in json.dumps(formats[0]["json_schema"]["schema"])
        if kind == "llama-like":  # the whole schema: the server's grammar bounds the list too
            assert formats[1] == {"type": "json_object", "schema": schema}
        assert role.manifest()["structured"] == {"option": "on", "form": found}
        off = load_role("judge", f"openai:{kind}", FakeSettings(tmp_path / "off", judge_model_base_url=server.url))
        assert off.identity() != role.identity()  # the answers differ: so do the cache and result keys
        before = len(server.chat_requests())
        off.ask(RoleRequest(request.benchmark, request.task, 0, "adherence", request.prompt, 0, schema=schema))
        assert "response_format" not in server.chat_requests()[before]["body"]  # off (the default): the prompt alone
        assert off.manifest()["structured"] == {"option": "off"}


def test_bad_structured_values_are_one_line_errors(tmp_path):
    with pytest.raises(OptionError, match="--judge-model-structured: expected on or off, got 'maybe'"):
        load_role("judge", "openai:judge", FakeSettings(tmp_path, judge_model_base_url="http://127.0.0.1:9/v1",
                                                        judge_model_structured="maybe"))
    judgments = tmp_path / "j.jsonl"
    judgments.write_text("")
    with pytest.raises(OptionError, match="--judge-model-structured: on needs an openai: judge"):
        load_role("judge", "python:json:loads", FakeSettings(tmp_path, judge_model_structured="on"))
