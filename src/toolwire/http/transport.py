"""The HTTP transport: the only place toolwire touches the network.

Theory of operation: :class:`HttpxTransport` holds httpx's connection pools
(many small ones: see :func:`_pools`), so connections are reused across
requests, and adds what every provider call needs:

* **Timeouts** (:class:`Timeouts`): connect, read (between bytes), write,
  pool, and a *total* deadline (10 minutes by default) covering retries and,
  for a stream, the whole body, so a server that keeps a connection alive
  without ever finishing cannot hold a run forever.
* **Bounded reads** (:class:`BodyLimits`): an error body is read up to 64 KiB
  and a whole body up to 32 MiB; what is beyond is never read. A streamed
  body is read as the caller consumes it.
* **No redirects**: a 3xx answer is a :class:`~toolwire.errors.ProviderError`
  saying where it points, never followed, so the key never travels to
  another host.
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

Retries are logged at INFO on ``toolwire.http.transport`` with the method, URL,
reason and delay — never headers, which carry the API key. The sleep between
attempts is injectable so tests can assert backoff delays without waiting.

httpx and anyio are imported when a transport is created, not when toolwire
is imported, so the sans-I/O core stays free of the network stack.
"""

from __future__ import annotations

import logging
import random as _random_module
import time
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING

from toolwire.errors import (
    TransportTimeout,
    UsageError,
)
from toolwire.http import (
    ErrorParser,
    HttpRequest,
    HttpResponse,
    redact_url,
)
from toolwire.http._deadline import deadline_scope
from toolwire.http._errors import generic_error, map_httpx_error, redirect_error, too_large
from toolwire.http._inflate import INFLATED, inflate
from toolwire.http._pools import DirectPools, make_pools
from toolwire.http._settings import BodyLimits, HttpRetryPolicy, Timeouts
from toolwire.http.ratelimit import RateKey, RateLimiter

if TYPE_CHECKING:
    import httpx

__all__ = ["BodyLimits", "HttpRetryPolicy", "HttpxTransport", "Timeouts"]

logger = logging.getLogger("toolwire.http.transport")

Sleep = Callable[[float], Awaitable[None]]


async def _observe(
    limiter: RateLimiter, key: RateKey, status: int, headers: Mapping[str, str]
) -> None:
    """Tell the limiter of an answer: off the event loop when its store
    waits on I/O (a database), as its reservations are."""
    if limiter.store.blocking:
        from anyio import to_thread

        await to_thread.run_sync(limiter.observe, key, status, headers)
    else:
        limiter.observe(key, status, headers)


async def _anyio_sleep(seconds: float) -> None:
    import anyio

    await anyio.sleep(seconds)


async def _read_capped(response: httpx.Response, cap: int, limits: BodyLimits) -> bytes:
    """At most ``cap`` bytes of the body (decoded): the rest is never read."""
    data = bytearray()
    async for piece in _body_pieces(response, limits):
        data += piece[: cap - len(data)]
        if len(data) >= cap:
            break
    return bytes(data)


def _body_pieces(response: httpx.Response, limits: BodyLimits) -> AsyncIterator[bytes]:
    """The pieces of a response body as the network delivers them.

    An unencoded body is read from the connection's stream itself: httpx's
    ``aiter_bytes`` would pass each piece through two more generators, a
    decoder that leaves it as it is and two chunkers that do not cut it.
    """
    import httpx

    stream = response.stream
    encoding = response.headers.get("content-encoding", "identity").strip().lower()
    if encoding in ("", "identity") and isinstance(stream, httpx.AsyncByteStream):
        return stream.__aiter__()
    if encoding in INFLATED:  # in bounded pieces, never a whole read at once
        return inflate(
            response.aiter_raw(), encoding, max_ratio=limits.max_inflate_ratio
        ).__aiter__()
    return response.aiter_bytes().__aiter__()


