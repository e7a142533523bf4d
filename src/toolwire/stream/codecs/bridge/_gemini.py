"""The bridge's Gemini answers: ``GenerateContentResponse`` chunks.

Gemini streams no argument fragments: each ``functionCall`` part is sent
whole, once the upstream's call is complete; text and thought parts as they
come; the last chunk carries the finish reason and ``usageMetadata``.
"""

from __future__ import annotations

from typing import Any

from toolwire.stream.codecs.bridge._answer import Answer, Started
from toolwire.stream.codecs.emulation import token
from toolwire.types import FinishReason, ToolCall, Usage

__all__ = ["GeminiAnswer"]

_FINISH = {"length": "MAX_TOKENS", "content_filter": "SAFETY"}


def gemini_usage(usage: Usage | None) -> dict[str, Any]:
    usage = usage or Usage()
    prompt, made = usage.input_tokens or 0, usage.output_tokens or 0
    thoughts = usage.reasoning_tokens or 0
    metadata = {
        "promptTokenCount": prompt,
        "candidatesTokenCount": made - thoughts,
        "totalTokenCount": prompt + made,
    }
    if thoughts:
        metadata["thoughtsTokenCount"] = thoughts
    if usage.cached_tokens:
        metadata["cachedContentTokenCount"] = usage.cached_tokens
    return metadata


class GeminiAnswer(Answer):
    """A ``:streamGenerateContent`` stream (SSE, or the JSON array)."""

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self._id = token(self.seed + ":response", 22)

    def _chunk(self, parts: list[dict[str, Any]], **more: Any) -> None:
        candidate: dict[str, Any] = {"content": {"parts": parts, "role": "model"}, "index": 0}
        candidate.update(more.pop("candidate", {}))
        self.emit(
            {
                "candidates": [candidate],
                **more,
                "modelVersion": self.asked.model,
                "responseId": self._id,
            }
        )

    def on_text(self, text: str) -> None:
        self._chunk([{"text": text}])

    def on_reasoning(self, text: str) -> None:
        self._chunk([{"text": text, "thought": True}])

    def on_ready(self, call: Started, whole: ToolCall) -> None:
        self._chunk([{"functionCall": {"id": call.id, "name": call.name, "args": whole.arguments}}])

    def closed(self, finish: FinishReason) -> None:
        self._chunk(
            [{"text": ""}],
            candidate={"finishReason": _FINISH.get(finish, "STOP")},
            usageMetadata=gemini_usage(self.usage),
        )
