"""Builders of small synthetic OpenAI chat streams for unit tests."""

from __future__ import annotations

import json
from typing import Any

from toolwire import StreamDecoder, StreamResult
from toolwire.events import Event


def tc(
    index: int | None = None,
    id: str | None = None,
    name: str | None = None,
    args: Any = None,
    *,
    omit_args: bool = False,
) -> dict[str, Any]:
    """One ``delta.tool_calls`` entry; keys left out when None."""
    out: dict[str, Any] = {}
    if index is not None:
        out["index"] = index
    if id is not None:
        out["id"] = id
        out["type"] = "function"
    fn: dict[str, Any] = {}
    if name is not None:
        fn["name"] = name
    if not omit_args and args is not None:
        fn["arguments"] = args
    if fn:
        out["function"] = fn
    return out


def chunk(
    *calls: dict[str, Any],
    content: str | None = None,
    finish: str | None = None,
    choice: int = 0,
    usage: dict[str, Any] | None = None,
    choices: Any = "default",
) -> bytes:
    delta: dict[str, Any] = {}
    if content is not None:
        delta["content"] = content
    if calls:
        delta["tool_calls"] = list(calls)
    body: dict[str, Any] = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "model": "m"}
    if choices == "default":
        body["choices"] = [{"index": choice, "delta": delta, "finish_reason": finish}]
    else:
        body["choices"] = choices
    if usage is not None:
        body["usage"] = usage
    return b"data: " + json.dumps(body, ensure_ascii=False).encode() + b"\n\n"


DONE = b"data: [DONE]\n\n"


def decode(*pieces: bytes, dialect: str = "openai-chat") -> tuple[list[Event], StreamResult]:
    decoder = StreamDecoder(dialect)
    events: list[Event] = []
    for piece in pieces:
        events += decoder.feed(piece)
    events += decoder.close()
    return events, decoder.result()


def calls(result: StreamResult, choice: int = 0) -> list[tuple[str, str, dict[str, Any]]]:
    return [(c.id, c.name, c.arguments) for c in result.choices[choice].tool_calls]
