"""The framing readers under their first name (``toolwire.sse``).

They live in :mod:`toolwire.framing` now, one module per framing; this
module keeps the old import path working for code that uses it.
"""

from __future__ import annotations

from toolwire.framing import (
    DEFAULT_MAX_FRAME_BYTES,
    JSONArrayDecoder,
    NDJSONDecoder,
    ServerSentEvent,
    SSEDecoder,
)

__all__ = [
    "DEFAULT_MAX_FRAME_BYTES",
    "JSONArrayDecoder",
    "NDJSONDecoder",
    "SSEDecoder",
    "ServerSentEvent",
]
