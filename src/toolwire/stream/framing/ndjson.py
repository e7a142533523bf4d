"""Newline-delimited JSON framing (Ollama's native streaming format).

One JSON document per line. The reader cuts lines and returns their text,
unparsed: the dialect's codec parses it. Like the SSE reader, it keeps the
incomplete last line as a list of pieces joined once, so a long line fed in
small pieces costs linear time, and it decodes text only once a line is
complete.
"""

from __future__ import annotations

from typing import Final

from toolwire.errors import RemoteProtocolError, UsageError
from toolwire.stream.framing._common import (
    DEFAULT_MAX_FRAME_BYTES,
    Frame,
    TextErrors,
    check_errors,
    check_limit,
    snippet,
)

__all__ = ["NDJSONDecoder"]

_SNIPPET: Final = 80


class NDJSONDecoder:
    """Incremental newline-delimited JSON framing.

    Lines end in LF or CRLF; surrounding JSON whitespace is stripped and blank
    lines are skipped. The lines are returned as text, not parsed.

    Args:
        max_line_bytes: the most bytes buffered for one line; beyond it the
            reader raises :class:`~toolwire.errors.RemoteProtocolError`.
        errors: what becomes of bytes that are not UTF-8: an error
            (``"strict"``, the default: JSON must be UTF-8), U+FFFD
            (``"replace"``) or lone surrogates (``"surrogateescape"``).
    """

    __slots__ = ("_closed", "_error", "_errors", "_max", "_pending", "_pending_len", "_undecodable")

    def __init__(
        self, *, max_line_bytes: int = DEFAULT_MAX_FRAME_BYTES, errors: TextErrors = "strict"
    ) -> None:
        self._max = check_limit(max_line_bytes, "max_line_bytes")
        self._errors = check_errors(errors)
        self._undecodable = False
        self._pending: list[bytes] = []
        self._pending_len = 0
        self._closed = False
        self._error: RemoteProtocolError | None = None

    @property
    def undecodable(self) -> bool:
        """Whether some bytes were not UTF-8 (see ``errors``)."""
        return self._undecodable

    def feed(self, data: bytes) -> list[str]:
        """Decode the next piece of the body.

        Args:
            data: the next bytes of the stream, split anywhere.

        Returns:
            The text of each non-blank line this piece completed, stripped.

        Raises:
            RemoteProtocolError: a line exceeds ``max_line_bytes``, or (with
                ``errors="strict"``) is not UTF-8.
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
                    self._error = self._too_long(data)
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
                    raise self._too_long(line)
                text = self._decode(line)
                if text:
                    out.append(text)
            if self._pending_len > self._max:
                raise self._too_long(tail)
        except RemoteProtocolError as exc:
            self._error = exc
            if not out:
                raise
        return out

    def feed_pairs(self, data: bytes) -> list[Frame]:
        """Like :meth:`feed`, each line as a ``("message", text)`` frame."""
        return [("message", line) for line in self.feed(data)]

    def close(self) -> list[str]:
        """Mark the end of the stream.

        Returns:
            The last line, if it had no newline after it. Calling ``close()``
            again returns ``[]``.

        Raises:
            RemoteProtocolError: that line is not UTF-8 (with
                ``errors="strict"``), or the reader failed earlier.
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

    def close_pairs(self) -> list[Frame]:
        """Like :meth:`close`, each line as a ``("message", text)`` frame."""
        return [("message", line) for line in self.close()]

    def _too_long(self, line: bytes) -> RemoteProtocolError:
        return RemoteProtocolError(
            f"an NDJSON line exceeds max_line_bytes={self._max}", raw=line[:_SNIPPET]
        )

    def _decode(self, line: bytes) -> str:
        # JSON whitespace only (RFC 8259): bytes.strip() would also eat
        # vertical tab and form feed, which are not JSON whitespace.
        line = line.strip(b" \t\r\n")
        try:
            return line.decode("utf-8")
        except UnicodeDecodeError as exc:
            self._undecodable = True
            if self._errors != "strict":
                return line.decode("utf-8", self._errors)
            # JSON must be UTF-8; replacing bytes would silently alter a value.
            raise RemoteProtocolError(
                f"an NDJSON line is not valid UTF-8 ({exc.reason} at byte {exc.start})",
                raw=snippet(line, exc.start),
            ) from None
