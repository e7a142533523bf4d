"""Stream framing: bytes in, frames out.

Theory of operation
-------------------
Providers stream their responses in one of three framings, and this module
turns each of them into whole frames, without any I/O:

* :class:`SSEDecoder` — ``text/event-stream``, as the WHATWG HTML standard
  defines it ("event stream interpretation"). Almost every provider.
* :class:`NDJSONDecoder` — one JSON document per line (Ollama).
* :class:`JSONArrayDecoder` — one JSON array whose elements arrive over time
  (Gemini ``streamGenerateContent`` without ``alt=sse``).

Each decoder is fed the body in whatever pieces the transport received and
returns the frames those pieces completed; ``close()`` marks the end of input.
Feeding a body whole, one byte at a time or in any other split gives the same
frames: a decoder only ever looks at complete lines (or complete JSON
elements), and keeps the incomplete end of a piece for the next call.

These decoders sit on the hot path (a 1 MB tool-call argument is ~170,000 SSE
events), so the work per ``feed`` is proportional to its size: lines are cut
with ``bytes.split``/``splitlines`` and JSON elements are scanned with
compiled regular expressions, never byte by byte in Python; the incomplete
tail is kept as a list of pieces joined once, so a long line fed in many small
pieces costs linear, not quadratic, time.

All three work on bytes and decode text only once a line or element is
complete, so a UTF-8 sequence split between two pieces decodes correctly.

Errors: malformed framing raises :class:`~toolwire.errors.RemoteProtocolError`
(or :class:`~toolwire.errors.StreamTruncated` from ``close()`` when the input
ended early). A decoder never loses the frames that came before the fault:
when a ``feed`` completes some frames and then meets the fault, it returns
those frames and raises on the next call. Once it has raised, a decoder raises
the same error on every further call. Each decoder caps the bytes it buffers
for one frame, so a stream that never ends a line cannot exhaust memory.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final, NoReturn

from toolwire.errors import RemoteProtocolError, StreamTruncated, UsageError

__all__ = [
    "DEFAULT_MAX_FRAME_BYTES",
    "JSONArrayDecoder",
    "NDJSONDecoder",
    "SSEDecoder",
    "ServerSentEvent",
]

DEFAULT_MAX_FRAME_BYTES: Final = 64 * 1024 * 1024
"""The default cap on the bytes buffered for one frame (64 MiB)."""

_BOM: Final = b"\xef\xbb\xbf"
_SNIPPET: Final = 80


def _check_limit(value: int, name: str) -> int:
    # bool is an int, but ``max_event_bytes=True`` is a mistake, not a limit.
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise UsageError(f"{name} must be a positive integer, got {value!r}")
    return value


def _snippet(data: bytes, at: int) -> bytes:
    """A little context around position ``at`` of ``data``, for ``raw=``."""
    return data[max(0, at - 20) : at + _SNIPPET]


@dataclass(frozen=True, slots=True)
class ServerSentEvent:
    """One dispatched server-sent event."""

    event: str = "message"
    """The ``event:`` field; ``"message"`` when the event had none (or an empty one)."""

    data: str = ""
    """The ``data:`` lines of the event, joined with ``"\\n"``."""

    id: str | None = None
    """The last event id seen so far in the stream (it persists across events,
    as the standard says); ``None`` before any ``id:`` field, or after an
    empty ``id:`` reset it."""

    retry: int | None = None
    """The ``retry:`` reconnection time (milliseconds) given in this event's
    block, if any."""


def _event_factory() -> Callable[[str, str, str | None, int | None], ServerSentEvent]:
    """A faster ``ServerSentEvent(event, data, id, retry)`` for the decoder's hot loop.

    A frozen dataclass's ``__init__`` goes through ``object.__setattr__`` once
    per field; filling the slots through their descriptors directly builds the
    same object in about half the time, which is a fifth of the decoder's
    cost on a stream of small events.
    """
    new = object.__new__
    # The class attributes of a slots class are the slots' member descriptors.
    slots = vars(ServerSentEvent)
    set_event = slots["event"].__set__
    set_data = slots["data"].__set__
    set_id = slots["id"].__set__
    set_retry = slots["retry"].__set__

    def make(event: str, data: str, id: str | None, retry: int | None) -> ServerSentEvent:
        obj = new(ServerSentEvent)
        set_event(obj, event)
        set_data(obj, data)
        set_id(obj, id)
        set_retry(obj, retry)
        return obj

    return make


_make_event: Final = _event_factory()


def _make_pair(event: str, data: str, id: str | None, retry: int | None) -> tuple[str, str]:
    return (event, data)


class SSEDecoder:
    """Incremental ``text/event-stream`` decoder.

    Follows the WHATWG HTML "event stream interpretation" rules: lines end in
    LF, CR or CRLF (also when the CR and the LF arrive in different pieces); one
    leading byte order mark is dropped; ``:`` comment lines (keep-alives) are
    ignored; one space after the colon is dropped; ``data:`` lines are joined
    with LF; ``event:``, ``id:`` and ``retry:`` may come in any order, before or
    after ``data:``; an ``id`` containing NUL is ignored; ``retry`` is taken only
    when it is all ASCII digits; unknown fields are ignored; a blank line
    dispatches the event if it has data (an event with no ``data:`` line at
    all is not dispatched, even if it had an ``event:`` field). Invalid UTF-8
    becomes U+FFFD. ``[DONE]`` is ordinary data here.

    One deliberate departure from the standard: :meth:`close` dispatches a last
    event that has data but no trailing blank line, because real providers end
    streams that way; the standard would discard it.

    Example::

        decoder = SSEDecoder()
        for chunk in body_chunks:
            for event in decoder.feed(chunk):
                handle(event)
        for event in decoder.close():
            handle(event)

    Args:
        max_event_bytes: the most bytes buffered for one event (its data) or
            one line; beyond it the decoder raises
            :class:`~toolwire.errors.RemoteProtocolError`.
    """

    __slots__ = (
        "_bom_check",
        "_closed",
        "_data_lines",
        "_data_size",
        "_error",
        "_event_retry",
        "_event_type",
        "_last_id",
        "_max",
        "_pending",
        "_pending_len",
        "_retry",
        "_skip_lf",
    )

    def __init__(self, *, max_event_bytes: int = DEFAULT_MAX_FRAME_BYTES) -> None:
        self._max = _check_limit(max_event_bytes, "max_event_bytes")
        # The incomplete last line, as the pieces it arrived in.
        self._pending: list[bytes] = []
        self._pending_len = 0
        # The previous piece ended in CR: a LF starting this one ends no line.
        self._skip_lf = False
        self._bom_check = True
        # The event being built.
        self._data_lines: list[str] = []
        self._data_size = 0
        self._event_type = ""
        self._event_retry: int | None = None
        # Stream-wide state the standard keeps across events.
        self._last_id: str | None = None
        self._retry: int | None = None
        self._closed = False
        self._error: RemoteProtocolError | None = None

    @property
    def last_event_id(self) -> str | None:
        """The last event id seen (what a reconnection sends as ``Last-Event-ID``)."""
        return self._last_id

    @property
    def retry(self) -> int | None:
        """The last ``retry:`` reconnection time seen in the stream, in milliseconds."""
        return self._retry

    def feed(self, data: bytes) -> list[ServerSentEvent]:
        """Decode the next piece of the body.

        Args:
            data: the next bytes of the stream, split anywhere.

        Returns:
            The events completed by this piece, in stream order.

        Raises:
            RemoteProtocolError: a line or an event exceeds ``max_event_bytes``.
            UsageError: called after :meth:`close`.
        """
        events: list[ServerSentEvent] = self._feed(data, _make_event)
        return events

    def feed_pairs(self, data: bytes) -> list[tuple[str, str]]:
        """Like :meth:`feed`, giving ``(event, data)`` pairs: what a stream
        decoder needs, without building an event object per event."""
        pairs: list[tuple[str, str]] = self._feed(data, _make_pair)
        return pairs

    def _feed(self, data: bytes, make: Callable[..., Any]) -> list[Any]:
        if self._error is not None:
            raise self._error.with_traceback(None)
        if self._closed:
            raise UsageError("SSEDecoder.feed() called after close()")
        if not data:
            return []
        if self._skip_lf:
            self._skip_lf = False
            if data[0] == 0x0A:
                data = data[1:]
                if not data:
                    return []
        # Cut into lines. Without a CR (the common case) one split on LF does;
        # bytes.splitlines splits on exactly LF, CR and CRLF (unlike str's).
        if b"\r" in data:
            lines = data.splitlines()
            last = data[-1]
            if last == 0x0D:
                self._skip_lf = True
                tail = b""
            elif last == 0x0A:
                tail = b""
            else:
                tail = lines.pop()
        else:
            lines = data.split(b"\n")
            tail = lines.pop()
        pending = self._pending
        if not lines:
            # No line ended: keep the piece and wait.
            pending.append(tail)
            self._pending_len += len(tail)
            if self._pending_len > self._max:
                self._fail(f"an SSE line exceeds max_event_bytes={self._max}", tail)
            return []
        if pending:
            pending.append(lines[0])
            lines[0] = b"".join(pending)
            pending.clear()
        if tail:
            pending.append(tail)
        self._pending_len = len(tail)
        if self._bom_check:
            self._bom_check = False
            if lines[0].startswith(_BOM):
                lines[0] = lines[0][3:]
        out: list[Any] = []
        try:
            if len(data) + len(lines[0]) > self._max:
                # Only a piece this big can hold a line over the limit. The
                # lines before the long one still yield their events.
                for k, line in enumerate(lines):
                    if len(line) > self._max:
                        self._process(lines[:k], out, make)
                        self._fail(f"an SSE line exceeds max_event_bytes={self._max}", line)
            self._process(lines, out, make)
            if self._pending_len > self._max:
                self._fail(f"an SSE line exceeds max_event_bytes={self._max}", tail)
        except RemoteProtocolError as exc:
            self._error = exc
            if not out:
                raise
        return out

    def close(self) -> list[ServerSentEvent]:
        """Mark the end of the stream.

        Returns:
            The last event, if it had data but no blank line after it (the
            standard would discard it; providers do end streams that way).
            Calling ``close()`` again returns ``[]``.

        Raises:
            RemoteProtocolError: the decoder failed earlier, or the last line
                takes the event's data over ``max_event_bytes``.
        """
        events: list[ServerSentEvent] = self._close(_make_event)
        return events

    def close_pairs(self) -> list[tuple[str, str]]:
        """Like :meth:`close`, giving ``(event, data)`` pairs."""
        pairs: list[tuple[str, str]] = self._close(_make_pair)
        return pairs

    def _close(self, make: Callable[..., Any]) -> list[Any]:
        if self._error is not None:
            raise self._error.with_traceback(None)
        if self._closed:
            return []
        self._closed = True
        lines: list[bytes] = []
        if self._pending:
            line = b"".join(self._pending)
            self._pending.clear()
            self._pending_len = 0
            if self._bom_check and line.startswith(_BOM):
                line = line[3:]
            lines.append(line)
        # A blank line dispatches whatever the unterminated event holds.
        lines.append(b"")
        out: list[Any] = []
        try:
            self._process(lines, out, make)
        except RemoteProtocolError as exc:
            self._error = exc
            if not out:
                raise
        return out

    def _fail(self, message: str, raw: bytes) -> NoReturn:
        self._error = RemoteProtocolError(message, raw=raw[:_SNIPPET])
        raise self._error

    def _process(self, lines: list[bytes], out: list[Any], make: Callable[..., Any]) -> None:
        """Interpret complete lines, appending dispatched events to ``out``."""
        # Locals: this loop runs once per line of the whole stream.
        data_lines = self._data_lines
        data_size = self._data_size
        event_type = self._event_type
        event_retry = self._event_retry
        limit = self._max
        append = out.append
        try:
            for line in lines:
                if not line:
                    if data_lines:
                        append(
                            make(
                                event_type or "message",
                                data_lines[0] if len(data_lines) == 1 else "\n".join(data_lines),
                                self._last_id,
                                event_retry,
                            )
                        )
                        data_lines = []
                        data_size = 0
                    event_type = ""
                    event_retry = None
                    continue
                if line.startswith(b"data: "):
                    value = line[6:]
                elif line[0] == 0x3A:  # ":" starts a comment
                    continue
                elif line.startswith(b"event: "):
                    # Providers use a handful of event names: decode each once.
                    value = line[7:]
                    name_text = _EVENT_NAMES.get(value)
                    if name_text is None:
                        name_text = value.decode("utf-8", "replace")
                        if len(_EVENT_NAMES) < 256:
                            _EVENT_NAMES[value] = name_text
                    event_type = name_text
                    continue
                else:
                    name, colon, value = line.partition(b":")
                    if colon and value.startswith(b" "):
                        value = value[1:]
                    if name == b"data":
                        pass  # handled below, with the common case
                    elif name == b"event":
                        event_type = value.decode("utf-8", "replace")
                        continue
                    elif name == b"id":
                        if b"\x00" not in value:
                            self._last_id = value.decode("utf-8", "replace") or None
                        continue
                    elif name == b"retry":
                        if value.isdigit():  # bytes.isdigit is ASCII digits only
                            try:
                                event_retry = self._retry = int(value)
                            except ValueError:
                                # More digits than int() converts: no sane
                                # reconnection time, so ignore the field.
                                pass
                        continue
                    else:
                        continue  # unknown field: ignored, as the standard says
                data_size += len(value) + 1
                if data_size > limit:
                    self._fail(f"an SSE event's data exceeds max_event_bytes={limit}", value)
                data_lines.append(value.decode("utf-8", "replace"))
        finally:
            self._data_lines = data_lines
            self._data_size = data_size
            self._event_type = event_type
            self._event_retry = event_retry


_EVENT_NAMES: dict[bytes, str] = {}
"""``event:`` values seen so far, decoded (bounded: names are few)."""


class NDJSONDecoder:
    """Incremental newline-delimited JSON framing (Ollama's streaming format).

    Lines end in LF or CRLF; surrounding whitespace is stripped and blank lines
    are skipped. The lines are returned as text, not parsed: the provider codec
    parses them.

    Args:
        max_line_bytes: the most bytes buffered for one line; beyond it the
            decoder raises :class:`~toolwire.errors.RemoteProtocolError`.
    """

    __slots__ = ("_closed", "_error", "_max", "_pending", "_pending_len")

    def __init__(self, *, max_line_bytes: int = DEFAULT_MAX_FRAME_BYTES) -> None:
        self._max = _check_limit(max_line_bytes, "max_line_bytes")
        self._pending: list[bytes] = []
        self._pending_len = 0
        self._closed = False
        self._error: RemoteProtocolError | None = None

    def feed(self, data: bytes) -> list[str]:
        """Decode the next piece of the body.

        Args:
            data: the next bytes of the stream, split anywhere.

        Returns:
            The text of each non-blank line this piece completed, stripped.

        Raises:
            RemoteProtocolError: a line is not UTF-8 or exceeds ``max_line_bytes``.
            UsageError: called after :meth:`close`.
        """
        if self._error is not None:
            raise self._error.with_traceback(None)
        if self._closed:
            raise UsageError("NDJSONDecoder.feed() called after close()")
        if b"\n" not in data:
            if data:
                self._pending.append(data)
                self._pending_len += len(data)
                if self._pending_len > self._max:
                    self._error = RemoteProtocolError(
                        f"an NDJSON line exceeds max_line_bytes={self._max}", raw=data[:_SNIPPET]
                    )
                    raise self._error
            return []
        lines = data.split(b"\n")
        tail = lines.pop()
        if self._pending:
            self._pending.append(lines[0])
            lines[0] = b"".join(self._pending)
            self._pending.clear()
        if tail:
            self._pending.append(tail)
        self._pending_len = len(tail)
        out: list[str] = []
        try:
            for line in lines:
                # Lines are checked one by one (cheap next to decoding) so the
                # lines before a long one are still returned.
                if len(line) > self._max:
                    raise RemoteProtocolError(
                        f"an NDJSON line exceeds max_line_bytes={self._max}",
                        raw=line[:_SNIPPET],
                    )
                text = self._decode(line)
                if text:
                    out.append(text)
            if self._pending_len > self._max:
                raise RemoteProtocolError(
                    f"an NDJSON line exceeds max_line_bytes={self._max}", raw=tail[:_SNIPPET]
                )
        except RemoteProtocolError as exc:
            self._error = exc
            if not out:
                raise
        return out

    def close(self) -> list[str]:
        """Mark the end of the stream.

        Returns:
            The last line, if it had no newline after it. Calling ``close()``
            again returns ``[]``.

        Raises:
            RemoteProtocolError: that line is not UTF-8, or the decoder failed
                earlier.
        """
        if self._error is not None:
            raise self._error.with_traceback(None)
        if self._closed:
            return []
        self._closed = True
        line = b"".join(self._pending)
        self._pending.clear()
        self._pending_len = 0
        try:
            text = self._decode(line)
        except RemoteProtocolError as exc:
            self._error = exc
            raise
        return [text] if text else []

    @staticmethod
    def _decode(line: bytes) -> str:
        # JSON whitespace only (RFC 8259): bytes.strip() would also eat
        # vertical tab and form feed, which are not JSON whitespace.
        line = line.strip(b" \t\r\n")
        try:
            return line.decode("utf-8")
        except UnicodeDecodeError as exc:
            # JSON must be UTF-8; replacing bytes would silently alter a value.
            raise RemoteProtocolError(
                f"an NDJSON line is not valid UTF-8 ({exc.reason} at byte {exc.start})",
                raw=_snippet(line, exc.start),
            ) from None


# JSON array scanner. Everything structural in JSON is ASCII, and UTF-8 never
# uses ASCII byte values inside a multi-byte sequence, so scanning bytes is safe.
_NOT_WS = re.compile(rb"[^ \t\r\n]")
_STRING_STOP = re.compile(rb'["\\]')
_STRUCTURAL = re.compile(rb'["{}\[\]]')
_SCALAR_END = re.compile(rb"[^0-9A-Za-z+\-.]")
_SCALAR_START = frozenset(b"0123456789-+.abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")

# Where the decoder is in the array (outside an element).
_START, _FIRST, _NEXT, _AFTER, _IN_ELEMENT, _FINISHED = range(6)
# What kind of element it is inside.
_CONTAINER, _STRING, _SCALAR = range(3)

_OPEN_BRACE, _CLOSE_BRACE = 0x7B, 0x7D
_OPEN_BRACKET, _CLOSE_BRACKET = 0x5B, 0x5D
_QUOTE, _BACKSLASH, _COMMA = 0x22, 0x5C, 0x2C


class JSONArrayDecoder:
    """Incremental reader of one streamed JSON array.

    Gemini's ``streamGenerateContent`` without ``alt=sse`` sends one JSON array
    whose elements arrive over time (``[{...}\\n,\\r\\n{...}\\n]``). The decoder
    returns the text of each top-level element as soon as it closes, exactly as
    received (surrounding whitespace aside), without parsing it: it tracks
    only strings (with their escapes, even when a backslash and the character
    it escapes arrive in different pieces) and bracket nesting. Elements may be
    any JSON value.

    Args:
        max_element_bytes: the most bytes buffered for one element; beyond it
            the decoder raises :class:`~toolwire.errors.RemoteProtocolError`.
    """

    __slots__ = (
        "_closed",
        "_error",
        "_escape",
        "_in_string",
        "_kind",
        "_max",
        "_pieces",
        "_pieces_len",
        "_stack",
        "_state",
    )

    def __init__(self, *, max_element_bytes: int = DEFAULT_MAX_FRAME_BYTES) -> None:
        self._max = _check_limit(max_element_bytes, "max_element_bytes")
        self._state = _START
        self._kind = _CONTAINER
        # The closers the open containers of the current element expect.
        self._stack: list[int] = []
        self._in_string = False
        # The previous piece ended in a backslash inside a string.
        self._escape = False
        # The current element so far, as the pieces it arrived in.
        self._pieces: list[bytes] = []
        self._pieces_len = 0
        self._closed = False
        self._error: RemoteProtocolError | None = None

    @property
    def finished(self) -> bool:
        """Whether the closing ``]`` of the array has been seen."""
        return self._state == _FINISHED

    def feed(self, data: bytes) -> list[str]:
        """Decode the next piece of the body.

        Args:
            data: the next bytes of the stream, split anywhere.

        Returns:
            The JSON text of each top-level element this piece completed.

        Raises:
            RemoteProtocolError: the body is not a JSON array (it does not start
                with ``[``, has something other than ``,`` between elements,
                has data after ``]``, a bracket closes the wrong kind of
                container), an element is not UTF-8, or an element exceeds
                ``max_element_bytes``.
            UsageError: called after :meth:`close`.
        """
        if self._error is not None:
            raise self._error.with_traceback(None)
        if self._closed:
            raise UsageError("JSONArrayDecoder.feed() called after close()")
        out: list[str] = []
        try:
            self._feed(data, out)
        except RemoteProtocolError as exc:
            self._error = exc
            if not out:
                raise
        return out

    def close(self) -> list[str]:
        """Mark the end of the stream.

        Returns:
            ``[]``: every element was returned by :meth:`feed` already.

        Raises:
            StreamTruncated: the input ended before the closing ``]``.
            RemoteProtocolError: the decoder failed earlier.
        """
        if self._error is not None:
            raise self._error.with_traceback(None)
        if self._closed:
            return []
        self._closed = True
        if self._state == _FINISHED:
            return []
        if self._state == _START:
            message = "the JSON array stream ended before its opening '['"
        elif self._state == _IN_ELEMENT:
            message = "the JSON array stream ended inside an element, before the closing ']'"
        else:
            message = "the JSON array stream ended before its closing ']'"
        self._error = StreamTruncated(message)
        raise self._error

    def _feed(self, data: bytes, out: list[str]) -> None:
        n = len(data)
        pos = 0
        start = 0  # where the current element begins in this piece
        while pos < n:
            state = self._state
            if state == _IN_ELEMENT:
                end = self._scan(data, pos)
                if end < 0:
                    break
                if self._pieces_len + end - start > self._max:
                    self._too_big(data, start)
                if self._pieces:
                    self._pieces.append(data[start:end])
                    raw = b"".join(self._pieces)
                    self._pieces.clear()
                    self._pieces_len = 0
                else:
                    raw = data[start:end]
                out.append(self._decode(raw))
                self._state = _AFTER
                pos = end
                continue
            match = _NOT_WS.search(data, pos)
            if match is None:
                return
            i = match.start()
            c = data[i]
            if state == _AFTER:
                if c == _COMMA:
                    self._state = _NEXT
                elif c == _CLOSE_BRACKET:
                    self._state = _FINISHED
                else:
                    self._fail("expected ',' or ']' after a JSON array element", data, i)
                pos = i + 1
            elif state == _FIRST or state == _NEXT:
                if c == _CLOSE_BRACKET and state == _FIRST:
                    self._state = _FINISHED
                    pos = i + 1
                    continue
                start = i
                self._state = _IN_ELEMENT
                self._in_string = False
                if c == _OPEN_BRACE or c == _OPEN_BRACKET:
                    self._kind = _CONTAINER
                    self._stack.append(c + 2)  # '{'+2 is '}', '['+2 is ']'
                    pos = i + 1
                elif c == _QUOTE:
                    self._kind = _STRING
                    self._in_string = True
                    pos = i + 1
                elif c in _SCALAR_START:
                    self._kind = _SCALAR
                    pos = i
                else:
                    self._fail("expected a JSON value in the array", data, i)
            elif state == _START:
                if c != _OPEN_BRACKET:
                    self._fail("the body is not a JSON array: it does not start with '['", data, i)
                self._state = _FIRST
                pos = i + 1
            else:  # _FINISHED
                self._fail("data after the closing ']' of the JSON array", data, i)
        if self._state == _IN_ELEMENT:
            self._pieces.append(data[start:] if start else data)
            self._pieces_len += n - start
            if self._pieces_len > self._max:
                self._too_big(data, start)

    def _scan(self, data: bytes, pos: int) -> int:
        """Find the end of the current element from ``pos``.

        Returns:
            The index just past the element's last byte, or -1 when the element
            goes on past this piece.
        """
        n = len(data)
        if self._kind == _SCALAR:
            match = _SCALAR_END.search(data, pos)
            return -1 if match is None else match.start()
        if self._escape:
            # The escaped character opens this piece; it is never structural.
            self._escape = False
            pos += 1
        stack = self._stack
        while True:
            if self._in_string:
                match = _STRING_STOP.search(data, pos)
                if match is None:
                    return -1
                i = match.start()
                if data[i] == _BACKSLASH:
                    if i + 1 >= n:
                        self._escape = True
                        return -1
                    pos = i + 2
                    continue
                self._in_string = False
                pos = i + 1
                if self._kind == _STRING:
                    return pos
                continue
            match = _STRUCTURAL.search(data, pos)
            if match is None:
                return -1
            i = match.start()
            c = data[i]
            pos = i + 1
            if c == _QUOTE:
                self._in_string = True
            elif c == _OPEN_BRACE or c == _OPEN_BRACKET:
                stack.append(c + 2)
            else:
                if stack.pop() != c:
                    self._fail("a JSON array element closes a bracket it did not open", data, i)
                if not stack:
                    return pos

    def _decode(self, raw: bytes) -> str:
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            # JSON must be UTF-8; replacing bytes would silently alter a value.
            self._fail(f"a JSON array element is not valid UTF-8 ({exc.reason})", raw, exc.start)

    def _too_big(self, data: bytes, start: int) -> NoReturn:
        self._fail(
            f"a JSON array element exceeds max_element_bytes={self._max}",
            data,
            start,
        )

    def _fail(self, message: str, data: bytes, at: int) -> NoReturn:
        raise RemoteProtocolError(message, raw=_snippet(data, at))
