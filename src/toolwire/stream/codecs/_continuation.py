"""A kept stream reopened: what its codec checks of every event after that.

A provider that keeps its streams (a Responses background response, a
Gemini interaction) streams one again after a cut from the event after the
last one read (the decoder's ``cursor``), or from its first event when a
process that died reads it again. What comes must be that stream, going on:
the codec told :meth:`~toolwire.stream.codecs.ContinuedCodec.continue_after`
checks the stream's id wherever an event names it, and the id of every event
against those already read (a Responses ``sequence_number`` must be the next
one; an interaction's ``event_id`` must be new). An event that does not
continue the stream raises :class:`~toolwire.errors.ContinuationMismatch`:
the stream fails there, so none of what it carried is handed on as a call.

The same shapes are wrong in a stream read once (a step started twice, an
item of another response); there they are a plain
:class:`~toolwire.errors.RemoteProtocolError` (:func:`refused` says which).
"""

from __future__ import annotations

from dataclasses import dataclass

from toolwire.errors import ContinuationMismatch, RemoteProtocolError, UsageError

__all__ = ["Continuation", "continuation", "numbered", "refused"]


@dataclass(frozen=True, slots=True)
class Continuation:
    """Which stream was reopened, and after which event."""

    dialect: str
    stream_id: str
    """The stream's id, as the provider keeps it."""
    after: str | None
    """The last event read before it was reopened (``None``: none, it is
    read from its first event)."""

    def mismatch(self, what: str, raw: str | None = None) -> ContinuationMismatch:
        """The error for an event that does not continue the stream: ``what`` it is."""
        where = "from its first event" if self.after is None else f"after event {self.after}"
        return ContinuationMismatch(
            f"{self.dialect}: stream {self.stream_id} reopened {where} does not continue "
            f"it: {what}",
            stream_id=self.stream_id,
            after=self.after,
            raw=raw,
        )


def continuation(
    dialect: str, cursor: tuple[str, str] | None, stream_id: str, after: str | None
) -> Continuation:
    """The continuation of ``stream_id`` after ``after``, for a codec that
    stands at ``cursor``.

    Raises:
        UsageError: the codec stands elsewhere (another stream, another event,
            or it has read events when the stream is read from its first).
    """
    if (cursor is not None or after is not None) and cursor != (stream_id, after):
        at = "nothing read" if cursor is None else f"event {cursor[1]} of stream {cursor[0]}"
        raise UsageError(
            f"the decoder stands at {at}: it cannot continue stream {stream_id} "
            + ("from its first event" if after is None else f"after event {after}")
        )
    return Continuation(dialect, stream_id, after)


def refused(
    continued: Continuation | None, dialect: str, what: str, raw: str | None = None
) -> RemoteProtocolError:
    """The error for an event of a shape its stream cannot have: a
    :class:`~toolwire.errors.ContinuationMismatch` in a reopened stream (a
    replay is the likely cause), else a plain protocol error."""
    if continued is not None:
        return continued.mismatch(what, raw)
    return RemoteProtocolError(f"{dialect}: {what}", raw=raw)


def numbered(
    continued: Continuation, kind: object, number: object, last: int | None, raw: str
) -> int:
    """The number of a reopened stream's ``kind`` event whose events are
    numbered one by one (``last``: the number of the last event read).

    Raises:
        ContinuationMismatch: it has no number, or not the next one (a number
            read already, or one past events that never came).
    """
    if type(number) is not int:
        raise continued.mismatch(f"a {kind} event has no number", raw)
    if last is not None and number != last + 1:
        what = "read already" if number <= last else f"events {last + 1} to {number - 1} never came"
        raise continued.mismatch(f"event {number} ({kind}) came after event {last}: {what}", raw)
    return number
