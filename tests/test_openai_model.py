"""``openai:MODEL`` against a real local HTTP server: answers, cache, retries, errors.

The ``openai`` client is used as it is; ``tests/openai_server.py`` plays the
server and counts what it receives.
"""
from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from openai_server import BundledContractAnswers, Reply, StubOpenAIServer, completion_body
from pytest_specbench.benchmarks.base import Message, Prompt, Task
from pytest_specbench.errors import InfrastructureError, OptionError
from pytest_specbench.models import load_judge_model, load_model
from pytest_specbench.models.base import GenerationRequest, SampleMissing


class FakeSettings:
    """The few Settings fields the model layer reads (values as the command line gives them)."""

    def __init__(self, state_dir: Path, samples: int | None = None, **options: Any):
        self.state_dir, self.samples, self.config = state_dir, samples, None
        self.options = {"model_retries": "1", "model_timeout": "10", **options}

    def option(self, name: str) -> Any:
        return self.options.get(name)


@pytest.fixture
def server():
    with StubOpenAIServer(answer=lambda body: "def f():\n    return 1\n") as s:
        yield s


@pytest.fixture(autouse=True)
def _api_key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)


def make_model(tmp_path: Path, server: StubOpenAIServer, spec: str = "openai:stub", samples=None, **options):
    settings = FakeSettings(tmp_path / "state", samples, model_base_url=server.url, **options)
    return load_model(spec, settings)


def requests_for(n: int, samples: int = 1, benchmark: str = "toy") -> list[GenerationRequest]:
    out = []
    for i in range(n):
        task = Task(f"Toy/{i}", {"prompt": f"task {i}"}, Path("toy.jsonl"), i + 1)
        prompt = Prompt((Message("system", "You write Python."), Message("user", f"Write task {i}.")))
        out.extend(GenerationRequest(benchmark, task, s, prompt, lambda: "") for s in range(samples))
    return out


def test_generates_once_and_a_second_model_reads_the_cache(tmp_path, server):
    model = make_model(tmp_path, server)
    reqs = requests_for(5)
    model.generate(reqs)
    assert server.chat_count == 5
    assert model.completion(reqs[3]).text == "def f():\n    return 1\n"
    body = server.chat_requests()[0]["body"]
    assert body["messages"][0] == {"role": "system", "content": "You write Python."}
    assert body["model"] == "stub" and body["temperature"] == 0.0 and body["max_tokens"] == 2048
    manifest = model.manifest()
    assert manifest["generation"]["generated"] == 5 and manifest["generation"]["api_requests"] == 5
    assert manifest["generation"]["prompt_tokens"] == 55 and manifest["generation"]["completion_tokens"] == 35
    assert manifest["endpoint"] == f"127.0.0.1:{server.port}"

    again = make_model(tmp_path, server)
    again.generate(reqs)
    assert server.chat_count == 5  # nothing re-billed
    assert again.manifest()["generation"]["cache_hits"] == 5
    assert again.completion(reqs[0]).text.startswith("def f")


def test_cache_is_private_and_entries_are_whole_json(tmp_path, server):
    model = make_model(tmp_path, server)
    model.generate(requests_for(2))
    root = tmp_path / "state" / "cache" / "generations"
    assert root.stat().st_mode & 0o077 == 0
    entries = [p for p in root.rglob("*.json") if "locks" not in p.parts]
    assert len(entries) == 2
    for p in entries:
        assert p.stat().st_mode & 0o077 == 0
        assert json.loads(p.read_text())["text"].startswith("def f")


def test_each_sample_index_is_its_own_entry_so_more_samples_cost_only_the_new_ones(tmp_path, server):
    make_model(tmp_path, server, samples=2, model_seed="7").generate(requests_for(2, samples=2))
    assert server.chat_count == 4
    seeds = sorted(r["body"]["seed"] for r in server.chat_requests())
    assert seeds == [7, 7, 8, 8]
    assert {r["body"]["temperature"] for r in server.chat_requests()} == {0.8}
    make_model(tmp_path, server, samples=3, model_seed="7").generate(requests_for(2, samples=3))
    assert server.chat_count == 6


