"""Responses items beyond messages, reasoning and function calls: what is kept
as provider state, what the provider asks the application about, and how each
call and its answer go back."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from toolwire.content import GENERATED_IMAGE, Image
from toolwire.messages import AssistantMessage, ToolResultMessage
from toolwire.stream._repair import ArgumentsParseError, parse_arguments
from toolwire.stream.codecs.openai_chat import call_arguments_text
from toolwire.stream.codecs.openai_chat_items import custom_input
from toolwire.stream.codecs.request import dict_or_empty, state_items
from toolwire.stream.jsonio import loads_fast as _loads
from toolwire.stream.parts import ServerCallPart
from toolwire.types import InvalidToolCall, ToolCall

__all__ = [
    "ANSWER_ITEMS",
    "ASKED_CALLS",
    "PROGRESS_EVENTS",
    "SERVER_ITEMS",
    "STATE_ITEMS",
    "asked_output",
    "asked_outputs",
    "call_item",
    "call_items",
    "call_screenshot",
    "changed_fields",
    "found_tools",
    "generated_image",
    "screenshot",
    "server_call",
]

DIALECT_NAME = "openai-responses"


ASKED_CALLS: Final[dict[str, str]] = {
    "mcp_approval_request": "mcp_approval",
    "computer_call": "computer",
    "local_shell_call": "local_shell",
    "shell_call": "shell",
    "apply_patch_call": "apply_patch",
    "tool_search_call": "tool_search",
}
"""Output items by which the provider asks the application something, each a
tool call named after the hosted tool (``"shell"``...): its arguments are the
item's own fields (a tool search's, its ``arguments``). An MCP approval
request is the call of the MCP tool it is about. A ``tool_search_call`` is
one only when the client executes it (``execution: "client"``; the server's
own is provider state). The item goes back whole, then the answer as the
item type's output."""

ANSWER_ITEMS: Final = frozenset(
    {
        "function_call_output",
        "custom_tool_call_output",
        "computer_call_output",
        "local_shell_call_output",
        "shell_call_output",
        "apply_patch_call_output",
        "mcp_approval_response",
    }
)
"""The items that answer a call: sent by the application, or found among the
output when the provider answered a call itself."""

STATE_ITEMS: Final = ANSWER_ITEMS | {
    "reasoning",
    "mcp_list_tools",
    "tool_search_call",
    "tool_search_output",
    "additional_tools",
    "compaction",
    "configuration_update",
    "program",
    "program_output",
}
"""Output items kept whole as provider state and sent back in their place
among the calls on the next request: reasoning, the tools a hosted tool search
or MCP listing found, compacted history, programs and the outputs the
provider produced itself."""

SERVER_ITEMS: Final = frozenset(
    {
        "web_search_call",
        "file_search_call",
        "code_interpreter_call",
        "image_generation_call",
        "mcp_call",
    }
)
"""Output items of tools the provider runs itself."""

PROGRESS_EVENTS: Final = frozenset(
    {
        "response.queued",
        "response.content_part.added",
        "response.content_part.done",
        "response.reasoning_summary_part.added",
        "response.reasoning_summary_part.done",
        "response.code_interpreter_call.in_progress",
        "response.code_interpreter_call.interpreting",
        "response.code_interpreter_call.completed",
        "response.code_interpreter_call_code.delta",
        "response.code_interpreter_call_code.done",
        "response.file_search_call.in_progress",
        "response.file_search_call.searching",
        "response.file_search_call.completed",
        "response.web_search_call.in_progress",
        "response.web_search_call.searching",
        "response.web_search_call.completed",
        "response.image_generation_call.in_progress",
        "response.image_generation_call.generating",
        "response.image_generation_call.partial_image",
        "response.image_generation_call.completed",
        "response.mcp_call.in_progress",
        "response.mcp_call.completed",
        "response.mcp_call.failed",
        "response.mcp_call_arguments.delta",
        "response.mcp_call_arguments.done",
        "response.mcp_list_tools.in_progress",
        "response.mcp_list_tools.completed",
        "response.mcp_list_tools.failed",
        "response.compaction.compacting",
        "response.shell_call_command.added",
        "response.shell_call_command.delta",
        "response.shell_call_command.done",
        "response.shell_call_output_content.delta",
        "response.shell_call_output_content.done",
    }
)
"""Stream events that report progress on an output item (or a content part)
whose ``.done`` event carries it whole: read there, not here."""


def call_items(message: AssistantMessage) -> dict[str, dict[str, Any]]:
    """The ``call_item`` state of ``message`` by call id: the item type of each
    call that is not a plain function call, and the fields to send back."""
    return {
        str(item.get("call_id")): item
        for item in state_items(message, ("call_item",), DIALECT_NAME)
    }


