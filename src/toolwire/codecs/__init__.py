"""Provider codecs: one module per wire dialect, sans-I/O.

Each codec has ``api`` and ``decode(event, data) -> list[Part]``: one framed
payload in, provider-neutral parts out; ``quirks`` names the departures from
the dialect's reference it noticed on the way (only on paths that handle them
anyway, so noticing costs nothing on the hot path). Quirks of a provider live in its
codec and nowhere else.
"""

from __future__ import annotations

from typing import Protocol

from toolwire._parts import (
    Part,
)
from toolwire.codecs.anthropic import AnthropicCodec
from toolwire.codecs.cohere import CohereCodec
from toolwire.codecs.gemini import GeminiCodec
from toolwire.codecs.ollama import OllamaCodec
from toolwire.codecs.openai_chat import OpenAIChatCodec
from toolwire.codecs.openai_responses import OpenAIResponsesCodec
from toolwire.errors import UsageError
from toolwire.framing import FramingKind

__all__ = [
    "APIS",
    "AnthropicCodec",
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

    api: str
    framings: frozenset[FramingKind]
    """The framings this dialect streams in (Gemini: SSE or a JSON array)."""
    quirks: set[str]
    """What this stream did that its dialect's reference does not, noticed in
    passing (``"empty-string id on continuations"``): short phrases for people,
    as ``toolwire inspect`` and ``toolwire proxy`` show them."""

    def decode(self, event: str, data: str) -> list[Part]:
        """``event`` is the SSE event name (``"message"`` when absent)."""
        ...


_CODECS: dict[str, type[Codec]] = {
    "openai-chat": OpenAIChatCodec,
    "openai-responses": OpenAIResponsesCodec,
    "anthropic-messages": AnthropicCodec,
    "gemini": GeminiCodec,
    "ollama-ndjson": OllamaCodec,
    "cohere-v2": CohereCodec,
}

APIS: tuple[str, ...] = tuple(_CODECS)
"""The wire dialects toolwire decodes."""


def codec_for(api: str) -> Codec:
    """A fresh codec for ``api`` (one per stream: codecs keep state)."""
    try:
        return _CODECS[api]()
    except KeyError:
        raise UsageError(
            f"unknown api {api!r}; expected one of: {', '.join(APIS)} or auto"
        ) from None
