"""Normalized conversation messages, the same for every provider.

Theory of operation: a conversation is a list of four immutable records —
:class:`SystemMessage`, :class:`UserMessage`, :class:`AssistantMessage` and
:class:`ToolResultMessage` — that the agent loop, the journal and the CLI
speak. Each provider translates them into its own wire shape when it builds a
request (``toolwire.providers``) and nothing above the providers ever sees a
wire shape.

What a provider needs to see again but toolwire does not interpret (thinking
signatures, Gemini thought signatures, Responses reasoning items, DeepSeek
``reasoning_content``, Anthropic server-tool blocks, citations, compaction
and containers, Gemini built-in tool parts) travels in
:attr:`AssistantMessage.provider_state` as opaque JSON objects, exactly as
the stream decoder or ``parse_response`` left them in
:attr:`~toolwire.types.ChoiceResult.provider_state`. An item that stood
between the text and the calls says where (``after_tool_calls``,
``after_text``) and goes back there. Each provider sends back only the item
types of its own dialect (``thinking``, ``thought_signature``,
``reasoning``...), so a conversation can move between providers without
leaking one provider's signatures into another's request.

``to_dict()`` / :func:`message_from_dict` give a JSON shape for the journal.
Decoding a malformed record raises :class:`~toolwire.errors.UsageError`,
never a bare ``KeyError``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

from toolwire.content import (
    CachePoint,
    ContentItem,
    ContentPart,
    cache_points_in,
    content_from_dicts,
    content_parts,
    content_text,
    content_to_dicts,
    is_part,
    normalize_content,
    output_part,
)
from toolwire.errors import ContentError, UsageError
from toolwire.types import ChoiceResult, InvalidToolCall, ToolCall

__all__ = [
    "AssistantMessage",
    "Message",
    "Prompt",
    "SystemMessage",
    "ToolResultMessage",
    "UserMessage",
    "message_from_dict",
]


def _str_field(data: Mapping[str, Any], key: str, *, default: str | None = None) -> str:
    value = data.get(key, default)
    if not isinstance(value, str):
        raise UsageError(f"message field {key!r} must be a string, got {type(value).__name__}")
    return value


def _check_kind(data: Mapping[str, Any], kind: str) -> None:
    if not isinstance(data, Mapping):
        raise UsageError(f"a message must be a JSON object, got {type(data).__name__}")
    if data.get("kind") != kind:
        raise UsageError(f"expected a {kind!r} message, got kind={data.get('kind')!r}")


@dataclass(frozen=True, slots=True)
class SystemMessage:
    """Instructions for the model (``system``/``instructions``/``systemInstruction``)."""

    text: str
    """The instructions."""
    kind: Literal["system"] = field(default="system", init=False)
    cache: CachePoint | None = None
    """A prompt-cache breakpoint after the instructions (see :class:`~toolwire.CachePoint`)."""

    def to_dict(self) -> dict[str, Any]:
        """The journal's JSON shape (``cache`` only when set)."""
        out: dict[str, Any] = {"kind": self.kind, "text": self.text}
        if self.cache is not None:
            out["cache"] = self.cache.to_dict()
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> SystemMessage:
        """Rebuild from :meth:`to_dict` output.

        Raises:
            UsageError: the record is not a system message.
        """
        _check_kind(data, "system")
        cache = data.get("cache")
        if cache is not None and not isinstance(cache, Mapping):
            raise UsageError("a system message's 'cache' must be an object")
        try:
            point = CachePoint.from_dict(cache) if cache is not None else None
        except ContentError as exc:
            raise UsageError(f"message field 'cache': {exc}") from exc
        return cls(_str_field(data, "text"), cache=point)


@dataclass(frozen=True, slots=True)
class UserMessage:
    """What the user said: text, or any sequence of text and content parts.

    ``UserMessage("hi")`` and ``UserMessage(content=["Describe this chart.",
    Image.from_path("chart.png")])`` both work; ``text`` is then the text
    items joined by newlines, and ``content`` always holds every item in
    order (``("hi",)`` for plain text).
    """

    text: str = ""
    """The user's words (the text items of ``content``)."""
    content: tuple[ContentItem, ...] = ()
    """Every item in order: text (``str``) and :class:`~toolwire.Image`,
    :class:`~toolwire.Document`, :class:`~toolwire.Audio` parts."""
    kind: Literal["user"] = field(default="user", init=False)

    def __post_init__(self) -> None:
        if not isinstance(self.text, str):
            raise UsageError(
                f"a user message's text must be a string, got {type(self.text).__name__}"
            )
        given: object = self.content
        if isinstance(given, str):
            raise UsageError("give a user message's text as text=, or content=[...] for parts")
        items = normalize_content(self.content)
        if items and self.text and content_text(items) != self.text:
            raise UsageError("give a user message text= or content=[...], not both")
        if not items:
            items = (self.text,) if self.text else ()
        object.__setattr__(self, "content", items)
        object.__setattr__(self, "text", content_text(items))

    @property
    def parts(self) -> tuple[ContentPart, ...]:
        """The content parts (images, documents, audio), without the text."""
        return content_parts(self.content)

    @property
    def cache_points(self) -> tuple[CachePoint, ...]:
        """The prompt-cache breakpoints in ``content``."""
        return cache_points_in(self.content)

    def to_dict(self) -> dict[str, Any]:
        """The journal's JSON shape (``content`` only when it holds parts:
        a text message keeps the shape older records have)."""
        out: dict[str, Any] = {"kind": self.kind, "text": self.text}
        if self.parts or self.cache_points:
            out["content"] = content_to_dicts(self.content)
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> UserMessage:
        """Rebuild from :meth:`to_dict` output.

        Raises:
            UsageError: the record is not a user message.
        """
        _check_kind(data, "user")
        if "content" in data:
            return cls(content=_content_field(data))
        return cls(_str_field(data, "text"))


