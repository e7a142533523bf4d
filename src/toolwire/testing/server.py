"""The emulation server: a real HTTP server on loopback speaking the providers' wire formats.

Theory of operation: a Starlette app answers the routes of every registered
dialect that has an encoder (:mod:`toolwire.stream.codecs`: OpenAI Chat
Completions, OpenAI Responses, Anthropic Messages, Gemini, Bedrock's Converse
and InvokeModel in AWS's event stream, Gemini Interactions). For each request it
parses the body in its dialect (the dialect's ``decode_request``), picks the turn
of the :class:`~toolwire.testing.Scenario` that the history asks for, renders it
(:class:`~toolwire.testing.encoders.Reply`) and encodes it as the provider would
(the dialect's ``encoder``). Faults are applied last: an HTTP error
instead of the answer, or damage to the frames (a broken chunk, an error
event) and to the bytes (a cut, slow chunks). The server keeps no conversation
state; the only state is the attempt counter per request body, which makes a
client's retry of the same request its next attempt, and the streams a
provider keeps (a Responses background response, a Gemini interaction), sent
again after an event by a GET on the dialect's ``continuation_routes``
(:mod:`toolwire.testing._kept`).

:class:`EmulationServer` is a :class:`~toolwire.testing.serving.LoopbackServer`:
uvicorn in a background thread on a socket it binds itself, returning from
``start()`` only once uvicorn reports that it is serving (no sleeps).
"""

from __future__ import annotations

import importlib.util
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any, ClassVar

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from toolwire import _compat
from toolwire.errors import UsageError
from toolwire.http import RateLimit
from toolwire.stream.codecs import WireDialect, registered
from toolwire.stream.codecs.emulation import Encoder
from toolwire.testing._guard import ServerLimits
from toolwire.testing._handler import FAULT_HEADER, Handler, RecentRequests
from toolwire.testing._kept import KeptStreams
from toolwire.testing._ratelimit import ServerRateLimit
from toolwire.testing._socket import SocketFaults, socket_routes
from toolwire.testing.scenario import (
    Scenario,
    ScenarioError,
    builtin_names,
)
from toolwire.testing.serving import LoopbackServer, is_loopback

_WEBSOCKETS = "wsproto" if importlib.util.find_spec("wsproto") else "none"
"""uvicorn's WebSocket protocol: wsproto's, when the ``websocket`` extra is installed."""

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
    kept: KeptStreams | None = None,
    continuations: list[Any] | None = None,
    socket_faults: SocketFaults | None = None,
    sockets: list[Any] | None = None,
) -> Starlette:
    """The Starlette app of the emulation server.

    Args:
        scenario: what to answer.
        requests: a list to which every received request body is appended.
        log: called with one line per request (never with headers or keys).
        rate_limit: answer 429 past this many requests per minute.
        kept: where kept streams wait for their continuations.
        continuations: a list to which every continuation of a kept stream
            (``stream_id``, ``after``) is appended.
        socket_faults: what the WebSocket routes do wrong on purpose.
        sockets: a list to which each WebSocket connection's log is appended.
    """
    handler = Handler(
        scenario,
        requests if requests is not None else [],
        log,
        rate_limit,
        kept=kept,
        continuations=continuations,
    )
    if scenario.replay is not None:
        return Starlette(routes=[Route("/{path:path}", handler.replay, methods=["POST", "GET"])])

    spoken = [d for d in registered() if d.encoder is not None and d.routes]
    routes: list[BaseRoute] = [
        Route(path, _endpoint(handler, d), methods=["POST"]) for d in spoken for path in d.routes
    ]
    routes += [
        Route(path, _continuation(handler, d), methods=["GET"])
        for d in spoken
        for path in d.continuation_routes
    ]
    faults = socket_faults or SocketFaults()
    routes += socket_routes(handler, faults, sockets if sockets is not None else [])
    endpoints = ", ".join(d.routes[0] for d in spoken)

    async def unknown(request: Request) -> Response:
        path = request.url.path
        # Answer in the dialect the path looks most like (the first otherwise).
        like = next((d for d in spoken if _looks_like(d, path)), spoken[0])
        message = f"no endpoint {request.method} {path}; this server answers POST {endpoints}"
        handler._log(f"{request.method} {path} 404")
        return handler._error(_encoder(like), 404, message)

    methods = ["GET", "POST", "PUT", "DELETE", "PATCH"]
    return Starlette(routes=[*routes, Route("/{path:path}", unknown, methods=methods)])


