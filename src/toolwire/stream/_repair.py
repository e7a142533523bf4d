"""Parse a tool call's complete arguments text, repairing only what carries no value.

Theory of operation
-------------------
Models sometimes send arguments that are not quite JSON. A repair may only
remove what carries no value, never guess what the model meant:

* a markdown fence around the JSON;
* trailing commas (a comma that follows a value and precedes a closing
  bracket);
* closing brackets missing at the very end of a stream that really ended,
  and only after a value that is provably complete: a closed string,
  ``true``/``false``/``null``, a closed object or array. A number, a key or a
  string at the cut is never completed (``{"cents": 5`` may have been
  ``500``), nor an empty container opened at the cut;
* arguments encoded twice (a JSON string whose content is the JSON object);
* one whole object written twice, byte for byte (``{"city": "X"}{"city":
  "X"}``: vLLM's and SGLang's tool parsers under speculative decoding append
  the whole arguments again to the last delta, vLLM #51697). Two different
  objects are never one of them.

Repaired text is held to every rule of strict parsing, as any other: nesting,
``NaN``, numbers too large for a float, and no key written twice (which of
two values did the model mean?). A repaired call is flagged (``repaired``),
and the tool layer runs it only for tools that allow it (read-only tools, or
those that opt in); the others send the model an error asking it to resend.
Everything else is refused with a short message that says what is wrong and
where, so the model can correct itself; the message never repeats the text.

The order is fixed: the text as it is first (the fast path: one call to the
JSON library), then the repairs. Every step is one pass over the text (no
pattern is ever retried from inside a string, so hostile text such as an
unterminated string of escaped quotes costs no more than any other).
"""

from __future__ import annotations

import re
from typing import Any

from toolwire.errors import ArgumentsParseError
from toolwire.stream._jsonstream import PartialJSONParser
from toolwire.stream.jsonio import (
    POSSESSIVE,
    DuplicateKeyError,
    JSONLimitError,
    loads,
    loads_unique,
)

__all__ = ["ArgumentsParseError", "parse_arguments"]


_WS = " \t\r\n"
# The rest of a string after its opening quote: closed, or running to the end
# of the text, read once.
_STRING_REST = re.compile(
    rf'[^"\\]*{POSSESSIVE}(?:\\.[^"\\]*{POSSESSIVE})*{POSSESSIVE}(?:"|\\?\Z)', re.S
)
_AFTER_TAG = re.compile(rf"[ \t]*{POSSESSIVE}\r?\n?")
_QUOTE_OR_COMMA = re.compile(r'[",]')
_CLOSER_AHEAD = re.compile(rf"[ \t\n\r]*{POSSESSIVE}[}}\]]")
_COMMA_CLOSER = re.compile(rf",[ \t\n\r]*{POSSESSIVE}[}}\]]")
# The last character of a value that is provably complete: a closed string,
# a literal, a closed container (never a digit: a number may go on).
_COMPLETE_END = frozenset('"el}]')


def parse_arguments(text: str, *, at_end: bool) -> tuple[Any, bool]:
    """Parse the complete raw arguments of a tool call.

    Args:
        text: the arguments as the model sent them.
        at_end: the stream really ended (the provider said the call is
            complete); only then are missing closing brackets added.

    Returns:
        ``(value, repaired)``: the parsed value (any JSON value: the caller
        decides whether a non-object is acceptable) and whether a repair was
        needed. Empty text and ``null`` give ``({}, False)``.

    Raises:
        ArgumentsParseError: the text is not JSON and no unambiguous repair
            makes it so.
    """
    stripped = text.strip()
    if not stripped or stripped == "null":
        return {}, False
    try:
        value = loads(text)
    except JSONLimitError:
        # Valid JSON, or not, past a limit (nesting, a huge integer): no repair
        # applies; the incremental parser says what and where.
        error = _explain(text, text, 0)
        error.over_limit = True
        raise error from None
    except ValueError:
        pass
    else:
        return _unwrap_double_encoded(value, repaired=False)

    twice = _written_twice(stripped)
    if twice is not None:
        return twice, True
    body, body_start = text, 0
    fence = _fenced(text)
    if fence is not None:
        body, body_start = fence
    cleaned = _drop_trailing_commas(body)
    if fence is not None or cleaned != body:
        value = _strict(text, cleaned, body_start)
        if value is not _NOT_JSON:
            return _unwrap_double_encoded(value, repaired=True)
    parser = None
    if at_end:
        suffix, parser = _closing_suffix(cleaned)
        if suffix is not None:
            value = _strict(text, cleaned + suffix, body_start)
            if value is not _NOT_JSON:
                return _unwrap_double_encoded(value, repaired=True)
    raise _explain(text, body, body_start, parser if cleaned is body else None)


_NOT_JSON: Any = object()


