"""JSON in and out.

``loads`` is exact: integers of any size stay integers. It is the standard
library's C parser, used for everything whose numbers reach users (tool
arguments, whole-call payloads, non-streaming responses).

``loads_fast`` is orjson when installed: several times faster, but it turns
integers beyond 64 bits into floats. It is used only on the per-chunk hot
path for envelopes whose arguments travel as *strings* (OpenAI chat and
Anthropic argument deltas), where no user-visible number is lost; codecs
fall back to ``loads`` when a chunk carries arguments as an object.

Both raise ``ValueError`` (``json.JSONDecodeError``) on bad input, and
:class:`JSONLimitError` (a ``ValueError`` too) on valid JSON past a limit of
:mod:`toolwire.stream.limits`: nesting deeper than ``MAX_JSON_DEPTH`` (checked
before the recursive parsers see it, so no ``RecursionError``), or an
integer longer than Python converts (named as such, not "invalid JSON").
The depth check costs nothing on a payload too short to be that deep, and
two counts of brackets on the others; only a payload with that many
brackets is scanned. ``loads_fast`` leaves it to orjson, whose own limit
(1,024 levels) keeps the hot path free of recursion: it reads only chunk
envelopes, whose values toolwire takes as strings and numbers, and every
value toolwire hands on is read by ``loads``.
"""

from __future__ import annotations

import json
import math
import re
import sys
from collections.abc import Callable
from itertools import accumulate
from typing import Any, Final

from toolwire.errors import DuplicateKeyError, JSONLimitError
from toolwire.stream.limits import MAX_INT_DIGITS, MAX_JSON_DEPTH

__all__ = [
    "DuplicateKeyError",
    "JSONDecodeError",
    "JSONLimitError",
    "check_depth",
    "dumps",
    "dumps_bytes",
    "loads",
    "loads_fast",
    "loads_unique",
    "value_depth",
]

JSONDecodeError = json.JSONDecodeError


POSSESSIVE: Final = "+" if sys.version_info >= (3, 11) else ""
"""The mark of a possessive quantifier where ``re`` has them (Python 3.11+),
so the engine keeps no state to backtrack to; left out on 3.10. Each pattern
that uses it matches the same without it: what follows its runs either
always matches at their end or cannot begin inside them."""

# A string, closed or running to the end of the text: each string is read
# once and an unterminated one is never read again from each of its escaped
# quotes (which made an old form quadratic).
_STRINGS: Final = re.compile(
    rf'"[^"\\]*{POSSESSIVE}(?:\\.[^"\\]*{POSSESSIVE})*{POSSESSIVE}(?:"|\\?\Z)', re.S
)
_NOT_BRACKET: Final = re.compile(r"[^\[\]{}]+")
_STEP: Final = {ord("["): 1, ord("{"): 1, ord("]"): -1, ord("}"): -1}


def check_depth(data: str | bytes) -> None:
    """Raise :class:`JSONLimitError` when ``data`` nests deeper than ``MAX_JSON_DEPTH``.

    One pass over the text, whatever its shape (strings are skipped by a
    pattern that reads each once, then the brackets left are summed in C)."""
    if len(data) <= MAX_JSON_DEPTH:
        return
    text = data if isinstance(data, str) else data.decode("utf-8", "replace")
    if text.count("[") + text.count("{") <= MAX_JSON_DEPTH:
        return
    brackets = _NOT_BRACKET.sub("", _STRINGS.sub("", text))
    if max(accumulate(map(_STEP.__getitem__, map(ord, brackets))), default=0) > MAX_JSON_DEPTH:
        raise JSONLimitError(f"the JSON nests deeper than {MAX_JSON_DEPTH} levels")


def value_depth(value: Any) -> int:
    """How deep a parsed JSON value nests (``{}`` and ``[]`` count one), without
    recursion: for values that did not come through :func:`loads`."""
    depth = 0
    level = [value]
    while level:
        containers = [v for v in level if isinstance(v, (dict, list))]
        if not containers:
            break
        depth += 1
        if depth > MAX_JSON_DEPTH:
            break
        level = [child for c in containers for child in (c.values() if isinstance(c, dict) else c)]
    return depth


def _limit_error(exc: ValueError) -> ValueError:
    if isinstance(exc, JSONLimitError):
        return exc
    """The error to raise for a parser's ``ValueError``: Python's refusal of a
    long integer becomes a :class:`JSONLimitError` that says so."""
    if "integer string conversion" in str(exc):
        return JSONLimitError(
            f"an integer has more than {MAX_INT_DIGITS} digits (Python's limit for "
            "converting text to int)"
        )
    return exc


def _refuse_constant(name: str) -> Any:
    raise JSONDecodeError(f"{name} is not a JSON value", name, 0)


def _finite_float(token: str) -> float:
    value = float(token)
    if math.isinf(value):
        raise JSONLimitError(
            f"the number {token[:20]}{'...' if len(token) > 20 else ''} is too large for a float"
        )
    return value


def loads(data: str | bytes) -> Any:
    """Parse JSON text exactly and strictly: ``NaN`` and ``Infinity`` are not
    JSON (``ValueError``), and a number too large for a float (``1e400``) is
    refused (:class:`JSONLimitError`) instead of becoming ``inf``."""
    check_depth(data)
    try:
        # Every float is checked as it is read: looking through the text for
        # one that might be too large first cost more than the parse itself.
        return json.loads(data, parse_constant=_refuse_constant, parse_float=_finite_float)
    except ValueError as exc:
        raise _limit_error(exc) from None


def _unique_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    value = dict(pairs)
    if len(value) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise DuplicateKeyError(key)
            seen.add(key)
    return value


def loads_unique(data: str) -> Any:
    """:func:`loads`, refusing an object that writes a key twice
    (:class:`DuplicateKeyError`): for text that toolwire repaired, whose
    checks must all hold before anything may act on it."""
    check_depth(data)
    try:
        return json.loads(
            data,
            object_pairs_hook=_unique_pairs,
            parse_constant=_refuse_constant,
            parse_float=_finite_float,
        )
    except DuplicateKeyError:
        raise
    except ValueError as exc:
        raise _limit_error(exc) from None


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
        return loads, _std_dumps_bytes

    orjson_loads = orjson.loads
    orjson_dumps = orjson.dumps
    orjson_error = orjson.JSONDecodeError

    def fast_loads(data: str | bytes) -> Any:
        try:
            # orjson refuses more than 1,024 levels itself, without recursing
            # in Python: the hot path needs no depth check of its own.
            return orjson_loads(data)
        except orjson_error:
            # orjson is stricter than the standard library on a few inputs
            # (escaped lone surrogates); let json decide, with its message.
            return loads(data)

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
