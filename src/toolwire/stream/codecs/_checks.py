"""What :func:`~toolwire.stream.codecs.register` checks of a dialect.

A :class:`~toolwire.stream.codecs.WireDialect` is a record of thirty-one fields,
most of them optional; some hold only together. A dialect that does not
hold together is refused when it is registered, with a
:class:`~toolwire.errors.RegistrationError` naming the dialect and each
piece at fault, instead of failing later in a stream, a provider or the
emulation server:

* its codec: a class (else nothing reads what its sniff rules tell); it
  says it is of this dialect, streams in known framings, and
  has what its dialect's :class:`~toolwire.stream.codecs.Capabilities`
  declares, and declares what it has (checked against the protocol of each
  capability: :mod:`._codec`); its sniff rules and readers are callable;
* kept streams: a ``continuation_path`` exactly when it declares them; the
  emulation server's ``continuation_routes`` with a ``continuation_target``;
* the emulation server: ``routes``, ``decode_request`` and ``encoder`` together;
* requests: ``encode_request`` with ``tool_schemas`` and ``request_path``;
  ``strict_schema`` with ``tool_schemas``; ``stream_paths`` among ``paths``;
* its provider (:class:`~toolwire.stream.codecs.ProviderInfo`): names, a
  class name, a demo model and a price-data name; ``encode_request`` (a
  provider writes requests) and the emulation server's pieces (``toolwire
  demo`` runs it there); rate-limit header names that hold ``{resource}``;
* the rest of the registry: no name, provider name, request path, route or
  whole framing of another dialect's (a path that ends with another's is
  never told; a provider name is also a name ``url_for`` takes).

This is the one place that looks at a codec's members; everything else
reads the dialect's declaration.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, get_args

from toolwire.errors import RegistrationError
from toolwire.stream.codecs._codec import (
    ArgsEventCodec,
    Codec,
    ContinuedCodec,
    EventStreamArgsCodec,
    WholeCodec,
)
from toolwire.stream.codecs._dialect import WireDialect
from toolwire.stream.framing import FramingKind
from toolwire.types import FinishReason

__all__ = ["check_dialect"]

_FRAMINGS = frozenset(get_args(FramingKind))
_FINISH_REASONS = frozenset(get_args(FinishReason))
_SHORT_PATH_FRAMINGS = frozenset({"sse", "eventstream"})


def check_dialect(dialect: WireDialect, registry: Mapping[str, WireDialect]) -> None:
    """Refuse ``dialect`` unless it holds together and fits ``registry``.

    Raises:
        RegistrationError: naming the dialect and every piece at fault.
    """
    problems = list(_problems(dialect, registry))
    if problems:
        raise RegistrationError(
            f"dialect {dialect.name!r} cannot be registered: " + "; ".join(problems)
        )


def _problems(dialect: WireDialect, registry: Mapping[str, WireDialect]) -> Iterator[str]:
    if not isinstance(dialect.name, str) or not dialect.name:
        yield "it has no name"
    if dialect.name in registry:
        yield "a dialect of that name is already registered"
    yield from _codec_problems(dialect)
    yield from _kept_stream_problems(dialect)
    yield from _field_problems(dialect)
    yield from _provider_problems(dialect)
    for other in registry.values():
        if other.name != dialect.name:
            yield from _clashes(dialect, other)


def _members(protocol: type) -> tuple[str, ...]:
    """The members a capability's protocol adds to the ones it extends."""
    own = [n for n in vars(protocol) if not n.startswith("_")]
    return tuple(dict.fromkeys([*vars(protocol).get("__annotations__", {}), *own]))


def _codec_problems(dialect: WireDialect) -> Iterator[str]:
    codec_class: object = dialect.codec  # typed a class; given anything
    if not isinstance(codec_class, type):
        yield f"its codec {codec_class!r} is not a codec class: nothing would read its streams"
        return
    try:
        codec: Any = dialect.codec()
    except Exception as exc:  # any failure is the dialect's fault: reported
        yield f"its codec {dialect.codec.__name__} cannot be made ({type(exc).__name__}: {exc})"
        return
    name = type(codec).__name__
    missing = [m for m in _members(Codec) if not hasattr(codec, m)]
    if missing:
        yield f"its codec {name} has no {', '.join(missing)}"
        return
    if codec.dialect != dialect.name:
        yield f"its codec {name} says it reads {codec.dialect!r}"
    framings = codec.framings
    if not framings or not framings <= _FRAMINGS:
        yield f"its codec {name} streams in {sorted(framings)}, not in known framings"
    if dialect.whole_framing is not None and dialect.whole_framing not in framings:
        yield f"its whole_framing {dialect.whole_framing!r} is not one its codec streams in"
    caps = dialect.capabilities
    yield from _capability(codec, "whole_responses", caps.whole_responses, WholeCodec)
    yield from _capability(codec, "args_events", caps.args_events, ArgsEventCodec)
    if caps.args_events and len(framings) == 1 and framings <= _SHORT_PATH_FRAMINGS:
        if "eventstream" in framings:
            yield from _capability(codec, "args_events", True, EventStreamArgsCodec)
    elif caps.args_events:
        yield (
            "it declares args_events, read only where its codec streams in one framing, "
            f"SSE or AWS event streams, but it streams in {sorted(framings)}"
        )
    yield from _capability(codec, "kept_streams", caps.kept_streams, ContinuedCodec)


