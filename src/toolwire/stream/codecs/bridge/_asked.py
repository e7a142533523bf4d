"""What a client asked the bridge, in no dialect: the record every served
dialect's request is read into, and the helpers the readers share (with the
emulation server's: ``stream/codecs/_reading.py``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from toolwire.messages import AssistantMessage, Message
from toolwire.stream import jsonio
from toolwire.stream.codecs.request import ToolChoice
from toolwire.stream.codecs.tool_specs import PlainTool
from toolwire.types import InvalidToolCall, ToolCall

__all__ = ["Asked", "Calls", "count", "number", "parsed_call"]


@dataclass(frozen=True, slots=True)
class Asked:
    """One request to the bridge, read from its served dialect."""

    dialect: str
    """The served dialect it was written in."""
    model: str
    """The model the client named (the bridge's model map routes it)."""
    messages: tuple[Message, ...]
    tools: tuple[PlainTool, ...] = ()
    tool_choice: ToolChoice | None = None
    stream: bool = False
    max_tokens: int | None = None
    temperature: float | None = None
    include_usage: bool = False
    """An OpenAI Chat client asked for the usage chunk (``stream_options``)."""
    reasoning: str | None = None
    """The reasoning effort asked (``low``, ``medium``, ``high``), if any."""
    freeform: frozenset[str] = field(default_factory=frozenset[str])
    """The names of custom (freeform) tools: their input travels as ``{"input": text}``."""


def number(value: Any) -> float | None:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return value
    return None


def count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def parsed_call(call_id: str, name: str, arguments: Any, index: int) -> ToolCall | InvalidToolCall:
    """A call of the history: its arguments an object, or JSON text of one."""
    if isinstance(arguments, Mapping):
        return ToolCall(
            id=call_id,
            name=name,
            arguments=dict(arguments),
            raw_arguments=jsonio.dumps(arguments),
            index=index,
        )
    raw = arguments if isinstance(arguments, str) else ""
    try:
        value = jsonio.loads(raw) if raw.strip() else {}
    except ValueError as exc:
        return InvalidToolCall(
            id=call_id, name=name, raw_arguments=raw, error=str(exc), index=index
        )
    if not isinstance(value, dict):
        return InvalidToolCall(
            id=call_id, name=name, raw_arguments=raw, error="not a JSON object", index=index
        )
    return ToolCall(id=call_id, name=name, arguments=value, raw_arguments=raw, index=index)


class Calls:
    """An assistant turn being read: its text, reasoning and calls, and the
    names of every call of the history by id (results name their call)."""

    def __init__(self) -> None:
        self.names: dict[str, str] = {}
        self._text: list[str] = []
        self._reasoning: list[str] = []
        self._calls: list[ToolCall | InvalidToolCall] = []

    def text(self, text: str) -> None:
        self._text.append(text)

    def reasoning(self, text: str) -> None:
        self._reasoning.append(text)

    def call(self, call_id: str, name: str, arguments: Any) -> None:
        self.names[call_id] = name
        self._calls.append(parsed_call(call_id, name, arguments, len(self._calls)))

    def flush(self, into: list[Message]) -> None:
        """The turn read so far, added to ``into`` (nothing when it is empty)."""
        if self._text or self._reasoning or self._calls:
            into.append(
                AssistantMessage(
                    text="".join(self._text),
                    reasoning="".join(self._reasoning),
                    tool_calls=tuple(self._calls),
                )
            )
        self._text, self._reasoning, self._calls = [], [], []
