"""The transport's settings: :class:`Timeouts`, :class:`BodyLimits` and
:class:`HttpRetryPolicy` (see :mod:`toolwire.http.transport`)."""

from __future__ import annotations

from dataclasses import dataclass, field

from toolwire.backoff import Backoff
from toolwire.errors import UsageError

__all__ = ["BodyLimits", "HttpRetryPolicy", "Timeouts"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Timeouts:
    """Timeouts in seconds (``None`` disables one).

    A plain number given where ``Timeouts`` is expected sets connect, read,
    write and pool alike, as in httpx.
    """

    connect: float | None = 10.0
    """Establishing the TCP/TLS connection."""
    read: float | None = 300.0
    """Waiting for the next bytes (the first byte included): long, since a
    reasoning model may think for minutes before it answers."""
    write: float | None = 60.0
    """Sending the request body."""
    pool: float | None = 30.0
    """Waiting for a free connection from the pool."""
    total: float | None = 600.0
    """Everything: all attempts, the backoff between them, and for a stream
    the whole body. It is what ends a request whose server keeps the
    connection alive (keep-alive comments, a byte now and then) without ever
    finishing; ``None`` removes it."""

    @classmethod
    def coerce(cls, value: Timeouts | float | None) -> Timeouts:
        """``value`` as :class:`Timeouts` (``None`` gives the defaults)."""
        if value is None:
            return cls()
        if isinstance(value, Timeouts):
            return value
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
            raise UsageError(f"a timeout must be a positive number of seconds, got {value!r}")
        seconds = float(value)
        return cls(connect=seconds, read=seconds, write=seconds, pool=seconds)


@dataclass(frozen=True, slots=True, kw_only=True)
class BodyLimits:
    """How much of a response the transport reads (a streamed body is read
    piece by piece, as the caller consumes it, and bounded by the decoder).

    Raises:
        UsageError: a limit below 1.
    """

    max_body_bytes: int = 32 * 1024 * 1024
    """A whole (non-streamed) response body: larger is an error, and what is
    beyond is never read."""
    max_error_body_bytes: int = 64 * 1024
    """An error response's body: what is beyond is never read (a provider's
    message fits many times over)."""

    max_inflate_ratio: int = 100
    """A ``gzip`` or ``deflate`` body may inflate to this many times the
    bytes received (past a first MiB); more is refused as a compression
    bomb. It is inflated a MiB at a time, never a whole network read at once."""

    def __post_init__(self) -> None:
        if self.max_body_bytes < 1 or self.max_error_body_bytes < 1:
            raise UsageError("body limits must be at least 1 byte")
        if self.max_inflate_ratio < 1:
            raise UsageError("max_inflate_ratio must be at least 1")


@dataclass(frozen=True, slots=True, kw_only=True)
class HttpRetryPolicy:
    """When and how long to wait before sending a request again."""

    retries: int = 2
    """How many times a failed request is sent again (0 disables retries)."""
    backoff: Backoff = field(default_factory=Backoff)
    """The wait before each retry; a server's ``Retry-After`` is honoured up
    to ``backoff.max_retry_after``."""
    retry_statuses: frozenset[int] = field(
        default_factory=lambda: frozenset({408, 429, 500, 502, 503, 504, 529})
    )
    """HTTP statuses worth another attempt."""
    retry_read_timeouts: bool = False
    """Also retry when no response came within the read timeout. Off by
    default: a slow model would then cost several full timeouts."""

    def __post_init__(self) -> None:
        if isinstance(self.retries, bool) or not isinstance(self.retries, int) or self.retries < 0:
            raise UsageError("retries must be an integer >= 0")

    def delay(self, attempt: int, *, retry_after: float | None, rand: float) -> float:
        """Seconds to wait after failed attempt number ``attempt`` (1-based).

        Args:
            attempt: the attempt that just failed.
            retry_after: the server's requested delay, if any.
            rand: a number in ``[0, 1)`` for the jitter.
        """
        return self.backoff.delay(attempt, rand=rand, retry_after=retry_after)
