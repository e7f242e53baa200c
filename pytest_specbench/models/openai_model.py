"""``--model=openai:MODEL``: any server that speaks the OpenAI chat completions API.

The official ``openai`` client does the HTTP work: its timeout is
``--model-timeout`` per attempt, and it retries 408/409/429/5xx answers and
connection errors up to ``--model-retries`` times with exponential backoff,
waiting what a ``Retry-After`` header asks for (up to 120 s; a longer wait is
not retried and the sample is an error).  The endpoint is ``--model-base-url``,
else ``$OPENAI_BASE_URL``, else api.openai.com; the key is ``$OPENAI_API_KEY``
(a local server without authentication needs none).
"""
from __future__ import annotations

import os
import threading
from typing import Any, Mapping
from urllib.parse import urlsplit

from ..errors import OptionError
from .base import GenerationRequest
from .cache import CachingModel, FatalModelError
from .endpoints import redact_url

OPENAI_DEFAULT_BASE_URL = "https://api.openai.com/v1"
# Structured output (--judge-model-structured=on), in the order they are tried: OpenAI's and
# vLLM's json_schema; llama-cpp-python's server, which answers that form with HTTP 500, takes
# json_object with a schema and enforces it with a grammar.  "none": the endpoint took neither.
STRUCTURED_FORMS = ("json_schema", "json_object")
# Answers meaning "not this response_format" (bad request, unprocessable, a server error,
# not implemented): the next form is tried.
_FORM_REFUSED = (400, 422, 500, 501)


