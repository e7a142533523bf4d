"""Providers: normalized messages in, each wire format's HTTP request out, and back.

One class per wire dialect — :class:`OpenAIChat` (OpenAI and every
compatible server), :class:`OpenAIResponses`, :class:`Anthropic`,
:class:`Gemini`, :class:`GeminiInteractions`, :class:`Bedrock` (Converse),
:class:`BedrockInvoke` — each
(and the cloud variants :class:`AnthropicVertex`, :class:`GeminiVertex`,
:class:`AzureOpenAI`, which change only URLs and credentials) with a pure
``build_request`` / ``parse_response`` / ``parse_error`` and a thin async
``stream`` / ``complete`` over a transport. :class:`Fallback` is a chain of
them: the next one when one fails before its answer began.
What is the wire format (request bodies, streams, whole responses, finish and
usage tables) lives in :mod:`toolwire.stream.codecs`, one module per dialect; a
provider holds only what is HTTP: URLs, credentials, headers, error bodies.
:meth:`Provider.reader` gives the :class:`ProviderStream` that sends one
streaming request and decodes its body; the agent's turns read through it.
"""

from __future__ import annotations

from toolwire import _compat
from toolwire.providers._base import Provider, ToolChoice
from toolwire.providers._reads import HOLD, ProviderAttempt, ProviderStream
from toolwire.providers._socket import SocketTransport, SteerFate
from toolwire.providers.anthropic import Anthropic
from toolwire.providers.azure import AzureOpenAI
from toolwire.providers.bedrock import Bedrock, BedrockInvoke
from toolwire.providers.fallback import Fallback
from toolwire.providers.gemini import Gemini
from toolwire.providers.gemini_interactions import GeminiInteractions
from toolwire.providers.openai_chat import OpenAIChat
from toolwire.providers.openai_responses import OpenAIResponses
from toolwire.providers.vertex import AnthropicVertex, GeminiVertex

__all__ = [
    "HOLD",
    "Anthropic",
    "AnthropicVertex",
    "AzureOpenAI",
    "Bedrock",
    "BedrockInvoke",
    "Fallback",
    "Gemini",
    "GeminiInteractions",
    "GeminiVertex",
    "OpenAIChat",
    "OpenAIResponses",
    "Provider",
    "ProviderAttempt",
    "ProviderStream",
    "SocketTransport",
    "SteerFate",
    "ToolChoice",
]


def __getattr__(name: str) -> object:
    """Older names, with a warning (see :mod:`toolwire._compat`): the HTTP
    layer's types are imported from :mod:`toolwire.http`."""
    return _compat.renamed(__name__, name)
