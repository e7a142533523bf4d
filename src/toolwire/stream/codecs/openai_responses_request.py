"""Responses requests: a conversation, its tools and its tool choice as a
``/responses`` body, provider items sent back in place (see
:mod:`toolwire.stream.codecs.openai_responses` for the stream).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any, Final
from urllib.parse import quote, urlencode

from toolwire import _compat
from toolwire.content import IMAGE_TYPES, ContentItem, ContentPart, Image
from toolwire.errors import UsageError
from toolwire.messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolResultMessage,
    UserMessage,
)
from toolwire.stream.codecs import structured
from toolwire.stream.codecs._dialect import X_RATELIMIT, ProviderInfo, SchemaTool
from toolwire.stream.codecs.content import (
    MB,
    PDF,
    ContentLimits,
    ContentSupport,
    openai_cache_fields,
    split_text,
)
from toolwire.stream.codecs.openai_responses_items import (
    ASKED_CALLS,
    STATE_ITEMS,
    asked_outputs,
    call_item,
    call_items,
    call_screenshot,
)
from toolwire.stream.codecs.request import (
    ToolChoice,
    allowed_tools,
    check_tool_choice,
    placed,
    state_items,
    tool_names,
)

__all__ = [
    "CONTENT",
    "DIALECT_NAME",
    "PROVIDER",
    "async_marked",
    "custom_tool_schema",
    "encode_input",
    "encode_request",
    "resume_path",
    "resume_target",
    "tool_schema",
]

DIALECT_NAME = "openai-responses"
PROVIDER: Final = ProviderInfo(
    names=(DIALECT_NAME,),
    class_name="OpenAIResponses",
    demo_model="gpt-4.1-mini",
    structured_models=structured.OPENAI_MODELS,
    price_provider="openai",
    rate_limit_headers=X_RATELIMIT,
)
"""The provider that speaks the Responses API (:class:`toolwire.providers.OpenAIResponses`)."""

_KINDS = {"image": IMAGE_TYPES, "document": PDF}
CONTENT = ContentSupport(
    dialect=DIALECT_NAME,
    prompt=_KINDS,
    tool_result=_KINDS,
    urls=_KINDS,
    # https://platform.openai.com/docs/guides/images-vision: up to 50 MB of
    # payload and 500 images per request.
    limits=ContentLimits(request_bytes=50 * MB, per_request={"image": 500}),
)
"""``input_image`` and ``input_file`` (data URL or URL), in a prompt and in a
``function_call_output``; the Responses API takes no audio input."""


def part_out(part: ContentPart) -> dict[str, Any]:
    """An ``input_image`` or ``input_file`` content item."""
    if isinstance(part, Image):
        return {"type": "input_image", "image_url": part.data_url(), "detail": "auto"}
    if part.url is not None:
        return {"type": "input_file", "file_url": part.url}
    name = part.name or "document.pdf"
    return {"type": "input_file", "filename": name, "file_data": part.data_url()}


def content_out(items: Sequence[ContentItem]) -> list[dict[str, Any]]:
    """A message's (or a call output's) list of ``input_text`` and parts."""
    return [
        {"type": "input_text", "text": item} if isinstance(item, str) else part_out(item)
        for item in split_text(items)
    ]


def resume_path(response_id: str, after: str | None) -> str:
    """The path (under the base URL) that streams a stored response again:
    its events after the one numbered ``after``, or all of them (``None``)."""
    query = urlencode({"stream": "true", **({} if after is None else {"starting_after": after})})
    return f"/responses/{quote(response_id, safe='')}?{query}"


def resume_target(path: str, query: Mapping[str, str]) -> tuple[str, str | None] | None:
    """``GET /v1/responses/{id}?stream=true&starting_after=N``: the response
    and the event to start after (``None``: from the first; without
    ``stream=true``, the whole response)."""
    head, _, response_id = path.rstrip("/").rpartition("/")
    if not head.endswith("/responses") or not response_id:
        return None
    return response_id, query.get("starting_after")


def tool_schema(
    name: str, description: str, parameters: dict[str, Any], *, strict: bool
) -> dict[str, Any]:
    """One entry of a request's ``tools``: flat, ``{"type": "function", "name": ...}``.
    ``strict`` is always sent: the Responses API reads a missing one as true."""
    tool: dict[str, Any] = {"type": "function", "name": name}
    if description:
        tool["description"] = description
    tool["parameters"] = parameters
    tool["strict"] = strict
    return tool


def async_marked(
    shape: Callable[[Sequence[SchemaTool], bool | None], list[dict[str, Any]]],
) -> Callable[[Sequence[SchemaTool], bool | None], list[dict[str, Any]]]:
    """``shape``'s entries, each of an asynchronous tool with ``"async": true``."""

    def marked(tools: Sequence[SchemaTool], strict: bool | None) -> list[dict[str, Any]]:
        entries = shape(tools, strict)
        for t, entry in zip(tools, entries, strict=True):
            if t.asynchronous:
                entry["async"] = True
        return entries

    return marked


