"""What HTTP failures become: toolwire's typed errors for httpx exceptions,
error statuses without a provider mapping, oversized bodies and redirects."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from toolwire.errors import (
    ConnectError,
    LocalProtocolError,
    ProviderError,
    ReadError,
    RemoteProtocolError,
    ToolwireError,
    TransportError,
    TransportTimeout,
    UsageError,
)
from toolwire.http import (
    HttpRequest,
    decode_error_body,
    error_class_for,
    redact_url,
    retry_after_seconds,
)
from toolwire.http._settings import Timeouts

__all__ = ["generic_error", "map_httpx_error", "redirect_error", "too_large"]


def generic_error(status_code: int, headers: Mapping[str, str], body: Any) -> ProviderError:
    """The error of an HTTP failure when no provider mapping was given."""
    decoded = decode_error_body(body)
    cls = error_class_for(status_code)
    return cls(
        f"HTTP {status_code}",
        status_code=status_code,
        retry_after=retry_after_seconds(headers),
        body=decoded,
    )


def map_httpx_error(exc: Exception, timeouts: Timeouts, url: str) -> ToolwireError:
    """The toolwire error for an httpx exception on a request to ``url`` (the
    caller chains ``__cause__``).

    Connection failures and timeouts name the URL, with its credentials
    (userinfo, a ``?key=``) redacted: "could not connect" alone does not say
    which of a program's servers is down or mistyped.
    """
    import httpx

    shown = redact_url(url)
    detail = str(exc) or type(exc).__name__
    if isinstance(exc, httpx.TimeoutException):
        if isinstance(exc, httpx.ConnectTimeout):
            return TransportTimeout(f"connect timeout ({timeouts.connect}s) expired: {shown}")
        if isinstance(exc, httpx.WriteTimeout):
            return TransportTimeout(f"write timeout ({timeouts.write}s) expired: {shown}")
        if isinstance(exc, httpx.PoolTimeout):
            return TransportTimeout(
                f"no free connection within the pool timeout ({timeouts.pool}s): {shown}"
            )
        return TransportTimeout(f"read timeout ({timeouts.read}s) expired: {shown}")
    if isinstance(exc, (httpx.ConnectError, httpx.ProxyError)):
        return ConnectError(f"could not connect to {shown}: {detail}")
    if isinstance(exc, httpx.RemoteProtocolError):
        return ReadError(f"the connection to {shown} broke: {detail}")
    if isinstance(exc, httpx.NetworkError):  # ReadError, WriteError, CloseError
        return ReadError(f"network error on {shown}: {detail}")
    if isinstance(exc, httpx.DecodingError):
        return RemoteProtocolError(f"could not decode the response body: {detail}")
    if isinstance(exc, (httpx.UnsupportedProtocol, httpx.InvalidURL)):
        return UsageError(f"bad request URL: {detail}")
    if isinstance(exc, httpx.LocalProtocolError):
        return LocalProtocolError(f"invalid request: {detail}")
    return TransportError(f"HTTP transport error: {detail}")


def too_large(cap: int) -> RemoteProtocolError:
    return RemoteProtocolError(
        f"the response body is larger than {cap} bytes, the limit "
        "(HttpxTransport(limits=BodyLimits(max_body_bytes=...)))"
    )


def redirect_error(
    request: HttpRequest, status_code: int, headers: Mapping[str, str]
) -> ProviderError:
    target = headers.get("location", "")
    where = f" to {redact_url(target)}" if target else ""
    return ProviderError(
        f"HTTP {status_code}: {redact_url(request.url)} redirects{where}; toolwire does not "
        "follow redirects (the key would travel with it): use the new address as base_url",
        status_code=status_code,
    )
