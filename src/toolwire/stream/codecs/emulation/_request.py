"""What the emulation server reads of a request, and the helpers each
dialect's reader (``decode_request`` in its emulation module) shares.

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
from dataclasses import dataclass, field
from typing import Any

from toolwire.errors import ToolwireError
from toolwire.stream import _json

__all__ = [
    "BadRequest",
    "ParsedRequest",
    "ToolResult",
    "as_object",
    "conversation_key",
    "get_bool",
    "get_list",
    "get_model",
    "looks_like_error",
    "split_latest",
    "text_of",
]


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
    background: bool = False
    """A Responses request in background mode: the server keeps its events
    so the stream can be resumed (``GET /v1/responses/{id}?stream=true``)."""

    @property
    def latest_has_error(self) -> bool:
        """True when one of the latest tool results reports an error."""
        return any(r.is_error for r in self.latest_results)


def conversation_key(opening: list[Any]) -> str:
    return hashlib.sha256(_json.dumps_bytes(opening)).hexdigest()[:16]


def get_list(data: dict[str, Any], key: str, *, required: bool = True) -> list[Any]:
    value = data.get(key)
    if value is None and not required:
        return []
    if not isinstance(value, list):
        raise BadRequest(f"'{key}' must be an array")
    return value


def get_model(data: dict[str, Any]) -> str:
    model = data.get("model")
    if not isinstance(model, str) or not model:
        raise BadRequest("'model' must be a non-empty string")
    return model


def get_bool(data: dict[str, Any], key: str) -> bool:
    value = data.get(key, False)
    if value is None:
        return False
    if not isinstance(value, bool):
        raise BadRequest(f"'{key}' must be a boolean")
    return value


def as_object(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise BadRequest(f"{where} must be an object")
    return value


def text_of(content: Any) -> str:
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


def looks_like_error(content: str) -> bool:
    """A tool result reports an error when it is a JSON object with an ``error`` key.

    That is the shape toolwire's executor (and most agent frameworks) send back;
    Anthropic's explicit ``is_error`` flag is read separately.
    """
    if not content.startswith("{"):
        return False
    try:
        value = _json.loads(content)
    except ValueError:  # past a limit (1e400) too
        return False
    return isinstance(value, dict) and value.get("error") not in (None, False, "")


def split_latest(
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
