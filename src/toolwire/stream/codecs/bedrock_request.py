"""Amazon Bedrock ``Converse`` / ``ConverseStream`` requests: a conversation,
its tools and its tool choice as a Converse body, reasoning sent back where
it was given (see :mod:`toolwire.stream.codecs.bedrock_stream` for the stream).

Reference: https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_Converse.html
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from toolwire import _compat
from toolwire.content import IMAGE_TYPES, CachePoint, ContentItem, ContentPart, Image
from toolwire.errors import UsageError
from toolwire.messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolResultMessage,
    UserMessage,
)
from toolwire.stream.codecs.content import ContentLimits, ContentSupport, split_cached
from toolwire.stream.codecs.request import (
    ToolChoice,
    check_tool_choice,
    placed,
    state_items,
    tool_names,
)
from toolwire.types import ToolCall

__all__ = [
    "CONTENT",
    "DIALECT_NAME",
    "REASONING",
    "encode_messages",
    "encode_request",
    "tool_schema",
]

DIALECT_NAME = "bedrock-converse"

_FORMATS = {
    "image/png": "png",
    "image/jpeg": "jpeg",
    "image/gif": "gif",
    "image/webp": "webp",
    "application/pdf": "pdf",
    "text/plain": "txt",
    "text/markdown": "md",
    "text/csv": "csv",
    "text/html": "html",
}
_KINDS = {"image": IMAGE_TYPES, "document": frozenset(_FORMATS) - IMAGE_TYPES}
CONTENT = ContentSupport(
    dialect=DIALECT_NAME,
    prompt=_KINDS,
    tool_result=_KINDS,
    urls=_KINDS,
    url_schemes=("s3://",),
    # https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_ImageBlock.html
    # and DocumentBlock: 3.75 MB per image, 20 images; 4.5 MB per document, 5 documents.
    limits=ContentLimits(
        part_bytes={"image": 3932160, "document": 4718592},
        per_request={"image": 20, "document": 5},
    ),
)
"""``image`` and ``document`` blocks of bytes (or an S3 location), in a prompt
and in ``toolResult`` content; Converse takes no audio, and no https URL."""


def _document_name(part: ContentPart, number: int) -> str:
    # A name may hold letters, digits, single spaces, hyphens, parentheses
    # and square brackets only (DocumentBlock.name).
    stem = (part.name or "").rsplit(".", 1)[0]
    clean = re.sub(r"\s+", " ", re.sub(r"[^A-Za-z0-9 ()\[\]-]", "-", stem)).strip()
    return clean or f"document-{number}"


def part_block(part: ContentPart, number: int = 1) -> dict[str, Any]:
    """An ``image`` or ``document`` block (bytes as base64, as the JSON API
    takes them)."""
    source: dict[str, Any] = (
        {"s3Location": {"uri": part.url}} if part.url is not None else {"bytes": part.base64()}
    )
    block: dict[str, Any] = {"format": _FORMATS[part.media_type], "source": source}
    if isinstance(part, Image):
        return {"image": block}
    return {"document": {**block, "name": _document_name(part, number)}}


CACHE_POINT: dict[str, Any] = {"cachePoint": {"type": "default"}}
"""The block a :class:`~toolwire.CachePoint` is in Converse (its ``ttl`` is not sent)."""


def content_blocks(items: Sequence[ContentItem]) -> list[dict[str, Any]]:
    """``text``, ``image``, ``document`` and ``cachePoint`` blocks, in order."""
    out: list[dict[str, Any]] = []
    for item in split_cached(items):
        if isinstance(item, CachePoint):
            out.append(dict(CACHE_POINT))
        else:
            number = sum(1 for b in out if "cachePoint" not in b) + 1
            out.append({"text": item} if isinstance(item, str) else part_block(item, number))
    return out


REASONING = "reasoningContent"
"""The provider-state item type of a reasoning block (its Converse name)."""


def tool_schema(name: str, description: str, parameters: dict[str, Any]) -> dict[str, Any]:
    """One entry of ``toolConfig.tools``: ``{"toolSpec": {name, description, inputSchema}}``."""
    spec: dict[str, Any] = {"name": name}
    if description:
        spec["description"] = description
    spec["inputSchema"] = {"json": parameters}
    return {"toolSpec": spec}


def _assistant_blocks(message: AssistantMessage) -> list[dict[str, Any]]:
    by_position = placed(state_items(message, (REASONING,), DIALECT_NAME))

    def reasoning(position: int) -> list[dict[str, Any]]:
        return [{REASONING: item[REASONING]} for item in by_position.pop(position, [])]

    blocks = reasoning(0)
    if message.text:
        blocks.append({"text": message.text})
    for position, call in enumerate(message.tool_calls, start=1):
        arguments = call.arguments if isinstance(call, ToolCall) else {}
        blocks.append({"toolUse": {"toolUseId": call.id, "name": call.name, "input": arguments}})
        blocks.extend(reasoning(position))
    for position in sorted(by_position):
        blocks.extend(reasoning(position))
    return blocks


def encode_messages(
    messages: Sequence[Message],
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """``(system, messages)`` of a Converse request."""
    system: list[dict[str, Any]] = []
    out: list[dict[str, Any]] = []

    def content(role: str) -> list[dict[str, Any]]:
        # Consecutive messages of one side are one message: the API wants the
        # roles to alternate, and a turn's results to share a message.
        if not out or out[-1]["role"] != role:
            out.append({"role": role, "content": []})
        blocks: list[dict[str, Any]] = out[-1]["content"]
        return blocks

    for message in messages:
        if isinstance(message, SystemMessage):
            system.append({"text": message.text})
            if message.cache is not None:
                system.append(dict(CACHE_POINT))
        elif isinstance(message, UserMessage):
            if message.parts or message.cache_points:
                content("user").extend(content_blocks(message.content))
            elif message.text:  # the API refuses a blank text block
                content("user").append({"text": message.text})
        elif isinstance(message, ToolResultMessage):
            blocks = content("user")
            result = {
                "toolResult": {
                    "toolUseId": message.call_id,
                    "content": content_blocks(message.parts)
                    if message.parts
                    else [{"text": message.content or " "}],
                    "status": "error" if message.is_error else "success",
                }
            }
            # Results come before any text of the same message.
            first_text = next((i for i, b in enumerate(blocks) if "toolResult" not in b), None)
            blocks.insert(len(blocks) if first_text is None else first_text, result)
        elif isinstance(message, AssistantMessage):
            blocks = _assistant_blocks(message)
            if blocks:
                content("assistant").extend(blocks)
        else:
            raise UsageError(f"not a toolwire message: {type(message).__name__}")
    return system, out


def encode_request(
    *,
    messages: Sequence[Message],
    tools: Sequence[Mapping[str, Any]] = (),
    tool_choice: ToolChoice | None = None,
    max_tokens: int | None = None,
    temperature: float | None = None,
    cache_tools: CachePoint | None = None,
) -> dict[str, Any]:
    """The JSON body of a ``Converse`` / ``ConverseStream`` request (the model
    and the choice of streaming are in the URL: the ``request_path`` of
    :data:`~toolwire.stream.codecs.bedrock.DIALECT`); ``cache_tools`` adds a
    ``cachePoint`` after the tools.

    Raises:
        UsageError: ``tool_choice="none"`` with tools (Converse cannot forbid
            the tools it is sent: send none), an invalid ``tool_choice``, or a
            message it cannot express.
        ContentError: a part this dialect cannot carry, or past a limit.
    """
    CONTENT.check_request(messages)
    system, wire = encode_messages(messages)
    body: dict[str, Any] = {"messages": wire}
    if system:
        body["system"] = system
    config: dict[str, Any] = {}
    if max_tokens is not None:
        config["maxTokens"] = max_tokens
    if temperature is not None:
        config["temperature"] = temperature
    if config:
        body["inferenceConfig"] = config
    if tools:
        body["toolConfig"] = {"tools": [dict(t) for t in tools]}
        if cache_tools is not None:
            body["toolConfig"]["tools"].append(dict(CACHE_POINT))
        choice = _tool_choice(tools, tool_choice)
        if choice is not None:
            body["toolConfig"]["toolChoice"] = choice
    elif tool_choice not in (None, "none", "auto"):
        raise UsageError(f"tool_choice {tool_choice!r} needs at least one tool")
    return body


def _tool_choice(
    tools: Sequence[Mapping[str, Any]], tool_choice: ToolChoice | None
) -> dict[str, Any] | None:
    forced = check_tool_choice(tool_choice, tool_names(tools, _tool_name))
    if forced is not None:
        return {"tool": {"name": forced}}
    if tool_choice == "required":
        return {"any": {}}
    if tool_choice == "auto":
        return {"auto": {}}
    if tool_choice == "none":
        raise UsageError(
            "Bedrock Converse has no tool_choice 'none': send the request without tools"
        )
    return None


def _tool_name(tool: Mapping[str, Any]) -> Any:
    spec = tool.get("toolSpec")
    return spec.get("name") if isinstance(spec, Mapping) else None


def __getattr__(name: str) -> object:
    """Older names, with a warning (see :mod:`toolwire._compat`)."""
    return _compat.renamed(__name__, name)
