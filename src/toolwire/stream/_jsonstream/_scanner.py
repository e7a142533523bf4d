"""The completion scanner: has a streamed top-level JSON object or array closed yet?

It answers that one question, cheaply, on every fragment. It tracks bracket
depth and whether it is inside a string (with escapes, including a backslash
that ends one fragment and escapes the first character of the next), and
jumps from one interesting character to the next with a compiled regular
expression, so a fragment costs a single C-level search in the common case.
It does not validate: the finished text is parsed by a real JSON parser
afterwards. It only guarantees never to report completion early.
"""

from __future__ import annotations

import re
from typing import Literal

from toolwire.stream._jsonstream._text import not_text

__all__ = ["CompletionScanner", "ScanState"]

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

    __slots__ = ("_depth", "_escaped", "_in_string", "_state", "mid_string")

    def __init__(self) -> None:
        """Start in the ``"empty"`` state."""
        self._state: ScanState = "empty"
        self._depth = 0
        self._in_string = False
        self._escaped = False  # the previous fragment ended with a string's backslash
        self.mid_string = False
        """Inside a string, no escape cut: a fragment without a quote or a
        backslash changes nothing (:meth:`feed` would return False at once)."""

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
        if self._in_string and type(fragment) is str and '"' not in fragment:
            # More of a string (the commonest fragment): nothing changes.
            if "\\" not in fragment and not self._escaped and self._state == "scanning":
                return False
        if type(fragment) is not str and not isinstance(fragment, str):
            raise not_text("CompletionScanner", fragment)
        self.mid_string = False
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
        self.mid_string = in_string and not self._escaped
        return False
