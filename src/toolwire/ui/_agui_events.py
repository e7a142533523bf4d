"""A run's events as AG-UI events: the translation, one agent event at a time.

Every tool call goes out as ``TOOL_CALL_START``, ``TOOL_CALL_ARGS``... and
``TOOL_CALL_END``, with its arguments even when the provider sent them whole
or streamed values instead of text (the arguments then go out as one
``TOOL_CALL_ARGS`` of their canonical JSON when the call is ready). A call is
started on the wire once its id and name are known; argument text that came
before is held and sent with the start.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from ag_ui.core import (
    BaseEvent,
    CustomEvent,
    Interrupt,
    ReasoningEndEvent,
    ReasoningMessageContentEvent,
    ReasoningMessageEndEvent,
    ReasoningMessageStartEvent,
    ReasoningStartEvent,
    RunErrorEvent,
    RunFinishedEvent,
    RunFinishedInterruptOutcome,
    RunStartedEvent,
    StateSnapshotEvent,
    StepFinishedEvent,
    StepStartedEvent,
    TextMessageContentEvent,
    TextMessageEndEvent,
    TextMessageStartEvent,
    TokenUsage,
    ToolCallArgsEvent,
    ToolCallEndEvent,
    ToolCallResultEvent,
    ToolCallStartEvent,
)

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
    OutputDelta,
    PendingCall,
    RunFinished,
    RunResult,
    RunStarted,
    ToolExecutionFinished,
    TurnFinished,
    TurnStarted,
    canonical_arguments,
    printable_output,
)
from toolwire.types import Usage
from toolwire.ui._threads import answer_id, cost_text

__all__ = ["Translator", "interrupt_of", "token_usage"]


@dataclass(slots=True)
class _Call:
    """A tool call on its way to the wire."""

    id: str | None = None
    name: str = ""
    held: list[str] = field(default_factory=list[str])
    started: bool = False
    sent_text: bool = False
    ended: bool = False


@dataclass(slots=True)
class Translator:
    """Turns one run's :data:`~toolwire.run.AgentEvent` values into AG-UI events."""

    thread_id: str
    run_id: str
    """The AG-UI run id (the request's), not the journal's."""
    provider: str = ""
    model: str = ""
    turn: int = 0
    text_id: str | None = None
    reasoning_id: str | None = None
    calls: dict[tuple[int, int], _Call] = field(default_factory=dict[tuple[int, int], _Call])
    journal_run: str = ""
    retries: int = 0
    step: int | None = None
    """The turn whose step is open on the wire."""

    def message_id(self) -> str:
        """The assistant message of the current turn (text and calls)."""
        return f"{self.journal_run}.{self.turn}.{self.retries}"

    def feed(self, event: AgentEvent) -> list[BaseEvent]:
        """The AG-UI events ``event`` becomes (often none)."""
        if isinstance(event, TextDelta):
            return self._text(event.text)
        if isinstance(event, ReasoningDelta):
            return self._reasoning(event.text)
        if isinstance(event, ToolCallStarted):
            return self._call_seen(event.choice, event.index, event.id, event.name, "")
        if isinstance(event, ToolCallDelta):
            return self._call_seen(event.choice, event.index, event.id, event.name, event.delta)
        if isinstance(event, ToolCallReady):
            call = event.call
            text = call.raw_arguments or canonical_arguments(call.arguments)
            return self._call_done(event.choice, call.index, call.id, call.name, text)
        if isinstance(event, ToolCallInvalid):
            bad = event.call
            return self._call_done(event.choice, bad.index, bad.id, bad.name, bad.raw_arguments)
        if isinstance(event, ToolExecutionFinished):
            result = event.result
            return [
                *self._step(event.turn),
                ToolCallResultEvent(
                    message_id=f"{self.journal_run}.result.{result.call_id}",
                    tool_call_id=result.call_id,
                    content=result.content,
                    role="tool",
                    metadata={"ok": result.ok, "attempts": result.attempts},
                ),
            ]
        return self._run_event(event)

    def _run_event(self, event: AgentEvent) -> list[BaseEvent]:
        if isinstance(event, RunStarted):
            self.journal_run = event.run_id
            return [
                RunStartedEvent(
                    thread_id=self.thread_id,
                    run_id=self.run_id,
                    metadata={"toolwire": {"runId": event.run_id, "resumed": event.resumed}},
                )
            ]
        if isinstance(event, TurnStarted):
            self.retries = 0
            return self._step(event.turn)
        if isinstance(event, ModelRetrying):
            closed = self.close()
            self.retries = event.attempt
            retry = {"turn": event.turn, "attempt": event.attempt, "error": str(event.error)}
            return [*closed, CustomEvent(name="toolwire.model_retrying", value=retry)]
        if isinstance(event, TurnFinished):
            value: dict[str, Any] = {
                "turn": event.turn,
                "finishReason": event.finish_reason,
                "usage": event.usage.to_dict() if event.usage is not None else None,
                "cost": cost_text(event.cost),
            }
            out = [*self.close(), *self._step(event.turn)]
            self.step = None
            return [
                *out,
                CustomEvent(name="toolwire.turn", value=value),
                StepFinishedEvent(step_name=f"turn {event.turn}"),
            ]
        if isinstance(event, OutputDelta):
            return [StateSnapshotEvent(snapshot={"output": event.partial})]
        if isinstance(event, RunFinished):
            return [*self.close(), self.finished(event.result)]
        return []

    def finished(self, result: RunResult[Any]) -> RunFinishedEvent:
        """The run's last event: an interrupt when it waits on calls."""
        usage = token_usage(result.usage, self.provider, self.model)
        meta: dict[str, Any] = {
            "toolwire": {
                "runId": result.run_id,
                "outcome": result.outcome,
                "cost": cost_text(result.cost),
            }
        }
        if result.outcome == "suspended" and result.pending:
            return self.interrupted(result.pending, usage=usage, meta=meta)
        return RunFinishedEvent(
            thread_id=self.thread_id,
            run_id=self.run_id,
            result=printable_output(result.output),
            usage=usage,
            metadata=meta,
        )

    def interrupted(
        self,
        pending: tuple[PendingCall, ...],
        *,
        usage: list[TokenUsage] | None = None,
        meta: dict[str, Any] | None = None,
    ) -> RunFinishedEvent:
        """``RUN_FINISHED`` with the interrupt outcome for ``pending``."""
        return RunFinishedEvent(
            thread_id=self.thread_id,
            run_id=self.run_id,
            outcome=RunFinishedInterruptOutcome(
                interrupts=[interrupt_of(self.journal_run, p) for p in pending]
            ),
            usage=usage,
            metadata=meta,
        )

    def failed(self, exc: BaseException) -> list[BaseEvent]:
        """What a run that raised ends with."""
        code = getattr(exc, "reason", None) or type(exc).__name__
        return [*self.close(), RunErrorEvent(message=str(exc), code=str(code))]

    def close(self) -> list[BaseEvent]:
        """End what is open: the text, the reasoning, calls never made ready."""
        out: list[BaseEvent] = []
        if self.reasoning_id is not None:
            out += [
                ReasoningMessageEndEvent(message_id=self.reasoning_id),
                ReasoningEndEvent(message_id=self.reasoning_id),
            ]
            self.reasoning_id = None
        if self.text_id is not None:
            out.append(TextMessageEndEvent(message_id=self.text_id))
            self.text_id = None
        for call in self.calls.values():
            if call.started and not call.ended:
                out.append(ToolCallEndEvent(tool_call_id=call.id or ""))
                call.ended = True
        self.calls.clear()
        return out

    def _step(self, turn: int) -> list[BaseEvent]:
        """Open turn ``turn``'s step, unless it is open (a resumed run's
        events begin inside the turn it suspended in)."""
        if self.step == turn:
            return []
        out: list[BaseEvent] = []
        if self.step is not None:
            out.append(StepFinishedEvent(step_name=f"turn {self.step}"))
        self.step = self.turn = turn
        out.append(StepStartedEvent(step_name=f"turn {turn}"))
        return out

    def _text(self, text: str) -> list[BaseEvent]:
        if not text:
            return []
        out: list[BaseEvent] = []
        if self.reasoning_id is not None:
            out += [
                ReasoningMessageEndEvent(message_id=self.reasoning_id),
                ReasoningEndEvent(message_id=self.reasoning_id),
            ]
            self.reasoning_id = None
        if self.text_id is None:
            self.text_id = self.message_id()
            out.append(TextMessageStartEvent(message_id=self.text_id, role="assistant"))
        out.append(TextMessageContentEvent(message_id=self.text_id, delta=text))
        return out

    def _reasoning(self, text: str) -> list[BaseEvent]:
        if not text:
            return []
        out: list[BaseEvent] = []
        if self.reasoning_id is None:
            self.reasoning_id = f"{self.message_id()}.reasoning"
            out += [
                ReasoningStartEvent(message_id=self.reasoning_id),
                ReasoningMessageStartEvent(message_id=self.reasoning_id, role="reasoning"),
            ]
        out.append(ReasoningMessageContentEvent(message_id=self.reasoning_id, delta=text))
        return out

    def _call_seen(
        self, choice: int, index: int, call_id: str | None, name: str, delta: str
    ) -> list[BaseEvent]:
        call = self.calls.setdefault((choice, index), _Call())
        call.id = call.id or call_id
        call.name = call.name or name
        if delta:
            call.held.append(delta)
        return self._flush(call)

    def _flush(self, call: _Call) -> list[BaseEvent]:
        out: list[BaseEvent] = []
        if not call.started:
            if not (call.id and call.name):
                return out
            out += self._end_text()
            out.append(
                ToolCallStartEvent(
                    tool_call_id=call.id,
                    tool_call_name=call.name,
                    parent_message_id=self.message_id(),
                )
            )
            call.started = True
        if call.held:
            out.append(ToolCallArgsEvent(tool_call_id=call.id or "", delta="".join(call.held)))
            call.held.clear()
            call.sent_text = True
        return out

    def _call_done(
        self, choice: int, index: int, call_id: str, name: str, whole: str
    ) -> list[BaseEvent]:
        call = self.calls.setdefault((choice, index), _Call())
        call.id, call.name = call_id, call.name or name
        if not call.sent_text and not call.held:
            call.held.append(whole or "{}")  # the arguments came whole (or as values)
        out = self._flush(call)
        out.append(ToolCallEndEvent(tool_call_id=call_id))
        call.ended = True
        return out

    def _end_text(self) -> list[BaseEvent]:
        out: list[BaseEvent] = []
        if self.text_id is not None:
            out.append(TextMessageEndEvent(message_id=self.text_id))
            self.text_id = None
        return out


