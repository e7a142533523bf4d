"""What codecs hand to the accumulator: provider-neutral pieces of a stream.

This module sits below both (and below the SDK adapters, which feed the
accumulator too): it imports nothing but the value types.

A codec turns one provider frame (an SSE event, an NDJSON line, a JSON array
element) into a list of parts. Parts are internal and mutable-free by
convention; the accumulator turns them into public events. Identity hints
(``id``, ``index``) are passed raw: the accumulator owns the rules that tell
calls apart, so every dialect gets the same, tested behaviour.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from toolwire.errors import ToolwireError
from toolwire.events import PartialSource
from toolwire.types import FinishReason, RefusalDetails, Usage

__all__ = [
    "DIALECT_KEY",
    "MISSING",
    "POSITION_KEY",
    "TEXT_POSITION_KEY",
    "ArgsPart",
    "CallDone",
    "CallPart",
    "ErrorPart",
    "FinishPart",
    "MetaPart",
    "Part",
    "ReasoningPart",
    "ServerCallPart",
    "StatePart",
    "StreamEndPart",
    "TextPart",
    "TrailerPart",
    "UnknownPart",
    "UsagePart",
]


POSITION_KEY = "after_tool_calls"
"""Key toolwire adds to a provider_state item that came *after* some tool
calls (interleaved thinking, reasoning items), so that it is sent back in the
same place: its value is how many calls came before it."""


DIALECT_KEY = "from_dialect"
"""Key toolwire adds to each provider_state item: the dialect that decoded
it (``"anthropic-messages"``...). Item types repeat across dialects
(``compaction`` in Anthropic and in Responses): a dialect sends back its own
items only, and items recorded without the key."""


TEXT_POSITION_KEY = "after_text"
"""Key toolwire adds beside :data:`POSITION_KEY` to an item that came after
some text (server-tool blocks between two texts, Gemini built-in tool
parts): how many characters of the choice's text came before it."""


class _Missing:
    __slots__ = ()

    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()
"""Marks an absent value where ``None`` is a legitimate one."""


@dataclass(slots=True)
class TextPart:
    text: str
    choice: int = 0


@dataclass(slots=True)
class ReasoningPart:
    text: str
    choice: int = 0


@dataclass(slots=True)
class CallPart:
    """A piece of a client tool call.

    Attributes:
        id: the provider's call id, if this piece carries one (``""`` and
            ``"null"`` count as none).
        index: the provider's raw index for the call (may be sparse, 1-based).
        name: the tool name, if carried (empty strings count as none).
        args: a fragment of the arguments' JSON text, appended.
        args_value: the arguments as an already-parsed value (Gemini, Ollama);
            replaces any text.
        args_final: the complete arguments text (Responses ``.done``); it is
            authoritative over the fragments seen so far.
        args_default: the value to use when no argument text arrives at all
            (Anthropic ``content_block_start.input``).
        partial: a structured partial value built by the codec (Vertex
            ``partialArgs``), read at ``mark`` by the delta this part causes.
        new: this piece opens a new call, whatever its id or index.
        done: this piece is the call's own end marker.
        cut: the provider says the call was cut before its end (a Responses
            item closed with ``status: "incomplete"``): it is incomplete,
            never ready nor invalid.
        asynchronous: the provider marks the call asynchronous (Responses
            ``async: true``): the model goes on while it runs.
        changed: what the call's end changed of it (``"call_id 'a' became
            'b'"``): the call is invalid, never a second call (or, already
            handed on, the stream fails).
    """

    choice: int = 0
    id: str | None = None
    index: int | None = None
    name: str | None = None
    args: str | None = None
    args_value: Any = MISSING
    args_final: str | None = None
    args_default: Any = MISSING
    partial: PartialSource | None = None
    mark: int = 0
    new: bool = False
    done: bool = False
    cut: bool = False
    changed: str | None = None
    asynchronous: bool = False


@dataclass(slots=True)
class ArgsPart:
    """A bare fragment of argument text for an existing call, found by its
    raw ``index`` (or the latest call when ``None``): by far the most common
    part, so it has its own type and a short path in the accumulator."""

    choice: int
    index: int | None
    args: str


@dataclass(slots=True)
class CallDone:
    """The end marker of the call at ``index`` (or the latest open call)."""

    choice: int = 0
    index: int | None = None


@dataclass(slots=True)
class ServerCallPart:
    """A complete provider-executed tool call."""

    id: str
    name: str
    type: str
    arguments: dict[str, Any]
    raw_arguments: str
    choice: int = 0


@dataclass(slots=True)
class FinishPart:
    reason: FinishReason
    raw_reason: str | None
    choice: int = 0
    refusal: RefusalDetails | None = None


@dataclass(slots=True)
class UsagePart:
    usage: Usage


@dataclass(slots=True)
class MetaPart:
    model: str | None = None
    response_id: str | None = None


@dataclass(slots=True)
class StatePart:
    """An opaque item the provider needs back in the next request."""

    item: dict[str, Any]
    choice: int = 0


@dataclass(slots=True)
class StreamEndPart:
    """The provider's end-of-stream marker."""


@dataclass(slots=True)
class TrailerPart:
    """A ``data: [DONE]`` line in a dialect whose own end marker is another
    event: a clean end after that event, a cut stream before it."""

    text: str = ""
    """The line's data as the stream sent it (for the error of a cut stream)."""


@dataclass(slots=True)
class ErrorPart:
    error: ToolwireError


@dataclass(slots=True)
class UnknownPart:
    """Something the codec does not act on or keep: an ``UnknownItem`` event."""

    dialect: str
    type: str
    payload: dict[str, Any]
    quirk: str
    choice: int = 0


@dataclass(slots=True)
class NoticePart:
    """Something the provider reported about the response: a ``ProviderNotice`` event."""

    dialect: str
    type: str
    payload: dict[str, Any]
    message: str
    warning: bool = False
    choice: int = 0


Part = (
    ArgsPart
    | TextPart
    | ReasoningPart
    | CallPart
    | CallDone
    | ServerCallPart
    | FinishPart
    | UsagePart
    | MetaPart
    | StatePart
    | StreamEndPart
    | TrailerPart
    | ErrorPart
    | UnknownPart
    | NoticePart
)
