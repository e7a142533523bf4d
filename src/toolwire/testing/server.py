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

from collections.abc import Callable
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from toolwire.errors import UsageError
from toolwire.http import RateLimit
from toolwire.testing._guard import ServerLimits
from toolwire.testing._handler import FAULT_HEADER, Handler, RecentRequests
from toolwire.testing._ratelimit import ServerRateLimit
from toolwire.testing._serving import LoopbackServer, is_loopback
from toolwire.testing.encoders import (
    ENCODERS,
    Encoder,
    GeminiEncoder,
)
from toolwire.testing.scenario import (
    Scenario,
    ScenarioError,
    builtin_names,
)
from toolwire.types import PROVIDER_DIALECTS

__all__ = ["FAULT_HEADER", "EmulationServer", "build_app", "is_loopback", "load_scenario"]


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


def build_app(
    scenario: Scenario,
    *,
    requests: list[Any] | None = None,
    log: Callable[[str], None] | None = None,
    rate_limit: ServerRateLimit | None = None,
) -> Starlette:
    """The Starlette app of the emulation server.

    Args:
        scenario: what to answer.
        requests: a list to which every received request body is appended.
        log: called with one line per request (never with headers or keys).
        rate_limit: answer 429 past this many requests per minute.
    """
    handler = Handler(scenario, requests if requests is not None else [], log, rate_limit)
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
        rate_limit: enforce a :class:`~toolwire.http.RateLimit` (or a
            :class:`~toolwire.testing.ServerRateLimit` with its own clock):
            429s with ``retry-after`` past it, rate-limit headers on every
            answer (see :attr:`rate_limit` for what it admitted).

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
        rate_limit: RateLimit | ServerRateLimit | None = None,
    ) -> None:
        self.scenario = load_scenario(scenario)
        self.requests: list[Any] = RecentRequests(max_recorded_requests)
        """The latest request bodies received (parsed JSON), in arrival order."""
        if isinstance(rate_limit, RateLimit):
            rate_limit = ServerRateLimit(rate_limit)
        self.rate_limit = rate_limit
        """What the server admits per minute, and what it admitted (``None``: everything)."""
        app = build_app(self.scenario, requests=self.requests, log=log, rate_limit=rate_limit)
        super().__init__(app, host=host, port=port, allow_remote=allow_remote, limits=limits)

    def __repr__(self) -> str:
        state = self.base_url if self._socket is not None else "stopped"
        return f"<EmulationServer {self.scenario.name!r} {state}>"

    def url_for(self, dialect: str) -> str:
        """The base URL an SDK of ``dialect`` wants.

        ``openai-chat``/``openai-responses`` (or ``openai``): ``.../v1``;
        ``anthropic-messages`` (or ``anthropic``): the root; ``gemini``:
        ``.../v1beta`` (the API version is part of the base URL, as in
        :class:`toolwire.providers.Gemini`).

        Raises:
            UsageError: an unknown dialect.
        """
        name = _API_ALIASES.get(dialect)
        if name is None:
            raise UsageError(f"unknown dialect {dialect!r}; known: {', '.join(PROVIDER_DIALECTS)}")
        if name.startswith("openai"):
            return self.base_url + "/v1"
        if name == "gemini":
            return self.base_url + "/v1beta"
        return self.base_url
