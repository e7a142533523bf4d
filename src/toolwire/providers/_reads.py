"""Send, read, decode: the one path from a streaming request to decoded events.

:meth:`Provider.stream <toolwire.providers.Provider.stream>`,
:meth:`Provider.complete <toolwire.providers.Provider.complete>` and the
agent's model turns all read a response through :class:`ProviderStream`: the
transport opens the response (its retries happen there, before any byte is
read), each network read goes to the sans-I/O decoder, and the events of one
read travel together. Reading stops at the first failed-stream event: the
decoder decodes nothing after it.

Whether an error came before the body or while reading it matters to the
agent (a broken stream may be sent again, a refused request may not), so
:attr:`ProviderStream.reading` tells which.

A dialect whose streams can be picked up again from an event id (Gemini
Interactions: ``GET .../interactions/{id}?stream=true&last_event_id=...``)
gets a ``continuation`` from its provider: a stream cut while read is then
continued, its rest fed to the same decoder, and the turn is not asked (nor
paid) twice. Only whole events reach the decoder meanwhile, so the event cut
in half is read once, from the continuation.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncGenerator, Callable
from typing import TYPE_CHECKING

from toolwire.errors import ReadError, ToolwireError, TransportTimeout
from toolwire.stream.decoder import StreamDecoder

if TYPE_CHECKING:
    from toolwire.events import Event
    from toolwire.http import ErrorParser, HttpRequest, Transport

__all__ = ["MAX_CONTINUATIONS", "Continuation", "ProviderStream"]

Continuation = Callable[[tuple[str, str]], "HttpRequest | None"]
"""Given a cut stream's ``(stream id, last event id)``, the request that
streams the rest (``None``: it cannot be continued)."""

MAX_CONTINUATIONS = 3
"""Continuations of one cut stream, at most: past them the cut is reported."""

_MAX_HELD = 1 << 20
"""Bytes of an unfinished SSE event held back for a continuation, at most;
past that the stream is read as is (and is no longer continued)."""


_EVENT_ENDS = (b"\n\n", b"\r\n\r\n", b"\n\r\n", b"\r\r")
"""What ends an SSE event (a blank line, in any of SSE's line endings)."""


class _WholeEvents:
    """Hands on the bytes of whole SSE events only, holding an unfinished
    event's bytes back, so that a stream cut inside an event can be followed
    by its continuation's bytes, which send that event again in full."""

    __slots__ = ("_held", "_size", "_tail", "continuable")

    def __init__(self) -> None:
        self._held: list[bytes] = []
        self._size = 0
        self._tail = b""  # the last bytes held, where an event's end may begin
        self.continuable = True

    def feed(self, chunk: bytes) -> bytes:
        if not self.continuable or not chunk:
            return chunk
        window = self._tail + chunk
        ends = [at + len(sep) for sep in _EVENT_ENDS if (at := window.rfind(sep)) >= 0]
        end = max(ends, default=0) - len(self._tail)  # in ``chunk``; <= 0: none in it
        if end <= 0:
            self._held.append(chunk)
            self._size += len(chunk)
            self._tail = window[-3:]
            if self._size > _MAX_HELD:
                self.continuable = False
                return self.rest()
            return b""
        out = b"".join([*self._held, chunk[:end]])
        rest = chunk[end:]
        self._held, self._size, self._tail = ([rest] if rest else []), len(rest), rest[-3:]
        return out

    def rest(self) -> bytes:
        """The bytes held back (the body ended: they go to the decoder)."""
        out = b"".join(self._held)
        self._held, self._size, self._tail = [], 0, b""
        return out


class ProviderStream:
    """One streaming request, sent, read and decoded by :meth:`reads`.

    Args:
        request: a request built with ``stream=True``.
        transport: what sends it.
        parse_error: the provider's mapping of HTTP errors.
        dialect: the decoder's dialect (``"auto"`` to sniff it).
        watch: told each read's events before they are given; what it raises
            (a usage limit crossed) closes the response and ends :meth:`reads`.
        continuation: for a dialect whose cut streams continue from an event
            id (Gemini Interactions), the request for the rest; a stream
            cut while read is then continued (at most
            :data:`MAX_CONTINUATIONS` times) instead of reported.
    """

    __slots__ = (
        "_continuation",
        "_opened",
        "_parse_error",
        "_request",
        "_transport",
        "_watch",
        "continued",
        "decoder",
        "reading",
    )

    def __init__(
        self,
        request: HttpRequest,
        *,
        transport: Transport,
        parse_error: ErrorParser | None,
        dialect: str,
        watch: Callable[[list[Event]], None] | None = None,
        continuation: Continuation | None = None,
    ) -> None:
        self._request = request
        self._watch = watch
        self._transport = transport
        self._parse_error = parse_error
        self._continuation = continuation
        self._opened = False  # the body being read answers the current request
        self.decoder = StreamDecoder(dialect)
        """The decoder: its ``result()`` and ``error`` once :meth:`reads` ended."""
        self.reading = False
        """Whether the response's body is being read: an error raised while
        this is true broke the stream; one raised before it refused the request."""
        self.continued = 0
        """How many times a cut stream was continued from its last event."""

    async def reads(self) -> AsyncGenerator[list[Event], None]:
        """The decoded events of each network read (a read that decodes to
        nothing gives nothing), those of the body's end last.

        Close it (``contextlib.aclosing``) if you stop before its end: the
        response stays open until then.

        Raises:
            ConnectError, ReadError, TransportTimeout, ProviderError: as the
                transport's ``stream()``, while opening or while reading (a
                cut that could not be continued: the cut's own error).
            UsageLimitExceeded: what ``watch`` raises.
        """
        request: HttpRequest | None = self._request
        cut: ToolwireError | None = None
        while request is not None:
            whole = _WholeEvents() if self._continuation is not None else None
            self._opened = False
            try:
                async with contextlib.aclosing(self._body(request, whole)) as reads:
                    async for events in reads:
                        yield events
                if self.decoder.error is not None:
                    return
                request = None
            except (ReadError, TransportTimeout) as exc:
                if not self.reading or whole is None or not whole.continuable:
                    raise
                cut = cut or exc
                request = self._next(cut)
            except ToolwireError:
                if cut is None or self._opened:
                    raise
                raise cut from None  # the continuation was refused: the cut stands
        self.reading = False
        events = self.decoder.close()
        if events:
            if self._watch is not None:
                self._watch(events)
            yield events

    def _next(self, cut: ToolwireError) -> HttpRequest:
        """The continuation of a cut stream, or the cut raised."""
        point = self.decoder.resume_from
        if self._continuation is None or point is None or self.continued >= MAX_CONTINUATIONS:
            raise cut
        request = self._continuation(point)
        if request is None:
            raise cut
        self.continued += 1
        return request

    async def _body(
        self, request: HttpRequest, whole: _WholeEvents | None
    ) -> AsyncGenerator[list[Event], None]:
        decoder, watch = self.decoder, self._watch
        async with self._transport.stream(request, parse_error=self._parse_error) as body:
            self.reading = self._opened = True
            async for chunk in body.aiter_bytes():
                events = decoder.feed(whole.feed(chunk) if whole is not None else chunk)
                if events:
                    if watch is not None:
                        watch(events)
                    yield events
                if decoder.error is not None:  # its last event said so
                    self.reading = False
                    return
            if whole is not None:
                events = decoder.feed(whole.rest())
                if events:
                    if watch is not None:
                        watch(events)
                    yield events
