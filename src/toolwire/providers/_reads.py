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

A stream the provider keeps after a cut is *resumed*, one way for every
dialect that allows it: the dialect says where its cut streams continue
(its ``continuation_path``, built from the stream's id and the id of the
last event read whole: a Responses background response's
``(response_id, sequence_number)``, an interaction's
``(interaction_id, event_id)``), and the decoder says where it stands
(:attr:`StreamDecoder.cursor <toolwire.stream.decoder.StreamDecoder.cursor>`).
Given a :class:`~toolwire.providers._continuation.Continuation`, a stream
cut while read drops the half event it was cut in
(:meth:`~toolwire.stream.decoder.StreamDecoder.drop_partial`), is reopened
after its cursor, and the rest goes to the same decoder, so
the turn completes once and is paid once. What the reopened stream sends
is checked event by event (:meth:`~toolwire.stream.decoder.StreamDecoder.continue_after`):
an event of another response or interaction, one read already, or one out
of order fails the stream with a
:class:`~toolwire.errors.ContinuationMismatch`, and nothing it carried is
used (the agent's ``stream_retries`` decide whether the turn is asked
again, as for a cut that could not be resumed). The reopenings are bounded
(:attr:`Continuation.attempts`, every cut and every failed reopening counting),
each has a deadline to be answered, and when none succeeds (or the
provider no longer has the stream) the cut is raised as it would have been
without them. A stream given ``replay`` (the id of a stream the provider
keeps, recorded by a process that died) is read again from its first event
instead of being requested again, checked the same way (it must be the
stream of that id, from its first event); if the provider no longer has
it, the request is sent.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import anyio

from toolwire import _compat
from toolwire.errors import (
    ContinuationMismatch,
    ProviderError,
    ReadError,
    ToolwireError,
    TransportTimeout,
)
from toolwire.providers._continuation import Continuation
from toolwire.stream.decoder import StreamDecoder

if TYPE_CHECKING:
    from toolwire.events import Event
    from toolwire.http import ErrorParser, HttpRequest, StreamResponse, Transport

__all__ = ["HOLD", "ProviderAttempt", "ProviderStream"]

logger = logging.getLogger(__name__)

HOLD = 64 * 1024
"""The bytes of a body held back and decoded together (a :class:`ProviderStream`'s
``hold``) when only its result is wanted."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ProviderAttempt:
    """One provider of a fallback chain tried for one request
    (:class:`~toolwire.providers.Fallback`)."""

    position: int
    """Its place in the chain (0: the primary)."""
    provider: str
    """The provider's name."""
    dialect: str
    model: str
    """The model asked of it."""
    error: ToolwireError | None
    """Why the chain went on to the next provider, or why the request failed
    (``None``: this provider answered)."""
    elapsed: float
    """Seconds from sending its request to its answer or its error."""


