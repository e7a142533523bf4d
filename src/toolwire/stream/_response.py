"""Whole (non-streamed) responses, read by the same codecs and accumulator as streams."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from toolwire.errors import RemoteProtocolError, ToolwireError, UsageError
from toolwire.events import Event
from toolwire.stream.accumulate import Accumulator
from toolwire.stream.codecs import as_whole, wire_dialect
from toolwire.stream.jsonio import dumps
from toolwire.types import StreamResult

__all__ = ["decode_response"]


def decode_response(
    dialect: str, body: Any, *, id_factory: Callable[[], str] | None = None
) -> StreamResult:
    """Read a whole (non-streamed) response body of a dialect.

    The dialect's codec turns the body into the parts its stream would have
    given, and the same accumulator reads them: a response and the stream of
    the same response give the same text, calls, finish reason and usage.
    A body that is not the dialect's shape gives a result whose ``error`` is
    a :class:`~toolwire.errors.RemoteProtocolError`; nothing raises.

    Args:
        dialect: ``openai-chat``, ``openai-responses``, ``anthropic-messages`` or
            ``gemini``.
        body: the parsed JSON body.
        id_factory: makes call ids where the provider sends none.
    """
    registration = wire_dialect(dialect)
    codec = as_whole(registration, registration.codec())
    if codec is None:
        raise UsageError(f"{dialect}: no reader for whole responses")
    try:
        if not isinstance(body, dict):
            raise RemoteProtocolError(f"expected a JSON object, got {type(body).__name__}")
        parts = codec.decode_response(body)
    except (ToolwireError, KeyError, IndexError, TypeError, AttributeError, ValueError) as exc:
        return StreamResult(
            dialect=dialect, choices=(), error=_malformed(dialect, exc, body), complete=False
        )
    acc = Accumulator(id_factory=id_factory)
    acc.state_dialect = codec.dialect
    out: list[Event] = []
    acc.apply(parts, out)
    acc.close(out)
    return acc.result(dialect)


def _malformed(dialect: str, exc: Exception, body: Any) -> RemoteProtocolError:
    message = exc.message if isinstance(exc, ToolwireError) else f"{type(exc).__name__}: {exc}"
    try:
        raw = dumps(body)[:500]
    except (TypeError, ValueError):
        raw = None
    return RemoteProtocolError(f"malformed {dialect} response: {message}", raw=raw)
