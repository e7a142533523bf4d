"""What a tool call comes to: :class:`ToolResult`, and how results are built.

Every call gets exactly one result. A success carries the tool's return value
as text; a failure carries a small JSON object ``{"error": kind, "message":
...}`` whose ``error`` names the category, so a model (and code) can tell it
from a result on wires that have no error flag (OpenAI's ``role: tool``).
Either is cut to the result budget, with a note telling the model how to see
the rest.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

import pydantic_core

from toolwire.content import (
    ContentItem,
    content_parts,
    content_to_dicts,
    is_part,
)
from toolwire.stream import jsonio

__all__ = [
    "ToolErrorKind",
    "ToolResult",
    "make_result",
    "to_content",
    "to_parts",
    "truncate",
]

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
    parts: tuple[ContentItem, ...] = ()
    """The whole result in order, text and :class:`~toolwire.Image`,
    :class:`~toolwire.Document` or :class:`~toolwire.Audio` parts, when the
    tool returned any part (``content`` is then its text); empty otherwise."""

    def __post_init__(self) -> None:
        if self.parts and not content_parts(self.parts):
            object.__setattr__(self, "parts", ())

    @property
    def message(self) -> str:
        """The result as text for people: ``content`` itself, or for a failure
        the explanation inside its ``{"error", "message"}`` JSON."""
        if self.ok:
            return self.content
        try:
            payload = jsonio.loads(self.content)
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
            **({"parts": content_to_dicts(self.parts)} if self.parts else {}),
        }


def to_parts(value: Any) -> tuple[ContentItem, ...] | None:
    """A tool's return value as text and parts, when it is a part or a list
    (or tuple) holding at least one; ``None`` for any other value. Items of
    the list that are neither text nor parts are written as JSON text."""
    if is_part(value):
        return (value,)
    if not isinstance(value, (list, tuple)) or not any(is_part(item) for item in value):
        return None
    return tuple(
        item if isinstance(item, str) or is_part(item) else to_content(item)[0] for item in value
    )


def to_content(value: Any, limit: int | None = None) -> tuple[str, bool]:
    """The text form of a tool's return value, and whether it is whole.

    With a ``limit``, a value whose JSON form is longer is never serialized
    whole: the first ``limit + 1`` characters are written and the rest is not
    (a result of shared references, such as a YAML "billion laughs", stays
    cheap). Its text is then a prefix (``False``): :func:`truncate` cuts it.
    """
    if isinstance(value, str):
        return value, True
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).decode("utf-8", "replace"), True
    if limit is not None and _nodes_past(value, limit):
        return _json_prefix(value, limit + 1), False
    jsonable = pydantic_core.to_jsonable_python(value, fallback=str)
    return jsonio.dumps(jsonable), True


_CONTAINERS = (dict, list, tuple, set, frozenset)


def _nodes_past(value: Any, limit: int) -> bool:
    """Whether ``value`` holds more than ``limit`` values, counting a shared
    one each time it appears (as its JSON form would): one bounded walk."""
    count = 0
    stack = [value]
    while stack:
        item = stack.pop()
        count += 1
        if count > limit:
            return True
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, _CONTAINERS):
            stack.extend(item)
    return False


def _json_prefix(value: Any, size: int) -> str:
    """The first ``size`` characters of ``value``'s JSON form, written lazily:
    containers are walked one item at a time, never expanded whole."""
    out: list[str] = []
    written = 0
    for piece in _json_pieces(value, size):
        out.append(piece)
        written += len(piece)
        if written >= size:
            break
    return "".join(out)[:size]


def _json_pieces(value: Any, size: int) -> Iterator[str]:
    stack: list[tuple[Iterator[Any], str]] = [(iter((value,)), "")]
    first = [True]
    while stack:
        iterator, closer = stack[-1]
        item = next(iterator, _END)
        if item is _END:
            stack.pop()
            first.pop()
            yield closer
            continue
        if not first[-1]:
            yield ","
        first[-1] = False
        if type(iterator) is _Members:
            key, item = item
            yield jsonio.dumps(key if isinstance(key, str) else str(key))[: size + 2] + ":"
        if isinstance(item, dict):
            stack.append((_Members(item), "}"))
            first.append(True)
            yield "{"
        elif isinstance(item, _CONTAINERS):
            stack.append((iter(item), "]"))
            first.append(True)
            yield "["
        elif isinstance(item, str):
            yield jsonio.dumps(item[:size])
        elif isinstance(item, (bytes, bytearray)):
            yield jsonio.dumps(bytes(item[:size]).decode("utf-8", "replace"))
        else:
            text, _ = to_content(item, size)
            yield text


_END: Any = object()


class _Members:
    """The ``(key, value)`` pairs of a dict, told apart from a list's items."""

    __slots__ = ("_items",)

    def __init__(self, mapping: dict[Any, Any]) -> None:
        self._items = iter(mapping.items())

    def __iter__(self) -> Iterator[tuple[Any, Any]]:
        return self

    def __next__(self) -> tuple[Any, Any]:
        return next(self._items)


def truncate(content: str, limit: int, *, whole: bool = True) -> tuple[str, bool]:
    """``content`` cut to ``limit`` characters with a note for the model;
    ``whole`` is false when ``content`` is already a prefix of the result."""
    if len(content) <= limit:
        return content, False
    total = len(content)
    keep = limit
    note = ""
    for _ in range(3):  # the note's length depends on the numbers in it
        cut = f"{total - keep} of {total}" if whole else f"all but the first {keep}"
        note = (
            f"\n\n[Result truncated: {cut} characters were cut. "
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
    whole: bool = True,
    **fields: Any,
) -> ToolResult:
    """A result whose content is cut to ``budget`` characters, and wrapped in
    the ``{"error", "message"}`` object when the call failed (``whole`` is
    false when ``content`` is already a prefix: see :func:`to_content`)."""
    content, truncated = truncate(content, budget, whole=whole)
    if not ok:
        content = jsonio.dumps({"error": error or "failed", "message": content})
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
