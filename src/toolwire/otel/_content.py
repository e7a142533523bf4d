"""What the spans record: error types and, when content is captured, the messages."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import anyio
from opentelemetry.trace import Span, Status, StatusCode

from toolwire.errors import ToolwireError
from toolwire.messages import AssistantMessage, SystemMessage, ToolResultMessage, UserMessage
from toolwire.types import InvalidToolCall, StreamResult, ToolCall

if TYPE_CHECKING:
    from toolwire.messages import Message


def _is_cancellation(error: BaseException) -> bool:
    try:
        return isinstance(error, anyio.get_cancelled_exc_class())
    except Exception:  # no async library running here: not a cancellation of ours
        return False


def _error_type(error: BaseException) -> str:
    if isinstance(error, ToolwireError):
        return error.type_name
    if _is_cancellation(error):
        return "cancelled"
    cls = type(error)
    if cls.__module__ == "builtins":
        return cls.__qualname__
    return f"{cls.__module__}.{cls.__qualname__}"


def _mark_error(span: Span, error_type: str, description: str) -> None:
    span.set_attribute("error.type", error_type)
    span.set_status(Status(StatusCode.ERROR, description))


def _call_part(call: ToolCall | InvalidToolCall) -> dict[str, Any]:
    arguments: Any = call.arguments if isinstance(call, ToolCall) else call.raw_arguments
    return {"type": "tool_call", "id": call.id, "name": call.name, "arguments": arguments}


def _assistant_parts(message: AssistantMessage) -> list[dict[str, Any]]:
    parts: list[dict[str, Any]] = []
    if message.reasoning:
        parts.append({"type": "reasoning", "content": message.reasoning})
    if message.text:
        parts.append({"type": "text", "content": message.text})
    parts.extend(_call_part(call) for call in message.tool_calls)
    return parts


def _input_messages(messages: Sequence[Message]) -> tuple[list[Any], list[Any]]:
    """The conversation in the conventions' input-messages shape, and the
    system instructions apart (toolwire's providers send them apart)."""
    system: list[Any] = []
    chat: list[Any] = []
    for message in messages:
        if isinstance(message, SystemMessage):
            system.append({"type": "text", "content": message.text})
        elif isinstance(message, UserMessage):
            chat.append({"role": "user", "parts": [{"type": "text", "content": message.text}]})
        elif isinstance(message, AssistantMessage):
            chat.append({"role": "assistant", "parts": _assistant_parts(message)})
        elif isinstance(message, ToolResultMessage):
            part = {
                "type": "tool_call_response",
                "id": message.call_id,
                "response": message.content,
            }
            chat.append({"role": "tool", "parts": [part]})
    return system, chat


def _output_messages(result: StreamResult) -> list[Any]:
    out: list[Any] = []
    for choice in result.choices:
        message = AssistantMessage.from_choice(choice)
        out.append(
            {
                "role": "assistant",
                "parts": _assistant_parts(message),
                "finish_reason": choice.finish_reason or "",
            }
        )
    return out


def _describe(error: BaseException) -> str:
    if isinstance(error, ToolwireError):
        return error.message
    return str(error) or type(error).__name__
