"""Anthropic Messages requests: a conversation, its tools and its tool choice
as a ``/v1/messages`` body, provider state sent back in place (see
:mod:`toolwire.stream.codecs.anthropic_stream` for the stream).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from toolwire import _compat
from toolwire.content import IMAGE_TYPES, CachePoint, ContentItem, ContentPart, Image
from toolwire.errors import ContentError, UsageError
from toolwire.messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolResultMessage,
    UserMessage,
)
from toolwire.stream.codecs._common import (
    int_or_none,
)
from toolwire.stream.codecs._dialect import SchemaTool
from toolwire.stream.codecs.content import MB, PDF, ContentLimits, ContentSupport, split_cached
from toolwire.stream.codecs.request import (
    ToolChoice,
    check_tool_choice,
    dict_or_empty,
    interleave,
    state_items,
    tool_names,
)
from toolwire.types import ToolCall

__all__ = ["CONTENT", "DIALECT_NAME", "encode_messages", "encode_request", "tool_schema"]

DIALECT_NAME = "anthropic-messages"

_KINDS = {"image": IMAGE_TYPES, "document": PDF | {"text/plain"}}
CONTENT = ContentSupport(
    dialect=DIALECT_NAME,
    prompt=_KINDS,
    tool_result=_KINDS,
    urls={"image": IMAGE_TYPES, "document": PDF},
    # https://docs.claude.com/en/docs/build-with-claude/vision: 5 MB per image,
    # 100 images per request; PDF support: 32 MB per request.
    limits=ContentLimits(
        part_bytes={"image": 5 * MB},
        per_request={"image": 100},
        request_bytes=32 * MB,
    ),
)
"""``image`` and ``document`` blocks (base64, URL, or plain text), in a prompt
and inside ``tool_result`` content; the Messages API takes no audio."""


def part_block(part: ContentPart) -> dict[str, Any]:
    """An ``image`` or ``document`` block."""
    kind = "image" if isinstance(part, Image) else "document"
    if part.url is not None:
        return {"type": kind, "source": {"type": "url", "url": part.url}}
    if part.media_type == "text/plain":
        try:
            text = (part.data or b"").decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ContentError("a text/plain document must be UTF-8") from exc
        source = {"type": "text", "media_type": "text/plain", "data": text}
    else:
        source = {"type": "base64", "media_type": part.media_type, "data": part.base64()}
    block: dict[str, Any] = {"type": kind, "source": source}
    if kind == "document" and part.name:
        block["title"] = part.name
    return block


def cache_control(point: CachePoint) -> dict[str, Any]:
    """A block's ``cache_control`` for ``point``: ``{"type": "ephemeral", "ttl": ...}``."""
    return {"type": "ephemeral", "ttl": point.ttl}


def mark_cached(blocks: list[dict[str, Any]], point: CachePoint) -> None:
    """Put ``point``'s ``cache_control`` on the last of ``blocks``.

    Raises:
        ContentError: there is no block before the point to mark.
    """
    if not blocks:
        raise ContentError("a CachePoint marks the content before it: put it after some")
    blocks[-1]["cache_control"] = cache_control(point)


def content_blocks(items: Sequence[ContentItem]) -> list[dict[str, Any]]:
    """``text``, ``image`` and ``document`` blocks, in order; a cache point
    marks the block before it."""
    blocks: list[dict[str, Any]] = []
    for item in split_cached(items):
        if isinstance(item, CachePoint):
            mark_cached(blocks, item)
        else:
            blocks.append(
                {"type": "text", "text": item} if isinstance(item, str) else part_block(item)
            )
    return blocks


_SERVER_BLOCKS = ("server_tool_use", "mcp_tool_use")
_KEPT_BLOCKS = frozenset(
    {
        "web_search_tool_result",
        "web_fetch_tool_result",
        "code_execution_tool_result",
        "bash_code_execution_tool_result",
        "text_editor_code_execution_tool_result",
        "tool_search_tool_result",
        "advisor_tool_result",
        "mcp_tool_result",
        "mcp_tool_listing",
        "container_upload",
        "fallback",
    }
)
"""Blocks sent back exactly as they came (they have no deltas)."""
_CITATIONS = "text_citations"
"""The state item of a text block's ``citations`` (web search, documents):
``{"type": "text_citations", "length": n, "citations": [...]}``, placed where
the block's text starts; the text itself is the message's."""
_STATE_BLOCKS = frozenset(
    {"thinking", "redacted_thinking", "compaction", _CITATIONS, *_SERVER_BLOCKS, *_KEPT_BLOCKS}
)
"""Every block type kept as provider state and sent back in place."""
_CALL_FIELDS = "tool_use_fields"
"""The state item holding a ``tool_use`` block's other fields (``caller``),
by call id: ``{"type": "tool_use_fields", "id": ..., "fields": {...}}``."""
_CONTAINER = "container"
"""The state item of the message's code-execution container (``id``, ``expires_at``)."""


