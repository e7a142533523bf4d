"""Gemini requests: a conversation, its tools and its tool config as a
``generateContent`` body, thought signatures and kept parts sent back in
place, and the request paths (see :mod:`toolwire.stream.codecs.gemini` for
the stream).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final
from urllib.parse import quote

from toolwire import _compat
from toolwire.content import ContentItem, ContentPart, content_parts
from toolwire.errors import UsageError
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
from toolwire.stream.codecs._dialect import RouteTarget, SchemaTool
from toolwire.stream.codecs.content import MB, ContentLimits, ContentSupport, every, split_text
from toolwire.stream.codecs.gemini_schema import to_gemini
from toolwire.stream.codecs.request import (
    ToolChoice,
    check_tool_choice,
    dict_or_empty,
    interleave,
    list_or_empty,
    state_items,
)
from toolwire.types import ToolCall

__all__ = [
    "CONTENT",
    "DIALECT_NAME",
    "encode_contents",
    "encode_request",
    "encode_tools",
    "tool_schemas",
]

DIALECT_NAME = "gemini"

_PROMPT = {
    "image": every("image") - {"image/gif"},
    "document": every("document"),
    "audio": every("audio") - {"audio/webm"},
}
CONTENT = ContentSupport(
    dialect=DIALECT_NAME,
    prompt=_PROMPT,
    # https://ai.google.dev/gemini-api/docs/function-calling: multimodal
    # function responses take PNG, JPEG and WebP images, PDF and plain text.
    tool_result={
        "image": frozenset({"image/png", "image/jpeg", "image/webp"}),
        "document": frozenset({"application/pdf", "text/plain"}),
    },
    urls=_PROMPT,
    url_schemes=("https://", "gs://"),
    # https://ai.google.dev/gemini-api/docs/file-input-methods: inline data
    # up to 20 MB per request (larger files go through the Files API).
    limits=ContentLimits(request_bytes=20 * MB, per_request={"image": 3600}),
)
"""``inlineData`` (bytes) and ``fileData`` (a URL) parts in a prompt, and
``parts`` of a ``functionResponse`` (Gemini 3 models read them)."""


def part_out(part: ContentPart) -> dict[str, Any]:
    """An ``inlineData`` or ``fileData`` part."""
    if part.url is not None:
        return {"fileData": {"mimeType": part.media_type, "fileUri": part.url}}
    return {"inlineData": {"mimeType": part.media_type, "data": part.base64()}}


def content_out(items: Sequence[ContentItem]) -> list[dict[str, Any]]:
    """A user turn's parts: ``text``, ``inlineData`` and ``fileData``."""
    return [
        {"text": item} if isinstance(item, str) else part_out(item) for item in split_text(items)
    ]


_PART = "part"
"""The provider-state item of a part toolwire keeps whole: ``{"type": "part", "part": {...}}``."""


def tool_schemas(tools: Sequence[tuple[str, str, dict[str, Any]]]) -> list[dict[str, Any]]:
    """A request's ``tools``: one ``Tool`` holding a function declaration per
    ``(name, description, parameters)``, parameters shaped by :func:`to_gemini`
    (none at all for a function without parameters)."""
    declarations: list[dict[str, Any]] = []
    for name, description, parameters in tools:
        declaration: dict[str, Any] = {"name": name}
        if description:
            declaration["description"] = description
        if parameters.get("properties"):
            declaration["parameters"] = to_gemini(parameters)
        declarations.append(declaration)
    return [{"functionDeclarations": declarations}] if declarations else []


# -- requests ---------------------------------------------------------------------

_MODES: Final = {"auto": "AUTO", "required": "ANY", "none": "NONE"}
# Keys of a Gemini ``Tool`` object: a list of these is already in wire shape.
_TOOL_KEYS = frozenset(
    {
        "functionDeclarations",
        "googleSearch",
        "googleSearchRetrieval",
        "codeExecution",
        "urlContext",
        "retrieval",
    }
)


def _model_parts(message: AssistantMessage) -> list[dict[str, Any]]:
    call_signatures: dict[int, str] = {}
    loose: list[str] = []  # signatures of text or thought parts
    for item in state_items(message, ("thought_signature",), DIALECT_NAME):
        signature = item.get("signature")
        if not isinstance(signature, str) or not signature:
            continue
        position = int_or_none(item.get("call"))
        if position is not None:
            call_signatures[position] = signature
        else:
            loose.append(signature)
    parts: list[dict[str, Any]] = []
    text_part: dict[str, Any] | None = None
    calls = 0
    kept = state_items(message, (_PART,), DIALECT_NAME)
    for kind, value in interleave(message.text, message.tool_calls, kept):
        if kind == "text":
            text_part = {"text": value}
            parts.append(text_part)
        elif kind == "call":
            function: dict[str, Any] = {
                "name": value.name,
                "args": value.arguments if isinstance(value, ToolCall) else {},
            }
            if not value.minted_id:
                function["id"] = value.id
            part: dict[str, Any] = {"functionCall": function}
            if calls in call_signatures:
                part["thoughtSignature"] = call_signatures[calls]
            parts.append(part)
            calls += 1
        elif isinstance(value.get("part"), dict):
            parts.append(dict(value["part"]))
    # Gemini puts a text answer's signature on its last part (often an
    # empty one at the end of a stream): the last loose signature goes on
    # the text, any earlier ones on empty parts before it.
    if loose:
        if text_part is None:
            text_part = {"text": ""}
            parts.insert(0, text_part)
        text_part["thoughtSignature"] = loose[-1]
        parts[:0] = [{"text": "", "thoughtSignature": s} for s in loose[:-1]]
    return parts


