"""Errors of the network and of the provider's answers (status codes, rate limits)."""

from __future__ import annotations

from typing import Any

from toolwire.errors._base import ToolwireError

__all__ = [
    "ConnectError",
    "Overloaded",
    "ProviderError",
    "RateHoldTooLong",
    "RateLimited",
    "ReadError",
    "StreamErrorEvent",
    "TransportError",
    "TransportTimeout",
]


class TransportError(ToolwireError):
    """The network failed before or while talking to the provider."""

    type_name = "transport_error"


class ConnectError(TransportError):
    """Could not connect to the provider."""

    type_name = "connect_error"


class ReadError(TransportError):
    """The connection broke while reading the response."""

    type_name = "read_error"


class TransportTimeout(TransportError):
    """A connect, read or total timeout expired."""

    type_name = "timeout"


class ProviderError(ToolwireError):
    """The provider answered with an error.

    Attributes:
        provider: which provider or dialect answered (``"openai-chat"``...).
        status_code: the HTTP status, or the status the error event reports.
        retry_after: seconds to wait before trying again, when the provider said.
        body: the provider's error payload as received (never our request).
        code: the provider's own error code (``"tool_use_failed"``...), if any.
    """

    type_name = "provider_error"

    def __init__(
        self,
        message: str,
        *,
        provider: str | None = None,
        status_code: int | None = None,
        retry_after: float | None = None,
        body: Any = None,
        code: str | None = None,
        error_type: str | None = None,
    ) -> None:
        super().__init__(message)
        self.provider = provider
        self.status_code = status_code
        self.retry_after = retry_after
        self.body = body
        self.code = code
        self.error_type = error_type

    def to_dict(self) -> dict[str, Any]:
        d = super().to_dict()
        for key in ("provider", "status_code", "retry_after", "code", "error_type"):
            value = getattr(self, key)
            if value is not None:
                d[key] = value
        return d


class RateLimited(ProviderError):
    """HTTP 429: too many requests."""

    type_name = "rate_limited"


class RateHoldTooLong(RateLimited):
    """A rate-limit hold longer than the limiter's ceiling (``max_hold``): a
    429's ``Retry-After``, or a hold another worker left in a shared store.
    The request fails rather than wait (it is not sent, or not sent again);
    the hold kept for the model is cut to the ceiling (``toolwire rates lift
    MODEL`` lifts a shared one at once).

    Attributes:
        model: the model held.
        host: the provider host.
        asked: the seconds of the hold asked for.
        ceiling: the limiter's ``max_hold``, in seconds.
    """

    type_name = "rate_hold_too_long"

    def __init__(self, *, model: str, host: str, asked: float, ceiling: float) -> None:
        super().__init__(
            f"the rate limit of {model!r} at {host} asks a wait of {asked:.0f} s, past the "
            f"ceiling of {ceiling:g} s (RateLimiter(max_hold=...)): the request fails rather "
            f"than wait (lift a shared hold with: toolwire rates lift {model})",
            status_code=429,
            retry_after=asked,
        )
        self.model = model
        self.host = host
        self.asked = asked
        self.ceiling = ceiling

    def to_dict(self) -> dict[str, Any]:
        d = super().to_dict()
        d.update(model=self.model, host=self.host, asked=self.asked, ceiling=self.ceiling)
        return d

    def __reduce__(self) -> tuple[Any, ...]:
        fields = {"model": self.model, "host": self.host, "asked": self.asked}
        return (_rate_hold_too_long, (fields, self.ceiling))


def _rate_hold_too_long(fields: dict[str, Any], ceiling: float) -> RateHoldTooLong:
    return RateHoldTooLong(**fields, ceiling=ceiling)


class Overloaded(ProviderError):
    """The provider is overloaded (503, Anthropic 529...)."""

    type_name = "overloaded"


class StreamErrorEvent(ProviderError):
    """The provider reported an error inside a stream it had started with 200."""

    type_name = "stream_error"
