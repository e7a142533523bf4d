"""One line per exchange: ``toolwire inspect``, live.

Theory of operation: the dialect is told from the request's path (the paths
the providers' APIs use); the response body is read as it passes by the same
:class:`~toolwire.stream.decoder.StreamDecoder` the agent uses, so the line shows
what toolwire itself would make of the stream: the model, the complete calls
and the text, an error event or a cut, and the quirks the codec noticed. A
whole (non-streamed) JSON answer is read by the codec's reader of whole
responses (:func:`~toolwire.stream.decoder.decode_response`). At most
:data:`READ_LIMIT` bytes of a body are read for the line, whatever its size.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from toolwire.http import decode_error_body
from toolwire.stream.codecs import dialect_for_path, registered
from toolwire.stream.decoder import StreamDecoder, decode_response
from toolwire.stream.framing.eventstream import MEDIA_TYPE as EVENT_STREAM
from toolwire.testing.cassette import Exchange
from toolwire.types import StreamResult

__all__ = [
    "READ_LIMIT",
    "BodyReader",
    "Reading",
    "dialect_for",
    "exchange_line",
    "is_streamed",
    "summarize",
]

READ_LIMIT = 16 * 1024 * 1024
"""Bytes of a response body read for its summary line; the rest only passes."""

_WHOLE = frozenset(d.name for d in registered() if d.capabilities.whole_responses)
"""The dialects :func:`~toolwire.stream.decoder.decode_response` reads whole."""


def dialect_for(path: str) -> str | None:
    """The wire dialect of a request path, or ``None`` for other endpoints."""
    dialect = dialect_for_path(path)
    return dialect.name if dialect is not None else None


def _is_stream(dialect: str | None, path: str, content_type: str) -> bool:
    media = content_type.split(";")[0].strip().lower()
    if media in ("text/event-stream", "application/x-ndjson", "application/ndjson", EVENT_STREAM):
        return True
    for d in registered():
        if d.stream_paths and (
            (d.name == dialect and set(d.paths) <= set(d.stream_paths))  # always a stream
            or path.rstrip("/").endswith(d.stream_paths)
        ):
            return True
    return False


@dataclass(frozen=True, slots=True)
class Reading:
    """What a response body said."""

    model: str | None = None
    calls: tuple[tuple[str, str], ...] = ()
    """``(name, arguments as JSON)`` of each complete call."""
    text: str = ""
    error: str | None = None
    quirks: tuple[str, ...] = ()
    note: str | None = None
    """Why the body was not read (compressed, too large, an unknown dialect)."""


class BodyReader:
    """Reads a response body as it passes, within :data:`READ_LIMIT` bytes.

    Args:
        dialect: the dialect (``None``: told from a stream's bytes, if it is one).
        path: the request path.
        status: the response status.
        content_type: the response's ``content-type``.
        content_encoding: the response's ``content-encoding``, if any.
    """

    def __init__(
        self,
        dialect: str | None,
        *,
        path: str,
        status: int,
        content_type: str,
        content_encoding: str | None = None,
        limit: int = READ_LIMIT,
    ) -> None:
        self.dialect = dialect
        self.status = status
        self.streamed = status < 300 and _is_stream(dialect, path, content_type)
        self._limit = limit
        self._seen = 0
        self._note: str | None = None
        if content_encoding and content_encoding.lower() != "identity":
            self._note = f"{content_encoding}-encoded body, not read"
        self._decoder = (
            StreamDecoder(dialect or "auto") if self.streamed and not self._note else None
        )
        self._whole = bytearray()

    def feed(self, chunk: bytes) -> None:
        """The next piece of the body."""
        if self._note is not None:
            return
        room = self._limit - self._seen
        self._seen += len(chunk)
        if room <= 0:
            self._note = f"read the first {self._limit // (1024 * 1024)} MiB only"
            return
        piece = chunk[:room]
        if self._decoder is not None:
            self._decoder.feed(piece)
        else:
            self._whole += piece

    def finish(self) -> Reading:
        """What the body said."""
        if self._decoder is not None:
            self._decoder.close()
            return _reading(self._decoder.result(), self._decoder.quirks, self._note)
        if self._note is not None and not self._whole:
            return Reading(note=self._note)
        body = decode_error_body(bytes(self._whole))
        if self.status >= 300:
            return Reading(error=f"HTTP {self.status}: {_error_text(body)}", note=self._note)
        if self.dialect not in _WHOLE or not isinstance(body, (dict, list)):
            return Reading(note=self._note or "not a body toolwire reads whole")
        return _reading(decode_response(self.dialect, body), (), self._note)


def _reading(result: StreamResult, quirks: tuple[str, ...], note: str | None) -> Reading:
    calls = tuple(
        (call.name, json.dumps(call.arguments, ensure_ascii=False)) for call in result.tool_calls
    )
    if result.choices:
        calls += tuple(
            (f"{bad.name} (invalid)", bad.raw_arguments)
            for bad in result.choices[0].invalid_tool_calls
        )
    error = None
    if result.error is not None:
        error = f"{result.error.type_name}: {result.error.message}"
    return Reading(
        model=result.model, calls=calls, text=result.text, error=error, quirks=quirks, note=note
    )


def _error_text(body: Any) -> str:
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict):
            inner = inner.get("message", inner)
        if isinstance(inner, str):
            return inner
        body = inner
    return body if isinstance(body, str) else json.dumps(body, ensure_ascii=False)


def _short(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _size(n: int) -> str:
    if n < 1024:
        return f"{n} B"
    if n < 1024 * 1024:
        return f"{n / 1024:.1f} KB"
    return f"{n / (1024 * 1024):.1f} MB"


def exchange_line(
    number: int,
    method: str,
    path: str,
    status: int | None,
    reading: Reading,
    *,
    dialect: str | None,
    streamed: bool,
    ttfb_ms: float | None,
    duration_ms: float,
    size: int,
    error: str | None = None,
) -> str:
    """The one line that sums an exchange up (never the query: keys travel there)."""
    head = [f"#{number}", method, path, str(status) if status is not None else "---"]
    if dialect is not None:
        head.append(dialect)
    if reading.model:
        head.append(reading.model)
    head.append("stream" if streamed else "whole")
    parts = [" ".join(head)]
    timing = f"{duration_ms:.0f} ms, {_size(size)}"
    if ttfb_ms is not None:
        timing = f"first byte {ttfb_ms:.0f} ms, " + timing
    parts.append(timing)
    if reading.calls:
        shown = ", ".join(f"{name}({_short(args, 80)})" for name, args in reading.calls)
        parts.append(f"calls {shown}")
    if reading.text:
        parts.append("text " + _short(json.dumps(reading.text, ensure_ascii=False), 100))
    for problem in (error, reading.error):
        if problem:
            parts.append(_short(problem, 200))
    if reading.quirks:
        parts.append("quirks: " + "; ".join(reading.quirks))
    if reading.note:
        parts.append(reading.note)
    return " | ".join(parts)


def is_streamed(exchange: Exchange) -> bool:
    """True when the recorded response body is a stream toolwire decodes."""
    response = exchange.response
    content_type = response.header("content-type") or ""
    return response.status < 300 and _is_stream(
        exchange.dialect, exchange.request.path, content_type
    )


def summarize(exchange: Exchange) -> str:
    """The summary line of a recorded exchange, read from its body file."""
    response = exchange.response
    reader = BodyReader(
        exchange.dialect,
        path=exchange.request.path,
        status=response.status,
        content_type=response.header("content-type") or "",
        content_encoding=response.header("content-encoding"),
    )
    size = 0
    for chunk, _ in response.iter_chunks():
        reader.feed(chunk)
        size += len(chunk)
    return exchange_line(
        exchange.number,
        exchange.request.method,
        exchange.request.path,
        response.status,
        reader.finish(),
        dialect=exchange.dialect,
        streamed=reader.streamed,
        ttfb_ms=exchange.ttfb_ms,
        duration_ms=exchange.duration_ms,
        size=size,
        error=response.error,
    )