def interrupt_of(journal_run: str, pending: PendingCall) -> Interrupt:
    """The interrupt that asks for ``pending``'s answer: its id binds the
    answer to the call's arguments (see :func:`~toolwire.ui._threads.answer_id`)."""
    approval = pending.awaiting == "approval"
    arguments = json.dumps(pending.arguments, ensure_ascii=False, sort_keys=True)
    return Interrupt(
        id=answer_id(pending),
        reason="tool_approval" if approval else "tool_result",
        message=(
            f"{pending.name} wants to run with {arguments}: approve?"
            if approval
            else f"{pending.name} waits for its result from outside"
        ),
        tool_call_id=pending.call_id,
        response_schema=(
            {
                "type": "object",
                "properties": {"approved": {"type": "boolean"}, "reason": {"type": "string"}},
                "required": ["approved"],
            }
            if approval
            else {"type": "object", "properties": {"result": {}}, "required": ["result"]}
        ),
        metadata={
            "toolwire": {
                "runId": journal_run,
                "callId": pending.call_id,
                "tool": pending.name,
                "awaiting": pending.awaiting,
                "arguments": pending.arguments,
                "digest": pending.digest,
                "repaired": pending.repaired,
            }
        },
    )


def token_usage(usage: Usage, provider: str, model: str) -> list[TokenUsage] | None:
    """The run's usage as AG-UI's one entry per provider and model."""
    if usage.input_tokens is None and usage.output_tokens is None:
        return None
    total = usage.total_tokens
    if total is None and usage.input_tokens is not None and usage.output_tokens is not None:
        total = usage.input_tokens + usage.output_tokens
    return [
        TokenUsage(
            provider=provider or None,
            model=model or None,
            input_tokens=usage.input_tokens,
            output_tokens=usage.output_tokens,
            total_tokens=total,
            reasoning_tokens=usage.reasoning_tokens,
            cached_input_tokens=usage.cached_tokens,
        )
    ]
