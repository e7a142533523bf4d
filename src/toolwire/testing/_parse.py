"""Reading requests of the four dialects into what the emulation server needs.

Theory of operation: the server keeps no conversation state, so everything it
needs comes from the request: which turn is asked for (the number of assistant
messages in the history), the tool results it can quote (and whether one is an
error), a key naming the conversation (a hash of the history before the first
assistant message) so that ids stay deterministic, and the streaming options.
Request bodies come from arbitrary clients: every shape error becomes a
:class:`BadRequest` with a readable message, answered with HTTP 400.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field, replace
from typing import Any

from toolwire.errors import ToolwireError
from toolwire.stream import _json

__all__ = ["BadRequest", "ParsedRequest", "ToolResult", "parse_request"]


class BadRequest(ToolwireError):
    """The request body does not follow the dialect; answered with HTTP 400."""

    type_name = "bad_request"


@dataclass(frozen=True, slots=True)
class ToolResult:
    """A tool result found in a request's history."""

    call_id: str | None
    name: str | None
    content: str
    is_error: bool


@dataclass(frozen=True, slots=True)
class ParsedRequest:
    """What the server reads from one request."""

    dialect: str
    model: str
    stream: bool
    assistant_turns: int
    conversation: str
    """A short hash of the history before the first assistant message."""
    results: tuple[ToolResult, ...] = ()
    """Every tool result of the history, oldest first."""
    latest_results: tuple[ToolResult, ...] = ()
    """The tool results after the last assistant message."""
    include_usage: bool = False
    include_obfuscation: bool = True
    tools: list[Any] = field(default_factory=list[Any])
    instructions: str | None = None

    @property
    def latest_has_error(self) -> bool:
        """True when one of the latest tool results reports an error."""
        return any(r.is_error for r in self.latest_results)


def parse_request(
    dialect: str, body: bytes, *, model: str | None = None, stream: bool | None = None
) -> ParsedRequest:
    """Parse a request body of ``dialect``.

    Args:
        dialect: one of :data:`~toolwire.types.PROVIDER_DIALECTS`.
        body: the raw request body.
        model: the model when the dialect puts it in the URL (Gemini, Bedrock).
        stream: whether the endpoint streams, when the URL says so (Gemini, Bedrock).

    Raises:
        BadRequest: the body is not JSON or not in the dialect's shape.
    """
    try:
        data = _json.loads(body)
    except _json.JSONDecodeError as exc:
        raise BadRequest(f"request body is not valid JSON: {exc}") from exc
    if not isinstance(data, dict):
        raise BadRequest("request body must be a JSON object")
    if dialect == "openai-chat":
        return _parse_openai_chat(data)
    if dialect == "openai-responses":
        return _parse_openai_responses(data)
    if dialect == "anthropic-messages":
        if model is not None:  # Claude on Vertex AI: the model is in the URL
            data = {"model": model, **data}
        return _parse_anthropic(data)
    if dialect == "gemini":
        return _parse_gemini(data, model=model or "gemini", stream=bool(stream))
    if dialect == "bedrock-converse":
        return _parse_bedrock_converse(data, model=model or "bedrock", stream=bool(stream))
    if dialect == "bedrock-invoke":
        # Anthropic's body, with the model and the streaming in the URL.
        inner = _parse_anthropic({**data, "model": model or "bedrock", "stream": bool(stream)})
        return replace(inner, dialect=dialect)
    raise BadRequest(f"unknown API {dialect!r}")


def _conversation_key(opening: list[Any]) -> str:
    return hashlib.sha256(_json.dumps_bytes(opening)).hexdigest()[:16]


def _get_list(data: dict[str, Any], key: str, *, required: bool = True) -> list[Any]:
    value = data.get(key)
    if value is None and not required:
        return []
    if not isinstance(value, list):
        raise BadRequest(f"'{key}' must be an array")
    return value


