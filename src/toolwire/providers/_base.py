"""What every provider shares: the request record, the transport seam, the base class.

Theory of operation: a provider is a translator with a thin I/O shell.
``build_request()`` turns normalized messages into an :class:`HttpRequest`
(plain data: method, URL, headers, JSON body) and ``parse_response()`` /
``parse_error()`` turn the provider's JSON back into toolwire's types; all
three are pure and testable without a socket. ``stream()`` and ``complete()``
hand the request to a :class:`Transport` (the only layer doing network I/O)
and feed the bytes it returns to toolwire's sans-I/O stream decoder.

The API key lives in a :class:`_Secret` that never prints itself; request
headers that carry it are redacted in :class:`HttpRequest`'s ``repr``; error
messages and bodies built from a provider's answer are scrubbed of the key in
case a server echoes it back.
"""

from __future__ import annotations

import contextlib
import os
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from toolwire import _compat
from toolwire.errors import ProviderError, UsageError
from toolwire.events import Event
from toolwire.http import (
    HttpRequest,
    Transport,
    decode_error_body,
    error_class_for,
    redact_url,
    retry_after_seconds,
)
from toolwire.http.credentials import redact, redact_headers
from toolwire.http.urls import url_secrets
from toolwire.messages import Message
from toolwire.providers._continuation import Continuation, continuation_settings, reopening
from toolwire.providers._reads import HOLD, ProviderStream
from toolwire.providers._secret import _Secret
from toolwire.stream.codecs import WireDialect, wire_dialect
from toolwire.stream.codecs.request import ToolChoice, merge_extra
from toolwire.stream.decoder import decode_response
from toolwire.types import StreamResult

if TYPE_CHECKING:
    from toolwire.http.transport import Timeouts

__all__ = [
    "Provider",
    "ToolChoice",
]


