"""Refusals of toolwire's own readers: JSON, arguments, schemas, forms and queries."""

from __future__ import annotations

from typing import Any

from toolwire.errors._base import ToolwireError

__all__ = [
    "ArgumentsParseError",
    "BadForm",
    "BadQuery",
    "BadRequest",
    "DuplicateKeyError",
    "JSONLimitError",
    "NotStrictCompatible",
    "PartialJSONError",
]


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


class PartialJSONError(ToolwireError, ValueError):
    """The JSON text is invalid, or it ended before its value was complete."""

    type_name = "invalid_json"


class BadRequest(ToolwireError):
    """The request body does not follow the dialect; answered with HTTP 400."""

    type_name = "bad_request"


class JSONLimitError(ValueError):
    """Valid JSON that goes past one of toolwire's limits; the message says which."""


class DuplicateKeyError(ValueError):
    """A JSON object writes one key twice: which value was meant?"""

    def __init__(self, key: str) -> None:
        super().__init__(f"the key {key[:40]!r} is written more than once in one object")
        self.key = key


class NotStrictCompatible(ValueError):
    """The schema uses something OpenAI strict mode cannot express."""


class BadForm(ValueError):
    """An action's body that is not a small URL-encoded form with the fields it needs."""


class BadQuery(ValueError):
    """A query parameter the list does not take."""
