"""The bridge's ASGI app: a served dialect's routes, each request read,
routed, sent upstream, and its answer streamed back in the served dialect.

See :mod:`toolwire.bridge` for the theory of operation.
"""

from __future__ import annotations

import contextlib
import hmac
import time
import uuid
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Mapping, Sequence
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route as Path

from toolwire.bridge._journal import BridgeJournal
from toolwire.bridge._routes import Route, Target, routes_from
from toolwire.cost import Prices, default_prices
from toolwire.errors import BadRequest, ToolwireError, UsageError
from toolwire.events import Event
from toolwire.http import RateLimiter, Transport
from toolwire.http.transport import HttpRetryPolicy
from toolwire.journal import Journal
from toolwire.stream.codecs import WireDialect, wire_dialect
from toolwire.stream.codecs.bridge import (
    ANSWERS,
    REASONING_OPTIONS,
    Answer,
    Asked,
    read_request,
    whole_body,
)
from toolwire.stream.codecs.emulation import Encoder

__all__ = ["SERVED", "app"]

SERVED: tuple[str, ...] = tuple(ANSWERS)
"""The dialects the bridge serves."""


class _Bridge:
    def __init__(
        self,
        routes: dict[str, Route],
        journal: BridgeJournal | None,
        transport: Transport | None,
        api_key: str | None,
        log: Callable[[str], None] | None,
    ) -> None:
        self.routes = routes
        self.journal = journal
        self.transport = transport
        self.api_key = api_key
        self.log = log

    def _say(self, line: str) -> None:
        if self.log is not None:
            self.log(line)

    def error(self, encoder: Encoder, status: int, message: str) -> Response:
        body = encoder.dumps_body(encoder.error_body(status, message))
        return Response(body, status_code=status, media_type=encoder.json_media_type)

    def admitted(self, request: Request) -> bool:
        if self.api_key is None:
            return True
        given = [
            request.headers.get("x-api-key", ""),
            request.headers.get("x-goog-api-key", ""),
            request.headers.get("authorization", "").removeprefix("Bearer ").strip(),
            request.query_params.get("key", ""),
        ]
        return any(g and hmac.compare_digest(g, self.api_key) for g in given)

    async def answer(self, request: Request, dialect: WireDialect) -> Response:
        target = dialect.route_target(request.url.path, dict(request.query_params))
        encoder_type = dialect.encoder
        assert encoder_type is not None
        encoder: Encoder = encoder_type(sse=True if target is None else target[2])
        if target is None:
            return self.error(encoder, 404, f"no method at {request.url.path!r}")
        if not self.admitted(request):
            self._say(f"POST {request.url.path} 401")
            return self.error(encoder, 401, "the bridge's API key is missing or wrong")
        try:
            asked = read_request(dialect.name, await request.body(), target[0], target[1])
        except BadRequest as exc:
            return self.error(encoder, 400, exc.message)
        route = self.routes.get(asked.model) or self.routes.get("*")
        if route is None:
            return self.error(encoder, 404, f"the bridge routes no model {asked.model!r}")
        try:
            upstream = self.upstream_request(asked, route)
        except UsageError as exc:
            return self.error(encoder, 400, exc.message)
        return await self.stream(asked, route, upstream, encoder)

    def upstream_request(self, asked: Asked, route: Route) -> Any:
        provider = route.provider
        shape = provider.wire.tool_schemas
        tools = shape(list(asked.tools), None) if asked.tools and shape is not None else []
        extra = None
        if asked.reasoning and provider.dialect in REASONING_OPTIONS:
            extra = REASONING_OPTIONS[provider.dialect](asked.reasoning)
        return provider.build_request(
            model=route.model or asked.model,
            messages=asked.messages,
            tools=tools,
            tool_choice=asked.tool_choice if tools else None,
            stream=True,
            max_tokens=asked.max_tokens,
            temperature=asked.temperature,
            extra=extra,
        )

    async def stream(self, asked: Asked, route: Route, upstream: Any, encoder: Encoder) -> Response:
        run_id = "bridge-" + uuid.uuid4().hex[:16]
        answer = ANSWERS[asked.dialect](asked, encoder, run_id)
        source = route.provider.reader(upstream, transport=self.transport)
        journal = self.journal
        if journal is not None:
            await journal.requested(run_id, asked, route)
        started = time.monotonic()
        reads = source.reads()
        try:
            first = await reads.__anext__()
        except StopAsyncIteration:
            first = []
        except ToolwireError as exc:  # refused before its answer began: the status, as it came
            await reads.aclose()
            if journal is not None:
                await journal.failed(run_id, source, exc, started)
            status = getattr(exc, "status_code", None) or 502
            self._say(f"POST {asked.dialect} {asked.model} -> {status}")
            return self.error(encoder, status, exc.message)
        if not asked.stream:
            return await self.whole(asked, answer, source, first, reads, run_id, started)
        body = self.body(answer, source, first, reads, run_id, started)
        return StreamingResponse(body, media_type=encoder.stream_media_type)

    async def body(
        self,
        answer: Answer,
        source: Any,
        first: list[Event],
        reads: AsyncGenerator[list[Event], None],
        run_id: str,
        started: float,
    ) -> AsyncIterator[bytes]:
        error: ToolwireError | None = None
        async with contextlib.aclosing(reads):
            yield answer.start() + answer.feed(first)
            try:
                async for events in reads:
                    out = answer.feed(events)
                    if out:
                        yield out
            except ToolwireError as exc:
                error = exc
                answer.fail(exc)
        if not answer.done:
            answer.end()
        yield answer.take() + answer.encoder.trailer()
        await self.finished(answer, source, run_id, started, error)

    async def whole(
        self,
        asked: Asked,
        answer: Answer,
        source: Any,
        first: list[Event],
        reads: AsyncGenerator[list[Event], None],
        run_id: str,
        started: float,
    ) -> Response:
        """A request that did not ask to stream: the stream read to its end, answered whole."""
        error: ToolwireError | None = None
        async with contextlib.aclosing(reads):
            answer.feed(first)
            try:
                async for events in reads:
                    answer.feed(events)
            except ToolwireError as exc:
                error = exc
        await self.finished(answer, source, run_id, started, error)
        result = source.decoder.result()
        error = error or result.error
        if error is not None:
            return self.error(
                answer.encoder, getattr(error, "status_code", None) or 502, error.message
            )
        body = whole_body(asked, answer, result)
        return Response(answer.encoder.dumps_body(body), media_type=answer.encoder.json_media_type)

    async def finished(
        self, answer: Answer, source: Any, run_id: str, started: float, error: ToolwireError | None
    ) -> None:
        failed = error or source.decoder.error
        self._say(
            f"POST {answer.asked.dialect} {answer.asked.model} -> "
            + (f"failed: {failed.message}" if failed else f"{len(answer.ready)} calls")
        )
        if self.journal is None:
            return
        if failed is not None:
            await self.journal.failed(run_id, source, failed, started)
        else:
            await self.journal.answered(run_id, source, started)


