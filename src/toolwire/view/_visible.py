"""Text from a model, made safe for the viewer's HTML sink, in one place.

Theory of operation: whatever a model or a tool wrote can reach a page or
the live stream, and some of it cannot be sent, or does not show what it
is:

* a lone surrogate (``"\\ud800"``, which JSON can carry) cannot be encoded
  as UTF-8: a page holding one would fail to be sent at all;
* a NUL and the other control characters (C0 but tab and newlines, DEL,
  C1) are no text a page should hold;
* format characters (Unicode category ``Cf``: zero-width spaces and joiners,
  bidirectional embeddings, overrides and isolates, tag characters, ...) and
  the line and paragraph separators are invisible, or make what follows
  read in another order than it runs.

:func:`clean` is applied to every value a page or the live stream shows
(:func:`toolwire.view._html.text` and ``ident`` call it): a lone surrogate
or a control character becomes a visible ``⟨U+XXXX⟩``, so nothing fails to
encode. :func:`reveal` is applied on the approval pages, where what a
person reads must be what runs: each invisible or bidirectional character
becomes a highlighted ``⟨U+XXXX⟩`` mark, and :func:`hidden_count` says how
many there are, for the page's note.
"""

from __future__ import annotations

import re
import unicodedata
from functools import cache

__all__ = ["clean", "hidden_count", "reveal"]

_UNSENDABLE = re.compile("[\ud800-\udfff\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
"""Lone surrogates and control characters (tab, newline and return are text)."""
_MARKS = {
    c: f"⟨U+{c:04X}⟩"
    for c in (*range(0xD800, 0xE000), *range(0x20), *range(0x7F, 0xA0))
    if chr(c) not in "\t\n\r"
}
"""Each of them, and its mark (a table for :meth:`str.translate`)."""


@cache
def _hidden_pattern() -> re.Pattern[str]:
    """Every format character (``Cf``) and the line and paragraph separators."""
    chars = [
        chr(c)
        for c in range(0x110000)
        if not 0xD800 <= c <= 0xDFFF and unicodedata.category(chr(c)) in ("Cf", "Zl", "Zp")
    ]
    return re.compile("[" + "".join(re.escape(c) for c in chars) + "]")


def _mark(found: re.Match[str]) -> str:
    return f"⟨U+{ord(found.group()):04X}⟩"


def clean(raw: str) -> str:
    """``raw`` with each lone surrogate and control character shown as ``⟨U+XXXX⟩``
    (what is left can be encoded as UTF-8 and holds no NUL)."""
    return raw if _UNSENDABLE.search(raw) is None else raw.translate(_MARKS)


def reveal(escaped: str) -> str:
    """HTML ``escaped`` (already escaped text) with each invisible or
    bidirectional character shown as a highlighted ``⟨U+XXXX⟩`` mark."""
    return _hidden_pattern().sub(
        lambda found: f"<mark class=invisible>{_mark(found)}</mark>", escaped
    )


def hidden_count(raw: str) -> int:
    """How many invisible or bidirectional characters ``raw`` holds."""
    return len(_hidden_pattern().findall(raw))
