"""The value a :class:`~toolwire.stream._jsonstream.PartialJSONParser` builds.

:class:`ValueBuilder` holds the parser's state (see ``_parser`` for how the
string being read is kept and published) and places what the state
machine reads: strings, scalars and containers into the live value, a
failure with its offset, and, for error messages and repair, what an input
that ended too early lacks.
"""

from __future__ import annotations

from typing import Any

from toolwire.stream._jsonstream._text import (
    AFTER,
    DONE,
    ERROR,
    EXPECTED,
    IN_SLOT,
    INVALID,
    K_FIRST,
    NUMBER,
    STRING,
    V_ARR_FIRST,
    V_TOP,
    number_problem,
    to_number,
)

__all__ = ["ValueBuilder"]


class ValueBuilder:
    """The state of a partial JSON parser and the placing of values in it."""

    __slots__ = (
        "_error",
        "_error_offset",
        "_error_reason",
        "_is_key",
        "_key",
        "_num",
        "_num_start",
        "_offset",
        "_pending",
        "_root",
        "_slot",
        "_stack",
        "_state",
        "_str",
        "_str_start",
    )

    def __init__(self) -> None:
        """Start with nothing parsed: ``value()`` is ``None``."""
        self._state = V_TOP
        self._stack: list[dict[str, Any] | list[Any]] = []
        self._root: Any = None
        self._key = ""  # the key whose value is being read, in the innermost object
        self._str = ""  # a key or top-level string being read (sole reference)
        self._is_key = False  # whether that string is an object key
        self._slot: str | int = ""  # where the string value being read is: key, or -1
        self._str_start = 0
        self._num: list[str] = []  # the pieces of the number being read
        self._num_start = 0
        self._pending = ""  # a cut escape or literal, read again with the next fragment
        self._offset = 0  # characters received so far
        self._error: str | None = None
        self._error_reason = ""
        self._error_offset = 0

    # -- placing values ----------------------------------------------------

    def _begin_string(self, *, is_key: bool, at: int) -> None:
        self._is_key = is_key
        self._str_start = at
        stack = self._stack
        if is_key or not stack:
            self._str = ""
            self._state = STRING
            return
        # The key (or array slot) is shown as soon as its value starts.
        top = stack[-1]
        if type(top) is list:
            top.append("")
            self._slot = -1
        else:
            top[self._key] = ""  # type: ignore[call-overload]
            self._slot = self._key
        self._state = IN_SLOT

    def _take(self) -> str:
        """The string being read, now referenced only by the caller's local."""
        if self._state == IN_SLOT:
            top = self._stack[-1]
            cur: str = top[self._slot]  # type: ignore[index]
            top[self._slot] = ""  # type: ignore[index]
            return cur
        cur = self._str
        self._str = ""
        return cur

    def _put(self, cur: str) -> None:
        if self._state == IN_SLOT:
            self._stack[-1][self._slot] = cur  # type: ignore[index]
        else:
            self._str = cur

    def _place(self, value: Any) -> None:
        """Store a complete scalar where it belongs."""
        stack = self._stack
        if not stack:
            self._root = value
            self._state = DONE
            return
        top = stack[-1]
        if type(top) is list:
            top.append(value)
        else:
            top[self._key] = value  # type: ignore[call-overload]
        self._state = AFTER

    def _open(self, container: dict[str, Any] | list[Any]) -> None:
        stack = self._stack
        if not stack:
            self._root = container
        else:
            top = stack[-1]
            if type(top) is list:
                top.append(container)
            else:
                top[self._key] = container  # type: ignore[call-overload]
        stack.append(container)

    def _close(self) -> None:
        self._stack.pop()
        self._state = AFTER if self._stack else DONE

    def _end_number(self) -> bool:
        token = "".join(self._num)
        self._num = []
        number = to_number(token)
        if number is INVALID:
            self._fail(number_problem(token), self._num_start)
            return False
        self._place(number)
        return True

    def _fail(self, reason: str, offset: int) -> int:
        self._state = ERROR
        self._error_reason = reason
        self._error_offset = offset
        self._error = f"{reason} at char {offset}"
        self._pending = ""
        return -1

    def _fail_in_string(self, reason: str, offset: int) -> None:
        # Keep a top-level string read so far visible, as value() showed it.
        if self._state == STRING and not self._is_key:
            self._root = self._str
        self._fail(reason, offset)

    # -- support for error messages and repair -----------------------------

    def _incomplete(self) -> tuple[str, int]:
        """What is missing from an input that ended too early, and where to point.

        The offset is the start of an unterminated string, or else the end of
        the input.
        """
        state = self._state
        if state == STRING or state == IN_SLOT:
            what = "object key" if self._is_key else "string"
            return f"unterminated {what} starting", self._str_start
        end = self._offset
        if self._pending:
            return f"unexpected end of text: truncated literal {self._pending!r}", end
        if state == NUMBER:
            token = "".join(self._num)
            if to_number(token) is INVALID:
                return f"invalid number {token[:40]!r}", self._num_start
            if not self._stack:  # only finish() can tell; nothing is missing
                return "unexpected end of text after a number", end
            state = AFTER
        if state == AFTER:
            if type(self._stack[-1]) is dict:
                return "unexpected end of text: expected ',' or '}' after object member", end
            return "unexpected end of text: expected ',' or ']' after array element", end
        if state == V_TOP:
            return "unexpected end of text: no JSON value", end
        return f"unexpected end of text: {EXPECTED[state]}", end

    def _closing_suffix(self) -> str | None:
        """The closing brackets that would complete the value, if that is all it lacks.

        ``None`` when the input ends anywhere else: inside a string or a
        literal, after a key, a colon or a comma, or when it is invalid or
        already complete.
        """
        state = self._state
        if self._pending or not self._stack:
            return None
        if state == NUMBER:
            if to_number("".join(self._num)) is INVALID:
                return None
        elif state not in (AFTER, K_FIRST, V_ARR_FIRST):
            return None
        return "".join("}" if type(c) is dict else "]" for c in reversed(self._stack))
