"""What one response, and all the responses of a process, may hold.

Each choice and each call has a cap of its own (:mod:`toolwire.stream.limits`);
caps that are only per item multiply (16 choices of 60 MiB each). A
:class:`ResponseBudget` counts the characters of text, reasoning and argument
text of one response, all choices and calls together, against
``MAX_RESPONSE_CHARS``, and reserves them from the process's budget
(``MAX_PROCESS_CHARS``) a MiB at a time (one lock per MiB, none per
fragment). The reservation is given back when the response's decoding ends
(:meth:`ResponseBudget.release`, or when the budget is collected).
"""

from __future__ import annotations

import threading
import weakref
from typing import Final

from toolwire.errors import RemoteProtocolError
from toolwire.stream.limits import MAX_PROCESS_CHARS, MAX_RESPONSE_CHARS

__all__ = ["ResponseBudget", "process_held"]

_BLOCK: Final = 1024 * 1024
_lock = threading.Lock()
_held = [0]  # characters reserved by the responses being decoded


def process_held() -> int:
    """The characters reserved by all the responses being decoded now."""
    return _held[0]


def _give(amount: int) -> None:
    with _lock:
        _held[0] -= amount


class ResponseBudget:
    """The characters one response holds, and its share of the process's."""

    __slots__ = ("__weakref__", "_finalizer", "_reserved", "ceiling", "limit", "used")

    def __init__(self, limit: int | None = None) -> None:
        self.limit = MAX_RESPONSE_CHARS if limit is None else limit
        self.used = 0
        self._reserved = [0]
        self.ceiling = 0
        """What ``used`` may reach without reserving more: a caller on a hot
        path may add to ``used`` itself below it, and call :meth:`take` past it."""
        self._finalizer = weakref.finalize(self, _release, self._reserved)

    def take(self, n: int) -> None:
        """Count ``n`` more characters.

        Raises:
            RemoteProtocolError: the response, or the process, is past its cap.
        """
        used = self.used = self.used + n
        if used > self._reserved[0]:
            if used > self.limit:
                raise RemoteProtocolError(
                    f"the response holds more than {self.limit} characters of text, "
                    "reasoning and arguments, all choices and calls together"
                )
            self._reserve(used)

    def _reserve(self, used: int) -> None:
        want = min(used - self._reserved[0] + _BLOCK, self.limit - self._reserved[0])
        with _lock:
            if _held[0] + want > MAX_PROCESS_CHARS:
                raise RemoteProtocolError(
                    f"the responses being decoded in this process hold more than "
                    f"{MAX_PROCESS_CHARS} characters"
                )
            _held[0] += want
        self._reserved[0] += want
        self.ceiling = self._reserved[0]

    def release(self) -> None:
        """Give the reservation back (the response's decoding ended)."""
        self._finalizer()
        self.ceiling = 0


def _release(reserved: list[int]) -> None:
    if reserved[0]:
        _give(reserved[0])
        reserved[0] = 0
