"""Incremental JSON for streamed tool arguments.

Theory of operation
-------------------
Providers stream a tool call's arguments as a JSON text cut into fragments of
a few characters. Two readers consume those fragments, each exactly once:

:class:`CompletionScanner` answers one question, cheaply, on every fragment:
*has the top-level object or array just closed?* It tracks bracket depth and
whether it is inside a string (with escapes, including a backslash that ends
one fragment and escapes the first character of the next). It jumps from one
interesting character to the next with a compiled regular expression, so a
fragment costs a single C-level search in the common case. It does not
validate: the finished text is parsed by a real JSON parser afterwards. It
only guarantees never to report completion early.

:class:`PartialJSONParser` builds the value as it arrives, so a UI can show
the arguments while they grow. It is a push parser: a small state machine
(what is expected next), a stack of the open containers and a few pieces of
carried-over state (a string being read, a number being read, the unfinished
tail of an escape or literal that a fragment boundary cut). Each character is
looked at once: the longest run of string content that decodes on its own
(plain characters and complete escapes) is found with one regular-expression
match and decoded in one call to the json module's C string decoder, so
``feed`` costs O(len(fragment)) amortized and most fragments take a single
pass through ``feed``'s first lines. Only cut escapes, lone surrogates, the
closing quote and the structure between values go through the state machine.

The string being read is the only part that grows without bound. It is held
by a single reference (``self._str``) and extended with ``+=`` on a local
whose reference count is one, which CPython performs in place (amortized
O(1) per character) instead of copying. ``value()`` inserts that string into
its container slot, and the next ``feed`` puts a placeholder back in the slot
before appending, so the string is never shared while it grows. Containers
are created once, when their opening bracket arrives, attached to their
parent at once and filled in place: ``value()`` returns the live root in
O(1), and later feeds keep updating it. Copy the value if you keep it.

What ``value()`` shows is always a prefix view of the final value: complete
scalars only (a number is complete when the character after it arrives),
strings as far as they have arrived, keys only once their value has begun,
arrays as prefixes.
"""

from __future__ import annotations

import json.decoder
import re
from collections.abc import Callable
from typing import Any, Literal

from toolwire.errors import ToolwireError, UsageError

__all__ = ["CompletionScanner", "PartialJSONError", "PartialJSONParser", "ScanState"]


class PartialJSONError(ToolwireError, ValueError):
    """The JSON text is invalid, or it ended before its value was complete."""

    type_name = "invalid_json"


# Parser states: what the next significant character may be.
_V_TOP = 0  # nothing yet: the top-level value
_V_ARR_FIRST = 1  # after '[': a value or ']'
_V_NEXT = 2  # after ',' in an array: a value
_V_OBJ = 3  # after ':': a value
_K_FIRST = 4  # after '{': a key or '}'
_K_NEXT = 5  # after ',' in an object: a key
_COLON = 6  # after a key: ':'
_AFTER = 7  # after a value in a container: ',' or the closing bracket
_STRING = 8  # inside a string (a key or a value, see _is_key)
_NUMBER = 9  # inside a number
_DONE = 10  # the top-level value is complete: only whitespace may follow
_ERROR = 11  # the input is not JSON: everything else is ignored