def test_parameters_and_endpoint_are_part_of_the_key(tmp_path, server):
    make_model(tmp_path, server).generate(requests_for(1))
    make_model(tmp_path, server, model_temperature="0.5").generate(requests_for(1))
    make_model(tmp_path, server, model_max_tokens="100").generate(requests_for(1))
    make_model(tmp_path, server).generate(requests_for(1, benchmark="other"))
    assert server.chat_count == 4


def test_429_with_retry_after_is_waited_for_and_retried(tmp_path, server):
    server.script.append(Reply(429, {"error": {"message": "slow down"}}, {"Retry-After": "1"}))
    model = make_model(tmp_path, server)
    started = time.monotonic()
    model.generate(requests_for(1))
    assert time.monotonic() - started >= 0.9
    assert server.chat_count == 2
    assert model.manifest()["generation"]["api_requests"] == 2
    assert model.completion(requests_for(1)[0]).text.startswith("def f")


def test_persistent_5xx_is_an_infrastructure_error_and_is_not_cached(tmp_path, server):
    server.script.extend([Reply(200), Reply(500, {"error": {"message": "boom"}}), Reply(503, "oops")])
    model = make_model(tmp_path, server, model_retries="1", model_concurrency="1")
    reqs = requests_for(2)
    model.generate(reqs)
    assert server.chat_count == 3  # one success, one request tried twice
    with pytest.raises(InfrastructureError, match="HTTP 503 after 1 retries"):
        model.completion(reqs[1])
    assert model.manifest()["generation"]["errors"] == 1
    again = make_model(tmp_path, server)
    again.generate(reqs)
    assert server.chat_count == 4  # the failed one is asked again, the good one is not
    assert again.completion(reqs[1]).text.startswith("def f")


def test_malformed_json_is_that_sample_s_error(tmp_path, server):
    server.script.extend([Reply(200), Reply(200, b"{not json")])
    model = make_model(tmp_path, server, model_concurrency="1")
    reqs = requests_for(2)
    model.generate(reqs)
    with pytest.raises(InfrastructureError, match="generation failed"):
        model.completion(reqs[1])


def test_slow_reply_times_out_as_an_error(tmp_path, server):
    server.script.extend([Reply(200), Reply(200, delay=2.0)])
    model = make_model(tmp_path, server, model_timeout="0.3", model_retries="0", model_concurrency="1")
    reqs = requests_for(2)
    model.generate(reqs)
    with pytest.raises(InfrastructureError, match="no answer within 0.3 s"):
        model.completion(reqs[1])


def test_requests_run_concurrently(tmp_path):
    with StubOpenAIServer(answer=lambda body: "x", delay=0.2) as server:
        model = make_model(tmp_path, server, model_concurrency="4")
        model.generate(requests_for(9))
        # 1 probing request alone, then 8 four at a time: while one is answered (0.2 s) others
        # are sent, never more than 4 (counted by the server, not timed: a loaded machine
        # must not fail this)
        assert 2 <= server.max_in_flight <= 4
        assert server.chat_count == 9