class OpenAIModel(CachingModel):
    kind = "openai"

    def __init__(self, name: str, settings: Any, option: str = "--model"):
        super().__init__(f"openai:{name}", settings, option)
        self.name = name
        # The URL as given goes to the client only (it may carry credentials); base_url, in
        # identities, cache entries, manifests and messages, is its redacted form (endpoints.py).
        self._client_url = (self.options.base_url or os.environ.get("OPENAI_BASE_URL") or OPENAI_DEFAULT_BASE_URL).rstrip("/")
        self.base_url = redact_url(self._client_url)
        self._client = None
        self._client_lock = threading.Lock()
        self.structured_form: str | None = None  # found by the first structured request (STRUCTURED_FORMS)
        self._form_lock = threading.Lock()

    def identity(self) -> dict[str, Any]:
        return {"model": self.name, "endpoint": self.base_url}

    def manifest(self) -> dict[str, Any]:
        manifest = super().manifest()
        manifest["endpoint"] = urlsplit(self.base_url).netloc  # host:port only (base_url has no credentials)
        return manifest

    def before_first_call(self) -> None:
        self.client()

    def check_reachable(self) -> None:
        """Ask the server about the model (``GET /models/NAME``: free, no tokens), so
        that a wrong URL, key or model name is one usage error before any item runs
        instead of an error on every item.  A server without that route is let be."""
        # No retries: a port with nothing listening is one line within a second, not
        # ~30 s of backoff; an answer that is not a clear verdict lets the run go on.
        client = self.client().with_options(max_retries=0, timeout=min(self.options.timeout, 30.0))
        counted = self.stats.api_requests
        try:
            self._check_model(client)
        finally:  # api_requests counts what generation may bill; this look-up is free
            with self.stats.lock:
                self.stats.api_requests = counted

    def _check_model(self, client) -> None:
        import openai

        try:
            client.models.retrieve(self.name)
        except openai.AuthenticationError as exc:
            raise OptionError(self.option, f"authentication failed at {self.base_url} (HTTP 401): {_message(exc)}") from None
        except openai.PermissionDeniedError as exc:
            raise OptionError(self.option, f"access denied at {self.base_url} (HTTP 403): {_message(exc)}") from None
        except openai.NotFoundError as exc:
            if "model" in _message(exc).lower():
                raise OptionError(self.option, f"model {self.name!r} not found at {self.base_url}: {_message(exc)}") from None
            self._check_listed(client)  # no GET /models/NAME route: the list, if there is one
        except openai.APITimeoutError:
            return
        except openai.APIConnectionError as exc:
            cause = exc.__cause__ or exc
            raise OptionError(self.option, f"cannot reach {self.base_url}: {type(cause).__name__}: {cause}"[:300]) from None
        except openai.APIError:
            return

    def _check_listed(self, client) -> None:
        import openai

        try:
            names = [m.id for m in client.models.list()]
        except openai.APIError:
            return
        if names and self.name not in names:
            shown = ", ".join(sorted(names)[:10]) + (" ..." if len(names) > 10 else "")
            raise OptionError(self.option, f"model {self.name!r} not found at {self.base_url} (it serves: {shown})")

    def client(self):
        with self._client_lock:
            if self._client is None:
                import openai

                key = os.environ.get("OPENAI_API_KEY")
                if not key and self._client_url == OPENAI_DEFAULT_BASE_URL:
                    raise OptionError(self.option, "OPENAI_API_KEY is not set")

                def count_request(_request: Any) -> None:
                    with self.stats.lock:
                        self.stats.api_requests += 1

                # A request's timeout runs from when it is sent: waiting for a free connection
                # (pool=None) does not count, as waiting in generate's thread pool
                # (--model-concurrency) or on another process's cache lock does not.  Time a
                # request spends queued *inside the server* does count (the client cannot see
                # it): against a server that answers one request at a time, use
                # --model-concurrency=1 (README, "Models and roles").
                self._client = openai.OpenAI(
                    api_key=key or "unused",  # servers without authentication ignore it
                    base_url=self._client_url, timeout=openai.Timeout(self.options.timeout, pool=None),
                    max_retries=self.options.retries,
                    # Counts every HTTP attempt, retries included: what the provider may bill.
                    http_client=openai.DefaultHttpxClient(event_hooks={"request": [count_request]}))
            return self._client

    def call(self, request: GenerationRequest, parameters: Mapping[str, Any],
             schema: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """Ask the model; with ``schema``, as structured output in the first form of
        :data:`STRUCTURED_FORMS` the endpoint takes (found once, then kept)."""
        import openai

        extra = {} if parameters.get("seed") is None else {"seed": parameters["seed"]}
        messages = [{"role": m.role, "content": m.content} for m in request.prompt.messages]
        try:
            if schema is None:
                response = self.client().chat.completions.create(
                    model=self.name, messages=messages,
                    temperature=parameters["temperature"], max_tokens=parameters["max_tokens"], **extra)
            else:
                response = self._structured(messages, parameters, extra, schema)
        except openai.AuthenticationError as exc:
            raise FatalModelError(f"authentication failed at {self.base_url} (HTTP 401): {_message(exc)}") from None
        except openai.PermissionDeniedError as exc:
            raise FatalModelError(f"access denied at {self.base_url} (HTTP 403): {_message(exc)}") from None
        except openai.NotFoundError as exc:
            raise FatalModelError(f"model {self.name!r} not found at {self.base_url} (HTTP 404): {_message(exc)}") from None
        except openai.APITimeoutError:
            raise  # slow, not unreachable: this sample's error
        except openai.APIConnectionError as exc:
            cause = exc.__cause__ or exc
            raise FatalModelError(f"cannot reach {self.base_url}: {type(cause).__name__}: {cause}"[:300]) from None
        choices = getattr(response, "choices", None)
        if not choices or getattr(choices[0], "message", None) is None:
            raise ValueError(f"the server's answer has no choices[0].message: {str(response)[:200]}")
        usage = getattr(response, "usage", None)
        return {
            "text": choices[0].message.content or "",
            "finish_reason": choices[0].finish_reason,
            "response_model": getattr(response, "model", None),
            "usage": {k: getattr(usage, k, None) for k in ("prompt_tokens", "completion_tokens", "total_tokens")}
            if usage is not None else {},
        }

    def _structured(self, messages: list, parameters: Mapping[str, Any], extra: dict, schema: Mapping[str, Any]):
        import openai

        def create(form: str, client: Any):
            fmt = response_format(form, schema)
            return client.chat.completions.create(
                model=self.name, messages=messages, temperature=parameters["temperature"],
                max_tokens=parameters["max_tokens"], **extra, **({"response_format": fmt} if fmt else {}))

        if self.structured_form is not None:
            return create(self.structured_form, self.client())
        with self._form_lock:  # the first structured request finds the form; the others wait for it
            if self.structured_form is not None:
                return create(self.structured_form, self.client())
            probe = self.client().with_options(max_retries=0)  # a refused form is answered at once, not retried
            for form in STRUCTURED_FORMS:
                try:
                    response = create(form, probe)
                except openai.APIStatusError as exc:
                    if exc.status_code in _FORM_REFUSED:
                        continue
                    response = create(form, self.client())  # busy, say: this form, with the usual retries
                self.structured_form = form
                return response
            self.structured_form = "none"
        return create("none", self.client())

    def describe_error(self, exc: BaseException) -> str:
        import openai

        if isinstance(exc, openai.APIStatusError):
            retried = exc.status_code in (408, 409, 429) or exc.status_code >= 500
            after = f" after {self.options.retries} retries" if retried else ""
            return f"HTTP {exc.status_code}{after}: {_message(exc)}"
        if isinstance(exc, openai.APITimeoutError):
            return f"no answer within {self.options.timeout:g} s (after {self.options.retries} retries)"
        return f"{type(exc).__name__}: {str(exc)[:200]}"


def response_format(form: str, schema: Mapping[str, Any]) -> dict[str, Any] | None:
    """The ``response_format`` of a structured request in one of :data:`STRUCTURED_FORMS`."""
    if form == "json_schema":
        # OpenAI's strict mode takes a subset of JSON Schema: no length bounds (the reader
        # checks counts anyway); every property required, no others (the schemas say so).
        return {"type": "json_schema", "json_schema": {"name": "verdict", "strict": True,
                                                       "schema": _strict_subset(schema)}}
    if form == "json_object":
        return {"type": "json_object", "schema": dict(schema)}
    return None


def _strict_subset(schema: Any) -> Any:
    if isinstance(schema, Mapping):
        return {k: _strict_subset(v) for k, v in schema.items() if k not in ("minItems", "maxItems")}
    if isinstance(schema, list):
        return [_strict_subset(v) for v in schema]
    return schema


def _message(exc: Any) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and inner.get("message"):
            return str(inner["message"])[:200]
    return str(getattr(exc, "message", exc))[:200]


def openai_factory(arg: str, settings: Any, option: str = "--model") -> OpenAIModel:
    if not arg:
        raise OptionError(option, "expected openai:MODEL (the model name the server knows)")
    return OpenAIModel(arg, settings, option)
