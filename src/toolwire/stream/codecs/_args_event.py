"""Argument deltas read by their exact text.

Most events of a streamed tool call are argument deltas, and a dialect sends
them in one byte-exact form. The stream decoder lets its SSE reader match
that form over the text of a whole network read
(``SSEDecoder.feed_matched``) and hands each match to the codec
(``args_delta``), which takes the index and the fragment out of it: no line is
cut, no JSON parsed, no dict built. The fragment is decoded only when it
holds a backslash, by the parser the general path uses, so escapes are
checked alike.

Equal by construction: a pattern admits only text that the general path (the
JSON parser, then the codec's ``decode``) reads as exactly one ``ArgsPart``
with that index and that fragment. Anything else (other members, another
order, whitespace, a bad escape) is not matched, or is handed back, and takes
the general path.
"""

from __future__ import annotations

import re
from typing import Final

from toolwire.stream._json import loads_fast
from toolwire.stream.framing.sse import EventMatcher

__all__ = [
    "ANTHROPIC_ARGS_EVENT",
    "INDEX_PATTERN",
    "STRING_CONTENT_PATTERN",
    "learn_openai_head",
    "openai_args_event",
    "string_text",
]

_INDEX: Final = r"(0|[1-9][0-9]{0,8})"  # a small JSON integer: no sign, no leading zero
# A JSON string's raw content: no raw control character, each backslash with
# the character after it (string_text checks the escape).
_STRING_CONTENT: Final = r'([^"\\\x00-\x1f]*(?:\\.[^"\\\x00-\x1f]*)*)'

INDEX_PATTERN: Final = _INDEX
"""A small JSON integer, as one group (for other dialects' patterns)."""
STRING_CONTENT_PATTERN: Final = _STRING_CONTENT
"""A JSON string's raw content, as one group (for other dialects' patterns)."""

ANTHROPIC_ARGS_EVENT: Final = re.compile(
    r"event: content_block_delta\n"
    r'data: (\{"type":"content_block_delta","index":' + _INDEX + r","
    r'"delta":\{"type":"input_json_delta","partial_json":"' + _STRING_CONTENT + r'"\}\})\n\n'
)
"""An Anthropic argument delta event; groups: data, block index, raw fragment."""

# An OpenAI chat chunk from "choices" to the end of its event, when it is one
# argument fragment of one call; the members after the delta may only be
# null (or OpenAI's obfuscation padding). Groups: the text, choice, index, fragment.
_OPENAI_ARGS_BODY: Final = re.compile(
    r'("choices":\[\{"index":'
    + _INDEX
    + r',"delta":\{"tool_calls":\[\{"index":'
    + _INDEX
    + r',"function":\{"arguments":"'
    + _STRING_CONTENT
    + r'"\}\}\]\}'
    r'(?:,"(?:logprobs|finish_reason)":null)*\}\]'
    r'(?:,"usage":null)?(?:,"obfuscation":"[0-9A-Za-z]*")?\})\n\n'
)


def string_text(raw: str) -> str | None:
    """The text of a string's raw content that holds a backslash (the codecs
    take one without as it is); ``None`` when an escape is invalid."""
    try:
        text: str = loads_fast('"' + raw + '"')
    except ValueError:
        return None
    return text


def learn_openai_head(data: str) -> str | None:
    """The members before ``"choices"`` of a chunk that the general path read
    as one argument fragment, when the rest has the exact shape and those
    members can hold nothing the general path would read: no usage of their
    own, and one line (a matched chunk is a single ``data:`` line)."""
    at = data.find('"choices":[')
    head = data[:at]
    if at < 0 or "\n" in head or _OPENAI_ARGS_BODY.fullmatch(data + "\n\n", at) is None:
        return None
    try:
        members = loads_fast(head + '"choices":[]}')
    except ValueError:
        return None
    # Parsed with a "choices" of our own: an object's first members.
    if type(members) is not dict or members.get("choices") != [] or members.get("usage"):
        return None
    return head


def openai_args_event(head: str) -> EventMatcher:
    """The matcher of argument chunks whose members before ``"choices"`` are ``head``."""
    prefix = "data: " + head
    size = len(prefix)
    body = _OPENAI_ARGS_BODY.match

    def match(text: str, pos: int) -> re.Match[str] | None:
        return body(text, pos + size) if text.startswith(prefix, pos) else None

    return match
