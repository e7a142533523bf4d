"""Model fallback as a provider: the next provider of a chain when one fails.

Theory of operation: :class:`Fallback` is a :class:`~toolwire.providers.Provider`
made of others, each with the model it is asked for. Its requests are its
primary's (:meth:`Fallback.build_request`), and keep what they were built
from: should the primary fail in a way the chain falls back on (``on=``:
by default an overloaded provider, a 5xx, a 429 the transport's retries did
not get past, a timeout, a refused connection, a refusal the provider
reports as an error), the same conversation is built again for the next
provider, its tools reshaped for its dialect
(:func:`~toolwire.stream.codecs.tool_specs.read_tools`), and sent. Nothing
is ever asked again of another provider once an event of the answer was
handed on: from then on an error is the stream's own, as it would be
without a chain. Each provider tried is told in :attr:`ProviderStream.tried
<toolwire.providers.ProviderStream.tried>` (:class:`ProviderAttempt`), which
the agent gives its observers (the journal records a ``model_attempt`` for
each).
"""

from __future__ import annotations

import contextlib
import dataclasses
import time
from collections.abc import AsyncGenerator, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from toolwire import _compat
from toolwire.errors import (
    ConnectError,
    Overloaded,
    ProviderError,
    RateLimited,
    ReadError,
    StreamErrorEvent,
    ToolwireError,
    TransportTimeout,
    UsageError,
)
from toolwire.events import Event, StreamFailed
from toolwire.http import HttpRequest, Transport
from toolwire.messages import Message
from toolwire.providers._base import Provider, ToolChoice
from toolwire.providers._reads import ProviderAttempt, ProviderStream
from toolwire.stream.codecs.tool_specs import read_tools

__all__ = ["ChainRequest", "Fallback", "FallbackStream", "ProviderAttempt", "falls_back"]

_REFUSALS = frozenset({"refusal", "content_filter", "content_policy_violation"})
"""Error codes and types with which providers report a refusal."""


def falls_back(error: ToolwireError) -> bool:
    """Whether a chain goes on to its next provider after ``error`` (the default ``on``):
    overloaded, rate limited past the transport's retries, a 5xx or 408, an
    error event before the answer, a connection refused or cut, a timeout, or
    a refusal the provider reports (``refusal``, ``content_filter``)."""
    if isinstance(error, (Overloaded, RateLimited, StreamErrorEvent)):
        return True
    if isinstance(error, (ConnectError, ReadError, TransportTimeout)):
        return True
    if isinstance(error, ProviderError):
        status = error.status_code
        if status is not None and (status >= 500 or status == 408):
            return True
        return bool({error.code, error.error_type} & _REFUSALS)
    return False


@dataclass(frozen=True, slots=True)
class _Link:
    provider: Provider
    model: str | None
    """The model asked of it (``None``: the request's)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ChainRequest(HttpRequest):
    """The primary's request, with what it was built from (for the next providers)."""

    options: Mapping[str, Any] = field(default_factory=dict[str, Any])


class Fallback(Provider):
    """A provider trying each of ``providers`` in turn, on the errors ``on`` names.

    Args:
        providers: the chain, primary first: each a provider, or a
            ``(provider, model)`` pair to ask it for its own model.
        on: the errors the chain goes on after: a predicate, or error
            classes (default :func:`falls_back`).
        name: how the chain is called in errors and logs.

    Raises:
        UsageError: fewer than one provider, or a chain inside a chain.
    """

    def __init__(
        self,
        providers: Sequence[Provider | tuple[Provider, str]],
        *,
        on: Callable[[ToolwireError], bool] | tuple[type[ToolwireError], ...] | None = None,
        name: str | None = None,
    ) -> None:
        links = [_Link(*p) if isinstance(p, tuple) else _Link(p, None) for p in providers]
        if not links:
            raise UsageError("Fallback needs at least one provider")
        if any(isinstance(link.provider, Fallback) for link in links):
            raise UsageError("a Fallback chain cannot hold another chain: list its providers")
        self.links: tuple[_Link, ...] = tuple(links)
        primary = links[0].provider
        self.dialect = primary.dialect
        self.base_url = primary.base_url
        self.name = name or "fallback(" + ", ".join(link.provider.name for link in links) + ")"
        self._api_key = None
        self._extra_headers = {}
        self._transport = None
        self._owned_transport = None
        self._timeout = None
        if on is None:
            self._falls_back: Callable[[ToolwireError], bool] = falls_back
        elif isinstance(on, tuple):
            kinds = on
            self._falls_back = lambda error: isinstance(error, kinds)
        else:
            self._falls_back = on

    def __repr__(self) -> str:
        return f"Fallback({[link.provider for link in self.links]!r})"

    @property
    def providers(self) -> tuple[Provider, ...]:
        """The chain's providers, primary first."""
        return tuple(link.provider for link in self.links)

    def falls_back(self, error: ToolwireError) -> bool:
        """Whether the chain goes on to its next provider after ``error``."""
        return self._falls_back(error)

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
        """The primary's request (``tools`` in its dialect), keeping what it
        was built from for the next providers (:class:`ChainRequest`)."""
        options: dict[str, Any] = {
            "model": model,
            "messages": tuple(messages),
            "tools": tuple(tools),
            "tool_choice": tool_choice,
            "stream": stream,
            "max_tokens": max_tokens,
            "temperature": temperature,
            "extra": extra,
        }
        request = self.request_for(0, options)
        fields = {f.name: getattr(request, f.name) for f in dataclasses.fields(HttpRequest)}
        return ChainRequest(**fields, options=options)

    def request_for(self, position: int, options: Mapping[str, Any]) -> HttpRequest:
        """The request of the chain's provider ``position`` for ``options``
        (:meth:`build_request`'s, ``tools`` in the primary's dialect):
        ``tools`` reshaped for its dialect, ``extra`` (fields of the primary's
        dialect) left out of another dialect's request.

        Raises:
            UsageError: the provider's dialect cannot express the request.
        """
        link = self.links[position]
        provider = link.provider
        tools, extra = list(options["tools"]), options["extra"]
        if provider.dialect != self.dialect:
            plain, _ = read_tools(tools)
            shape = provider.wire.tool_schemas
            if plain and shape is None:
                raise UsageError(f"{provider.dialect}: toolwire writes no tools in it")
            tools = shape(plain, None) if plain and shape is not None else []
            extra = None
        return provider.build_request(
            model=link.model or options["model"],
            messages=options["messages"],
            tools=tools,
            tool_choice=options["tool_choice"],
            stream=options["stream"],
            max_tokens=options["max_tokens"],
            temperature=options["temperature"],
            extra=extra,
        )

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
        """The chain's stream of ``request`` (see :class:`FallbackStream`);
        ``replay`` is the former name of ``kept_stream`` (deprecated).

        Raises:
            UsageError: ``request`` was not built by :meth:`build_request`.
        """
        if replay is not None:
            _compat.renamed_argument("Fallback.reader", "replay")
            kept_stream = replay
        if not isinstance(request, ChainRequest):
            raise UsageError("a Fallback reads the requests its own build_request() made")
        return FallbackStream(
            self, request, transport=transport, watch=watch, kept_stream=kept_stream, hold=hold
        )

    def _parse_error(
        self, status_code: int, headers: Mapping[str, str], body: Any
    ) -> ProviderError:
        return self.links[0].provider.parse_error(status_code, headers, body)

    def _secrets(self) -> list[str]:
        return [secret for link in self.links for secret in link.provider._secrets()]

    async def aclose(self) -> None:
        """Close the transports the chain's providers created for themselves."""
        for link in self.links:
            await link.provider.aclose()


