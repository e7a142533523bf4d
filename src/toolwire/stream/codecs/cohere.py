"""Cohere v2 ``/chat`` streams: their own event vocabulary.

``message-start``, ``content-start`` / ``content-delta`` (text, or a
reasoning model's ``thinking``), ``content-end``, ``tool-plan-delta`` (the model's
plan before calling tools: reasoning, not answer text), ``tool-call-start``
(id, name, first arguments; ``tool_calls`` is an object here, not an array),
``tool-call-delta`` (argument fragments keyed by ``index``),
``tool-call-end``, ``message-end`` (finish reason, usage). Citations
(``citation-start`` / ``-end``) and events of a later vocabulary are
``UnknownItem`` events.
Reference: https://docs.cohere.com/reference/chat-stream
"""

from __future__ import annotations

from typing import Any, Final

from toolwire.stream.codecs._common import (
    DONE,
    as_int,
    as_obj,
    as_str,
    error_event,
    finish_part,
    load_frame,
    summed_usage,
    token_count,
    unknown_part,
)
from toolwire.stream.codecs._dialect import WireDialect, plain_schemas
from toolwire.stream.codecs.cohere_request import encode_request, tool_schema
from toolwire.stream.framing import FramingKind
from toolwire.stream.parts import (
    CallDone,
    CallPart,
    ErrorPart,
    MetaPart,
    Part,
    ReasoningPart,
    StreamEndPart,
    TextPart,
    TrailerPart,
    UsagePart,
)
from toolwire.types import FinishReason

__all__ = ["DIALECT", "RAW_FINISH_REASONS", "CohereCodec"]

DIALECT_NAME = "cohere-v2"

RAW_FINISH_REASONS: Final[dict[str, FinishReason]] = {
    "COMPLETE": "stop",
    "STOP_SEQUENCE": "stop",
    "TOOL_CALL": "tool_calls",
    "MAX_TOKENS": "length",
    "ERROR": "error",
    "TIMEOUT": "error",
}
"""Cohere's ``finish_reason`` values in toolwire's vocabulary."""

_EVENTS: Final = frozenset(
    {
        "message-start",
        "content-start",
        "content-delta",
        "content-end",
        "tool-plan-delta",
        "tool-call-start",
        "tool-call-delta",
        "tool-call-end",
        "citation-start",
        "citation-end",
        "message-end",
    }
)
"""The stream's event types."""


def _message(obj: dict[str, Any]) -> dict[str, Any]:
    delta = obj.get("delta")
    if not delta:
        return {}
    message = as_obj(delta, f"{DIALECT_NAME}: delta").get("message")
    return as_obj(message, f"{DIALECT_NAME}: message") if message else {}


def _content(obj: dict[str, Any], parts: list[Part]) -> None:
    """A text block's start or delta: its text, or its thinking (reasoning)."""
    content = _message(obj).get("content")
    if not content:
        return
    content = as_obj(content, f"{DIALECT_NAME}: content")
    text = content.get("text")
    if text:
        parts.append(TextPart(as_str(text, f"{DIALECT_NAME}: text") or ""))
    thinking = content.get("thinking")
    if thinking:
        parts.append(ReasoningPart(as_str(thinking, f"{DIALECT_NAME}: thinking") or ""))


def _message_end(obj: dict[str, Any], parts: list[Part]) -> None:
    """The finish reason and the usage; the stream's end."""
    delta = as_obj(obj.get("delta") or {}, f"{DIALECT_NAME}: delta")
    usage = delta.get("usage")
    if isinstance(usage, dict):
        within = "usage.tokens" if usage.get("tokens") else "usage.billed_units"
        tokens = usage.get("tokens") or usage.get("billed_units") or {}
        if isinstance(tokens, dict):
            i = token_count(tokens, "input_tokens", DIALECT_NAME, within)
            o = token_count(tokens, "output_tokens", DIALECT_NAME, within)
            cached = token_count(usage, "cached_tokens", DIALECT_NAME, "usage")
            parts.append(UsagePart(summed_usage(i, o, usage, cached)))
    raw = as_str(delta.get("finish_reason"), f"{DIALECT_NAME}: finish_reason") or "COMPLETE"
    parts.append(finish_part(RAW_FINISH_REASONS, raw))
    parts.append(StreamEndPart())


class CohereCodec:
    """Decodes Cohere v2 chat stream events into parts."""

    dialect = DIALECT_NAME
    framings: frozenset[FramingKind] = frozenset({"sse"})

    def __init__(self) -> None:
        self.quirks: set[str] = set()

    def decode(self, event: str, data: str) -> list[Part]:
        obj = load_frame(data, DIALECT_NAME, self.quirks)
        if obj is None:
            return [TrailerPart(DONE)]
        kind = obj.get("type") or event
        parts: list[Part] = []
        if kind == "tool-call-delta":
            fn = _message(obj).get("tool_calls")
            fn = as_obj(fn, f"{DIALECT_NAME}: tool_calls").get("function") if fn else None
            args = as_obj(fn, f"{DIALECT_NAME}: function").get("arguments") if fn else None
            parts.append(
                CallPart(index=self._index(obj), args=as_str(args, f"{DIALECT_NAME}: arguments"))
            )
        elif kind in ("content-delta", "content-start"):
            _content(obj, parts)
        elif kind == "tool-plan-delta":
            plan = _message(obj).get("tool_plan")
            if plan:
                parts.append(ReasoningPart(as_str(plan, f"{DIALECT_NAME}: tool_plan") or ""))
        elif kind == "tool-call-start":
            parts.append(self._call_start(obj))
        elif kind == "tool-call-end":
            parts.append(CallDone(index=self._index(obj)))
        elif kind == "message-start":
            mid = obj.get("id")
            parts.append(MetaPart(response_id=mid if isinstance(mid, str) else None))
        elif kind == "message-end":
            _message_end(obj, parts)
        elif kind == "error" or event == "error":
            parts.append(ErrorPart(error_event(obj, DIALECT_NAME)))
        elif kind != "content-end":  # the end of a block: nothing more to read
            # Citations and any event of a later vocabulary.
            parts.append(unknown_part(DIALECT_NAME, str(kind), obj, self.quirks))
        return parts

    def _call_start(self, obj: dict[str, Any]) -> CallPart:
        tc = as_obj(_message(obj).get("tool_calls"), f"{DIALECT_NAME}: tool_calls")
        fn = as_obj(tc.get("function") or {}, f"{DIALECT_NAME}: function")
        return CallPart(
            index=self._index(obj),
            id=as_str(tc.get("id"), f"{DIALECT_NAME}: id"),
            name=as_str(fn.get("name"), f"{DIALECT_NAME}: name"),
            args=as_str(fn.get("arguments"), f"{DIALECT_NAME}: arguments") or None,
            new=True,
        )

    @staticmethod
    def _index(obj: dict[str, Any]) -> int:
        return as_int(obj.get("index"), f"{DIALECT_NAME}: index") or 0


DIALECT: Final = WireDialect(
    name=DIALECT_NAME,
    codec=CohereCodec,
    finish_reasons=RAW_FINISH_REASONS,
    sniff_name=_EVENTS.__contains__,
    paths=("/v2/chat",),
    client_path="/v2/chat",
    request_path=lambda model, stream: "/v2/chat",
    encode_request=encode_request,
    tool_schemas=plain_schemas(tool_schema),
    otel_provider="cohere",
)
"""Cohere's v2 chat stream."""
