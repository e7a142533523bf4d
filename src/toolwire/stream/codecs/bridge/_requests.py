"""Reading a served dialect's request into an :class:`~toolwire.bridge.Asked`.

One reader per dialect the bridge serves (Anthropic Messages, OpenAI Chat
Completions, OpenAI Responses, Gemini): the conversation as toolwire's
messages (system text, user text, the assistant's text, reasoning and
calls, tool results), the tools read back from the dialect's entries
(:func:`~toolwire.stream.codecs.tool_specs.read_tools`), the tool choice,
the limits and the reasoning effort. What has no meaning in another
dialect (a provider's built-in tools, cache controls, signatures) is left
out; images, documents and audio become toolwire's parts, which the
upstream's codec writes in its own shape. A body not of the dialect's shape is a
:class:`~toolwire.errors.BadRequest`, answered 400 in the served dialect.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from toolwire.errors import BadRequest
from toolwire.messages import Message, SystemMessage, ToolResultMessage, UserMessage
from toolwire.stream import jsonio
from toolwire.stream.codecs._reading import as_list, as_object, content_of, model_of, text_of
from toolwire.stream.codecs.bridge._asked import Asked, Calls, count, number
from toolwire.stream.codecs.request import ToolChoice
from toolwire.stream.codecs.tool_specs import PlainTool, read_tools

__all__ = ["READERS", "read_request"]


def _tools(entries: Any) -> tuple[tuple[PlainTool, ...], frozenset[str]]:
    tools, _ = read_tools(as_list(entries, "tools"))
    freeform = frozenset(t.name for t in tools if t.freeform is not None)
    # A custom tool's input is one string: other dialects see it as {"input": text}.
    shaped = [
        PlainTool(
            t.name,
            t.description,
            {"type": "object", "properties": {"input": {"type": "string"}}, "required": ["input"]},
        )
        if t.freeform is not None
        else t
        for t in tools
    ]
    return tuple(shaped), freeform


def _user(content: Any, where: str) -> list[Message]:
    """A user message of text and parts (none when it says nothing)."""
    items = content_of(content, where)
    if any(not isinstance(item, str) for item in items):
        return [UserMessage(content=items)]
    text = "".join(item for item in items if isinstance(item, str))
    return [UserMessage(text)] if text or isinstance(content, str) else []


def _result(
    call_id: str, name: str, content: Any, where: str, *, is_error: bool = False
) -> ToolResultMessage:
    """A tool result: its text, and its parts when it holds media."""
    parts = content_of(content, where) if isinstance(content, list) else ()
    return ToolResultMessage(call_id, name, text_of(content), is_error=is_error, parts=parts)


def _effort(budget: Any) -> str | None:
    tokens = count(budget)
    if tokens is None:
        return None
    return "low" if tokens < 4096 else "medium" if tokens < 16384 else "high"


# -- Anthropic Messages ------------------------------------------------------------


_ANTHROPIC_EFFORTS = {
    "low": "low",
    "medium": "medium",
    "high": "high",
    "xhigh": "high",
    "max": "high",
}
"""``output_config.effort`` as an upstream's effort: ``xhigh`` and ``max`` read
as ``high``, the highest every reasoning model upstream takes."""


def _anthropic_effort(body: Mapping[str, Any]) -> str | None:
    """The effort an Anthropic request asks for: ``output_config.effort``
    (sent with adaptive thinking), else what its thinking budget reads as;
    none for adaptive thinking without an effort (the upstream's default)."""
    config = body.get("output_config")
    effort = config.get("effort") if isinstance(config, Mapping) else None
    if effort is not None:
        if not isinstance(effort, str) or effort not in _ANTHROPIC_EFFORTS:
            known = ", ".join(_ANTHROPIC_EFFORTS)
            raise BadRequest(f"output_config.effort must be one of {known}")
        return _ANTHROPIC_EFFORTS[effort]
    thinking = body.get("thinking")
    return _effort(thinking.get("budget_tokens") if isinstance(thinking, Mapping) else None)


def _anthropic_choice(choice: Any) -> ToolChoice | None:
    if not isinstance(choice, Mapping):
        return None
    kind = choice.get("type")
    if kind == "tool" and isinstance(choice.get("name"), str):
        return {"name": choice["name"]}
    return {"auto": "auto", "any": "required", "none": "none"}.get(str(kind))  # type: ignore[return-value]


def read_anthropic(body: dict[str, Any], model: str | None, stream: bool | None) -> Asked:
    """A ``/v1/messages`` request. A ``system`` message inside ``messages``
    (as Claude Code 2.1.328 and later send) is read as system text."""
    messages: list[Message] = []
    if body.get("system"):
        messages.append(SystemMessage(text_of(body["system"])))
    turn = Calls()
    for i, raw in enumerate(as_list(body.get("messages"), "messages")):
        message = as_object(raw, f"messages[{i}]")
        role, content = message.get("role"), message.get("content")
        blocks = content if isinstance(content, list) else [{"type": "text", "text": content}]
        if role == "assistant":
            for block in blocks:
                kind = block.get("type") if isinstance(block, Mapping) else None
                if kind == "text":
                    turn.text(text_of([block]))
                elif kind == "thinking":
                    turn.reasoning(str(block.get("thinking") or ""))
                elif kind == "tool_use":
                    turn.call(str(block.get("id")), str(block.get("name")), block.get("input"))
            continue
        turn.flush(messages)
        if role == "system":
            messages.append(SystemMessage(text_of(content)))
            continue
        if role != "user":
            raise BadRequest(f"messages[{i}].role must be 'user', 'assistant' or 'system'")
        said: list[Any] = []
        for j, block in enumerate(blocks):
            if isinstance(block, Mapping) and block.get("type") == "tool_result":
                call_id = str(block.get("tool_use_id"))
                name, answer = turn.names.get(call_id, ""), block.get("content")
                where = f"messages[{i}].content[{j}].content"
                messages.append(
                    _result(call_id, name, answer, where, is_error=block.get("is_error") is True)
                )
            else:
                said.append(block)
        if said:
            messages.extend(_user(said, f"messages[{i}].content"))
    turn.flush(messages)
    tools, freeform = _tools(body.get("tools"))
    return Asked(
        dialect="anthropic-messages",
        model=model_of(body, model),
        messages=tuple(messages),
        tools=tools,
        tool_choice=_anthropic_choice(body.get("tool_choice")),
        stream=stream if stream is not None else body.get("stream") is True,
        max_tokens=count(body.get("max_tokens")),
        temperature=number(body.get("temperature")),
        reasoning=_anthropic_effort(body),
        freeform=freeform,
    )


# -- OpenAI Chat Completions -------------------------------------------------------


def _openai_choice(choice: Any) -> ToolChoice | None:
    if isinstance(choice, str) and choice in ("auto", "required", "none"):
        return choice  # type: ignore[return-value]
    if isinstance(choice, Mapping):
        inner = choice.get("function") or choice.get("custom") or choice
        if isinstance(inner, Mapping) and isinstance(inner.get("name"), str):
            return {"name": inner["name"]}
    return None


def read_openai_chat(body: dict[str, Any], model: str | None, stream: bool | None) -> Asked:
    """A ``/chat/completions`` request."""
    messages: list[Message] = []
    turn = Calls()
    for i, raw in enumerate(as_list(body.get("messages"), "messages")):
        message = as_object(raw, f"messages[{i}]")
        role = message.get("role")
        if role == "assistant":
            turn.text(text_of(message.get("content")))
            turn.reasoning(str(message.get("reasoning_content") or message.get("reasoning") or ""))
            for call in as_list(message.get("tool_calls"), f"messages[{i}].tool_calls"):
                function = call.get("function") or call.get("custom") or {}
                arguments = function.get("arguments", function.get("input"))
                if "input" in function and "arguments" not in function:
                    arguments = {"input": function["input"]}
                turn.call(str(call.get("id")), str(function.get("name")), arguments)
            turn.flush(messages)
        elif role in ("system", "developer"):
            messages.append(SystemMessage(text_of(message.get("content"))))
        elif role == "user":
            messages.extend(_user(message.get("content"), f"messages[{i}].content"))
        elif role == "tool":
            call_id = str(message.get("tool_call_id"))
            name = turn.names.get(call_id, "")
            messages.append(ToolResultMessage(call_id, name, text_of(message.get("content"))))
        else:
            raise BadRequest(f"messages[{i}].role {role!r} is not one this bridge reads")
    tools, freeform = _tools(body.get("tools"))
    options = body.get("stream_options")
    limit = body.get("max_completion_tokens", body.get("max_tokens"))
    effort = body.get("reasoning_effort")
    return Asked(
        dialect="openai-chat",
        model=model_of(body, model),
        messages=tuple(messages),
        tools=tools,
        tool_choice=_openai_choice(body.get("tool_choice")),
        stream=body.get("stream") is True,
        max_tokens=count(limit),
        temperature=number(body.get("temperature")),
        include_usage=isinstance(options, Mapping) and options.get("include_usage") is True,
        reasoning=effort if isinstance(effort, str) else None,
        freeform=freeform,
    )


# -- OpenAI Responses --------------------------------------------------------------


def read_openai_responses(body: dict[str, Any], model: str | None, stream: bool | None) -> Asked:
    """A ``/v1/responses`` request (its whole ``input``: no ``previous_response_id``)."""
    if body.get("previous_response_id"):
        raise BadRequest("the bridge keeps no responses: send the whole input")
    messages: list[Message] = []
    if isinstance(body.get("instructions"), str) and body["instructions"]:
        messages.append(SystemMessage(body["instructions"]))
    given = body.get("input")
    items = (
        [{"role": "user", "content": given}] if isinstance(given, str) else as_list(given, "input")
    )
    turn = Calls()
    for i, raw in enumerate(items):
        item = as_object(raw, f"input[{i}]")
        kind, role = item.get("type", "message"), item.get("role")
        if kind == "message" and role == "assistant":
            turn.text(text_of(item.get("content")))
        elif kind == "reasoning":
            turn.reasoning(text_of(item.get("summary")))
        elif kind in ("function_call", "custom_tool_call"):
            arguments = item.get("arguments")
            if kind == "custom_tool_call":
                arguments = {"input": item.get("input")}
            turn.call(str(item.get("call_id")), str(item.get("name")), arguments)
        elif kind in ("function_call_output", "custom_tool_call_output"):
            turn.flush(messages)
            call_id = str(item.get("call_id"))
            name = turn.names.get(call_id, "")
            messages.append(_result(call_id, name, item.get("output"), f"input[{i}].output"))
        elif kind == "message":
            turn.flush(messages)
            if role in ("system", "developer"):
                messages.append(SystemMessage(text_of(item.get("content"))))
            else:
                messages.extend(_user(item.get("content"), f"input[{i}].content"))
    turn.flush(messages)
    tools, freeform = _tools(body.get("tools"))
    reasoning = body.get("reasoning")
    effort = reasoning.get("effort") if isinstance(reasoning, Mapping) else None
    return Asked(
        dialect="openai-responses",
        model=model_of(body, model),
        messages=tuple(messages),
        tools=tools,
        tool_choice=_openai_choice(body.get("tool_choice")),
        stream=body.get("stream") is True,
        max_tokens=count(body.get("max_output_tokens")),
        temperature=number(body.get("temperature")),
        reasoning=effort if isinstance(effort, str) else None,
        freeform=freeform,
    )


# -- Gemini ------------------------------------------------------------------------


def _gemini_choice(config: Any) -> ToolChoice | None:
    calling = config.get("functionCallingConfig") if isinstance(config, Mapping) else None
    if not isinstance(calling, Mapping):
        return None
    mode = str(calling.get("mode", "")).upper()
    names = calling.get("allowedFunctionNames")
    if mode == "ANY" and isinstance(names, list) and len(names) == 1:
        return {"name": str(names[0])}
    return {"AUTO": "auto", "ANY": "required", "NONE": "none"}.get(mode)  # type: ignore[return-value]


def read_gemini(body: dict[str, Any], model: str | None, stream: bool | None) -> Asked:
    """A ``models/{model}:streamGenerateContent`` (or ``:generateContent``)
    request. Calls without an id get one by name and order, and so do the
    results that answer them."""
    messages: list[Message] = []
    system = body.get("systemInstruction", body.get("system_instruction"))
    if isinstance(system, Mapping):
        messages.append(SystemMessage(text_of(system.get("parts"))))
    turn = Calls()
    minted: dict[str, list[str]] = {}
    for i, raw in enumerate(as_list(body.get("contents"), "contents")):
        content = as_object(raw, f"contents[{i}]")
        parts = [
            p for p in as_list(content.get("parts"), f"contents[{i}].parts") if isinstance(p, dict)
        ]
        if content.get("role") == "model":
            for part in parts:
                call = part.get("functionCall", part.get("function_call"))
                if isinstance(call, Mapping):
                    name = str(call.get("name"))
                    call_id = call.get("id") or f"call_{name}_{len(turn.names)}"
                    minted.setdefault(name, []).append(str(call_id))
                    turn.call(str(call_id), name, call.get("args") or {})
                elif part.get("thought") is True:
                    turn.reasoning(str(part.get("text") or ""))
                elif isinstance(part.get("text"), str):
                    turn.text(part["text"])
            turn.flush(messages)
            continue
        said: list[Any] = []
        for j, part in enumerate(parts):
            answer = part.get("functionResponse", part.get("function_response"))
            if isinstance(answer, Mapping):
                name = str(answer.get("name"))
                waiting = minted.get(name) or []
                call_id = answer.get("id") or (waiting.pop(0) if waiting else f"call_{name}")
                where = f"contents[{i}].parts[{j}].functionResponse.parts"
                media = content_of(answer.get("parts"), where)
                text = jsonio.dumps(answer.get("response"))
                messages.append(ToolResultMessage(str(call_id), name, text, parts=(text, *media)))
            else:
                said.append(part)
        if said:
            messages.extend(_user(said, f"contents[{i}].parts"))
    tools, freeform = _tools(body.get("tools"))
    config = body.get("generationConfig", body.get("generation_config"))
    config = config if isinstance(config, Mapping) else {}
    thinking = config.get("thinkingConfig")
    budget = thinking.get("thinkingBudget") if isinstance(thinking, Mapping) else None
    return Asked(
        dialect="gemini",
        model=model_of(body, model),
        messages=tuple(messages),
        tools=tools,
        tool_choice=_gemini_choice(body.get("toolConfig", body.get("tool_config"))),
        stream=stream is True,
        max_tokens=count(config.get("maxOutputTokens")),
        temperature=number(config.get("temperature")),
        reasoning=_effort(budget),
        freeform=freeform,
    )


READERS: dict[str, Callable[[dict[str, Any], str | None, bool | None], Asked]] = {
    "anthropic-messages": read_anthropic,
    "openai-chat": read_openai_chat,
    "openai-responses": read_openai_responses,
    "gemini": read_gemini,
}
"""The reader of each dialect the bridge serves."""


def read_request(dialect: str, body: bytes, model: str | None, stream: bool | None) -> Asked:
    """A request body of ``dialect`` read (``model`` and ``stream`` when its URL says).

    Raises:
        BadRequest: not JSON, or not of the dialect's shape.
    """
    try:
        parsed = jsonio.loads(body)
    except ValueError as exc:
        raise BadRequest(f"request body is not valid JSON: {exc}") from exc
    if not isinstance(parsed, dict):
        raise BadRequest("request body must be a JSON object")
    try:
        return READERS[dialect](parsed, model, stream)
    except (AttributeError, TypeError) as exc:  # a part of the wrong JSON type
        raise BadRequest(f"request body is not a {dialect} request: {exc}") from exc
