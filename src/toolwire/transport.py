"""The HTTP transport: the only place toolwire touches the network.

Theory of operation: :class:`HttpxTransport` wraps one ``httpx.AsyncClient``
(so connections are pooled across requests) and adds what every provider
call needs:

* **Timeouts** (:class:`Timeouts`): connect, read (between bytes), write,
  pool, and an optional *total* deadline covering retries and, for a stream,
  the whole body.
* **Retries of the request** (:class:`HttpRetryPolicy`) on connection failures
  and on retryable statuses (429, 5xx, Anthropic's 529), with exponential
  backoff and jitter, or the server's ``Retry-After`` / ``retry-after-ms``
  when it gives one (capped). A retry is only ever made *before* the caller
  has seen a byte of the response: once ``stream()`` has handed over its
  response object, a broken connection is reported, never replayed, because
  the caller may already have acted on the first events.
* **One error mapping**: httpx exceptions become
  :class:`~toolwire.errors.ConnectError`, :class:`~toolwire.errors.ReadError`
  or :class:`~toolwire.errors.TransportTimeout` (with ``__cause__`` kept);
  HTTP error statuses go through the provider's ``parse_error`` so the
  provider's message and ``retry_after`` survive.

Retries are logged at INFO on ``toolwire.transport`` with the method, URL,
reason and delay — never headers, which carry the API key. The sleep between
attempts is injectable so tests can assert backoff delays without waiting.

httpx and anyio are imported when a transport is created, not when toolwire
is imported, so the sans-I/O core stays free of the network stack.
"""

from __future__ import annotations

import logging
import math
import random as _random_module
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import AbstractContextManager, asynccontextmanager, nullcontext
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from toolwire.backoff import Backoff
from toolwire.errors import (
    ConnectError,
    LocalProtocolError,
    ProviderError,
    ReadError,
    RemoteProtocolError,
    ToolwireError,
    TransportError,
    TransportTimeout,
    UsageError,
)
from toolwire.http import (
    ErrorParser,
    HttpRequest,
    HttpResponse,
    decode_error_body,
    error_class_for,
    retry_after_seconds,
)

if TYPE_CHECKING:
    import httpx

__all__ = ["HttpRetryPolicy", "HttpxTransport", "Timeouts"]

logger = logging.getLogger("toolwire.transport")

POOL_SHARD = 16
"""Connections per httpx pool: a larger ``max_connections`` is split in pools
of at most this many (see :class:`HttpxTransport`)."""

Sleep = Callable[[float], Awaitable[None]]


@dataclass(frozen=True, slots=True, kw_only=True)
class Timeouts:
    """Timeouts in seconds (``None`` disables one).

    A plain number given where ``Timeouts`` is expected sets connect, read,
    write and pool alike, as in httpx.
    """

    connect: float | None = 10.0
    """Establishing the TCP/TLS connection."""
    read: float | None = 300.0
    """Waiting for the next bytes (the first byte included): long, since a
    reasoning model may think for minutes before it answers."""
    write: float | None = 60.0
    """Sending the request body."""
    pool: float | None = 30.0
    """Waiting for a free connection from the pool."""
    total: float | None = None
    """Everything: all attempts, the backoff between them, and for a stream
    the whole body."""

    @classmethod
    def coerce(cls, value: Timeouts | float | None) -> Timeouts:
        """``value`` as :class:`Timeouts` (``None`` gives the defaults)."""
        if value is None:
            return cls()
        if isinstance(value, Timeouts):
            return value
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
            raise UsageError(f"a timeout must be a positive number of seconds, got {value!r}")
        seconds = float(value)
        return cls(connect=seconds, read=seconds, write=seconds, pool=seconds)


