"""Streamed JSON array framing (Gemini ``streamGenerateContent`` without ``alt=sse``).

One JSON array whose elements arrive over time. The reader returns the text
of each top-level element as soon as it closes, without parsing it: it
tracks only strings (with their escapes) and bracket nesting, jumping from
one interesting byte to the next with compiled regular expressions. Every
structural character of JSON is ASCII, and UTF-8 never uses ASCII byte
values inside a multi-byte sequence, so scanning bytes is safe; text is
decoded once an element is complete.
"""

from __future__ import annotations

import re
from typing import NoReturn

from toolwire.errors import RemoteProtocolError, StreamTruncated, UsageError
from toolwire.stream.framing._common import (
    DEFAULT_MAX_FRAME_BYTES,
    END_OF_BODY,
    Frame,
    TextErrors,
    check_errors,
    check_limit,
    snippet,
)
from toolwire.stream.limits import MAX_JSON_DEPTH

__all__ = ["JSONArrayDecoder"]

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
            the reader raises :class:`~toolwire.errors.RemoteProtocolError`.
        errors: what becomes of bytes that are not UTF-8: an error
            (``"strict"``, the default: JSON must be UTF-8), U+FFFD
            (``"replace"``) or lone surrogates (``"surrogateescape"``).

    An element nesting deeper than :data:`~toolwire.stream.limits.MAX_JSON_DEPTH`
    is refused (the nesting is all the reader keeps besides the bytes).
    """

    __slots__ = (
        "_closed",
        "_ended",
        "_error",
        "_errors",
        "_escape",
        "_in_string",
        "_kind",
        "_max",
        "_pieces",
        "_pieces_len",
        "_stack",
        "_state",
        "_undecodable",
    )

    def __init__(
        self, *, max_element_bytes: int = DEFAULT_MAX_FRAME_BYTES, errors: TextErrors = "strict"
    ) -> None:
        self._max = check_limit(max_element_bytes, "max_element_bytes")
        self._errors = check_errors(errors)
        self._undecodable = False
        self._ended = False  # END_OF_BODY was given
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

    @property
    def undecodable(self) -> bool:
        """Whether some bytes were not UTF-8 (see ``errors``)."""
        return self._undecodable

    def feed_pairs(self, data: bytes) -> list[Frame]:
        """Like :meth:`feed`, each element as a ``("message", text)`` frame,
        then :data:`~toolwire.stream.framing.END_OF_BODY` once the array closed."""
        return self._pairs(self.feed(data))

    def close_pairs(self) -> list[Frame]:
        """Like :meth:`close`, as frames."""
        return self._pairs(self.close())

    def _pairs(self, elements: list[str]) -> list[Frame]:
        frames: list[Frame] = [("message", text) for text in elements]
        if self._state == _FINISHED and not self._ended:
            self._ended = True
            frames.append(END_OF_BODY)
        return frames

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
            if self._state == _IN_ELEMENT:
                end = self._scan(data, pos)
                if end < 0:
                    break
                out.append(self._element(data, start, end))
                self._state = _AFTER
                pos = end
                continue
            match = _NOT_WS.search(data, pos)
            if match is None:
                return
            start = i = match.start()
            pos = self._between(data, i)
        if self._state == _IN_ELEMENT:
            self._pieces.append(data[start:] if start else data)
            self._pieces_len += n - start
            if self._pieces_len > self._max:
                self._too_big(data, start)

    def _element(self, data: bytes, start: int, end: int) -> str:
        """The text of the element that ends at ``end`` of this piece."""
        if self._pieces_len + end - start > self._max:
            self._too_big(data, start)
        if self._pieces:
            self._pieces.append(data[start:end])
            raw = b"".join(self._pieces)
            self._pieces.clear()
            self._pieces_len = 0
        else:
            raw = data[start:end]
        return self._decode(raw)

    def _between(self, data: bytes, i: int) -> int:
        """Read the significant byte at ``i``, outside an element; return
        where to go on from."""
        state = self._state
        c = data[i]
        if state == _AFTER:
            if c == _COMMA:
                self._state = _NEXT
            elif c == _CLOSE_BRACKET:
                self._state = _FINISHED
            else:
                self._fail("expected ',' or ']' after a JSON array element", data, i)
            return i + 1
        if state == _FIRST or state == _NEXT:
            if c == _CLOSE_BRACKET and state == _FIRST:
                self._state = _FINISHED
                return i + 1
            return self._start_element(data, i)
        if state == _START:
            if c != _OPEN_BRACKET:
                self._fail("the body is not a JSON array: it does not start with '['", data, i)
            self._state = _FIRST
            return i + 1
        self._fail("data after the closing ']' of the JSON array", data, i)

    def _start_element(self, data: bytes, i: int) -> int:
        c = data[i]
        self._state = _IN_ELEMENT
        self._in_string = False
        if c == _OPEN_BRACE or c == _OPEN_BRACKET:
            self._kind = _CONTAINER
            self._stack.append(c + 2)  # '{'+2 is '}', '['+2 is ']'
            return i + 1
        if c == _QUOTE:
            self._kind = _STRING
            self._in_string = True
            return i + 1
        if c in _SCALAR_START:
            self._kind = _SCALAR
            return i
        self._fail("expected a JSON value in the array", data, i)

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
                if len(stack) >= MAX_JSON_DEPTH:
                    self._fail(
                        f"a JSON array element nests deeper than {MAX_JSON_DEPTH} levels", data, i
                    )
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
            self._undecodable = True
            if self._errors != "strict":
                return raw.decode("utf-8", self._errors)
            # JSON must be UTF-8; replacing bytes would silently alter a value.
            self._fail(f"a JSON array element is not valid UTF-8 ({exc.reason})", raw, exc.start)

    def _too_big(self, data: bytes, start: int) -> NoReturn:
        self._fail(
            f"a JSON array element exceeds max_element_bytes={self._max}",
            data,
            start,
        )

    def _fail(self, message: str, data: bytes, at: int) -> NoReturn:
        raise RemoteProtocolError(message, raw=snippet(data, at))