class Provider(ABC):
    """Base class of the providers: configuration, key handling and the I/O shell.

    A subclass names its :attr:`dialect`, which writes the request bodies and
    reads the responses, and adds what is HTTP: the URL (:attr:`in_url`,
    :meth:`_post_model`), the credentials (:meth:`_auth_headers`), its own
    options of the dialect's encoder (:meth:`_encoder_options`) and the error
    bodies (:meth:`_parse_error`, which :meth:`parse_error` wraps so that the
    key is never part of an error).
    """

    dialect: str = ""
    """The wire dialect (``"openai-chat"``, ``"anthropic-messages"``...)."""
    default_name: str = ""
    default_base_url: str = ""
    env_vars: tuple[str, ...] = ()
    """Environment variables read, in order, when no key is given."""
    base_url_env_vars: tuple[str, ...] = ()
    """Environment variables read, in order, when no ``base_url`` is given (the
    official SDKs' own: ``OPENAI_BASE_URL``, ``ANTHROPIC_BASE_URL``...)."""
    requires_key_for_default_url: bool = True
    in_url: tuple[str, ...] = ()
    """The request options the URL carries instead of the body (``"model"``,
    ``"stream"``): :meth:`build_request` does not give them to the encoder."""

    def __init__(
        self,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        name: str | None = None,
        headers: Mapping[str, str] | None = None,
        transport: Transport | None = None,
        timeout: Timeouts | float | None = None,
    ) -> None:
        """Configure the provider.

        Args:
            api_key: the key; when ``None``, read from :attr:`env_vars`.
            base_url: the server's base URL; when ``None``, read from
                :attr:`base_url_env_vars`, else the official one.
            name: how this provider is called in errors and logs.
            headers: extra request headers (never logged).
            transport: the transport used when ``stream``/``complete`` get none.
            timeout: timeouts of the transport created when none is given.

        Raises:
            UsageError: no key was found for the official endpoint.
        """
        key = api_key
        if key is None:
            for var in self.env_vars:
                if os.environ.get(var):
                    key = os.environ[var]
                    break
        self.base_url = (base_url or self._env_base_url() or self.default_base_url).rstrip("/")
        self.name = name or self.default_name
        if not key and self.requires_key_for_default_url and self.base_url == self.default_base_url:
            raise UsageError(
                f"{self.name}: no API key: pass api_key= or set " + " or ".join(self.env_vars)
            )
        self._api_key: _Secret | None = _Secret(key) if key else None
        self._extra_headers = dict(headers or {})
        self._transport = transport
        self._owned_transport: Transport | None = None
        self._timeout = timeout

    def __repr__(self) -> str:
        shown = redact_url(self.base_url)
        return f"{type(self).__name__}(name={self.name!r}, base_url={shown!r})"

    def _env_base_url(self) -> str | None:
        for var in self.base_url_env_vars:
            value = os.environ.get(var, "").strip()
            if value:
                return self._base_url_from_env(var, value)
        return None

    def _base_url_from_env(self, var: str, value: str) -> str:
        """The base URL an environment variable names (subclasses adapt an SDK's form)."""
        return value

    # -- pure translation -------------------------------------------------

    def build_request(
        self,
        *,
        model: str,
        messages: Sequence[Message],
        tools: Sequence[Mapping[str, Any]] = (),
        tool_choice: ToolChoice | None = None,
        stream: bool = True,
        max_tokens: int | None = None,
        temperature: float | None = None,
        extra: Mapping[str, Any] | None = None,
    ) -> HttpRequest:
        """Translate a conversation into this provider's HTTP request.

        The dialect writes the body (:meth:`_encode`, given the provider's
        own options: :meth:`_encoder_options`), ``extra`` is merged into it,
        and the provider addresses it (:meth:`_post_model`).

        Args:
            model: the provider's model id.
            messages: the conversation, oldest first.
            tools: tool schemas already in this dialect's shape
                (``Toolbox.schemas(dialect)``).
            tool_choice: ``"auto"``, ``"required"``, ``"none"`` or
                ``{"name": tool}``; ``None`` leaves the provider's default.
            stream: ask for a streamed response.
            max_tokens: the output token limit.
            temperature: the sampling temperature.
            extra: body fields added last (see :func:`merge_extra`).

        Raises:
            UsageError: a message or option this dialect cannot express.
        """
        options: dict[str, Any] = {
            "model": model,
            "messages": messages,
            "tools": tools,
            "tool_choice": tool_choice,
            "stream": stream,
            "max_tokens": max_tokens,
            "temperature": temperature,
        }
        for name in self.in_url:
            del options[name]
        body = self._encode(**options, **self._encoder_options())
        merge_extra(body, extra)
        return self._post_model(model, body, stream=stream)

    def _encoder_options(self) -> dict[str, Any]:
        """The provider's own keyword arguments to its dialect's encoder
        (``thinking=``, ``store=``...), added to the request's."""
        return {}

    def parse_response(self, body: Any) -> StreamResult:
        """Read a non-streaming response body into the decoder's result type.

        A body that is not the expected shape gives a result whose ``error``
        is a :class:`~toolwire.errors.RemoteProtocolError`; nothing raises.
        So does the error object some servers answer with HTTP 200
        (OpenRouter and other gateways).
        """
        if self.wire.is_error_body(body):
            return StreamResult(
                dialect=self.dialect, choices=(), error=self._parse_error(200, {}, body)
            )
        return decode_response(self.dialect, body)

    @abstractmethod
    def _parse_error(
        self, status_code: int, headers: Mapping[str, str], body: Any
    ) -> ProviderError: ...

    def parse_error(self, status_code: int, headers: Mapping[str, str], body: Any) -> ProviderError:
        """Map an HTTP error response to toolwire's error tree.

        429 gives :class:`~toolwire.errors.RateLimited`, 503/529 (and the
        provider's own "overloaded" type) :class:`~toolwire.errors.Overloaded`,
        anything else :class:`~toolwire.errors.ProviderError`; ``retry_after``
        comes from the headers. The provider's message is kept; the API key is
        scrubbed from it should the server echo it.

        Args:
            status_code: the HTTP status.
            headers: the response headers.
            body: the response body (bytes, text or parsed JSON).
        """
        error = self._parse_error(status_code, headers, decode_error_body(body))
        secrets = self._secrets()
        message, error_body = redact(error.message, secrets), redact(error.body, secrets)
        if message != error.message or error_body != error.body:
            error = type(error)(
                message,
                provider=error.provider,
                status_code=error.status_code,
                retry_after=error.retry_after,
                body=error_body,
                code=error.code,
                error_type=error.error_type,
            )
        return error

    def _secrets(self) -> list[str]:
        """What must never show in an error or a record: the key, and the
        credentials of the base URL (userinfo, query) and of the extra headers."""
        found = url_secrets(self.base_url)
        # Extra headers are never shown (a gateway's tenant token may have any
        # name): every value counts.
        found += redact_headers(self._extra_headers.items())[1]
        found += list(self._extra_headers.values())
        if self._api_key is not None:
            found.append(self._api_key.reveal())
        return found

    def _build_error(
        self,
        status_code: int,
        headers: Mapping[str, str],
        body: Any,
        *,
        message: str | None,
        code: Any = None,
        error_type: Any = None,
        overloaded: bool = False,
        retry_after: float | None = None,
    ) -> ProviderError:
        cls = error_class_for(status_code, overloaded=overloaded)
        if not message:
            message = body if isinstance(body, str) and body.strip() else "no error message"
        delay = retry_after_seconds(headers)
        return cls(
            f"{self.name} returned HTTP {status_code}: {str(message)[:2000]}",
            provider=self.name,
            status_code=status_code,
            retry_after=delay if delay is not None else retry_after,
            body=body,
            code=str(code) if code is not None else None,
            error_type=str(error_type) if error_type is not None else None,
        )

    @property
    def wire(self) -> WireDialect:
        """The provider's dialect: its request bodies, paths and responses."""
        return wire_dialect(self.dialect)

    def _encode(self, **options: Any) -> dict[str, Any]:
        """A request body, written by the dialect's ``encode_request``."""
        encode = self.wire.encode_request
        if encode is None:
            raise UsageError(f"{self.dialect}: toolwire does not write this dialect's requests")
        return encode(**options)

    def _post_model(self, model: str, body: dict[str, Any], *, stream: bool) -> HttpRequest:
        """The POST of one model call, to the dialect's path under the base URL."""
        request_path = self.wire.request_path
        if request_path is None:
            raise UsageError(f"{self.dialect}: toolwire does not write this dialect's requests")
        return self._post(self.base_url + request_path(model, stream), body, stream=stream)

    def _post(self, url: str, body: dict[str, Any], *, stream: bool) -> HttpRequest:
        """The POST request every model call is: this provider's headers, the body."""
        return HttpRequest(
            method="POST",
            url=url,
            headers=self._headers(stream=stream),
            json=body,
            stream=stream,
            dialect=self.dialect,
        )

    def _auth_headers(self) -> dict[str, str]:
        """Credential headers for this provider (empty when keyless)."""
        return {}

    def _headers(self, *, stream: bool) -> dict[str, str]:
        headers = {
            "content-type": "application/json",
            "accept": "text/event-stream" if stream else "application/json",
        }
        headers.update(self._auth_headers())
        headers.update(self._extra_headers)
        return headers

    # -- I/O shell -------------------------------------------------------

    def _transport_for(self, transport: Transport | None) -> Transport:
        if transport is not None:
            return transport
        if self._transport is not None:
            return self._transport
        if self._owned_transport is None:
            from toolwire.http.transport import HttpxTransport

            self._owned_transport = HttpxTransport(timeouts=self._timeout)
        return self._owned_transport

    @property
    def transport(self) -> Transport:
        """The transport this provider sends with: the one it was given, or
        one it creates on first use (and closes in :meth:`aclose`)."""
        return self._transport_for(None)

    def run_transport(
        self, transport: Transport | None
    ) -> contextlib.AbstractAsyncContextManager[Transport | None]:
        """The transport of one agent run, given the agent's own (``None``:
        the provider's): that one, unless the provider opens one per run (a
        WebSocket: ``OpenAIResponses(transport="websocket")``), closed when
        the run ends."""
        return contextlib.nullcontext(transport)

    continuation_attempts: int = 0
    """How many times one cut stream is reopened where it stopped, at most
    (``0``: never; see :meth:`continuation`)."""
    continuation_timeout: float = 30.0
    """Seconds for each reopening to be answered."""

    @property
    def resume_attempts(self) -> int:
        """Older name of :attr:`continuation_attempts` (with a warning)."""
        _compat.renamed_argument("Provider", "resume_attempts")
        return self.continuation_attempts

    @property
    def resume_timeout(self) -> float:
        """Older name of :attr:`continuation_timeout` (with a warning)."""
        _compat.renamed_argument("Provider", "resume_timeout")
        return self.continuation_timeout

    def reader(
        self,
        request: HttpRequest,
        *,
        transport: Transport | None = None,
        watch: Callable[[list[Event]], None] | None = None,
        kept_stream: str | None = None,
        hold: int = 0,
        replay: str | None = None,
    ) -> ProviderStream:
        """``request`` to be sent, read and decoded in this provider's
        dialect (see :class:`~toolwire.providers.ProviderStream`); a
        cut stream is continued where the provider allows it (:meth:`continuation`),
        and the kept stream ``kept_stream`` names is read again instead of
        sending ``request``. ``hold``: bytes of the body decoded together,
        for a reader that wants only the result. ``replay`` is the former
        name of ``kept_stream`` (deprecated)."""
        if replay is not None:
            _compat.renamed_argument("Provider.reader", "replay")
            kept_stream = replay
        return ProviderStream(
            request,
            transport=self._transport_for(transport),
            parse_error=self.parse_error,
            dialect=self.dialect,
            watch=watch,
            continuation=self.continuation(request),
            kept_stream=kept_stream,
            hold=hold,
        )

    def continuation(self, request: HttpRequest) -> Continuation | None:
        """How a cut stream of ``request`` continues where it stopped: a
        ``GET`` on the dialect's ``continuation_path`` (``None`` when the
        dialect has none, :attr:`continuation_attempts` is 0, or the provider does
        not keep this stream: :meth:`_keeps`; the turn is then asked again)."""
        path = self.wire.continuation_path
        if path is None or not request.stream or self.continuation_attempts < 1:
            return None
        if not self._keeps(request):
            return None
        headers = self._headers(stream=True)
        headers.pop("content-type", None)
        return Continuation(
            request=reopening(self.base_url, headers, path, self.dialect),
            attempts=self.continuation_attempts,
            timeout=self.continuation_timeout,
        )

    def resumer(self, request: HttpRequest) -> Continuation | None:
        """The former name of :meth:`continuation` (deprecated; an override
        of it in a subclass still takes effect, with a warning)."""
        method = _compat.below_overrides(self, Provider, "resumer")
        return method(request)  # type: ignore[operator, no-any-return]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        _compat.forward_override(cls, "Provider", "resumer")

    def _keeps(self, request: HttpRequest) -> bool:
        """Whether the provider keeps the stream ``request`` asks for, so that
        it can be read again after a cut (a dialect with a
        ``continuation_path`` says which of its requests are kept)."""
        return False

    def _continuation_options(
        self,
        owner: str,
        attempts: int,
        timeout: float,
        old_attempts: int | None = None,
        old_timeout: float | None = None,
    ) -> None:
        """Set :attr:`continuation_attempts` and :attr:`continuation_timeout`
        (see :func:`~toolwire.providers._continuation.continuation_settings`)."""
        self.continuation_attempts, self.continuation_timeout = continuation_settings(
            self.name, owner, attempts, timeout, old_attempts, old_timeout
        )

    async def stream(
        self, request: HttpRequest, *, transport: Transport | None = None
    ) -> AsyncIterator[Event]:
        """Send a streaming request and yield its decoded events.

        Args:
            request: a request built with ``stream=True``.
            transport: overrides the provider's transport.

        Raises:
            UsageError: the request was built for a non-streaming response.
            TransportError: the network failed (never retried once bytes
                have been yielded).
            ProviderError: the provider answered with an HTTP error.
        """
        if not request.stream:
            raise UsageError("stream() needs a request built with stream=True; use complete()")
        source = self.reader(request, transport=transport)
        async with contextlib.aclosing(source.reads()) as reads:
            async for events in reads:
                for event in events:
                    yield event

    async def complete(
        self, request: HttpRequest, *, transport: Transport | None = None
    ) -> StreamResult:
        """Send a request and return the whole result.

        A streaming request is decoded to its end; a non-streaming one is
        parsed with :meth:`parse_response`.

        Raises:
            TransportError: the network failed.
            ProviderError: the provider answered with an HTTP error.
        """
        if request.stream:
            source = self.reader(request, transport=transport, hold=HOLD)
            async with contextlib.aclosing(source.reads()) as reads:
                async for _ in reads:
                    pass
            return source.decoder.result()
        reply = await self._transport_for(transport).send(request, parse_error=self.parse_error)
        return self.parse_response(reply.json())

    async def aclose(self) -> None:
        """Close the transport this provider created for itself, if any."""
        if self._owned_transport is not None:
            owned, self._owned_transport = self._owned_transport, None
            await owned.aclose()

    async def __aenter__(self) -> Provider:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()
