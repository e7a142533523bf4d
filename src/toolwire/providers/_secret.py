"""A credential that never shows itself (the providers' API keys)."""

from __future__ import annotations

from typing import Any

__all__ = ["_Secret"]


class _Secret:
    """A credential that never shows itself in ``repr``, ``str`` or f-strings."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def reveal(self) -> str:
        return self._value

    def __repr__(self) -> str:
        return "_Secret('<redacted>')"

    __str__ = __repr__

    def __reduce__(self) -> Any:
        # Pickling would write the key to disk or a queue: refuse.
        raise TypeError("a secret cannot be pickled")
