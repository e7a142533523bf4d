"""How each official SDK's stream objects map back to its dialect's wire payloads.

``toolwire.adapters`` reads an SDK's stream through the dialect's codec: each
dialect that has an adapter names its :class:`Shape` (``sdk_shape`` of its
:class:`~toolwire.stream.codecs.WireDialect`), which turns the SDK's objects
back into the payloads the codec reads.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from toolwire.errors import UsageError

__all__ = ["AnthropicShape", "OpenAIChatShape", "OpenAIResponsesShape", "Shape", "type_first"]

# -- from SDK objects to wire payloads ---------------------------------------------


def _dump(obj: object, exclude: frozenset[str] | None = None) -> dict[str, Any] | None:
    """The wire payload of an SDK model (or a dict), or ``None`` if ``obj`` is neither."""
    if isinstance(obj, Mapping):
        return dict(obj)
    model_dump = getattr(obj, "model_dump", None)
    if callable(model_dump):
        # exclude_unset keeps exactly the keys the provider sent; warnings are
        # off because the SDKs build unknown block types into a sibling model
        # (an ``mcp_tool_use`` block as a ``TextBlock``), which pydantic would
        # otherwise warn about while still dumping every field as received.
        value = model_dump(
            mode="json", by_alias=True, exclude_unset=True, exclude=exclude, warnings=False
        )
    else:
        to_dict = getattr(obj, "to_dict", None)
        if not callable(to_dict):
            return None
        value = to_dict()
    return value if isinstance(value, dict) else None


def type_first(payload: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """``(event name, payload)`` with ``type`` as the first key, where the wire
    has it: pydantic dumps fields in declaration order (``type`` last), and
    the codecs spot their hottest events by the payload's first bytes."""
    kind = payload.get("type")
    if not isinstance(kind, str):
        return "message", payload
    if next(iter(payload)) != "type":
        payload = {"type": kind, **payload}
    return kind, payload


class Shape:
    """How one SDK's stream objects map back to the dialect's payloads."""

    dialect = ""
    end_marker: str | None = None
    """The end marker the SDK swallows, which the adapter must watch for itself
    (the data of the SDK's own SSE events)."""
    expects = ""

    def payload(self, obj: object) -> tuple[str, dict[str, Any]] | None:
        """``(event name, payload)`` of ``obj``, or ``None`` for a helper's
        derived event that carries nothing new."""
        raise NotImplementedError

    def unknown(self, obj: object) -> UsageError:
        return UsageError(
            f"{self.dialect} adapter: expected {self.expects} or a dict, got {type(obj).__name__}"
        )


_CHAT_DERIVED = frozenset(
    {
        "content.delta",
        "content.done",
        "refusal.delta",
        "refusal.done",
        "tool_calls.function.arguments.delta",
        "tool_calls.function.arguments.done",
        "logprobs.content.delta",
        "logprobs.content.done",
        "logprobs.refusal.delta",
        "logprobs.refusal.done",
    }
)


class OpenAIChatShape(Shape):
    dialect = "openai-chat"
    end_marker = "[DONE]"
    expects = "ChatCompletionChunk objects"

    def payload(self, obj: object) -> tuple[str, dict[str, Any]] | None:
        if not isinstance(obj, Mapping) and not hasattr(obj, "choices"):
            # An event of the chat.completions.stream() helper: the raw chunk
            # is inside the "chunk" event; the others are derived from it.
            kind = getattr(obj, "type", None)
            if kind == "chunk" and hasattr(obj, "chunk"):
                obj = obj.chunk
            elif kind in _CHAT_DERIVED:
                return None
        payload = _dump(obj)
        if payload is None:
            raise self.unknown(obj)
        return "message", payload


class OpenAIResponsesShape(Shape):
    dialect = "openai-responses"
    expects = "Responses stream events"
    _EXCLUDE = frozenset({"snapshot"})  # added by the responses.stream() helper

    def payload(self, obj: object) -> tuple[str, dict[str, Any]] | None:
        payload = _dump(obj, None if isinstance(obj, Mapping) else self._EXCLUDE)
        if payload is None:
            raise self.unknown(obj)
        return type_first(payload)


_ANTHROPIC_DERIVED = frozenset({"text", "citation", "thinking", "signature", "input_json"})
# What the messages.stream() helper adds to raw events: the finished block
# and message snapshots, which are not part of the wire payload.
_ANTHROPIC_EXTRAS = {
    "content_block_stop": frozenset({"content_block"}),
    "message_stop": frozenset({"message"}),
}


class AnthropicShape(Shape):
    dialect = "anthropic-messages"
    expects = "Messages stream events"

    def payload(self, obj: object) -> tuple[str, dict[str, Any]] | None:
        if isinstance(obj, Mapping):
            payload = _dump(obj)
        else:
            kind = getattr(obj, "type", None)
            if kind in _ANTHROPIC_DERIVED:
                return None
            payload = _dump(obj, _ANTHROPIC_EXTRAS.get(kind) if isinstance(kind, str) else None)
        if payload is None:
            raise self.unknown(obj)
        return type_first(payload)