def _encoder(dialect: WireDialect, *, sse: bool = True) -> Encoder:
    assert dialect.encoder is not None
    encoder: Encoder = dialect.encoder(sse=sse)
    return encoder


def _looks_like(dialect: WireDialect, path: str) -> bool:
    """True when ``path`` starts like one of the dialect's routes."""
    return any(
        (path.startswith(route.split("{")[0].rstrip("/")) and "{" in route)
        or path.rstrip("/").endswith(dialect.paths)
        for route in dialect.routes
    )


def _endpoint(handler: Handler, dialect: WireDialect) -> Callable[[Request], Awaitable[Response]]:
    async def answer(request: Request) -> Response:
        target = dialect.route_target(request.url.path, dict(request.query_params))
        if target is None:
            path = request.url.path
            return handler._error(_encoder(dialect), 404, f"no method at {path!r}")
        model, stream, sse = target
        encoder = _encoder(dialect, sse=sse)
        return await handler.handle(request, dialect.name, encoder, model=model, stream=stream)

    return answer


def _continuation(
    handler: Handler, dialect: WireDialect
) -> Callable[[Request], Awaitable[Response]]:
    async def answer(request: Request) -> Response:
        read = dialect.continuation_target
        target = read(request.url.path, dict(request.query_params)) if read else None
        if target is None:
            path = request.url.path
            return handler._error(_encoder(dialect), 404, f"no method at {path!r}")
        key, after = target
        return await handler.continuation(request, _encoder(dialect), key, after)

    return answer


def served_dialect(name: str) -> WireDialect:
    """The dialect the emulation server answers as for ``name``: a registered
    dialect's name or one of its provider's names (``openai``, ``anthropic``,
    ``bedrock``...: :attr:`~toolwire.stream.codecs.ProviderInfo.names`).

    Raises:
        UsageError: no dialect goes by ``name``, or it is one the server does
            not serve (a dialect toolwire only reads: no ``routes``,
            ``decode_request`` and ``encoder``).
    """
    dialects = registered()
    for dialect in dialects:
        if name == dialect.name or (dialect.provider and name in dialect.provider.names):
            if dialect.encoder is None or not dialect.routes:
                lacks = [
                    field
                    for field, has in (
                        ("routes", dialect.routes),
                        ("decode_request", dialect.decode_request),
                        ("encoder", dialect.encoder),
                    )
                    if not has
                ]
                raise UsageError(
                    f"the emulation server does not serve {name!r}: a dialect toolwire only "
                    f"reads (its registration has no {', '.join(lacks)})"
                )
            return dialect
    known = ", ".join(d.name for d in dialects if d.encoder is not None and d.routes)
    raise UsageError(f"unknown dialect {name!r}; known: {known}")


