"""The bridge's two sans-I/O halves, for every dialect it serves.

A request in a served dialect is read into an :class:`Asked` (the messages,
tools and options it asks, in toolwire's own values: :func:`read_request`);
the upstream's decoded events are written back in the served dialect by an
:class:`Answer` (one per dialect: :class:`AnthropicAnswer`,
:class:`ChatAnswer`, :class:`ResponsesAnswer`, :class:`GeminiAnswer`), a
call closed only once it is complete; :func:`whole_body` answers a request
that did not ask to stream. ``toolwire.bridge`` serves them over HTTP.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from toolwire.stream.codecs.bridge._answer import Answer, Started
from toolwire.stream.codecs.bridge._anthropic import AnthropicAnswer
from toolwire.stream.codecs.bridge._asked import Asked
from toolwire.stream.codecs.bridge._gemini import GeminiAnswer
from toolwire.stream.codecs.bridge._openai import ChatAnswer, ResponsesAnswer
from toolwire.stream.codecs.bridge._requests import READERS, read_request
from toolwire.stream.codecs.bridge._whole import whole_body

ANSWERS: dict[str, type[Answer]] = {
    "anthropic-messages": AnthropicAnswer,
    "openai-chat": ChatAnswer,
    "openai-responses": ResponsesAnswer,
    "gemini": GeminiAnswer,
}
"""The answer writer of each dialect the bridge serves."""
assert set(ANSWERS) == set(READERS)

REASONING_OPTIONS: dict[str, Callable[[str], dict[str, Any]]] = {
    "openai-chat": lambda effort: {"reasoning_effort": effort},
    "openai-responses": lambda effort: {"reasoning": {"effort": effort}},
}
"""How an upstream's request asks for a reasoning effort (the others: their
provider's own settings)."""

__all__ = [
    "ANSWERS",
    "READERS",
    "REASONING_OPTIONS",
    "Answer",
    "AnthropicAnswer",
    "Asked",
    "ChatAnswer",
    "GeminiAnswer",
    "ResponsesAnswer",
    "Started",
    "read_request",
    "whole_body",
]