def _written_twice(text: str) -> Any:
    """The object ``text`` holds twice over, byte for byte (``None``: not so)."""
    half, odd = divmod(len(text), 2)
    if odd or not half or text[0] != "{" or text[:half] != text[half:]:
        return None
    try:
        value = loads_unique(text[:half])
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _strict(text: str, candidate: str, body_start: int) -> Any:
    """``candidate`` (a repair of ``text``) parsed with every strict rule, or
    ``_NOT_JSON``; a rule it breaks (a key twice, a limit) is raised."""
    try:
        return loads_unique(candidate)
    except DuplicateKeyError as exc:
        raise _error(text, str(exc), body_start) from None
    except JSONLimitError:
        error = _explain(text, candidate, body_start)
        error.over_limit = True
        raise error from None
    except ValueError:
        return _NOT_JSON


def _fenced(text: str) -> tuple[str, int] | None:
    """The body of a markdown fence that is the whole text (```` ```json ````
    or ```` ``` ````, then the body, then ```` ``` ````), and where it starts."""
    start = len(text) - len(text.lstrip(_WS))
    stop = len(text.rstrip(_WS)) - 3  # where the closing fence starts
    if stop < start + 3 or not text.startswith("```", start) or not text.startswith("```", stop):
        return None
    i = start + 3
    if text.startswith(("json", "JSON"), i) and i + 4 <= stop:
        i += 4
    i = _AFTER_TAG.match(text, i, stop).end()  # type: ignore[union-attr]
    return text[i:stop].rstrip(_WS), i


def _closing_suffix(text: str) -> tuple[str | None, PartialJSONParser | None]:
    """The closing brackets that complete ``text``, when it ends after a value
    that is provably complete and lacks nothing else (``None`` otherwise),
    and the parser that read it, if one did."""
    end = text.rstrip(_WS)
    if not end or end[-1] not in _COMPLETE_END:
        return None, None
    parser = PartialJSONParser()
    parser.feed(text)
    return parser._closing_suffix(), parser


def _unwrap_double_encoded(value: Any, *, repaired: bool) -> tuple[Any, bool]:
    """A JSON string holding a JSON object stands for that object."""
    if isinstance(value, str) and value.lstrip().startswith("{"):
        try:
            inner = loads_unique(value)
        except DuplicateKeyError as exc:
            raise _error(value, str(exc), 0) from None
        except ValueError:
            return value, repaired
        if isinstance(inner, dict):
            return inner, True
    return value, repaired


def _drop_trailing_commas(text: str) -> str:
    """Remove each comma that follows a value and precedes a closing bracket,
    outside strings; one pass, whatever the text."""
    if _COMMA_CLOSER.search(text) is None:
        return text  # no comma before a closer anywhere, even inside strings
    cut: list[int] = []
    last = ""  # the last significant character before the current position
    pos = 0
    while (m := _QUOTE_OR_COMMA.search(text, pos)) is not None:
        at = m.start()
        between = text[pos:at].rstrip(_WS)
        if between:
            last = between[-1]
        if text[at] == '"':
            rest = _STRING_REST.match(text, at + 1)
            assert rest is not None  # it matches up to the end at worst
            pos = rest.end()
            last = '"'
            continue
        if last not in ("", ",", "[", "{", ":") and _CLOSER_AHEAD.match(text, at + 1) is not None:
            cut.append(at)
        last = ","
        pos = at + 1
    if not cut:
        return text
    parts = []
    start = 0
    for pos in cut:
        parts.append(text[start:pos])
        start = pos + 1
    parts.append(text[start:])
    return "".join(parts)


def _where(text: str, pos: int) -> tuple[int, int]:
    line = text.count("\n", 0, pos) + 1
    column = pos - (text.rfind("\n", 0, pos) + 1) + 1
    return line, column


def _error(text: str, reason: str, pos: int) -> ArgumentsParseError:
    line, column = _where(text, pos)
    return ArgumentsParseError(
        f"{reason} at line {line} column {column} (char {pos})",
        position=pos,
        line=line,
        column=column,
    )


def _explain(
    text: str, body: str, body_start: int, parser: PartialJSONParser | None = None
) -> ArgumentsParseError:
    """Say what is wrong with ``body`` (found at ``body_start`` in ``text``) and
    where; ``parser`` may have read ``body`` already."""
    if parser is None:
        parser = PartialJSONParser()
        parser.feed(body)
    if parser.error is not None:
        return _error(text, parser._error_reason, body_start + parser._error_offset)
    if not parser.complete:
        try:
            parser.finish()  # a bare top-level number is complete only at the end
        except ValueError:
            if parser._error_reason:  # finish() found the bare number invalid
                return _error(text, parser._error_reason, body_start + parser._error_offset)
            reason, offset = parser._incomplete()
            return _error(text, reason, body_start + offset)
    # Both parsers implement RFC 8259, so this is not expected; should they ever
    # disagree, the JSON library's own account is the best we have.
    try:  # pragma: no cover
        loads(body)
    except ValueError as exc:  # pragma: no cover
        return _error(text, str(exc).split(":")[0], body_start)
    return _error(text, "invalid JSON", body_start)  # pragma: no cover
