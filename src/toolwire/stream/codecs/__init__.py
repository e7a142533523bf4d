"""Wire dialects: one module per dialect, owning its whole format, sans-I/O.

Each dialect's module reads and writes its format:

* streamed chunks: a codec class with ``decode(event, data) -> list[Part]``,
  one framed payload in, provider-neutral parts out (``framings`` says how
  its stream is framed; ``quirks`` names the departures from the dialect's
  reference it noticed on the way, at no cost on the hot path);
* whole (non-streamed) responses: ``decode_response(body)``, the parts the
  same response's stream would give, read by the same accumulator
  (:func:`toolwire.stream.decoder.decode_response`);
* its finish-reason and usage tables (``FINISH_REASONS``, ``usage_from_...``);
* requests: ``encode_request(...)`` and its tool entries (``tool_schema``),
  with the schema shaping of ``openai_schema`` and ``gemini_schema``.

Quirks of a provider live in its dialect's module and nowhere else;
``providers/`` adds only HTTP (URLs, credentials, headers, error bodies).
"""

from __future__ import annotations

import re
from typing import Protocol

from toolwire.errors import UsageError
from toolwire.stream._parts import (
    Part,
)
from toolwire.stream.codecs.anthropic import AnthropicCodec
from toolwire.stream.codecs.bedrock import BedrockConverseCodec
from toolwire.stream.codecs.bedrock_invoke import BedrockInvokeCodec
from toolwire.stream.codecs.cohere import CohereCodec
from toolwire.stream.codecs.gemini import GeminiCodec
from toolwire.stream.codecs.ollama import OllamaCodec
from toolwire.stream.codecs.openai_chat import OpenAIChatCodec
from toolwire.stream.codecs.openai_responses import OpenAIResponsesCodec
from toolwire.stream.framing import FramingKind
from toolwire.stream.framing.sse import EventMatcher
from toolwire.types import DIALECTS

__all__ = [
    "AnthropicCodec",
    "ArgsEventCodec",
    "BedrockConverseCodec",
    "BedrockInvokeCodec",
    "Codec",
    "CohereCodec",
    "GeminiCodec",
    "OllamaCodec",
    "OpenAIChatCodec",
    "OpenAIResponsesCodec",
    "codec_for",
]


class Codec(Protocol):
    """Turns one framed payload into parts."""

    dialect: str
    framings: frozenset[FramingKind]
    """The framings this dialect streams in (Gemini: SSE or a JSON array)."""
    quirks: set[str]
    """What this stream did that its dialect's reference does not, noticed in
    passing (``"empty-string id on continuations"``): short phrases for people,
    as ``toolwire inspect`` and ``toolwire proxy`` show them."""

    def decode(self, event: str, data: str) -> list[Part]:
        """``event`` is the SSE event name (``"message"`` when absent)."""
        ...


class ArgsEventCodec(Codec, Protocol):
    """A codec that reads its dialect's commonest event, the argument delta,
    by its exact text (Anthropic, OpenAI chat; see ``SSEDecoder.feed_matched``)."""

    args_event: EventMatcher | None
    """Matches one whole SSE event that :meth:`decode` would read as one
    ``ArgsPart`` (``None`` while the codec does not know the shape yet)."""

    def args_delta(self, m: re.Match[str]) -> tuple[int, int, str] | None:
        """``(choice, index, fragment)`` of a matched event: the ``ArgsPart``
        :meth:`decode` would give; ``None`` when only :meth:`decode` can tell."""
        ...

    def args_frame(self, m: re.Match[str]) -> tuple[str, str]:
        """The ``(event, data)`` frame of a matched event, for :meth:`decode`."""
        ...


_CODECS: dict[str, type[Codec]] = {
    "openai-chat": OpenAIChatCodec,
    "openai-responses": OpenAIResponsesCodec,
    "anthropic-messages": AnthropicCodec,
    "gemini": GeminiCodec,
    "ollama-ndjson": OllamaCodec,
    "cohere-v2": CohereCodec,
    "bedrock-converse": BedrockConverseCodec,
    "bedrock-invoke": BedrockInvokeCodec,
}

assert tuple(_CODECS) == DIALECTS, "one codec per dialect, in the order of DIALECTS"


def codec_for(dialect: str) -> Codec:
    """A fresh codec for ``dialect`` (one per stream: codecs keep state)."""
    try:
        return _CODECS[dialect]()
    except KeyError:
        raise UsageError(
            f"unknown dialect {dialect!r}; expected one of: {', '.join(DIALECTS)} or auto"
        ) from None
