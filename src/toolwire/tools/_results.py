"""What a tool call comes to: :class:`ToolResult`, and how results are built.

Every call gets exactly one result. A success carries the tool's return value
as text; a failure carries a small JSON object ``{"error": kind, "message":
...}`` whose ``error`` names the category, so a model (and code) can tell it
from a result on wires that have no error flag (OpenAI's ``role: tool``).
Either is cut to the result budget, with a note telling the model how to see
the rest.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

import pydantic_core

from toolwire.stream import _json

__all__ = ["ToolErrorKind", "ToolResult", "make_result", "to_content", "truncate"]

ToolErrorKind: TypeAlias = Literal[
    "unknown_tool", "invalid_arguments", "timeout", "failed", "denied"
]
"""The category of a failed tool result."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolResult:
    """The outcome of one tool call, ready to be sent back to the model."""

    call_id: str
    """The id of the call this result answers."""
    name: str
    """The tool name as the model called it."""
    ok: bool
    """False for every error; providers that can flag errors should."""
    content: str
    """The text for the model: the tool's output, or an actionable error."""
    error: ToolErrorKind | None = None
    """Why the call failed, or ``None`` when ``ok``."""
    attempts: int = 0
    """How many times the tool function ran (0 when it never did)."""
    elapsed: float = 0.0
    """Seconds from the start of the call's processing to its result."""
    truncated: bool = False
    """True when ``content`` was cut to the result budget."""
    fallback_used: bool = False
    """True when the content comes from (or the error is after) the fallback."""
    arguments: dict[str, Any] = field(default_factory=dict[str, Any])
    """The arguments actually used: validated, or as edited by an approver."""
    deduplicated_from: str | None = None
    """The call id whose result this one reuses (identical call in the batch)."""
    model_retry: bool = False
    """True when the tool raised :class:`toolwire.ModelRetry`."""
    traceback: str | None = None
    """For a tool that raised: its traceback, cleaned of credentials and cut
    to its last 8,000 characters. For people (the journal keeps it; ``toolwire
    runs show --verbose`` shows it), never sent to the model."""

    @property
    def message(self) -> str:
        """The result as text for people: ``content`` itself, or for a failure
        the explanation inside its ``{"error", "message"}`` JSON."""
        if self.ok:
            return self.content
        try:
            payload = _json.loads(self.content)
        except ValueError:
            return self.content
        if isinstance(payload, dict) and isinstance(payload.get("message"), str):
            return str(payload["message"])
        return self.content

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict of every field."""
        return {
            "call_id": self.call_id,
            "name": self.name,
            "ok": self.ok,
            "content": self.content,
            "error": self.error,
            "attempts": self.attempts,
            "elapsed": self.elapsed,
            "truncated": self.truncated,
            "fallback_used": self.fallback_used,
            "arguments": self.arguments,
            "deduplicated_from": self.deduplicated_from,
            "model_retry": self.model_retry,
            "traceback": self.traceback,
        }


def to_content(value: Any) -> str:
    """The text form of a tool's return value."""
    if isinstance(value, str):
        return value
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).decode("utf-8", "replace")
    jsonable = pydantic_core.to_jsonable_python(value, fallback=str)
    return _json.dumps(jsonable)


def truncate(content: str, limit: int) -> tuple[str, bool]:
    if len(content) <= limit:
        return content, False
    total = len(content)
    keep = limit
    note = ""
    for _ in range(3):  # the note's length depends on the numbers in it
        note = (
            f"\n\n[Result truncated: {total - keep} of {total} characters were cut. "
            "To see the rest, call the tool again with narrower arguments "
            "(a more specific query, a filter, a smaller limit or a later page).]"
        )
        keep = max(limit - len(note), 0)
    return content[:keep] + note, True


def make_result(
    call_id: str,
    name: str,
    content: str,
    *,
    budget: int,
    ok: bool,
    error: ToolErrorKind | None = None,
    arguments: Mapping[str, Any] | None = None,
    **fields: Any,
) -> ToolResult:
    """A result whose content is cut to ``budget`` characters, and wrapped in
    the ``{"error", "message"}`` object when the call failed."""
    content, truncated = truncate(content, budget)
    if not ok:
        content = _json.dumps({"error": error or "failed", "message": content})
    return ToolResult(
        call_id=call_id,
        name=name,
        ok=ok,
        content=content,
        error=error,
        truncated=truncated,
        arguments=dict(arguments) if arguments is not None else {},
        **fields,
    )