# Whitespace as JSON defines it (RFC 8259 section 2), nothing more.
_WS = re.compile(r"[ \t\n\r]*")
# The longest run of string content that can be decoded on its own: plain
# characters and complete escapes, where a high surrogate escape counts only
# together with the low one that completes it (a pair split by a fragment
# boundary must not decode as two lone surrogates). It stops at the closing
# quote, at a cut or invalid escape, at a lone high surrogate and at a raw
# control character; the slow path takes over there.
_STR_RUN = re.compile(
    r'(?:[^"\\\x00-\x1f]+'
    r'|\\["\\/bfnrt]'
    r"|\\u(?![dD][89abAB])[0-9a-fA-F]{4}"
    r"|\\u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2})*"
)
# The characters that end a run of plain string content.
_STR_SPECIAL = re.compile(r'["\\\x00-\x1f]')
# The json module's string decoder (its C version when available): exactly
# what json.loads does to a string's content, at C speed.
_scanstring: Callable[[str, int], tuple[str, int]] = json.decoder.scanstring  # type: ignore[attr-defined]
_NUM_RUN = re.compile(r"[0-9eE.+-]*")
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
_LITERALS: dict[str, tuple[str, Any]] = {
    "t": ("true", True),
    "f": ("false", False),
    "n": ("null", None),
}
_NUMBER_START = frozenset("-0123456789")
_INVALID = object()

_EXPECTED = {
    _V_TOP: "expected a JSON value",
    _V_ARR_FIRST: "expected a value or ']' in array",
    _V_NEXT: "expected a value after ',' in array",
    _V_OBJ: "expected a value after ':' in object",
    _K_FIRST: "expected a string key or '}' in object",
    _K_NEXT: "expected a string key after ',' in object",
    _COLON: "expected ':' after object key",
    _DONE: "unexpected data after the JSON value",
}


def _to_number(token: str) -> Any:
    """The value of a JSON number token, or ``_INVALID``; the same as ``json.loads``."""
    m = _NUMBER_TOKEN.fullmatch(token)
    if m is None:
        return _INVALID
    if m.group(1) is None and m.group(2) is None:
        try:
            return int(token)
        except ValueError:  # more digits than sys.get_int_max_str_digits() allows
            return _INVALID
    return float(token)


def _not_text(owner: str, fragment: object) -> UsageError:
    return UsageError(f"{owner}.feed() takes str, not {type(fragment).__name__}")


def _found(c: str) -> str:
    return repr(c) if c >= " " else f"U+{ord(c):04X}"


