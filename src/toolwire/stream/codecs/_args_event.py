"""Argument deltas read by their exact text.

Most events of a streamed tool call are argument deltas, and a dialect sends
them in one byte-exact form. The stream decoder lets its SSE reader match
that form over the text of a whole network read
(``SSEDecoder.feed_matched``) and hands each match to the codec
(``args_delta``), which takes the index and the fragment out of it: no line is
cut, no JSON parsed, no dict built. The fragment is decoded only when it
holds a backslash, by the parser the general path uses, so escapes are
checked alike.

Each dialect's pattern lives in its own module (``anthropic.py``,
``openai_chat.py``), built from the pieces here.

A network read usually holds many deltas of one call in a row, so the codec
takes them as a run (``args_run``, see :func:`matched_run`): one call per
run, not per delta.

Equal by construction: a pattern admits only text that the general path (the
JSON parser, then the codec's ``decode``) reads as exactly one ``ArgsPart``
with that index and that fragment. Anything else (other members, another
order, whitespace, a bad escape) is not matched, or is handed back, and takes
the general path.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from toolwire.stream.jsonio import loads_fast

__all__ = [
    "INDEX",
    "STRING_CONTENT",
    "UTF8_CONTENT",
    "matched_run",
    "matched_text_run",
    "string_text",
]

INDEX: Final = r"(0|[1-9][0-9]{0,8})"  # a small JSON integer: no sign, no leading zero
# A JSON string's raw content: no raw control character, each backslash with
# the character after it (string_text checks the escape).
STRING_CONTENT: Final = r'([^"\\\x00-\x1f]*(?:\\.[^"\\\x00-\x1f]*)*)'
# The same for a bytes pattern, its characters in well-formed UTF-8 (no
# surrogate, no overlong form): a match decodes without fail.
_UTF8_PLAIN: Final = r'[^"\\\x00-\x1f\x80-\xff]*'
_UTF8_MULTI: Final = (
    r"[\xc2-\xdf][\x80-\xbf]|\xe0[\xa0-\xbf][\x80-\xbf]|[\xe1-\xec\xee\xef][\x80-\xbf]{2}"
    r"|\xed[\x80-\x9f][\x80-\xbf]|\xf0[\x90-\xbf][\x80-\xbf]{2}|[\xf1-\xf3][\x80-\xbf]{3}"
    r"|\xf4[\x80-\x8f][\x80-\xbf]{2}"
)
UTF8_CONTENT: Final = (
    "(" + _UTF8_PLAIN + r"(?:(?:\\[ -~]|" + _UTF8_MULTI + ")" + _UTF8_PLAIN + ")*)"
)


def string_text(raw: str) -> str | None:
    """The text of a string's raw content that holds a backslash (the codecs
    take one without as it is); ``None`` when an escape is invalid."""
    try:
        text: str = loads_fast('"' + raw + '"')
    except ValueError:
        return None
    return text


def matched_run(
    first: tuple[int, int, str] | None,
    items: Sequence[Any],
    i: int,
    keys: tuple[int, ...],
    text: int,
) -> tuple[int, int, list[str], int] | None:
    """The fragments of the matches from ``items[i]`` on that continue one call.

    ``first`` is the codec's ``args_delta`` of ``items[i]`` (``None``: not an
    argument delta of an open call with valid escapes, and its codec's
    ``decode`` reads it); ``keys`` are the match groups that name the call
    (the block's index digits, or the choice's and the call's), ``text`` the
    group of the raw fragment (``str``, or well-formed UTF-8 ``bytes``).
    Gives ``(choice, index, fragments, next item)``. The run stops at the
    first frame, another call or a bad escape.
    """
    if first is None:
        return None
    key = items[i].group(*keys)
    run = [first[2]]
    append = run.append
    i += 1
    n = len(items)
    while i < n:
        m = items[i]
        if type(m) is tuple or m.group(*keys) != key:
            break
        raw = m.group(text)
        if type(raw) is bytes:
            raw = raw.decode()  # well-formed by the pattern
        if "\\" in raw:
            raw = string_text(raw)
            if raw is None:
                break
        append(raw)
        i += 1
    return first[0], first[1], run, i


def matched_text_run(
    first: tuple[int, int, str] | None, items: Sequence[Any], i: int, key: int, text: int
) -> tuple[int, int, list[str], int] | None:
    """:func:`matched_run` for a ``str`` pattern whose call is named by one
    group (Anthropic's block index): the name and the fragment come out of
    each match in one call, the commonest loop of an Anthropic stream."""
    if first is None:
        return None
    name = items[i].group(key)
    run = [first[2]]
    append = run.append
    i += 1
    n = len(items)
    while i < n:
        m = items[i]
        if type(m) is tuple:
            break
        named, raw = m.group(key, text)
        if named != name:
            break
        if "\\" in raw:
            raw = string_text(raw)
            if raw is None:
                break
        append(raw)
        i += 1
    return first[0], first[1], run, i
