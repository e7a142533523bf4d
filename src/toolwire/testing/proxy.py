"""``toolwire proxy``: a loopback reverse proxy that records provider traffic at the wire.

Theory of operation: every request to the proxy is sent on to the upstream
unchanged (method, path appended to the upstream's URL, query, headers, body,
credentials included) and the answer is relayed as it arrives, each chunk
handed to the client the moment httpx reads it from the upstream: nothing is
buffered, so a stream stays a stream. Two things differ from a plain relay:
the proxy asks the upstream for an uncompressed body (``accept-encoding:
identity``), so that the bytes relayed, recorded and replayed are the same
bytes; and hop-by-hop headers are not passed on, as RFC 9110 says.

Only once a chunk has been handed on is it recorded (to the body file, as it
comes: a cassette body is never held in memory) and read for the exchange's
summary line (:mod:`toolwire.testing.summary`). The credentials of each
request are removed from what is recorded and logged
(:mod:`toolwire.http.credentials`); the client still receives every byte as the
upstream sent it.

Bounds: a request body larger than ``max_request_bytes`` is refused with 413
before anything is sent upstream; the upstream connection, each read and the
whole exchange have deadlines (:class:`~toolwire.http.transport.Timeouts`); a
client that hangs up stops the upstream request at once.
"""

from __future__ import annotations

import base64
import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, BinaryIO, ClassVar

import anyio
import httpx
from starlette.types import Message, Receive, Scope, Send

from toolwire.errors import UsageError
from toolwire.http.bodies import ScrubbedBody, scrub_body, scrub_keeping_binary
from toolwire.http.credentials import Scrubber, redact_headers, redact_query
from toolwire.http.transport import Timeouts
from toolwire.http.urls import strip_userinfo
from toolwire.stream import jsonio
from toolwire.testing.cassette import CassetteError, CassetteWriter, RecordedRequest
from toolwire.testing.serving import LoopbackServer
from toolwire.testing.summary import BodyReader, Reading, dialect_for, exchange_line

__all__ = ["MAX_REQUEST_BYTES", "ProxyApp", "RecordingProxy", "json_error"]

MAX_REQUEST_BYTES = 64 * 1024 * 1024
"""The largest request body passed on by default (images travel in bodies)."""

# RFC 9110 section 7.6.1, plus headers httpx sets itself for the upstream.
_HOP_BY_HOP = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-authenticate",
        "proxy-authorization",
        "proxy-connection",
        "te",
        "trailer",
        "transfer-encoding",
        "upgrade",
    }
)
_NOT_FORWARDED = _HOP_BY_HOP | {"host", "content-length", "accept-encoding"}


@dataclass(slots=True)
class _Exchange:
    """One request on its way through the proxy."""

    number: int
    method: str
    path: str
    query: str
    headers: list[tuple[str, str]]
    body: bytes
    started: float = 0.0
    status: int | None = None
    response_headers: list[tuple[str, str]] = field(default_factory=list)
    headers_ms: float = 0.0
    chunks: list[tuple[int, float]] = field(default_factory=list)
    size: int = 0
    first_byte_ms: float | None = None
    finished: bool = False
    error: str | None = None
    body_file: str = ""
    sink: BinaryIO | None = None
    reader: BodyReader | None = None
    opened: bool = False
    """The body file and the reader are open (made after the first byte went out)."""
    scrubber: Scrubber | None = None
    """Removes this request's credentials from what is recorded and logged."""
    scrubbed: ScrubbedBody | None = None
    """The request body without its credential members, and what they held."""

    def ms(self, now: float) -> float:
        return (now - self.started) * 1000


def _header(headers: list[tuple[str, str]], name: str) -> str | None:
    return next((v for k, v in headers if k.lower() == name), None)


def json_error(status: int, kind: str, message: str) -> tuple[Message, Message]:
    """The ASGI messages of an error answer every SDK reads the message of
    (OpenAI, Anthropic and Gemini all look for ``error.message``)."""
    body = jsonio.dumps_bytes({"type": "error", "error": {"type": kind, "message": message}})
    start: Message = {
        "type": "http.response.start",
        "status": status,
        "headers": [
            (b"content-type", b"application/json"),
            (b"content-length", str(len(body)).encode()),
        ],
    }
    return start, {"type": "http.response.body", "body": body, "more_body": False}


