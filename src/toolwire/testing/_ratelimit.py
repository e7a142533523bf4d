"""The emulation server's rate limit: 429s with the headers providers send.

A :class:`ServerRateLimit` admits at most a :class:`~toolwire.http.RateLimit`'s
requests (and tokens: a body's size over four) in any sixty seconds of its
clock, answers the others 429 with ``retry-after``, and puts on every answer
the headers a client learns from, those the dialect's provider's service
sends (its registration's
:attr:`~toolwire.stream.codecs.ProviderInfo.rate_limit_headers`: OpenAI's
``x-ratelimit-limit-requests``, ``-remaining-requests`` and
``-reset-requests``, Anthropic's ``anthropic-ratelimit-requests-limit``,
``-remaining``, ``-reset``; none for a service that sends none, such as
Gemini's). Its clock is injectable, so a test of a rate limit runs on a fake one.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from datetime import datetime, timedelta, timezone

from toolwire.http import LocalRateStore, RateLimit
from toolwire.stream.codecs import wire_dialect

__all__ = ["ServerRateLimit"]

_WINDOW = 60.0


class ServerRateLimit:
    """What an :class:`~toolwire.testing.EmulationServer` admits per minute.

    Args:
        limit: the budget.
        clock: seconds (``time.monotonic``); tests give the clients' fake clock.
    """

    def __init__(self, limit: RateLimit, *, clock: Callable[[], float] = time.monotonic) -> None:
        self.limit = limit
        self.clock = clock
        self.accepted: list[float] = []
        """When each admitted request arrived (by :attr:`clock`)."""
        self.refused = 0
        """How many requests were answered 429."""
        self._store = LocalRateStore()
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        counts = f"accepted={len(self.accepted)}, refused={self.refused}"
        return f"ServerRateLimit({self.limit!r}, {counts})"

    def admit(self, size: int) -> float:
        """Admit a request of ``size`` bytes: 0, or the seconds it must wait (refused)."""
        with self._lock:
            now = self.clock()
            wait = self._store.reserve(("", ""), size // 4, self.limit, now)
            if wait > 0:
                self.refused += 1
            else:
                self.accepted.append(now)
            return wait

    def most_in_a_minute(self) -> int:
        """The most requests admitted in any sixty seconds."""
        times = sorted(self.accepted)
        most, start = 0, 0
        for end, at in enumerate(times):
            while times[start] <= at - _WINDOW:
                start += 1
            most = max(most, end - start + 1)
        return most

    def headers(self, dialect: str) -> dict[str, str]:
        """The rate-limit headers of an answer, as the provider of ``dialect`` sends them."""
        rpm = self.limit.requests_per_minute
        provider = wire_dialect(dialect).provider
        scheme = provider.rate_limit_headers if provider is not None else None
        if rpm is None or scheme is None:
            return {}
        with self._lock:
            now = self.clock()
            recent = [at for at in self.accepted if at > now - _WINDOW]
        remaining = max(0, int(rpm) - len(recent))
        reset = (recent[0] + _WINDOW - now) if recent else 0.0
        limit_name, remaining_name, reset_name = scheme.names("requests")
        if scheme.reset_format == "time":
            moment = datetime.now(timezone.utc) + timedelta(seconds=reset)
            when = moment.isoformat(timespec="seconds")
        else:
            when = f"{reset:.3f}s"
        return {limit_name: str(int(rpm)), remaining_name: str(remaining), reset_name: when}
