"""The events a stream decodes to, the same for every provider.

Upper layers see text and reasoning as deltas, tool calls as
``ToolCallStarted`` -> ``ToolCallDelta``... -> ``ToolCallReady`` (or
``ToolCallInvalid``), and never have to re-assemble fragments themselves: a
``ToolCallReady`` is only emitted for a call that is provably complete.

``ToolCallDelta.partial`` is the arguments parsed so far. It is computed on
first access by an incremental parser that only ever moves forward, so reading
the partial value of every delta in order costs time linear in the argument
size. Reading an older delta after a newer one is still correct (the prefix is
parsed again). The value returned may be updated in place by later deltas of
the same call: copy it if you keep it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from toolwire.content import Audio, Document, Image
from toolwire.errors import ToolwireError
from toolwire.types import (
    FinishReason,
    InvalidToolCall,
    ProviderNotice,
    RefusalDetails,
    ServerToolCall,
    ToolCall,
    UnknownItem,
    Usage,
)

__all__ = [
    "ChoiceFinished",
    "Event",
    "PartReceived",
    "ProviderNotice",
    "ReasoningDelta",
    "ServerToolCallReady",
    "StreamEnded",
    "StreamFailed",
    "TextDelta",
    "ToolCallDelta",
    "ToolCallInvalid",
    "ToolCallReady",
    "ToolCallStarted",
    "UnknownItem",
    "UsageReported",
]


class PartialSource(Protocol):
    """Where a ``ToolCallDelta`` gets its partial value from (internal seam)."""

    def partial_at(self, mark: int) -> Any:
        """The arguments parsed up to fragment number ``mark``."""
        ...


@dataclass(frozen=True, slots=True, kw_only=True)
class TextDelta:
    """A piece of the answer text."""

    kind: Literal["text_delta"] = "text_delta"
    choice: int = 0
    text: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ReasoningDelta:
    """A piece of the model's reasoning ("thinking"), never part of the text."""

    kind: Literal["reasoning_delta"] = "reasoning_delta"
    choice: int = 0
    text: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolCallStarted:
    """A new tool call began. ``name`` may still be empty: a few providers send
    it after the arguments."""

    kind: Literal["tool_call_started"] = "tool_call_started"
    choice: int = 0
    index: int
    """Position of the call among its choice's calls (0, 1, 2... in order)."""
    id: str | None
    name: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolCallDelta:
    """A fragment of a tool call's arguments (JSON text as the model wrote it)."""

    kind: Literal["tool_call_delta"] = "tool_call_delta"
    choice: int = 0
    index: int
    id: str | None
    name: str
    delta: str
    """The new piece of argument text (empty for providers that stream values)."""
    source: PartialSource | None = field(default=None, repr=False, compare=False)
    mark: int = field(default=0, repr=False, compare=False)

    @property
    def partial(self) -> Any:
        """The arguments parsed so far: complete keys and values, strings as far
        as they have arrived, numbers and literals only once complete."""
        source = self.source
        return {} if source is None else source.partial_at(self.mark)


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolCallReady:
    """A complete tool call with parsed arguments: safe to execute."""

    kind: Literal["tool_call_ready"] = "tool_call_ready"
    choice: int = 0
    call: ToolCall

    @property
    def index(self) -> int:
        return self.call.index

    @property
    def id(self) -> str:
        return self.call.id

    @property
    def name(self) -> str:
        return self.call.name


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolCallInvalid:
    """A complete tool call whose arguments could not be parsed: never executed."""

    kind: Literal["tool_call_invalid"] = "tool_call_invalid"
    choice: int = 0
    call: InvalidToolCall


@dataclass(frozen=True, slots=True, kw_only=True)
class ServerToolCallReady:
    """A tool call the provider executes itself (shown, never run here)."""

    kind: Literal["server_tool_call_ready"] = "server_tool_call_ready"
    choice: int = 0
    call: ServerToolCall


@dataclass(frozen=True, slots=True, kw_only=True)
class PartReceived:
    """Media the model made, whole: an image (a Gemini ``inlineData`` part,
    a Responses ``image_generation_call`` result) or audio. It is a part of
    the answer's message too (``AssistantMessage.parts``)."""

    kind: Literal["part_received"] = "part_received"
    choice: int = 0
    part: Image | Document | Audio


