"""Amazon Bedrock ``Converse`` / ``ConverseStream`` requests: a conversation,
its tools and its tool choice as a Converse body, reasoning sent back where
it was given (see :mod:`toolwire.stream.codecs.bedrock_stream` for the stream).

Reference: https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_Converse.html
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from toolwire import _compat
from toolwire.errors import UsageError
from toolwire.messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolResultMessage,
    UserMessage,
)
from toolwire.stream.codecs.request import (
    ToolChoice,
    check_tool_choice,
    placed,
    state_items,
    tool_names,
)
from toolwire.types import ToolCall

__all__ = ["DIALECT_NAME", "REASONING", "encode_messages", "encode_request", "tool_schema"]

DIALECT_NAME = "bedrock-converse"

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
        elif isinstance(message, UserMessage):
            if message.text:  # the API refuses a blank text block
                content("user").append({"text": message.text})
        elif isinstance(message, ToolResultMessage):
            blocks = content("user")
            result = {
                "toolResult": {
                    "toolUseId": message.call_id,
                    "content": [{"text": message.content or " "}],
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
) -> dict[str, Any]:
    """The JSON body of a ``Converse`` / ``ConverseStream`` request (the model
    and the choice of streaming are in the URL: the ``request_path`` of
    :data:`~toolwire.stream.codecs.bedrock.DIALECT`).

    Raises:
        UsageError: ``tool_choice="none"`` with tools (Converse cannot forbid
            the tools it is sent: send none), an invalid ``tool_choice``, or a
            message it cannot express.
    """
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