def _get_model(data: dict[str, Any]) -> str:
    model = data.get("model")
    if not isinstance(model, str) or not model:
        raise BadRequest("'model' must be a non-empty string")
    return model


def _get_bool(data: dict[str, Any], key: str) -> bool:
    value = data.get(key, False)
    if value is None:
        return False
    if not isinstance(value, bool):
        raise BadRequest(f"'{key}' must be a boolean")
    return value


def _item(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise BadRequest(f"{where} must be an object")
    return value


def _text_of(content: Any) -> str:
    """The text of a message content: a string, or a list of text parts."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts: list[str] = []
        for part in content:
            if isinstance(part, dict) and isinstance(part.get("text"), str):
                parts.append(part["text"])
            elif isinstance(part, str):
                parts.append(part)
        return "".join(parts)
    return _json.dumps(content)


def _looks_like_error(content: str) -> bool:
    """A tool result reports an error when it is a JSON object with an ``error`` key.

    That is the shape toolwire's executor (and most agent frameworks) send back;
    Anthropic's explicit ``is_error`` flag is read separately.
    """
    if not content.startswith("{"):
        return False
    try:
        value = _json.loads(content)
    except _json.JSONDecodeError:
        return False
    return isinstance(value, dict) and value.get("error") not in (None, False, "")


def _split_latest(
    events: list[tuple[str, ToolResult | None]],
) -> tuple[int, tuple[ToolResult, ...], tuple[ToolResult, ...]]:
    """Count assistant turns and find the results after the last one.

    ``events`` is the history reduced to ``("assistant", None)`` and
    ``("result", result)`` markers, in order.
    """
    turns = 0
    every: list[ToolResult] = []
    latest: list[ToolResult] = []
    for kind, result in events:
        if kind == "assistant":
            turns += 1
            latest = []
        elif result is not None:
            every.append(result)
            latest.append(result)
    return turns, tuple(every), tuple(latest)


def _parse_openai_chat(data: dict[str, Any]) -> ParsedRequest:
    messages = _get_list(data, "messages")
    names: dict[str, str] = {}
    events: list[tuple[str, ToolResult | None]] = []
    opening: list[Any] = []
    seen_assistant = False
    for i, raw in enumerate(messages):
        message = _item(raw, f"messages[{i}]")
        role = message.get("role")
        if not isinstance(role, str):
            raise BadRequest(f"messages[{i}].role must be a string")
        if role == "assistant":
            seen_assistant = True
            events.append(("assistant", None))
            for call in message.get("tool_calls") or []:
                if isinstance(call, dict):
                    function = call.get("function")
                    if isinstance(call.get("id"), str) and isinstance(function, dict):
                        names[call["id"]] = str(function.get("name"))
        elif role == "tool":
            call_id = message.get("tool_call_id")
            if not isinstance(call_id, str):
                raise BadRequest(f"messages[{i}].tool_call_id must be a string")
            content = _text_of(message.get("content"))
            result = ToolResult(call_id, names.get(call_id), content, _looks_like_error(content))
            events.append(("result", result))
        if not seen_assistant:
            opening.append(message)
    options = data.get("stream_options")
    options = options if isinstance(options, dict) else {}
    turns, every, latest = _split_latest(events)
    return ParsedRequest(
        dialect="openai-chat",
        model=_get_model(data),
        stream=_get_bool(data, "stream"),
        assistant_turns=turns,
        conversation=_conversation_key(opening),
        results=every,
        latest_results=latest,
        include_usage=options.get("include_usage") is True,
        include_obfuscation=options.get("include_obfuscation") is not False,
    )


_RESPONSES_ASSISTANT_ITEMS = frozenset(
    {"function_call", "reasoning", "web_search_call", "file_search_call", "computer_call"}
)


def _parse_openai_responses(data: dict[str, Any]) -> ParsedRequest:
    if data.get("previous_response_id") is not None:
        raise BadRequest(
            "previous_response_id is not supported: the emulation server keeps no "
            "state, send the whole conversation in 'input'"
        )
    raw_input = data.get("input")
    items: list[Any] = (
        [{"role": "user", "content": raw_input}] if isinstance(raw_input, str) else []
    )
    if isinstance(raw_input, list):
        items = raw_input
    elif not isinstance(raw_input, str):
        raise BadRequest("'input' must be a string or an array")
    names: dict[str, str] = {}
    events: list[tuple[str, ToolResult | None]] = []
    opening: list[Any] = [data.get("instructions")]
    seen_assistant = False
    in_assistant_run = False
    for i, raw in enumerate(items):
        item = _item(raw, f"input[{i}]")
        kind = item.get("type", "message")
        is_assistant = kind in _RESPONSES_ASSISTANT_ITEMS or (
            kind == "message" and item.get("role") == "assistant"
        )
        if kind == "function_call":
            call_id, name = item.get("call_id"), item.get("name")
            if isinstance(call_id, str) and isinstance(name, str):
                names[call_id] = name
        if is_assistant:
            seen_assistant = True
            # One assistant turn may span several items (reasoning, message,
            # function calls): count a run of them once.
            if not in_assistant_run:
                events.append(("assistant", None))
            in_assistant_run = True
            continue
        in_assistant_run = False
        if kind == "function_call_output":
            call_id = item.get("call_id")
            if not isinstance(call_id, str):
                raise BadRequest(f"input[{i}].call_id must be a string")
            content = _text_of(item.get("output"))
            result = ToolResult(call_id, names.get(call_id), content, _looks_like_error(content))
            events.append(("result", result))
        if not seen_assistant:
            opening.append(item)
    tools = data.get("tools")
    instructions = data.get("instructions")
    turns, every, latest = _split_latest(events)
    return ParsedRequest(
        dialect="openai-responses",
        model=_get_model(data),
        stream=_get_bool(data, "stream"),
        assistant_turns=turns,
        conversation=_conversation_key(opening),
        results=every,
        latest_results=latest,
        include_usage=True,
        tools=tools if isinstance(tools, list) else [],
        instructions=instructions if isinstance(instructions, str) else None,
    )


def _parse_anthropic(data: dict[str, Any]) -> ParsedRequest:
    messages = _get_list(data, "messages")
    names: dict[str, str] = {}
    events: list[tuple[str, ToolResult | None]] = []
    opening: list[Any] = [data.get("system")]
    seen_assistant = False
    for i, raw in enumerate(messages):
        message = _item(raw, f"messages[{i}]")
        role = message.get("role")
        content = message.get("content")
        blocks = content if isinstance(content, list) else []
        if role == "assistant":
            seen_assistant = True
            events.append(("assistant", None))
            for block in blocks:
                if isinstance(block, dict) and block.get("type") == "tool_use":
                    if isinstance(block.get("id"), str):
                        names[block["id"]] = str(block.get("name"))
        elif role == "user":
            for j, block in enumerate(blocks):
                if not isinstance(block, dict) or block.get("type") != "tool_result":
                    continue
                call_id = block.get("tool_use_id")
                if not isinstance(call_id, str):
                    raise BadRequest(f"messages[{i}].content[{j}].tool_use_id must be a string")
                text = _text_of(block.get("content"))
                is_error = block.get("is_error") is True or _looks_like_error(text)
                events.append(("result", ToolResult(call_id, names.get(call_id), text, is_error)))
        else:
            raise BadRequest(f"messages[{i}].role must be 'user' or 'assistant'")
        if not seen_assistant:
            opening.append(message)
    turns, every, latest = _split_latest(events)
    return ParsedRequest(
        dialect="anthropic-messages",
        model=_get_model(data),
        stream=_get_bool(data, "stream"),
        assistant_turns=turns,
        conversation=_conversation_key(opening),
        results=every,
        latest_results=latest,
        include_usage=True,
    )


def _parse_bedrock_converse(data: dict[str, Any], *, model: str, stream: bool) -> ParsedRequest:
    messages = _get_list(data, "messages")
    names: dict[str, str] = {}
    events: list[tuple[str, ToolResult | None]] = []
    opening: list[Any] = [data.get("system")]
    seen_assistant = False
    for i, raw in enumerate(messages):
        message = _item(raw, f"messages[{i}]")
        role = message.get("role")
        content = message.get("content")
        blocks = [b for b in (content if isinstance(content, list) else []) if isinstance(b, dict)]
        if role == "assistant":
            seen_assistant = True
            events.append(("assistant", None))
            for block in blocks:
                use = block.get("toolUse")
                if isinstance(use, dict) and isinstance(use.get("toolUseId"), str):
                    names[use["toolUseId"]] = str(use.get("name"))
        elif role == "user":
            for j, block in enumerate(blocks):
                result = block.get("toolResult")
                if not isinstance(result, dict):
                    continue
                call_id = result.get("toolUseId")
                if not isinstance(call_id, str):
                    raise BadRequest(
                        f"messages[{i}].content[{j}].toolResult.toolUseId must be a string"
                    )
                text = _text_of(result.get("content"))
                is_error = result.get("status") == "error" or _looks_like_error(text)
                events.append(("result", ToolResult(call_id, names.get(call_id), text, is_error)))
        else:
            raise BadRequest(f"messages[{i}].role must be 'user' or 'assistant'")
        if not seen_assistant:
            opening.append(message)
    turns, every, latest = _split_latest(events)
    config = data.get("toolConfig")
    return ParsedRequest(
        dialect="bedrock-converse",
        model=model,
        stream=stream,
        assistant_turns=turns,
        conversation=_conversation_key(opening),
        results=every,
        latest_results=latest,
        include_usage=True,
        tools=list(config.get("tools") or []) if isinstance(config, dict) else [],
    )


def _gemini_result_text(response: Any) -> str:
    # Gemini wraps a tool's output in an object; most clients use a single
    # "result"/"output"/"content" key holding the text: quote that text alone.
    if isinstance(response, dict) and len(response) == 1:
        ((key, value),) = response.items()
        if key in ("result", "output", "content") and isinstance(value, str):
            return value
    return _json.dumps(response)


def _parse_gemini(data: dict[str, Any], *, model: str, stream: bool) -> ParsedRequest:
    contents = _get_list(data, "contents")
    events: list[tuple[str, ToolResult | None]] = []
    opening: list[Any] = [data.get("systemInstruction") or data.get("system_instruction")]
    seen_assistant = False
    for i, raw in enumerate(contents):
        content = _item(raw, f"contents[{i}]")
        parts = content.get("parts")
        parts = parts if isinstance(parts, list) else []
        if content.get("role") == "model":
            seen_assistant = True
            events.append(("assistant", None))
        else:
            for j, part in enumerate(parts):
                if not isinstance(part, dict) or "functionResponse" not in part:
                    continue
                response = _item(part["functionResponse"], f"contents[{i}].parts[{j}]")
                name = response.get("name")
                call_id = response.get("id")
                text = _gemini_result_text(response.get("response"))
                payload = response.get("response")
                is_error = (
                    isinstance(payload, dict) and payload.get("error") not in (None, False, "")
                ) or _looks_like_error(text)
                events.append(
                    (
                        "result",
                        ToolResult(
                            call_id if isinstance(call_id, str) else None,
                            name if isinstance(name, str) else None,
                            text,
                            is_error,
                        ),
                    )
                )
        if not seen_assistant:
            opening.append(content)
    turns, every, latest = _split_latest(events)
    return ParsedRequest(
        dialect="gemini",
        model=model,
        stream=stream,
        assistant_turns=turns,
        conversation=_conversation_key(opening),
        results=every,
        latest_results=latest,
        include_usage=True,
    )