class _HttpxStreamResponse:
    """The response handed to the caller of :meth:`HttpxTransport.stream`."""

    def __init__(
        self,
        response: httpx.Response,
        transport: HttpxTransport,
        deadline: float | None,
        url: str,
    ) -> None:
        self._response = response
        self._url = url
        self._transport = transport
        self._deadline = deadline
        self.status_code: int = response.status_code
        self._bodies: list[AsyncGenerator[bytes, None]] = []

    @property
    def headers(self) -> Mapping[str, str]:
        """The response headers, lower-case names."""
        return {k.lower(): v for k, v in self._response.headers.items()}

    def aiter_bytes(self) -> AsyncIterator[bytes]:
        """The body as it arrives; failures are typed errors, never retried."""
        body = self._read_body()
        self._bodies.append(body)
        return body

    async def aclose(self) -> None:
        """Close the readers handed out, so none is left to the garbage collector."""
        for body in self._bodies:
            await body.aclose()

    async def _read_body(self) -> AsyncGenerator[bytes, None]:
        import httpx

        pieces = _body_pieces(self._response, self._transport.limits)
        deadline = self._deadline
        read = self._transport.timeouts.read
        while True:
            try:
                # A cancel scope per read costs more than decoding the chunk:
                # while more than a read timeout is left, httpx's read timeout
                # ends a stuck read before the total deadline could, and the
                # deadline is checked between reads.
                if deadline is None:
                    chunk = await pieces.__anext__()
                elif read is not None and deadline - time.monotonic() > read:
                    chunk = await pieces.__anext__()
                else:
                    with deadline_scope(deadline):
                        chunk = await pieces.__anext__()
            except StopAsyncIteration:
                return
            except TimeoutError as exc:
                raise self._transport._total_timeout_error() from exc
            except httpx.HTTPError as exc:
                raise map_httpx_error(exc, self._transport.timeouts, self._url) from exc
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
        limits: BodyLimits | None = None,
        rate_limiter: RateLimiter | None = None,
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
            limits: how much of a response is read (see :class:`BodyLimits`).
            rate_limiter: budgets of requests and tokens per minute shared
                with every transport given the same limiter (see
                :class:`~toolwire.http.RateLimiter`); each attempt waits its turn.
        """
        self.timeouts = Timeouts.coerce(timeouts)
        self.retry = retry or HttpRetryPolicy()
        self.limits = limits or BodyLimits()
        self.rate_limiter = rate_limiter
        self._sleep: Sleep = sleep or _anyio_sleep
        self._random = random or _random_module.random
        self._owns_client = client is None
        self._direct: DirectPools | None = None
        if client is not None:
            clients = [client]
        else:
            clients, self._direct = make_pools(max_connections, self.timeouts)
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
            redact_url(request.url),  # never userinfo or a credential parameter
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
        deadline: float | None,
        whole: bool = False,
    ) -> tuple[httpx.Response, bytes, int]:
        """Send until a success status, retrying what may be retried. With
        ``whole``, the body is read too (a cut body is retried like a failed
        connection) and returned; otherwise it is left unread, and the pool
        its connection belongs to (the third value) stays busy until
        :meth:`_done`."""
        import httpx

        if self._closed:
            raise UsageError("the transport is closed")
        parser = parse_error or generic_error
        content = request.content()
        attempt = 0
        limiter = self.rate_limiter
        while True:
            attempt += 1
            # Every attempt waits its turn in the budget shared with the
            # other runs (a retry after a 429 waits out its Retry-After).
            key = await limiter.acquire(request, len(content)) if limiter is not None else None
            busy = self._busy
            pool = busy.index(min(busy))
            busy[pool] += 1
            held = False
            try:
                response, body = await self._attempt(pool, request, content, deadline, whole)
                if limiter is not None and key is not None:
                    await _observe(limiter, key, response.status_code, response.headers)
                if body is None:
                    held = True
                    return response, b"", pool
                if response.status_code < 300:
                    return response, body, pool
            except TimeoutError as exc:
                raise self._total_timeout_error() from exc
            except httpx.HTTPError as exc:
                error = map_httpx_error(exc, self.timeouts, request.url)
                if self._retryable_exception(exc) and await self._backoff(
                    request,
                    attempt=attempt,
                    deadline=deadline,
                    reason=type(error).__name__,
                    retry_after=None,
                ):
                    continue
                raise error from exc
            finally:
                if not held:
                    busy[pool] -= 1
            headers = {k.lower(): v for k, v in response.headers.items()}
            if response.status_code < 400:
                raise redirect_error(request, response.status_code, headers)
            provider_error = parser(response.status_code, headers, body)
            if response.status_code in self.retry.retry_statuses and await self._backoff(
                request,
                attempt=attempt,
                deadline=deadline,
                reason=f"HTTP {response.status_code}",
                retry_after=provider_error.retry_after,
            ):
                continue
            raise provider_error

    def _done(self, pool: int) -> None:
        """A response of ``pool`` is closed: its request is no longer in flight."""
        self._busy[pool] -= 1

    async def _attempt(
        self,
        pool: int,
        request: HttpRequest,
        content: bytes,
        deadline: float | None,
        whole: bool,
    ) -> tuple[httpx.Response, bytes | None]:
        """One request through pool number ``pool``: the response and its
        body (read whole, or capped for an error status), or ``None`` for a
        success left unread."""
        direct, client = self._direct, self._clients[pool]
        with deadline_scope(deadline):
            if direct is not None:
                # Past the client, the request it would send, to the byte
                # (tests/transport/test_direct_differential.py): through the
                # client, an agent run costs 1.16x the CPU 50 at a time and
                # 1.21x 1 at a time (medians of `python bench/bench_tricks.py
                # --repeats 61 --runs 50 --concurrency 50,1`; docs/benchmarks.md).
                built = direct.request(request.method, request.url, request.headers, content)
                # Never redirected either: the transport does not follow.
                response = await direct.pools[pool].handle_async_request(built)
            else:
                response = await client.send(
                    client.build_request(
                        request.method, request.url, headers=dict(request.headers),
                        content=content,
                    ),
                    stream=True,
                    # Never: a redirect would carry the key to another host.
                    follow_redirects=False,
                )  # fmt: skip
            if response.status_code < 300:
                if not whole:
                    return response, None
                try:
                    return response, await self._whole_body(response)
                finally:
                    await response.aclose()
            try:
                return response, await _read_capped(
                    response, self.limits.max_error_body_bytes, self.limits
                )
            finally:
                await response.aclose()

    async def _whole_body(self, response: httpx.Response) -> bytes:
        cap = self.limits.max_body_bytes
        length = response.headers.get("content-length", "")
        if length.isdigit() and int(length) > cap:
            raise too_large(cap)
        content = await _read_capped(response, cap + 1, self.limits)
        if len(content) > cap:
            raise too_large(cap)
        return content

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
            ProviderError: an HTTP error status (after retries for 429/5xx),
                or a redirect (never followed).
            RemoteProtocolError: the body is larger than ``max_body_bytes``.
        """
        deadline = self._new_deadline()
        response, content, _ = await self._open(request, parse_error, deadline=deadline, whole=True)
        return HttpResponse(
            status_code=response.status_code,
            headers={k.lower(): v for k, v in response.headers.items()},
            content=content,
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
        response, _, pool = await self._open(request, parse_error, deadline=deadline)
        streamed = _HttpxStreamResponse(response, self, deadline, request.url)
        try:
            yield streamed
        finally:
            try:
                await streamed.aclose()
                await response.aclose()
            finally:
                self._done(pool)