def custom_tool_schema(
    name: str, description: str, grammar: Mapping[str, str] | None
) -> dict[str, Any]:
    """A custom (freeform) tool: ``{"type": "custom", "name": ..., "format": ...}``;
    its input is one string, held to ``grammar`` (``{"syntax": "lark" or
    "regex", "definition": ...}``) when one is given."""
    tool: dict[str, Any] = {"type": "custom", "name": name}
    if description:
        tool["description"] = description
    tool["format"] = {"type": "grammar", **grammar} if grammar is not None else {"type": "text"}
    return tool


# -- requests ---------------------------------------------------------------------


def _assistant_items(message: AssistantMessage, skip: Collection[str]) -> list[dict[str, Any]]:
    by_position = placed(state_items(message, STATE_ITEMS, DIALECT_NAME))
    out = list(by_position.pop(0, []))
    if message.text:
        out.append({"role": "assistant", "content": message.text})
    calls = call_items(message)
    for position, call in enumerate(message.tool_calls, start=1):
        if call.id not in skip:
            out.append(call_item(call, calls.get(call.id)))
        out.extend(by_position.pop(position, []))
    for position in sorted(by_position):  # positions past the last call
        out.extend(by_position[position])
    return out


def encode_input(messages: Sequence[Message]) -> tuple[str | None, list[dict[str, Any]]]:
    """``(instructions, input)`` for a conversation."""
    instructions: list[str] = []
    items: list[dict[str, Any]] = []
    # A call's result goes back as the output item of the call's own type.
    kinds = {
        call_id: str(state.get("item_type"))
        for message in messages
        if isinstance(message, AssistantMessage)
        for call_id, state in call_items(message).items()
    }
    # Computer calls answered with no screenshot (refused) are left out.
    skip = {
        m.call_id
        for m in messages
        if isinstance(m, ToolResultMessage)
        and kinds.get(m.call_id) == "computer_call"
        and call_screenshot(m) is None
    }
    for message in messages:
        if isinstance(message, SystemMessage):
            if items:  # a later system message stays where it was said
                items.append({"role": "system", "content": message.text})
            else:
                instructions.append(message.text)
        elif isinstance(message, UserMessage):
            content = content_out(message.content) if message.parts else message.text
            items.append({"role": "user", "content": content})
        elif isinstance(message, AssistantMessage):
            items.extend(_assistant_items(message, skip))
        elif isinstance(message, ToolResultMessage):
            kind = kinds.get(message.call_id, "function_call")
            if kind in ASKED_CALLS:
                items.extend(asked_outputs(kind, message))
            else:
                text = message.content
                output = {
                    "call_id": message.call_id,
                    "output": content_out(message.parts) if message.parts else text,
                }
                items.append({"type": kind + "_output", **output})
        else:
            raise UsageError(f"not a toolwire message: {type(message).__name__}")
    return ("\n\n".join(instructions) if instructions else None), items


def encode_request(
    *,
    model: str,
    messages: Sequence[Message],
    tools: Sequence[Mapping[str, Any]] = (),
    tool_choice: ToolChoice | None = None,
    stream: bool = True,
    max_tokens: int | None = None,
    temperature: float | None = None,
    reasoning: Mapping[str, Any] | None = None,
    store: bool | None = None,
    parallel_tool_calls: bool | None = None,
) -> dict[str, Any]:
    """The JSON body of a ``/responses`` request.

    Raises:
        UsageError: an invalid ``tool_choice``, or a message this dialect
            cannot express.
        ContentError: a part this dialect cannot carry, or past a limit.
    """
    CONTENT.check_request(messages)
    instructions, items = encode_input(messages)
    body: dict[str, Any] = {"model": model, "input": items}
    if instructions is not None:
        body["instructions"] = instructions
    if tools:
        body["tools"] = [dict(t) for t in tools]
        names = tool_names(tools, lambda t: t.get("name"))
        kinds = {
            t.get("name"): "custom" if t.get("type") == "custom" else "function" for t in tools
        }
        allowed = allowed_tools(tool_choice, names)
        forced = None if allowed else check_tool_choice(tool_choice, names)
        if allowed:
            listed = [{"type": kinds.get(n, "function"), "name": n} for n in allowed[0]]
            body["tool_choice"] = {"type": "allowed_tools", "mode": allowed[1], "tools": listed}
        elif forced is not None:
            body["tool_choice"] = {"type": kinds.get(forced, "function"), "name": forced}
        elif tool_choice is not None:
            body["tool_choice"] = tool_choice
        if parallel_tool_calls is not None:
            body["parallel_tool_calls"] = parallel_tool_calls
    elif tool_choice not in (None, "none", "auto"):
        raise UsageError(f"tool_choice {tool_choice!r} needs at least one tool")
    if max_tokens is not None:
        body["max_output_tokens"] = max_tokens
    if temperature is not None:
        body["temperature"] = temperature
    if reasoning is not None:
        body["reasoning"] = dict(reasoning)
    if store is not None:
        body["store"] = store
        if not store:
            body["include"] = ["reasoning.encrypted_content"]
    if stream:
        body["stream"] = True
    body.update(openai_cache_fields(messages))
    return body


def __getattr__(name: str) -> object:
    """Older names, with a warning (see :mod:`toolwire._compat`)."""
    return _compat.renamed(__name__, name)
