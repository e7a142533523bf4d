"""The push parser: JSON fragments in, a live partial value out.

A small state machine (what is expected next, see ``_text``), a stack of the
open containers, and a few pieces of carried-over state: the string being
read, the number being read, and the unfinished tail of an escape or a
literal that a fragment boundary cut (``_pending``, read again with the next
fragment).

Most fragments of a tool call's arguments are the middle of one long string.
:meth:`PartialJSONParser._more_string` takes them whole: one match finds the
run of content, the json module's C decoder decodes it, and it is appended in
place (see below); an escape cut at the end is kept pending without leaving
that path. Everything else (a string's end, numbers, literals, the structure
between values) goes through :meth:`PartialJSONParser._consume`, one named
step per state.

The string being read is held by a single reference (``_str``) and extended
with ``+=`` on a local whose reference count is one, which CPython performs
in place (amortized O(1) per character) instead of copying. :meth:`value`
inserts it into its container slot ("publishes" it) only when read, and the
next append puts a placeholder back first, so the string is never shared
while it grows. Containers are created when their opening bracket arrives,
attached to their parent at once and filled in place: :meth:`value` returns
the live root in O(1).
"""

from __future__ import annotations

from typing import Any

from toolwire.stream._jsonstream._building import ValueBuilder
from toolwire.stream._jsonstream._text import (
    AFTER,
    COLON,
    DONE,
    ERROR,
    EXPECTED,
    IN_SLOT,
    K_FIRST,
    K_NEXT,
    LITERALS,
    NUM_RUN,
    NUMBER,
    NUMBER_START,
    STR_RUN,
    STR_SPECIAL,
    STRING,
    V_ARR_FIRST,
    V_NEXT,
    V_OBJ,
    WS,
    PartialJSONError,
    cut_escape_at,
    decode_content,
    decode_run,
    found,
    not_text,
    read_escape,
)
from toolwire.stream.limits import MAX_JSON_DEPTH

__all__ = ["PartialJSONParser"]


