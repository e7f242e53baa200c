"""A real HTTP server that speaks enough of the OpenAI API for the tests.

``POST /v1/chat/completions`` answers from a script (a queue of canned
replies: status, body, headers, delay) and, when the script is empty, with
``answer(request_json)`` (by default the bundled ContractEval suite's canonical
program for the task the prompt asks about).  ``GET /v1/models[/{id}]`` lists
``known_models``.  ``answer`` may return a :class:`Reply` to fail one prompt.  Every request is recorded, so tests count what the client
really sent; the client itself is never patched.

Run it by hand for end-to-end trials::

    python tests/openai_server.py --port 8765 --delay 0.3 [--answer contracts]
"""
from __future__ import annotations

import argparse
import json
import sys
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Callable

REPO = Path(__file__).resolve().parents[1]
SHUTDOWN_POLL = 0.02  # seconds: how often the serving thread checks whether stop() was called


@dataclass
class Reply:
    status: int = 200
    body: Any = None          # dict (sent as JSON), str/bytes (sent as is) or None (a normal completion)
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0


def completion_body(text: str, model: str = "stub", prompt_tokens: int = 11, completion_tokens: int = 7) -> dict:
    return {
        "id": "chatcmpl-stub", "object": "chat.completion", "created": int(time.time()), "model": model,
        "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": text}}],
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                  "total_tokens": prompt_tokens + completion_tokens},
    }


class BundledContractAnswers:
    """Maps a ContractEval prompt of the bundled suite (any condition) to its task's reference."""

    def __init__(self, check: str = "functional"):
        from pytest_specbench.benchmarks.contract.contract import ADAPTER, STANDARD_INSTRUCTION

        self.by_prompt: dict[str, str] = {}
        for task in ADAPTER.load(None, None).tasks:  # the bundled suite
            row, answer = task.data, ADAPTER.reference(task, check)
            for prompt in (STANDARD_INSTRUCTION + row["original_prompt"], row.get("cs_user"), row.get("eas_user")):
                if prompt:
                    self.by_prompt[prompt] = answer

    def __call__(self, request: dict) -> str:
        user = [m["content"] for m in request.get("messages", []) if m.get("role") == "user"]
        code = self.by_prompt.get(user[-1] if user else "")
        return "I do not know this task." if code is None else f"Here it is:\n```python\n{code}\n```\n"


class _QuietDisconnects(ThreadingHTTPServer):
    """A client killed mid-request (the SIGKILL/resume tests do it on purpose)
    resets its connection; that is expected, not a traceback worth printing."""

    def handle_error(self, request, client_address):
        if isinstance(sys.exc_info()[1], (ConnectionResetError, BrokenPipeError)):
            return
        super().handle_error(request, client_address)


