"""The wire formats the emulation server speaks.

Theory of operation: a scripted :class:`~toolwire.testing.Turn` is first
rendered into a dialect-neutral :class:`Reply` (templates substituted,
arguments serialized, token counts made up, ids seeded by conversation and
turn). Each encoder turns a ``Reply`` into either a list of :class:`Frame`
(one per streamed event) or a non-streaming JSON body, building every JSON
object with its keys in the order the providers send them (as recorded in
``tests/fixtures/conformance``). Framing comes last, in :meth:`Encoder.frame`,
so that faults (a broken chunk, an error event, a cut) operate on frames and
then on bytes, the way they happen on a real wire.

One module per dialect; key orders and framing follow these recorded traces:

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
* Bedrock: ``bedrock/rubyllm_nova2lite_weather_i0.sse`` (ConverseStream) and
  ``bedrock/chatlas_claude45_invoke_stream_i0.sse`` (InvokeModel): AWS's
  binary event stream, keys sorted, a ``"p"`` padding key on every event.
"""

from __future__ import annotations

from toolwire.testing.encoders._base import Encoder, Frame, Reply, ReplyCall, fragments
from toolwire.testing.encoders.anthropic import AnthropicEncoder
from toolwire.testing.encoders.bedrock import BedrockConverseEncoder, BedrockInvokeEncoder
from toolwire.testing.encoders.gemini import GeminiEncoder
from toolwire.testing.encoders.openai_chat import OpenAIChatEncoder
from toolwire.testing.encoders.openai_responses import OpenAIResponsesEncoder

__all__ = [
    "ENCODERS",
    "AnthropicEncoder",
    "BedrockConverseEncoder",
    "BedrockInvokeEncoder",
    "Encoder",
    "Frame",
    "GeminiEncoder",
    "OpenAIChatEncoder",
    "OpenAIResponsesEncoder",
    "Reply",
    "ReplyCall",
    "fragments",
]

ENCODERS: dict[str, type[Encoder]] = {
    "openai-chat": OpenAIChatEncoder,
    "openai-responses": OpenAIResponsesEncoder,
    "anthropic-messages": AnthropicEncoder,
    "gemini": GeminiEncoder,
    "bedrock-converse": BedrockConverseEncoder,
    "bedrock-invoke": BedrockInvokeEncoder,
}
"""Encoder class per API name."""