class ProxyApp:
    """The proxy as an ASGI application (lifespan closes its connection pool).

    Args:
        upstream: the base URL requests are sent on to; the request's path is
            appended to it (userinfo in it becomes HTTP Basic credentials).
        recorder: where exchanges are recorded; ``None`` records nothing.
        log: called with one summary line per exchange (never a credential).
        timeouts: deadlines of the upstream requests.
        max_request_bytes: the largest request body passed on.
        transport: the httpx transport to the upstream (tests, custom TLS).
    """

    def __init__(
        self,
        upstream: str,
        *,
        recorder: CassetteWriter | None = None,
        log: Callable[[str], None] | None = None,
        timeouts: Timeouts | float | None = None,
        max_request_bytes: int = MAX_REQUEST_BYTES,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.shown_upstream, self._upstream_secrets = strip_userinfo(upstream.rstrip("/"))
        try:
            parsed = httpx.URL(upstream)
        except httpx.InvalidURL:
            parsed = None
        if parsed is None or parsed.scheme not in ("http", "https") or not parsed.host:
            raise UsageError(f"the upstream must be an http(s) URL, got {self.shown_upstream!r}")
        self.upstream = self.shown_upstream
        # Userinfo in the upstream's URL stands for HTTP Basic credentials,
        # sent only when the client sends no Authorization of its own.
        self._basic: str | None = None
        if parsed.userinfo:
            token = base64.b64encode(f"{parsed.username}:{parsed.password}".encode()).decode()
            self._basic = f"Basic {token}"
            self._upstream_secrets.append(token)
        self.recorder = recorder
        self.log = log
        self.timeouts = Timeouts.coerce(timeouts)
        self.max_request_bytes = max_request_bytes
        self._transport = transport
        self._client: httpx.AsyncClient | None = None
        self._count = 0

    def __repr__(self) -> str:
        return f"<ProxyApp to {self.shown_upstream!r}>"

    def _http(self) -> httpx.AsyncClient:
        if self._client is None:
            t = self.timeouts
            self._client = httpx.AsyncClient(
                timeout=httpx.Timeout(connect=t.connect, read=t.read, write=t.write, pool=t.pool),
                limits=httpx.Limits(max_connections=100, max_keepalive_connections=100),
                follow_redirects=False,
                transport=self._transport,
            )
        return self._client

    async def aclose(self) -> None:
        """Close the connections to the upstream."""
        if self._client is not None:
            client, self._client = self._client, None
            await client.aclose()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
        elif scope["type"] == "http":
            await self._exchange(scope, receive, send)

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await self.aclose()
                await send({"type": "lifespan.shutdown.complete"})
                return

    async def _read_body(self, receive: Receive) -> bytes | None:
        """The request body, or ``None`` past the size limit."""
        body = bytearray()
        while True:
            message = await receive()
            if message["type"] != "http.request":
                return bytes(body)
            body += message.get("body", b"")
            if len(body) > self.max_request_bytes:
                return None
            if not message.get("more_body", False):
                return bytes(body)

    def _start(self, scope: Scope, body: bytes) -> _Exchange:
        if self.recorder is not None:
            number = self.recorder.next_number()
        else:
            self._count += 1
            number = self._count
        raw_path = scope.get("raw_path")
        return _Exchange(
            number=number,
            method=scope["method"],
            path=raw_path.decode("latin-1") if raw_path else scope["path"],
            query=scope["query_string"].decode("latin-1"),
            headers=[(k.decode("latin-1"), v.decode("latin-1")) for k, v in scope["headers"]],
            body=body,
        )

    def _scrubber(self, ex: _Exchange) -> Scrubber:
        if ex.scrubber is None:
            ex.scrubbed = scrub_body(ex.body, _header(ex.headers, "content-type"))
            secrets = redact_headers(ex.headers)[1] + redact_query(ex.query)[1]
            secrets += ex.scrubbed.secrets
            ex.scrubber = Scrubber([*secrets, *self._upstream_secrets])
        return ex.scrubber

    async def _exchange(self, scope: Scope, receive: Receive, send: Send) -> None:
        body = await self._read_body(receive)
        ex = self._start(scope, body or b"")
        if body is None:
            limit = f"{self.max_request_bytes} bytes"
            await self._refuse(send, ex, 413, f"the request body is larger than {limit}")
        else:
            total = self.timeouts.total
            with anyio.move_on_after(total if total is not None else float("inf")) as deadline:
                await self._forward(ex, receive, send)
            if deadline.cancelled_caught:
                ex.error = f"the exchange took longer than the total timeout ({total} s)"
        self._finish(ex)

    async def _forward(self, ex: _Exchange, receive: Receive, send: Send) -> None:
        headers = [(k, v) for k, v in ex.headers if k.lower() not in _NOT_FORWARDED]
        headers.append(("accept-encoding", "identity"))
        if self._basic is not None and _header(ex.headers, "authorization") is None:
            headers.append(("authorization", self._basic))
        url = self.upstream + ex.path + (f"?{ex.query}" if ex.query else "")
        request = httpx.Request(ex.method, url, headers=headers, content=ex.body)
        ex.started = time.perf_counter()
        try:
            response = await self._http().send(request, stream=True)
        except httpx.TimeoutException as exc:
            await self._refuse(send, ex, 504, f"the upstream did not answer in time ({exc!r})")
            return
        except httpx.HTTPError as exc:
            await self._refuse(send, ex, 502, f"cannot reach the upstream: {exc!r}")
            return
        try:
            await self._relay(ex, response, receive, send)
        finally:
            await response.aclose()

    async def _relay(
        self, ex: _Exchange, response: httpx.Response, receive: Receive, send: Send
    ) -> None:
        raw = [(k, v) for k, v in response.headers.raw if k.lower().decode() not in _HOP_BY_HOP]
        await send({"type": "http.response.start", "status": response.status_code, "headers": raw})
        self._begin(ex, response.status_code, raw)
        async with anyio.create_task_group() as group:
            group.start_soon(self._watch_client, ex, receive, group.cancel_scope)
            try:
                async for chunk in response.aiter_raw():
                    now = time.perf_counter()
                    await send({"type": "http.response.body", "body": chunk, "more_body": True})
                    self._chunk(ex, chunk, now)
                ex.finished = True
                await send({"type": "http.response.body", "body": b"", "more_body": False})
            except httpx.HTTPError as exc:
                # Returning without the final message makes uvicorn close the
                # connection: the client sees the same cut the proxy saw.
                ex.error = f"the upstream broke off: {exc!r}"
            group.cancel_scope.cancel()

    @staticmethod
    async def _watch_client(ex: _Exchange, receive: Receive, scope: anyio.CancelScope) -> None:
        message: Message = await receive()
        if message["type"] == "http.disconnect" and not ex.finished:
            ex.error = "the client hung up"
            scope.cancel()

    @staticmethod
    async def _refuse(send: Send, ex: _Exchange, status: int, message: str) -> None:
        start, body = json_error(status, "proxy_error", message)
        await send(start)
        await send(body)
        ex.status = status
        ex.error = message
        ex.opened = True  # the proxy's own answer: nothing to record or read

    @staticmethod
    def _begin(ex: _Exchange, status: int, raw: list[tuple[bytes, bytes]]) -> None:
        """The status and headers went out."""
        ex.status = status
        ex.headers_ms = ex.ms(time.perf_counter())
        ex.response_headers = [(k.decode("latin-1"), v.decode("latin-1")) for k, v in raw]

    def _open(self, ex: _Exchange) -> None:
        """Open the body file and the reader (once the first byte went out:
        nothing here delays it)."""
        ex.opened = True
        if ex.status is None:
            return
        content_type = _header(ex.response_headers, "content-type") or ""
        if self.log is not None:
            ex.reader = BodyReader(
                dialect_for(ex.path),
                path=ex.path,
                status=ex.status,
                content_type=content_type,
                content_encoding=_header(ex.response_headers, "content-encoding"),
            )
        if self.recorder is not None:
            try:
                ex.body_file, ex.sink = self.recorder.open_body(ex.number, content_type)
            except CassetteError as exc:
                ex.error = exc.message

    def _chunk(self, ex: _Exchange, chunk: bytes, now: float) -> None:
        at = ex.ms(now)
        if not ex.opened:
            ex.first_byte_ms = at
            self._open(ex)
        ex.size += len(chunk)
        if ex.reader is not None:
            ex.reader.feed(chunk)
        if ex.sink is not None:
            self._write(ex, self._scrubber(ex).feed(chunk), at)

    @staticmethod
    def _write(ex: _Exchange, data: bytes, at: float) -> None:
        if not data or ex.sink is None:
            return
        try:
            ex.sink.write(data)
        except OSError as exc:
            ex.sink.close()
            ex.sink = None
            ex.error = f"recording stopped: {exc.strerror or exc}"
            return
        ex.chunks.append((len(data), at))

    def _finish(self, ex: _Exchange) -> None:
        """Close the body file, write the sidecar, log the summary line."""
        if not ex.opened:
            self._open(ex)  # a response without a body
        scrubber = self._scrubber(ex)
        if ex.sink is not None:
            self._write(ex, scrubber.finish(), ex.chunks[-1][1] if ex.chunks else ex.headers_ms)
            if ex.sink is not None:
                ex.sink.close()
                ex.sink = None
                self._record(ex, scrubber)
        if self.log is not None:
            reading = ex.reader.finish() if ex.reader is not None else Reading()
            self.log(scrubber.scrub(self._line(ex, reading).encode()).decode())

    def _record(self, ex: _Exchange, scrubber: Scrubber) -> None:
        assert self.recorder is not None and ex.status is not None and ex.scrubbed is not None
        scrub = scrubber.scrub
        request = RecordedRequest(
            method=ex.method,
            path=scrubber.scrub_text(ex.path),
            query=scrubber.scrub_text(redact_query(ex.query)[0]),
            headers=tuple((k, scrubber.scrub_text(v)) for k, v in redact_headers(ex.headers)[0]),
            body=scrub_keeping_binary(ex.scrubbed.body, scrub),
        )
        headers = [
            (k, scrub(v.encode("latin-1")).decode("latin-1"))
            for k, v in redact_headers(ex.response_headers)[0]
        ]
        try:
            self.recorder.write_sidecar(
                ex.number,
                dialect=dialect_for(ex.path),
                request=request,
                status=ex.status,
                headers=headers,
                body_file=ex.body_file,
                chunks=ex.chunks,
                headers_ms=ex.headers_ms,
                error=ex.error,
            )
        except CassetteError as exc:
            ex.error = exc.message

    def _line(self, ex: _Exchange, reading: Reading) -> str:
        return exchange_line(
            ex.number,
            ex.method,
            ex.path,
            ex.status,
            reading,
            dialect=dialect_for(ex.path),
            streamed=ex.reader.streamed if ex.reader is not None else False,
            ttfb_ms=ex.first_byte_ms,
            duration_ms=ex.ms(time.perf_counter()) if ex.started else 0.0,
            size=ex.size,
            error=ex.error,
        )


class RecordingProxy(LoopbackServer):
    """``toolwire proxy`` as a server: a loopback reverse proxy to ``upstream``.

    Use it as a context manager (sync or async), like the emulation server::

        with RecordingProxy("https://api.openai.com/v1", record="cassettes/weather") as proxy:
            client = openai.OpenAI(base_url=proxy.base_url)

    Args:
        upstream: the base URL requests are sent on to (the client's base
            URL becomes the proxy's root).
        record: a cassette directory to record into (appended to when it
            holds exchanges already), or ``None``.
        fresh: delete the cassette's existing exchanges first.
        log: called with one summary line per exchange.
        timeouts: deadlines of the upstream requests.
        max_request_bytes: the largest request body passed on (413 beyond).
        host: where to listen (loopback unless ``allow_remote``).
        port: the port to listen on (0: any free one).
        allow_remote: allow a ``host`` that is not loopback.

    Raises:
        UsageError: a non-loopback ``host`` without ``allow_remote``, or an
            upstream that is not an http(s) URL.
        CassetteError: the cassette directory cannot be used.
    """

    label = "recording proxy"
    # The proxy's pool of upstream connections is closed at lifespan's end;
    # the upstream's own Server and Date headers are the ones relayed.
    uvicorn_options: ClassVar[Mapping[str, Any]] = {
        "lifespan": "on",
        "server_header": False,
        "date_header": False,
        "proxy_headers": False,
    }

    def __init__(
        self,
        upstream: str,
        *,
        record: str | os.PathLike[str] | None = None,
        fresh: bool = False,
        log: Callable[[str], None] | None = None,
        timeouts: Timeouts | float | None = None,
        max_request_bytes: int = MAX_REQUEST_BYTES,
        host: str = "127.0.0.1",
        port: int = 0,
        allow_remote: bool = False,
    ) -> None:
        shown = strip_userinfo(upstream)[0]
        recorder = None if record is None else CassetteWriter(record, upstream=shown, fresh=fresh)
        self.proxy = ProxyApp(
            upstream,
            recorder=recorder,
            log=log,
            timeouts=timeouts,
            max_request_bytes=max_request_bytes,
        )
        super().__init__(self.proxy, host=host, port=port, allow_remote=allow_remote)

    def __repr__(self) -> str:
        state = self.base_url if self._socket is not None else "stopped"
        return f"<RecordingProxy to {self.proxy.shown_upstream!r} {state}>"
