"""Streams the emulation server keeps, by id, to send again after a cut.

A dialect whose provider keeps its streams (an encoder's ``stream_key``: a
Responses background response, every Gemini interaction) has each streamed
answer kept whole (undamaged by faults) under its id, so that a ``GET`` on
the dialect's ``continuation_routes`` (``/v1/responses/{id}?stream=true&
starting_after=N``, ``/v1beta/interactions/{id}?stream=true&last_event_id=...``)
streams the events after the one it names (all of them when it names none;
without ``stream=true``, the whole answer).
The kept streams are bounded: past the limit the oldest is forgotten, and a
resumption of it is answered 404 as an expired one is.

A resumption is one more attempt of the request that started the stream:
the turn's next fault applies to it (a cut, or an HTTP error such as 404),
so a scenario scripts the cut and what becomes of the reopening.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import TYPE_CHECKING

from toolwire.testing.scenario import Turn

if TYPE_CHECKING:
    from toolwire.testing.encoders import Reply

__all__ = ["KeptStream", "KeptStreams"]


@dataclass(frozen=True, slots=True)
class KeptStream:
    """A stream as it was sent."""

    chunks: tuple[bytes, ...]
    """Event number ``n``'s bytes are ``chunks[n]`` (a trailer, if any, last)."""
    event_ids: tuple[str | None, ...]
    """Event number ``n``'s id, as a resumption names it."""
    reply: Reply
    """The answer, which a ``GET`` without ``stream=true`` gives whole."""
    attempts_key: str
    """The request that started it, whose attempts the resumptions continue."""
    turn: Turn
    """The scenario's turn: its faults and its delay."""

    def after(self, event_id: str | None) -> int | None:
        """The number of the event ``event_id`` names (-1 for none: from the
        first), or ``None`` when it is not one of the stream's."""
        if event_id is None:
            return -1
        try:
            return self.event_ids.index(event_id)
        except ValueError:
            return None


class KeptStreams:
    """The latest ``limit`` kept streams, by id (thread-safe)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._kept: OrderedDict[str, KeptStream] = OrderedDict()
        self._lock = threading.Lock()

    def keep(self, stream_id: str, stream: KeptStream) -> None:
        """Remember ``stream`` (the newest), forgetting the oldest past the limit."""
        with self._lock:
            self._kept.pop(stream_id, None)
            self._kept[stream_id] = stream
            while len(self._kept) > self.limit:
                self._kept.popitem(last=False)

    def get(self, stream_id: str) -> KeptStream | None:
        """The stream kept under ``stream_id``, if it still is."""
        with self._lock:
            return self._kept.get(stream_id)
