"""Gemini Interactions requests: a conversation as ``input`` steps, its
tools and tool choice, ``previous_interaction_id`` when chaining, and the
paths (see :mod:`toolwire.stream.codecs.gemini_interactions` for the stream).

A conversation becomes a list of steps (google-genai's ``Step`` union):
``user_input`` (``content: [{"type": "text", "text"}]``), ``model_output``
(the same content), ``thought`` (``signature`` and ``summary``, sent back as
the stream gave them), ``function_call`` (``id``, ``name``, ``arguments``
object) and ``function_result`` (``call_id``, ``name``, ``result``,
``is_error``). System text is ``system_instruction``, a string. Tools are
``{"type": "function", "name", "description", "parameters"}``;
``tool_choice`` lives in ``generation_config`` (``auto``, ``any``, ``none``,
or ``{"allowed_tools": {"mode": "any", "tools": [name]}}``).

Continuing: a turn that ended ``requires_continuation`` keeps its
``continuation_token``; when it is the conversation's last message, the
request sends the token and, instead of the paused turn, the input it
continues (chained: no input at all, the server holds it).

Chaining: each assistant turn keeps the id of the interaction it came from
(a provider-state item ``{"type": "interaction", "id"}``). With ``chain``,
a request names the latest such turn in ``previous_interaction_id`` and
sends only the messages after it: the server holds the rest. Tools and the
system instruction belong to one interaction and are sent every time.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final
from urllib.parse import quote, urlencode

from toolwire import _compat
from toolwire.content import ContentItem
from toolwire.errors import UsageError
from toolwire.messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolResultMessage,
    UserMessage,
)
from toolwire.stream.codecs._dialect import RouteTarget, SchemaTool
from toolwire.stream.codecs.content import MB, ContentLimits, ContentSupport, every, split_text
from toolwire.stream.codecs.request import (
    ToolChoice,
    check_tool_choice,
    interleave,
    state_items,
)
from toolwire.types import ToolCall

__all__ = [
    "CONTENT",
    "CONTINUATION",
    "DIALECT_NAME",
    "INTERACTION",
    "KEPT_STEP",
    "THOUGHT",
    "encode_request",
    "encode_steps",
    "tool_schemas",
]

DIALECT_NAME = "gemini-interactions"

INTERACTION: Final = "interaction"
"""The provider-state item naming the interaction a turn came from."""
CONTINUATION: Final = "continuation"
"""The provider-state item of a paused turn's ``continuation_token``
(``{"type": "continuation", "token"}``)."""
THOUGHT: Final = "thought"
"""A ``thought`` step kept as the stream gave it (its signature goes back)."""
KEPT_STEP: Final = "step"
"""A built-in tool's step kept whole: ``{"type": "step", "step": {...}}``."""

_MODES: Final = {"auto": "auto", "required": "any", "none": "none"}


def _text(text: str) -> list[dict[str, Any]]:
    return [{"type": "text", "text": text}]


CONTENT = ContentSupport(
    dialect=DIALECT_NAME,
    prompt={
        "image": every("image") - {"image/gif"},
        "document": frozenset({"application/pdf"}),
        "audio": every("audio") - {"audio/webm"},
    },
    tool_result={},
    urls={"image": every("image"), "document": frozenset({"application/pdf"})},
    url_schemes=("https://", "gs://"),
    limits=ContentLimits(request_bytes=20 * MB),
)
"""``image``, ``audio`` and ``document`` content of a ``user_input`` step
(``data`` and ``mime_type``, or ``uri``); a ``function_result`` carries text."""