class ProviderStream:
    """One streaming request, sent, read and decoded by :meth:`reads`.

    Args:
        request: a request built with ``stream=True``.
        transport: what sends it.
        parse_error: the provider's mapping of HTTP errors.
        dialect: the decoder's dialect (``"auto"`` to sniff it).
        watch: told each read's events before they are given; what it raises
            (a usage limit crossed) closes the response and ends :meth:`reads`.
        continuation: how a cut stream is continued (``None``: it is not).
        kept_stream: the id of a stream the provider keeps, read again from
            its first event (a continuation) instead of sending ``request``.
        resumer: the former name of ``continuation`` (deprecated).
        replay: the former name of ``kept_stream`` (deprecated).
        hold: for a reader that wants the result, not each event as soon as
            it can be: the body's pieces are held back until this many bytes
            have come (or the body ends, or is cut) and decoded together (0:
            each network read is decoded as it arrives). The result is the
            same, and decoding fewer, larger pieces costs less; the events
            come later, a failed-stream event among them too. Not for a stream
            that may be resumed: its cursor follows each read.
    """

    __slots__ = (
        "_continuation",
        "_hold",
        "_kept_stream",
        "_parse_error",
        "_request",
        "_stream_id",
        "_transport",
        "_watch",
        "decoder",
        "reading",
        "resumable",
        "resumes",
        "tried",
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
        kept_stream: str | None = None,
        hold: int = 0,
        resumer: Continuation | None = None,
        replay: str | None = None,
    ) -> None:
        if resumer is not None:
            _compat.renamed_argument("ProviderStream", "resumer")
            continuation = resumer
        if replay is not None:
            _compat.renamed_argument("ProviderStream", "replay")
            kept_stream = replay
        self._request = request
        self._hold = hold if continuation is None else 0
        self._kept_stream = kept_stream if continuation is not None else None
        self._stream_id: str | None = None
        self._watch = watch
        self._transport = transport
        self._parse_error = parse_error
        self._continuation = continuation
        self.decoder = StreamDecoder(dialect)
        """The decoder: its ``result()`` and ``error`` once :meth:`reads` ended."""
        self.reading = False
        """Whether the response's body is being read: an error raised while
        this is true broke the stream; one raised before it refused the request."""
        self.resumes = 0
        """How many times a cut stream was reopened where it stopped."""
        self.resumable = continuation is not None
        """Whether the provider keeps this stream, so that it may have a
        :attr:`resumable_id` (``False``: it never has)."""
        self.tried: list[ProviderAttempt] = []
        """The providers of a fallback chain tried for this request, in order
        (empty for a single provider's stream)."""

    @property
    def resumable_id(self) -> str | None:
        """The id under which the provider keeps this stream, once known,
        when it can stream it again (``None`` otherwise)."""
        if self._stream_id is None and self._continuation is not None:
            cursor = self.decoder.cursor
            if cursor is not None:
                self._stream_id = cursor[0]
        return self._stream_id

    async def reads(self) -> AsyncGenerator[list[Event], None]:
        """The decoded events of each network read, or of the pieces held
        together (see ``hold``); a read that decodes to nothing gives nothing,
        and the events of the body's end come last.

        Close it (``contextlib.aclosing``) if you stop before its end: the
        response stays open until then.

        Raises:
            ConnectError, ReadError, TransportTimeout, ProviderError: as the
                transport's ``stream()``, while opening or while reading (a
                cut that could not be resumed is raised as it happened).
            UsageLimitExceeded: what ``watch`` raises.
        """
        decoder, watch = self.decoder, self._watch
        async with self._responses() as responses:
            response = responses.first
            while True:
                self.reading = True
                try:
                    pieces = response.aiter_bytes()
                    if self._hold:
                        pieces = _Held(pieces, self._hold)
                    async for chunk in pieces:
                        events = decoder.feed(chunk)
                        if events:
                            if watch is not None:
                                watch(events)
                            yield events
                        if decoder.error is not None:  # its last event said so
                            self.reading = False
                            _mismatched(decoder.error)
                            return
                    break
                except (ReadError, TransportTimeout) as cut:
                    if self._continuation is None:
                        raise
                    response = await responses.reopen(self, cut)
            self.reading = False
        events = decoder.close()
        if events:
            if watch is not None:
                watch(events)
            yield events

    @contextlib.asynccontextmanager
    async def _responses(self) -> AsyncIterator[_Responses]:
        """The response to read first, opened (a failure here refused the
        request), and closed with whatever reopened the stream after it."""
        if self._continuation is None:
            # Most streams: one response, opened and closed around the reads.
            async with self._transport.stream(
                self._request, parse_error=self._parse_error
            ) as response:
                yield _Responses(response, None)
            return
        scope = contextlib.AsyncExitStack()
        try:
            responses = _Responses(await self._open(scope), scope)
        except BaseException:
            await scope.aclose()
            raise
        try:
            yield responses
        finally:
            await responses.close()

    async def _open(self, scope: contextlib.AsyncExitStack) -> StreamResponse:
        """The response, entered in ``scope``: the kept stream read again (see
        ``kept_stream``) when the provider still has it, else the request's."""
        if self._kept_stream is not None and self._continuation is not None:
            continuation, stream_id = self._continuation, self._kept_stream
            try:
                with anyio.fail_after(continuation.timeout):
                    response = await scope.enter_async_context(
                        self._transport.stream(
                            continuation.request(stream_id, None), parse_error=self._parse_error
                        )
                    )
            except (ToolwireError, TimeoutError) as failed:
                _log(
                    stream_id, None, f"cannot be read again ({failed}): the request is sent instead"
                )
            else:
                self.decoder.continue_after(stream_id, None)  # that stream, from its first event
                return response
        return await scope.enter_async_context(
            self._transport.stream(self._request, parse_error=self._parse_error)
        )

    async def _resume(
        self, cut: ReadError | TransportTimeout, scope: contextlib.AsyncExitStack
    ) -> StreamResponse:
        """The stream reopened after the last event decoded, entered in
        ``scope``; ``cut`` is raised when it cannot be."""
        continuation, decoder = self._continuation, self.decoder
        if continuation is None:
            raise cut
        cursor = decoder.cursor
        if cursor is None:
            _log("?", None, "cut before its id and first event: the turn may be sent again")
            raise cut
        stream_id, after = cursor
        decoder.drop_partial()
        decoder.continue_after(stream_id, after)
        while self.resumes < continuation.attempts:
            self.resumes += 1
            request = continuation.request(stream_id, after)
            try:
                with anyio.fail_after(continuation.timeout):
                    return await scope.enter_async_context(
                        self._transport.stream(request, parse_error=self._parse_error)
                    )
            except ProviderError as refused:  # gone (404), expired: asking again won't do
                _log(
                    stream_id, after, f"resumption refused ({refused}): the turn may be sent again"
                )
                raise cut from None
            except (ToolwireError, TimeoutError) as failed:
                _log(stream_id, after, f"resumption {self.resumes} failed ({failed})")
        _log(
            stream_id,
            after,
            f"no resumption left of {continuation.attempts}: the turn may be sent again",
        )
        raise cut


