"""A run's events as AI SDK UI message stream chunks (protocol v1, as the
``ai`` package 7 reads it), one agent event at a time.

The whole run is one assistant message (its id the journal's run id, so that
a resumed run continues the message the page holds), a step per model turn.
Tool calls are dynamic tools (the page declares none): ``tool-input-start``,
``tool-input-delta``... as the model writes the arguments, then
``tool-input-available`` with the parsed arguments (also when they arrived
whole), and the result as ``tool-output-available`` (``-error``,
``-denied``). A run that waits on approvals ends with a
``tool-approval-request`` per call, its ``approvalId`` bound to the call's
arguments (:func:`~toolwire.ui._threads.answer_id`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from toolwire.events import (
    ReasoningDelta,
    TextDelta,
    ToolCallDelta,
    ToolCallInvalid,
    ToolCallReady,
    ToolCallStarted,
)
from toolwire.run import (
    AgentEvent,
    ModelRetrying,
    PendingCall,
    RunFinished,
    RunResult,
    RunStarted,
    ToolExecutionFinished,
    TurnFinished,
    TurnStarted,
    printable_output,
)
from toolwire.ui._threads import answer_id, cost_text

__all__ = ["Chunk", "Translator", "approval_request"]

Chunk = dict[str, Any]
"""One chunk of the stream, as the JSON it is sent as."""

_FINISH = {"answered": "stop", "max_turns": "length", "suspended": "tool-calls"}


@dataclass(slots=True)
class _Call:
    id: str | None = None
    name: str = ""
    held: list[str] = field(default_factory=list[str])
    started: bool = False


@dataclass(slots=True)
class Translator:
    """Turns one run's events into UI message stream chunks."""

    run_id: str = ""
    turn: int = 0
    parts: int = 0
    text_id: str | None = None
    reasoning_id: str | None = None
    calls: dict[tuple[int, int], _Call] = field(default_factory=dict[tuple[int, int], _Call])
    step_open: bool = False

    def feed(self, event: AgentEvent) -> list[Chunk]:
        """The chunks ``event`` becomes (often none)."""
        if isinstance(event, TextDelta):
            return self._text(event.text)
        if isinstance(event, ReasoningDelta):
            return self._reasoning(event.text)
        if isinstance(event, (ToolCallStarted, ToolCallDelta)):
            delta = event.delta if isinstance(event, ToolCallDelta) else ""
            call = self.calls.setdefault((event.choice, event.index), _Call())
            call.id, call.name = call.id or event.id, call.name or event.name
            if delta:
                call.held.append(delta)
            return self._flush(call)
        if isinstance(event, ToolCallReady):
            ready = event.call
            call = self.calls.setdefault((event.choice, ready.index), _Call())
            call.id, call.name = ready.id, call.name or ready.name
            out = self._flush(call)
            chunk = {"type": "tool-input-available", "toolCallId": ready.id}
            out.append(chunk | {"toolName": ready.name, "input": ready.arguments, "dynamic": True})
            return out
        if isinstance(event, ToolCallInvalid):
            bad = event.call
            call = self.calls.setdefault((event.choice, bad.index), _Call())
            call.id, call.name = bad.id, call.name or bad.name
            out = self._flush(call)
            chunk = {"type": "tool-input-error", "toolCallId": bad.id, "toolName": bad.name}
            out.append(
                chunk | {"input": bad.raw_arguments, "errorText": bad.error, "dynamic": True}
            )
            return out
        if isinstance(event, ToolExecutionFinished):
            return [*self._step(), _output(event)]
        return self._run_event(event)

    def _run_event(self, event: AgentEvent) -> list[Chunk]:
        if isinstance(event, RunStarted):
            self.run_id = event.run_id
            meta = {"runId": event.run_id, "resumed": event.resumed}
            return [{"type": "start", "messageId": event.run_id, "messageMetadata": meta}]
        if isinstance(event, TurnStarted):
            out = self._end_step()
            self.turn = event.turn
            return [*out, *self._step()]
        if isinstance(event, ModelRetrying):
            # The turn is sent again: what it streamed so far goes.
            self._close_parts()
            self.calls.clear()
            return [{"type": "reset-step"}]
        if isinstance(event, TurnFinished):
            out = [*self._step(), *self._close_parts()]
            self.turn = event.turn
            data = {
                "turn": event.turn,
                "finishReason": event.finish_reason,
                "usage": event.usage.to_dict() if event.usage is not None else None,
                "cost": cost_text(event.cost),
            }
            out.append({"type": "data-usage", "id": f"usage-{event.turn}", "data": data})
            return [*out, *self._end_step()]
        if isinstance(event, RunFinished):
            return [*self._close_parts(), *self._end_step(), *self.finished(event.result)]
        return []

    def finished(self, result: RunResult[Any]) -> list[Chunk]:
        """The run's last chunks: approval requests when it waits on calls."""
        out: list[Chunk] = [approval_request(p) for p in result.pending if p.awaiting == "approval"]
        meta = {
            "runId": result.run_id,
            "outcome": result.outcome,
            "output": printable_output(result.output),
            "usage": result.usage.to_dict(),
            "cost": cost_text(result.cost),
        }
        out.append({"type": "data-cost", "id": "cost", "data": meta["cost"]})
        finish = _FINISH.get(result.outcome, "other")
        out.append({"type": "finish", "finishReason": finish, "messageMetadata": meta})
        return out

    def failed(self, exc: BaseException) -> list[Chunk]:
        """What a run that raised ends with."""
        return [*self._close_parts(), {"type": "error", "errorText": str(exc)}]

    def _step(self) -> list[Chunk]:
        if self.step_open:
            return []
        self.step_open = True
        return [{"type": "start-step"}]

    def _end_step(self) -> list[Chunk]:
        self.calls.clear()
        if not self.step_open:
            return []
        self.step_open = False
        return [*self._close_parts(), {"type": "finish-step"}]

    def _next_id(self, kind: str) -> str:
        self.parts += 1
        return f"{kind}-{self.turn}-{self.parts}"

    def _close_parts(self) -> list[Chunk]:
        out: list[Chunk] = []
        if self.reasoning_id is not None:
            out.append({"type": "reasoning-end", "id": self.reasoning_id})
            self.reasoning_id = None
        if self.text_id is not None:
            out.append({"type": "text-end", "id": self.text_id})
            self.text_id = None
        return out

    def _text(self, text: str) -> list[Chunk]:
        if not text:
            return []
        out = self._step()
        if self.reasoning_id is not None:
            out.append({"type": "reasoning-end", "id": self.reasoning_id})
            self.reasoning_id = None
        if self.text_id is None:
            self.text_id = self._next_id("text")
            out.append({"type": "text-start", "id": self.text_id})
        out.append({"type": "text-delta", "id": self.text_id, "delta": text})
        return out

    def _reasoning(self, text: str) -> list[Chunk]:
        if not text:
            return []
        out = self._step()
        if self.reasoning_id is None:
            self.reasoning_id = self._next_id("reasoning")
            out.append({"type": "reasoning-start", "id": self.reasoning_id})
        out.append({"type": "reasoning-delta", "id": self.reasoning_id, "delta": text})
        return out

    def _flush(self, call: _Call) -> list[Chunk]:
        out: list[Chunk] = []
        if not call.started:
            if not (call.id and call.name):
                return out
            out += [*self._step(), *self._close_parts()]
            out.append(
                {
                    "type": "tool-input-start",
                    "toolCallId": call.id,
                    "toolName": call.name,
                    "dynamic": True,
                }
            )
            call.started = True
        if call.held:
            delta = "".join(call.held)
            out.append({"type": "tool-input-delta", "toolCallId": call.id, "inputTextDelta": delta})
            call.held.clear()
        return out


def _output(event: ToolExecutionFinished) -> Chunk:
    result = event.result
    if result.error == "denied":
        return {"type": "tool-output-denied", "toolCallId": result.call_id}
    if not result.ok:
        return {
            "type": "tool-output-error",
            "toolCallId": result.call_id,
            "errorText": result.content,
            "dynamic": True,
        }
    return {
        "type": "tool-output-available",
        "toolCallId": result.call_id,
        "output": result.content,
        "dynamic": True,
    }


def approval_request(pending: PendingCall) -> Chunk:
    """The chunk that asks the page to approve ``pending``."""
    return {
        "type": "tool-approval-request",
        "approvalId": answer_id(pending),
        "toolCallId": pending.call_id,
        "approvalDescriptor": {
            "tool": pending.name,
            "arguments": pending.arguments,
            "digest": pending.digest,
            "repaired": pending.repaired,
        },
    }