def test_two_processes_sharing_the_cache_do_not_ask_twice(tmp_path):
    with StubOpenAIServer(answer=lambda body: "x", delay=0.3) as server:
        first, second = make_model(tmp_path, server), make_model(tmp_path, server)
        reqs = requests_for(4)
        threads = [threading.Thread(target=m.generate, args=(reqs,)) for m in (first, second)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert server.chat_count == 4
        assert first.completion(reqs[2]).text == second.completion(reqs[2]).text == "x"


@pytest.mark.parametrize("mode", ["read", "off"])
def test_cache_modes_that_do_not_write(tmp_path, server, mode):
    make_model(tmp_path, server).generate(requests_for(1))  # one entry exists
    model = make_model(tmp_path, server, specbench_cache=mode)
    model.generate(requests_for(3))
    assert server.chat_count == (3 if mode == "read" else 4)
    assert model.completion(requests_for(3)[2]).text.startswith("def f")  # this process still has them
    make_model(tmp_path, server).generate(requests_for(3))
    assert server.chat_count == (5 if mode == "read" else 6)  # nothing new was stored


def test_completion_never_calls_the_api(tmp_path, server):
    model = make_model(tmp_path, server)
    with pytest.raises(SampleMissing):
        model.completion(requests_for(1)[0])
    assert server.chat_count == 0


def test_authentication_failure_is_one_option_error(tmp_path):
    with StubOpenAIServer(api_key="sk-right") as server:
        model = make_model(tmp_path, server)
        with pytest.raises(OptionError, match=r"^--model: authentication failed at .* \(HTTP 401\): Incorrect API key"):
            model.generate(requests_for(3))
        assert server.chat_count == 1  # found out with the first request, not three


def test_unknown_model_and_unreachable_endpoint_are_option_errors(tmp_path, server):
    with pytest.raises(OptionError, match="model 'gpt-nope' not found"):
        make_model(tmp_path, server, spec="openai:gpt-nope").generate(requests_for(2))
    settings = FakeSettings(tmp_path / "s2", model_base_url="http://127.0.0.1:9/v1", model_retries="0")
    with pytest.raises(OptionError, match="cannot reach http://127.0.0.1:9/v1"):
        load_model("openai:stub", settings).generate(requests_for(1))


def test_missing_key_for_api_openai_com_is_an_option_error(tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY")
    model = load_model("openai:gpt-4o", FakeSettings(tmp_path))
    with pytest.raises(OptionError, match="OPENAI_API_KEY is not set"):
        model.generate(requests_for(1))


@pytest.mark.parametrize("options, message", [
    ({"model_concurrency": "-1"}, "--model-concurrency: must be at least 1"),
    ({"model_temperature": "hot"}, "--model-temperature: expected a number"),
    ({"specbench_cache": "sometimes"}, "--specbench-cache: expected one of readwrite, read, off"),
    ({"model_retries": "-2"}, "--model-retries: must be at least 0"),
])
def test_bad_option_values_are_one_line_errors(tmp_path, options, message):
    with pytest.raises(OptionError, match=message.replace("(", r"\(")):
        load_model("openai:stub", FakeSettings(tmp_path, **options))


def test_judge_model_has_its_own_entries_and_endpoint(tmp_path, server):
    settings = FakeSettings(tmp_path / "state", model_base_url="http://127.0.0.1:9/v1",
                            judge_model="openai:stub", judge_model_base_url=server.url)
    model, judge = load_model("openai:stub", settings), load_judge_model(settings)
    assert judge.manifest()["role"] == "judge-model"
    reqs = requests_for(1)
    judge.generate(reqs)
    assert server.chat_count == 1 and judge.completion(reqs[0]).text.startswith("def f")
    assert model.key(reqs[0]) != judge.key(reqs[0])
    with pytest.raises(OptionError, match="^--judge-model: expected openai:MODEL"):
        load_model("openai:", settings, option="--judge-model")


def test_server_answers_bundled_prompts_with_the_reference():
    answers = BundledContractAnswers()
    assert len(answers.by_prompt) >= 24
    prompt, code = next(iter(answers.by_prompt.items()))
    assert code in answers({"messages": [{"role": "user", "content": prompt}]})
    assert completion_body("x")["choices"][0]["message"]["content"] == "x"


def test_time_waiting_for_a_turn_does_not_count_against_a_request_s_timeout(tmp_path):
    """Issue #32, point 9: against a server that answers one request at a time, requests
    held back by --model-concurrency=1 are timed from when each is sent, so six answers of
    0.3 s each all arrive under a 1.2 s timeout (1.8 s in all, had the wait counted: the
    fifth and sixth would time out).  Each answer has 0.9 s to spare for a loaded machine."""
    with StubOpenAIServer(answer=lambda body: "x", delay=0.3, serial=True) as server:
        model = make_model(tmp_path, server, model_concurrency="1", model_timeout="1.2", model_retries="0")
        reqs = requests_for(6)
        model.generate(reqs)
        assert server.chat_count == 6 and model.manifest()["generation"]["errors"] == 0
        assert all(model.completion(r).text == "x" for r in reqs)


def test_credentials_in_the_base_url_reach_the_server_but_nothing_written(tmp_path, server):
    secret_url = server.url.replace("http://", "http://user:s3cret@")
    model = load_model("openai:stub", FakeSettings(tmp_path / "state", model_base_url=secret_url))
    reqs = requests_for(1)
    model.generate(reqs)
    assert server.chat_count == 1
    assert "s3cret" not in json.dumps(model.manifest()) + json.dumps(model.identity())
    assert not [p for p in (tmp_path / "state").rglob("*.json") if b"s3cret" in p.read_bytes()]
