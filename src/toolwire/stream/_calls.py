"""One tool call being assembled, and what it becomes when it is complete.

The accumulator (``accumulate.py``) decides which call a fragment belongs to
and when a call is complete; this module holds one call's state while it
streams (:class:`OpenCall`), and :func:`settle`, which turns a complete call into a
:class:`~toolwire.types.ToolCall` or an :class:`~toolwire.types.InvalidToolCall`.

Bounds (see :mod:`toolwire.stream.limits`): a call keeps at most
``MAX_ARGUMENTS_CHARS`` of argument text (past it the call is invalid and
later fragments are dropped), and text that was not UTF-8 on the wire (kept
as lone surrogates by the framing) makes the call invalid instead of
running arguments that were silently altered.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Callable
from typing import Any, Final

from toolwire.events import PartialSource
from toolwire.stream._jsonstream import CompletionScanner
from toolwire.stream._repair import ArgumentsParseError, parse_arguments
from toolwire.stream.jsonio import dumps
from toolwire.stream.limits import MAX_ARGUMENTS_CHARS
from toolwire.stream.parts import MISSING
from toolwire.types import InvalidToolCall, ToolCall

__all__ = [
    "INCOMPLETE",
    "INVALID",
    "MAX_ARGUMENTS_CHARS",
    "OPEN",
    "READY",
    "OpenCall",
    "json_type",
    "mint_call_id",
    "replace_undecodable",
    "settle",
    "undecodable",
]

OPEN: Final = 0
READY: Final = 1
INVALID: Final = 2
INCOMPLETE: Final = 3

# What the framing makes of bytes that are not UTF-8 ("surrogateescape").
_ESCAPED_BYTE: Final = re.compile("[\udc80-\udcff]")


def mint_call_id() -> str:
    """A fresh call id for providers that send none (Gemini, Ollama)."""
    return "call_" + uuid.uuid4().hex[:24]


def undecodable(text: str) -> bool:
    """Whether ``text`` holds bytes that were not UTF-8 on the wire."""
    return not text.isascii() and _ESCAPED_BYTE.search(text) is not None


def replace_undecodable(text: str) -> str:
    """``text`` with each byte that was not UTF-8 shown as U+FFFD."""
    return _ESCAPED_BYTE.sub("\ufffd", text)


class OpenCall:
    """A call of one choice while its pieces arrive."""

    __slots__ = (
        "args_default",
        "args_final",
        "args_value",
        "asynchronous",
        "fragments",
        "id",
        "name",
        "position",
        "problem",
        "raw_index",
        "scanner",
        "size",
        "source",
        "state",
    )

    def __init__(self, position: int, raw_index: int | None) -> None:
        self.position = position
        self.raw_index = raw_index
        self.id: str | None = None
        self.name = ""
        self.fragments: list[str] = []
        self.size = 0
        self.scanner: CompletionScanner | None = None
        self.args_value: Any = MISSING
        self.args_final: str | None = None
        self.args_default: Any = MISSING
        self.asynchronous = False
        self.source: PartialSource | None = None
        self.state = OPEN
        self.problem: str | None = None
        """Why the call is invalid whatever its text says (too long, not UTF-8)."""

    def raw_text(self) -> str:
        if self.args_final is not None:
            return self.args_final
        return "".join(self.fragments)

    def release(self, raw: str) -> None:
        """A settled call keeps only its text: the scanner, the fragments and
        the partial source go (a stream of many calls holds less)."""
        self.args_final = raw
        self.fragments = []
        self.scanner = None
        self.source = None

    def growing(self) -> bool:
        """True while the argument text may legitimately still grow."""
        scanner = self.scanner
        return (
            self.args_value is MISSING
            and self.args_final is None
            and scanner is not None
            and scanner.state == "scanning"
        )

    def over_size(self, added: int) -> bool:
        """Count ``added`` characters of argument text; say whether the call
        went past ``MAX_ARGUMENTS_CHARS`` (it then keeps no more text)."""
        self.size += added
        if self.size <= MAX_ARGUMENTS_CHARS:
            return False
        if self.problem is None:
            self.problem = f"the arguments exceed {MAX_ARGUMENTS_CHARS} characters"
        return True

    def check_value(self, value: Any) -> None:
        """Arguments given as a value (Gemini, Ollama) checked for bytes that
        were not UTF-8."""
        if undecodable(json.dumps(value, ensure_ascii=False)):
            self.problem = "the arguments were not valid UTF-8"

    def check_text(self, text: str) -> str:
        """``text`` (argument text, a name) checked for bytes that were not UTF-8."""
        if undecodable(text):
            self.problem = "the arguments were not valid UTF-8 (the bytes are shown as U+FFFD)"
            return replace_undecodable(text)
        return text


def settle(
    call: OpenCall, *, allow_close: bool, id_factory: Callable[[], str]
) -> ToolCall | InvalidToolCall:
    """What a complete call is: ready to run, or invalid and why.

    Args:
        call: the call; its ``state`` becomes ``READY`` or ``INVALID`` and a
            missing id is minted.
        allow_close: the stream really ended, so missing closing brackets
            may be added (see :func:`toolwire.stream._repair.parse_arguments`).
        id_factory: makes the id of a call the provider sent without one.
    """
    raw = call.raw_text()
    value, repaired, error = _arguments(call, raw, allow_close)
    if error is None and call.args_value is not MISSING and not raw:
        raw = dumps(value)
    if error is None and not isinstance(value, dict):
        error = f"the arguments must be a JSON object, got {json_type(value)}"
    if error is None and not call.name:
        error = "the tool call has no name"
    minted = call.id is None
    call.id = call_id = call.id or id_factory()
    if error is not None:
        call.state = INVALID
        call.release(raw)
        return InvalidToolCall(
            id=call_id,
            name=call.name,
            raw_arguments=raw,
            error=error,
            index=call.position,
            minted_id=minted,
        )
    call.state = READY
    call.release(raw)
    return ToolCall(
        id=call_id,
        name=call.name,
        arguments=value,
        raw_arguments=raw,
        repaired=repaired,
        index=call.position,
        minted_id=minted,
        asynchronous=call.asynchronous,
    )


def _arguments(call: OpenCall, raw: str, allow_close: bool) -> tuple[Any, bool, str | None]:
    """``(value, repaired, error)`` of a call's arguments."""
    if call.problem is not None:
        return None, False, call.problem
    if call.args_value is not MISSING:
        value = {} if call.args_value is None else call.args_value
        return value, False, None
    if not raw.strip() and call.args_default is not MISSING:
        return call.args_default, False, None
    try:
        value, repaired = parse_arguments(raw, at_end=allow_close)
    except ArgumentsParseError as exc:
        if exc.over_limit:
            return None, False, f"the arguments go past a limit: {exc}"
        return None, False, f"the arguments are not valid JSON: {exc}"
    return value, repaired, None


def json_type(value: Any) -> str:
    """How a JSON value's type is named in messages."""
    if isinstance(value, list):
        return "an array"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if value is None:
        return "null"
    return type(value).__name__
