"""Rate limits shared by every run of a process: one budget per provider and model.

Theory of operation: a :class:`RateLimiter` keeps, for each provider host and
model, a budget of requests and tokens per minute. The transport asks it
before every attempt of a request (:meth:`RateLimiter.acquire`), so fifty
runs sharing one limiter wait their turn instead of each sending, each
getting a 429, and each backing off alone; and tells it of every answer
(:meth:`RateLimiter.observe`), so it learns:

* the limits the provider announces, when none were configured, in the
  headers of any registered dialect's service (its registration's
  :attr:`~toolwire.stream.codecs.ProviderInfo.rate_limit_headers`:
  ``x-ratelimit-limit-requests``/``-tokens``,
  ``anthropic-ratelimit-requests-limit``/``-tokens-limit``), the first
  dialect's that the answer has winning;
* that the budget is spent until a reset the provider names
  (``x-ratelimit-remaining-*`` or ``anthropic-ratelimit-*-remaining`` at 0);
* a 429's ``retry-after``: every run of that provider and model waits it out.

Every hold has a ceiling, ``max_hold`` (300 seconds by default): a hold is
never kept longer, and a 429 that asks for more, or a hold found in a shared
store that is longer, raises :class:`~toolwire.errors.RateHoldTooLong`
instead of waiting. A store lists its holds (:meth:`RateStore.holds`, as
:class:`RateHold` records) and lifts one (:meth:`RateStore.lift`):
``toolwire rates list`` and ``toolwire rates lift MODEL`` do it on the
journal's PostgreSQL store.

A budget is a sliding window: never more than the limit in any sixty seconds
(a bucket that refills continuously would allow twice the limit in the first
minute). A request's tokens are counted as its size over four when it is sent.

The budgets live in a :class:`RateStore`: :class:`LocalRateStore` keeps them in
this process's memory; :class:`~toolwire.journal.PostgresRateStore` in the
journal's PostgreSQL database, shared by every worker on every machine. A
limiter built without a store takes the process's default on first use
(:func:`default_rate_store`): this layer knows nothing of the journal, so the
journal, above it, sets that default when it is imported (a
``PostgresRateStore`` when ``$TOOLWIRE_JOURNAL`` is a ``postgresql://`` URL).
The clock and the sleep are injectable, for tests.
"""

from __future__ import annotations

import math
import re
import threading
import time
from collections import deque
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Protocol

from toolwire.errors import RateHoldTooLong, TransportTimeout, UsageError
from toolwire.http._messages import HttpRequest, retry_after_seconds
from toolwire.stream.codecs import RateLimitHeaders, WireDialect, registered

__all__ = [
    "LocalRateStore",
    "RateHold",
    "RateKey",
    "RateLimit",
    "RateLimiter",
    "RateStore",
    "StoreFactory",
    "default_rate_store",
    "set_default_rate_store",
]

WINDOW = 60.0
"""Seconds of a budget's window."""

