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

from toolwire.errors import BadRequest
from toolwire.stream import jsonio
from toolwire.stream.codecs._reading import media_kind

__all__ = [
    "BadRequest",
    "History",
    "ParsedRequest",
    "ToolResult",
    "conversation_key",
    "get_bool",
    "get_list",
    "looks_like_error",
    "media_counts",
]


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
    output_native: bool = False
    """The request asks for native structured output (a JSON answer as text)."""
    tool_names: tuple[str, ...] = ()
    """The names of the tools the request declares."""
    media: dict[str, int] = field(default_factory=dict[str, int])
    """How many ``images``, ``documents`` and ``audio`` parts the request
    carries, in any dialect's shape (:func:`media_counts`)."""

    @property
    def latest_has_error(self) -> bool:
        """True when one of the latest tool results reports an error."""
        return any(r.is_error for r in self.latest_results)


def conversation_key(opening: list[Any]) -> str:
    return hashlib.sha256(jsonio.dumps_bytes(opening)).hexdigest()[:16]


def get_list(data: dict[str, Any], key: str, *, required: bool = True) -> list[Any]:
    value = data.get(key)
    if value is None and not required:
        return []
    if not isinstance(value, list):
        raise BadRequest(f"'{key}' must be an array")
    return value


def get_bool(data: dict[str, Any], key: str) -> bool:
    value = data.get(key, False)
    if value is None:
        return False
    if not isinstance(value, bool):
        raise BadRequest(f"'{key}' must be a boolean")
    return value


def media_counts(data: dict[str, Any]) -> dict[str, int]:
    """How many ``images``, ``documents`` and ``audio`` parts a request body
    of any dialect carries (in prompts and tool results; its tools left out)."""
    counts = {"images": 0, "documents": 0, "audio": 0}
    stack: list[Any] = [v for k, v in data.items() if k not in ("tools", "toolConfig")]
    while stack:
        value = stack.pop()
        if isinstance(value, list):
            stack.extend(value)
        elif isinstance(value, dict):
            kind = media_kind(value)
            if kind is not None:
                counts[kind] += 1
            else:
                stack.extend(value.values())
    return counts


def looks_like_error(content: str) -> bool:
    """A tool result reports an error when it is a JSON object with an ``error`` key.

    That is the shape toolwire's executor (and most agent frameworks) send back;
    Anthropic's explicit ``is_error`` flag is read separately.
    """
    if not content.startswith("{"):
        return False
    try:
        value = jsonio.loads(content)
    except ValueError:  # past a limit (1e400) too
        return False
    return isinstance(value, dict) and value.get("error") not in (None, False, "")


class History:
    """A request's history as a reader walks it, oldest first.

    The reader reports each assistant turn (:meth:`assistant`), each tool
    result (:meth:`result`) and each message or item it passed
    (:meth:`passed`); what came before the first assistant turn, after what
    the history was opened with (the system text), names the conversation.
    """

    def __init__(self, *opening: Any) -> None:
        self.names: dict[str, str] = {}
        """The names of the calls the assistant turns made, by call id."""
        self._opening = list(opening)
        self._turns = 0
        self._every: list[ToolResult] = []
        self._latest: list[ToolResult] = []

    def assistant(self) -> None:
        """An assistant turn: the results before it are no longer the latest."""
        self._turns += 1
        self._latest = []

    def result(
        self, call_id: str | None, content: str, is_error: bool, *, name: str | None = None
    ) -> None:
        """A tool result (named after its call when no ``name`` is given)."""
        if name is None and call_id is not None:
            name = self.names.get(call_id)
        result = ToolResult(call_id, name, content, is_error)
        self._every.append(result)
        self._latest.append(result)

    def passed(self, message: Any) -> None:
        """A message or item walked past: part of the opening until an assistant turn."""
        if not self._turns:
            self._opening.append(message)

    def parsed(
        self,
        *,
        dialect: str,
        model: str,
        stream: bool,
        include_usage: bool = True,
        include_obfuscation: bool = True,
        tools: list[Any] | None = None,
        instructions: str | None = None,
        background: bool = False,
    ) -> ParsedRequest:
        """The request read: this history, and what the reader found beside it."""
        return ParsedRequest(
            dialect=dialect,
            model=model,
            stream=stream,
            assistant_turns=self._turns,
            conversation=conversation_key(self._opening),
            results=tuple(self._every),
            latest_results=tuple(self._latest),
            include_usage=include_usage,
            include_obfuscation=include_obfuscation,
            tools=tools if tools is not None else [],
            instructions=instructions,
            background=background,
        )
