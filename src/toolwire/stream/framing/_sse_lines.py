"""The ``text/event-stream`` line interpreter behind :class:`~toolwire.stream.framing.SSEDecoder`.

:class:`SSELineReader` holds the reader's state and turns complete lines into
events (the WHATWG "event stream interpretation"); the pieces of the body
are cut into lines here too (see ``sse.py`` for the costs this keeps
linear). :class:`~toolwire.stream.framing.SSEDecoder` adds the public
interface and the short way for events of a text known in advance.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final, NoReturn

from toolwire.errors import RemoteProtocolError
from toolwire.stream.framing._common import (
    DEFAULT_MAX_FRAME_BYTES,
    Frame,
    TextErrors,
    check_errors,
    check_limit,
)

__all__ = ["SSELineReader", "ServerSentEvent"]

_BOM: Final = b"\xef\xbb\xbf"
_SNIPPET: Final = 80


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
    """A faster ``ServerSentEvent(event, data, id, retry)`` for the hot loop.

    A frozen dataclass's ``__init__`` goes through ``object.__setattr__`` once
    per field; filling the slots through their descriptors directly builds the
    same object in about half the time, which is a fifth of the reader's
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


def _make_pair(event: str, data: str, id: str | None, retry: int | None) -> Frame:
    return (event, data)


_EVENT_NAMES: dict[bytes, str] = {}
"""``event:`` values seen so far, decoded (bounded: names are few)."""


def _event_name(value: bytes) -> str:
    # Providers use a handful of event names: decode each once.
    name = _EVENT_NAMES.get(value)
    if name is None:
        name = value.decode("utf-8", "replace")
        if len(_EVENT_NAMES) < 256:
            _EVENT_NAMES[value] = name
    return name


def _field(line: bytes) -> tuple[bytes, bytes]:
    """A line's field name and value: one space after the colon is dropped."""
    name, colon, value = line.partition(b":")
    if colon and value.startswith(b" "):
        value = value[1:]
    return name, value


def _retry_value(value: bytes) -> int | None:
    if not value.isdigit():  # bytes.isdigit is ASCII digits only
        return None
    try:
        return int(value)
    except ValueError:
        # More digits than int() converts: no sane reconnection time.
        return None


class SSELineReader:
    """The state of an SSE reader and the interpretation of complete lines
    (the incomplete last one is kept); see :class:`~toolwire.stream.framing.SSEDecoder`."""

    __slots__ = (
        "_bom_check",
        "_closed",
        "_data_lines",
        "_data_size",
        "_error",
        "_errors",
        "_event_retry",
        "_event_type",
        "_last_id",
        "_max",
        "_pending",
        "_pending_len",
        "_retry",
        "_skip_lf",
        "_undecodable",
    )

    def __init__(
        self, *, max_event_bytes: int = DEFAULT_MAX_FRAME_BYTES, errors: TextErrors = "replace"
    ) -> None:
        self._max = check_limit(max_event_bytes, "max_event_bytes")
        self._errors = check_errors(errors)
        self._undecodable = False
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

    def _cut(self, data: bytes) -> list[bytes]:
        """The lines this piece completes; the incomplete end is kept."""
        if self._skip_lf and data:
            self._skip_lf = False
            if data[0] == 0x0A:
                data = data[1:]
        if not data:
            return []
        # Without a CR (the common case) one split on LF does; bytes.splitlines
        # splits on exactly LF, CR and CRLF (unlike str's).
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
        return lines

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
                        data = data_lines[0] if len(data_lines) == 1 else "\n".join(data_lines)
                        append(make(event_type or "message", data, self._last_id, event_retry))
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
                    event_type = _event_name(line[7:])
                    continue
                else:
                    name, value = _field(line)
                    if name != b"data":
                        if name == b"event":
                            event_type = _event_name(value)
                        elif name == b"id":
                            if b"\x00" not in value:
                                self._last_id = value.decode("utf-8", "replace") or None
                        elif name == b"retry":
                            retry = _retry_value(value)
                            if retry is not None:
                                event_retry = self._retry = retry
                        continue  # an unknown field is ignored, as the standard says
                data_size += len(value) + 1
                if data_size > limit:
                    self._fail(f"an SSE event's data exceeds max_event_bytes={limit}", value)
                try:
                    data_lines.append(value.decode("utf-8"))
                except UnicodeDecodeError:
                    data_lines.append(self._undecodable_text(value))
        finally:
            self._data_lines = data_lines
            self._data_size = data_size
            self._event_type = event_type
            self._event_retry = event_retry

    def _undecodable_text(self, value: bytes) -> str:
        self._undecodable = True
        if self._errors == "strict":
            try:
                value.decode("utf-8")
            except UnicodeDecodeError as exc:
                self._fail(
                    f"an SSE data line is not valid UTF-8 ({exc.reason} at byte {exc.start})",
                    value[max(0, exc.start - 20) :],
                )
        return value.decode("utf-8", self._errors)
