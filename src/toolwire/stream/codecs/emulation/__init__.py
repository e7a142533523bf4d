"""The emulation server's side of each dialect: its requests read, its answers written.

Theory of operation: a scripted :class:`~toolwire.testing.Turn` is first
rendered into a dialect-neutral :class:`Reply` (templates substituted,
arguments serialized, token counts made up, ids seeded by conversation and
turn). Each encoder turns a ``Reply`` into either a list of :class:`Frame`
(one per streamed event) or a non-streaming JSON body, building every JSON
object with its keys in the order the providers send them (as recorded in
``tests/fixtures/conformance``). Framing comes last, in :meth:`Encoder.frame`,
so that faults (a broken chunk, an error event, a cut) operate on frames and
then on bytes, the way they happen on a real wire.

One module per dialect that the server speaks, beside the dialect's codec
module; the dialect's :class:`~toolwire.stream.codecs.WireDialect` names its
``encoder`` and ``decode_request``, and the server takes them from the
registry. Key orders and framing follow these recorded traces:

* OpenAI chat: ``openai/chat_parallel_2_mixed_args.sse`` (``usage: null``
  before ``choices`` in delta chunks, after it in the finish chunk; usage chunk
  with ``choices: []``; ``data: [DONE]``).
* OpenAI Responses: ``openai/responses_single_call_numbers.sse`` (``type`` first,
  the other keys sorted; ``sequence_number`` on every event); reasoning text as
  in ``deepseek/responses_api_reasoning_then_call.sse``.
* Anthropic: ``anthropic/text_then_tool_use.sse`` (``ping`` after the first
  ``content_block_start``, written with a space: ``{"type": "ping"}``).
* Gemini: ``gemini/sse_call_with_id.sse`` (``": "`` after keys, ``\\r\\n\\r\\n``
  between events) and ``gemini/json_array_nested_args_with_id.sse`` (a
  pretty-printed array, elements separated by ``\\n,\\r\\n``).
"""

from __future__ import annotations

from toolwire.stream.codecs.emulation._base import (
    Encoder,
    Frame,
    Reply,
    ReplyCall,
    fragments,
    hex_token,
    lower_token,
    token,
)
from toolwire.stream.codecs.emulation._request import (
    BadRequest,
    ParsedRequest,
    ToolResult,
    media_counts,
)

__all__ = [
    "BadRequest",
    "Encoder",
    "Frame",
    "ParsedRequest",
    "Reply",
    "ReplyCall",
    "ToolResult",
    "fragments",
    "hex_token",
    "lower_token",
    "media_counts",
    "token",
]
