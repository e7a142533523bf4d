"""How a journal record's payload value is read into a field of each declared type.

Lenient by design: a value of the wrong JSON type reads as the field's empty
value, so an old or hand-edited journal still shows (see ``_kinds.decode``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["READERS"]


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _number(value: Any) -> float | None:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return value
    return None


def _object(value: Any) -> dict[str, Any] | None:
    return value if isinstance(value, dict) else None


def _names(value: Any) -> tuple[str, ...]:
    return tuple(str(v) for v in value) if isinstance(value, list) else ()


READERS: dict[str, Callable[[Any], Any]] = {
    "str": str,
    "str | None": _text,
    "int | None": _count,
    "float | None": _number,
    "bool": bool,
    "bool | None": bool,
    "dict[str, Any]": lambda value: value if isinstance(value, dict) else {},
    "dict[str, Any] | None": _object,
    "tuple[str, ...]": _names,
    "tuple[Any, ...]": lambda value: tuple(value) if isinstance(value, list) else (),
}
"""How a payload's value is read into a field of each declared type."""
