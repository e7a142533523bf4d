"""Value types of a decoded stream: tool calls, usage, per-choice results.

Plain frozen records, no I/O. ``to_dict()`` gives the JSON shape used by
``toolwire inspect --json`` and by the journal.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias, get_args

from toolwire import _compat
from toolwire.errors import ToolwireError

__all__ = [
    "DIALECTS",
    "FINISH_REASONS",
    "PROVIDER_DIALECTS",
    "ChoiceResult",
    "Dialect",
    "FinishReason",
    "IncompleteToolCall",
    "InvalidToolCall",
    "ProviderDialect",
    "RefusalDetails",
    "ServerToolCall",
    "StreamResult",
    "ToolCall",
    "Usage",
    "as_finish_reason",
]


Dialect: TypeAlias = Literal[
    "openai-chat",
    "openai-responses",
    "anthropic-messages",
    "gemini",
    "ollama-ndjson",
    "cohere-v2",
    "bedrock-converse",
    "bedrock-invoke",
    "gemini-interactions",
]
"""A wire dialect: the format of a provider's requests, streams and responses.
``openai-chat`` is Chat Completions (OpenAI and every compatible server),
``openai-responses`` the Responses API, ``anthropic-messages`` Anthropic's
Messages, ``gemini`` Google's ``generateContent``, ``ollama-ndjson`` Ollama's
native chat stream, ``cohere-v2`` Cohere's v2 chat stream, ``bedrock-converse``
Amazon Bedrock's Converse API, ``bedrock-invoke`` Bedrock's InvokeModel API
for Claude (Anthropic's Messages in AWS's event stream), ``gemini-interactions``
Gemini's Interactions API. The names are written here for type checkers
(and the subset of them in :data:`ProviderDialect`); everything else about a
dialect is its registration (:mod:`toolwire.stream.codecs`), which is checked
against them when it is built."""

DIALECTS: tuple[Dialect, ...] = get_args(Dialect)
"""Every built-in :data:`Dialect`: the streams toolwire decodes. The
registry (:func:`toolwire.stream.codecs.registered`) is the truth at run time:
it holds these, in this order (checked when it is built), and any dialect
registered since."""

ProviderDialect: TypeAlias = Literal[
    "openai-chat",
    "openai-responses",
    "anthropic-messages",
    "gemini",
    "bedrock-converse",
    "bedrock-invoke",
    "gemini-interactions",
]
"""The dialects toolwire also writes: requests, tool schemas, whole responses
(one :mod:`toolwire.providers` class each)."""

PROVIDER_DIALECTS: tuple[ProviderDialect, ...] = get_args(ProviderDialect)
"""Every built-in :data:`ProviderDialect`: the registered dialects with a
``provider`` (checked when the registry is built)."""

FinishReason: TypeAlias = Literal[
    "stop",
    "tool_calls",
    "length",
    "content_filter",
    "refusal",
    "error",
    "paused",
    "steered",
    "other",
]
"""Why a choice ended, in one vocabulary for every dialect; the provider's own
word is kept beside it (``raw_finish_reason``, ``ChoiceFinished.raw_reason``):

- ``stop``: the model finished its answer (``stop``, ``end_turn``, ``STOP``,
  vLLM's ``eos``, Cohere's ``COMPLETE``...);
