"""How long to wait before trying again: one :class:`Backoff` for the whole
library (the transport's request retries and the tools' retries alike).

Exponential backoff with jitter (so that many clients that failed together do
not come back together), and the server's own ``Retry-After`` honoured, within
a cap, when a failure carries one.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from toolwire.errors import UsageError

__all__ = ["Backoff"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Backoff:
    """Exponential backoff with jitter between attempts.

    The delay before retry ``n`` (1-based) is ``min(max_delay, initial_delay *
    multiplier ** (n - 1))``, less a random fraction of it up to ``jitter``.
    When the failure carries the server's requested delay (``Retry-After``),
    that delay is used instead, capped at ``max_retry_after``.

    Raises:
        UsageError: a negative or non-finite number, or ``jitter`` outside
            ``[0, 1]``.
    """

    initial_delay: float = 0.5
    """Seconds before the first retry (before jitter)."""
    multiplier: float = 2.0
    """Each further delay is this many times the previous one."""
    max_delay: float = 20.0
    """Upper bound of a computed delay."""
    jitter: float = 0.25
    """Fraction of a computed delay taken off at random: 0 for none, 1 for
    "full jitter" (anywhere between 0 and the computed delay)."""
    max_retry_after: float = 60.0
    """Upper bound of a server-requested delay."""

    def __post_init__(self) -> None:
        numbers = (self.initial_delay, self.multiplier, self.max_delay, self.max_retry_after)
        if any(not math.isfinite(n) or n < 0 for n in numbers):
            raise UsageError("backoff settings must be finite and non-negative")
        if not 0.0 <= self.jitter <= 1.0:
            raise UsageError("jitter must be between 0 and 1")

    def delay(self, retry: int, *, rand: float, retry_after: float | None = None) -> float:
        """Seconds to wait before retry number ``retry``.

        Args:
            retry: 1 for the first retry.
            rand: a number in ``[0, 1)`` for the jitter.
            retry_after: the server's requested delay, if any.
        """
        if retry_after is not None and math.isfinite(retry_after):
            return min(max(retry_after, 0.0), self.max_retry_after)
        try:
            computed = self.initial_delay * self.multiplier ** max(retry - 1, 0)
        except OverflowError:  # a huge retry number: the cap applies
            computed = self.max_delay
        return min(computed, self.max_delay) * (1.0 - self.jitter * rand)
