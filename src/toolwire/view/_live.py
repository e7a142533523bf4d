"""The live stream of a run: server-sent events of the records a run in
progress writes, read by polling the journal.

Theory of operation: the journal may be written by another process, so the
stream polls it: every ``poll`` seconds it opens the file read-only, reads
the run's events after the last one sent (at most :data:`BATCH` at a time)
and closes it, so that it never holds a read transaction open against the
writer. Each event goes out as an ``record`` event (its ``id`` is its
``seq``: a browser that reconnects says where it was with
``Last-Event-ID``); the run's end (a ``run_finished`` or ``run_failed``
record) goes out as an ``end`` event carrying the final status, and the
stream closes. A suspension is an end too when it happens while followed;
a page opened on a suspended run follows it on (the answers given, then the
run resumed by its program). Bounded everywhere: one stream lasts at most ``deadline``
seconds (the browser reconnects), a comment line keeps idle connections
alive, and at most :data:`STREAMS` streams are open at once.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable

import anyio
import anyio.to_thread

from toolwire.journal import (
    JournalError,
    JournalEvent,
    JournalReader,
    RunFailed,
    RunFinished,
    RunSuspended,
)
from toolwire.view._events import event_json

__all__ = ["BATCH", "STREAMS", "follow"]

BATCH = 200
"""The most events read from the journal in one poll."""
STREAMS = 16
"""The most live streams open at once."""
_KEEPALIVE = 15.0


def _end_status(event: JournalEvent) -> str | None:
    record = event.record
    if isinstance(record, RunFailed):
        return "cancelled" if record.cancelled else "failed"
    if isinstance(record, RunFinished):
        return record.outcome if record.outcome is not None else "answered"
    if isinstance(record, RunSuspended):
        return "suspended"
    return None


async def follow(
    open_journal: Callable[[], JournalReader],
    run_id: str,
    after: int,
    *,
    start: float,
    poll: float,
    deadline: float,
) -> AsyncIterator[str]:
    """The stream's text, event by event, for the run's records after ``after``.

    ``start`` is the run's first time (the offsets the blocks show);
    ``open_journal`` opens the file read-only for one poll.
    """

    def read(seq: int) -> list[JournalEvent]:
        journal = open_journal()
        try:
            return journal.events_after(run_id, seq, limit=BATCH)
        finally:
            journal.close()

    ends = time.monotonic() + deadline
    quiet_since = time.monotonic()
    # The first read takes the last event seen again: a run that already
    # ended ends the stream at once.
    seen = max(after - 1, 0)
    while time.monotonic() < ends:
        try:
            events = await anyio.to_thread.run_sync(read, seen)
        except JournalError:
            return  # gone or unreadable: the browser's reconnection is told why
        for event in events:
            seen = event.seq
            if event.seq > after:
                yield f"event: record\nid: {event.seq}\ndata: {event_json(event, start)}\n\n"
            status = _end_status(event)
            # A suspension already seen is followed on: answers, then the resume.
            seen_pause = status == "suspended" and event.seq <= after
            if status is not None and event is events[-1] and not seen_pause:
                yield f"event: end\ndata: {status}\n\n"
                return
        if events:
            quiet_since = time.monotonic()
        elif time.monotonic() - quiet_since >= _KEEPALIVE:
            quiet_since = time.monotonic()
            yield ": waiting\n\n"
        if len(events) < BATCH:
            await anyio.sleep(min(poll, max(ends - time.monotonic(), 0)))