@dataclass(frozen=True, slots=True, kw_only=True)
class UsageReported:
    """Token usage (providers may report it more than once; the last wins)."""

    kind: Literal["usage_reported"] = "usage_reported"
    usage: Usage


@dataclass(frozen=True, slots=True, kw_only=True)
class ChoiceFinished:
    """The model finished a choice, with a normalized reason."""

    kind: Literal["choice_finished"] = "choice_finished"
    choice: int = 0
    reason: FinishReason
    raw_reason: str | None = None
    """The provider's own word for it."""
    refusal: RefusalDetails | None = None
    """Why the model refused (``reason == "refusal"``), where the provider said."""


@dataclass(frozen=True, slots=True, kw_only=True)
class StreamEnded:
    """The provider's end-of-stream marker was seen (``[DONE]``,
    ``message_stop``, ``response.completed``...)."""

    kind: Literal["stream_ended"] = "stream_ended"


@dataclass(frozen=True, slots=True, kw_only=True)
class StreamFailed:
    """The stream failed: a provider error event, malformed data, or a cut.
    Nothing after this event is decoded."""

    kind: Literal["stream_failed"] = "stream_failed"
    error: ToolwireError


Event = (
    TextDelta
    | ReasoningDelta
    | ToolCallStarted
    | ToolCallDelta
    | ToolCallReady
    | ToolCallInvalid
    | ServerToolCallReady
    | PartReceived
    | UsageReported
    | ChoiceFinished
    | StreamEnded
    | StreamFailed
    | UnknownItem
    | ProviderNotice
)


# Hot-path constructors. Frozen dataclasses build through
# ``object.__setattr__``, which costs more than the rest of decoding a chunk;
# filling the slots through their descriptors gives the same object several
# times faster. Every field is set, so these are equal to ``cls(...)``.


def _setters(cls: type[Any], *names: str) -> tuple[Any, ...]:
    return tuple(cls.__dict__[name].__set__ for name in names)


_TXT = _setters(TextDelta, "kind", "choice", "text")
_RSN = _setters(ReasoningDelta, "kind", "choice", "text")


class _DeltaSlots:
    """The slots of :class:`ToolCallDelta`, in its order, without its frozen
    ``__setattr__``: filled by plain attribute stores (the interpreter's
    fastest), then given its class, which the same layout allows. The
    commonest event of a stream, built a third faster than through the
    descriptors."""

    __slots__ = ToolCallDelta.__slots__


def new_tool_call_delta(
    choice: int,
    index: int,
    id: str | None,
    name: str,
    delta: str,
    source: PartialSource | None,
    mark: int,
    _slots: Any = _DeltaSlots,
    _cls: Any = ToolCallDelta,
) -> ToolCallDelta:
    """``ToolCallDelta(...)`` for the hot path (internal)."""
    obj = _slots()
    obj.kind = "tool_call_delta"
    obj.choice = choice
    obj.index = index
    obj.id = id
    obj.name = name
    obj.delta = delta
    obj.source = source
    obj.mark = mark
    obj.__class__ = _cls
    out: ToolCallDelta = obj
    return out


def new_text_delta(
    choice: int, text: str, _new: Any = object.__new__, _s: tuple[Any, ...] = _TXT
) -> TextDelta:
    """``TextDelta(...)`` for the hot path (internal)."""
    obj: TextDelta = _new(TextDelta)
    _s[0](obj, "text_delta")
    _s[1](obj, choice)
    _s[2](obj, text)
    return obj


def new_reasoning_delta(
    choice: int, text: str, _new: Any = object.__new__, _s: tuple[Any, ...] = _RSN
) -> ReasoningDelta:
    """``ReasoningDelta(...)`` for the hot path (internal)."""
    obj: ReasoningDelta = _new(ReasoningDelta)
    _s[0](obj, "reasoning_delta")
    _s[1](obj, choice)
    _s[2](obj, text)
    return obj