@dataclass(frozen=True, slots=True, kw_only=True)
class HttpRetryPolicy:
    """When and how long to wait before sending a request again."""

    retries: int = 2
    """How many times a failed request is sent again (0 disables retries)."""
    backoff: Backoff = field(default_factory=Backoff)
    """The wait before each retry; a server's ``Retry-After`` is honoured up
    to ``backoff.max_retry_after``."""
    retry_statuses: frozenset[int] = field(
        default_factory=lambda: frozenset({408, 429, 500, 502, 503, 504, 529})
    )
    """HTTP statuses worth another attempt."""
    retry_read_timeouts: bool = False
    """Also retry when no response came within the read timeout. Off by
    default: a slow model would then cost several full timeouts."""

    def __post_init__(self) -> None:
        if isinstance(self.retries, bool) or not isinstance(self.retries, int) or self.retries < 0:
            raise UsageError("retries must be an integer >= 0")

    def delay(self, attempt: int, *, retry_after: float | None, rand: float) -> float:
        """Seconds to wait after failed attempt number ``attempt`` (1-based).

        Args:
            attempt: the attempt that just failed.
            retry_after: the server's requested delay, if any.
            rand: a number in ``[0, 1)`` for the jitter.
        """
        return self.backoff.delay(attempt, rand=rand, retry_after=retry_after)


def _generic_error(status_code: int, headers: Mapping[str, str], body: Any) -> ProviderError:
    """The error of an HTTP failure when no provider mapping was given."""
    decoded = decode_error_body(body)
    cls = error_class_for(status_code)
    return cls(
        f"HTTP {status_code}",
        status_code=status_code,
        retry_after=retry_after_seconds(headers),
        body=decoded,
    )


def _map_httpx_error(exc: Exception, timeouts: Timeouts) -> ToolwireError:
    """The toolwire error for an httpx exception (the caller chains ``__cause__``)."""
    import httpx

    detail = str(exc) or type(exc).__name__
    if isinstance(exc, httpx.TimeoutException):
        if isinstance(exc, httpx.ConnectTimeout):
            return TransportTimeout(f"connect timeout ({timeouts.connect}s) expired")
        if isinstance(exc, httpx.WriteTimeout):
            return TransportTimeout(f"write timeout ({timeouts.write}s) expired")
        if isinstance(exc, httpx.PoolTimeout):
            return TransportTimeout(
                f"no free connection within the pool timeout ({timeouts.pool}s)"
            )
        return TransportTimeout(f"read timeout ({timeouts.read}s) expired")
    if isinstance(exc, (httpx.ConnectError, httpx.ProxyError)):
        return ConnectError(f"could not connect: {detail}")
    if isinstance(exc, httpx.RemoteProtocolError):
        return ReadError(f"the connection broke: {detail}")
    if isinstance(exc, httpx.NetworkError):  # ReadError, WriteError, CloseError
        return ReadError(f"network error: {detail}")
    if isinstance(exc, httpx.DecodingError):
        return RemoteProtocolError(f"could not decode the response body: {detail}")
    if isinstance(exc, (httpx.UnsupportedProtocol, httpx.InvalidURL)):
        return UsageError(f"bad request URL: {detail}")
    if isinstance(exc, httpx.LocalProtocolError):
        return LocalProtocolError(f"invalid request: {detail}")
    return TransportError(f"HTTP transport error: {detail}")


async def _anyio_sleep(seconds: float) -> None:
    import anyio

    await anyio.sleep(seconds)


class _HttpxStreamResponse:
    """The response handed to the caller of :meth:`HttpxTransport.stream`."""

    def __init__(
        self, response: httpx.Response, transport: HttpxTransport, deadline: float | None
    ) -> None:
        self._response = response
        self._transport = transport
        self._deadline = deadline
        self.status_code: int = response.status_code
        self.headers: Mapping[str, str] = {k.lower(): v for k, v in response.headers.items()}

    async def aiter_bytes(self) -> AsyncIterator[bytes]:
        """The body as it arrives; failures are typed errors, never retried."""
        import httpx

        pieces = self._response.aiter_bytes().__aiter__()
        while True:
            try:
                with self._transport._deadline_scope(self._deadline):
                    chunk = await pieces.__anext__()
            except StopAsyncIteration:
                return
            except TimeoutError as exc:
                raise self._transport._total_timeout_error() from exc
            except httpx.HTTPError as exc:
                raise _map_httpx_error(exc, self._transport.timeouts) from exc
            yield chunk


