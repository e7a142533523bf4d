"""The bounds on what one provider response can make toolwire hold or do.

A stream is never trusted, and neither is its size or its shape. Each limit
below is checked where the data arrives; past it, decoding ends in a typed
error that names the limit (a :class:`~toolwire.errors.RemoteProtocolError`,
or an invalid tool call when only one call is at fault), never in a
``MemoryError``, a ``RecursionError`` or a stall. They are far above what a
real model produces, and each is a constant here so that one page says what
toolwire will hold for one response:

=====================  ==========  ==========================================
limit                  value       what it bounds
=====================  ==========  ==========================================
MAX_FRAME_BYTES        64 MiB      one SSE line or event, one NDJSON line, one
                                   JSON array element, and the bytes held
                                   before ``auto`` knows the framing
MAX_JSON_DEPTH         256         the nesting of a payload and of a tool
                                   call's arguments (decoder, repair, tools)
MAX_ARGUMENTS_CHARS    64 Mi       the argument text of one tool call
MAX_TEXT_CHARS         64 Mi       the text, and the reasoning, of one choice
MAX_TOOL_CALLS         100,000     the tool calls of one response, all its
                                   choices together
MAX_RESPONSE_CHARS     128 Mi      the text, reasoning and argument text of
                                   one response, all choices and calls
                                   together
MAX_CHOICES            128         the choices of one response
MAX_PROCESS_CHARS      1 Gi        the same, of all the responses a process
                                   is decoding at once
MAX_KEPT_ITEMS         100,000     the items of one response kept for its
                                   result that are neither text nor calls
                                   (unknown items, provider state); each
                                   also counts ``KEPT_ITEM_CHARS`` and its
                                   payload against ``MAX_RESPONSE_CHARS``
MAX_KEPT_EVENTS        1,000,000   the events of one stream whose ids are
                                   kept (a Gemini interaction's), so that a
                                   reopened stream cannot replay one
MAX_INT_DIGITS         4,300       the digits of an integer in JSON (Python's
                                   own limit, ``sys.get_int_max_str_digits``)
MAX_TOKEN_COUNT        10**12      one token count of a response's usage
                                   (past it: ``TokenCountInvalid``)
=====================  ==========  ==========================================

The framing readers take their cap as an argument (``max_event_bytes``...)
for callers who use them alone; the stream decoder uses the values here.
"""

from __future__ import annotations

import sys
from typing import Final

__all__ = [
    "KEPT_ITEM_CHARS",
    "MAX_ARGUMENTS_CHARS",
    "MAX_CHOICES",
    "MAX_FRAME_BYTES",
    "MAX_INT_DIGITS",
    "MAX_JSON_DEPTH",
    "MAX_KEPT_EVENTS",
    "MAX_KEPT_ITEMS",
    "MAX_PROCESS_CHARS",
    "MAX_RESPONSE_CHARS",
    "MAX_TEXT_CHARS",
    "MAX_TOKEN_COUNT",
    "MAX_TOOL_CALLS",
]

MAX_FRAME_BYTES: Final = 64 * 1024 * 1024
"""Bytes buffered for one frame, or held before the framing is known."""

MAX_JSON_DEPTH: Final = 256
"""Nesting levels of a JSON payload or of a tool call's arguments. Deeper JSON
is refused before any recursive code (the JSON library, validation, copies)
sees it."""

MAX_ARGUMENTS_CHARS: Final = 64 * 1024 * 1024
"""Characters of one tool call's argument text; past it the call is invalid."""

MAX_TEXT_CHARS: Final = 64 * 1024 * 1024
"""Characters of one choice's text, and of its reasoning."""

MAX_TOOL_CALLS: Final = 100_000
"""Tool calls (client and server side) in one response, all choices together."""

MAX_RESPONSE_CHARS: Final = 128 * 1024 * 1024
"""Characters of text, reasoning and argument text in one response, all its
choices and calls together (each is also bounded alone, above)."""

MAX_CHOICES: Final = 128
"""Choices in one response (OpenAI's ``n`` is at most 128)."""

MAX_PROCESS_CHARS: Final = 1024 * 1024 * 1024
"""Characters held by all the responses being decoded at once in a process;
a response's count is given back when its decoding ends."""

MAX_KEPT_ITEMS: Final = 100_000
"""Items of one response that toolwire keeps for its result but does not
read (unknown items, a provider's state items), all choices together. A
stream of keep-alives or unknown events ends in a typed error past it,
never in memory held without a bound."""

KEPT_ITEM_CHARS: Final = 256
"""What one kept item counts against ``MAX_RESPONSE_CHARS`` beside its
payload's JSON: the memory an item costs however small its payload."""

MAX_KEPT_EVENTS: Final = 1_000_000
"""Events of one stream whose provider keeps it by event id (a Gemini
interaction's): each id is remembered, so that a stream reopened after a cut
cannot send one again unnoticed."""

MAX_INT_DIGITS: Final = sys.get_int_max_str_digits()
"""Digits of a JSON integer (0: no limit): Python refuses to convert longer
ones (a defence against its quadratic conversion), so toolwire refuses such a
number with that reason instead of calling the JSON invalid."""

MAX_TOKEN_COUNT: Final = 10**12
"""The largest token count one response's usage may report. No model reads
or writes a trillion tokens in one request; a larger count is a broken or
hostile server, and would blind every token and cost limit."""
