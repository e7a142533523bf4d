"""AWS event-stream framing (``application/vnd.amazon.eventstream``).

Bedrock's ``ConverseStream`` and ``InvokeModelWithResponseStream`` answer in
binary messages, each length-prefixed and checked twice::

    total length (4) | headers length (4) | prelude CRC32 (4)
    headers (headers length bytes) | payload | message CRC32 (4)

Integers are big-endian; the prelude CRC covers the first 8 bytes, the
message CRC everything before it. A header is a name (1-byte length, UTF-8),
a type byte and a value: ``0`` true, ``1`` false, ``2`` byte, ``3`` short,
``4`` int, ``5`` long, ``6`` byte array and ``7`` string (2-byte length),
``8`` timestamp (milliseconds, 8 bytes), ``9`` UUID (16 bytes).

The reader gives each ``:message-type: event`` message as an
``(:event-type, payload text)`` frame, the interface of the other framings.
``exception`` and ``error`` messages are the provider's errors inside a 200
response: they become :class:`~toolwire.errors.StreamErrorEvent` (``code``
is the ``:exception-type`` or ``:error-code``). A CRC that does not match, a
length out of bounds or a header it cannot read is a
:class:`~toolwire.errors.RemoteProtocolError`; a body that stops inside a
message is a :class:`~toolwire.errors.StreamTruncated`.

Pieces are kept in a list until a whole message is there and joined once, so
any split costs linear time. A message larger than ``max_message_bytes`` is
refused as soon as its prelude is read, before its bytes are buffered. A
stream repeats a few header blocks (one per event type): each is read once
and kept (a few dozen at most). :meth:`EventStreamDecoder.feed_matched` hands
the payloads of one event type that a codec recognizes by their text as
matches, as ``SSEDecoder.feed_matched`` does for SSE events; with
:attr:`~EventStreamDecoder.match_bytes`, a message whose header block is
that event's, byte for byte, has its payload matched in place, right after
its CRCs are checked (no copy, no UTF-8 decoding, no header read).
Reference: https://docs.aws.amazon.com/AmazonS3/latest/API/RESTSelectObjectAppendix.html
(the same encoding, described for S3 Select) and the SDKs' event-stream codecs.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Callable, Mapping
from typing import Any, Final, TypeAlias, overload

from toolwire.errors import RemoteProtocolError, StreamErrorEvent, StreamTruncated, UsageError
from toolwire.stream.framing._common import (
    DEFAULT_MAX_FRAME_BYTES,
    Frame,
    TextErrors,
    check_errors,
    check_limit,
)
from toolwire.stream.framing._eventstream_wire import (
    _OVERHEAD,
    _PRELUDE,
    _PRELUDE_STRUCT,
    _SNIPPET,
    _U32,
    MAX_HEADERS_BYTES,
    MEDIA_TYPE,
    EventStreamMessage,
    HeaderValue,
    _headers,
    _provider_error,
    encode_message,
    event_message,
    exception_message,
)
from toolwire.stream.framing.sse import EventMatcher

__all__ = [
    "MEDIA_TYPE",
    "BytesMatcher",
    "EventStreamDecoder",
    "EventStreamMessage",
    "HeaderValue",
    "encode_message",
    "event_message",
    "exception_message",
]

BytesMatcher: TypeAlias = Callable[[bytes, int, int], "re.Match[bytes] | None"]
"""Recognizes a payload in place: ``match(buffer, start, end)`` is a match of
all of ``buffer[start:end]`` or ``None`` (a compiled bytes pattern's
``fullmatch``)."""

_KNOWN_BLOCKS: Final = 32
_KNOWN_SIZE: Final = 512
"""The header blocks kept read: at most so many, of at most so many bytes."""
_KNOWN_PRELUDES: Final = 1024
"""The checked preludes kept (12 bytes each, with their two lengths)."""


class EventStreamDecoder:
    """Incremental AWS event-stream framing.

    Args:
        max_message_bytes: the largest message accepted (its total length);
            a larger one raises :class:`~toolwire.errors.RemoteProtocolError`.
        errors: what becomes of payload bytes that are not UTF-8 in
            :meth:`feed_pairs` (see :data:`~toolwire.stream.framing.TextErrors`).
    """

    __slots__ = (
        "_closed",
        "_error",
        "_errors",
        "_known",
        "_match_block",
        "_max",
        "_need",
        "_pending",
        "_pending_len",
        "_preludes",
        "_undecodable",
        "_unmatched",
        "match_bytes",
        "match_event",
    )

    def __init__(
        self, *, max_message_bytes: int = DEFAULT_MAX_FRAME_BYTES, errors: TextErrors = "strict"
    ) -> None:
        self._max = check_limit(max_message_bytes, "max_message_bytes")
        self._errors = check_errors(errors)
        self._undecodable = False
        self._pending: list[bytes] = []
        self._pending_len = 0
        self._need = _PRELUDE  # bytes needed before anything more can be read
        self._closed = False
        self._error: RemoteProtocolError | StreamErrorEvent | None = None
        self._known: dict[bytes, dict[str, HeaderValue]] = {}
        self._preludes: dict[bytes, tuple[int, int]] = {}
        """Preludes checked already, by their bytes (lengths repeat)."""
        self._unmatched = 0  # messages the last _cut() gave as raw pairs
        self.match_event: str | None = None
        """The events whose payloads :meth:`feed_matched` tries to match."""
        self.match_bytes: BytesMatcher | None = None
        """Tried first on the payload bytes of a :attr:`match_event` event, in
        place; what it does not recognize is decoded and given to the text
        matcher of :meth:`feed_matched`."""
        self._match_block: bytes | None = None
        """The raw header block of :attr:`match_event` events (learnt from the first)."""

    @property
    def undecodable(self) -> bool:
        """Whether some payload bytes were not UTF-8 (see ``errors``)."""
        return self._undecodable

    def feed(self, data: bytes) -> list[EventStreamMessage]:
        """The messages completed by the next piece of the body (any split).

        Raises:
            RemoteProtocolError: a CRC does not match, a length is out of
                bounds or a header cannot be read.
            UsageError: called after :meth:`close`.
        """
        out: list[EventStreamMessage] = []
        raw = self._cut(data)
        try:
            for headers, payload in raw:
                out.append(EventStreamMessage(dict(self._read_headers(headers)), payload))
        except RemoteProtocolError as exc:
            self._error = exc
            if not out:
                raise
        return out

    @overload
    def _cut(self, data: bytes) -> list[tuple[bytes, bytes]]: ...
    @overload
    def _cut(
        self, data: bytes, fast: BytesMatcher | None
    ) -> list[tuple[bytes, bytes] | re.Match[bytes]]: ...

    def _cut(
        self, data: bytes, fast: BytesMatcher | None = None
    ) -> list[tuple[bytes, bytes]] | list[tuple[bytes, bytes] | re.Match[bytes]]:
        """``(raw headers, payload)`` of each message ``data`` completes, both
        CRCs checked, or the match of ``fast`` on the payload of a
        :attr:`match_event` message; the messages before a fault, then the
        fault on the next call."""
        if self._error is not None:
            raise self._error.with_traceback(None)
        if self._closed:
            raise UsageError("EventStreamDecoder.feed() called after close()")
        if not data:
            return []
        self._pending.append(data)
        self._pending_len += len(data)
        if self._pending_len < self._need:
            return []
        buffer = b"".join(self._pending) if len(self._pending) > 1 else self._pending[0]
        view = memoryview(buffer)
        out: list[Any] = []
        pos, size = 0, len(buffer)
        crc32, unpack = zlib.crc32, _U32.unpack_from
        preludes = self._preludes
        match = fast or _no_match
        block = self._match_block or b""
        # The header block's length when known; -1 to learn it; -2 not to match.
        known = -2 if fast is None else -1 if self._match_block is None else len(block)
        unmatched = 0
        try:
            while True:
                if size - pos < _PRELUDE:
                    self._need = _PRELUDE
                    break
                head = buffer[pos : pos + _PRELUDE]
                lengths = preludes.get(head)
                if lengths is None:
                    lengths = self._prelude(head)
                    if len(preludes) < _KNOWN_PRELUDES:
                        preludes[head] = lengths
                total, headers_len = lengths
                end = pos + total
                if size < end:
                    self._need = total
                    break
                if crc32(view[pos : end - 4]) != unpack(buffer, end - 4)[0]:
                    raise RemoteProtocolError(
                        "an event-stream message fails its CRC32 check",
                        raw=buffer[pos : pos + _SNIPPET],
                    )
                split = pos + _PRELUDE + headers_len
                if known == -1 and self._learn(buffer[pos + _PRELUDE : split]):
                    block = self._match_block or b""
                    known = headers_len
                if headers_len == known and buffer.startswith(block, pos + _PRELUDE):
                    found = match(buffer, split, end - 4)
                    if found is not None:
                        out.append(found)
                        pos = end
                        continue
                out.append((buffer[pos + _PRELUDE : split], buffer[split : end - 4]))
                unmatched += 1
                pos = end
        except RemoteProtocolError as exc:
            self._error = exc
            self._pending, self._pending_len = [], 0
            if not out:
                raise
            self._unmatched = unmatched
            return out
        rest = buffer[pos:]
        self._pending = [rest] if rest else []
        self._pending_len = len(rest)
        self._unmatched = unmatched
        return out

    def _prelude(self, head: bytes) -> tuple[int, int]:
        """The total and headers lengths of a message's first 12 bytes, checked."""
        total, headers_len, crc = _PRELUDE_STRUCT.unpack(head)
        if zlib.crc32(head[:8]) != crc:
            raise RemoteProtocolError("an event-stream prelude fails its CRC32 check", raw=head)
        if not (
            _OVERHEAD <= total <= self._max
            and headers_len <= total - _OVERHEAD
            and headers_len <= MAX_HEADERS_BYTES
        ):
            raise self._out_of_bounds(total, headers_len, head)
        return total, headers_len

    def _learn(self, raw: bytes) -> bool:
        """Whether ``raw`` is the header block of a :attr:`match_event` event
        (then kept: the stream's other such events repeat it)."""
        headers = self._read_headers(raw)
        if (
            headers.get(":message-type", "event") != "event"
            or headers.get(":event-type") != self.match_event
            or raw not in self._known
        ):
            return False
        self._match_block = raw
        return True

    def _read_headers(self, raw: bytes) -> Mapping[str, HeaderValue]:
        """The headers of a raw header block; blocks seen before are not read
        again (a stream repeats a few, one per event type)."""
        known = self._known.get(raw)
        if known is not None:
            return known
        headers = _headers(raw)
        if len(self._known) < _KNOWN_BLOCKS and len(raw) <= _KNOWN_SIZE:
            self._known[raw] = headers
        return headers

    def close(self) -> list[EventStreamMessage]:
        """Mark the end of the body.

        Raises:
            StreamTruncated: the body stopped inside a message.
        """
        if self._error is not None:
            raise self._error.with_traceback(None)
        if self._closed:
            return []
        self._closed = True
        if self._pending_len:
            self._error = StreamTruncated(
                f"the event stream ended inside a message ({self._pending_len} of "
                f"{self._need} bytes)"
            )
            raise self._error
        return []

    def feed_pairs(self, data: bytes) -> list[Frame]:
        """Like :meth:`feed`, each event as an ``(:event-type, payload text)``
        frame; an ``exception`` or ``error`` message raises
        :class:`~toolwire.errors.StreamErrorEvent` (after the frames before it)."""
        return self._frames(self._cut(data))

    def feed_matched(
        self, data: bytes, match: EventMatcher
    ) -> list[Frame | re.Match[str] | re.Match[bytes]]:
        """Like :meth:`feed_pairs`, but the payload of a :attr:`match_event`
        event that :attr:`match_bytes` recognizes in place, or else ``match``
        whole as text (``match(payload, 0)``), is given as its match, for the
        codec to read without parsing it."""
        raw = self._cut(data, self.match_bytes)
        if not self._unmatched:
            return raw  # type: ignore[return-value]  # matches alone
        return self._frames(raw, match)

    def close_pairs(self) -> list[Frame]:
        """Like :meth:`close`, as frames."""
        self.close()
        return []

    @overload
    def _frames(self, raw: list[tuple[bytes, bytes]]) -> list[Frame]: ...
    @overload
    def _frames(
        self, raw: list[tuple[bytes, bytes] | re.Match[bytes]], match: EventMatcher
    ) -> list[Frame | re.Match[str] | re.Match[bytes]]: ...

    def _frames(
        self,
        raw: list[tuple[bytes, bytes]] | list[tuple[bytes, bytes] | re.Match[bytes]],
        match: EventMatcher | None = None,
    ) -> list[Frame] | list[Frame | re.Match[str] | re.Match[bytes]]:
        frames: list[Any] = []
        known = self._known
        matched = self.match_event if match is not None else None
        try:
            for item in raw:
                if type(item) is not tuple:
                    frames.append(item)  # matched in place by _cut
                    continue
                block, payload = item
                headers = known.get(block) or self._read_headers(block)
                kind = headers.get(":message-type", "event")
                if kind != "event":
                    message = EventStreamMessage(dict(headers), payload)
                    raise _provider_error(str(kind), message)
                event = headers.get(":event-type")
                if type(event) is not str:
                    event = "message"
                try:
                    text = payload.decode()
                except UnicodeDecodeError:
                    text = self._text(payload)
                if event == matched:
                    found = match(text, 0)  # type: ignore[misc]  # set with matched
                    if found is not None:
                        frames.append(found)
                        continue
                frames.append((event, text))
        except (RemoteProtocolError, StreamErrorEvent) as exc:
            self._error = exc
            if not frames:
                raise
        return frames

    def _text(self, payload: bytes) -> str:
        try:
            return payload.decode("utf-8")
        except UnicodeDecodeError as exc:
            self._undecodable = True
            if self._errors != "strict":
                return payload.decode("utf-8", self._errors)
            raise RemoteProtocolError(
                f"an event-stream payload is not valid UTF-8 ({exc.reason} at byte {exc.start})",
                raw=payload[:_SNIPPET],
            ) from None

    def _out_of_bounds(self, total: int, headers: int, raw: bytes) -> RemoteProtocolError:
        if total < _OVERHEAD or total > self._max:
            return RemoteProtocolError(
                f"an event-stream message length of {total} bytes is out of bounds "
                f"({_OVERHEAD}..{self._max})",
                raw=raw,
            )
        return RemoteProtocolError(
            f"an event-stream headers length of {headers} bytes is out of bounds", raw=raw
        )


def _no_match(_buffer: bytes, _start: int, _end: int) -> None:
    return None