def call_item(call: ToolCall | InvalidToolCall, state: Mapping[str, Any] | None) -> dict[str, Any]:
    kind = state.get("item_type") if state is not None else None
    item: dict[str, Any]
    if state is not None and kind in ASKED_CALLS:
        return {"type": kind, **dict_or_empty(state.get("fields"))}  # whole, as it came
    if kind == "custom_tool_call":
        item = {"type": kind, "call_id": call.id, "name": call.name, "input": custom_input(call)}
    else:
        arguments = call_arguments_text(call)
        item = {
            "type": "function_call",
            "call_id": call.id,
            "name": call.name,
            "arguments": arguments,
        }
    if isinstance(call, ToolCall) and call.asynchronous:
        item["async"] = True
    if state is not None:
        item.update(dict_or_empty(state.get("fields")))
    return item


def asked_outputs(kind: str, message: ToolResultMessage) -> list[dict[str, Any]]:
    """The answer to a call the provider asked about, as its item type's
    output; a client tool search that found nothing (refused, failed) is
    answered with no tools, and why in words, for the model to read."""
    if kind != "tool_search_call":
        return [asked_output(kind, message)]
    tools = found_tools(message.content) if not message.is_error else None
    output = {
        "type": "tool_search_output",
        "call_id": message.call_id,
        "execution": "client",
        "status": "completed",
        "tools": tools or [],
    }
    if tools is not None:
        return [output]
    told = f"The tool search {message.call_id} found no tools: {message.content}"
    return [output, {"role": "user", "content": told}]


def asked_output(kind: str, message: ToolResultMessage) -> dict[str, Any]:
    """The answer to a call the provider asked about, as its item type's output."""
    ok, call_id, content = not message.is_error, message.call_id, message.content
    if kind == "mcp_approval_request":
        answer = {"type": "mcp_approval_response", "approval_request_id": call_id, "approve": ok}
        return answer if ok else {**answer, "reason": content}
    if kind == "computer_call":
        image = call_screenshot(message)
        if image is None:  # refused: told in words, the call left out
            return {
                "role": "user",
                "content": f"The computer call {call_id} was not run: {content}",
            }
        return {"type": "computer_call_output", "call_id": call_id, "output": image}
    if kind == "local_shell_call":
        return {"type": "local_shell_call_output", "id": call_id, "output": content}
    if kind == "shell_call":
        outcome = {"type": "exit", "exit_code": 0 if ok else 1}
        text = {"stdout": content, "stderr": ""} if ok else {"stdout": "", "stderr": content}
        return {
            "type": "shell_call_output",
            "call_id": call_id,
            "output": [{**text, "outcome": outcome}],
        }
    status = "completed" if ok else "failed"
    return {
        "type": "apply_patch_call_output",
        "call_id": call_id,
        "status": status,
        "output": content,
    }


def generated_image(item: Mapping[str, Any]) -> dict[str, Any] | None:
    """The image of an ``image_generation_call`` output item, as the
    provider-state item :attr:`~toolwire.AssistantMessage.parts` reads."""
    result = item.get("result")
    if item.get("type") != "image_generation_call" or not isinstance(result, str) or not result:
        return None
    media = f"image/{item.get('output_format') or 'png'}"
    return {"type": GENERATED_IMAGE, "id": item.get("id"), "media_type": media, "data": result}


def call_screenshot(message: ToolResultMessage) -> dict[str, Any] | None:
    """A computer call's screenshot: the result's first image part (as a
    ``computer_screenshot``), else its content when that is a screenshot
    object, else ``None``."""
    for part in message.parts:
        if isinstance(part, Image) and not message.is_error:
            return {"type": "computer_screenshot", "image_url": part.data_url()}
    return screenshot(message.content)


def screenshot(content: str) -> dict[str, Any] | None:
    """A computer call's result when it is a screenshot object, else ``None``."""
    try:
        value = _loads(content)
    except ValueError:
        return None
    return value if isinstance(value, dict) and value.get("type") == "computer_screenshot" else None


def found_tools(content: str) -> list[Any] | None:
    """A client tool search's result when it is the tools it found (a JSON
    list of tool definitions, or ``{"tools": [...]}``), else ``None``."""
    try:
        value = _loads(content)
    except ValueError:
        return None
    if isinstance(value, dict):
        value = value.get("tools")
    if isinstance(value, list) and all(isinstance(t, dict) for t in value):
        return value
    return None


def changed_fields(
    start: tuple[str | None, str | None], end: tuple[str | None, str | None]
) -> str | None:
    """What a call item's end changed of its start (``None``: nothing): its
    ``call_id`` or its ``name``, given at both ends and different."""
    changes = [
        f"{field} {was!r} became {now!r}"
        for field, was, now in zip(("call_id", "name"), start, end, strict=True)
        if was and now and was != now
    ]
    return ", ".join(changes) or None


def server_call(item: dict[str, Any]) -> ServerCallPart:
    kind = str(item.get("type"))
    raw = item.get("arguments", item.get("action", item.get("input")))
    if isinstance(raw, str):
        try:
            value, _ = parse_arguments(raw, at_end=True)
        except ArgumentsParseError:
            value = {"value": raw}
        text = raw
    else:
        value = raw if raw is not None else {}
        text = "" if raw is None else str(raw)
    return ServerCallPart(
        id=str(item.get("id") or item.get("call_id") or ""),
        name=str(item.get("name") or kind),
        type=kind,
        arguments=value if isinstance(value, dict) else {"value": value},
        raw_arguments=text,
    )