class EmulationServer(LoopbackServer):
    """A real HTTP server on loopback answering as OpenAI, Anthropic, Gemini and Bedrock do.

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
        max_kept_streams: how many streams the provider keeps (Responses
            background responses, Gemini interactions) are kept for their
            resumptions (``GET /v1/responses/{id}?stream=true&starting_after=N``,
            ``GET /v1beta/interactions/{id}?stream=true&last_event_id=...``);
            an older one is answered 404, as an expired one is (``0``: none is).
        socket_close_after: close each WebSocket after this many responses
            (a socket dropped between two turns; ``None``: never).
        socket_forget_after: forget the responses a WebSocket answered once
            it has sent this many (the next continuation is refused with
            ``previous_response_not_found``; ``None``: never).
        socket_expire_after: answer the request after this many responses
            on a WebSocket as one past its lifetime (60 minutes at OpenAI:
            an error event, then the close; ``None``: never).
        socket_cut_in: close each WebSocket halfway through its response
            number ``socket_cut_in`` (1: the first; ``None``: never).
        socket_pause_in: pause the WebSocket response number
            ``socket_pause_in`` (counted over all connections) halfway until
            the client's next message (a steer), 10 seconds at most
            (``None``: never).
        socket_refuse_steers: refuse every steer on a WebSocket
            (``response.steer.failed`` with ``steering_not_supported``), as
            for a model that cannot be steered.

    Raises:
        UsageError: ``host`` is not loopback and ``allow_remote`` is False.
        ScenarioError: the scenario cannot be loaded.
    """

    label = "emulation server"
    uvicorn_options: ClassVar[Mapping[str, Any]] = {"ws": _WEBSOCKETS}

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
        max_kept_streams: int = 256,
        socket_close_after: int | None = None,
        socket_forget_after: int | None = None,
        socket_expire_after: int | None = None,
        socket_cut_in: int | None = None,
        socket_pause_in: int | None = None,
        socket_refuse_steers: bool = False,
    ) -> None:
        self.scenario = load_scenario(scenario)
        self.requests: list[Any] = RecentRequests(max_recorded_requests)
        """The latest request bodies received (parsed JSON), in arrival order; a
        body over 256 KiB is kept as ``{"toolwire_body_digest", "bytes"}``."""
        if isinstance(rate_limit, RateLimit):
            rate_limit = ServerRateLimit(rate_limit)
        self.rate_limit = rate_limit
        """What the server admits per minute, and what it admitted (``None``: everything)."""
        self.continuations: list[Any] = RecentRequests(max_recorded_requests)
        """The latest continuations of kept streams (each reopened after its
        last event read), in arrival order: ``{"stream_id", "after"}`` each,
        ``after`` the number of the event continued after (``-1``: from the
        first)."""
        self.sockets: list[Any] = RecentRequests(max_recorded_requests)
        """The latest WebSocket connections, in the order they opened:
        ``{"messages": [...], "responses": n}`` each, the messages received
        (parsed JSON) and how many responses were sent."""
        faults = SocketFaults(
            close_after=socket_close_after,
            forget_after=socket_forget_after,
            expire_after=socket_expire_after,
            cut_in=socket_cut_in,
            pause_in=socket_pause_in,
            refuse_steers=socket_refuse_steers,
        )
        app = build_app(
            self.scenario,
            requests=self.requests,
            log=log,
            rate_limit=rate_limit,
            kept=KeptStreams(max_kept_streams),
            continuations=self.continuations,
            socket_faults=faults,
            sockets=self.sockets,
        )
        super().__init__(app, host=host, port=port, allow_remote=allow_remote, limits=limits)

    @property
    def resumes(self) -> list[Any]:
        """Older name of :attr:`continuations` (with a warning)."""
        _compat.renamed_argument("EmulationServer", "resumes")
        return self.continuations

    def __repr__(self) -> str:
        state = self.base_url if self._socket is not None else "stopped"
        return f"<EmulationServer {self.scenario.name!r} {state}>"

    def url_for(self, dialect: str) -> str:
        """The base URL an SDK of ``dialect`` wants.

        ``openai-chat``/``openai-responses`` (or ``openai``): ``.../v1``;
        ``anthropic-messages`` (or ``anthropic``): the root; ``gemini``:
        ``.../v1beta`` (the API version is part of the base URL, as in
        :class:`toolwire.providers.Gemini`); ``bedrock-converse``/``bedrock-invoke``
        (or ``bedrock``): the root (``/model/{id}/converse-stream``...);
        ``gemini-interactions``: ``.../v1beta`` (``/interactions``); any
        dialect registered since, with its ``base_path``.

        Raises:
            UsageError: an unknown dialect, or one the server does not serve
                (see :func:`served_dialect`).
        """
        return self.base_url + served_dialect(dialect).base_path