class PartialJSONParser(ValueBuilder):
    """Parse a JSON text fed in fragments, with a usable partial value at every moment.

    Each fragment is consumed once, in time proportional to its length;
    ``value()`` costs O(1). Invalid input does not raise: :attr:`error` is set,
    :meth:`value` keeps the last good state and later feeds are ignored.

    What ``value()`` shows is always a prefix view of the final value:
    complete scalars only (a number is complete when the character after it
    arrives), strings as far as they have arrived, keys only once their value
    has begun, arrays as prefixes.

    Example::

        p = PartialJSONParser()
        for fragment in fragments:
            p.feed(fragment)
            show(p.value())  # a live structure: copy it if you keep it
        args = p.finish()
    """

    __slots__ = ()

    # -- reading -----------------------------------------------------------

    @property
    def complete(self) -> bool:
        """Whether the top-level value is complete (only whitespace may follow)."""
        return self._state == DONE

    def settled(self, container: Any, depth: int) -> bool:
        """Whether every value in ``container`` so far is complete.

        ``container`` is a dict or list of the value, opened at ``depth`` (0
        for the root). It is settled once closed, or while open with nothing
        inside it being read: not a string cut where the stream is, not a
        deeper container still open. O(1).
        """
        state = self._state
        if state == DONE:
            return True
        if state == ERROR:
            return False
        stack = self._stack
        if len(stack) <= depth or stack[depth] is not container:
            return True  # closed
        return len(stack) == depth + 1 and state != IN_SLOT

    @property
    def error(self) -> str | None:
        """Why the input is not JSON, with the character offset; ``None`` while it is valid."""
        return self._error

    def value(self) -> Any:
        """The value parsed so far: a prefix view of the final value.

        Before any value starts this is ``None``. The result is the parser's
        live structure, updated in place by later feeds: copy it if you keep it.
        """
        if self._state == STRING and not self._is_key:
            return self._str  # a top-level string
        return self._root

    def finish(self) -> Any:
        """The complete value, once all fragments are fed.

        Raises:
            PartialJSONError: the input is invalid or incomplete.
        """
        if self._state == NUMBER and not self._stack:
            # A bare top-level number ends with the input.
            self._end_number()
        if self._state == ERROR:
            raise PartialJSONError(self._error or "invalid JSON")
        if self._state != DONE:
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
            raise not_text("PartialJSONParser", fragment)
        self._feed(fragment)

    def _feed(self, fragment: str) -> None:
        state = self._state
        if (state == IN_SLOT or state == STRING) and self._more_string(fragment):
            return
        if state >= DONE:
            self._after_end(fragment)
            return
        pending = self._pending
        base = self._offset - len(pending)
        self._offset += len(fragment)
        if pending:
            self._pending = ""
            fragment = pending + fragment
        self._consume(fragment, base)

    def _more_string(self, fragment: str) -> bool:
        """The hot path: ``fragment`` continues the string being read without
        ending it. Take it (an escape cut at its end is kept pending) and say
        True; otherwise touch nothing and say False."""
        s = self._pending + fragment if self._pending else fragment
        tail = ""
        text: str | None = s
        if STR_SPECIAL.search(s) is not None:
            cut = cut_escape_at(s)
            if cut >= 0:
                tail = s[cut:]
                s = s[:cut]
            text = decode_content(s)
            if text is None:
                return False  # the closing quote, or something to look at closely
        self._pending = tail
        self._offset += len(fragment)
        if not text:
            return True
        if self._state == IN_SLOT:
            top = self._stack[-1]
            slot = self._slot
            cur = top[slot]  # type: ignore[index]
            top[slot] = ""  # type: ignore[index]  # cur is now the only reference:
            cur += text  # the append happens in place
            top[slot] = cur  # type: ignore[index]
        else:
            cur = self._str
            self._str = ""
            cur += text
            self._str = cur
        return True

    def _after_end(self, fragment: str) -> None:
        if self._state == DONE:
            j = WS.match(fragment).end()  # type: ignore[union-attr]
            if j < len(fragment):
                self._fail(f"{EXPECTED[DONE]}, found {found(fragment[j])}", self._offset + j)
        self._offset += len(fragment)

    def _consume(self, s: str, base: int) -> None:
        """Run the state machine over ``s``, whose first character is at ``base``."""
        n = len(s)
        i = 0
        while i < n:
            state = self._state
            if state >= DONE:
                if state == DONE:
                    j = WS.match(s, i).end()  # type: ignore[union-attr]
                    if j < n:
                        self._fail(f"{EXPECTED[DONE]}, found {found(s[j])}", base + j)
                return
            if state == IN_SLOT or state == STRING:
                i = self._string(s, i, base)
            elif state == NUMBER:
                i = self._number(s, i, base)
            else:
                j = WS.match(s, i).end()  # type: ignore[union-attr]
                if j == n:
                    return
                if state == AFTER or state == COLON or state == K_FIRST or state == K_NEXT:
                    i = self._punctuation(s[j], j, base)
                else:
                    i = self._value_start(s, j, base)
            if i < 0:
                return  # waiting for the next fragment, or failed

    # -- the steps ---------------------------------------------------------

    def _string(self, s: str, i: int, base: int) -> int:
        """Read string content from ``s[i]``: the index after the closing quote,
        or -1 when ``s`` ends inside the string (or it is invalid)."""
        cur = self._take()
        n = len(s)
        while True:
            j = STR_RUN.match(s, i).end()  # type: ignore[union-attr]
            if j > i:
                cur += decode_run(s[i:j])
            if j == n:
                self._put(cur)
                return -1
            c = s[j]
            if c == '"':
                self._end_string(cur)
                return j + 1
            if c != "\\":
                self._put(cur)
                self._fail_in_string(f"unescaped control character {found(c)} in string", base + j)
                return -1
            escape = read_escape(s, j)
            if escape is None:
                self._put(cur)
                self._pending = s[j:]
                return -1
            if isinstance(escape, str):
                self._put(cur)
                self._fail_in_string(escape, base + j)
                return -1
            cur += escape[0]
            i = escape[1]

    def _end_string(self, text: str) -> None:
        if self._state == IN_SLOT:
            self._stack[-1][self._slot] = text  # type: ignore[index]
            self._state = AFTER
        elif self._is_key:
            self._key = text
            self._state = COLON
        else:
            self._root = text
            self._state = DONE

    def _number(self, s: str, i: int, base: int) -> int:
        j = NUM_RUN.match(s, i).end()  # type: ignore[union-attr]
        if j > i:
            self._num.append(s[i:j])
        if j == len(s):
            return -1
        return j if self._end_number() else -1

    def _punctuation(self, c: str, j: int, base: int) -> int:
        """The structural character ``c`` at ``s[j]``, after a value, a key or
        an opening brace; the index after it, or -1 when it is invalid."""
        state = self._state
        if state == AFTER:
            is_object = type(self._stack[-1]) is dict
            if c == ",":
                self._state = K_NEXT if is_object else V_NEXT
            elif c == ("}" if is_object else "]"):
                self._close()
            elif is_object:
                return self._fail(
                    f"expected ',' or '}}' after object member, found {found(c)}", base + j
                )
            else:
                return self._fail(
                    f"expected ',' or ']' after array element, found {found(c)}", base + j
                )
        elif state == COLON:
            if c != ":":
                return self._fail(f"{EXPECTED[COLON]}, found {found(c)}", base + j)
            self._state = V_OBJ
        elif c == '"':
            self._begin_string(is_key=True, at=base + j)
        elif c == "}" and state == K_FIRST:
            self._close()
        else:
            return self._fail(f"{EXPECTED[state]}, found {found(c)}", base + j)
        return j + 1

    def _value_start(self, s: str, j: int, base: int) -> int:
        """The first character of a value (or the ']' of an empty array) at ``s[j]``."""
        c = s[j]
        state = self._state
        if c == '"':
            self._begin_string(is_key=False, at=base + j)
            return j + 1
        if (c == "{" or c == "[") and len(self._stack) >= MAX_JSON_DEPTH:
            return self._fail(f"nesting deeper than {MAX_JSON_DEPTH} levels", base + j)
        if c == "{":
            self._open({})
            self._state = K_FIRST
        elif c == "[":
            self._open([])
            self._state = V_ARR_FIRST
        elif c in NUMBER_START:
            self._num_start = base + j
            self._state = NUMBER
            return j
        elif c == "]" and state == V_ARR_FIRST:
            self._close()
        elif c in LITERALS:
            return self._literal(s, j, base)
        else:
            return self._fail(f"{EXPECTED[state]}, found {found(c)}", base + j)
        return j + 1

    def _literal(self, s: str, j: int, base: int) -> int:
        word, literal = LITERALS[s[j]]
        if s.startswith(word, j):
            self._place(literal)
            return j + len(word)
        if len(s) - j < len(word) and word.startswith(s[j:]):
            self._pending = s[j:]  # a literal cut by the fragment's end
            return -1
        return self._fail(f"{EXPECTED[self._state]}, found {s[j : j + len(word)]!r}", base + j)
