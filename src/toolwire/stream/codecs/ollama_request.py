"""Ollama ``/api/chat`` requests: a conversation and its tools as Ollama's
native body (see :mod:`toolwire.stream.codecs.ollama` for the stream).

A message's images are a list of base64 strings beside its text
(``"images": [...]``): the text and the images of one message are not
interleaved. Tool messages carry text only (``role: "tool"``, ``tool_name``),
so a result's images go in a user message right after the tool results,
each introduced by the call it answers, as for Chat Completions. Ollama
takes no documents, no audio and no URLs: they are refused before sending.

Reference: https://github.com/ollama/ollama/blob/main/docs/api.md#generate-a-chat-completion
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from toolwire.content import ContentItem, content_parts, content_text
from toolwire.errors import UsageError
from toolwire.messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolResultMessage,
    UserMessage,
)
from toolwire.stream.codecs.content import ContentSupport, with_carried_parts
from toolwire.stream.codecs.request import ToolChoice, dict_or_empty, tool_names
from toolwire.stream.jsonschema import JSONSchema
from toolwire.types import InvalidToolCall, ToolCall

__all__ = ["CONTENT", "DIALECT_NAME", "encode_messages", "encode_request", "tool_schema"]

DIALECT_NAME = "ollama-ndjson"

_IMAGES = frozenset({"image/png", "image/jpeg"})
CONTENT = ContentSupport(
    dialect=DIALECT_NAME,
    prompt={"image": _IMAGES},
    tool_result={"image": _IMAGES},
    urls={},
    result_follow_up=True,
)
"""PNG and JPEG images, as base64, on user messages; a tool message is text
only, so a result's images follow in a user message naming the call."""


def tool_schema(name: str, description: str, parameters: JSONSchema) -> dict[str, Any]:
    """One entry of a request's ``tools``: ``{"type": "function", "function": {...}}``."""
    function: dict[str, Any] = {"name": name}
    if description:
        function["description"] = description
    function["parameters"] = parameters
    return {"type": "function", "function": function}


def _user(items: Sequence[ContentItem]) -> dict[str, Any]:
    out: dict[str, Any] = {"role": "user", "content": content_text(items)}
    images = [part.base64() for part in content_parts(items)]
    if images:
        out["images"] = images
    return out


def _follow_up(results: Sequence[ToolResultMessage]) -> dict[str, Any]:
    """The user message that carries the images of tool results, each
    result's introduced by the call it answers."""
    lines: list[str] = []
    images: list[str] = []
    for result in results:
        count = len(content_parts(result.parts))
        lines.append(
            f"The result of the {result.name} call {result.call_id}: "
            f"image {len(images) + 1}" + (f" to {len(images) + count}" if count > 1 else "")
        )
        images.extend(part.base64() for part in content_parts(result.parts))
    return {"role": "user", "content": "\n".join(lines), "images": images}


def _arguments(call: ToolCall | InvalidToolCall) -> dict[str, Any]:
    """A call's arguments as the object Ollama sends them as (an invalid
    call's text cannot be one: it goes as an empty object, its error result
    says what was wrong)."""
    return dict(call.arguments) if isinstance(call, ToolCall) else {}


def _assistant(message: AssistantMessage) -> dict[str, Any]:
    out: dict[str, Any] = {"role": "assistant", "content": message.text}
    if message.reasoning:
        out["thinking"] = message.reasoning
    if message.tool_calls:
        out["tool_calls"] = [
            {"function": {"name": call.name, "arguments": _arguments(call)}}
            for call in message.tool_calls
        ]
    return out


def encode_messages(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """The ``messages`` array for a conversation."""
    return with_carried_parts(messages, _message, _follow_up)


def _message(message: Message) -> dict[str, Any]:
    if isinstance(message, SystemMessage):
        return {"role": "system", "content": message.text}
    if isinstance(message, UserMessage):
        return _user(message.content)
    if isinstance(message, AssistantMessage):
        return _assistant(message)
    if isinstance(message, ToolResultMessage):
        text = message.content
        if message.parts:
            text = text or "(the result's images follow in the next message)"
        return {"role": "tool", "tool_name": message.name, "content": text}
    raise UsageError(f"not a toolwire message: {type(message).__name__}")


def encode_request(
    *,
    model: str,
    messages: Sequence[Message],
    tools: Sequence[Mapping[str, Any]] = (),
    tool_choice: ToolChoice | None = None,
    stream: bool = True,
    max_tokens: int | None = None,
    temperature: float | None = None,
) -> dict[str, Any]:
    """The JSON body of an ``/api/chat`` request.

    Ollama has no tool choice: ``"auto"`` (or ``None``) sends the tools,
    ``"none"`` leaves them out; a required or named tool is refused.

    Raises:
        UsageError: a tool choice Ollama cannot express.
        ContentError: a part Ollama cannot carry (a document, audio, a URL).
    """
    CONTENT.check_request(messages)
    if tool_choice not in (None, "auto", "none"):
        raise UsageError(f"ollama-ndjson has no tool choice: {tool_choice!r} cannot be sent")
    body: dict[str, Any] = {"model": model, "messages": encode_messages(messages)}
    if tools and tool_choice != "none":
        tool_names(tools, lambda t: dict_or_empty(t.get("function")).get("name"))
        body["tools"] = [dict(t) for t in tools]
    body["stream"] = stream
    options: dict[str, Any] = {}
    if max_tokens is not None:
        options["num_predict"] = max_tokens
    if temperature is not None:
        options["temperature"] = temperature
    if options:
        body["options"] = options
    return body
