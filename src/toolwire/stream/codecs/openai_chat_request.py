"""Chat Completions requests: a conversation, its tools and its tool choice as
a ``/chat/completions`` body (see :mod:`toolwire.stream.codecs.openai_chat_stream`
for the stream).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from toolwire import _compat
from toolwire.content import IMAGE_TYPES, Audio, ContentItem, ContentPart, Image
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
    PDF,
    ContentLimits,
    ContentSupport,
    openai_cache_fields,
    split_text,
    with_carried_parts,
)
from toolwire.stream.codecs.openai_chat_items import custom_input
from toolwire.stream.codecs.request import (
    ToolChoice,
    allowed_tools,
    check_tool_choice,
    dict_or_empty,
    state_items,
    tool_names,
)
from toolwire.stream.jsonio import dumps
from toolwire.types import InvalidToolCall, ToolCall

__all__ = [
    "CONTENT",
    "DIALECT_NAME",
    "call_arguments_text",
    "custom_tool_schema",
    "encode_messages",
    "encode_request",
    "tool_schema",
]

DIALECT_NAME = "openai-chat"

_AUDIO_FORMATS = {"audio/wav": "wav", "audio/mpeg": "mp3"}
_KINDS = {"image": IMAGE_TYPES, "audio": frozenset(_AUDIO_FORMATS), "document": PDF}

CONTENT = ContentSupport(
    dialect=DIALECT_NAME,
    prompt=_KINDS,
    tool_result=_KINDS,
    urls={"image": IMAGE_TYPES},
    result_follow_up=True,
    # https://platform.openai.com/docs/guides/images-vision: up to 50 MB of
    # payload and 500 images per request.
    limits=ContentLimits(request_bytes=50 * MB, per_request={"image": 500}),
)
"""Images (data URL or https), WAV/MP3 audio, PDF files; a tool message is
text only, so a result's parts follow in a user message naming the call."""


def part_out(part: ContentPart) -> dict[str, Any]:
    """One content entry of a user message: ``image_url``, ``input_audio``
    or ``file``."""
    if isinstance(part, Image):
        return {"type": "image_url", "image_url": {"url": part.data_url()}}
    if isinstance(part, Audio):
        data = {"data": part.base64(), "format": _AUDIO_FORMATS[part.media_type]}
        return {"type": "input_audio", "input_audio": data}
    name = part.name or "document.pdf"
    return {"type": "file", "file": {"filename": name, "file_data": part.data_url()}}


def content_out(items: Sequence[ContentItem]) -> list[dict[str, Any]]:
    """A user message's ``content`` array of text and parts."""
    return [
        {"type": "text", "text": item} if isinstance(item, str) else part_out(item)
        for item in split_text(items)
    ]


def _follow_up(results: Sequence[ToolResultMessage]) -> dict[str, Any]:
    """The user message that carries the parts of tool results (tool messages
    are text only), each introduced by the call it answers."""
    content: list[dict[str, Any]] = []
    for result in results:
        intro = f"The result of the {result.name} call {result.call_id}:"
        content.append({"type": "text", "text": intro})
        content.extend(content_out(result.parts))
    return {"role": "user", "content": content}


def tool_schema(
    name: str, description: str, parameters: dict[str, Any], *, strict: bool
) -> dict[str, Any]:
    """One entry of a request's ``tools``: ``{"type": "function", "function": {...}}``."""
    function: dict[str, Any] = {"name": name}
    if description:
        function["description"] = description
    function["parameters"] = parameters
    function["strict"] = strict
    return {"type": "function", "function": function}


def custom_tool_schema(
    name: str, description: str, grammar: Mapping[str, str] | None
) -> dict[str, Any]:
    """A custom (freeform) tool: ``{"type": "custom", "custom": {...}}``; its
    input is one string, held to ``grammar`` (``{"syntax": "lark" or
    "regex", "definition": ...}``) when one is given."""
    custom: dict[str, Any] = {"name": name}
    if description:
        custom["description"] = description
    if grammar is not None:
        custom["format"] = {"type": "grammar", "grammar": dict(grammar)}
    else:
        custom["format"] = {"type": "text"}
    return {"type": "custom", "custom": custom}


# -- requests ---------------------------------------------------------------------


def call_arguments_text(call: ToolCall | InvalidToolCall) -> str:
    """The arguments string to send back for a call the model made.

    The model's own text is sent when it parsed as is (byte-identical history
    keeps prompt caches warm); repaired calls are sent re-serialized so the
    history holds valid JSON; invalid calls keep what the model wrote, since
    the error result that follows explains what was wrong with it.
    """
    if isinstance(call, InvalidToolCall):
        return call.raw_arguments
    if call.raw_arguments.strip() and not call.repaired:
        return call.raw_arguments
    return dumps(call.arguments)


