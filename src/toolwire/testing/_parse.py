"""Reading a request of any dialect the emulation server speaks.

The readers are the dialects' own (``decode_request`` of each
:class:`~toolwire.stream.codecs.WireDialect`); this module turns the body's
bytes into JSON first, so that every shape error becomes a
:class:`BadRequest` with a readable message, answered with HTTP 400.
"""

from __future__ import annotations

import dataclasses

from toolwire.stream import jsonio
from toolwire.stream.codecs import registered
from toolwire.stream.codecs.emulation import BadRequest, ParsedRequest, ToolResult, media_counts
from toolwire.stream.codecs.structured import tool_names

__all__ = ["BadRequest", "ParsedRequest", "ToolResult", "parse_request"]


def parse_request(
    dialect: str, body: bytes, *, model: str | None = None, stream: bool | None = None
) -> ParsedRequest:
    """Parse a request body of ``dialect``.

    Args:
        dialect: a dialect the emulation server speaks.
        body: the raw request body.
        model: the model when the dialect puts it in the URL.
        stream: whether the endpoint streams, when the URL says so.

    Raises:
        BadRequest: the body is not JSON or not in the dialect's shape.
    """
    try:
        data = jsonio.loads(body)
    except ValueError as exc:  # not JSON, or past a limit (nesting, 1e400)
        raise BadRequest(f"request body is not valid JSON: {exc}") from exc
    if not isinstance(data, dict):
        raise BadRequest("request body must be a JSON object")
    for d in registered():
        if d.name == dialect and d.decode_request is not None:
            parsed = d.decode_request(data, model, stream)
            native = d.structured_output
            return dataclasses.replace(
                parsed,
                output_native=native is not None and native.asked(data),
                tool_names=tuple(tool_names(data)),
                media=media_counts(data),
            )
    raise BadRequest(f"unknown dialect {dialect!r}")
