"""Telling the framing from the body's first significant byte.

``[`` starts a streamed JSON array (Gemini without ``alt=sse``), ``{`` a
line of NDJSON (Ollama), a NUL byte an AWS event stream (the high byte of its
first message's length), anything else SSE. Whitespace before that byte is
held only as far as it matters: a whole line of it is a blank line, which no
framing reads as anything, so only the spaces and tabs since the last line
break are kept (an SSE line starting with a space is an unknown field, and
must stay one). That much is capped, so a body of nothing but whitespace
cannot exhaust memory, and each byte is looked at once.
"""

from __future__ import annotations

import re
from typing import Final, Literal, TypeAlias

from toolwire.errors import RemoteProtocolError, UsageError
from toolwire.stream.framing._common import Frame, FrameReader, TextErrors
from toolwire.stream.framing.eventstream import EventStreamDecoder
from toolwire.stream.framing.json_array import JSONArrayDecoder
from toolwire.stream.framing.ndjson import NDJSONDecoder
from toolwire.stream.framing.sse import SSEDecoder
from toolwire.stream.limits import MAX_FRAME_BYTES

__all__ = ["FramingKind", "SniffingReader", "reader_for"]

FramingKind: TypeAlias = Literal["sse", "ndjson", "json-array", "eventstream"]
"""The framings providers stream in (``eventstream``: AWS's binary messages)."""

_BOM: Final = b"\xef\xbb\xbf"
_NOT_WS: Final = re.compile(rb"[^ \t\r\n]")


def reader_for(
    kind: FramingKind,
    *,
    errors: TextErrors = "surrogateescape",
    max_frame_bytes: int = MAX_FRAME_BYTES,
) -> FrameReader:
    """A fresh reader for one framing, as the stream decoder uses it."""
    if kind == "sse":
        return SSEDecoder(max_event_bytes=max_frame_bytes, errors=errors)
    if kind == "ndjson":
        return NDJSONDecoder(max_line_bytes=max_frame_bytes, errors=errors)
    if kind == "json-array":
        return JSONArrayDecoder(max_element_bytes=max_frame_bytes, errors=errors)
    if kind == "eventstream":
        return EventStreamDecoder(max_message_bytes=max_frame_bytes, errors=errors)
    raise UsageError(f"unknown framing {kind!r}")


class SniffingReader:
    """A reader that holds the first bytes until they tell the framing, then
    hands the body to that framing's reader.

    Args:
        kinds: the framings this body may use; SSE is the fallback when the
            first byte names one that is not among them.
        errors: passed to the chosen reader.
        max_frame_bytes: the chosen reader's cap, and the most leading
            whitespace held on one line.
    """

    __slots__ = ("_at_start", "_errors", "_held", "_held_len", "_kinds", "_max", "_reader", "kind")

    def __init__(
        self,
        kinds: frozenset[FramingKind],
        *,
        errors: TextErrors = "surrogateescape",
        max_frame_bytes: int = MAX_FRAME_BYTES,
    ) -> None:
        self._kinds = kinds
        self._errors: TextErrors = errors
        self._max = max_frame_bytes
        self._reader: FrameReader | None = None
        self._held: list[bytes] = []
        self._held_len = 0
        self._at_start = True
        self.kind: FramingKind | None = None
        """The framing, once the first significant byte has told it."""

    @property
    def undecodable(self) -> bool:
        """Whether some bytes were not UTF-8 (see the chosen reader)."""
        return self._reader is not None and self._reader.undecodable

    def feed_pairs(self, data: bytes) -> list[Frame]:
        """The frames completed by the next piece of the body."""
        if self._reader is None:
            data = self._sniff(data)
            if self._reader is None:
                return []
        return self._reader.feed_pairs(data)

    def close_pairs(self) -> list[Frame]:
        """The last frames; ``[]`` when the body held nothing but whitespace."""
        if self._reader is None:
            return []
        return self._reader.close_pairs()

    def _sniff(self, data: bytes) -> bytes:
        """Hold ``data`` or pick the reader; return the bytes it must read."""
        if self._at_start:
            head = b"".join(self._held) + data
            if len(head) < len(_BOM) and _BOM.startswith(head):
                self._held, self._held_len = [head], len(head)
                return b""  # perhaps a byte order mark, split
            self._at_start = False
            self._held, self._held_len = [], 0
            data = head.removeprefix(_BOM)
        match = _NOT_WS.search(data)
        end = match.start() if match is not None else len(data)
        cut = max(data.rfind(b"\n", 0, end), data.rfind(b"\r", 0, end))
        if cut >= 0:  # whole lines of whitespace: blank lines, read as nothing
            self._held, self._held_len = [], 0
            data = data[cut + 1 :]
            end -= cut + 1
        if match is None:
            self._held.append(data)
            self._held_len += len(data)
            if self._held_len > self._max:
                raise RemoteProtocolError(
                    f"the body starts with a line of more than {self._max} bytes of whitespace"
                )
            return b""
        self.kind = self._pick(data[end])
        self._reader = reader_for(self.kind, errors=self._errors, max_frame_bytes=self._max)
        held, self._held = b"".join(self._held), []
        return held + data

    def _pick(self, first: int) -> FramingKind:
        if first == 0x00 and "eventstream" in self._kinds:  # a message's length: < 16 MiB
            return "eventstream"
        if first == 0x5B and "json-array" in self._kinds:  # [
            return "json-array"
        if first == 0x7B and "ndjson" in self._kinds:  # {
            return "ndjson"
        return "sse"