def _tool_call_out(
    call: ToolCall | InvalidToolCall, state: Mapping[str, Any] | None
) -> dict[str, Any]:
    """One entry of an assistant message's ``tool_calls``, with the fields the
    provider sent beside it (Gemini's ``extra_content`` thought signature)."""
    out: dict[str, Any] = {"id": call.id}
    if state is not None and state.get("item_type") == "custom_tool_call":
        out["type"] = "custom"
        out["custom"] = {"name": call.name, "input": custom_input(call)}
    else:
        out["type"] = "function"
        out["function"] = {"name": call.name, "arguments": call_arguments_text(call)}
    if state is not None:
        out.update(dict_or_empty(state.get("chat_fields")))
    return out


def _assistant(message: AssistantMessage, reasoning_field: str | None) -> dict[str, Any]:
    # Calls without text go with "content": "" rather than null: OpenAI
    # accepts both, but llama-cpp-python's server answers HTTP 500 to null.
    out: dict[str, Any] = {"role": "assistant", "content": message.text}
    if message.tool_calls:
        calls = {
            item.get("call_id"): item for item in state_items(message, ("call_item",), DIALECT_NAME)
        }
        out["tool_calls"] = [_tool_call_out(c, calls.get(c.id)) for c in message.tool_calls]
    for item in state_items(message, ("message_fields",), DIALECT_NAME):
        for key, value in dict_or_empty(item.get("fields")).items():
            if key not in ("role", "content", "tool_calls"):
                out[key] = value
    if reasoning_field and message.reasoning and message.tool_calls and reasoning_field not in out:
        out[reasoning_field] = message.reasoning
    return out


def encode_messages(
    messages: Sequence[Message], *, reasoning_field: str | None = None
) -> list[dict[str, Any]]:
    """The ``messages`` array for a conversation.

    Args:
        messages: the conversation.
        reasoning_field: the assistant-message field that carries a
            tool-calling turn's reasoning back (DeepSeek: ``reasoning_content``).
    """

    def message_out(message: Message) -> dict[str, Any]:
        if isinstance(message, SystemMessage):
            return {"role": "system", "content": message.text}
        if isinstance(message, UserMessage):
            content = content_out(message.content) if message.parts else message.text
            return {"role": "user", "content": content}
        if isinstance(message, AssistantMessage):
            return _assistant(message, reasoning_field)
        if isinstance(message, ToolResultMessage):
            text = message.content
            if message.parts:
                text = text or "(the result's images or files follow in the next message)"
            return {"role": "tool", "tool_call_id": message.call_id, "content": text}
        raise UsageError(f"not a toolwire message: {type(message).__name__}")

    return with_carried_parts(messages, message_out, _follow_up)


def encode_request(
    *,
    model: str,
    messages: Sequence[Message],
    tools: Sequence[Mapping[str, Any]] = (),
    tool_choice: ToolChoice | None = None,
    stream: bool = True,
    max_tokens: int | None = None,
    temperature: float | None = None,
    max_tokens_field: str = "max_tokens",
    stream_usage: bool = True,
    parallel_tool_calls: bool | None = None,
    reasoning_field: str | None = None,
) -> dict[str, Any]:
    """The JSON body of a ``/chat/completions`` request.

    Raises:
        UsageError: an invalid ``tool_choice``, or a message this dialect
            cannot express.
        ContentError: a part this dialect cannot carry, or past a limit.
    """
    CONTENT.check_request(messages)
    body: dict[str, Any] = {
        "model": model,
        "messages": encode_messages(messages, reasoning_field=reasoning_field),
    }
    if tools:
        body["tools"] = [dict(t) for t in tools]
        names = tool_names(
            tools, lambda t: dict_or_empty(t.get("function") or t.get("custom")).get("name")
        )
        custom = {dict_or_empty(t.get("custom")).get("name") for t in tools}

        def named(name: str) -> dict[str, Any]:
            kind = "custom" if name in custom else "function"
            return {"type": kind, kind: {"name": name}}

        allowed = allowed_tools(tool_choice, names)
        forced = None if allowed else check_tool_choice(tool_choice, names)
        if allowed:
            listed = [named(n) for n in allowed[0]]
            body["tool_choice"] = {
                "type": "allowed_tools",
                "allowed_tools": {"mode": allowed[1], "tools": listed},
            }
        elif forced is not None:
            body["tool_choice"] = named(forced)
        elif tool_choice is not None:
            body["tool_choice"] = tool_choice
        if parallel_tool_calls is not None:
            body["parallel_tool_calls"] = parallel_tool_calls
    elif tool_choice not in (None, "none", "auto"):
        raise UsageError(f"tool_choice {tool_choice!r} needs at least one tool")
    if max_tokens is not None:
        body[max_tokens_field] = max_tokens
    if temperature is not None:
        body["temperature"] = temperature
    if stream:
        body["stream"] = True
        if stream_usage:
            body["stream_options"] = {"include_usage": True}
    body.update(openai_cache_fields(messages))
    return body


def __getattr__(name: str) -> object:
    """Older names, with a warning (see :mod:`toolwire._compat`)."""
    return _compat.renamed(__name__, name)
