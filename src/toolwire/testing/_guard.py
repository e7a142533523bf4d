"""A loopback server that survives its clients: bounded bodies, timed heads,
and a connection limit that a crowd of slow clients cannot use up.

Theory of operation: two pieces wrap uvicorn's h11 server.

* :class:`BodyLimit` is ASGI middleware that reads a request body before the
  application does and answers ``413`` when it exceeds the cap (at once when
  ``Content-Length`` says so). After a refusal, what the client still sends
  is read and dropped, never kept, so the client gets to read the answer and
  the server's memory stays where it was. The bodies being read at once
  share one budget (``max_buffered_bytes``): a body reserves its
  ``Content-Length`` (the cap, without one) before its first byte is read,
  and waits while the others hold the budget, until the application is
  done with them; one that cannot start within ``body_timeout`` gets
  ``503``. A body is kept as its pieces and joined once, when it is whole,
  so a crowd of uploads holds at most about the budget, never a copy of
  each body per step.
* :func:`guarded_protocol` makes uvicorn's h11 protocol class keep track of
  which connections are *waiting* for a request head (just opened, or idle
  between requests). A connection whose head is not complete within
  ``header_timeout`` seconds is closed (slow-loris); idle keep-alive
  connections close after ``idle_timeout``. When a new connection would make
  more than ``max_connections``, the connection that has waited longest is
  closed instead: a legitimate client, which sends its request at once, is
  served however many slow ones hold sockets. The default limit stays well
  under the process's file-descriptor limit, so ``accept`` never starts
  failing.
"""

from __future__ import annotations

import asyncio
import resource
import time
from dataclasses import dataclass, field
from typing import Any, ClassVar, Final

import anyio
from uvicorn.protocols.http.h11_impl import H11Protocol

__all__ = [
    "BodyLimit",
    "ServerLimits",
    "accept_burst",
    "default_max_connections",
    "guarded_protocol",
]

ASGIApp = Any


def default_max_connections() -> int:
    """256, or half the process's file-descriptor limit when that is lower."""
    try:
        soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    except (OSError, ValueError):  # pragma: no cover - no limit to read
        return 256
    if soft == resource.RLIM_INFINITY:
        return 256
    return max(8, min(256, soft // 2))


@dataclass(frozen=True, slots=True, kw_only=True)
class ServerLimits:
    """What a loopback server accepts from its clients."""

    max_body_bytes: int = 32 * 1024 * 1024
    """The largest request body; a larger one gets ``413``."""
    max_connections: int = field(default_factory=default_max_connections)
    """Open connections at most; beyond, the longest-waiting one is closed."""
    header_timeout: float = 10.0
    """Seconds a connection has to send a request head."""
    idle_timeout: float = 5.0
    """Seconds an idle keep-alive connection stays open."""
    body_timeout: float = 10.0
    """Seconds a request body has, plus one second per ``min_body_rate``
    bytes received: a client that sends a head and then trickles the body
    gets ``408`` and its connection closed, instead of holding it."""
    min_body_rate: int = 64 * 1024
    """Bytes per second a request body must keep up, past ``body_timeout``."""
    max_buffered_bytes: int = 64 * 1024 * 1024
    """The bytes of all the request bodies being read at once (at least
    ``max_body_bytes``): past it, a body waits for the others, then gets ``503``."""


_SLOW: Final = object()
"""What :meth:`BodyLimit._read` gives for a body that arrived too slowly."""


class BodyLimit:
    """ASGI middleware: request bodies beyond ``max_bytes`` get ``413``.

    Args:
        app: the application.
        max_bytes: the largest request body accepted.
    """

    def __init__(
        self,
        app: ASGIApp,
        max_bytes: int,
        *,
        body_timeout: float = 10.0,
        min_rate: int = 64 * 1024,
        max_buffered: int | None = None,
    ) -> None:
        self.app = app
        self.max_bytes = max_bytes
        self.body_timeout = body_timeout
        self.min_rate = min_rate
        self.max_buffered = max(max_bytes, max_buffered or 2 * max_bytes)
        self.reserved = 0
        """The budget reserved by the bodies being read or served now."""
        self.buffered = 0
        """The body bytes held now: received so far, or handed to the
        application and not yet done with."""
        self.peak_buffered = 0
        """The most :attr:`buffered` has been."""
        self._freed: anyio.Event | None = None

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope.get("type") != "http":
            await self.app(scope, receive, send)
            return
        length = dict(scope.get("headers", ())).get(b"content-length", b"")
        if length.isdigit() and int(length) > self.max_bytes:
            await self._refuse(receive, send)
            return
        want = int(length) if length.isdigit() else self.max_bytes
        if not await self._reserve(want):
            await self._busy(receive, send)
            return
        try:
            body = await self._read(receive)
            if type(body) is bytes:
                await self._serve(scope, body, receive, send)
                return
        finally:
            self._give_back(want)
        # Refusals are answered once the body's bytes and budget are given back.
        if body is _SLOW:
            await self._too_slow(send)
        elif isinstance(body, bool):  # over the cap: whether more is coming
            await self._refuse(receive, send, more=body)

    async def _serve(self, scope: Any, body: bytes, receive: Any, send: Any) -> None:
        """Hand ``body`` to the application; it counts as held until it returns."""
        replayed = False

        async def replay() -> Any:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        try:
            await self.app(scope, replay, send)
        finally:
            self._count(-len(body))

    async def _read(self, receive: Any) -> bytes | bool | object | None:
        """The whole body; ``None`` when the client went away, ``_SLOW`` when
        it arrived too slowly, or, past the cap, whether more of it is
        coming. Its pieces count in :attr:`buffered` while they are read,
        and are joined once."""
        pieces: list[bytes] = []
        size = 0
        start = time.monotonic()
        whole = False
        try:
            while True:
                # The body's deadline grows with what arrived: a trickle misses it.
                left = start + self.body_timeout + size / self.min_rate - time.monotonic()
                with anyio.move_on_after(max(left, 0)) as waited:
                    message = await receive()
                if waited.cancelled_caught:
                    return _SLOW
                if message["type"] == "http.disconnect":
                    return None
                piece = message.get("body", b"")
                size += len(piece)
                self._count(len(piece))
                if size > self.max_bytes:
                    return bool(message.get("more_body", False))
                if piece:
                    pieces.append(piece)
                if not message.get("more_body", False):
                    whole = True
                    return b"".join(pieces)
        finally:
            pieces.clear()
            if not whole:  # a whole body is held until the application is done
                self._count(-size)

    def _count(self, n: int) -> None:
        self.buffered += n
        self.peak_buffered = max(self.peak_buffered, self.buffered)

    async def _reserve(self, want: int) -> bool:
        """Wait until ``want`` bytes of the budget are free and take them;
        ``False`` when they were not free within ``body_timeout``."""
        with anyio.move_on_after(self.body_timeout):
            while self.reserved and self.reserved + want > self.max_buffered:
                if self._freed is None:
                    self._freed = anyio.Event()
                await self._freed.wait()
            self.reserved += want
            return True
        return False

    def _give_back(self, want: int) -> None:
        self.reserved -= want
        if self._freed is not None:
            self._freed.set()
            self._freed = None

    async def _busy(self, receive: Any, send: Any) -> None:
        text = (
            b'{"error": {"message": "the server is reading other request bodies; '
            b'try again", "type": "server_busy"}}'
        )
        await self._answer(send, 503, text)
        more = True
        while more:  # drained, kept nowhere
            message = await receive()
            more = message["type"] == "http.request" and message.get("more_body", False)

    async def _answer(self, send: Any, status: int, text: bytes) -> None:
        await send(
            {
                "type": "http.response.start",
                "status": status,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(text)).encode()),
                    (b"connection", b"close"),
                    (b"retry-after", b"1"),
                ],
            }
        )
        await send({"type": "http.response.body", "body": text})

    async def _too_slow(self, send: Any) -> None:
        text = (
            b'{"error": {"message": "the request body arrived too slowly", '
            b'"type": "request_timeout"}}'
        )
        await send(
            {
                "type": "http.response.start",
                "status": 408,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(text)).encode()),
                    (b"connection", b"close"),
                ],
            }
        )
        await send({"type": "http.response.body", "body": text})

    async def _refuse(self, receive: Any, send: Any, *, more: bool = True) -> None:
        text = (
            f'{{"error": {{"message": "the request body is larger than {self.max_bytes} '
            'bytes, this server\'s limit", "type": "request_too_large"}}'
        ).encode()
        await send(
            {
                "type": "http.response.start",
                "status": 413,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(text)).encode()),
                    (b"connection", b"close"),
                ],
            }
        )
        await send({"type": "http.response.body", "body": text})
        # Drain what the client still sends, keeping none of it, so that it
        # reads the answer instead of a reset connection.
        while more:
            message = await receive()
            more = message["type"] == "http.request" and message.get("more_body", False)