class FallbackStream(ProviderStream):
    """A :class:`~toolwire.providers.ProviderStream` over a chain: each
    provider in turn until one answers, none after an event was handed on.

    :attr:`decoder` and :attr:`reading` are those of the provider being read;
    :attr:`tried` tells each provider tried.
    """

    __slots__ = ("_chain", "_current", "_given", "_options")

    def __init__(
        self,
        chain: Fallback,
        request: ChainRequest,
        *,
        transport: Transport | None,
        watch: Callable[[list[Event]], None] | None,
        kept_stream: str | None,
        hold: int,
    ) -> None:
        first = chain.links[0].provider.reader(
            request, transport=transport, watch=watch, kept_stream=kept_stream, hold=hold
        )
        super().__init__(
            request,
            transport=first._transport,
            parse_error=first._parse_error,
            dialect=chain.dialect,
        )
        self.decoder = first.decoder
        self.resumable = first.resumable
        self._chain = chain
        self._current = first
        self._options = request.options
        self._given = (transport, watch, hold)

    @property
    def resumable_id(self) -> str | None:
        """The id under which the provider being read keeps this stream."""
        return self._current.resumable_id

    def _next(self, position: int) -> ProviderStream:
        transport, watch, hold = self._given
        provider = self._chain.links[position].provider
        request = self._chain.request_for(position, self._options)
        return provider.reader(request, transport=transport, watch=watch, hold=hold)

    def _tell(self, position: int, error: ToolwireError | None, started: float) -> None:
        link = self._chain.links[position]
        self.tried.append(
            ProviderAttempt(
                position=position,
                provider=link.provider.name,
                dialect=link.provider.dialect,
                model=link.model or str(self._options["model"]),
                error=error,
                elapsed=time.monotonic() - started,
            )
        )

    async def reads(self) -> AsyncGenerator[list[Event], None]:
        """The events of the first provider of the chain that answers.

        Raises:
            ToolwireError: as :meth:`ProviderStream.reads`, from the last
                provider tried (or from one that failed after an event was
                handed on, or in a way the chain does not fall back on).
        """
        chain = self._chain
        count = len(chain.links)
        for position in range(count):
            last = position == count - 1
            stream = self._current if position == 0 else self._next(position)
            self._current, self.decoder, self.resumable = stream, stream.decoder, stream.resumable
            started, handed = time.monotonic(), False
            try:
                async with contextlib.aclosing(stream.reads()) as reads:
                    async for events in reads:
                        self.reading = stream.reading
                        failure = _only_failure(events)
                        if not handed and not last and failure and chain.falls_back(failure):
                            break
                        handed = True
                        yield events
            except ToolwireError as raised:
                self.reading = stream.reading
                self._tell(position, raised, started)
                if handed or last or not chain.falls_back(raised):
                    raise
                continue
            self.reading = False
            failed = stream.decoder.error
            self._tell(position, failed, started)
            if handed or last or failed is None or not chain.falls_back(failed):
                return


def _only_failure(events: list[Event]) -> ToolwireError | None:
    """The error of a read that says nothing but that the stream failed."""
    if len(events) == 1 and isinstance(events[0], StreamFailed):
        return events[0].error
    return None
