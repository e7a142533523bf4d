"""The tools of a turn, carried out for a :class:`~toolwire.agent._driver.RunDriver`.

:class:`ToolSteps` is the part of the run driver that settles a turn's
calls: the results a resumed turn already has, the answers to the calls the
provider asked about, and one batch through the toolbox (which alone decides
what is a duplicate and asks for approval), each result recorded and fed
back in call order.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from toolwire.agent._asked import answer_asked_calls, record_answers
from toolwire.agent._config import RunConfig
from toolwire.agent._resumed import Results, recorded_results
from toolwire.agent._suspend import run_approver
from toolwire.messages import AssistantMessage, Message, ToolResultMessage
from toolwire.observe import Observers
from toolwire.run import (
    AgentEvent,
    PendingCall,
    ToolCallRecord,
    ToolExecutionFinished,
    ToolExecutionStarted,
    argument_digest,
    canonical_arguments,
)
from toolwire.tools import (
    ApprovalCallback,
    ApprovalFailed,
    QuestionAnswer,
    Questions,
    ToolResult,
    asking,
    idempotency_key,
)
from toolwire.types import InvalidToolCall, ToolCall

if TYPE_CHECKING:
    from toolwire.journal import RecordedTurn

__all__ = ["AnyCall", "Emit", "ToolSteps"]

Emit = Callable[[AgentEvent], None]
AnyCall = ToolCall | InvalidToolCall


class _Asked(Exception):
    """Internal: calls of the batch asked a question nobody here could
    answer; the run suspends on them (their outcomes were not recorded)."""

    def __init__(self, pending: tuple[PendingCall, ...]) -> None:
        super().__init__(f"{len(pending)} call(s) wait for an answer")
        self.pending = pending


class ToolSteps:
    """Runs the tools of a turn (the state is the run driver's)."""

    config: RunConfig
    run_id: str
    messages: list[Message]
    observe: Observers
    emit: Emit | None
    records: list[ToolCallRecord]
    turn: int
    granted: dict[str, str]
    approval_failures: dict[str, ApprovalFailed]
    answers: dict[str, dict[str, QuestionAnswer]]
    """Answers given to the suspended run's questions, by call id and digest."""

    async def _recorded_results(self, calls: Sequence[AnyCall], recorded: RecordedTurn) -> Results:
        """The results a resumed turn already has (see :func:`recorded_results`)."""
        settled = await recorded_results(calls, recorded, self.config.toolbox, self.observe,
                                         run_id=self.run_id, turn=self.turn)  # fmt: skip
        if self.emit is not None:
            for call in calls:
                if call.id in settled and call.id not in recorded.outcomes:
                    self.emit(
                        ToolExecutionFinished(turn=self.turn, call=call, result=settled[call.id][0])
                    )
        return settled

    async def _answer_asked(
        self, calls: Sequence[AnyCall], assistant: AssistantMessage, done: Results
    ) -> None:
        """Answer the calls the provider asked about (MCP approvals, computer
        and shell calls no tool handles): see :mod:`toolwire.agent._asked`."""
        pending = [call for call in calls if call.id not in done]
        answers = await answer_asked_calls(
            pending,
            assistant,
            self.config.toolbox,
            approve=self._approver(),
            granted=self.granted,
            run_id=self.run_id,
            metadata={
                **self.config.metadata,
                "turn": self.turn,
                "model": self.config.request.model,
            },
        )
        answered = [call for call in pending if call.id in answers]
        await record_answers(self.observe, self.run_id, self.turn, answered, answers)
        for call in answered:
            result = answers[call.id]
            done[call.id] = (result, False)
            if self.emit is not None:
                self.emit(ToolExecutionFinished(turn=self.turn, call=call, result=result))

    async def _run_tools(self, calls: Sequence[AnyCall], done: Results) -> tuple[PendingCall, ...]:
        """Run the calls that have no result yet (run eagerly, or recorded by
        an earlier process) as one batch; record every result and feed it
        back in call order. Returns the calls that asked a question nobody
        here could answer (then nothing is fed back: the run suspends)."""
        results = dict(done)
        pending = [call for call in calls if call.id not in done]
        if pending:
            try:
                ran = await self._execute(pending)
            except _Asked as asked:
                return asked.pending
            results.update((call_id, (result, False)) for call_id, result in ran.items())
        for call in calls:
            result, eager = results[call.id]
            self.records.append(
                ToolCallRecord(turn=self.turn, call=call, result=result, eager=eager)
            )
            self.messages.append(
                ToolResultMessage(
                    call_id=call.id, name=call.name, content=result.content, is_error=not result.ok
                )
            )
        return ()

    async def _execute(
        self, calls: Sequence[AnyCall], *, eager: bool = False
    ) -> dict[str, ToolResult]:
        """Run calls through the toolbox, which alone decides what is a
        duplicate and asks for approval: every intent is told to the observers
        before anything runs (so a duplicate folded onto another call is never
        run again on resume), and each outcome as soon as it is known."""
        run_id, turn, observe, emit = self.run_id, self.turn, self.observe, self.emit
        if observe.tools_started:
            # The keys the toolbox derives from the run id and the call ids.
            intents = [(call, idempotency_key(run_id, call.id)) for call in calls]
            for started in observe.tools_started:
                await started(run_id, turn, intents, eager=eager)
        if emit is not None:
            for call in calls:
                emit(ToolExecutionStarted(turn=turn, call=call, eager=eager))
        finished_hooks = observe.tool_finished
        # An eager call cannot suspend the run: a question it asks is declined.
        questions = None if eager else Questions(answers=self.answers)

        async def finished(call: AnyCall, result: ToolResult) -> None:
            if call.id in self.approval_failures:
                return  # not a denial: the run ends with the approver's error
            if questions is not None and call.id in questions.waiting:
                return  # not an outcome: the call runs again once answered
            for hook in finished_hooks:
                await hook(run_id, turn, call, result, eager=eager)
            if emit is not None:
                emit(ToolExecutionFinished(turn=turn, call=call, result=result, eager=eager))

        config = self.config
        token = asking.set(questions)
        try:
            results = await config.toolbox.execute(
                calls,
                run_id=run_id,
                metadata={**config.metadata, "turn": turn, "model": config.request.model},
                approve=self._approver(),
                on_result=finished if finished_hooks or emit is not None else None,
            )
        finally:
            asking.reset(token)
        for failure in self.approval_failures.values():
            raise failure
        if questions is not None and questions.waiting:
            raise _Asked(self._asked(calls, questions))
        return {call.id: result for call, result in zip(calls, results, strict=True)}

    async def _answered(self, settled: Sequence[tuple[AnyCall, ToolResult]]) -> None:
        """Tell the observers of calls answered without running anything (a
        typed run's refused final-result calls): intent and outcome, as for a
        call that ran, so the journal holds the turn's every result."""
        run_id, turn, observe = self.run_id, self.turn, self.observe
        intents = [(call, idempotency_key(run_id, call.id)) for call, _ in settled]
        for started in observe.tools_started:
            await started(run_id, turn, intents, eager=False)
        for call, result in settled:
            for hook in observe.tool_finished:
                await hook(run_id, turn, call, result, eager=False)

    def _approver(self) -> ApprovalCallback | None:
        """The toolbox's approval callback for this turn (see :func:`run_approver`)."""
        return run_approver(
            self.config.toolbox.approve,
            self.granted,
            self.observe,
            run_id=self.run_id,
            turn=self.turn,
            failures=self.approval_failures,
        )

    def _asked(self, calls: Sequence[AnyCall], questions: Questions) -> tuple[PendingCall, ...]:
        """The calls that wait for an answer to their question, as pending calls."""
        waiting: list[PendingCall] = []
        for call in calls:
            question = questions.waiting.get(call.id)
            if question is None or isinstance(call, InvalidToolCall):
                continue
            waiting.append(
                PendingCall(
                    call_id=call.id,
                    name=call.name,
                    awaiting="answer",
                    arguments=json.loads(canonical_arguments(call.arguments)),
                    digest=argument_digest(call.arguments),
                    turn=self.turn,
                    repaired=call.repaired,
                    question=question.to_dict(),
                )
            )
        return tuple(waiting)
