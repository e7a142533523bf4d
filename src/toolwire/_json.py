"""JSON in and out.

``loads`` is exact: integers of any size stay integers. It is the standard
library's C parser, used for everything whose numbers reach users (tool
arguments, whole-call payloads, non-streaming responses).

``loads_fast`` is orjson when installed: several times faster, but it turns
integers beyond 64 bits into floats. It is used only on the per-chunk hot
path for envelopes whose arguments travel as *strings* (OpenAI chat and
Anthropic argument deltas), where no user-visible number is lost; codecs
fall back to ``loads`` when a chunk carries arguments as an object.

Both raise ``ValueError`` (``json.JSONDecodeError``) on bad input.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

__all__ = ["JSONDecodeError", "dumps", "dumps_bytes", "loads", "loads_fast"]

JSONDecodeError = json.JSONDecodeError

loads: Callable[[str | bytes], Any] = json.loads
"""Parse JSON text exactly."""


def _std_dumps_bytes(value: Any) -> bytes:
    try:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()
    except UnicodeEncodeError:
        # A lone surrogate (from a "\ud800" escape a model sent) has no UTF-8
        # form; as a JSON escape it is valid JSON and reads back the same.
        return json.dumps(value, ensure_ascii=True, separators=(",", ":")).encode()


def _load_backend() -> tuple[Callable[[str | bytes], Any], Callable[[Any], bytes]]:
    try:
        import orjson
    except ImportError:  # pragma: no cover - exercised only without orjson
        return json.loads, _std_dumps_bytes

    orjson_loads = orjson.loads
    orjson_dumps = orjson.dumps
    orjson_error = orjson.JSONDecodeError

    def fast_loads(data: str | bytes) -> Any:
        try:
            return orjson_loads(data)
        except orjson_error:
            # orjson is stricter than the standard library on a few inputs
            # (escaped lone surrogates); let json decide, with its message.
            return json.loads(data)

    def fast_dumps(value: Any) -> bytes:
        try:
            return orjson_dumps(value)
        except TypeError:  # integers beyond 64 bits and other values orjson refuses
            return _std_dumps_bytes(value)

    return fast_loads, fast_dumps


loads_fast, dumps_bytes = _load_backend()
"""``loads_fast(data)`` parses chunk envelopes quickly (see the module doc);
``dumps_bytes(value)`` gives compact UTF-8 JSON."""


def dumps(value: Any) -> str:
    """Compact JSON text, non-ASCII kept as is."""
    return dumps_bytes(value).decode()
