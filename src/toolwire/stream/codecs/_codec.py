"""What a codec is: :class:`Codec`, and the protocol of each capability a
dialect may declare (:class:`~toolwire.stream.codecs.Capabilities`).

The decoder asks a dialect's declaration, never the codec, what a codec can
do; :func:`as_whole`, :func:`as_args_event` and :func:`as_continued` give a
codec as the protocol its dialect declares (the registry checked the codec
against it when the dialect was registered: :mod:`._checks`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, Protocol

from toolwire.stream.framing import FramingKind
from toolwire.stream.framing.eventstream import BytesMatcher
from toolwire.stream.framing.sse import EventMatcher
from toolwire.stream.parts import Part

__all__ = [
    "ArgsEventCodec",
    "Codec",
    "ContinuedCodec",
    "EventStreamArgsCodec",
    "WholeCodec",
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


class WholeCodec(Codec, Protocol):
    """A codec that reads whole (non-streamed) responses too (its dialect
    declares ``Capabilities(whole_responses=True)``)."""

    def decode_response(self, body: dict[str, Any]) -> list[Part]:
        """The parts the same response's stream would give."""
        ...


class ArgsEventCodec(Codec, Protocol):
    """A codec that reads its dialect's commonest event, the argument delta,
    by its exact text (Anthropic, OpenAI chat; see ``SSEDecoder.feed_matched``;
    its dialect declares ``Capabilities(args_events=True)``)."""

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

    def text_delta(self, m: re.Match[Any]) -> str | None:
        """The text of a matched event that is a text delta, as :meth:`decode`
        reads it; ``None`` for any other (an argument delta, or one only
        :meth:`decode` can read). Only a reader that matches text deltas too
        (Bedrock's) gives anything but ``None``."""
        ...

    def args_run(self, items: Sequence[Any], i: int) -> tuple[int, int, list[str], int] | None:
        """``(choice, index, fragments, next item)`` of the matched events from
        ``items[i]`` on that continue one call, as :meth:`args_delta` reads each
        (at least one); ``None`` when :meth:`args_delta` gives ``None`` for
        ``items[i]``."""
        ...


class EventStreamArgsCodec(ArgsEventCodec, Protocol):
    """An :class:`ArgsEventCodec` of a dialect streamed in AWS event streams
    (Bedrock Converse): the reader matches the argument deltas' messages."""

    args_event_type: str
    """The ``:event-type`` of the messages that hold argument deltas."""
    args_event_bytes: BytesMatcher
    """Matches such a message's payload bytes (see ``EventStreamDecoder.match_bytes``)."""


class ContinuedCodec(Codec, Protocol):
    """A codec of a dialect whose provider keeps its streams (its
    registration declares ``Capabilities(kept_streams=True)`` and has a
    ``continuation_path``): it says where the stream stands, and checks that
    a reopened stream continues it."""

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
