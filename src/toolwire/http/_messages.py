"""HTTP as toolwire sees it: plain request and response records, the
:class:`Transport` protocol, and what every HTTP error needs read from it.

Theory of operation: a provider turns a conversation into an
:class:`HttpRequest` (plain data) and a :class:`Transport` sends it, the only
layer doing network I/O (``toolwire.http.transport`` is httpx behind this
protocol). Both sides import this module and nothing of each other, so
neither the providers nor the transport depend on the other's code.

Credentials travel in headers; :class:`HttpRequest`'s ``repr`` never shows
them.
"""

from __future__ import annotations

import math
import time
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from email.utils import parsedate_to_datetime
from typing import Any, Protocol, TypeAlias

from toolwire.errors import Overloaded, ProviderError, RateLimited, RemoteProtocolError
from toolwire.http.credentials import REDACTED, is_credential_name
from toolwire.http.urls import redact_url
from toolwire.stream import jsonio

__all__ = [
    "REDACTED",
    "ErrorParser",
    "HttpRequest",
    "HttpResponse",
    "StreamResponse",
    "Transport",
    "decode_error_body",
    "error_class_for",
    "redact_url",
    "retry_after_seconds",
]

SHOWN_HEADERS = frozenset(
    {
        "accept",
        "accept-encoding",
        "anthropic-beta",
        "anthropic-version",
        "content-length",
        "content-type",
        "openai-beta",
        "user-agent",
    }
)
"""Request headers whose values a ``repr`` or a log may show."""


ErrorParser: TypeAlias = Callable[[int, Mapping[str, str], Any], ProviderError]
"""``(status_code, headers, body) -> ProviderError``: a provider's error mapping."""


@dataclass(frozen=True, slots=True, kw_only=True)
class HttpRequest:
    """An HTTP request ready to send: what ``build_request()`` returns.

    ``repr()`` redacts credential headers, so a request can be logged or shown
    in a failing test without leaking the API key.
    """

    method: str
    """``"POST"`` for every model call."""
    url: str
    """The full URL (no credentials in it: keys travel in headers)."""
    headers: Mapping[str, str] = field(default_factory=dict[str, str])
    """Request headers, including the credential header."""
    json: dict[str, Any] = field(default_factory=dict[str, Any])
    """The JSON body."""
    stream: bool = False
    """Whether the response is a stream (SSE) rather than one JSON document."""
    dialect: str = ""
    """The wire dialect (``"openai-chat"``...), for decoding and messages."""

    def content(self) -> bytes:
        """The body as compact UTF-8 JSON bytes (none for a GET without one)."""
        if self.method == "GET" and not self.json:
            return b""
        return jsonio.dumps_bytes(self.json)

    def redacted_headers(self) -> dict[str, str]:
        """The headers as they may be shown: only the values of headers known to
        carry no credential are kept (a gateway's own ``X-Tenant-Token``, or any
        header a caller added, may be one), the others are ``<redacted>``."""
        return {
            k: (v if k.lower() in SHOWN_HEADERS and not is_credential_name(k) else REDACTED)
            for k, v in self.headers.items()
        }

    def redacted_url(self) -> str:
        """The URL as it may be shown: no userinfo, credential parameters redacted."""
        return redact_url(self.url)

    def __repr__(self) -> str:
        return (
            f"HttpRequest(method={self.method!r}, url={self.redacted_url()!r}, "
            f"headers={self.redacted_headers()!r}, json={self.json!r}, "
            f"stream={self.stream!r}, dialect={self.dialect!r})"
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class HttpResponse:
    """A complete (non-streaming) HTTP response."""

    status_code: int
    headers: Mapping[str, str] = field(default_factory=dict[str, str])
    """Header names are lower-case."""
    content: bytes = b""

    def json(self) -> Any:
        """The body parsed as JSON.

        Raises:
            RemoteProtocolError: the body is not JSON.
        """
        try:
            return jsonio.loads(self.content)
        except ValueError as exc:
            raise RemoteProtocolError(
                f"response body is not JSON: {exc}", raw=self.content[:500]
            ) from exc


class StreamResponse(Protocol):
    """A response whose body is read as it arrives."""

    @property
    def status_code(self) -> int:
        """The HTTP status (always a success: errors are raised before)."""
        ...

    @property
    def headers(self) -> Mapping[str, str]:
        """Response headers, lower-case names."""
        ...

    def aiter_bytes(self) -> AsyncIterator[bytes]:
        """The body, piece by piece as the network delivers it."""
        ...


class Transport(Protocol):
    """The one seam where bytes cross the network (see ``toolwire.http.transport``)."""

    async def send(
        self, request: HttpRequest, *, parse_error: ErrorParser | None = None
    ) -> HttpResponse:
        """Send a request and read its whole response."""
        ...

    def stream(
        self, request: HttpRequest, *, parse_error: ErrorParser | None = None
    ) -> AbstractAsyncContextManager[StreamResponse]:
        """Send a request; the context yields a response whose body is streamed."""
        ...

    async def aclose(self) -> None:
        """Release connections."""
        ...


def retry_after_seconds(headers: Mapping[str, str], *, now: float | None = None) -> float | None:
    """How long the server asked us to wait, from its response headers.

    Reads ``retry-after-ms`` (OpenAI, Anthropic) first, then ``Retry-After``
    as delta-seconds or an HTTP date (RFC 9110 section 10.2.3). Garbage is
    ignored rather than trusted.

    Args:
        headers: response headers (any case).
        now: the current Unix time, for HTTP dates (defaults to the clock).

    Returns:
        Seconds to wait (never negative), or ``None`` when the headers say nothing.
    """
    lower = {k.lower(): v for k, v in headers.items()}
    ms = lower.get("retry-after-ms")
    if ms is not None:
        try:
            value = float(ms) / 1000.0
        except ValueError:
            value = math.nan
        if math.isfinite(value) and value >= 0:
            return value
    raw = lower.get("retry-after")
    if raw is None:
        return None
    raw = raw.strip()
    try:
        value = float(raw)
    except ValueError:
        try:
            when = parsedate_to_datetime(raw)
        except (TypeError, ValueError, IndexError):
            return None
        if when.tzinfo is None:
            return None
        current = time.time() if now is None else now
        return max(0.0, when.timestamp() - current)
    if not math.isfinite(value) or value < 0:
        return None
    return value


def error_class_for(status_code: int, *, overloaded: bool = False) -> type[ProviderError]:
    """The toolwire error class for an HTTP status (429 -> RateLimited...)."""
    if status_code == 429:
        return RateLimited
    if status_code in (503, 529) or overloaded:
        return Overloaded
    return ProviderError


def decode_error_body(body: Any) -> Any:
    """An error body as JSON when it is JSON, else as text (never raises)."""
    if isinstance(body, (bytes, bytearray, memoryview)):
        data = bytes(body)
        try:
            return jsonio.loads(data)
        except ValueError:
            return data.decode("utf-8", "replace")
    if isinstance(body, str):
        try:
            return jsonio.loads(body)
        except ValueError:
            return body
    return body