def tool_schema(
    name: str,
    description: str,
    parameters: dict[str, Any],
    *,
    eager_input_streaming: bool | None = None,
) -> dict[str, Any]:
    """One entry of a request's ``tools``: ``{"name", "description", "input_schema"}``,
    with ``eager_input_streaming`` when it is set (fine-grained tool streaming:
    the input is streamed unbuffered and may end as invalid JSON)."""
    tool: dict[str, Any] = {"name": name}
    if description:
        tool["description"] = description
    tool["input_schema"] = parameters
    if eager_input_streaming is not None:
        tool["eager_input_streaming"] = eager_input_streaming
    return tool


def _tool_schemas(tools: Sequence[SchemaTool], strict: bool | None) -> list[dict[str, Any]]:
    """A request's ``tools``: Anthropic has no strict mode to ask for; a
    toolset's handler declares the toolset."""
    return [
        {"type": t.anthropic_toolset}
        if t.anthropic_toolset
        else tool_schema(
            t.name,
            t.description,
            t.parameters,
            eager_input_streaming=t.anthropic_eager_input_streaming,
        )
        for t in tools
    ]


# -- requests ---------------------------------------------------------------------


def _assistant_blocks(message: AssistantMessage) -> list[dict[str, Any]]:
    fields: dict[str, dict[str, Any]] = {}
    for item in state_items(message, (_CALL_FIELDS,), DIALECT_NAME):
        if isinstance(item.get("id"), str):
            fields[item["id"]] = dict_or_empty(item.get("fields"))
    blocks: list[dict[str, Any]] = []
    cited: dict[str, Any] | None = None  # citations of the text that follows
    # A Responses ``compaction`` item (it has an ``id``) is not Anthropic's block.
    kept = [
        item
        for item in state_items(message, _STATE_BLOCKS, DIALECT_NAME)
        if item.get("type") != "compaction" or "id" not in item
    ]
    for kind, value in interleave(message.text, message.tool_calls, kept):
        if kind == "text":
            if cited is not None:
                length = int_or_none(cited.get("length")) or 0
                head, value = value[:length], value[length:]
                if head:  # the API refuses an empty text block
                    citations = cited.get("citations")
                    blocks.append({"type": "text", "text": head, "citations": citations})
                cited = None
            if value:
                blocks.append({"type": "text", "text": value})
        elif kind == "item" and value.get("type") == _CITATIONS:
            cited = value
        elif kind == "call":
            arguments = value.arguments if isinstance(value, ToolCall) else {}
            block = {"type": "tool_use", "id": value.id, "name": value.name, "input": arguments}
            blocks.append({**block, **fields.get(value.id, {})})
        else:
            blocks.append(value)
    return blocks


def _container(messages: Sequence[Message]) -> str | None:
    """The id of the latest container the conversation used, to use it again."""
    for message in reversed(messages):
        if isinstance(message, AssistantMessage):
            for item in reversed(state_items(message, (_CONTAINER,), DIALECT_NAME)):
                if isinstance(item.get("id"), str):
                    return str(item["id"])
    return None


def _system(system: list[SystemMessage]) -> str | list[dict[str, Any]] | None:
    """The request's ``system``: text, or text blocks when one is cached."""
    if not system:
        return None
    if all(m.cache is None for m in system):
        return "\n\n".join(m.text for m in system)
    blocks: list[dict[str, Any]] = []
    for m in system:
        if m.text:
            blocks.append({"type": "text", "text": m.text})
        if m.cache is not None:
            mark_cached(blocks, m.cache)
    return blocks


