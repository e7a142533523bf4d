"""Ollama's native ``/api/chat`` stream: one JSON object per line (NDJSON).

Each line has ``message`` (``content``, ``thinking``, ``tool_calls`` with
whole calls whose ``arguments`` is an object, usually no id) and ``done``;
the last line has ``done: true``, ``done_reason`` and the token counts
(kept with the durations in the usage's ``raw``). Any other member of a
line or its message is an ``UnknownItem`` (when first sent, and again when
its value changes).
Reference: https://github.com/ollama/ollama/blob/main/docs/api.md#generate-a-chat-completion
"""

from __future__ import annotations

from typing import Final

from toolwire.errors import RemoteProtocolError
from toolwire.stream.codecs._common import (
    DONE,
    UnreadFields,
    as_list,
    as_obj,
    as_str,
    error_event,
    finish_part,
    load_frame,
    summed_usage,
    token_count,
)
from toolwire.stream.codecs._dialect import WireDialect, plain_schemas
from toolwire.stream.codecs.ollama_request import encode_request, tool_schema
from toolwire.stream.framing import FramingKind
from toolwire.stream.parts import (
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

__all__ = ["DIALECT", "RAW_FINISH_REASONS", "OllamaCodec"]

DIALECT_NAME = "ollama-ndjson"

RAW_FINISH_REASONS: Final[dict[str, FinishReason]] = {"stop": "stop", "length": "length"}
"""Ollama's ``done_reason`` values in toolwire's vocabulary."""

_LINE_READ: Final = frozenset(
    {
        "model",
        "created_at",
        "message",
        "done",
        "done_reason",
        "error",
        "total_duration",
        "load_duration",
        "prompt_eval_count",
        "prompt_eval_duration",
        "eval_count",
        "eval_duration",
    }
)
_MESSAGE_READ: Final = frozenset({"role", "content", "thinking", "tool_calls"})


class OllamaCodec:
    """Decodes Ollama NDJSON lines into parts."""

    dialect = DIALECT_NAME
    framings: frozenset[FramingKind] = frozenset({"ndjson"})

    def __init__(self) -> None:
        self._meta_seen = False
        self.quirks: set[str] = set()
        self._unread = UnreadFields(DIALECT_NAME)

    def decode(self, event: str, data: str) -> list[Part]:
        obj = load_frame(data, DIALECT_NAME, self.quirks)
        if obj is None:
            return [TrailerPart(DONE)]
        if "error" in obj and "message" not in obj:
            return [ErrorPart(error_event(obj, DIALECT_NAME))]
        parts: list[Part] = []
        if not self._meta_seen:
            self._meta_seen = True
            model = obj.get("model")
            parts.append(MetaPart(model=model if isinstance(model, str) else None))
        if not _LINE_READ.issuperset(obj):
            parts += self._unread.parts(obj, _LINE_READ)
        message = obj.get("message")
        if message:
            message = as_obj(message, f"{DIALECT_NAME}: message")
            if not _MESSAGE_READ.issuperset(message):
                parts += self._unread.parts(message, _MESSAGE_READ)
            thinking = message.get("thinking")
            if thinking:
                parts.append(ReasoningPart(as_str(thinking, f"{DIALECT_NAME}: thinking") or ""))
            content = message.get("content")
            if content:
                parts.append(TextPart(as_str(content, f"{DIALECT_NAME}: content") or ""))
            for tc in as_list(message.get("tool_calls"), f"{DIALECT_NAME}: tool_calls"):
                fn = as_obj(
                    as_obj(tc, f"{DIALECT_NAME}: tool call").get("function"),
                    f"{DIALECT_NAME}: function",
                )
                part = CallPart(
                    id=as_str(tc.get("id"), f"{DIALECT_NAME}: tool call id"),
                    name=as_str(fn.get("name"), f"{DIALECT_NAME}: tool name"),
                    new=True,
                    done=True,
                )
                args = fn.get("arguments")
                if isinstance(args, str):
                    part.args = args
                elif args is None or isinstance(args, dict):
                    part.args_value = args or {}
                else:
                    raise RemoteProtocolError(
                        f"{DIALECT_NAME}: tool call arguments are not an object"
                    )
                parts.append(part)
        if obj.get("done") is True:
            raw = as_str(obj.get("done_reason"), f"{DIALECT_NAME}: done_reason") or "stop"
            prompt = token_count(obj, "prompt_eval_count", DIALECT_NAME)
            output = token_count(obj, "eval_count", DIALECT_NAME)
            if prompt is not None or output is not None:
                raw_usage = {k: v for k, v in obj.items() if k.endswith(("_count", "_duration"))}
                parts.append(UsagePart(summed_usage(prompt, output, raw_usage)))
            parts.append(finish_part(RAW_FINISH_REASONS, raw))
            parts.append(StreamEndPart())
        return parts


DIALECT: Final = WireDialect(
    name=DIALECT_NAME,
    codec=OllamaCodec,
    finish_reasons=RAW_FINISH_REASONS,
    sniff_shape=lambda obj: "message" in obj and "done" in obj,
    paths=("/api/chat",),
    client_path="/api/chat",
    request_path=lambda model, stream: "/api/chat",
    encode_request=encode_request,
    tool_schemas=plain_schemas(tool_schema),
    stream_paths=("/api/chat",),
)
"""Ollama's native chat stream."""