RateKey = tuple[str, str]
"""(provider host, model)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class RateLimit:
    """A budget per minute; ``None`` is no limit.

    Raises:
        UsageError: a limit that is not a positive number.
    """

    requests_per_minute: float | None = None
    tokens_per_minute: float | None = None

    def __post_init__(self) -> None:
        for name in ("requests_per_minute", "tokens_per_minute"):
            value = getattr(self, name)
            if value is not None and (
                isinstance(value, bool)
                or not isinstance(value, (int, float))
                or not math.isfinite(value)
                or value <= 0
            ):
                raise UsageError(f"{name} must be a positive number, not {value!r}")


@dataclass(frozen=True, slots=True)
class RateHold:
    """A hold of one provider host and model: nothing of its budget is given
    before it ends (a 429's ``retry-after``, a spent budget)."""

    host: str
    model: str
    seconds: float
    """Seconds left until it ends."""

    @property
    def key(self) -> RateKey:
        """The (host, model) the hold is of, as :meth:`RateStore.lift` takes it."""
        return (self.host, self.model)


class RateStore(Protocol):
    """Where budgets are kept (this process's memory, or a shared store)."""

    blocking: bool
    """Its calls wait on I/O (a database): the limiter makes them in a
    worker thread, so the event loop goes on meanwhile."""

    def reserve(self, key: RateKey, tokens: int, limit: RateLimit, now: float) -> float:
        """Take one request of ``tokens`` from ``key``'s budget if it fits at
        ``now`` and return 0; otherwise take nothing and return the seconds
        to wait before asking again."""
        ...

    def block(self, key: RateKey, until: float) -> None:
        """Nothing of ``key``'s budget is given before ``until``."""
        ...

    def holds(self) -> list[RateHold]:
        """The holds not yet over, by host and model."""
        ...

    def lift(self, key: RateKey) -> bool:
        """End ``key``'s hold now; False when it had none."""
        ...


@dataclass(slots=True)
class RateWindow:
    """One budget's last minute: when each request was let through, its
    tokens, and the end of a hold (a 429, a spent budget)."""

    requests: deque[float] = field(default_factory=deque[float])
    tokens: deque[tuple[float, int]] = field(default_factory=deque[tuple[float, int]])
    token_sum: int = 0
    blocked_until: float = 0.0

    def expire(self, now: float) -> None:
        start = now - WINDOW
        while self.requests and self.requests[0] <= start:
            self.requests.popleft()
        while self.tokens and self.tokens[0][0] <= start:
            self.token_sum -= self.tokens.popleft()[1]


def wait_for(window: RateWindow, tokens: int, limit: RateLimit, now: float) -> float:
    """Seconds to wait before a request of ``tokens`` fits ``window`` (after
    :meth:`RateWindow.expire`) at ``now``; 0 when it fits now. Every store
    decides with it."""
    if now < window.blocked_until:
        return window.blocked_until - now
    rpm = limit.requests_per_minute
    if rpm is not None and len(window.requests) >= math.floor(rpm):
        return max(window.requests[0] + WINDOW - now, 1e-3)
    tpm = limit.tokens_per_minute
    if tpm is not None and window.tokens and window.token_sum + tokens > tpm:
        # Wait until enough of the window's tokens have expired (a request
        # larger than the whole budget goes alone).
        freed = window.token_sum
        for at, count in window.tokens:
            freed -= count
            if freed + tokens <= tpm:
                return max(at + WINDOW - now, 1e-3)
        return max(window.tokens[-1][0] + WINDOW - now, 1e-3)
    return 0.0


class LocalRateStore:
    """Budgets in this process's memory, safe across threads.

    Args:
        clock: the clock the holds are measured on (the limiter's), for
            :meth:`holds`.
    """

    blocking = False

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._windows: dict[RateKey, RateWindow] = {}
        self._lock = threading.Lock()
        self.clock = clock

    def reserve(self, key: RateKey, tokens: int, limit: RateLimit, now: float) -> float:
        """See :meth:`RateStore.reserve`."""
        with self._lock:
            window = self._windows.setdefault(key, RateWindow())
            window.expire(now)
            wait = wait_for(window, tokens, limit, now)
            if wait > 0:
                return wait
            window.requests.append(now)
            if tokens:
                window.tokens.append((now, tokens))
                window.token_sum += tokens
            return 0.0

    def block(self, key: RateKey, until: float) -> None:
        """See :meth:`RateStore.block`."""
        with self._lock:
            window = self._windows.setdefault(key, RateWindow())
            window.blocked_until = max(window.blocked_until, until)

    def holds(self) -> list[RateHold]:
        """See :meth:`RateStore.holds`."""
        now = self.clock()
        with self._lock:
            found = [(k, w.blocked_until - now) for k, w in self._windows.items()]
        return [RateHold(*key, left) for key, left in sorted(found) if left > 0]

    def lift(self, key: RateKey) -> bool:
        """See :meth:`RateStore.lift`."""
        with self._lock:
            window = self._windows.get(key)
            held = window is not None and window.blocked_until > self.clock()
            if window is not None:
                window.blocked_until = 0.0
        return held


StoreFactory = Callable[[Callable[[], float]], RateStore]
"""Makes the store of a limiter built without one, from the limiter's clock
(what the holds it is given are measured on)."""


def _local_store(clock: Callable[[], float]) -> RateStore:
    return LocalRateStore(clock)


_default_factory: StoreFactory = _local_store


def set_default_rate_store(factory: StoreFactory) -> None:
    """Make ``factory`` the maker of the store of every limiter built without
    one and not used yet. A layer above sets it: :mod:`toolwire.journal` does
    when it is imported."""
    global _default_factory
    _default_factory = factory


def default_rate_store(clock: Callable[[], float] = time.monotonic) -> RateStore:
    """The store of a limiter built without one: a :class:`LocalRateStore`,
    unless a layer above chose another with :func:`set_default_rate_store`
    (once :mod:`toolwire.journal` is imported, as by the Agent: a
    :class:`~toolwire.journal.PostgresRateStore` on the journal when
    ``$TOOLWIRE_JOURNAL`` is a ``postgresql://`` URL); ``clock``: the limiter's."""
    return _default_factory(clock)


async def _anyio_sleep(seconds: float) -> None:
    import anyio

    await anyio.sleep(seconds)


class RateLimiter:
    """Budgets of requests and tokens per minute, per provider and model,
    shared by every run whose transport has this limiter:
    ``HttpxTransport(rate_limiter=limiter)``.

    Args:
        limit: the budget of every provider and model not in ``models``.
        models: budgets by model id.
        learn: adopt the limits providers announce in their headers where
            none is configured.
        store: where budgets are kept: by default, chosen on first use,
            :func:`default_rate_store`: a
            :class:`~toolwire.journal.PostgresRateStore` on
            ``$TOOLWIRE_JOURNAL`` when that is a ``postgresql://`` URL (every
            worker on it shares the budgets), else a :class:`LocalRateStore`.
        clock: seconds, monotonic (``time.monotonic``).
        sleep: how to wait (``anyio.sleep``).
        max_wait: the longest one request waits for its turn, in seconds.
        max_hold: the ceiling of a hold, in seconds: a hold is kept at most
            this long, and one that asks for more (a 429's ``retry-after``, a
            hold in a shared store) raises
            :class:`~toolwire.errors.RateHoldTooLong` instead of waiting.

    Raises:
        UsageError: ``max_wait`` or ``max_hold`` is not a positive number.
    """

    def __init__(
        self,
        limit: RateLimit | None = None,
        *,
        models: Mapping[str, RateLimit] | None = None,
        learn: bool = True,
        store: RateStore | None = None,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[None]] | None = None,
        max_wait: float = 600.0,
        max_hold: float = 300.0,
    ) -> None:
        for name, value in (("max_wait", max_wait), ("max_hold", max_hold)):
            if (
                isinstance(value, bool)
                or not isinstance(value, (int, float))
                or not math.isfinite(value)
                or value <= 0
            ):
                raise UsageError(f"{name} must be a positive number of seconds, not {value!r}")
        self.limit = limit
        self.models = dict(models or {})
        self.learn = learn
        self._store = store
        self._store_lock = threading.Lock()
        self.clock = clock
        self._sleep = sleep or _anyio_sleep
        self.max_wait = max_wait
        self.max_hold = float(max_hold)
        self._learned: dict[RateKey, RateLimit] = {}
        self.granted = 0
        """Requests let through so far."""
        self.waited = 0.0
        """Seconds spent waiting, summed over requests."""

    def __repr__(self) -> str:
        return f"RateLimiter({self.limit!r}, models={sorted(self.models)!r}, learn={self.learn})"

    @property
    def store(self) -> RateStore:
        """Where the budgets are kept: the store given, else the process's
        default (:func:`default_rate_store`), chosen on first use."""
        store = self._store
        if store is None:
            with self._store_lock:
                if self._store is None:
                    self._store = default_rate_store(self.clock)
                store = self._store
        return store

    def limit_for(self, key: RateKey) -> RateLimit:
        """The budget of ``key``: configured, else learned, else none."""
        return self.models.get(key[1]) or self.limit or self._learned.get(key) or RateLimit()

    async def acquire(self, request: HttpRequest, size: int) -> RateKey:
        """Wait until ``request`` (of ``size`` bytes) fits its budget, and take it.

        Raises:
            TransportTimeout: it did not fit within ``max_wait`` seconds.
            RateHoldTooLong: the store holds the model past ``max_hold``
                (another worker's hold, or one kept before the ceiling).
        """
        key = rate_key(request)
        tokens = size // 4
        store = self.store
        started = self.clock()
        while True:
            now = self.clock()
            limit = self.limit_for(key)
            if store.blocking:
                from anyio import to_thread

                wait = await to_thread.run_sync(store.reserve, key, tokens, limit, now)
            else:
                wait = store.reserve(key, tokens, limit, now)
            if wait <= 0:
                self.granted += 1
                self.waited += now - started
                return key
            if wait > self.max_hold:
                raise RateHoldTooLong(model=key[1], host=key[0], asked=wait, ceiling=self.max_hold)
            if now - started + wait > self.max_wait:
                raise TransportTimeout(
                    f"the rate limit of {key[1]!r} at {key[0]} gave no turn within "
                    f"{self.max_wait:g} s"
                )
            await self._sleep(wait)

    def observe(self, key: RateKey, status: int, headers: Mapping[str, str]) -> None:
        """Learn from an answer's status and headers (see the module doc).
        A hold is kept at most ``max_hold`` seconds.

        Raises:
            RateHoldTooLong: a 429 asks a wait past ``max_hold`` (its hold is
                kept for ``max_hold`` seconds).
        """
        lower = {k.lower(): v for k, v in headers.items()}
        now = self.clock()
        if status == 429:
            delay = retry_after_seconds(lower)
            if delay is not None:
                self.store.block(key, now + min(delay, self.max_hold))
                if delay > self.max_hold:
                    raise RateHoldTooLong(
                        model=key[1], host=key[0], asked=delay, ceiling=self.max_hold
                    )
        for resource in ("requests", "tokens"):
            limit, remaining, reset = _announced(lower, resource)
            if self.learn and limit is not None and key[1] not in self.models and not self.limit:
                known = self._learned.get(key, RateLimit())
                field_name = f"{resource}_per_minute"
                if getattr(known, field_name) != limit:
                    self._learned[key] = RateLimit(**{**_fields(known), field_name: limit})
            if remaining == 0 and reset is not None:
                self.store.block(key, now + min(reset, self.max_hold))


