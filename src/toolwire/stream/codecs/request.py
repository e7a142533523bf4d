"""What the dialects' request encoders share: provider state put back in
place, ``tool_choice`` checked, caller-supplied body fields merged.

Every request encoder is a pure function of normalized messages and options
to the dialect's JSON body; providers add only the URL and the headers.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from typing import Any, Literal, TypeAlias

from toolwire.errors import UsageError
from toolwire.messages import AssistantMessage
from toolwire.stream.parts import DIALECT_KEY, POSITION_KEY, TEXT_POSITION_KEY

__all__ = [
    "Segment",
    "ToolChoice",
    "allowed_tools",
    "check_tool_choice",
    "dict_or_empty",
    "interleave",
    "list_or_empty",
    "merge_extra",
    "placed",
    "state_items",
    "state_position",
    "tool_names",
    "without_position",
]

ToolChoice: TypeAlias = "Literal['auto', 'required', 'none'] | Mapping[str, Any]"
"""``"auto"``, ``"required"``, ``"none"``, ``{"name": "tool_name"}``, or (OpenAI
only) ``{"allowed": ["tool_a", "tool_b"], "mode": "auto"}``: the model may
call only these tools, and must call one with ``"mode": "required"``."""


def dict_or_empty(value: Any) -> dict[str, Any]:
    """``value`` when it is a JSON object, else an empty one."""
    return value if isinstance(value, dict) else {}


def list_or_empty(value: Any) -> list[Any]:
    """``value`` when it is a JSON array, else an empty one."""
    return value if isinstance(value, list) else []


def state_items(
    message: AssistantMessage, types: Collection[str], dialect: str
) -> list[dict[str, Any]]:
    """The ``provider_state`` items of ``message`` that ``dialect`` decoded
    (or that carry no dialect: recorded before items were tagged) and whose
    ``type`` is one of ``types``, without their dialect tag.

    Each dialect knows its own item types (Anthropic ``thinking``, Gemini
    ``thought_signature``...), and the tag tells apart types that two
    dialects share (``compaction``), so state from another provider is
    never sent.
    """
    return [
        {k: v for k, v in item.items() if k != DIALECT_KEY}
        for item in message.provider_state
        if item.get("type") in types and item.get(DIALECT_KEY, dialect) == dialect
    ]


def state_position(item: Mapping[str, Any]) -> int:
    """Where an item goes among the tool calls: after ``after_tool_calls``
    calls (default 0: before the first call and the text)."""
    value = item.get(POSITION_KEY, 0)
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def without_position(item: Mapping[str, Any]) -> dict[str, Any]:
    """``item`` as the provider sent it (toolwire's position keys removed)."""
    return {k: v for k, v in item.items() if k != POSITION_KEY and k != TEXT_POSITION_KEY}


Segment: TypeAlias = tuple[Literal["text", "call", "item"], Any]
"""``("text", str)``, ``("call", call)`` or ``("item", provider item)``."""


def interleave(
    text: str, calls: Sequence[Any], items: Iterable[Mapping[str, Any]]
) -> list[Segment]:
    """An assistant turn's content in the order the provider sent it.

    ``items`` (in stream order) carry where they stood: after
    ``after_tool_calls`` calls and ``after_text`` characters of ``text``. An
    item without ``after_text`` stands before the text when no call came
    before it, else after all of it (the place older records had). Calls
    keep their order and come after the text before them; text after the
    last item comes before the calls that follow it, as the providers send
    a turn's text before its calls.
    """
    out: list[Segment] = []
    shown = 0  # characters of text already placed
    called = 0  # calls already placed

    def text_up_to(end: int) -> None:
        nonlocal shown
        if end > shown:
            out.append(("text", text[shown:end]))
            shown = end

    for item in items:
        after_calls = min(state_position(item), len(calls))
        default = 0 if after_calls == 0 else len(text)
        at = item.get(TEXT_POSITION_KEY, default)
        at = at if isinstance(at, int) and not isinstance(at, bool) else default
        at = min(max(at, shown), len(text))
        while called < after_calls:
            text_up_to(at)
            out.append(("call", calls[called]))
            called += 1
        text_up_to(at)
        out.append(("item", without_position(item)))
    text_up_to(len(text))
    out.extend(("call", call) for call in calls[called:])
    return out


def placed(items: Iterable[Mapping[str, Any]]) -> dict[int, list[dict[str, Any]]]:
    """State items grouped by position, provider shape restored."""
    out: dict[int, list[dict[str, Any]]] = {}
    for item in items:
        out.setdefault(state_position(item), []).append(without_position(item))
    return out


def merge_extra(body: dict[str, Any], extra: Mapping[str, Any] | None) -> dict[str, Any]:
    """Merge caller-supplied body fields: top-level keys win, except that two
    JSON objects under the same key are merged one level deep (so that
    ``extra={"generationConfig": {"topK": 3}}`` keeps the other settings)."""
    if not extra:
        return body
    for key, value in extra.items():
        current = body.get(key)
        if isinstance(current, dict) and isinstance(value, Mapping):
            body[key] = {**current, **value}
        else:
            body[key] = value
    return body


def check_tool_choice(tool_choice: Any, tool_names: Sequence[str] | None) -> str | None:
    """Validate ``tool_choice``; return the forced tool's name for ``{"name": ...}``.

    Raises:
        UsageError: an unknown mode, or a named tool that is not in ``tools``.
    """
    if tool_choice is None or tool_choice in ("auto", "required", "none"):
        return None
    if isinstance(tool_choice, Mapping):
        name = tool_choice.get("name")
        if isinstance(name, str) and name and set(tool_choice) == {"name"}:
            if tool_names is not None and name not in tool_names:
                raise UsageError(f"tool_choice names {name!r}, which is not among the tools")
            return name
    raise UsageError(
        "tool_choice must be 'auto', 'required', 'none' or {'name': <tool name>}, "
        f"got {tool_choice!r}"
    )


def allowed_tools(
    tool_choice: Any, tool_names: Sequence[str] | None
) -> tuple[list[str], str] | None:
    """``(names, mode)`` of an ``{"allowed": [...], "mode": ...}`` tool choice,
    else ``None``.

    Raises:
        UsageError: a name not among the tools, an empty list or another mode.
    """
    if not isinstance(tool_choice, Mapping) or "allowed" not in tool_choice:
        return None
    names = tool_choice.get("allowed")
    mode = tool_choice.get("mode", "auto")
    if set(tool_choice) - {"allowed", "mode"} or mode not in ("auto", "required"):
        raise UsageError(
            f"tool_choice {dict(tool_choice)!r}: only 'allowed' and a 'mode' of "
            "'auto' or 'required' go together"
        )
    if not isinstance(names, list) or not names or not all(isinstance(n, str) for n in names):
        raise UsageError("tool_choice 'allowed' must be a non-empty list of tool names")
    unknown = [n for n in names if tool_names is not None and n not in tool_names]
    if unknown:
        raise UsageError(f"tool_choice allows {unknown!r}, which are not among the tools")
    return names, str(mode)


def tool_names(
    tools: Iterable[Mapping[str, Any]], getter: Callable[[Mapping[str, Any]], Any]
) -> list[str] | None:
    """The names declared by ``tools`` (``None`` when a schema has an unknown shape)."""
    names: list[str] = []
    for tool in tools:
        if not isinstance(tool, Mapping):
            raise UsageError(f"a tool schema must be a JSON object, got {type(tool).__name__}")
        name = getter(tool)
        if isinstance(name, list):
            names.extend(n for n in name if isinstance(n, str))
        elif isinstance(name, str):
            names.append(name)
        else:
            return None
    return names
