"""Fixtures of the opt-in ``realmodel`` tests (``SPECBENCH_REAL_MODEL=1 pytest -m realmodel``).

``real_model``: one real OpenAI-compatible server per session (``realmodel_server.py``: SmolLM2-135M
under llama-cpp-python, on a free 127.0.0.1 port, in its own process group), behind a
recording relay (``tests/openai_server.py`` forwarding each request as is), so the tests
count what the plugin really sent while the answers, ``usage`` and ``finish_reason`` stay
the real server's.  ``SPECBENCH_REALMODEL_URL=http://127.0.0.1:PORT/v1`` uses a server you
run yourself instead (it must serve a model named ``smollm2``).
"""
from __future__ import annotations

import json
import os
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import pytest

from openai_server import Reply, StubOpenAIServer

from realmodel_server import MODEL_ALIAS, RealModelServer, SetupError


@dataclass
class RealModel:
    url: str          # the relay's base URL: give it to --model-base-url / --judge-model-base-url
    relay: StubOpenAIServer
    name: str = MODEL_ALIAS

    def chats(self) -> list[dict]:
        return [r["body"] for r in self.relay.chat_requests()]


def _forwarder(upstream: str):
    def forward(body: dict) -> Reply:
        request = urllib.request.Request(f"{upstream}/chat/completions", data=json.dumps(body).encode(),
                                         headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=900) as reply:
                return Reply(reply.status, json.loads(reply.read()))
        except urllib.error.HTTPError as exc:
            return Reply(exc.code, exc.read().decode(errors="replace") or {"error": {"message": str(exc)}})

    return forward


@pytest.fixture(scope="session")
def real_model(tmp_path_factory):
    given = os.environ.get("SPECBENCH_REALMODEL_URL", "").rstrip("/")
    server = None
    if not given:
        server = RealModelServer(tmp_path_factory.mktemp("realmodel") / "server.log")
        try:
            server.start()
        except SetupError as exc:
            pytest.fail(f"realmodel: {exc}", pytrace=False)
    relay = StubOpenAIServer(answer=_forwarder(given or server.url), known_models=(MODEL_ALIAS,)).start()
    try:
        yield RealModel(relay.url, relay)
    finally:
        relay.stop()
        if server is not None:
            server.stop()