def _fields(limit: RateLimit) -> dict[str, float | None]:
    return {
        "requests_per_minute": limit.requests_per_minute,
        "tokens_per_minute": limit.tokens_per_minute,
    }


def rate_key(request: HttpRequest) -> RateKey:
    """(host, model) of a request: the body's ``model``, or the path segment
    after ``/models/`` (where the model is part of the URL)."""
    rest = request.url.partition("://")[2]
    host, _, path = rest.partition("/")
    model = request.json.get("model") if isinstance(request.json, dict) else None
    if not isinstance(model, str):
        found = re.search(r"/models/([^/:?]+)", "/" + path)
        model = found.group(1) if found else ""
    return host.rpartition("@")[2], model


_Named = tuple[tuple[str, str, str, bool], ...]
"""Per scheme: its limit, remaining and reset header names of one resource,
and whether its reset is a duration (else an RFC 3339 time)."""

_named: dict[str, tuple[tuple[WireDialect, ...], _Named]] = {}


def _schemes(resource: str) -> _Named:
    """The rate-limit headers of every registered dialect's service for
    ``resource``, each scheme once, in the registry's order (made again
    only when the registry has changed)."""
    dialects = registered()
    cached = _named.get(resource)
    if cached is not None and cached[0] == dialects:
        return cached[1]
    found: list[RateLimitHeaders] = []
    for dialect in dialects:
        scheme = dialect.provider.rate_limit_headers if dialect.provider else None
        if scheme is not None and scheme not in found:
            found.append(scheme)
    named = tuple((*s.names(resource), s.reset_format == "duration") for s in found)
    _named[resource] = (dialects, named)
    return named


