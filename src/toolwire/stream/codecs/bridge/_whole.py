"""A bridge answer to a request that did not stream: the served dialect's
whole body, written by its emulation encoder from the upstream's result,
with the upstream's call ids and usage."""

from __future__ import annotations

from typing import Any

from toolwire.stream import jsonio
from toolwire.stream.codecs.bridge._answer import Answer
from toolwire.stream.codecs.bridge._anthropic import anthropic_usage
from toolwire.stream.codecs.bridge._asked import Asked
from toolwire.stream.codecs.bridge._gemini import gemini_usage
from toolwire.stream.codecs.bridge._openai import chat_usage, responses_usage
from toolwire.stream.codecs.emulation import ParsedRequest, Reply, ReplyCall
from toolwire.types import StreamResult

__all__ = ["whole_body"]

_USAGE = {
    "anthropic-messages": ("usage", anthropic_usage),
    "openai-chat": ("usage", chat_usage),
    "openai-responses": ("usage", responses_usage),
    "gemini": ("usageMetadata", gemini_usage),
}


def whole_body(asked: Asked, answer: Answer, result: StreamResult) -> dict[str, Any]:
    choice = result.choices[0] if result.choices else None
    calls = tuple(
        ReplyCall(
            index=n,
            name=call.name,
            raw_arguments=jsonio.dumps(call.arguments),
            arguments=call.arguments,
        )
        for n, call in enumerate(choice.tool_calls if choice is not None else ())
    )
    request = ParsedRequest(
        dialect=asked.dialect,
        model=asked.model,
        stream=False,
        assistant_turns=0,
        conversation=answer.seed,
    )
    reply = Reply(
        request=request,
        turn=0,
        reasoning=choice.reasoning if choice is not None else "",
        text=choice.text if choice is not None else "",
        calls=calls,
        chunk_size=64,
        created=0,
        input_tokens=1,
    )
    body = answer.encoder.body(reply)
    field, usage = _USAGE[asked.dialect]
    body[field] = usage(result.usage)
    ids = [call.id for call in choice.tool_calls] if choice is not None else []
    _replace_ids(body, ids)
    return body


def _replace_ids(body: Any, ids: list[str]) -> None:
    """The upstream's call ids in place of the encoder's, in order."""
    found: list[dict[str, Any]] = []

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            if value.get("type") in ("tool_use", "function_call"):
                found.append(value)
            elif value.get("type") == "function" and "function" in value:
                found.append(value)
            elif isinstance(value.get("functionCall"), dict):
                found.append(value["functionCall"])
            for inner in value.values():
                walk(inner)
        elif isinstance(value, list):
            for inner in value:
                walk(inner)

    walk(body)
    for item, call_id in zip(found, ids, strict=False):
        item["call_id" if item.get("type") == "function_call" else "id"] = call_id
