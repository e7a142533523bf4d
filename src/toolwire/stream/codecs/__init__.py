"""Wire dialects: the registry, and one module per dialect owning its format.

Each dialect's module reads and writes its whole format, sans-I/O, and
describes it in one :class:`WireDialect`, its ``DIALECT``:

* streamed chunks: a codec class with ``decode(event, data) -> list[Part]``,
  one framed payload in, provider-neutral parts out (``framings`` says how
  its stream is framed; ``quirks`` names the departures from the dialect's
  reference it noticed on the way, at no cost on the hot path), and, for the
  commonest payload, the exact text of an argument delta (``args_event``, its
  regular expression in the same module; see ``decoder.py``);
* whole (non-streamed) responses: ``decode_response(body)``, the parts the
  same response's stream would give, read by the same accumulator
  (:func:`toolwire.stream.decoder.decode_response`);
* its finish-reason and usage tables;
* how to tell it: the event names, texts and shapes only it sends
  (``sniff_*``) and its request paths;
* requests: ``encode_request(...)`` and its tool entries (``tool_schemas``,
  with the strict mode of ``openai_schema`` or the shaping of ``gemini_schema``),
  and the reverse, ``decode_request``, for the emulation server and the proxy;
* answers for the emulation server, streamed and whole (``encoder``);
* its OpenTelemetry provider flavour.

Nothing outside this package names a dialect's wire vocabulary (its event
names, members, paths): the stream decoder, the tool layer, the providers,
the proxy, ``toolwire inspect``, the emulation server and the OpenTelemetry
layer ask the registry (``tests/stream/test_registry.py`` checks it).
``providers/`` adds only HTTP: credentials, base URLs, headers, error bodies.

Adding a dialect
----------------
Write ``codecs/<dialect>.py`` with its codec and a ``DIALECT =
WireDialect(name=..., codec=..., finish_reasons=..., ...)`` (a large dialect
keeps its codec in ``<dialect>_stream.py`` and its requests in
``<dialect>_request.py``, as ``anthropic`` and ``openai_chat`` do), add the name to
:data:`toolwire.types.Dialect` and :data:`toolwire.types.DIALECTS`, and
register it below (``register(<dialect>.DIALECT)``, in the order of
``DIALECTS``). Sniffing, ``toolwire inspect`` and ``toolwire proxy`` then
know it; it takes part in request building and the emulation server as far
as it fills ``encode_request``, ``tool_schemas``, ``decode_request`` and
``encoder``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, Protocol

from toolwire.errors import UsageError
from toolwire.stream.codecs import (
    anthropic,
    bedrock,
    bedrock_invoke,
    cohere,
    gemini,
    gemini_interactions,
    ollama,
    openai_chat,
    openai_responses,
)
from toolwire.stream.codecs._common import error_event
from toolwire.stream.codecs._dialect import SchemaTool, WireDialect
from toolwire.stream.codecs.anthropic import AnthropicCodec
from toolwire.stream.codecs.bedrock import BedrockConverseCodec
from toolwire.stream.codecs.bedrock_invoke import BedrockInvokeCodec
from toolwire.stream.codecs.cohere import CohereCodec
from toolwire.stream.codecs.gemini import GeminiCodec
from toolwire.stream.codecs.gemini_interactions import GeminiInteractionsCodec
from toolwire.stream.codecs.ollama import OllamaCodec
from toolwire.stream.codecs.openai_chat import OpenAIChatCodec
from toolwire.stream.codecs.openai_responses import OpenAIResponsesCodec
from toolwire.stream.framing import FramingKind
from toolwire.stream.framing.sse import EventMatcher
from toolwire.stream.parts import (
    Part,
)
from toolwire.types import DIALECTS

__all__ = [
    "AnthropicCodec",
    "ArgsEventCodec",
    "BedrockConverseCodec",
    "BedrockInvokeCodec",
    "Codec",
    "CohereCodec",
    "ContinuedCodec",
    "GeminiCodec",
    "GeminiInteractionsCodec",
    "OllamaCodec",
    "OpenAIChatCodec",
    "OpenAIResponsesCodec",
    "SchemaTool",
    "WireDialect",
    "codec_for",
    "dialect_for_path",
    "error_event",
    "register",
    "registered",
    "wire_dialect",
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

    def args_delta(self, m: re.Match[Any]) -> tuple[int, int, str] | None:
        """``(choice, index, fragment)`` of a matched event: the ``ArgsPart``
        :meth:`decode` would give; ``None`` when only :meth:`decode` can tell."""
        ...

    def args_frame(self, m: re.Match[Any]) -> tuple[str, str]:
        """The ``(event, data)`` frame of a matched event, for :meth:`decode`."""
        ...

    def args_run(self, items: Sequence[Any], i: int) -> tuple[int, int, list[str], int] | None:
        """``(choice, index, fragments, next item)`` of the matched events from
        ``items[i]`` on that continue one call, as :meth:`args_delta` reads each
        (at least one); ``None`` when :meth:`args_delta` gives ``None`` for
        ``items[i]``."""
        ...


class ContinuedCodec(Codec, Protocol):
    """A codec of a dialect whose provider keeps its streams (its
    registration has a ``continuation_path``): it says where the stream
    stands, and checks that a reopened stream continues it."""

    @property
    def cursor(self) -> tuple[str, str] | None:
        """``(stream id, id of the last event decoded)``, once both are known."""
        ...

    def continue_after(self, stream_id: str, after: str | None) -> None:
        """What is decoded next is stream ``stream_id`` after its event
        ``after`` (``None``: from its first event, into a fresh codec); from
        then on each event must continue it, or ``decode`` raises
        :class:`~toolwire.errors.ContinuationMismatch`.

        Raises:
            UsageError: the codec does not stand at ``(stream_id, after)``.
        """
        ...


_REGISTRY: dict[str, WireDialect] = {}


def register(dialect: WireDialect) -> WireDialect:
    """Add a dialect to the registry (once per name); returns it.

    Raises:
        UsageError: a dialect of that name is already registered.
    """
    if dialect.name in _REGISTRY:
        raise UsageError(f"dialect {dialect.name!r} is already registered")
    _REGISTRY[dialect.name] = dialect
    return dialect


register(openai_chat.DIALECT)
register(openai_responses.DIALECT)
register(anthropic.DIALECT)
register(gemini.DIALECT)
register(ollama.DIALECT)
register(cohere.DIALECT)
register(bedrock.DIALECT)
register(bedrock_invoke.DIALECT)
register(gemini_interactions.DIALECT)

assert tuple(_REGISTRY) == DIALECTS, "one registered dialect per name of DIALECTS, in order"


def registered() -> tuple[WireDialect, ...]:
    """Every registered dialect, in the order of :data:`toolwire.types.DIALECTS`."""
    return tuple(_REGISTRY.values())


def wire_dialect(name: str) -> WireDialect:
    """The registered dialect called ``name``.

    Raises:
        UsageError: no dialect of that name.
    """
    try:
        return _REGISTRY[name]
    except KeyError:
        raise UsageError(
            f"unknown dialect {name!r}; expected one of: {', '.join(_REGISTRY)} or auto"
        ) from None


def dialect_for_path(path: str) -> WireDialect | None:
    """The dialect whose requests go to ``path``, or ``None`` for other endpoints."""
    for dialect in _REGISTRY.values():
        if dialect.path_matches(path):
            return dialect
    return None


def codec_for(dialect: str) -> Codec:
    """A fresh codec for ``dialect`` (one per stream: codecs keep state)."""
    return wire_dialect(dialect).codec()