def _announced(
    headers: Mapping[str, str], resource: str
) -> tuple[float | None, int | None, float | None]:
    """(limit, remaining, seconds to reset) the provider announced for
    ``resource`` (``requests`` or ``tokens``), each ``None`` when absent:
    the limit and what remains as the first scheme of headers
    (:func:`_schemes`) that has them says, the reset as the first that says
    one it can read."""
    named = _schemes(resource)
    limit = _number(next((headers[n] for n, _, _, _ in named if headers.get(n)), None))
    remaining = _number(next((headers[n] for _, n, _, _ in named if headers.get(n)), None))
    reset = None
    for _, _, reset_name, duration in named:
        text = headers.get(reset_name)
        reset = _duration(text) if duration else _until(text)
        if reset is not None:
            break
    return (
        limit if limit is not None and limit > 0 else None,
        int(remaining) if remaining is not None else None,
        reset,
    )


def _number(text: str | None) -> float | None:
    if text is None:
        return None
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) and value >= 0 else None


_PART = re.compile(r"(\d+(?:\.\d+)?)(ms|h|m|s)")
# The whole of a duration, checked at once: findall alone tried every digit
# of a long run of them as a start (quadratic on a header of digits).
_DURATION = re.compile(r"(?:\d+(?:\.\d+)?(?:ms|h|m|s))+")


def _duration(text: str | None) -> float | None:
    """``6m0s``, ``1.5s``, ``20ms`` as seconds."""
    if not text:
        return None
    text = text.strip()
    if _DURATION.fullmatch(text) is None:
        return None
    parts = _PART.findall(text)
    scale = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 0.001}
    return sum(float(n) * scale[u] for n, u in parts)


def _until(text: str | None) -> float | None:
    """Seconds from now to an RFC 3339 time (never negative)."""
    if not text:
        return None
    try:
        moment = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        return None
    if moment.tzinfo is None:
        return None
    return max(0.0, (moment - datetime.now(timezone.utc)).total_seconds())
