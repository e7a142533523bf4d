"""The emulation server: a real HTTP server on loopback speaking four providers' wire formats.

Theory of operation: a Starlette app answers the OpenAI Chat Completions,
OpenAI Responses, Anthropic Messages and Gemini endpoints. For each request it
parses the body in its dialect (:mod:`toolwire.testing._parse`), picks the turn
of the :class:`~toolwire.testing.Scenario` that the history asks for, renders it
(:class:`~toolwire.testing.encoders.Reply`) and encodes it as the provider would
(:mod:`toolwire.testing.encoders`). Faults are applied last: an HTTP error
instead of the answer, or damage to the frames (a broken chunk, an error
event) and to the bytes (a cut, slow chunks). The server keeps no conversation
state; the only state is the attempt counter per request body, which makes a
client's retry of the same request its next attempt.

:class:`EmulationServer` is a :class:`~toolwire.testing._serving.LoopbackServer`:
uvicorn in a background thread on a socket it binds itself, returning from
``start()`` only once uvicorn reports that it is serving (no sleeps).
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
from pydantic import ValidationError
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from toolwire import _json
from toolwire.errors import UsageError
from toolwire.testing._guard import ServerLimits
from toolwire.testing._parse import API_NAMES, BadRequest, ParsedRequest, parse_request
from toolwire.testing._serving import LoopbackServer, is_loopback
from toolwire.testing.encoders import (
    ENCODERS,
    Encoder,
    GeminiEncoder,
    Reply,
    ReplyCall,
)
from toolwire.testing.scenario import (
    Fault,
    ResultLookup,
    Scenario,
    ScenarioError,
    Turn,
    builtin_names,
    substitute,
    substitute_value,
)

__all__ = ["FAULT_HEADER", "EmulationServer", "build_app", "is_loopback", "load_scenario"]

FAULT_HEADER = "x-toolwire-fault"
"""Request header forcing a fault (a :class:`Fault` as JSON) on that one request."""


def load_scenario(scenario: Scenario | str | Path | dict[str, Any]) -> Scenario:
    """A scenario from an object, a built-in name, a file path (JSON or YAML) or
    its JSON shape. A file of the name wins over a built-in scenario.

    Raises:
        ScenarioError: the scenario cannot be found or is invalid.
    """
    if isinstance(scenario, Scenario):
        return scenario
    if isinstance(scenario, dict):
        return Scenario.from_dict(scenario)
    if isinstance(scenario, str) and not Path(scenario).exists():
        if scenario in builtin_names():
            return Scenario.builtin(scenario)
        raise ScenarioError(
            f"no scenario {scenario!r}: neither a file nor a built-in scenario "
            f"(built-in: {', '.join(builtin_names())})"
        )
    return Scenario.from_file(scenario)


class _WireResponse(Response):
    """Sends prepared chunks one by one, with delays, and can hang up mid-body."""

    def __init__(
        self,
        chunks: list[bytes],
        *,
        status: int,
        headers: dict[str, str],
        delay: float = 0.0,
        cut_after: int | None = None,
    ) -> None:
        # Response.__init__ would render a body and a Content-Length; the
        # headers here are complete as given.
        self.chunks = chunks
        self.status_code = status
        self.delay = delay
        self.cut_after = cut_after
        self.background = None
        self.raw_headers = [(k.encode("latin-1"), v.encode("latin-1")) for k, v in headers.items()]

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await send(
            {"type": "http.response.start", "status": self.status_code, "headers": self.raw_headers}
        )
        sent = 0
        for n, chunk in enumerate(self.chunks):
            if n and self.delay:
                await anyio.sleep(self.delay)
            if self.cut_after is not None and sent + len(chunk) >= self.cut_after:
                part = chunk[: self.cut_after - sent]
                if part:
                    await send({"type": "http.response.body", "body": part, "more_body": True})
                # Returning without the final empty body makes uvicorn close the
                # connection: the client sees a truncated chunked body.
                return
            await send({"type": "http.response.body", "body": chunk, "more_body": True})
            sent += len(chunk)
        await send({"type": "http.response.body", "body": b"", "more_body": False})


def _prompt_size(body: bytes) -> int:
    """The size of a request's prompt, for its token count: the body without
    the fields that say how to answer, not what (``stream``), so that the
    same turn asked streamed or whole counts the same tokens."""
    try:
        data = _json.loads(body)
    except (_json.JSONDecodeError, ValueError):
        return len(body)
    if not isinstance(data, dict):
        return len(body)
    for key in ("stream", "stream_options"):
        data.pop(key, None)
    return len(_json.dumps(data).encode())


def _render(turn: Turn, request: ParsedRequest, *, input_tokens: int) -> Reply:
    """Substitute templates and serialize arguments.

    Raises:
        ScenarioError: a template names a tool result the request does not carry.
    """
    lookup = ResultLookup(
        [(r.name, r.content) for r in request.latest_results],
        [(r.name, r.content) for r in request.results],
    )
    calls: list[ReplyCall] = []
    for index, call in enumerate(turn.tool_calls):
        if isinstance(call.arguments, str):
            raw = substitute(call.arguments, lookup)
            try:
                parsed = _json.loads(raw)
            except _json.JSONDecodeError:
                parsed = None
            arguments = parsed if isinstance(parsed, dict) else None
        else:
            arguments = substitute_value(call.arguments, lookup)
            raw = _json.dumps(arguments)
        calls.append(ReplyCall(index=index, name=call.name, raw_arguments=raw, arguments=arguments))
    return Reply(
        request=request,
        turn=request.assistant_turns,
        reasoning=substitute(turn.reasoning, lookup),
        text=substitute(turn.text, lookup),
        calls=tuple(calls),
        chunk_size=turn.chunk_size,
        created=int(time.time()),
        input_tokens=max(1, input_tokens),
    )


_MAX_COUNTED_BODIES = 10_000
"""Distinct request bodies whose attempts are counted (for faults), at most."""


class RecentRequests(list[Any]):
    """A list that keeps only the latest ``limit`` items appended to it."""

    def __init__(self, limit: int) -> None:
        super().__init__()
        self.limit = limit

    def append(self, item: Any) -> None:
        """Add ``item``, dropping the oldest beyond the limit."""
        super().append(item)
        if len(self) > self.limit:
            del self[: len(self) - self.limit]


class _Handler:
    """The request handling shared by every route; holds the per-server state."""

    label = "emulation server"

    def __init__(
        self,
        scenario: Scenario,
        requests: list[Any],
        log: Callable[[str], None] | None,
    ) -> None:
        self.scenario = scenario
        self.requests = requests
        self.log = log
        self.attempts: dict[str, int] = {}
        self.lock = threading.Lock()

    def _attempt(self, path: str, body: bytes) -> int:
        key = hashlib.sha256(path.encode() + b"\0" + body).hexdigest()
        with self.lock:
            attempt = self.attempts.pop(key, 0)
            self.attempts[key] = attempt + 1  # the newest last
            if len(self.attempts) > _MAX_COUNTED_BODIES:  # forget the oldest
                del self.attempts[next(iter(self.attempts))]
        return attempt

    def _record(self, body: bytes) -> None:
        try:
            self.requests.append(_json.loads(body))
        except _json.JSONDecodeError:
            self.requests.append(body.decode("utf-8", "replace"))

    @staticmethod
    def _headers(encoder: Encoder, media_type: str, request_seed: str) -> dict[str, str]:
        rid = hashlib.sha256(request_seed.encode()).hexdigest()[:24]
        name = "request-id" if encoder.api == "anthropic-messages" else "x-request-id"
        return {"content-type": media_type, name: f"req_{rid}"}

    def _error(
        self,
        encoder: Encoder,
        status: int,
        message: str,
        *,
        retry_after: float | None = None,
        seed: str = "",
    ) -> _WireResponse:
        body = encoder.dumps_body(encoder.error_body(status, message))
        headers = self._headers(encoder, encoder.json_media_type, seed or message)
        headers["content-length"] = str(len(body))
        if retry_after is not None:
            seconds = int(retry_after) if float(retry_after).is_integer() else retry_after
            headers["retry-after"] = str(seconds)
            headers["retry-after-ms"] = str(round(retry_after * 1000))
        return _WireResponse([body], status=status, headers=headers)

    def _log(self, line: str) -> None:
        if self.log is not None:
            self.log(line)

    async def replay(self, request: Request) -> Response:
        """Every request gets the recorded bytes."""
        self._record(await request.body())
        path = self.scenario.replay
        assert path is not None
        data = path.read_bytes()
        media = "text/event-stream; charset=utf-8"
        stripped = data.lstrip()
        if stripped.startswith(b"["):
            media = "application/json; charset=UTF-8"
        elif stripped.startswith(b"{"):
            media = "application/x-ndjson"
        self._log(f"{request.method} {request.url.path} 200 replay {path.name}")
        return _WireResponse(
            [data], status=200, headers={"content-type": media, "content-length": str(len(data))}
        )

    async def handle(
        self,
        request: Request,
        api: str,
        encoder: Encoder,
        *,
        model: str | None = None,
        stream: bool | None = None,
    ) -> Response:
        """Answer one request of dialect ``api``."""
        body = await request.body()
        self._record(body)
        path = request.url.path
        attempt = self._attempt(path, body)
        seed = f"{path}:{attempt}:{hashlib.sha256(body).hexdigest()}"

        forced: Fault | None = None
        header = request.headers.get(FAULT_HEADER)
        if header is not None:
            try:
                forced = Fault.model_validate(_json.loads(header))
            except (_json.JSONDecodeError, ValidationError) as exc:
                self._log(f"POST {path} 400 bad {FAULT_HEADER} header")
                return self._error(encoder, 400, f"invalid {FAULT_HEADER} header: {exc}")

        try:
            parsed = parse_request(api, body, model=model, stream=stream)
            turn = self.scenario.turn_for(
                parsed.assistant_turns, last_results_have_error=parsed.latest_has_error
            )
            reply = _render(turn, parsed, input_tokens=_prompt_size(body) // 4)
        except (BadRequest, ScenarioError) as exc:
            message = exc.message
            if isinstance(exc, ScenarioError):  # the script, not the request, is at odds
                message = f"scenario {self.scenario.name!r} cannot answer this request: {message}"
            self._log(f"POST {path} 400 {message}")
            return self._error(encoder, 400, message, seed=seed)

        fault = forced
        if fault is None and attempt < len(turn.faults):
            fault = turn.faults[attempt]
        label = f"turn {parsed.assistant_turns + 1}, attempt {attempt + 1}"

        if fault is not None and fault.status is not None:
            self._log(f"POST {path} {fault.status} fault ({label})")
            return self._error(
                encoder,
                fault.status,
                fault.message or _DEFAULT_MESSAGES.get(fault.status, "Injected server error."),
                retry_after=fault.retry_after,
                seed=seed,
            )

        delay = turn.delay
        if fault is not None and fault.slow_chunk_delay is not None:
            delay = fault.slow_chunk_delay
        cut_after = fault.cut_after_bytes if fault is not None else None

        if parsed.stream:
            chunks = self._stream_chunks(encoder, reply, fault)
            headers = self._headers(encoder, encoder.stream_media_type, seed)
            headers["cache-control"] = "no-cache"
        else:
            if fault is not None and fault.error_event is not None:
                # A non-streaming answer has no room for an event: the error
                # becomes the HTTP answer.
                status = int(fault.error_event.get("status", 500))
                message = str(fault.error_event.get("message", "Injected server error."))
                self._log(f"POST {path} {status} fault ({label})")
                return self._error(encoder, status, message, seed=seed)
            try:
                data = encoder.dumps_body(encoder.body(reply))
            except ValueError as exc:
                self._log(f"POST {path} 500 {exc}")
                return self._error(encoder, 500, str(exc), seed=seed)
            if fault is not None and fault.malformed_json:
                data = data[: len(data) // 2]
            chunks = [data]
            headers = self._headers(encoder, encoder.json_media_type, seed)
            if cut_after is None:
                headers["content-length"] = str(len(data))
        kind = "stream" if parsed.stream else "json"
        faulted = " with fault" if fault is not None else ""
        self._log(f"POST {path} 200 {kind} ({label}){faulted}")
        return _WireResponse(chunks, status=200, headers=headers, delay=delay, cut_after=cut_after)

    @staticmethod
    def _stream_chunks(encoder: Encoder, reply: Reply, fault: Fault | None) -> list[bytes]:
        frames = encoder.stream(reply)
        broken: int | None = None
        if fault is not None and fault.error_event is not None:
            at = fault.at_chunk if fault.at_chunk is not None else len(frames) // 2
            at = min(at, len(frames))
            frames = [*frames[:at], encoder.error_frame(dict(fault.error_event), at)]
        if fault is not None and fault.malformed_json:
            # Never break the [DONE] marker or the ping: they are not JSON objects.
            candidates = [i for i, f in enumerate(frames) if f.raw is None]
            at = fault.at_chunk if fault.at_chunk is not None else len(frames) // 2
            broken = min(candidates, key=lambda i: abs(i - at)) if candidates else None
        chunks = [encoder.frame(f, i, broken=i == broken) for i, f in enumerate(frames)]
        trailer = encoder.trailer()
        if trailer:
            chunks[-1] += trailer
        return chunks


_DEFAULT_MESSAGES = {
    400: "Invalid request.",
    401: "Invalid API key.",
    404: "Not found.",
    429: "Rate limit reached for requests. Please try again shortly.",
    500: "The server had an error while processing your request.",
    502: "Bad gateway.",
    503: "The service is temporarily overloaded.",
    529: "Overloaded",
}


def build_app(
    scenario: Scenario,
    *,
    requests: list[Any] | None = None,
    log: Callable[[str], None] | None = None,
) -> Starlette:
    """The Starlette app of the emulation server.

    Args:
        scenario: what to answer.
        requests: a list to which every received request body is appended.
        log: called with one line per request (never with headers or keys).
    """
    handler = _Handler(scenario, requests if requests is not None else [], log)
    if scenario.replay is not None:
        return Starlette(routes=[Route("/{path:path}", handler.replay, methods=["POST", "GET"])])

    async def openai_chat(request: Request) -> Response:
        return await handler.handle(request, "openai-chat", ENCODERS["openai-chat"]())

    async def openai_responses(request: Request) -> Response:
        return await handler.handle(request, "openai-responses", ENCODERS["openai-responses"]())

    async def anthropic_messages(request: Request) -> Response:
        return await handler.handle(request, "anthropic-messages", ENCODERS["anthropic-messages"]())

    async def gemini(request: Request) -> Response:
        target = request.path_params["target"]
        model, _, method = target.rpartition(":")
        sse = request.query_params.get("alt") == "sse"
        encoder = GeminiEncoder(sse=sse)
        if method == "streamGenerateContent":
            return await handler.handle(request, "gemini", encoder, model=model, stream=True)
        if method == "generateContent":
            return await handler.handle(request, "gemini", encoder, model=model, stream=False)
        return handler._error(encoder, 404, f"method {method!r} not found for model {model!r}")

    async def unknown(request: Request) -> Response:
        path = request.url.path
        if path.startswith(("/v1beta", "/v1/models")):
            encoder: Encoder = GeminiEncoder()
        elif "messages" in path:
            encoder = ENCODERS["anthropic-messages"]()
        else:
            encoder = ENCODERS["openai-chat"]()
        message = (
            f"no endpoint {request.method} {path}; this server answers POST "
            "/v1/chat/completions, /v1/responses, /v1/messages and "
            "/v1beta/models/{model}:streamGenerateContent or :generateContent"
        )
        handler._log(f"{request.method} {path} 404")
        return handler._error(encoder, 404, message)

    return Starlette(
        routes=[
            Route("/v1/chat/completions", openai_chat, methods=["POST"]),
            Route("/chat/completions", openai_chat, methods=["POST"]),
            Route("/v1/responses", openai_responses, methods=["POST"]),
            Route("/v1/messages", anthropic_messages, methods=["POST"]),
            Route("/v1beta/models/{target:path}", gemini, methods=["POST"]),
            Route("/v1/models/{target:path}", gemini, methods=["POST"]),
            Route("/{path:path}", unknown, methods=["GET", "POST", "PUT", "DELETE", "PATCH"]),
        ]
    )


_API_ALIASES = {
    "openai": "openai-chat",
    "openai-chat": "openai-chat",
    "openai-responses": "openai-responses",
    "anthropic": "anthropic-messages",
    "anthropic-messages": "anthropic-messages",
    "gemini": "gemini",
}


class EmulationServer(LoopbackServer):
    """A real HTTP server on loopback answering as OpenAI, Anthropic and Gemini do.

    Use it as a context manager (sync or async)::

        with EmulationServer(Scenario.builtin("weather")) as server:
            client = openai.OpenAI(base_url=server.url_for("openai-chat"), api_key="x")

    Args:
        scenario: a :class:`Scenario`, a built-in scenario name, a path to a
            scenario JSON file or a recorded ``.sse`` body, or the JSON shape.
        host: the interface to listen on; loopback unless ``allow_remote``.
        port: the port; 0 picks a free one.
        allow_remote: permit a non-loopback ``host``.
        log: called with one line per request (method, path, status; never
            headers, so never an API key).
        limits: what it accepts from clients (request bodies up to 32 MiB,
            open connections, head and idle timeouts: see
            :class:`~toolwire.testing.ServerLimits`).
        max_recorded_requests: how many of the latest request bodies
            :attr:`requests` keeps.

    Raises:
        UsageError: ``host`` is not loopback and ``allow_remote`` is False.
        ScenarioError: the scenario cannot be loaded.
    """

    label = "emulation server"

    def __init__(
        self,
        scenario: Scenario | str | Path | dict[str, Any],
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        allow_remote: bool = False,
        log: Callable[[str], None] | None = None,
        limits: ServerLimits | None = None,
        max_recorded_requests: int = 1_000,
    ) -> None:
        self.scenario = load_scenario(scenario)
        self.requests: list[Any] = RecentRequests(max_recorded_requests)
        """The latest request bodies received (parsed JSON), in arrival order."""
        app = build_app(self.scenario, requests=self.requests, log=log)
        super().__init__(app, host=host, port=port, allow_remote=allow_remote, limits=limits)

    def __repr__(self) -> str:
        state = self.base_url if self._socket is not None else "stopped"
        return f"<EmulationServer {self.scenario.name!r} {state}>"

    def url_for(self, api: str) -> str:
        """The base URL an SDK of ``api`` wants.

        ``openai-chat``/``openai-responses`` (or ``openai``): ``.../v1``;
        ``anthropic-messages`` (or ``anthropic``): the root; ``gemini``:
        ``.../v1beta`` (the API version is part of the base URL, as in
        :class:`toolwire.providers.Gemini`).

        Raises:
            UsageError: unknown API name.
        """
        name = _API_ALIASES.get(api)
        if name is None:
            raise UsageError(f"unknown API {api!r}; known: {', '.join(API_NAMES)}")
        if name.startswith("openai"):
            return self.base_url + "/v1"
        if name == "gemini":
            return self.base_url + "/v1beta"
        return self.base_url