class _Responses:
    """The responses of one stream: the first, and the scope of the one
    being read when a cut may reopen it (``None``: it may not)."""

    __slots__ = ("first", "scope")

    def __init__(self, first: StreamResponse, scope: contextlib.AsyncExitStack | None) -> None:
        self.first = first
        self.scope = scope

    async def reopen(
        self, stream: ProviderStream, cut: ReadError | TransportTimeout
    ) -> StreamResponse:
        """The stream reopened after its last whole event, the cut response
        closed first; ``cut`` is raised when it cannot be."""
        assert self.scope is not None
        await self.scope.aclose()
        self.scope = contextlib.AsyncExitStack()
        return await stream._resume(cut, self.scope)

    async def close(self) -> None:
        if self.scope is not None:
            await self.scope.aclose()


class _Held:
    """A body's pieces joined until ``size`` bytes have come, then again; the
    last at the body's end, or before the failure that ended it (a cut, a
    bound passed: raised next)."""

    __slots__ = ("_ended", "_failed", "_pieces", "_size")

    def __init__(self, pieces: AsyncIterator[bytes], size: int) -> None:
        self._pieces = pieces
        self._size = size
        self._ended = False
        self._failed: ToolwireError | None = None

    def __aiter__(self) -> _Held:
        return self

    async def __anext__(self) -> bytes:
        if self._failed is not None:
            raise self._failed
        if self._ended:
            raise StopAsyncIteration
        held: list[bytes] = []
        count = 0
        try:
            while count < self._size:
                piece = await self._pieces.__anext__()
                held.append(piece)
                count += len(piece)
        except StopAsyncIteration:
            self._ended = True
            if not held:
                raise
        except ToolwireError as failed:
            if not held:
                raise
            self._failed = failed  # what came before it is decoded first, as it would have been
        return b"".join(held)


def _mismatched(error: ToolwireError) -> None:
    """Say so when a stream failed because its reopening did not continue it."""
    if isinstance(error, ContinuationMismatch):
        _log(error.stream_id, error.after, f"{error.message}: the turn may be sent again")


def _log(stream_id: str, after: str | None, what: str) -> None:
    """The one log line shape of resumptions: the stream, where it stands, what happened."""
    logger.info("stream %s after event %s: %s", stream_id, after or "-", what)


def __getattr__(name: str) -> object:
    """Older names, with a warning (see :mod:`toolwire._compat`)."""
    return _compat.renamed(__name__, name)
