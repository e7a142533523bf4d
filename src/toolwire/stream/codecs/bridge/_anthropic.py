"""The bridge's Anthropic Messages answers: ``message_start``, one block at a
time (thinking, text, each ``tool_use`` with its ``input_json_delta``
fragments), ``message_delta`` with the stop reason and usage, ``message_stop``.

Blocks are sequential in this dialect: a call the upstream streams while
another is open (parallel calls interleaved by index) waits, its fragments
kept, until the open one is complete.
"""

from __future__ import annotations

from typing import Any

from toolwire.errors import ProviderError, ToolwireError
from toolwire.stream.codecs.bridge._answer import Answer, Started
from toolwire.stream.codecs.emulation import Frame, token
from toolwire.types import FinishReason, ToolCall, Usage

__all__ = ["AnthropicAnswer", "anthropic_usage"]

_STOP: dict[str, str] = {
    "stop": "end_turn",
    "tool_calls": "tool_use",
    "length": "max_tokens",
    "content_filter": "refusal",
    "paused": "pause_turn",
}


def anthropic_usage(usage: Usage | None) -> dict[str, Any]:
    """Anthropic's usage fields: its ``input_tokens`` leave the cache out."""
    usage = usage or Usage()
    cached, written = usage.cached_tokens or 0, usage.cache_write_tokens or 0
    return {
        "input_tokens": max(0, (usage.input_tokens or 0) - cached - written),
        "cache_creation_input_tokens": written,
        "cache_read_input_tokens": cached,
        "output_tokens": usage.output_tokens or 0,
    }


class AnthropicAnswer(Answer):
    """A ``/v1/messages`` stream."""

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self._block = -1
        self._open: str | None = None
        """The open block's type (``None``: none is open)."""
        self._call: int | None = None
        """The call whose block is open."""
        self._waiting: list[Started] = []
        self._closed_calls: set[int] = set()
        self._later: list[str] = []
        """Text that came while a call's block was open: a block after the calls."""

    def call_id(self, index: int) -> str:
        return "toolu_01" + token(f"{self.seed}:call:{index}", 22)

    def _event(self, kind: str, **fields: Any) -> None:
        self.emit({"type": kind, **fields}, event=kind)

    def opened(self) -> None:
        message: dict[str, Any] = {
            "id": "msg_01" + token(self.seed + ":msg", 22),
            "type": "message",
            "role": "assistant",
            "model": self.asked.model,
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": anthropic_usage(None),
        }
        self._event("message_start", message=message)
        self._frames.append(Frame(None, event="ping", raw='{"type": "ping"}'))

    def _begin(self, kind: str, block: dict[str, Any]) -> None:
        self._end_block()
        self._block += 1
        self._open = kind
        self._event("content_block_start", index=self._block, content_block=block)

    def _end_block(self) -> None:
        if self._open is not None:
            self._event("content_block_stop", index=self._block)
            self._open = None
            self._call = None

    def _delta(self, delta: dict[str, Any]) -> None:
        self._event("content_block_delta", index=self._block, delta=delta)

    def _may_write(self) -> bool:
        """Text and thinking wait while a call's block is open."""
        return self._call is None

    def on_text(self, text: str) -> None:
        if not self._may_write():
            self._later.append(text)
            return
        if self._open != "text":
            self._begin("text", {"type": "text", "text": ""})
        self._delta({"type": "text_delta", "text": text})

    def on_reasoning(self, text: str) -> None:
        if not self._may_write():
            return
        if self._open != "thinking":
            self._begin("thinking", {"type": "thinking", "thinking": "", "signature": ""})
        self._delta({"type": "thinking_delta", "thinking": text})

    def on_started(self, call: Started) -> None:
        if self._call is not None:
            self._waiting.append(call)
            return
        self._open_call(call)

    def _open_call(self, call: Started) -> None:
        block = {"type": "tool_use", "id": call.id, "name": call.name, "input": {}}
        self._begin("tool_use", block)
        self._call = call.index
        for piece in ["", *call.streamed]:
            self._delta({"type": "input_json_delta", "partial_json": piece})

    def on_delta(self, call: Started, delta: str) -> None:
        if self._call == call.index:
            self._delta({"type": "input_json_delta", "partial_json": delta})

    def on_ready(self, call: Started, whole: ToolCall) -> None:
        self._closed_calls.add(call.index)
        if self._call != call.index:
            return  # it waits its turn, and closes when it comes
        self._end_block()
        # The next waiting call opens; one already complete closes at once.
        while self._waiting:
            following = self._waiting.pop(0)
            self._open_call(following)
            if following.index not in self._closed_calls:
                return
            self._end_block()

    def closed(self, finish: FinishReason) -> None:
        self._end_block()
        if self._later:
            self._begin("text", {"type": "text", "text": ""})
            self._delta({"type": "text_delta", "text": "".join(self._later)})
            self._end_block()
        delta = {"stop_reason": _STOP.get(finish, "end_turn"), "stop_sequence": None}
        self._event("message_delta", delta=delta, usage=anthropic_usage(self.usage))
        self._event("message_stop")

    def error_payload(self, error: ToolwireError) -> Frame:
        status = error.status_code if isinstance(error, ProviderError) else None
        kind = "overloaded_error" if status in (503, 529) else "api_error"
        return self.encoder.error_frame({"type": kind, "message": error.message}, 0)