class PartialJSONParser:
    """Parse a JSON text fed in fragments, with a usable partial value at every moment.

    Each fragment is consumed once, in time proportional to its length;
    ``value()`` costs O(1). Invalid input does not raise: :attr:`error` is set,
    :meth:`value` keeps the last good state and later feeds are ignored.

    Example::

        p = PartialJSONParser()
        for fragment in fragments:
            p.feed(fragment)
            show(p.value())  # a live structure: copy it if you keep it
        args = p.finish()
    """

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
        "_published",
        "_root",
        "_stack",
        "_state",
        "_str",
        "_str_start",
    )

    def __init__(self) -> None:
        """Start with nothing parsed: ``value()`` is ``None``."""
        self._state = _V_TOP
        self._stack: list[dict[str, Any] | list[Any]] = []
        self._root: Any = None
        self._key = ""  # the key whose value is being read, in the innermost object
        self._str = ""  # the string being read (sole reference while it grows)
        self._is_key = False  # whether that string is an object key
        self._published = False  # whether value() put _str into its container slot
        self._str_start = 0
        self._num: list[str] = []  # the pieces of the number being read
        self._num_start = 0
        self._pending = ""  # a cut escape or literal, re-read with the next fragment
        self._offset = 0  # characters received so far
        self._error: str | None = None
        self._error_reason = ""
        self._error_offset = 0

    # -- reading -----------------------------------------------------------

    @property
    def complete(self) -> bool:
        """Whether the top-level value is complete (only whitespace may follow)."""
        return self._state == _DONE

    @property
    def error(self) -> str | None:
        """Why the input is not JSON, with the character offset; ``None`` while it is valid."""
        return self._error

    def value(self) -> Any:
        """The value parsed so far: a prefix view of the final value.

        Complete keys and values are shown; a string being read is shown as
        far as it has arrived; a key appears once its value has started;
        numbers and ``true``/``false``/``null`` appear once complete. Before
        any value starts this is ``None``.

        The result is the parser's live structure, updated in place by later
        feeds: copy it if you keep it.
        """
        if self._state == _STRING and not self._is_key:
            stack = self._stack
            if not stack:
                return self._str
            if not self._published:
                top = stack[-1]
                if type(top) is list:
                    top[-1] = self._str
                else:
                    top[self._key] = self._str  # type: ignore[call-overload]
                self._published = True
        return self._root

    def finish(self) -> Any:
        """The complete value, once all fragments are fed.

        Raises:
            PartialJSONError: the input is invalid or incomplete.
        """
        if self._state == _NUMBER and not self._stack:
            # A bare top-level number ends with the input.
            self._end_number(self._offset)
        if self._state == _ERROR:
            raise PartialJSONError(self._error or "invalid JSON")
        if self._state != _DONE:
            reason, offset = self._incomplete()
            raise PartialJSONError(f"incomplete JSON: {reason} at char {offset}")
        return self._root

    # -- feeding -----------------------------------------------------------

    def feed(self, fragment: str) -> None:
        """Consume the next fragment of the JSON text.

        Args:
            fragment: any piece of the text; it may cut a string, an escape, a
                number or a literal anywhere.

        Raises:
            UsageError: ``fragment`` is not a ``str``.
        """
        if type(fragment) is not str and not isinstance(fragment, str):
            raise _not_text("PartialJSONParser", fragment)
        state = self._state
        if state == _STRING and not self._pending:
            # The hot path: more characters of a long string, neither its end
            # nor a cut escape.
            n = len(fragment)
            if (
                _STR_SPECIAL.search(fragment) is None or _STR_RUN.match(fragment).end() == n  # type: ignore[union-attr]
            ):
                self._offset += n
                if n:
                    if self._published:  # inlined _unpublish(): this path is hot
                        top = self._stack[-1]
                        if type(top) is list:
                            top[-1] = ""
                        else:
                            top[self._key] = ""  # type: ignore[call-overload]
                        self._published = False
                    cur = self._str
                    self._str = ""  # drop the attribute's reference: += can work in place
                    if "\\" in fragment:
                        # The C decoder of the json module, as json.loads uses it.
                        cur += _scanstring(fragment + '"', 0)[0]
                    else:
                        cur += fragment
                    self._str = cur
                return
        if state >= _DONE:
            if state == _DONE:
                j = _WS.match(fragment).end()  # type: ignore[union-attr]
                if j < len(fragment):
                    self._fail(
                        _EXPECTED[_DONE] + f", found {_found(fragment[j])}", self._offset + j
                    )
            self._offset += len(fragment)
            return
        pending = self._pending
        if pending:
            self._pending = ""
            base = self._offset - len(pending)
            self._offset += len(fragment)
            self._consume(pending + fragment, base)
        else:
            base = self._offset
            self._offset += len(fragment)
            self._consume(fragment, base)

    def _unpublish(self) -> None:
        # Put a placeholder back in the slot, so _str is again the only reference.
        top = self._stack[-1]
        if type(top) is list:
            top[-1] = ""
        else:
            top[self._key] = ""  # type: ignore[call-overload]
        self._published = False

    def _place(self, value: Any) -> int:
        """Store a complete scalar where it belongs; return the next state."""
        stack = self._stack
        if not stack:
            self._root = value
            return _DONE
        top = stack[-1]
        if type(top) is list:
            top.append(value)
        else:
            top[self._key] = value  # type: ignore[call-overload]
        return _AFTER

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

    def _fail(self, reason: str, offset: int) -> None:
        self._state = _ERROR
        self._error_reason = reason
        self._error_offset = offset
        self._error = f"{reason} at char {offset}"
        self._pending = ""

    def _fail_in_string(self, reason: str, offset: int) -> None:
        # Keep the string read so far visible, as value() would have shown it.
        self._state = _STRING
        if not self._is_key:
            if self._stack:
                self.value()
            else:
                self._root = self._str
        self._fail(reason, offset)

    def _end_number(self, offset: int) -> int:
        token = "".join(self._num)
        self._num = []
        number = _to_number(token)
        if number is _INVALID:
            self._fail(f"invalid number {token[:40]!r}", self._num_start)
            return _ERROR
        state = self._place(number)
        self._state = state
        return state

    def _consume(self, s: str, base: int) -> None:
        """Run the state machine over ``s``, whose first character is at ``base`` in the stream."""
        n = len(s)
        i = 0
        state = self._state
        stack = self._stack
        while i < n:
            if state == _STRING:
                if self._published:
                    self._unpublish()
                cur = self._str
                self._str = ""  # sole reference in the local: appends happen in place
                closed = False
                while True:
                    j = _STR_RUN.match(s, i).end()  # type: ignore[union-attr]
                    if j > i:
                        if s.find("\\", i, j) == -1:
                            cur += s[i:j]
                        else:
                            cur += _scanstring(s[i:j] + '"', 0)[0]
                    if j == n:
                        i = n
                        break
                    c = s[j]
                    if c == '"':
                        i = j + 1
                        closed = True
                        break
                    if c != "\\":
                        self._str = cur
                        self._fail_in_string(
                            f"unescaped control character {_found(c)} in string", base + j
                        )
                        return
                    if j + 1 == n:  # a backslash ends the fragment
                        self._pending = "\\"
                        i = n
                        break
                    e = s[j + 1]
                    if e != "u":
                        r = _ESCAPES.get(e)
                        if r is None:
                            self._str = cur
                            self._fail_in_string(
                                f"invalid escape '\\{e}' in string"
                                if e >= " "
                                else f"invalid escape of {_found(e)} in string",
                                base + j,
                            )
                            return
                        cur += r
                        i = j + 2
                        continue
                    if j + 6 > n:  # a cut \uXXXX: keep it for the next fragment
                        if _HEX_PREFIX.fullmatch(s, j + 2) is None:
                            self._str = cur
                            self._fail_in_string("invalid \\u escape in string", base + j)
                            return
                        self._pending = s[j:]
                        i = n
                        break
                    hex4 = s[j + 2 : j + 6]
                    if _HEX4.fullmatch(hex4) is None:
                        self._str = cur
                        self._fail_in_string("invalid \\u escape in string", base + j)
                        return
                    cp = int(hex4, 16)
                    if 0xD800 <= cp <= 0xDBFF:
                        # A high surrogate: a low one may follow, possibly in the next
                        # fragment; the pair is one astral character.
                        if j + 12 > n:
                            rest = s[j + 6 :]
                            if rest.startswith("\\u") or "\\u".startswith(rest):
                                self._pending = s[j:]
                                i = n
                                break
                        elif s[j + 6] == "\\" and s[j + 7] == "u":
                            hex4 = s[j + 8 : j + 12]
                            if _HEX4.fullmatch(hex4) is not None:
                                low = int(hex4, 16)
                                if 0xDC00 <= low <= 0xDFFF:
                                    cur += chr(0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00))
                                    i = j + 12
                                    continue
                        # json.loads keeps a lone surrogate as it is; so do we.
                    cur += chr(cp)
                    i = j + 6
                if not closed:
                    self._str = cur
                    break
                if self._is_key:
                    self._key = cur
                    state = _COLON
                elif stack:
                    top = stack[-1]
                    if type(top) is list:
                        top[-1] = cur
                    else:
                        top[self._key] = cur  # type: ignore[call-overload]
                    state = _AFTER
                else:
                    self._root = cur
                    state = _DONE
                continue

            if state == _NUMBER:
                j = _NUM_RUN.match(s, i).end()  # type: ignore[union-attr]
                if j > i:
                    self._num.append(s[i:j])
                if j == n:
                    break
                self._state = state
                state = self._end_number(base + j)
                if state == _ERROR:
                    return
                i = j
                continue

            j = _WS.match(s, i).end()  # type: ignore[union-attr]
            if j == n:
                break
            c = s[j]
            i = j + 1
            if state == _AFTER:
                top = stack[-1]
                if c == ",":
                    state = _K_NEXT if type(top) is dict else _V_NEXT
                elif c == ("}" if type(top) is dict else "]"):
                    stack.pop()
                    state = _AFTER if stack else _DONE
                elif type(top) is dict:
                    self._fail(
                        f"expected ',' or '}}' after object member, found {_found(c)}", base + j
                    )
                    return
                else:
                    self._fail(
                        f"expected ',' or ']' after array element, found {_found(c)}", base + j
                    )
                    return
            elif state == _COLON:
                if c != ":":
                    self._fail(f"{_EXPECTED[_COLON]}, found {_found(c)}", base + j)
                    return
                state = _V_OBJ
            elif state == _K_FIRST or state == _K_NEXT:
                if c == '"':
                    self._is_key = True
                    self._str_start = base + j
                    state = _STRING
                elif c == "}" and state == _K_FIRST:
                    stack.pop()
                    state = _AFTER if stack else _DONE
                else:
                    self._fail(f"{_EXPECTED[state]}, found {_found(c)}", base + j)
                    return
            elif state == _DONE:
                self._fail(f"{_EXPECTED[_DONE]}, found {_found(c)}", base + j)
                return
            # Below: a value may start here.
            elif c == '"':
                self._is_key = False
                self._str_start = base + j
                if stack:
                    # The key (or array slot) is shown as soon as its value starts.
                    top = stack[-1]
                    if type(top) is list:
                        top.append("")
                    else:
                        top[self._key] = ""  # type: ignore[call-overload]
                state = _STRING
            elif c == "{":
                self._open({})
                state = _K_FIRST
            elif c == "[":
                self._open([])
                state = _V_ARR_FIRST
            elif c in _NUMBER_START:
                self._num_start = base + j
                state = _NUMBER
                i = j
            elif c == "]" and state == _V_ARR_FIRST:
                stack.pop()
                state = _AFTER if stack else _DONE
            elif c in _LITERALS:
                word, literal = _LITERALS[c]
                if s.startswith(word, j):
                    state = self._place(literal)
                    i = j + len(word)
                elif n - j < len(word) and word.startswith(s[j:]):
                    self._pending = s[j:]  # a literal cut by the fragment end
                    break
                else:
                    self._fail(f"{_EXPECTED[state]}, found {s[j : j + len(word)]!r}", base + j)
                    return
            else:
                self._fail(f"{_EXPECTED[state]}, found {_found(c)}", base + j)
                return
        self._state = state

    # -- support for error messages and repair -----------------------------

    def _incomplete(self) -> tuple[str, int]:
        """What is missing from an input that ended too early, and where to point.

        The offset is the start of an unterminated string, or else the end of
        the input.
        """
        state = self._state
        if state == _STRING:
            what = "object key" if self._is_key else "string"
            return f"unterminated {what} starting", self._str_start
        end = self._offset
        if self._pending:
            return f"unexpected end of text: truncated literal {self._pending!r}", end
        if state == _NUMBER:
            token = "".join(self._num)
            if _to_number(token) is _INVALID:
                return f"invalid number {token[:40]!r}", self._num_start
            if not self._stack:  # only finish() can tell; nothing is missing
                return "unexpected end of text after a number", end
            state = _AFTER
        if state == _AFTER:
            if type(self._stack[-1]) is dict:
                return "unexpected end of text: expected ',' or '}' after object member", end
            return "unexpected end of text: expected ',' or ']' after array element", end
        if state == _V_TOP:
            return "unexpected end of text: no JSON value", end
        return f"unexpected end of text: {_EXPECTED[state]}", end

    def _closing_suffix(self) -> str | None:
        """The closing brackets that would complete the value, if that is all it lacks.

        ``None`` when the input ends anywhere else: inside a string or a
        literal, after a key, a colon or a comma, or when it is invalid or
        already complete.
        """
        state = self._state
        if self._pending or not self._stack:
            return None
        if state == _NUMBER:
            if _to_number("".join(self._num)) is _INVALID:
                return None
        elif state not in (_AFTER, _K_FIRST, _V_ARR_FIRST):
            return None
        return "".join("}" if type(c) is dict else "]" for c in reversed(self._stack))


