"""What the parser's steps share: its states, the JSON lexicon, and string escapes.

A string's content is read in runs: the longest piece that decodes on its
own (plain characters and complete escapes, a surrogate pair only whole) is
found by one regular-expression match and decoded by the json module's C
string decoder. What stops a run is the closing quote, a raw control
character, an escape cut by the fragment's end (:data:`CUT_ESCAPE`, kept for
the next fragment), or an escape that needs a look at what follows (a lone
high surrogate, an invalid escape): :func:`read_escape` takes those one at a
time.
"""

from __future__ import annotations

import json.decoder
import re
from collections.abc import Callable
from typing import Any, Final

from toolwire.errors import PartialJSONError, UsageError
from toolwire.stream.limits import MAX_INT_DIGITS

__all__ = [
    "AFTER",
    "COLON",
    "CUT_ESCAPE",
    "DONE",
    "ERROR",
    "EXPECTED",
    "INVALID",
    "IN_SLOT",
    "K_FIRST",
    "K_NEXT",
    "LITERALS",
    "NUMBER",
    "NUMBER_START",
    "NUM_RUN",
    "STRING",
    "STR_RUN",
    "STR_SPECIAL",
    "V_ARR_FIRST",
    "V_NEXT",
    "V_OBJ",
    "V_TOP",
    "WS",
    "PartialJSONError",
    "cut_escape_at",
    "decode_content",
    "decode_run",
    "found",
    "not_text",
    "number_problem",
    "read_escape",
    "to_number",
]


# Parser states: what the next significant character may be.
V_TOP = 0  # nothing yet: the top-level value
V_ARR_FIRST = 1  # after '[': a value or ']'
V_NEXT = 2  # after ',' in an array: a value
V_OBJ = 3  # after ':': a value
K_FIRST = 4  # after '{': a key or '}'
K_NEXT = 5  # after ',' in an object: a key
COLON = 6  # after a key: ':'
AFTER = 7  # after a value in a container: ',' or the closing bracket
IN_SLOT = 8  # inside a string value, which grows in its container's slot
STRING = 9  # inside a key, or a top-level string
NUMBER = 10  # inside a number
DONE = 11  # the top-level value is complete: only whitespace may follow
ERROR = 12  # the input is not JSON: everything else is ignored

EXPECTED = {
    V_TOP: "expected a JSON value",
    V_ARR_FIRST: "expected a value or ']' in array",
    V_NEXT: "expected a value after ',' in array",
    V_OBJ: "expected a value after ':' in object",
    K_FIRST: "expected a string key or '}' in object",
    K_NEXT: "expected a string key after ',' in object",
    COLON: "expected ':' after object key",
    DONE: "unexpected data after the JSON value",
}

# Whitespace as JSON defines it (RFC 8259 section 2), nothing more.
WS = re.compile(r"[ \t\n\r]*")
# The longest run of string content that decodes on its own; a high surrogate
# escape counts only together with the low one that completes it (a pair cut
# by a fragment boundary must not decode as two lone surrogates).
STR_RUN = re.compile(
    r'(?:[^"\\\x00-\x1f]+'
    r'|\\["\\/bfnrt]'
    r"|\\u(?![dD][89abAB])[0-9a-fA-F]{4}"
    r"|\\u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2})*"
)
# What may stay of an escape that the fragment's end cut: a backslash, a \u
# with fewer than four digits, or a high surrogate whose low half is cut.
CUT_ESCAPE = re.compile(
    r"\\(?:u(?:[0-9a-fA-F]{0,3}|[dD][89abAB][0-9a-fA-F]{2}(?:\\(?:u[0-9a-fA-F]{0,3})?)?))?"
)
# The characters that end a run of plain string content.
STR_SPECIAL = re.compile(r'["\\\x00-\x1f]')
NUM_RUN = re.compile(r"[0-9eE.+-]*")
_NUMBER_TOKEN = re.compile(r"-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?")
_HEX4 = re.compile(r"[0-9a-fA-F]{4}")
_HEX_PREFIX = re.compile(r"[0-9a-fA-F]{0,3}")
_ESCAPES = {
    '"': '"',
    "\\": "\\",
    "/": "/",
    "b": "\b",
    "f": "\f",
    "n": "\n",
    "r": "\r",
    "t": "\t",
}
LITERALS: dict[str, tuple[str, Any]] = {
    "t": ("true", True),
    "f": ("false", False),
    "n": ("null", None),
}
NUMBER_START = frozenset("-0123456789")
INVALID: Any = object()
"""What :func:`to_number` and :func:`read_escape` return for invalid input."""

