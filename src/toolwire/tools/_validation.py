"""Checking arguments against a schema, and saying what is wrong.

Both validators report ``(path, message)`` pairs a model can act on:
:func:`format_pydantic_errors` for tools built from a function (a Pydantic
model), :func:`validate_instance` for tools built from an explicit JSON Schema,
which covers the keywords tool schemas use.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from fractions import Fraction
from typing import Any

from pydantic import ValidationError

from toolwire.tools._schema import JSONSchema, resolve_ref

__all__ = ["format_pydantic_errors", "path_of", "validate_instance"]


def path_of(loc: Sequence[int | str]) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out or "(arguments)"


def _short(value: Any, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def format_pydantic_errors(
    error: ValidationError, *, allowed: Sequence[str] = ()
) -> list[tuple[str, str]]:
    """Turn a Pydantic error into ``(path, message)`` pairs a model can act on.

    Args:
        error: the validation error.
        allowed: the tool's parameter names, listed for unexpected arguments.
    """
    out: list[tuple[str, str]] = []
    for item in error.errors(include_url=False):
        loc = tuple(item.get("loc", ()))
        kind = item.get("type", "")
        msg = str(item.get("msg", "invalid value"))
        if kind == "missing":
            message = "required argument is missing"
        elif kind == "extra_forbidden":
            message = "unexpected argument"
            if len(loc) == 1 and allowed:
                message += f" (this tool accepts: {', '.join(allowed)})"
        else:
            message = f"{msg} (got {_short(item.get('input'))})"
        out.append((path_of(loc), message))
    return out


_JSON_TYPES: dict[str, Callable[[Any], bool]] = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
    "integer": lambda v: (
        (isinstance(v, int) and not isinstance(v, bool))
        or (isinstance(v, float) and v.is_integer())
    ),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
}
_STRICT_TYPES: dict[str, Callable[[Any], bool]] = {
    **_JSON_TYPES,
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
}


def validate_instance(
    value: Any, schema: Mapping[str, Any], *, strict: bool = True, types_only: bool = False
) -> list[tuple[str, str]]:
    """Check ``value`` against ``schema`` and list what is wrong.

    Covers the keywords tool schemas use: ``type``, ``enum``, ``const``,
    ``properties``, ``required``, ``additionalProperties``, ``items``,
    ``prefixItems``, length, size and range limits, ``pattern``,
    ``multipleOf``, ``anyOf``/``oneOf``/``allOf``/``not`` and local ``$ref``.
    ``format`` is an annotation and is not checked.

    Args:
        value: the instance (the parsed arguments).
        schema: the JSON Schema.
        strict: an ``integer`` must be written as one (``500.0`` is refused);
            ``False`` accepts a float with no fractional part.
        types_only: check the ``type`` of every value the schema reaches, and
            nothing else (an exclusive ``oneOf`` is read as ``anyOf``).

    Returns:
        ``(path, message)`` pairs; empty when ``value`` is valid.
    """
    root = dict(schema)
    return _Checker(root, strict=strict, types_only=types_only).collect(value, root, ())


Loc = tuple[int | str, ...]


class _Checker:
    """One validation: each keyword family in its own method, errors collected."""

    def __init__(self, root: JSONSchema, *, strict: bool, types_only: bool) -> None:
        self.root = root
        self.types = _STRICT_TYPES if strict else _JSON_TYPES
        self.types_only = types_only

    def collect(self, v: Any, s: Any, loc: Loc) -> list[tuple[str, str]]:
        errors: list[tuple[str, str]] = []
        self._check(v, s, loc, errors)
        return errors

    def _check(self, v: Any, s: Any, loc: Loc, errors: list[tuple[str, str]]) -> None:
        def err(where: Loc, message: str) -> None:
            errors.append((path_of(where), message))

        if s is True or s == {}:
            return
        if s is False:
            err(loc, "no value is allowed here")
            return
        if not isinstance(s, dict):
            return
        ref = s.get("$ref")
        if isinstance(ref, str):
            try:
                errors.extend(self.collect(v, resolve_ref(ref, self.root), loc))
            except ValueError as exc:
                err(loc, str(exc))
        typ = s.get("type")
        if typ is not None:
            types = typ if isinstance(typ, list) else [typ]
            if not any(self.types.get(t, lambda _: True)(v) for t in types):
                err(loc, f"expected {' or '.join(types)} (got {_short(v)})")
                return
        if isinstance(v, dict):
            self._object(v, s, loc, errors, err)
        elif isinstance(v, list):
            self._array(v, s, loc, errors, err)
        self._combinators(v, s, loc, errors, err)
        if self.types_only:
            return
        if "enum" in s and v not in s["enum"]:
            err(loc, f"expected one of {', '.join(_short(e) for e in s['enum'])} (got {_short(v)})")
        if "const" in s and v != s["const"]:
            err(loc, f"expected {_short(s['const'])} (got {_short(v)})")
        if isinstance(v, str):
            _check_string(v, s, loc, err)
        elif isinstance(v, (int, float)) and not isinstance(v, bool):
            _check_number(v, s, loc, err)

    def _object(
        self,
        v: dict[str, Any],
        s: JSONSchema,
        loc: Loc,
        errors: list[tuple[str, str]],
        err: Callable[[Loc, str], None],
    ) -> None:
        props = s.get("properties", {})
        for name in () if self.types_only else s.get("required", []):
            if name not in v:
                err((*loc, name), "required argument is missing")
        extra = s.get("additionalProperties", True)
        for key, item in v.items():
            if key in props:
                errors.extend(self.collect(item, props[key], (*loc, key)))
            elif extra is False and not self.types_only:
                hint = f" (allowed: {', '.join(props)})" if props else ""
                err((*loc, key), "unexpected argument" + hint)
            elif isinstance(extra, dict):
                errors.extend(self.collect(item, extra, (*loc, key)))

    def _array(
        self,
        v: list[Any],
        s: JSONSchema,
        loc: Loc,
        errors: list[tuple[str, str]],
        err: Callable[[Loc, str], None],
    ) -> None:
        prefix = s.get("prefixItems", [])
        for i, item in enumerate(v):
            if i < len(prefix):
                errors.extend(self.collect(item, prefix[i], (*loc, i)))
            elif "items" in s:
                errors.extend(self.collect(item, s["items"], (*loc, i)))
        if self.types_only:
            return
        if "minItems" in s and len(v) < s["minItems"]:
            err(loc, f"expected at least {s['minItems']} items (got {len(v)})")
        if "maxItems" in s and len(v) > s["maxItems"]:
            err(loc, f"expected at most {s['maxItems']} items (got {len(v)})")

    def _combinators(
        self,
        v: Any,
        s: JSONSchema,
        loc: Loc,
        errors: list[tuple[str, str]],
        err: Callable[[Loc, str], None],
    ) -> None:
        for key in ("anyOf", "oneOf"):
            variants = s.get(key)
            if isinstance(variants, list):
                matches = sum(1 for sub in variants if not self.collect(v, sub, loc))
                if matches == 0:
                    err(loc, f"does not match any of the allowed forms (got {_short(v)})")
                elif key == "oneOf" and matches > 1 and not self.types_only:
                    err(loc, f"matches more than one of the allowed forms (got {_short(v)})")
        for sub in s.get("allOf", []):
            errors.extend(self.collect(v, sub, loc))
        if "not" in s and not self.types_only and not self.collect(v, s["not"], loc):
            err(loc, f"value is not allowed (got {_short(v)})")


def _check_string(v: str, s: Mapping[str, Any], loc: Loc, err: Callable[..., None]) -> None:
    if "minLength" in s and len(v) < s["minLength"]:
        err(loc, f"expected at least {s['minLength']} characters (got {len(v)})")
    if "maxLength" in s and len(v) > s["maxLength"]:
        err(loc, f"expected at most {s['maxLength']} characters (got {len(v)})")
    pattern = s.get("pattern")
    if isinstance(pattern, str) and re.search(pattern, v) is None:
        err(loc, f"must match the pattern {pattern!r} (got {_short(v)})")


def _check_number(v: float, s: Mapping[str, Any], loc: Loc, err: Callable[..., None]) -> None:
    if "minimum" in s and v < s["minimum"]:
        err(loc, f"must be >= {s['minimum']} (got {v})")
    if "maximum" in s and v > s["maximum"]:
        err(loc, f"must be <= {s['maximum']} (got {v})")
    if "exclusiveMinimum" in s and v <= s["exclusiveMinimum"]:
        err(loc, f"must be > {s['exclusiveMinimum']} (got {v})")
    if "exclusiveMaximum" in s and v >= s["exclusiveMaximum"]:
        err(loc, f"must be < {s['exclusiveMaximum']} (got {v})")
    step = s.get("multipleOf")
    if isinstance(step, (int, float)) and step > 0 and math.isfinite(step):
        if not _is_multiple(v, step):
            err(loc, f"must be a multiple of {step} (got {_short(v)})")


_TOLERANCE = Fraction(1, 10**9)


def _is_multiple(v: float, step: float) -> bool:
    """Whether ``v`` is a multiple of ``step``, in exact arithmetic (a float
    quotient overflows on ``1e308`` or a 400-digit integer), within 1e-9 of
    an integer quotient as floats like ``0.3`` and ``0.1`` need."""
    if isinstance(v, int) and isinstance(step, int):
        return v % step == 0
    if isinstance(v, float) and not math.isfinite(v):
        return False
    quotient = Fraction(v) / Fraction(step)
    return abs(quotient - round(quotient)) <= _TOLERANCE