class HttpxTransport:
    """An async HTTP transport on httpx with timeouts, retries and typed errors.

    Example::

        async with HttpxTransport(timeouts=Timeouts(read=60)) as transport:
            result = await provider.complete(request, transport=transport)
    """

    def __init__(
        self,
        *,
        timeouts: Timeouts | float | None = None,
        retry: HttpRetryPolicy | None = None,
        client: httpx.AsyncClient | None = None,
        sleep: Sleep | None = None,
        random: Callable[[], float] | None = None,
        max_connections: int = 100,
    ) -> None:
        """Create the transport and its connection pool.

        Args:
            timeouts: see :class:`Timeouts`.
            retry: see :class:`HttpRetryPolicy`.
            client: an ``httpx.AsyncClient`` to use (and not close) instead
                of the one the transport creates; its timeouts apply.
            sleep: the coroutine that waits between attempts
                (``anyio.sleep``); tests inject a recorder.
            random: ``[0, 1)`` numbers for the jitter (``random.random``).
            max_connections: size of the connection pool, in all.
        """
        import httpx

        self.timeouts = Timeouts.coerce(timeouts)
        self.retry = retry or HttpRetryPolicy()
        self._sleep: Sleep = sleep or _anyio_sleep
        self._random = random or _random_module.random
        self._owns_client = client is None
        if client is not None:
            clients = [client]
        else:
            # httpcore looks at every connection of its pool each time a
            # request starts or ends, which costs more than the rest of a
            # request once a pool holds dozens: several small pools instead,
            # each request to the least busy one.
            shards = max(1, math.ceil(max_connections / POOL_SHARD))
            size = math.ceil(max_connections / shards)
            t = self.timeouts
            clients = [
                httpx.AsyncClient(
                    timeout=httpx.Timeout(
                        connect=t.connect, read=t.read, write=t.write, pool=t.pool
                    ),
                    limits=httpx.Limits(max_connections=size, max_keepalive_connections=size),
                    follow_redirects=False,
                )
                for _ in range(shards)
            ]
        self._clients = clients
        self._busy = [0] * len(clients)  # requests in flight, per pool
        self._closed = False

    def __repr__(self) -> str:
        return f"HttpxTransport(timeouts={self.timeouts!r}, retry={self.retry!r})"

    async def __aenter__(self) -> HttpxTransport:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close the pooled connections (a client passed in is left open)."""
        if self._closed:
            return
        self._closed = True
        if self._owns_client:
            for client in self._clients:
                await client.aclose()

    # -- deadline helpers -----------------------------------------------

    def _new_deadline(self) -> float | None:
        total = self.timeouts.total
        return None if total is None else time.monotonic() + total

    def _deadline_scope(self, deadline: float | None) -> AbstractContextManager[Any]:
        if deadline is None:
            return nullcontext()
        import anyio

        return anyio.fail_after(max(0.0, deadline - time.monotonic()))

    def _total_timeout_error(self) -> TransportTimeout:
        return TransportTimeout(f"total timeout ({self.timeouts.total}s) expired")

    # -- the attempt loop ------------------------------------------------

    def _retryable_exception(self, exc: Exception) -> bool:
        import httpx

        if isinstance(exc, (httpx.ReadTimeout, httpx.WriteTimeout)):
            return self.retry.retry_read_timeouts
        # Nothing of the response has reached the caller yet, so a broken
        # connection (refused, reset, closed before or inside the body) is
        # safe to try again.
        return isinstance(exc, (httpx.TransportError,)) and not isinstance(
            exc, (httpx.UnsupportedProtocol, httpx.LocalProtocolError, httpx.DecodingError)
        )

    async def _backoff(
        self,
        request: HttpRequest,
        *,
        attempt: int,
        deadline: float | None,
        reason: str,
        retry_after: float | None,
    ) -> bool:
        """Wait before the next attempt; False when no attempt is left."""
        if attempt > self.retry.retries:
            return False
        delay = self.retry.delay(attempt, retry_after=retry_after, rand=self._random())
        if deadline is not None and time.monotonic() + delay >= deadline:
            return False
        logger.info(
            "retrying %s %s after %s in %.3fs (attempt %d of %d)",
            request.method,
            request.url.split("?", 1)[0],  # a query string may carry a credential
            reason,
            delay,
            attempt + 1,
            self.retry.retries + 1,
        )
        await self._sleep(delay)
        return True

    async def _open(
        self,
        request: HttpRequest,
        parse_error: ErrorParser | None,
        *,
        stream: bool,
        deadline: float | None,
    ) -> tuple[httpx.Response, int]:
        """Send until a success status, retrying what may be retried; the
        response and the pool it holds a connection of (see :meth:`_done`)."""
        if self._closed:
            raise UsageError("the transport is closed")
        content = request.content()
        attempt = 0
        while True:
            attempt += 1
            busy = self._busy
            pool = busy.index(min(busy))
            busy[pool] += 1
            kept = False
            try:
                response = await self._attempt(
                    request, content, parse_error, pool, attempt, stream, deadline
                )
                kept = response is not None
            finally:
                if not kept:
                    busy[pool] -= 1
            if response is not None:
                return response, pool

    def _done(self, pool: int) -> None:
        """A response of ``pool`` is closed: its request is no longer in flight."""
        self._busy[pool] -= 1

    async def _attempt(
        self,
        request: HttpRequest,
        content: bytes,
        parse_error: ErrorParser | None,
        pool: int,
        attempt: int,
        stream: bool,
        deadline: float | None,
    ) -> httpx.Response | None:
        """One attempt: the response, or ``None`` to try again (after the backoff)."""
        import httpx

        client = self._clients[pool]
        try:
            with self._deadline_scope(deadline):
                response = await client.send(
                    client.build_request(
                        request.method,
                        request.url,
                        headers=dict(request.headers),
                        content=content,
                    ),
                    stream=stream,
                )
                if stream and response.status_code >= 400:
                    try:
                        await response.aread()  # the error body is small; read it all
                    finally:
                        await response.aclose()
        except TimeoutError as exc:
            raise self._total_timeout_error() from exc
        except httpx.HTTPError as exc:
            error = _map_httpx_error(exc, self.timeouts)
            if self._retryable_exception(exc) and await self._backoff(
                request,
                attempt=attempt,
                deadline=deadline,
                reason=type(error).__name__,
                retry_after=None,
            ):
                return None
            raise error from exc
        if response.status_code < 400:
            return response
        headers = {k.lower(): v for k, v in response.headers.items()}
        parser = parse_error or _generic_error
        provider_error = parser(response.status_code, headers, response.content)
        if response.status_code in self.retry.retry_statuses and await self._backoff(
            request,
            attempt=attempt,
            deadline=deadline,
            reason=f"HTTP {response.status_code}",
            retry_after=provider_error.retry_after,
        ):
            return None
        raise provider_error

    # -- public API ------------------------------------------------------

    async def send(
        self, request: HttpRequest, *, parse_error: ErrorParser | None = None
    ) -> HttpResponse:
        """Send ``request`` and read its whole response.

        Args:
            request: what to send.
            parse_error: the provider's mapping of HTTP errors.

        Raises:
            ConnectError: the server could not be reached (after retries).
            ReadError: the connection broke (after retries).
            TransportTimeout: a timeout expired.
            ProviderError: an HTTP error status (after retries for 429/5xx).
        """
        deadline = self._new_deadline()
        response, pool = await self._open(request, parse_error, stream=False, deadline=deadline)
        self._done(pool)
        return HttpResponse(
            status_code=response.status_code,
            headers={k.lower(): v for k, v in response.headers.items()},
            content=response.content,
        )

    @asynccontextmanager
    async def stream(
        self, request: HttpRequest, *, parse_error: ErrorParser | None = None
    ) -> AsyncIterator[_HttpxStreamResponse]:
        """Send ``request``; the context yields the response with its body unread.

        Retries happen while opening, before the response is yielded; once it
        is, a failure while reading raises and is never retried.

        Raises:
            ConnectError, ReadError, TransportTimeout, ProviderError: as
                :meth:`send`, while opening or while reading the body.
        """
        deadline = self._new_deadline()
        response, pool = await self._open(request, parse_error, stream=True, deadline=deadline)
        try:
            yield _HttpxStreamResponse(response, self, deadline)
        finally:
            try:
                await response.aclose()
            finally:
                self._done(pool)