def encode_contents(
    messages: Sequence[Message],
) -> tuple[dict[str, Any] | None, list[dict[str, Any]]]:
    """``(systemInstruction, contents)`` for a conversation."""
    system: list[str] = []
    contents: list[dict[str, Any]] = []
    provider_ids: set[str] = set()  # call ids Gemini itself sent

    def add(role: str, parts: list[dict[str, Any]]) -> None:
        # Gemini wants turns to alternate: same-role neighbours share a content.
        if contents and contents[-1]["role"] == role:
            contents[-1]["parts"].extend(parts)
        else:
            contents.append({"role": role, "parts": parts})

    for message in messages:
        if isinstance(message, SystemMessage):
            system.append(message.text)
        elif isinstance(message, UserMessage):
            add("user", content_out(message.content) if message.parts else [{"text": message.text}])
        elif isinstance(message, AssistantMessage):
            provider_ids.update(c.id for c in message.tool_calls if not c.minted_id)
            parts = _model_parts(message)
            if parts:
                add("model", parts)
        elif isinstance(message, ToolResultMessage):
            key = "error" if message.is_error else "output"
            response: dict[str, Any] = {
                "name": message.name,
                "response": {key: message.content},
            }
            if message.call_id in provider_ids:
                response["id"] = message.call_id
            if message.parts:
                response["parts"] = [part_out(p) for p in content_parts(message.parts)]
            add("user", [{"functionResponse": response}])
        else:
            raise UsageError(f"not a toolwire message: {type(message).__name__}")
    instruction = {"parts": [{"text": "\n\n".join(system)}]} if system else None
    return instruction, contents


def encode_tools(tools: Sequence[Mapping[str, Any]]) -> tuple[list[dict[str, Any]], list[str]]:
    """Gemini ``tools`` and the declared function names.

    Accepts either ``Tool`` objects (``{"functionDeclarations": [...]}``)
    or bare function declarations, which are wrapped in one ``Tool``.
    """
    names: list[str] = []
    for tool in tools:
        if not isinstance(tool, Mapping):
            raise UsageError(f"a tool schema must be a JSON object, got {type(tool).__name__}")
    if all(_TOOL_KEYS.intersection(tool) for tool in tools):
        for tool in tools:
            for decl in list_or_empty(tool.get("functionDeclarations")):
                if isinstance(dict_or_empty(decl).get("name"), str):
                    names.append(decl["name"])
        return [dict(t) for t in tools], names
    for tool in tools:
        if not isinstance(tool.get("name"), str):
            raise UsageError("a Gemini function declaration needs a 'name'")
        names.append(tool["name"])
    return [{"functionDeclarations": [dict(t) for t in tools]}], names


def encode_request(
    *,
    messages: Sequence[Message],
    tools: Sequence[Mapping[str, Any]] = (),
    tool_choice: ToolChoice | None = None,
    max_tokens: int | None = None,
    temperature: float | None = None,
    thinking_budget: int | None = None,
    include_thoughts: bool | None = None,
) -> dict[str, Any]:
    """The JSON body of a ``generateContent`` request (the model and whether
    to stream are in its URL).

    Raises:
        UsageError: an invalid ``tool_choice``, or a message it cannot express.
        ContentError: a part this dialect cannot carry, or past a limit.
    """
    CONTENT.check_request(messages)
    instruction, contents = encode_contents(messages)
    body: dict[str, Any] = {"contents": contents}
    if instruction is not None:
        body["systemInstruction"] = instruction
    if tools:
        body["tools"], names = encode_tools(tools)
        forced = check_tool_choice(tool_choice, names)
        if forced is not None:
            config: dict[str, Any] = {"mode": "ANY", "allowedFunctionNames": [forced]}
        elif tool_choice is not None:
            config = {"mode": _MODES[str(tool_choice)]}
        if tool_choice is not None:
            body["toolConfig"] = {"functionCallingConfig": config}
    elif tool_choice not in (None, "none", "auto"):
        raise UsageError(f"tool_choice {tool_choice!r} needs at least one tool")
    generation: dict[str, Any] = {}
    if max_tokens is not None:
        generation["maxOutputTokens"] = max_tokens
    if temperature is not None:
        generation["temperature"] = temperature
    thinking: dict[str, Any] = {}
    if thinking_budget is not None:
        thinking["thinkingBudget"] = thinking_budget
    if include_thoughts is not None:
        thinking["includeThoughts"] = include_thoughts
    if thinking:
        generation["thinkingConfig"] = thinking
    if generation:
        body["generationConfig"] = generation
    return body


def _tool_schemas(tools: Sequence[SchemaTool], strict: bool | None) -> list[dict[str, Any]]:
    return tool_schemas([(t.name, t.description, t.parameters) for t in tools])


def _route_target(path: str, query: Mapping[str, str]) -> RouteTarget | None:
    """``.../models/{model}:{method}``; ``alt=sse`` asks for SSE."""
    model, _, method = path.partition("/models/")[2].rpartition(":")
    if method not in ("streamGenerateContent", "generateContent"):
        return None
    return model, method == "streamGenerateContent", query.get("alt") == "sse"


def _request_path(model: str, stream: bool) -> str:
    model_id = model.removeprefix("models/")
    method = "streamGenerateContent?alt=sse" if stream else "generateContent"
    return f"/models/{quote(model_id, safe='-._~')}:{method}"


def __getattr__(name: str) -> object:
    """Older names, with a warning (see :mod:`toolwire._compat`)."""
    return _compat.renamed(__name__, name)