def _content_field(data: Mapping[str, Any], key: str = "content") -> tuple[ContentItem, ...]:
    try:
        return content_from_dicts(data.get(key))
    except ContentError as exc:
        raise UsageError(f"message field {key!r}: {exc}") from exc


def _call_to_dict(call: ToolCall | InvalidToolCall) -> dict[str, Any]:
    if isinstance(call, InvalidToolCall):
        return {
            "type": "invalid",
            "id": call.id,
            "name": call.name,
            "raw_arguments": call.raw_arguments,
            "error": call.error,
            "index": call.index,
            "minted_id": call.minted_id,
        }
    return {
        "type": "call",
        "id": call.id,
        "name": call.name,
        "arguments": call.arguments,
        "raw_arguments": call.raw_arguments,
        "repaired": call.repaired,
        "index": call.index,
        "minted_id": call.minted_id,
        **({"asynchronous": True} if call.asynchronous else {}),
    }


def _call_from_dict(data: Any) -> ToolCall | InvalidToolCall:
    if not isinstance(data, Mapping):
        raise UsageError(f"a tool call must be a JSON object, got {type(data).__name__}")
    index = data.get("index", 0)
    minted = data.get("minted_id", False)
    if not isinstance(index, int) or not isinstance(minted, bool):
        raise UsageError("tool call 'index' must be an integer and 'minted_id' a boolean")
    if data.get("type", "call") == "invalid":
        return InvalidToolCall(
            id=_str_field(data, "id"),
            name=_str_field(data, "name"),
            raw_arguments=_str_field(data, "raw_arguments", default=""),
            error=_str_field(data, "error"),
            index=index,
            minted_id=minted,
        )
    arguments = data.get("arguments", {})
    repaired = data.get("repaired", False)
    if not isinstance(arguments, dict) or not isinstance(repaired, bool):
        raise UsageError("tool call 'arguments' must be an object and 'repaired' a boolean")
    return ToolCall(
        id=_str_field(data, "id"),
        name=_str_field(data, "name"),
        arguments=arguments,
        raw_arguments=_str_field(data, "raw_arguments", default=""),
        repaired=repaired,
        index=index,
        minted_id=minted,
        asynchronous=data.get("asynchronous") is True,
    )


@dataclass(frozen=True, slots=True)
class AssistantMessage:
    """What the model said: text, reasoning, tool calls, and opaque state.

    ``tool_calls`` may hold :class:`~toolwire.types.InvalidToolCall` records
    too: the model did make those calls (with arguments that did not parse),
    and every provider requires the call to be in the history before the
    error result that answers it.
    """

    text: str = ""
    """The answer text (may be empty when the model only calls tools)."""
    reasoning: str = ""
    """The model's visible reasoning; informative, not sent back by itself."""
    tool_calls: tuple[ToolCall | InvalidToolCall, ...] = ()
    """The calls the model made, in order."""
    provider_state: tuple[dict[str, Any], ...] = ()
    """Opaque items the provider must see again (see the module docstring)."""
    kind: Literal["assistant"] = field(default="assistant", init=False)

    @property
    def parts(self) -> tuple[ContentPart, ...]:
        """The images (or audio, documents) the model made, read from its
        provider state: Gemini ``inlineData`` parts, Responses
        ``image_generation_call`` results. The items stay in
        ``provider_state`` as they came."""
        found = (output_part(item) for item in self.provider_state)
        return tuple(part for part in found if part is not None)

    def to_dict(self) -> dict[str, Any]:
        """The journal's JSON shape."""
        return {
            "kind": self.kind,
            "text": self.text,
            "reasoning": self.reasoning,
            "tool_calls": [_call_to_dict(c) for c in self.tool_calls],
            "provider_state": [dict(item) for item in self.provider_state],
        }

    @classmethod
    def from_choice(cls, choice: ChoiceResult) -> AssistantMessage:
        """The history entry for what a model produced (one decoded choice).

        Valid and invalid calls are merged back into stream order, and the
        provider state is carried over, so the next request shows the model
        exactly what it did.
        """
        calls: list[ToolCall | InvalidToolCall] = [*choice.tool_calls, *choice.invalid_tool_calls]
        calls.sort(key=lambda call: call.index)
        return cls(
            text=choice.text,
            reasoning=choice.reasoning,
            tool_calls=tuple(calls),
            provider_state=choice.provider_state,
        )

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> AssistantMessage:
        """Rebuild from :meth:`to_dict` output.

        Raises:
            UsageError: the record is not a well-formed assistant message.
        """
        _check_kind(data, "assistant")
        calls = data.get("tool_calls", [])
        state = data.get("provider_state", [])
        if not isinstance(calls, list) or not isinstance(state, list):
            raise UsageError("'tool_calls' and 'provider_state' must be lists")
        if not all(isinstance(item, dict) for item in state):
            raise UsageError("every 'provider_state' item must be a JSON object")
        return cls(
            text=_str_field(data, "text", default=""),
            reasoning=_str_field(data, "reasoning", default=""),
            tool_calls=tuple(_call_from_dict(c) for c in calls),
            provider_state=tuple(dict(item) for item in state),
        )


