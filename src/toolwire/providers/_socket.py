"""One run's transport in WebSocket mode: a socket for its turns, HTTP behind it.

Theory of operation: a provider asked for a WebSocket
(``OpenAIResponses(transport="websocket")``) gives each run a
:class:`SocketTransport` (:meth:`Provider.run_transport
<toolwire.providers.Provider.run_transport>`). It is a
:class:`~toolwire.http.Transport`: the agent builds the same requests, with
the whole context, and reads the same bytes, so nothing above the transport
changes. Its first streamed request opens the connection; each request is
sent as the dialect's message (:class:`~toolwire.stream.codecs.websocket.SocketMode`)
and its events are framed for the dialect's stream decoder. After a
response ends, the next request continues it: the message names it and
carries only the new items (the tool results), not the whole context again.

A connection lives at most ``max_age`` seconds on the server (OpenAI: 60
minutes): the transport opens a new one before a request when the one it has
is within ``renew_before`` of that age (by its ``clock``, injectable), and
the new connection's first request carries the whole context.

When the socket cannot serve a request before any of its events came (it
could not be opened, it was closed while the run ran its tools, or the
server no longer knows the response continued: ``previous_response_not_found``),
the request goes over HTTP, whole, and so do the rest of the run's
requests: the journal's recorded results are in the request's context, and
no tool runs again. A socket that breaks while a response streams is a
broken stream, as an HTTP cut is (the agent's ``stream_retries`` decide
whether the turn is asked again, over HTTP then).

A response streaming on the socket can be steered (:meth:`SocketTransport.steer`,
where the dialect can): the texts are sent on the socket, and what became of
each batch is known when the response ended (:meth:`SocketTransport.steer_fates`):
``committed`` when the server started a successor with them (its first event
follows the end: the transport keeps it, and it answers the next streamed
request, which is not sent), ``pending`` when the response ended with calls
(the server holds the texts: the request that answers the calls leaves them
out), ``returned`` when the server refused them or never said (the client
says them itself). Acknowledgements come in the order the batches were sent.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

import anyio

from toolwire.errors import ConnectError, ProviderError, ReadError, TransportTimeout
from toolwire.http import ErrorParser, HttpRequest, HttpResponse, StreamResponse, Transport
from toolwire.http.websocket import WebSocket, connect
from toolwire.stream.codecs.websocket import SocketMessage

if TYPE_CHECKING:
    from toolwire.stream.codecs.websocket import SocketMode, SocketRead

__all__ = ["SocketTransport", "SteerFate"]

logger = logging.getLogger("toolwire.providers.websocket")

SteerFate = Literal["committed", "pending", "returned"]
"""What became of steers sent on the socket (see the module docstring)."""


@dataclass(slots=True)
class _Batch:
    """Steers sent together, and what the server said of them."""

    number: int
    texts: tuple[str, ...]
    accepted: bool = False
    fate: SteerFate | None = None


class SocketTransport:
    """The transport of one run over a WebSocket, HTTP behind it (see the module docstring).

    Args:
        mode: the dialect's WebSocket mode.
        url: the socket's URL.
        headers: the upgrade request's headers (the provider's credentials).
        http: the transport of requests that go over HTTP.
        clock: seconds, monotonic (``time.monotonic`` by default).
        max_age: how long the server keeps a connection open, in seconds.
        renew_before: a connection this close to ``max_age`` is replaced
            before a request is sent on it.
        connect_timeout: seconds to open the socket.
        read_timeout: seconds to wait for each message.
        total_timeout: seconds for a whole response, from its request
            (``None``: no bound but ``read_timeout``'s).
    """

    def __init__(
        self,
        *,
        mode: SocketMode,
        url: str,
        headers: Mapping[str, str],
        http: Transport,
        clock: Callable[[], float] | None = None,
        max_age: float = 3600.0,
        renew_before: float = 300.0,
        connect_timeout: float = 10.0,
        read_timeout: float = 300.0,
        total_timeout: float | None = 600.0,
    ) -> None:
        self._mode = mode
        self._url = url
        self._headers = dict(headers)
        self._http = http
        self._clock = clock or time.monotonic
        self._max_age = max_age
        self._renew_before = renew_before
        self._connect_timeout = connect_timeout
        self._read_timeout = read_timeout
        self._total_timeout = total_timeout
        self._socket: WebSocket | None = None
        self._opened_at = 0.0
        self._previous: tuple[str, list[Any] | None] | None = None
        self._busy = False
        self._live: _SocketResponse | None = None
        self._successor: tuple[str, SocketRead] | None = None
        """The first event of a successor the server started on its own."""
        self._batches: list[_Batch] = []
        self._sent = 0
        self._held: list[str] = []
        """The texts of steers the server holds for the continuation of ``_previous``."""
        self._steering = mode.steer is not None
        self.http_only = False
        """Whether the run's requests now go over HTTP (the socket failed it)."""
        self.connections = 0
        """Sockets opened."""
        self.continued = 0
        """Requests sent as a continuation of the previous response (only the new items)."""
        self.fallbacks: list[str] = []
        """Why requests went over HTTP instead, in order."""

    def __repr__(self) -> str:
        return f"<SocketTransport {self._url} connections={self.connections}>"

    async def send(
        self, request: HttpRequest, *, parse_error: ErrorParser | None = None
    ) -> HttpResponse:
        """A whole (non-streamed) request goes over HTTP."""
        return await self._http.send(request, parse_error=parse_error)

    @contextlib.asynccontextmanager
    async def stream(
        self, request: HttpRequest, *, parse_error: ErrorParser | None = None
    ) -> AsyncIterator[StreamResponse]:
        """The response of a streamed request: over the socket when it can
        serve it, over HTTP otherwise."""
        response = None
        accepted = self._mode.accepts(request.json)
        if self._successor is not None and not accepted:
            await self._drop()  # the successor the server started is not this request's
        # One response at a time on the socket: another asked meanwhile goes over HTTP.
        if self._successor is not None and not self._busy:
            response = self._successor_response(request)
        elif not self.http_only and not self._busy and accepted:
            response = await self._open(request, parse_error)
        if response is None:
            async with self._http.stream(request, parse_error=parse_error) as answered:
                yield answered
            return
        self._busy, self._live = True, response
        try:
            yield response
        finally:
            self._busy, self._live = False, None
            await response.aclose()
            if not response.ended:  # left before its end: the socket is mid-response
                await self._drop()

    @property
    def steering(self) -> bool:
        """Whether steers are sent on the socket (the dialect can steer, and
        no steer was refused on it)."""
        return self._steering and not self.http_only

    @property
    def steerable(self) -> bool:
        """Whether a response streams on the socket now that can be steered."""
        live = self._live
        return (
            self._steering
            and live is not None
            and not live.ended
            and live.response_id is not None
            and self._socket is not None
        )

    async def steer(self, texts: Sequence[str]) -> int | None:
        """Send ``texts`` to steer the live response: the batch's number
        (its fate is told by :meth:`steer_fates` once the response ended),
        ``None`` when they were not sent (nothing can be steered now)."""
        live, socket, steer = self._live, self._socket, self._mode.steer
        if not self.steerable or live is None or socket is None or steer is None:
            return None
        assert live.response_id is not None
        self._sent += 1
        batch = _Batch(self._sent, tuple(texts))
        self._batches.append(batch)  # before it is sent: acknowledged in this order
        try:
            # Shielded: a steer is sent whole, or known not to be (never taken
            # from the run and lost half written when its response ends).
            with anyio.fail_after(self._read_timeout, shield=True):
                await socket.send(steer(live.response_id, texts))
        except (ReadError, TransportTimeout, TimeoutError) as failed:
            self._batches.remove(batch)
            if isinstance(failed, TimeoutError):  # a frame half written: the socket is done
                await self._drop()
            return None  # the response's next read finds the socket broken
        return batch.number

    @property
    def successor_started(self) -> bool:
        """Whether the server started a successor that answers the next request."""
        return self._successor is not None

    def steer_fates(self) -> dict[int, SteerFate]:
        """What became of each batch sent whose fate is known, by number
        (each told once)."""
        known = {b.number: b.fate for b in self._batches if b.fate is not None}
        self._batches = [b for b in self._batches if b.fate is None]
        return known

    def _acknowledged(self, ack: str | None) -> None:
        """The server said what became of the oldest batch it had not settled."""
        open_ = [b for b in self._batches if b.fate is None]
        if ack == "accepted":
            batch = next((b for b in open_ if not b.accepted), None)
            if batch is not None:
                batch.accepted = True
        elif ack == "failed":
            batch = next((b for b in open_ if not b.accepted), None) or next(iter(open_), None)
            if batch is not None:  # one of ours: the run's later steers cut the stream instead
                batch.fate = "returned"
                self._steering = False
                logger.info("WebSocket %s: a steer was refused; later ones cut", self._url)
        elif ack == "pending":
            batch = next((b for b in open_ if b.accepted), None)
            if batch is not None:
                batch.fate = "pending"
                self._held += batch.texts

    def _unsettled(self) -> bool:
        return any(b.fate is None for b in self._batches)

    def _begun(self, first: tuple[str, SocketRead]) -> None:
        """A successor the server started: the open batches are committed to it."""
        self._successor = first
        for batch in self._batches:
            if batch.fate is None:
                batch.fate = "committed"

    def _settle_open(self) -> None:
        for batch in self._batches:
            if batch.fate is None:
                batch.fate = "returned"

    def _successor_response(self, request: HttpRequest) -> _SocketResponse | None:
        """The response of the successor the server started (the request is
        not sent: it asks for what the server already streams)."""
        first, self._successor = self._successor, None
        socket = self._socket
        if first is None or socket is None:
            return None
        whole = request.json.get("input")
        message = SocketMessage("", True, whole if isinstance(whole, list) else None)
        self.continued += 1
        return _SocketResponse(self, socket, message, first, self._deadline())

    def _deadline(self) -> float | None:
        """When a response asked now must have ended (``None``: no bound)."""
        total = self._total_timeout
        return None if total is None else anyio.current_time() + total

    async def aclose(self) -> None:
        """Close the socket (the HTTP transport is its owner's)."""
        await self._drop()

    async def _open(
        self, request: HttpRequest, parse_error: ErrorParser | None
    ) -> _SocketResponse | None:
        """The request sent on the socket and its first message read; ``None``
        when it must go over HTTP (the socket has failed the run)."""
        for _ in range(2):  # once more on a new socket when this one expired
            try:
                socket = await self._connection(parse_error)
            except (ConnectError, TransportTimeout, ProviderError) as failed:
                self._fall_back(f"the socket could not be opened ({failed})")
                return None
            previous_id, previous_input = self._previous or (None, None)
            message = self._mode.message(request.json, previous_id, previous_input, self._held)
            self._held = []
            deadline = self._deadline()
            try:
                await socket.send(message.text)
                first = await socket.receive(self._read_timeout)
            except (ReadError, TransportTimeout) as failed:
                await self._drop()
                self._fall_back(f"the socket failed before the response ({failed})")
                return None
            if first is None:
                await self._drop()
                self._fall_back("the socket was closed")
                return None
            read = self._mode.read(first)
            if read.kind == "not_found":
                await self._drop()
                self._fall_back("the server no longer has the response continued")
                return None
            if read.kind == "expired":
                logger.info("the WebSocket %s reached its lifetime: a new one is opened", self._url)
                await self._drop()
                continue
            if message.continued:
                self.continued += 1
            return _SocketResponse(self, socket, message, (first, read), deadline)
        self._fall_back("a new socket expired at once")
        return None

    async def _connection(self, parse_error: ErrorParser | None) -> WebSocket:
        """The open socket, a new one when there is none or it is old."""
        socket = self._socket
        if socket is not None and (
            socket.closed or self._clock() - self._opened_at >= self._max_age - self._renew_before
        ):
            await self._drop()
            socket = None
        if socket is None:
            socket = await connect(
                self._url, self._headers, open_within=self._connect_timeout, parse_error=parse_error
            )
            self._socket, self._opened_at = socket, self._clock()
            self.connections += 1
        return socket

    def _fall_back(self, why: str) -> None:
        logger.info("WebSocket %s: %s; the run goes on over HTTP", self._url, why)
        self.http_only = True
        self.fallbacks.append(why)

    async def _drop(self) -> None:
        """Close the socket; the next one starts from the whole context (the
        steers it did not settle are returned)."""
        socket, self._socket, self._previous = self._socket, None, None
        self._successor, self._held = None, []
        self._settle_open()
        if socket is not None:
            await socket.aclose()

    def _answered(self, response_id: str | None, message: SocketMessage) -> None:
        """A response ended: the next request may continue it."""
        if response_id is None or message.input is None:
            self._previous = None
        else:
            self._previous = (response_id, message.input)


class _SocketResponse:
    """One response read from the socket, as a stream of the dialect's bytes."""

    status_code = 200
    headers: Mapping[str, str] = {}

    def __init__(
        self,
        owner: SocketTransport,
        socket: WebSocket,
        message: SocketMessage,
        first: tuple[str, SocketRead],
        deadline: float | None,
    ) -> None:
        self._owner = owner
        self._socket = socket
        self._message = message
        self._first = first
        self._deadline = deadline
        self.ended = False
        """Whether its last event was read (the socket is free again)."""
        self.response_id: str | None = None
        """The response's id, once its first event named it."""
        self._reading: AsyncGenerator[bytes, None] | None = None

    def aiter_bytes(self) -> AsyncIterator[bytes]:
        """The events, each framed for the dialect's stream decoder."""
        self._reading = self._events()
        return self._reading

    async def aclose(self) -> None:
        """Stop reading the events (a response left before its end)."""
        reading, self._reading = self._reading, None
        if reading is not None:
            await reading.aclose()

    async def _events(self) -> AsyncGenerator[bytes, None]:
        owner, mode = self._owner, self._owner._mode
        (text, read), after_end, successor = self._first, False, False
        while True:
            if after_end and read.kind == "created":  # a successor the server started
                owner._begun((text, read))
                break
            yield mode.frame(text)
            if read.kind == "created":
                self.response_id = read.response_id
            elif read.kind == "steer":
                owner._acknowledged(read.steer)
            elif read.kind != "event":
                if after_end:  # a refusal after the end: nothing follows it
                    break
                owner._answered(read.response_id if read.kind == "end" else None, self._message)
                after_end, successor = True, read.successor
            if after_end and not successor and not owner._unsettled():
                break
            received = await (self._after_end() if after_end else self._next())
            if received is None:
                break
            text, read = received, mode.read(received)
        self.ended = True
        owner._settle_open()

    async def _next(self) -> str:
        """The response's next message (a broken socket fails the stream)."""
        owner, deadline = self._owner, self._deadline
        within = owner._read_timeout
        if deadline is not None:
            within = min(within, deadline - anyio.current_time())
        try:
            if within <= 0:
                raise TransportTimeout(f"the response took longer than {owner._total_timeout:g} s")
            received = await self._socket.receive(within)
        except (ReadError, TransportTimeout):
            await self._broke()
            raise
        if received is None:
            await self._broke()
            raise ReadError("the WebSocket closed while a response streamed")
        return received

    async def _after_end(self) -> str | None:
        """A message after the response's end (what became of a steer, a
        successor): ``None`` when none comes (the response stands; the
        socket is dropped, the steers it did not settle returned)."""
        owner = self._owner
        try:
            received = await self._socket.receive(owner._read_timeout)
        except (ReadError, TransportTimeout):
            received = None
        if received is None:
            await owner._drop()
        return received

    async def _broke(self) -> None:
        self.ended = True
        await self._owner._drop()
        self._owner._fall_back("the socket broke while a response streamed")
