"""Partial values of one tool call's arguments, parsed when read and never twice.

The accumulator keeps each call's argument fragments in a list and hands each
``ToolCallDelta`` a mark (how many fragments it covers). Nothing is parsed
until someone reads ``delta.partial``; then :class:`LazyPartial` brings its
parser up to the mark:

* the next delta in order (a UI reading every delta): that one fragment,
  which in the middle of a long string (plain, with complete escapes, or
  with a backslash cut at its end) is three C checks, one C decode when it has
  escapes (short ones are remembered: a model's tokens recur), and an
  in-place append, inlined here;
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

from toolwire.stream._jsonstream._parser import PartialJSONParser
from toolwire.stream._jsonstream._text import IN_SLOT, scanstring

__all__ = ["LazyPartial"]

_PIECES: dict[str, tuple[str, str]] = {}
"""Short string contents with escapes, decoded: ``(text, cut escape)``. A
model writes from a vocabulary of tokens, so the same few recur."""
_MOST_PIECES = 4096
_LONGEST_PIECE = 32


def _escaped(s: str, _scan: Any = scanstring) -> tuple[str, str] | None:
    """``(text, tail)`` of string content ``s`` holding a quote, backslash or
    control character: its text and a backslash cut from what it escapes;
    ``None`` when it ends the string or is not plain content with complete
    escapes (the parser looks at it closely)."""
    tail = ""
    if s[-1] == "\\" and (len(s) - len(s.rstrip("\\"))) & 1:
        tail = "\\"
        s = s[:-1]
    try:
        text, end = _scan(s + '"', 0)
    except ValueError:
        return None
    if end != len(s) + 1 or "\ud800" <= text[-1:] <= "\udbff":
        return None  # the string's end, or a surrogate pair cut in two
    piece = (text, tail)
    if len(s) < _LONGEST_PIECE and len(_PIECES) < _MOST_PIECES:
        _PIECES[s + tail] = piece
    return piece


class LazyPartial(PartialJSONParser):
    """The partial arguments of one call, parsed from its fragments up to a mark."""

    __slots__ = ("_fragments", "_pos")

    def __init__(self, fragments: list[str]) -> None:
        """Read from ``fragments``, the call's list, which keeps growing."""
        super().__init__()
        self._fragments = fragments
        self._pos = 0

    def partial_at(self, mark: int, _known: Any = _PIECES.get) -> Any:
        """The arguments parsed from the first ``mark`` fragments (``{}`` before any value)."""
        pos = self._pos
        if mark == pos + 1:
            self._pos = mark
            fragment = self._fragments[pos]
            if self._state == IN_SLOT:
                # _more_string() for the commonest fragments, inlined: more of a
                # string value, plain, with complete escapes or a backslash cut
                # from what it escapes, appended in place. Plain is told by
                # three C checks, cheaper than a search; a printable-looking
                # test that fails (a control character, but also a no-break
                # space...) only sends the text to the careful decode.
                pending = self._pending
                s = pending + fragment if pending else fragment
                if '"' not in s and "\\" not in s and s.isprintable():
                    text = s
                    if pending:
                        self._pending = ""
                else:
                    piece = _known(s) or _escaped(s)
                    if piece is None:
                        self._feed(fragment)
                        value = self.value()
                        return {} if value is None else value
                    text, self._pending = piece
                self._offset += len(fragment)
                if text:
                    top = self._stack[-1]
                    slot = self._slot
                    cur = top[slot]  # type: ignore[index]
                    top[slot] = ""  # type: ignore[index]
                    cur += text
                    top[slot] = cur  # type: ignore[index]
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