def app(
    models: Mapping[str, Target | Sequence[Target]],
    *,
    serve: str | Sequence[str] = SERVED,
    journal: Journal | None = None,
    transport: Transport | None = None,
    retry: HttpRetryPolicy | None = None,
    rate_limiter: RateLimiter | None = None,
    api_key: str | None = None,
    upstream_key: str | None = None,
    log: Callable[[str], None] | None = None,
    prices: Prices | bool | None = None,
) -> Starlette:
    """The bridge as an ASGI app.

    Args:
        models: the model map: each model a client may name (``*``: any
            other) and its upstream, ``dialect:model@base_url`` or a provider
            (and its model), or a list of them: a fallback chain.
        serve: the dialects served (default: all four the bridge speaks).
        journal: where each request is recorded, as a one-turn run.
        transport: what sends the upstream requests, for every route
            (the caller closes it); each provider's own otherwise.
        retry: when no ``transport`` is given, the upstream requests' retries
            (the bridge's own transport, closed when it stops).
        rate_limiter: when no ``transport`` is given, the rate limits every
            route shares (a :class:`~toolwire.http.RateLimiter`, its budgets
            in PostgreSQL to share them with other processes).
        api_key: the key clients must send (``x-api-key``, ``Authorization:
            Bearer``, ``x-goog-api-key``); ``None``: none is asked.
        upstream_key: the upstream's key, for targets written as text.
        log: told one line per request (never a header, never a key).
        prices: how the journaled requests are priced (as the
            :class:`~toolwire.Agent`'s: ``None`` for ``genai-prices``' data,
            ``False`` for no prices).

    Raises:
        UsageError: an empty model map, an unreadable target, or a dialect
            the bridge does not serve.
    """
    names = [serve] if isinstance(serve, str) else list(serve)
    unknown = [n for n in names if n not in SERVED]
    if unknown:
        raise UsageError(f"the bridge serves {', '.join(SERVED)}; not {', '.join(unknown)}")
    owned: Transport | None = None
    if transport is None and (retry is not None or rate_limiter is not None):
        from toolwire.http.transport import HttpxTransport  # its httpx, on first use

        transport = owned = HttpxTransport(retry=retry, rate_limiter=rate_limiter)
    routes = routes_from(models, api_key=upstream_key)
    secrets = [s for route in routes.values() for s in route.provider._secrets()]
    if prices is None or prices is True:
        prices = default_prices()
    recorder = BridgeJournal(journal, secrets, prices or None) if journal is not None else None
    bridge = _Bridge(routes, recorder, transport, api_key, log)
    paths = []
    for name in names:
        dialect = wire_dialect(name)
        for path in dialect.routes:
            paths.append(Path(path, _endpoint(bridge, dialect), methods=["POST"]))

    @contextlib.asynccontextmanager
    async def lifespan(_: Starlette) -> AsyncIterator[None]:
        try:
            yield
        finally:  # the connections the providers opened for themselves
            for route in routes.values():
                await route.provider.aclose()
            if owned is not None:
                await owned.aclose()

    return Starlette(routes=paths, lifespan=lifespan)


def _endpoint(bridge: _Bridge, dialect: WireDialect) -> Callable[[Request], Any]:
    async def endpoint(request: Request) -> Response:
        return await bridge.answer(request, dialect)

    return endpoint
