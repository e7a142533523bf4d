"""The HTTP layer: request and response records, the :class:`Transport`
protocol (here), and httpx behind it (:mod:`toolwire.http.transport`, with
its settings, pools and error mapping). The providers
(:mod:`toolwire.providers`) build requests from this package's records;
only the transport does network I/O.
"""

from __future__ import annotations

from toolwire.http._messages import *  # noqa: F403
from toolwire.http._messages import __all__ as _messages_all
from toolwire.http.ratelimit import (
    LocalRateStore,
    RateHold,
    RateKey,
    RateLimit,
    RateLimiter,
    RateStore,
)

__all__ = [
    *_messages_all,
    "LocalRateStore",
    "RateHold",
    "RateKey",
    "RateLimit",
    "RateLimiter",
    "RateStore",
]