def encode_messages(
    messages: Sequence[Message],
) -> tuple[str | list[dict[str, Any]] | None, list[dict[str, Any]]]:
    """``(system, messages)`` for a conversation.

    The system messages before any other message are the request's
    ``system`` (text blocks when one carries a cache point); a later one
    stays in place as a ``{"role": "system"}`` message (the SDK's
    ``SystemMessageParam``), as Responses keeps it."""
    system: list[SystemMessage] = []
    out: list[dict[str, Any]] = []

    def user_blocks() -> list[dict[str, Any]]:
        # Consecutive user-side content (tool results, then user text) is
        # one user message: results of one turn must share a message.
        if out and out[-1]["role"] == "user":
            content: list[dict[str, Any]] = out[-1]["content"]
            return content
        out.append({"role": "user", "content": []})
        return out[-1]["content"]  # type: ignore[no-any-return]

    for message in messages:
        if isinstance(message, SystemMessage):
            if out:
                out.append({"role": "system", "content": message.text})
            else:
                system.append(message)
        elif isinstance(message, UserMessage):
            if message.parts or message.cache_points:
                user_blocks().extend(content_blocks(message.content))
            else:
                user_blocks().append({"type": "text", "text": message.text})
        elif isinstance(message, ToolResultMessage):
            blocks = user_blocks()
            result = {
                "type": "tool_result",
                "tool_use_id": message.call_id,
                "content": content_blocks(message.parts) if message.parts else message.content,
                "is_error": message.is_error,
            }
            # tool_result blocks must precede any text in the message.
            first_text = next(
                (i for i, b in enumerate(blocks) if b.get("type") != "tool_result"), None
            )
            if first_text is None:
                blocks.append(result)
            else:
                blocks.insert(first_text, result)
        elif isinstance(message, AssistantMessage):
            blocks = _assistant_blocks(message)
            if not blocks:
                continue  # an empty turn carries nothing and the API rejects it
            # Consecutive assistant messages stay apart (a paused turn and its
            # continuation): the API reads them as one turn.
            out.append({"role": "assistant", "content": blocks})
        else:
            raise UsageError(f"not a toolwire message: {type(message).__name__}")
    return _system(system), out


def encode_request(
    *,
    model: str,
    messages: Sequence[Message],
    tools: Sequence[Mapping[str, Any]] = (),
    tool_choice: ToolChoice | None = None,
    stream: bool = True,
    max_tokens: int | None = None,
    temperature: float | None = None,
    default_max_tokens: int = 4096,
    thinking: Mapping[str, Any] | None = None,
    disable_parallel_tool_use: bool | None = None,
    cache_tools: CachePoint | None = None,
) -> dict[str, Any]:
    """The JSON body of a ``/v1/messages`` request.

    Args:
        default_max_tokens: ``max_tokens`` when none is given (the API
            requires one); raised above a thinking budget.
        thinking: the ``thinking`` object, if enabled.
        disable_parallel_tool_use: sent in ``tool_choice`` when set.
        cache_tools: a cache point after the tools (``cache_control`` on the last).

    Raises:
        UsageError: forcing a tool while thinking is enabled (the API refuses
            it), an invalid ``tool_choice``, or a message it cannot express.
        ContentError: a part this dialect cannot carry, or past a limit.
    """
    CONTENT.check_request(messages)
    system, wire = encode_messages(messages)
    if max_tokens is None:
        max_tokens = default_max_tokens
        budget = int_or_none(dict_or_empty(thinking).get("budget_tokens"))
        if budget is not None and max_tokens <= budget:
            max_tokens = budget + default_max_tokens
    body: dict[str, Any] = {"model": model, "max_tokens": max_tokens, "messages": wire}
    if system is not None:
        body["system"] = system
    container = _container(messages)
    if container is not None:
        body["container"] = container
    if tools:
        body["tools"] = [dict(t) for t in tools]
        if cache_tools is not None:
            mark_cached(body["tools"], cache_tools)
        choice = _tool_choice(tools, tool_choice, disable_parallel_tool_use)
        if choice is not None:
            if thinking and choice["type"] in ("any", "tool"):
                raise UsageError(
                    "Anthropic does not allow forcing a tool while thinking is enabled"
                )
            body["tool_choice"] = choice
    elif tool_choice not in (None, "none", "auto"):
        raise UsageError(f"tool_choice {tool_choice!r} needs at least one tool")
    if temperature is not None:
        body["temperature"] = temperature
    if thinking is not None:
        body["thinking"] = dict(thinking)
    if stream:
        body["stream"] = True
    return body


def _tool_choice(
    tools: Sequence[Mapping[str, Any]],
    tool_choice: ToolChoice | None,
    disable_parallel_tool_use: bool | None,
) -> dict[str, Any] | None:
    forced = check_tool_choice(tool_choice, tool_names(tools, lambda t: t.get("name")))
    choice: dict[str, Any] | None = None
    if forced is not None:
        choice = {"type": "tool", "name": forced}
    elif tool_choice == "required":
        choice = {"type": "any"}
    elif tool_choice in ("auto", "none"):
        choice = {"type": tool_choice}
    if disable_parallel_tool_use is not None and (choice is None or choice["type"] != "none"):
        choice = choice or {"type": "auto"}
        choice["disable_parallel_tool_use"] = disable_parallel_tool_use
    return choice


def __getattr__(name: str) -> object:
    """Older names, with a warning (see :mod:`toolwire._compat`)."""
    return _compat.renamed(__name__, name)