@dataclass(frozen=True, slots=True)
class ToolResultMessage:
    """The result of one tool call, sent back to the model."""

    call_id: str
    """The id of the call this answers (the provider's id, or toolwire's)."""
    name: str
    """The tool's name (Gemini matches results by name)."""
    content: str
    """What the model reads: the result, or a structured error."""
    is_error: bool = False
    """True when the call failed; providers that can flag errors do so."""
    parts: tuple[ContentItem, ...] = ()
    """The whole result in order, text and parts, when it holds images,
    documents or audio (``content`` is then its text); empty for a
    text-only result."""
    kind: Literal["tool_result"] = field(default="tool_result", init=False)

    def __post_init__(self) -> None:
        items = normalize_content(self.parts)
        object.__setattr__(self, "parts", items if content_parts(items) else ())

    def to_dict(self) -> dict[str, Any]:
        """The journal's JSON shape (``parts`` only when there are any)."""
        out: dict[str, Any] = {
            "kind": self.kind,
            "call_id": self.call_id,
            "name": self.name,
            "content": self.content,
            "is_error": self.is_error,
        }
        if self.parts:
            out["parts"] = content_to_dicts(self.parts)
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ToolResultMessage:
        """Rebuild from :meth:`to_dict` output.

        Raises:
            UsageError: the record is not a well-formed tool result.
        """
        _check_kind(data, "tool_result")
        is_error = data.get("is_error", False)
        if not isinstance(is_error, bool):
            raise UsageError("'is_error' must be a boolean")
        return cls(
            call_id=_str_field(data, "call_id"),
            name=_str_field(data, "name"),
            content=_str_field(data, "content"),
            is_error=is_error,
            parts=_content_field(data, "parts") if "parts" in data else (),
        )


Message = SystemMessage | UserMessage | AssistantMessage | ToolResultMessage
"""Any message of a conversation."""

Prompt: TypeAlias = "str | Sequence[Message] | Sequence[ContentItem]"
"""What a run starts from: text, a conversation, or the items of one user
message (``["Describe this chart.", Image.from_path("chart.png")]``)."""


def prompt_messages(prompt: Prompt) -> list[Message]:
    """The messages a :data:`Prompt` says: one user message for text or for
    a sequence of text and parts, else the messages given.

    Raises:
        UsageError: a sequence mixing messages with text or parts.
    """
    if isinstance(prompt, str):
        return [UserMessage(prompt)]
    given = list(prompt)
    items = [item for item in given if isinstance(item, (str, CachePoint)) or is_part(item)]
    if not items:
        return [
            m  # type: ignore[misc]
            for m in given
            if not isinstance(m, (str, CachePoint)) and not is_part(m)
        ]
    if len(items) != len(given):
        raise UsageError(
            "a prompt is text, a list of messages, or a list of text and parts; not a mix"
        )
    return [UserMessage(content=items)]  # type: ignore[arg-type]


_BY_KIND: dict[str, Any] = {
    "system": SystemMessage,
    "user": UserMessage,
    "assistant": AssistantMessage,
    "tool_result": ToolResultMessage,
}


def message_from_dict(data: Mapping[str, Any]) -> Message:
    """Rebuild any message from its ``to_dict()`` shape, dispatching on ``kind``.

    Raises:
        UsageError: the record is not a message toolwire knows.
    """
    if not isinstance(data, Mapping):
        raise UsageError(f"a message must be a JSON object, got {type(data).__name__}")
    cls = _BY_KIND.get(data.get("kind"))  # type: ignore[arg-type]
    if cls is None:
        raise UsageError(f"unknown message kind {data.get('kind')!r}")
    message: Message = cls.from_dict(data)
    return message