def _content(items: Sequence[ContentItem]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for item in split_text(items):
        if isinstance(item, str):
            out.append({"type": "text", "text": item})
        elif item.url is not None:
            out.append({"type": item.kind, "uri": item.url, "mime_type": item.media_type})
        else:
            out.append({"type": item.kind, "data": item.base64(), "mime_type": item.media_type})
    return out


def tool_schemas(tools: Sequence[tuple[str, str, dict[str, Any]]]) -> list[dict[str, Any]]:
    """A request's ``tools``: one ``function`` tool per ``(name, description,
    parameters)``; the parameters are JSON Schema, sent as given."""
    out: list[dict[str, Any]] = []
    for name, description, parameters in tools:
        entry: dict[str, Any] = {"type": "function", "name": name}
        if description:
            entry["description"] = description
        entry["parameters"] = parameters or {"type": "object", "properties": {}}
        out.append(entry)
    return out


def _tool_schemas(tools: Sequence[SchemaTool], strict: bool | None) -> list[dict[str, Any]]:
    return tool_schemas([(t.name, t.description, dict(t.parameters)) for t in tools])


def _model_steps(message: AssistantMessage) -> list[dict[str, Any]]:
    steps: list[dict[str, Any]] = []
    kept = state_items(message, (THOUGHT, KEPT_STEP), DIALECT_NAME)
    for kind, value in interleave(message.text, message.tool_calls, kept):
        if kind == "text":
            steps.append({"type": "model_output", "content": _text(value)})
        elif kind == "call":
            arguments = value.arguments if isinstance(value, ToolCall) else {}
            steps.append(
                {
                    "type": "function_call",
                    "id": value.id,
                    "name": value.name,
                    "arguments": arguments,
                }
            )
        elif value.get("type") == THOUGHT:
            steps.append(value)
        elif isinstance(value.get("step"), dict):
            steps.append(dict(value["step"]))
    return steps


def interaction_id(message: AssistantMessage) -> str | None:
    """The id of the interaction an assistant turn came from, if kept."""
    for item in state_items(message, (INTERACTION,), DIALECT_NAME):
        found = item.get("id")
        if isinstance(found, str) and found:
            return found
    return None


def encode_steps(messages: Sequence[Message]) -> tuple[str | None, list[dict[str, Any]]]:
    """``(system_instruction, input steps)`` for a conversation."""
    system: list[str] = []
    steps: list[dict[str, Any]] = []
    for message in messages:
        if isinstance(message, SystemMessage):
            system.append(message.text)
        elif isinstance(message, UserMessage):
            content = _content(message.content) if message.parts else _text(message.text)
            steps.append({"type": "user_input", "content": content})
        elif isinstance(message, AssistantMessage):
            steps.extend(_model_steps(message))
        elif isinstance(message, ToolResultMessage):
            result: dict[str, Any] = {
                "type": "function_result",
                "call_id": message.call_id,
                "name": message.name,
                "result": message.content,
            }
            if message.is_error:
                result["is_error"] = True
            steps.append(result)
        else:
            raise UsageError(f"not a toolwire message: {type(message).__name__}")
    return ("\n\n".join(system) if system else None), steps


def _chained(messages: Sequence[Message]) -> tuple[str | None, Sequence[Message]]:
    """The latest kept interaction id and the messages after its turn (the
    system messages stay: the instruction is sent every time)."""
    for at in range(len(messages) - 1, -1, -1):
        message = messages[at]
        if isinstance(message, AssistantMessage):
            found = interaction_id(message)
            if found is None:
                return None, messages
            system = [m for m in messages[:at] if isinstance(m, SystemMessage)]
            return found, [*system, *messages[at + 1 :]]
    return None, messages


def _continuation_token(messages: Sequence[Message]) -> str | None:
    """The ``continuation_token`` of the last message, a paused turn, if any."""
    last = messages[-1] if messages else None
    if not isinstance(last, AssistantMessage) or last.tool_calls:
        return None
    for item in reversed(state_items(last, (CONTINUATION,), DIALECT_NAME)):
        if isinstance(item.get("token"), str) and item["token"]:
            return str(item["token"])
    return None


def encode_request(
    *,
    model: str,
    messages: Sequence[Message],
    tools: Sequence[Mapping[str, Any]] = (),
    tool_choice: ToolChoice | None = None,
    stream: bool = True,
    max_tokens: int | None = None,
    temperature: float | None = None,
    thinking_level: str | None = None,
    chain: bool = False,
    store: bool | None = None,
) -> dict[str, Any]:
    """The JSON body of ``POST /{version}/interactions``.

    Args:
        chain: send ``previous_interaction_id`` and only the messages after
            the latest turn whose interaction id is kept.
        store: the request's ``store`` (``None``: the server's default, true).

    Raises:
        UsageError: an invalid ``tool_choice``, a malformed tool, or a
            message it cannot express.
        ContentError: a part this dialect cannot carry, or past a limit.
    """
    CONTENT.check_request(messages)
    token = _continuation_token(messages)
    if token is not None and not chain:
        messages = messages[:-1]  # the original input, resent with the token
    previous, sent = _chained(messages) if chain else (None, messages)
    system, steps = encode_steps(sent)
    body: dict[str, Any] = {"model": model, "input": steps}
    if token is not None:
        body["continuation_token"] = token
        if not steps:
            del body["input"]  # chained: the server rebuilds it
    if previous is not None:
        body["previous_interaction_id"] = previous
    if system is not None:
        body["system_instruction"] = system
    config: dict[str, Any] = {}
    if tools:
        names: list[str] = []
        for tool in tools:
            if not isinstance(tool, Mapping) or not isinstance(tool.get("name"), str):
                raise UsageError("an Interactions function tool needs a 'name'")
            names.append(tool["name"])
        body["tools"] = [dict(t) for t in tools]
        forced = check_tool_choice(tool_choice, names)
        if forced is not None:
            config["tool_choice"] = {"allowed_tools": {"mode": "any", "tools": [forced]}}
        elif tool_choice is not None:
            config["tool_choice"] = _MODES[str(tool_choice)]
    elif tool_choice not in (None, "none", "auto"):
        raise UsageError(f"tool_choice {tool_choice!r} needs at least one tool")
    if max_tokens is not None:
        config["max_output_tokens"] = max_tokens
    if temperature is not None:
        config["temperature"] = temperature
    if thinking_level is not None:
        config["thinking_level"] = thinking_level
    if config:
        body["generation_config"] = config
    if store is not None:
        body["store"] = store
    body["stream"] = stream
    return body


# -- paths ------------------------------------------------------------------------


def _request_path(model: str, stream: bool) -> str:
    return "/interactions"


def _continuation_path(interaction: str, last_event_id: str | None) -> str:
    """The GET that streams an interaction again after the event
    ``last_event_id`` (``None``: from its first)."""
    after = {} if last_event_id is None else {"last_event_id": last_event_id}
    query = urlencode({"stream": "true", **after})
    return f"/interactions/{quote(interaction, safe='-._~')}?{query}"


def _route_target(path: str, query: Mapping[str, str]) -> RouteTarget | None:
    """``POST /{version}/interactions``: the body holds the model and ``stream``."""
    return (None, None, True) if path.rstrip("/").endswith("/interactions") else None


def _continuation_target(path: str, query: Mapping[str, str]) -> tuple[str, str | None] | None:
    """``GET /{version}/interactions/{id}?stream=true&last_event_id=...``:
    the interaction and the event to start after (``None``: from the start;
    without ``stream=true``, the whole interaction)."""
    head, _, interaction = path.rstrip("/").rpartition("/")
    if not head.endswith("/interactions") or not interaction:
        return None
    return interaction, query.get("last_event_id") or None


def __getattr__(name: str) -> object:
    """Older names, with a warning (see :mod:`toolwire._compat`)."""
    return _compat.renamed(__name__, name)
