"""Chat Completions items beyond text and function calls: custom (freeform)
tool calls and OpenRouter's streamed ``reasoning_details``."""

from __future__ import annotations

from typing import Any

from toolwire.errors import RemoteProtocolError
from toolwire.stream.codecs._common import as_int, as_obj, as_str
from toolwire.stream.jsonio import dumps
from toolwire.stream.limits import MAX_ARGUMENTS_CHARS, MAX_TEXT_CHARS
from toolwire.stream.parts import CallPart, Part, StatePart
from toolwire.types import InvalidToolCall, ToolCall

__all__ = ["CustomCalls", "ReasoningDetails", "custom_input"]

DIALECT_NAME = "openai-chat"
MAX_DETAILS = 4096
"""At most this many reasoning details in one choice."""


class ReasoningDetails:
    """OpenRouter's streamed ``reasoning_details``: the pieces of each detail
    (by its ``index``) joined, then kept as the message field that is sent
    back (thinking signatures and encrypted reasoning travel in them)."""

    _JOINED = ("text", "summary", "data")

    def __init__(self) -> None:
        self._open: dict[int, list[Any]] = {}
        self._size = 0

    def add(self, c: int, pieces: list[Any]) -> None:
        details = self._open.setdefault(c, [])
        for piece in pieces:
            self._size += len(dumps(piece))
            if self._size > MAX_TEXT_CHARS or len(details) >= MAX_DETAILS:
                raise RemoteProtocolError(
                    f"{DIALECT_NAME}: the reasoning_details exceed toolwire's limits"
                )
            if not isinstance(piece, dict):
                details.append(piece)  # kept and sent back as it came
                continue
            last = details[-1] if details else None
            if not isinstance(last, dict):
                details.append(dict(piece))
                continue
            if last is None or (last.get("index"), last.get("type")) != (
                piece.get("index"),
                piece.get("type"),
            ):
                details.append(dict(piece))
                continue
            for key, value in piece.items():
                if key in self._JOINED and isinstance(value, str):
                    before = last.get(key)
                    last[key] = (before if isinstance(before, str) else "") + value
                elif value is not None:
                    last[key] = value

    def flush(self, c: int | None, parts: list[Part]) -> None:
        for choice in [c] if c is not None else list(self._open):
            details = self._open.pop(choice, None)
            if details:
                fields = {"reasoning_details": details}
                parts.append(StatePart({"type": "message_fields", "fields": fields}, choice))


class CustomCalls:
    """Chat Completions ``type: "custom"`` tool calls (freeform input).

    The input is one string, streamed in ``custom.input`` pieces; it reaches
    the accumulator as the arguments ``{"input": ...}``, streamed as JSON text
    so partial values work, and is settled whole at the choice's finish. Each
    custom call leaves a ``custom_tool_call`` state item, so the request
    encoder sends it back in its own shape.
    """

    def __init__(self) -> None:
        self._open: dict[tuple[int, int], tuple[str | None, list[str]]] = {}
        self._size = 0

    def delta(self, tc: dict[str, Any], c: int, parts: list[Part]) -> None:
        custom = as_obj(tc.get("custom"), f"{DIALECT_NAME}: custom tool call")
        index = as_int(tc.get("index"), f"{DIALECT_NAME}: tool call index") or 0
        call_id = as_str(tc.get("id"), f"{DIALECT_NAME}: tool call id") or None
        name = as_str(custom.get("name"), f"{DIALECT_NAME}: tool name")
        text = as_str(custom.get("input"), f"{DIALECT_NAME}: custom input") or ""
        piece = dumps(text)[1:-1]
        entry = self._open.get((c, index))
        if entry is None or (call_id and call_id != entry[0]):
            entry = self._open[(c, index)] = (call_id, [])
            piece = '{"input":"' + piece
            parts.append(CallPart(c, call_id, index, name, piece, new=True))
        else:
            parts.append(CallPart(c, None, index, name, piece))
        entry[1].append(text)
        self._size += len(text)
        if self._size > MAX_ARGUMENTS_CHARS:
            raise RemoteProtocolError(
                f"{DIALECT_NAME}: custom tool input exceeds {MAX_ARGUMENTS_CHARS} chars"
            )

    def finish(self, c: int, parts: list[Part]) -> None:
        for (choice, index), (call_id, texts) in list(self._open.items()):
            if choice != c:
                continue
            del self._open[(choice, index)]
            final = dumps({"input": "".join(texts)})
            parts.append(CallPart(c, None, index, args_final=final))
            if call_id:
                state = {"type": "call_item", "call_id": call_id, "item_type": "custom_tool_call"}
                parts.append(StatePart(state, c))


def custom_input(call: ToolCall | InvalidToolCall) -> str:
    """The freeform input of a custom tool call, as the model wrote it."""
    value = call.arguments.get("input") if isinstance(call, ToolCall) else None
    return value if isinstance(value, str) else call.raw_arguments
