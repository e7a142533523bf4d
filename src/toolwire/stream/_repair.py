"""Parse a tool call's complete arguments text, repairing only what is unambiguous.

Theory of operation
-------------------
Models sometimes send arguments that are not quite JSON. A few mistakes have
exactly one sensible reading, and fixing them saves a round trip to the model:
a markdown fence around the JSON, trailing commas, closing brackets missing at
the very end of a stream that really ended, and arguments encoded twice (a
JSON string whose content is the JSON object). Everything else is refused
with a short message that says what is wrong and where, so the model can
correct itself; the message never repeats the text.

The order is fixed: the text as it is first (the fast path: one call to the
JSON library), then the repairs, each of which must produce valid JSON on its
own terms. Trailing commas are found with a tokenizer that skips strings, so
a comma inside a string is never touched. Missing closers are decided by the
incremental parser, which knows whether the text ends between values (safe
to close) or inside a string, after a key, a colon or a comma (ambiguous:
the text was cut, and guessing its end would invent data).
"""

from __future__ import annotations

import re
from typing import Any

from toolwire.errors import ToolwireError
from toolwire.stream._json import JSONLimitError, loads
from toolwire.stream._jsonstream import PartialJSONParser

__all__ = ["ArgumentsParseError", "parse_arguments"]


class ArgumentsParseError(ToolwireError, ValueError):
    """A tool call's arguments are not JSON, and no unambiguous repair applies.

    The message says what is wrong and where (line, column and character
    offset in the raw text); it never contains the text itself.

    Attributes:
        position: the character offset of the problem in the raw text.
        line: its 1-based line.
        column: its 1-based column.
        over_limit: the text may well be JSON, but it goes past a limit of
            :mod:`toolwire.stream.limits` (nesting depth, digits of an integer).
    """

    type_name = "arguments_parse_error"

    def __init__(
        self, message: str, *, position: int, line: int, column: int, over_limit: bool = False
    ) -> None:
        super().__init__(message)
        self.position = position
        self.line = line
        self.column = column
        self.over_limit = over_limit

    def to_dict(self) -> dict[str, Any]:
        d = super().to_dict()
        d.update(position=self.position, line=self.line, column=self.column)
        return d


# ```json ... ``` or ``` ... ```, the whole text and nothing else.
_FENCE = re.compile(
    r"\A[ \t\r\n]*```(?:json|JSON)?[ \t]*\r?\n?(.*?)[ \t\r\n]*```[ \t\r\n]*\Z", re.S
)
# A complete string, a comma, or any other run of significant characters.
_TOKEN = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|,|[^ \t\n\r",]+|"', re.S)
_CLOSER_AHEAD = re.compile(r"[ \t\n\r]*[}\]]")


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

    body, body_start = text, 0
    fence = _FENCE.match(text)
    if fence is not None:
        body, body_start = fence.group(1), fence.start(1)
    cleaned = _drop_trailing_commas(body)
    if fence is not None or cleaned != body:
        try:
            value = loads(cleaned)
        except ValueError:
            pass
        else:
            return _unwrap_double_encoded(value, repaired=True)
    if at_end:
        parser = PartialJSONParser()
        parser.feed(cleaned)
        suffix = parser._closing_suffix()
        if suffix is not None:
            # The parser vouched for the text up to here, so this parses.
            try:
                value = loads(cleaned + suffix)
            except ValueError:  # pragma: no cover - only if the two parsers disagreed
                pass
            else:
                return _unwrap_double_encoded(value, repaired=True)
    raise _explain(text, body, body_start)


def _unwrap_double_encoded(value: Any, *, repaired: bool) -> tuple[Any, bool]:
    """A JSON string holding a JSON object stands for that object."""
    if isinstance(value, str) and value.lstrip().startswith("{"):
        try:
            inner = loads(value)
        except ValueError:
            return value, repaired
        if isinstance(inner, dict):
            return inner, True
    return value, repaired


def _drop_trailing_commas(text: str) -> str:
    """Remove each comma that follows a value and precedes a closing bracket, outside strings."""
    cut: list[int] = []
    last = ""  # the last character of the previous significant token
    for m in _TOKEN.finditer(text):
        piece = m.group()
        if (
            piece == ","
            and last not in ("", ",", "[", "{", ":")
            and _CLOSER_AHEAD.match(text, m.end()) is not None
        ):
            cut.append(m.start())
        last = piece[-1]
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


def _explain(text: str, body: str, body_start: int) -> ArgumentsParseError:
    """Say what is wrong with ``body`` (found at ``body_start`` in ``text``) and where."""
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
