"""Chat Completions argument chunks read by their exact text.

Once the codec has read one argument chunk the general way, it knows the
members the stream repeats before ``"choices"`` (id, model...): the chunks
that then differ only by their argument fragment are matched whole by a
regular expression (``args_event``, see ``SSEDecoder.feed_matched``) and
never parsed as JSON.
"""

from __future__ import annotations

import re
from typing import Final

from toolwire.stream.codecs._args_event import INDEX, STRING_CONTENT
from toolwire.stream.framing.sse import EventMatcher
from toolwire.stream.jsonio import loads_fast as _loads

__all__ = ["learn_openai_head", "openai_args_event"]

# An OpenAI chat chunk from "choices" to the end of its event, when it is one
# argument fragment of one call; the members after the delta may only be
# null (or OpenAI's obfuscation padding). Groups: the text, choice, index, fragment.
_OPENAI_ARGS_BODY: Final = re.compile(
    r'("choices":\[\{"index":'
    + INDEX
    + r',"delta":\{"tool_calls":\[\{"index":'
    + INDEX
    + r',"function":\{"arguments":"'
    + STRING_CONTENT
    + r'"\}\}\]\}'
    r'(?:,"(?:logprobs|finish_reason)":null)*\}\]'
    r'(?:,"usage":null)?(?:,"obfuscation":"[0-9A-Za-z]*")?\})\n\n'
)


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
        members = _loads(head + '"choices":[]}')
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
