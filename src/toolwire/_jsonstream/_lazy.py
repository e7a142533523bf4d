"""Partial values of one tool call's arguments, parsed when read and never twice.

The accumulator keeps each call's argument fragments in a list and hands each
``ToolCallDelta`` a mark (how many fragments it covers). Nothing is parsed
until someone reads ``delta.partial``; then :class:`LazyPartial` brings its
parser up to the mark:

* the next delta in order (a UI reading every delta): that one fragment,
  which in the middle of a long string is a single match and an in-place
  append (:meth:`PartialJSONParser._more_string`);
* a later delta (a UI reading once per network read): every fragment since
  the last read, joined and fed as one piece, so string contents are skipped
  over in bulk;
* an older delta read after a newer one: the parser starts over on the joined
  prefix.

Each fragment is parsed once in the first two cases, so reading the partial
of every delta costs time linear in the argument size, and the partial of the
last delta is the final value.
"""

from __future__ import annotations

from typing import Any

from toolwire._jsonstream._parser import PartialJSONParser
from toolwire._jsonstream._text import IN_SLOT, STR_SPECIAL

__all__ = ["LazyPartial"]


class LazyPartial(PartialJSONParser):
    """The partial arguments of one call, parsed from its fragments up to a mark."""

    __slots__ = ("_fragments", "_pos")

    def __init__(self, fragments: list[str]) -> None:
        """Read from ``fragments``, the call's list, which keeps growing."""
        super().__init__()
        self._fragments = fragments
        self._pos = 0

    def partial_at(self, mark: int, _plain: Any = STR_SPECIAL.search) -> Any:
        """The arguments parsed from the first ``mark`` fragments (``{}`` before any value)."""
        pos = self._pos
        if mark == pos + 1:
            self._pos = mark
            fragment = self._fragments[pos]
            if self._state == IN_SLOT:
                if not self._pending and _plain(fragment) is None:
                    # _more_string() for the commonest fragment, inlined: plain
                    # text in the middle of a string value, appended in place.
                    self._offset += len(fragment)
                    top = self._stack[-1]
                    slot = self._slot
                    cur = top[slot]  # type: ignore[index]
                    top[slot] = ""  # type: ignore[index]
                    cur += fragment
                    top[slot] = cur  # type: ignore[index]
                    return self._root
                if self._more_string(fragment):
                    return self._root
            self._feed(fragment)
        elif mark > pos:
            self._pos = mark
            self._feed("".join(self._fragments[pos:mark]))
        elif mark < pos:
            PartialJSONParser.__init__(self)
            self._pos = mark
            self._feed("".join(self._fragments[:mark]))
        value = self.value()
        return {} if value is None else value