# The json module's string decoder (its C version when available): exactly
# what json.loads does to a string's content, at C speed.
scanstring: Callable[[str, int], tuple[str, int]] = json.decoder.scanstring  # type: ignore[attr-defined]


def decode_run(run: str) -> str:
    """The text of a run that :data:`STR_RUN` matched whole."""
    if "\\" not in run:
        return run
    return scanstring(run + '"', 0)[0]


def cut_escape_at(s: str) -> int:
    """Where an escape that the end of ``s`` cut begins, or -1 (none was cut)."""
    k = s.rfind("\\")
    if k < 0:
        return -1
    rest = len(s) - k
    # Only a lone backslash or a \u escape can be cut, and no cut escape is
    # longer than a high surrogate with the start of its low half (11).
    if rest > 1 and (s[k + 1] != "u" or rest > 11 or CUT_ESCAPE.fullmatch(s, k) is None):
        return -1
    b = k
    while b and s[b - 1] == "\\":
        b -= 1
    # An odd run of backslashes before it makes s[k] the escaped character.
    return k if (k - b) % 2 == 0 else -1


def decode_content(s: str) -> str | None:
    """The text of ``s``, string content with complete escapes only; ``None``
    when it holds anything else (a quote, a control character, an invalid
    escape) or ends with a lone high surrogate whose low half may follow."""
    try:
        text, end = scanstring(s + '"', 0)
    except ValueError:
        return None
    if end != len(s) + 1 or (text and "\ud800" <= text[-1] <= "\udbff"):
        return None
    return text


def read_escape(s: str, j: int) -> tuple[str, int] | str | None:
    """Read the escape at ``s[j]`` (a backslash) that ended a run.

    Returns ``(text, end)``: the decoded character(s) and the index after the
    escape; ``None`` when the fragment's end cut it (keep ``s[j:]`` for the
    next one); or the reason why it is invalid, a ``str``.
    """
    n = len(s)
    if j + 1 == n:
        return None
    e = s[j + 1]
    if e != "u":
        r = _ESCAPES.get(e)
        if r is None:
            if e >= " ":
                return f"invalid escape '\\{e}' in string"
            return f"invalid escape of {found(e)} in string"
        return r, j + 2
    if j + 6 > n:
        return None if _HEX_PREFIX.fullmatch(s, j + 2) else "invalid \\u escape in string"
    hex4 = s[j + 2 : j + 6]
    if _HEX4.fullmatch(hex4) is None:
        return "invalid \\u escape in string"
    cp = int(hex4, 16)
    if 0xD800 <= cp <= 0xDBFF:
        # A high surrogate: a low one may follow, possibly in the next
        # fragment; the pair is one astral character.
        if j + 12 > n:
            rest = s[j + 6 :]
            if rest.startswith("\\u") or "\\u".startswith(rest):
                return None
        elif s[j + 6] == "\\" and s[j + 7] == "u" and _HEX4.fullmatch(s, j + 8, j + 12):
            low = int(s[j + 8 : j + 12], 16)
            if 0xDC00 <= low <= 0xDFFF:
                return chr(0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00)), j + 12
        # json.loads keeps a lone surrogate as it is; so do we.
    return chr(cp), j + 6


def to_number(token: str) -> Any:
    """The value of a JSON number token, or :data:`INVALID`; the same as
    :func:`toolwire.stream.jsonio.loads` (a number too large for a float is
    refused, not made ``inf``)."""
    m = _NUMBER_TOKEN.fullmatch(token)
    if m is None:
        return INVALID
    if m.group(1) is None and m.group(2) is None:
        try:
            return int(token)
        except ValueError:  # more digits than sys.get_int_max_str_digits() allows
            return INVALID
    value = float(token)
    return INVALID if value in (_INF, -_INF) else value


_INF: Final = float("inf")


def number_problem(token: str) -> str:
    """Why a number token was refused: an integer longer than Python converts
    is valid JSON, and is refused for what it is."""
    digits = len(token.lstrip("-"))
    if token.lstrip("-").isdigit() and digits > MAX_INT_DIGITS > 0:
        return f"an integer of {digits} digits (more than the {MAX_INT_DIGITS}-digit limit)"
    if _NUMBER_TOKEN.fullmatch(token) is not None:
        return f"the number {token[:20]!r} is too large for a float"
    return f"invalid number {token[:40]!r}"


def not_text(owner: str, fragment: object) -> UsageError:
    """The error for a fragment that is not a ``str``."""
    return UsageError(f"{owner}.feed() takes str, not {type(fragment).__name__}")


def found(c: str) -> str:
    """A character as an error message shows it."""
    return repr(c) if c >= " " else f"U+{ord(c):04X}"
