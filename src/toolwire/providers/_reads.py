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
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Callable
from typing import TYPE_CHECKING

from toolwire.stream.decoder import StreamDecoder

if TYPE_CHECKING:
    from toolwire.events import Event
    from toolwire.http import ErrorParser, HttpRequest, Transport

__all__ = ["ProviderStream"]


class ProviderStream:
    """One streaming request, sent, read and decoded by :meth:`reads`.

    Args:
        request: a request built with ``stream=True``.
        transport: what sends it.
        parse_error: the provider's mapping of HTTP errors.
        dialect: the decoder's dialect (``"auto"`` to sniff it).
        watch: told each read's events before they are given; what it raises
            (a usage limit crossed) closes the response and ends :meth:`reads`.
    """

    __slots__ = ("_parse_error", "_request", "_transport", "_watch", "decoder", "reading")

    def __init__(
        self,
        request: HttpRequest,
        *,
        transport: Transport,
        parse_error: ErrorParser | None,
        dialect: str,
        watch: Callable[[list[Event]], None] | None = None,
    ) -> None:
        self._request = request
        self._watch = watch
        self._transport = transport
        self._parse_error = parse_error
        self.decoder = StreamDecoder(dialect)
        """The decoder: its ``result()`` and ``error`` once :meth:`reads` ended."""
        self.reading = False
        """Whether the response's body is being read: an error raised while
        this is true broke the stream; one raised before it refused the request."""

    async def reads(self) -> AsyncGenerator[list[Event], None]:
        """The decoded events of each network read (a read that decodes to
        nothing gives nothing), those of the body's end last.

        Close it (``contextlib.aclosing``) if you stop before its end: the
        response stays open until then.

        Raises:
            ConnectError, ReadError, TransportTimeout, ProviderError: as the
                transport's ``stream()``, while opening or while reading.
            UsageLimitExceeded: what ``watch`` raises.
        """
        decoder, watch = self.decoder, self._watch
        async with self._transport.stream(self._request, parse_error=self._parse_error) as body:
            self.reading = True
            async for chunk in body.aiter_bytes():
                events = decoder.feed(chunk)
                if events:
                    if watch is not None:
                        watch(events)
                    yield events
                if decoder.error is not None:  # its last event said so
                    self.reading = False
                    return
            self.reading = False
        events = decoder.close()
        if events:
            if watch is not None:
                watch(events)
            yield events