- ``tool_calls``: the model called tools (also when the provider said ``stop``);
- ``length``: a token limit cut the output (``length``, ``max_tokens``...);
- ``content_filter``: a safety filter stopped it;
- ``refusal``: the model refused (Anthropic's ``stop_reason: "refusal"``, a
  Responses ``refusal`` part): the choice's :attr:`~ChoiceResult.refusal`
  says why, where the provider said (Anthropic's ``stop_details``);
- ``error``: the provider failed to produce a valid turn (Gemini's
  ``MALFORMED_FUNCTION_CALL``, Cohere's ``ERROR``, a failed response);
- ``paused``: the provider paused a long turn (Anthropic's ``pause_turn``,
  while its server tools work): sending the turn back as it is continues it,
  which the :class:`~toolwire.Agent` does by itself; Gemini Interactions'
  ``requires_continuation`` is one too, continued with its
  ``continuation_token``;
- ``steered``: the provider cut the response at a safe point to take steering
  input (Responses ``incomplete`` with reason ``steered``); a successor
  response carries on, and the :class:`~toolwire.Agent` continues the turn
  as it continues a paused one;
- ``other``: anything else: read the raw value.
"""

FINISH_REASONS: tuple[FinishReason, ...] = (
    "stop",
    "tool_calls",
    "length",
    "content_filter",
    "refusal",
    "error",
    "paused",
    "steered",
    "other",
)
"""Every :data:`FinishReason`."""


def as_finish_reason(value: object) -> FinishReason | None:
    """``value`` as a :data:`FinishReason` (a stored word toolwire no longer
    uses is ``"other"``); ``None`` for no reason at all."""
    if not isinstance(value, str) or not value:
        return None
    for reason in FINISH_REASONS:
        if value == reason:
            return reason
    return "other"


@dataclass(frozen=True, slots=True, kw_only=True)
class RefusalDetails:
    """Why the model refused, as the provider said it (Anthropic's
    ``stop_details`` of ``type: "refusal"``)."""

    category: str | None = None
    """The policy category (``"cyber"``, ``"bio"``...), ``None`` when none applies."""
    explanation: str | None = None
    """A human-readable explanation, not guaranteed to be stable."""
    raw: dict[str, Any] = field(default_factory=dict[str, Any])
    """The details exactly as sent."""

    def to_dict(self) -> dict[str, Any]:
        return {"category": self.category, "explanation": self.explanation}


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolCall:
    """A complete tool call whose arguments parsed to a JSON object.

    Only calls that are provably complete become ``ToolCall``; a call cut off by
    the end of a stream is an :class:`IncompleteToolCall` instead.
    """

    id: str
    """The provider's call id, or one minted by toolwire where it sends none."""
    name: str
    """The tool's name, taken once (never the concatenation of repeats)."""
    arguments: dict[str, Any]
    """The parsed arguments (``{}`` for empty, ``null`` or absent arguments)."""
    raw_arguments: str = ""
    """The arguments exactly as streamed (JSON text), before any repair."""
    repaired: bool = False
    """True when the raw text needed an unambiguous repair to parse."""
    index: int = 0
    """Position of this call among the calls of its choice, in stream order."""
    minted_id: bool = False
    """True when the provider sent no id and toolwire made one up."""
    asynchronous: bool = False
    """True when the provider marks the call asynchronous (a Responses
    function tool declared ``async: true``, its call ``async: true``): the
    model keeps streaming while it runs, and its result is delivered later."""

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape of ``inspect --json``."""
        return {
            "id": self.id,
            "name": self.name,
            "arguments": self.arguments,
            "repaired": self.repaired,
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class InvalidToolCall:
    """A complete tool call whose arguments are not a JSON object and could not
    be repaired without guessing. It is never run; the agent sends ``error``
    back to the model so that it can correct itself."""

    id: str
    name: str
    raw_arguments: str
    error: str
    """What is wrong with the arguments, for the developer and the model."""
    index: int = 0
    minted_id: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "name": self.name,
            "raw_arguments": self.raw_arguments,
            "error": self.error,
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class IncompleteToolCall:
    """A tool call the stream started but never finished. Never executed."""

    id: str | None
    name: str | None
    raw_arguments: str
    index: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "name": self.name, "raw_arguments": self.raw_arguments}


@dataclass(frozen=True, slots=True, kw_only=True)
class ServerToolCall:
    """A tool call the provider runs itself (Anthropic ``server_tool_use``,
    ``mcp_tool_use``): shown for completeness, never executed by toolwire."""

    id: str
    name: str
    type: str
    arguments: dict[str, Any]
    raw_arguments: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "name": self.name, "type": self.type, "arguments": self.arguments}


@dataclass(frozen=True, slots=True, kw_only=True)
class Usage:
    """Token usage, normalized across providers, with the provider's own record.

    ``input_tokens`` counts *every* input token, cached or not, whatever the
    provider's own convention (Anthropic reports cache reads and writes apart
    from its ``input_tokens``; OpenAI and Gemini include them):
    ``cached_tokens`` and ``cache_write_tokens`` are parts of it.
    ``output_tokens`` counts every output token, reasoning included, and
    ``reasoning_tokens`` is a part of it: xAI's ``completion_tokens``, which
    leave reasoning out, get it added (see ``docs/cost.md``). Where a total
    is known, ``input_tokens + output_tokens == total_tokens``. Every count
    is a whole number from 0 to ``MAX_TOKEN_COUNT``; a provider's count that
    is not is a :class:`~toolwire.errors.TokenCountInvalid`.
    """

    input_tokens: int | None = None
    output_tokens: int | None = None
    total_tokens: int | None = None
    reasoning_tokens: int | None = None
    """The part of ``output_tokens`` spent on reasoning (thinking)."""
    cached_tokens: int | None = None
    """The part of ``input_tokens`` read from the provider's prompt cache."""
    cache_write_tokens: int | None = None
    """The part of ``input_tokens`` written to the prompt cache (Anthropic's
    ``cache_creation_input_tokens``), billed at its own rate."""
    cache_write_1h_tokens: int | None = None
    """The part of ``cache_write_tokens`` written at the 1-hour tier
    (Anthropic's ``cache_creation.ephemeral_1h_input_tokens``), billed at that
    tier's rate; the rest were written at the 5-minute tier."""
    raw: dict[str, Any] = field(default_factory=dict[str, Any])
    """The usage object as the provider sent it (last one wins)."""

    def __add__(self, other: Usage) -> Usage:
        def add(a: int | None, b: int | None) -> int | None:
            if a is None and b is None:
                return None
            return (a or 0) + (b or 0)

        return Usage(
            input_tokens=add(self.input_tokens, other.input_tokens),
            output_tokens=add(self.output_tokens, other.output_tokens),
            total_tokens=add(self.total_tokens, other.total_tokens),
            reasoning_tokens=add(self.reasoning_tokens, other.reasoning_tokens),
            cached_tokens=add(self.cached_tokens, other.cached_tokens),
            cache_write_tokens=add(self.cache_write_tokens, other.cache_write_tokens),
            cache_write_1h_tokens=add(self.cache_write_1h_tokens, other.cache_write_1h_tokens),
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "total_tokens": self.total_tokens,
            "reasoning_tokens": self.reasoning_tokens,
            "cached_tokens": self.cached_tokens,
            "cache_write_tokens": self.cache_write_tokens,
        } | (
            {"cache_write_1h_tokens": self.cache_write_1h_tokens}
            if self.cache_write_1h_tokens is not None
            else {}
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class ChoiceResult:
    """Everything one choice (``n`` > 1 gives several) produced."""

    index: int = 0
    text: str = ""
    reasoning: str = ""
    finish_reason: FinishReason | None = None
    """Why the choice ended (``None`` when the provider did not say)."""
    raw_finish_reason: str | None = None
    """The provider's own word for it."""
    tool_calls: tuple[ToolCall, ...] = ()
    invalid_tool_calls: tuple[InvalidToolCall, ...] = ()
    incomplete_tool_calls: tuple[IncompleteToolCall, ...] = ()
    server_tool_calls: tuple[ServerToolCall, ...] = ()
    provider_state: tuple[dict[str, Any], ...] = ()
    """Opaque items the provider needs to see again in the next request
    (thinking signatures, Gemini thought signatures, reasoning items)."""
    refusal: RefusalDetails | None = None
    """Why the model refused, when it did and the provider said
    (``finish_reason == "refusal"``)."""

    def to_dict(self) -> dict[str, Any]:
        out = {
            "index": self.index,
            "text": self.text,
            "reasoning": self.reasoning,
            "finish_reason": self.finish_reason,
            "tool_calls": [c.to_dict() for c in self.tool_calls],
            "invalid_tool_calls": [c.to_dict() for c in self.invalid_tool_calls],
            "incomplete_tool_calls": [c.to_dict() for c in self.incomplete_tool_calls],
            "server_tool_calls": [c.to_dict() for c in self.server_tool_calls],
        }
        if self.refusal is not None:
            out["refusal"] = self.refusal.to_dict()
        return out


# Public as toolwire.events.UnknownItem (an event); defined here because a
# StreamResult holds them too.
@dataclass(frozen=True, slots=True, kw_only=True)
class UnknownItem:
    """Something the provider sent that toolwire does not act on or keep.

    Nothing on the wire is dropped silently: every item, block, part or event
    of a stream becomes a typed event or call, provider state carried on the
    assistant message (and sent back in place), or this event (a
    :class:`StreamResult` holds them too, streamed or whole). It holds the
    payload exactly as sent, so an application can see it, log it or act on it,
    and a later toolwire can learn it. Decoding goes on after it; the payload is
    not sent back to the provider on the next request.
    """

    kind: Literal["unknown_item"] = "unknown_item"
    choice: int = 0
    dialect: str
    """The wire dialect that sent it (``"openai-responses"``...)."""
    type: str
    """The provider's own name for it: an output item's or block's ``type``,
    a stream event's ``type``, or a Gemini part's field (``"videoMetadata"``)."""
    payload: dict[str, Any]
    """The item, block, part or event as the provider sent it."""
    quirk: str
    """Why toolwire does not act on it, in one sentence."""


# Public as toolwire.events.ProviderNotice (an event), beside UnknownItem.
@dataclass(frozen=True, slots=True, kw_only=True)
class ProviderNotice:
    """Something the provider reported about the response, read and kept:
    the settings it applies to later responses (Responses
    ``configuration_update``), round-tripped reasoning it withheld from the
    model (``input_transformations``: a ``warning``), what became of a steer
    (``response.steer.accepted``, ``.failed``: a ``warning``, ``.pending``).
    What must go back is provider state too; the notice tells it."""

    kind: Literal["provider_notice"] = "provider_notice"
    choice: int = 0
    dialect: str
    type: str
    """The provider's own name for it (an item's ``type``, an event's, a field's)."""
    payload: dict[str, Any]
    """The item, event or field as the provider sent it."""
    message: str
    """What it means, in one sentence."""
    warning: bool = False
    """True when something was lost or refused (reasoning dropped, a steer failed)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class StreamResult:
    """The final reading of a stream: one :class:`ChoiceResult` per choice."""

    dialect: str
    """The :data:`Dialect` the response was read as."""
    choices: tuple[ChoiceResult, ...]
    usage: Usage | None = None
    error: ToolwireError | None = None
    """A provider error event or a protocol failure; ``None`` for a clean stream."""
    complete: bool = True
    """False when the stream ended before the provider's end marker."""
    model: str | None = None
    response_id: str | None = None
    unknown_items: tuple[UnknownItem, ...] = ()
    """What the provider sent that toolwire does not act on or keep, in the
    order it came (each also an event of a stream)."""
    notices: tuple[ProviderNotice, ...] = ()
    """What the provider reported about the response, in the order it came
    (each also an event of a stream)."""

    @property
    def api(self) -> str:
        """The former name of :attr:`dialect` (deprecated)."""
        _compat.renamed_argument("StreamResult", "api")
        return self.dialect

    @property
    def tool_calls(self) -> tuple[ToolCall, ...]:
        """The tool calls of choice 0 (the only choice unless ``n`` > 1)."""
        return self.choices[0].tool_calls if self.choices else ()

    @property
    def text(self) -> str:
        """The text of choice 0."""
        return self.choices[0].text if self.choices else ""

    def raise_for_error(self) -> None:
        """Raise :attr:`error` if the stream failed or was cut."""
        if self.error is not None:
            raise self.error

    def to_dict(self) -> dict[str, Any]:
        return {
            "dialect": self.dialect,
            "choices": [c.to_dict() for c in self.choices],
            "usage": self.usage.to_dict() if self.usage is not None else None,
            "error": self.error.to_dict() if self.error is not None else None,
            "unknown_items": [
                {"choice": u.choice, "type": u.type, "payload": u.payload}
                for u in self.unknown_items
            ],
        }
