"""The emulation server's encoders, one per dialect it speaks, from the
dialect registry (:mod:`toolwire.stream.codecs.emulation` holds them)."""

from __future__ import annotations

from toolwire.stream.codecs import registered
from toolwire.stream.codecs.emulation import Encoder, Frame, Reply, ReplyCall, fragments
from toolwire.stream.codecs.emulation.anthropic import AnthropicEncoder
from toolwire.stream.codecs.emulation.gemini import GeminiEncoder
from toolwire.stream.codecs.emulation.openai_chat import OpenAIChatEncoder
from toolwire.stream.codecs.emulation.openai_responses import OpenAIResponsesEncoder

__all__ = [
    "ENCODERS",
    "AnthropicEncoder",
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
    d.name: d.encoder for d in registered() if d.encoder is not None
}
"""Encoder class per dialect name."""