class StubOpenAIServer:
    def __init__(self, answer: Callable[[dict], str] | None = None, delay: float = 0.0,
                 known_models: tuple[str, ...] = ("stub",), api_key: str | None = None, port: int = 0,
                 serial: bool = False):
        self.requested_port = port  # 0: a free one
        self.answer = answer or BundledContractAnswers()
        self.delay = delay
        self.known_models = known_models
        self.api_key = api_key  # when set, other keys get 401
        # serial: answer one chat completion at a time, the others wait (queue) as on a
        # llama.cpp server with one slot.
        self._serial = threading.Lock() if serial else None
        self.script: deque[Reply] = deque()
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._httpd: ThreadingHTTPServer | None = None
        self._in_flight = 0  # chat completions being answered now
        self.max_in_flight = 0  # the most at once: how concurrent the client was (a count, not a time)

    # ---------------------------------------------------------------- control
    def start(self) -> "StubOpenAIServer":
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):  # quiet
                pass

            def do_GET(self):
                server._handle(self, "GET")

            def do_POST(self):
                server._handle(self, "POST")

        self._httpd = _QuietDisconnects(("127.0.0.1", self.requested_port), Handler)
        self._httpd.daemon_threads = True
        # shutdown() waits until serve_forever next looks at its flag: every poll_interval
        # (0.5 s by default, half a second of every test's teardown spent idle).
        threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": SHUTDOWN_POLL},
                         daemon=True).start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()

    def __enter__(self) -> "StubOpenAIServer":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    @property
    def port(self) -> int:
        return self._httpd.server_address[1]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def chat_requests(self) -> list[dict[str, Any]]:
        with self._lock:
            return [r for r in self.requests if r["path"] == "/v1/chat/completions"]

    @property
    def chat_count(self) -> int:
        return len(self.chat_requests())

    # ---------------------------------------------------------------- serving
    def _handle(self, handler: BaseHTTPRequestHandler, method: str) -> None:
        length = int(handler.headers.get("Content-Length") or 0)
        raw = handler.rfile.read(length) if length else b""
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        with self._lock:
            self.requests.append({"method": method, "path": handler.path, "body": body, "time": time.time(),
                                  "authorization": handler.headers.get("Authorization")})
            scripted = self.script.popleft() if self.script and handler.path == "/v1/chat/completions" else None
        if self.api_key is not None and handler.headers.get("Authorization") != f"Bearer {self.api_key}":
            reply = Reply(401, {"error": {"message": "Incorrect API key provided", "type": "invalid_request_error",
                                          "code": "invalid_api_key"}})
        elif scripted is not None:
            reply = scripted
        elif method == "GET" and handler.path.startswith("/v1/models"):
            reply = self._models(handler.path)
        elif method == "POST" and handler.path == "/v1/chat/completions" and isinstance(body, dict):
            if body.get("model") not in self.known_models:
                reply = Reply(404, {"error": {"message": f"The model `{body.get('model')}` does not exist",
                                              "type": "invalid_request_error", "code": "model_not_found"}})
            else:
                answer = self.answer(body)
                reply = answer if isinstance(answer, Reply) else Reply(200, completion_body(answer, body["model"]),
                                                                       delay=self.delay)
        else:
            reply = Reply(404, {"error": {"message": f"no route {method} {handler.path}"}})
        chat = handler.path == "/v1/chat/completions"
        if chat:
            with self._lock:
                self._in_flight += 1
                self.max_in_flight = max(self.max_in_flight, self._in_flight)
        try:
            if self._serial is not None and chat:
                with self._serial:
                    if reply.delay:
                        time.sleep(reply.delay)
            elif reply.delay:
                time.sleep(reply.delay)
        finally:
            if chat:
                with self._lock:
                    self._in_flight -= 1
        if reply.body is None and reply.status == 200:
            reply.body = completion_body(self.answer(body or {}))
        payload = reply.body if isinstance(reply.body, bytes) else (
            reply.body.encode() if isinstance(reply.body, str) else json.dumps(reply.body).encode())
        try:
            handler.send_response(reply.status)
            handler.send_header("Content-Type", "application/json")
            handler.send_header("Content-Length", str(len(payload)))
            for name, value in reply.headers.items():
                handler.send_header(name, value)
            handler.end_headers()
            handler.wfile.write(payload)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (timeout) or was killed

    def _models(self, path: str) -> Reply:
        parts = path.rstrip("/").split("/")
        if len(parts) == 3:
            return Reply(200, {"object": "list", "data": [{"id": m, "object": "model", "owned_by": "stub"}
                                                          for m in self.known_models]})
        if parts[-1] in self.known_models:
            return Reply(200, {"id": parts[-1], "object": "model", "owned_by": "stub"})
        return Reply(404, {"error": {"message": f"The model `{parts[-1]}` does not exist"}})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--delay", type=float, default=0.0, help="seconds before each completion")
    parser.add_argument("--answer", choices=("functional", "contract"), default="functional",
                        help="answer with the reference of this check")
    args = parser.parse_args()
    server = StubOpenAIServer(BundledContractAnswers(args.answer), delay=args.delay, port=args.port)
    server.start()
    print(server.url, flush=True)
    last = -1
    try:
        while True:
            time.sleep(0.5)
            if server.chat_count != last:
                last = server.chat_count
                print(f"chat completion requests: {last}", flush=True)
    except KeyboardInterrupt:
        server.stop()


if __name__ == "__main__":
    main()