class _GuardedH11(H11Protocol):
    max_connections: ClassVar[int] = 256
    header_timeout: ClassVar[float] = 10.0

    _waiting_since: float | None
    _head_timer: asyncio.TimerHandle | None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._head_timer = None
        self._wait_for_head()
        open_ = [c for c in self.connections if not c.transport.is_closing()]
        excess = len(open_) - self.max_connections
        if excess > 0:
            waiting = sorted(
                (c for c in open_ if getattr(c, "_waiting_since", None) is not None),
                key=lambda c: c._waiting_since,  # type: ignore[union-attr]
            )
            for oldest in waiting[:excess]:
                oldest._evict()  # type: ignore[union-attr]

    def _evict(self) -> None:
        self._waiting_since = None
        self._cancel_head_timer()
        self.transport.close()

    def _wait_for_head(self) -> None:
        self._waiting_since = self.loop.time()
        self._cancel_head_timer()
        self._head_timer = self.loop.call_later(self.header_timeout, self._head_expired)

    def _cancel_head_timer(self) -> None:
        if getattr(self, "_head_timer", None) is not None:
            assert self._head_timer is not None
            self._head_timer.cancel()
            self._head_timer = None

    def _head_expired(self) -> None:
        if self._waiting_since is not None and not self.transport.is_closing():
            self.transport.close()

    def handle_events(self) -> None:
        cycle = self.cycle
        super().handle_events()
        if self.cycle is not cycle:  # a request head arrived
            self._waiting_since = None
            self._cancel_head_timer()

    def handle_websocket_upgrade(self, event: Any) -> None:
        # The head arrived (no request cycle starts): the socket's life is
        # its own, not bounded by the head's deadline.
        self._waiting_since = None
        self._cancel_head_timer()
        super().handle_websocket_upgrade(event)

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing() and (self.cycle is None or self.cycle.response_complete):
            self._wait_for_head()

    def connection_lost(self, exc: Exception | None) -> None:
        self._cancel_head_timer()
        self._waiting_since = None
        super().connection_lost(exc)


def accept_burst(max_connections: int) -> int:
    """How many connections the event loop accepts at a time (uvicorn's
    ``backlog``): few enough that evictions keep up with a flood of them."""
    return max(8, min(128, max_connections // 4))


def guarded_protocol(*, max_connections: int, header_timeout: float) -> type[H11Protocol]:
    """uvicorn's h11 protocol class with these limits (see the module docstring)."""
    return type(
        "GuardedH11",
        (_GuardedH11,),
        {"max_connections": max_connections, "header_timeout": header_timeout},
    )
