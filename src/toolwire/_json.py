"""Fast JSON in and out: orjson when it is installed, the standard library otherwise.

``loads`` accepts ``str`` or ``bytes`` and raises :class:`JSONDecodeError`
(a ``ValueError``) on bad input, whichever backend is in use.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["JSONDecodeError", "dumps", "dumps_bytes", "loads"]

JSONDecodeError = json.JSONDecodeError

try:
    import orjson as _orjson
except ImportError:  # pragma: no cover - exercised only without orjson
    _orjson = None  # type: ignore[assignment]


if _orjson is not None:
    _orjson_loads = _orjson.loads
    _orjson_dumps = _orjson.dumps
    _OrjsonError = _orjson.JSONDecodeError

    def loads(data: str | bytes) -> Any:
        """Parse JSON text; raise ``JSONDecodeError`` on bad input."""
        try:
            return _orjson_loads(data)
        except _OrjsonError:
            # orjson is stricter on a few inputs the standard library accepts
            # (lone surrogates written as escapes); let json decide, with its
            # precise error message and position.
            return json.loads(data)

    def dumps_bytes(value: Any) -> bytes:
        """Compact JSON, UTF-8, non-ASCII kept as is."""
        try:
            return _orjson_dumps(value)
        except TypeError:
            return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()

else:  # pragma: no cover

    def loads(data: str | bytes) -> Any:
        """Parse JSON text; raise ``JSONDecodeError`` on bad input."""
        return json.loads(data)

    def dumps_bytes(value: Any) -> bytes:
        """Compact JSON, UTF-8, non-ASCII kept as is."""
        return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()


def dumps(value: Any) -> str:
    """Compact JSON text, non-ASCII kept as is."""
    return dumps_bytes(value).decode()
