"""Fast JSON in and out: orjson when it is installed, the standard library otherwise.

``loads`` accepts ``str`` or ``bytes`` and raises :class:`JSONDecodeError`
(a ``ValueError``) on bad input, whichever backend is in use.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

__all__ = ["JSONDecodeError", "dumps", "dumps_bytes", "loads"]

JSONDecodeError = json.JSONDecodeError


def _std_dumps_bytes(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()


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
        except TypeError:  # big ints and other values orjson refuses
            return _std_dumps_bytes(value)

    return fast_loads, fast_dumps


loads, dumps_bytes = _load_backend()
"""``loads(data)`` parses JSON text; ``dumps_bytes(value)`` gives compact UTF-8 JSON."""


def dumps(value: Any) -> str:
    """Compact JSON text, non-ASCII kept as is."""
    return dumps_bytes(value).decode()
