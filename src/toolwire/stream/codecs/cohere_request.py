"""Cohere v2 ``/v2/chat`` requests: a conversation and its tools as a
Cohere v2 body (see :mod:`toolwire.stream.codecs.cohere` for the stream).

A user message with parts is a ``content`` list of ``text`` and
``image_url`` blocks (a base64 data URL, or an http(s) URL Cohere fetches).
A tool result is a ``role: "tool"`` message whose content is a ``document``
(its text, as Cohere's tool-use guide sends results); documents carry text
only, so a result's images go in a user message right after the tool
results, each introduced by the call it answers. Cohere takes no documents
and no audio from toolwire: they are refused before sending.

Reference: https://docs.cohere.com/reference/chat and
https://docs.cohere.com/docs/image-inputs
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from toolwire.content import IMAGE_TYPES, ContentItem, content_parts
from toolwire.errors import UsageError
from toolwire.messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolResultMessage,
    UserMessage,
)
from toolwire.stream.codecs.content import (
    MB,
    ContentLimits,
    ContentSupport,
    split_text,
    with_carried_parts,
)
from toolwire.stream.codecs.request import ToolChoice, dict_or_empty, tool_names
from toolwire.stream.jsonio import dumps
from toolwire.stream.jsonschema import JSONSchema
from toolwire.types import InvalidToolCall, ToolCall

__all__ = ["CONTENT", "DIALECT_NAME", "encode_messages", "encode_request", "tool_schema"]

DIALECT_NAME = "cohere-v2"

CONTENT = ContentSupport(
    dialect=DIALECT_NAME,
    prompt={"image": IMAGE_TYPES},
    tool_result={"image": IMAGE_TYPES},
    urls={"image": IMAGE_TYPES},
    result_follow_up=True,
    # https://docs.cohere.com/docs/image-inputs: up to 20 images and 20 MB
    # of them per request.
    limits=ContentLimits(per_request={"image": 20}, request_bytes=20 * MB),
)
"""Images (a data URL or an http(s) URL) in user messages; a tool result's
images follow in a user message naming the call."""

_TOOL_CHOICES = {"required": "REQUIRED", "none": "NONE"}


def tool_schema(name: str, description: str, parameters: JSONSchema) -> dict[str, Any]:
    """One entry of a request's ``tools``: ``{"type": "function", "function": {...}}``."""
    function: dict[str, Any] = {"name": name}
    if description:
        function["description"] = description
    function["parameters"] = parameters
    return {"type": "function", "function": function}


def content_out(items: Sequence[ContentItem]) -> list[dict[str, Any]]:
    """A user message's ``content`` list of ``text`` and ``image_url`` blocks."""
    return [
        {"type": "text", "text": item}
        if isinstance(item, str)
        else {"type": "image_url", "image_url": {"url": item.data_url()}}
        for item in split_text(items)
    ]


def _follow_up(results: Sequence[ToolResultMessage]) -> dict[str, Any]:
    """The user message that carries the images of tool results, each
    introduced by the call it answers."""
    content: list[dict[str, Any]] = []
    for result in results:
        intro = f"The result of the {result.name} call {result.call_id}:"
        content.append({"type": "text", "text": intro})
        content.extend(content_out(content_parts(result.parts)))
    return {"role": "user", "content": content}


def _arguments(call: ToolCall | InvalidToolCall) -> str:
    if isinstance(call, InvalidToolCall):
        return call.raw_arguments
    if call.raw_arguments.strip() and not call.repaired:
        return call.raw_arguments
    return dumps(call.arguments)


def _assistant(message: AssistantMessage) -> dict[str, Any]:
    out: dict[str, Any] = {"role": "assistant"}
    if message.tool_calls:
        if message.reasoning:
            out["tool_plan"] = message.reasoning
        out["tool_calls"] = [
            {
                "id": call.id,
                "type": "function",
                "function": {"name": call.name, "arguments": _arguments(call)},
            }
            for call in message.tool_calls
        ]
    if message.text or not message.tool_calls:
        out["content"] = [{"type": "text", "text": message.text}]
    return out


def _tool(message: ToolResultMessage) -> dict[str, Any]:
    text = message.content
    if not text and content_parts(message.parts):
        text = "(the result's images follow in the next message)"
    document = {"type": "document", "document": {"data": text}}
    return {"role": "tool", "tool_call_id": message.call_id, "content": [document]}


def encode_messages(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """The ``messages`` array for a conversation."""
    return with_carried_parts(messages, _message, _follow_up)


def _message(message: Message) -> dict[str, Any]:
    if isinstance(message, SystemMessage):
        return {"role": "system", "content": message.text}
    if isinstance(message, UserMessage):
        content = content_out(message.content) if message.parts else message.text
        return {"role": "user", "content": content}
    if isinstance(message, AssistantMessage):
        return _assistant(message)
    if isinstance(message, ToolResultMessage):
        return _tool(message)
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
    """The JSON body of a ``/v2/chat`` request.

    Cohere's tool choice is ``REQUIRED`` or ``NONE`` (``"auto"`` sends
    none); a named tool is refused.

    Raises:
        UsageError: a tool choice Cohere cannot express.
        ContentError: a part Cohere cannot carry, or past a limit.
    """
    CONTENT.check_request(messages)
    known = isinstance(tool_choice, str) and tool_choice in ("auto", *_TOOL_CHOICES)
    if tool_choice is not None and not known:
        raise UsageError(f"cohere-v2 cannot force one tool: {tool_choice!r} cannot be sent")
    body: dict[str, Any] = {"model": model, "messages": encode_messages(messages)}
    if tools:
        tool_names(tools, lambda t: dict_or_empty(t.get("function")).get("name"))
        body["tools"] = [dict(t) for t in tools]
        if isinstance(tool_choice, str) and tool_choice in _TOOL_CHOICES:
            body["tool_choice"] = _TOOL_CHOICES[tool_choice]
    elif tool_choice == "required":
        raise UsageError("tool_choice 'required' needs at least one tool")
    if max_tokens is not None:
        body["max_tokens"] = max_tokens
    if temperature is not None:
        body["temperature"] = temperature
    body["stream"] = stream
    return body