ScanState = Literal["empty", "scanning", "complete", "not_json", "overflow"]

_SCAN_STRUCT = re.compile(r'["{}\[\]]')
_SCAN_STRING = re.compile(r'["\\]')
_NON_WS = re.compile(r"[^ \t\n\r]")


class CompletionScanner:
    """Tell when a streamed top-level JSON object or array is complete, without parsing it.

    The scanner tracks bracket depth outside strings. It does not validate
    JSON: it only promises never to report completion before the closing
    bracket of the top-level value. States:

    - ``"empty"``: only whitespace so far;
    - ``"scanning"``: inside the top-level object or array;
    - ``"complete"``: the top-level value has closed (whitespace may follow);
    - ``"not_json"``: the text does not start with ``{`` or ``[`` (a markdown
      fence, a bare string...): the scanner gives up;
    - ``"overflow"``: something other than whitespace followed the complete
      value (two values concatenated, for instance). This can follow
      ``"complete"`` when a later fragment brings it.
    """

    __slots__ = ("_depth", "_escaped", "_in_string", "_state")

    def __init__(self) -> None:
        """Start in the ``"empty"`` state."""
        self._state: ScanState = "empty"
        self._depth = 0
        self._in_string = False
        self._escaped = False  # the previous fragment ended with a string's backslash

    @property
    def state(self) -> ScanState:
        """Where the scan stands; see the class docstring."""
        return self._state

    def feed(self, fragment: str) -> bool:
        """Scan the next fragment.

        Args:
            fragment: any piece of the text.

        Returns:
            True when this fragment closed the top-level value and nothing
            but whitespace followed it in the fragment.

        Raises:
            UsageError: ``fragment`` is not a ``str``.
        """
        if type(fragment) is not str and not isinstance(fragment, str):
            raise _not_text("CompletionScanner", fragment)
        state = self._state
        if state == "scanning":
            i = 0
            depth = self._depth
            in_string = self._in_string
            if self._escaped and fragment:
                i = 1  # the character escaped by the previous fragment's backslash
                self._escaped = False
        elif state == "empty":
            m = _NON_WS.search(fragment)
            if m is None:
                return False
            i = m.start()
            if fragment[i] != "{" and fragment[i] != "[":
                self._state = "not_json"
                return False
            self._state = "scanning"
            i += 1
            depth = 1
            in_string = False
        else:
            if state == "complete" and _NON_WS.search(fragment) is not None:
                self._state = "overflow"
            return False
        n = len(fragment)
        while i < n:
            if in_string:
                m = _SCAN_STRING.search(fragment, i)
                if m is None:
                    break
                j = m.start()
                if fragment[j] == '"':
                    in_string = False
                    i = j + 1
                elif j + 1 < n:
                    i = j + 2
                else:
                    self._escaped = True
                    break
            else:
                m = _SCAN_STRUCT.search(fragment, i)
                if m is None:
                    break
                j = m.start()
                c = fragment[j]
                i = j + 1
                if c == '"':
                    in_string = True
                elif c == "{" or c == "[":
                    depth += 1
                else:
                    depth -= 1
                    if depth == 0:
                        self._depth = 0
                        if _NON_WS.search(fragment, i) is not None:
                            self._state = "overflow"
                            return False
                        self._state = "complete"
                        return True
        self._depth = depth
        self._in_string = in_string
        return False