def _capability(codec: Any, flag: str, declared: bool, protocol: type) -> Iterator[str]:
    members = _members(protocol)
    has = [m for m in members if hasattr(codec, m)]
    name = type(codec).__name__
    if declared and len(has) < len(members):
        lacks = ", ".join(m for m in members if m not in has)
        yield f"it declares {flag} but its codec {name} has no {lacks} ({protocol.__name__})"
    elif not declared and has:
        yield (
            f"its codec {name} has {', '.join(has)} ({protocol.__name__}) but the dialect "
            f"does not declare it: capabilities=Capabilities({flag}=True)"
        )


def _kept_stream_problems(dialect: WireDialect) -> Iterator[str]:
    kept = dialect.capabilities.kept_streams
    if kept and dialect.continuation_path is None:
        yield "it declares kept_streams but has no continuation_path"
    if not kept and dialect.continuation_path is not None:
        yield "it has a continuation_path but does not declare kept_streams"
    if bool(dialect.continuation_routes) != (dialect.continuation_target is not None):
        yield "it has one of continuation_routes and continuation_target without the other"
    if dialect.continuation_routes and not dialect.routes:
        yield "it has continuation_routes but no routes"


_CALLABLES = (
    "usage",
    "sniff_name",
    "sniff_text",
    "sniff_shape",
    "route_target",
    "continuation_target",
    "continuation_path",
    "request_path",
    "is_error_body",
    "encode_request",
    "tool_schemas",
    "strict_schema",
    "decode_request",
    "silent_output",
)


def _field_problems(dialect: WireDialect) -> Iterator[str]:
    for name in _CALLABLES:
        value = getattr(dialect, name)
        if value is not None and not callable(value):
            yield f"its {name} is not callable"
    unknown = sorted(set(dialect.finish_reasons.values()) - _FINISH_REASONS)
    if unknown:
        yield f"its finish_reasons map to {unknown}, not toolwire finish reasons"
    serves = {
        "routes": bool(dialect.routes),
        "decode_request": dialect.decode_request is not None,
        "encoder": dialect.encoder is not None,
    }
    if any(serves.values()) and not all(serves.values()):
        has = ", ".join(k for k, v in serves.items() if v)
        lacks = ", ".join(k for k, v in serves.items() if not v)
        yield f"it has {has} for the emulation server but no {lacks}"
    if dialect.encode_request is not None:
        needed = [
            k
            for k, v in (
                ("tool_schemas", dialect.tool_schemas),
                ("request_path", dialect.request_path),
            )
            if v is None
        ]
        if needed:
            yield f"it has encode_request but no {', '.join(needed)}"
    if dialect.strict_schema is not None and dialect.tool_schemas is None:
        yield "it has strict_schema but no tool_schemas"
    stray = [p for p in dialect.stream_paths if p not in dialect.paths]
    if stray:
        yield f"its stream_paths {stray} are not among its paths"
    if dialect.sdk_shape is not None and dialect.sdk_shape.dialect != dialect.name:
        yield f"its sdk_shape is of {dialect.sdk_shape.dialect!r}"


def _provider_problems(dialect: WireDialect) -> Iterator[str]:
    provider = dialect.provider
    if provider is None:
        return
    if not provider.names or not all(isinstance(n, str) and n for n in provider.names):
        yield f"its provider's names {provider.names!r} are not names"
    if not (isinstance(provider.class_name, str) and provider.class_name.isidentifier()):
        yield f"its provider's class_name {provider.class_name!r} is not a class name"
    for field in ("demo_model", "price_provider"):
        if not (isinstance(getattr(provider, field), str) and getattr(provider, field)):
            yield f"its provider has no {field}"
    if dialect.encode_request is None:
        yield "it has a provider but no encode_request (a provider writes requests)"
    if dialect.encoder is None or not dialect.routes:
        yield (
            "it has a provider but the emulation server cannot serve it (no routes, "
            "decode_request and encoder): toolwire demo runs its provider there"
        )
    headers = provider.rate_limit_headers
    if headers is not None:
        for field in ("limit", "remaining", "reset"):
            name = getattr(headers, field)
            if not isinstance(name, str) or "{resource}" not in name:
                yield f"its rate-limit {field} header {name!r} does not hold {{resource}}"
        if headers.reset_format not in ("duration", "time"):
            yield f"its rate-limit reset_format {headers.reset_format!r} is not duration or time"


def _names(dialect: WireDialect) -> set[str]:
    """The names ``url_for`` and the layers above know ``dialect`` by."""
    return {dialect.name, *(dialect.provider.names if dialect.provider else ())}


def _clashes(dialect: WireDialect, other: WireDialect) -> Iterator[str]:
    for name in sorted(_names(dialect) & _names(other) - {other.name} - {dialect.name}):
        yield f"its provider name {name!r} is one of {other.name!r}'s provider's"
    if dialect.name in _names(other) and dialect.name != other.name:
        yield f"its name {dialect.name!r} is the name of {other.name!r}'s provider"
    if other.name in _names(dialect) and dialect.name != other.name:
        yield f"its provider name {other.name!r} is another dialect's name"
    for path in dialect.paths:
        for taken in other.paths:
            if path.endswith(taken) or taken.endswith(path):
                yield f"its path {path!r} is told as {other.name!r} (whose path is {taken!r})"
    for route in sorted(set(dialect.routes) & set(other.routes)):
        yield f"its route {route!r} is {other.name!r}'s"
    if dialect.whole_framing is not None and dialect.whole_framing == other.whole_framing:
        yield f"its whole_framing {dialect.whole_framing!r} tells {other.name!r}"
