"""Background responses of the emulation server: kept by id, resumed on request.

A Responses request with ``background: true`` is answered as any other, and
its whole stream (undamaged by faults) is kept under the response's id, so
that ``GET /v1/responses/{id}?stream=true&starting_after=N`` streams the
events after number ``N`` (``GET /v1/responses/{id}`` gives the whole
response). The kept responses are bounded: past the limit the oldest is
forgotten, and a resumption of it is answered 404 as an expired one is.

A resumption is one more attempt of the request that started the response:
the turn's next fault applies to it (a cut, or an HTTP error such as 404),
so a scenario scripts the cut and what becomes of the reconnection.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from toolwire.stream.codecs.emulation.openai_responses import RESUME_ROUTE
from toolwire.testing.scenario import Turn

__all__ = ["RESUME_ROUTE", "BackgroundResponses", "KeptResponse"]


@dataclass(frozen=True, slots=True)
class KeptResponse:
    """A background response as it was streamed."""

    chunks: tuple[bytes, ...]
    """Event number ``n``'s bytes are ``chunks[n]``."""
    body: dict[str, Any]
    """The whole response object, as ``GET /v1/responses/{id}`` gives it."""
    attempts_key: str
    """The request that started it, whose attempts the resumptions continue."""
    turn: Turn
    """The scenario's turn: its faults and its delay."""


class BackgroundResponses:
    """The latest ``limit`` background responses, by id (thread-safe)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._kept: OrderedDict[str, KeptResponse] = OrderedDict()
        self._lock = threading.Lock()

    def keep(self, response_id: str, response: KeptResponse) -> None:
        """Remember ``response`` (the newest), forgetting the oldest past the limit."""
        with self._lock:
            self._kept.pop(response_id, None)
            self._kept[response_id] = response
            while len(self._kept) > self.limit:
                self._kept.popitem(last=False)

    def get(self, response_id: str) -> KeptResponse | None:
        """The response kept under ``response_id``, if it still is."""
        with self._lock:
            return self._kept.get(response_id)


def starting_after(value: str | None, events: int) -> int | None:
    """The ``starting_after`` query value as an event number (-1 when absent),
    or ``None`` when it is not one of the response's."""
    if value is None:
        return -1
    if not value.isascii() or not value.lstrip("-").isdigit() or len(value) > 12:
        return None
    number = int(value)
    return number if -1 <= number < events else None
