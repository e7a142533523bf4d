"""``text/event-stream`` framing: bytes in, server-sent events out.

Theory of operation
-------------------
The WHATWG HTML standard's "event stream interpretation": lines end in LF,
CR or CRLF; a blank line dispatches the event built from the lines before
it. Almost every provider streams this way.

This reader sits on the hot path (a 1 MB tool-call argument is ~170,000
events), so the work per ``feed`` is proportional to its size: lines are cut
with ``bytes.split``/``splitlines``, never byte by byte in Python, and the
incomplete last line is kept as a list of pieces joined once, so a long line
fed in many small pieces costs linear, not quadratic, time. Text is decoded
only once a line is complete, so a UTF-8 sequence split between two pieces
decodes correctly.

:meth:`SSEDecoder.feed_matched` hands over each event that matches the exact
text the caller names (its dialect's argument delta) as the match, with no
line cut or decoded; everything else is read line by line as above.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, Final, TypeAlias

from toolwire.errors import RemoteProtocolError, UsageError
from toolwire.stream.framing._common import Frame
from toolwire.stream.framing._sse_lines import (
    ServerSentEvent,
    SSELineReader,
    _make_event,
    _make_pair,
)

__all__ = ["EventMatcher", "SSEDecoder", "ServerSentEvent"]

EventMatcher: TypeAlias = Callable[[str, int], "re.Match[str] | None"]
"""``match(text, pos)``: the match of one whole event starting at ``text[pos]``
(its lines, each ending in LF, and the blank line after them), or ``None``."""

# Events in a row the matcher may fail to recognize before the rest of a piece
# is read line by line (a stream of other events pays little for trying).
_MISSES: Final = 8


class SSEDecoder(SSELineReader):
    """Incremental ``text/event-stream`` reader.

    Follows the WHATWG HTML "event stream interpretation" rules: lines end in
    LF, CR or CRLF (also when the CR and the LF arrive in different pieces); one
    leading byte order mark is dropped; ``:`` comment lines (keep-alives) are
    ignored; one space after the colon is dropped; ``data:`` lines are joined
    with LF; ``event:``, ``id:`` and ``retry:`` may come in any order, before or
    after ``data:``; an ``id`` containing NUL is ignored; ``retry`` is taken only
    when it is all ASCII digits; unknown fields are ignored; a blank line
    dispatches the event if it has data (an event with no ``data:`` line at
    all is not dispatched, even if it had an ``event:`` field). ``[DONE]`` is
    ordinary data here.

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
            one line; beyond it the reader raises
            :class:`~toolwire.errors.RemoteProtocolError`.
        errors: what becomes of data bytes that are not UTF-8: U+FFFD, as the
            standard says (``"replace"``), lone surrogates
            (``"surrogateescape"``), or an error (``"strict"``); see
            :data:`~toolwire.stream.framing.TextErrors`.
    """

    __slots__ = ()

    @property
    def last_event_id(self) -> str | None:
        """The last event id seen (what a reconnection sends as ``Last-Event-ID``)."""
        return self._last_id

    @property
    def retry(self) -> int | None:
        """The last ``retry:`` reconnection time seen in the stream, in milliseconds."""
        return self._retry

    @property
    def undecodable(self) -> bool:
        """Whether some data bytes were not UTF-8 (see ``errors``)."""
        return self._undecodable

    def feed(self, data: bytes) -> list[ServerSentEvent]:
        """Decode the next piece of the body.

        Args:
            data: the next bytes of the stream, split anywhere.

        Returns:
            The events completed by this piece, in stream order.

        Raises:
            RemoteProtocolError: a line or an event exceeds ``max_event_bytes``,
                or (with ``errors="strict"``) data is not UTF-8.
            UsageError: called after :meth:`close`.
        """
        events: list[ServerSentEvent] = self._feed(data, _make_event)
        return events

    def feed_pairs(self, data: bytes) -> list[Frame]:
        """Like :meth:`feed`, giving ``(event, data)`` pairs: what a stream
        decoder needs, without building an event object per event."""
        pairs: list[Frame] = self._feed(data, _make_pair)
        return pairs

    def feed_matched(self, data: bytes, match: EventMatcher) -> list[Frame | re.Match[str]]:
        """Like :meth:`feed_pairs`, but an event that ``match`` recognizes
        (see :data:`EventMatcher`) where nothing of an earlier one is pending is
        given as its match, unread. A piece with a CR, with bytes that are not
        UTF-8, or longer than ``max_event_bytes`` is read line by line."""
        items: list[Frame | re.Match[str]] = self._feed(data, _make_pair, match)
        return items

    def drop_partial(self) -> None:
        """Forget the event being read and the incomplete line: the stream was
        cut inside them, and what is fed next is a continuation that starts
        at a whole event (a resumed stream). Events already given stay given."""
        self._pending.clear()
        self._pending_len = 0
        self._skip_lf = False
        self._data_lines = []
        self._data_size = 0
        self._event_type = ""
        self._event_retry = None

    def close(self) -> list[ServerSentEvent]:
        """Mark the end of the stream.

        Returns:
            The last event, if it had data but no blank line after it (the
            standard would discard it; providers do end streams that way).
            Calling ``close()`` again returns ``[]``.

        Raises:
            RemoteProtocolError: the reader failed earlier, or the last line
                takes the event's data over ``max_event_bytes``.
        """
        events: list[ServerSentEvent] = self._close(_make_event)
        return events

    def close_pairs(self) -> list[Frame]:
        """Like :meth:`close`, giving ``(event, data)`` pairs."""
        pairs: list[Frame] = self._close(_make_pair)
        return pairs

    # -- internals ---------------------------------------------------------------

    def _feed(
        self, data: bytes, make: Callable[..., Any], match: EventMatcher | None = None
    ) -> list[Any]:
        if self._error is not None:
            raise self._error.with_traceback(None)
        if self._closed:
            raise UsageError("SSEDecoder.feed() called after close()")
        text = self._complete_text(data) if match is not None else None
        lines = self._cut(data) if text is None else []
        out: list[Any] = []
        if not lines and text is None:
            return out
        try:
            if text is not None and match is not None:
                self._read_matched(text, match, out)
            elif len(data) + len(lines[0]) > self._max:
                # Only a piece this big can hold a line over the limit. The
                # lines before the long one still yield their events.
                for k, line in enumerate(lines):
                    if len(line) > self._max:
                        self._process(lines[:k], out, make)
                        self._fail(f"an SSE line exceeds max_event_bytes={self._max}", line)
            if lines:
                self._process(lines, out, make)
            if self._pending_len > self._max:
                self._fail(f"an SSE line exceeds max_event_bytes={self._max}", self._pending[0])
        except RemoteProtocolError as exc:
            self._error = exc
            if not out:
                raise
        return out

    def _complete_text(self, data: bytes) -> str | None:
        """The complete lines that ``data`` ends (with the pending start of the
        first) as text, keeping the incomplete end; ``None``, changing nothing,
        when they must be read line by line."""
        if self._skip_lf or b"\r" in data:
            return None
        end = data.rfind(b"\n") + 1
        pending = self._pending
        if not end or (self._bom_check and (pending or data[:1] == b"\xef")):
            return None
        lines = b"".join(pending) + data[:end] if pending else data[:end]
        if len(lines) > self._max:
            return None
        try:
            text = lines.decode("utf-8")
        except UnicodeDecodeError:
            return None
        self._bom_check = False
        pending.clear()
        tail = data[end:]
        if tail:
            pending.append(tail)
        self._pending_len = len(tail)
        return text

    def _read_matched(
        self, text: str, match: EventMatcher, out: list[Frame | re.Match[str]]
    ) -> None:
        """Read ``text`` (complete lines): matched events as their matches, the
        rest an event at a time (or all of it, once ``match`` keeps failing)."""
        append = out.append
        n = len(text)
        pos = 0
        misses = 0
        while pos < n:
            if (
                misses < _MISSES
                and not self._data_lines
                and not self._event_type
                and self._event_retry is None
            ):
                m = match(text, pos)
                if m is not None:
                    misses = 0
                    while m is not None:
                        append(m)
                        pos = m.end()
                        m = match(text, pos)
                    if pos >= n:
                        return
                misses += 1
            # Up to the blank line that ends this event (the text ends in LF).
            if misses >= _MISSES:
                end = n
            elif text[pos] == "\n":
                end = pos + 1
            else:
                blank = text.find("\n\n", pos)
                end = n if blank < 0 else blank + 2
            self._process(text[pos : end - 1].encode().split(b"\n"), out, _make_pair)
            pos = end
