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

from toolwire.stream.codecs.bridge._answer import Answer, Started
from toolwire.stream.codecs.bridge._anthropic import AnthropicAnswer
from toolwire.stream.codecs.bridge._asked import Asked
from toolwire.stream.codecs.bridge._gemini import GeminiAnswer
from toolwire.stream.codecs.bridge._openai import ChatAnswer, ResponsesAnswer
from toolwire.stream.codecs.bridge._requests import READERS, read_request
from toolwire.stream.codecs.bridge._whole import whole_body

__all__ = [
    "READERS",
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
