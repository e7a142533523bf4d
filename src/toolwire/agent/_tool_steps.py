"""The tools of a turn, carried out for a :class:`~toolwire.agent._driver.RunDriver`.

A :class:`ToolSteps` is the part of a run driver that settles a turn's
calls: the results a resumed turn already has, the answers to the calls the
provider asked about, and one batch through the toolbox (which alone decides
what is a duplicate and asks for approval), each result recorded in call
order. It owns the run's approvals: those given to a suspended run, and the
approver's failures of the turn. The driver owns the conversation and the
records, and adds to them what :meth:`ToolSteps.run_tools` returns.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING

from toolwire.agent._asked import answer_asked_calls, record_answers
from toolwire.agent._config import RunConfig
from toolwire.agent._resumed import Results, recorded_results
from toolwire.agent._sampling import RunSampler
from toolwire.agent._suspend import check_grants, run_approver
from toolwire.messages import AssistantMessage, ToolResultMessage
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
    Question,
    QuestionAnswer,
    Questions,
    ToolResult,
    asking,
    idempotency_key,
    sampling,
)
from toolwire.types import InvalidToolCall, ToolCall

if TYPE_CHECKING:
    from toolwire.journal import RecordedTurn

__all__ = ["AnyCall", "Emit", "ToolSteps", "result_message"]

Emit = Callable[[AgentEvent], None]
AnyCall = ToolCall | InvalidToolCall


class _Asked(Exception):
    """Calls of a batch asked a question nobody here could answer (an MCP
    server's elicitation): the run suspends on them, their outcomes not
    recorded."""

    def __init__(self, pending: tuple[PendingCall, ...]) -> None:
        super().__init__(f"{len(pending)} call(s) wait for an answer")
        self.pending = pending


class ToolSteps:
    """Runs the tools of one run's turns.

    Args:
        config: what the run takes from its agent (the toolbox among it).
        run_id: the run's id.
        observers: told of every intent and outcome.
        emit: takes the run's events, or ``None`` when nobody reads them.
    """

    def __init__(
        self, config: RunConfig, run_id: str, observers: Observers, emit: Emit | None
    ) -> None:
        self.config = config
        self.run_id = run_id
        self.observe = observers
        self.emit = emit
        self.granted: dict[str, str] = {}
        """Approvals given to the suspended run: argument digests by call id."""
        self.approval_failures: dict[str, ApprovalFailed] = {}
        """The approver's failures, by call id: the run ends with them."""
        self.answers: dict[str, dict[str, QuestionAnswer]] = {}
        """Answers given to the suspended run's questions, by call id and digest."""
        self.sampler: RunSampler | None = None
        """Serves the completions the run's tools ask of its model (set by the driver)."""

    async def recorded_results(
        self, calls: Sequence[AnyCall], recorded: RecordedTurn, turn: int
    ) -> Results:
        """The results a resumed turn already has (see :func:`recorded_results`);
        its grants become the run's."""
        self.granted = dict(recorded.grants)
        self.answers = dict(recorded.answers)
        check_grants(calls, self.granted)
        settled = await recorded_results(calls, recorded, self.config.toolbox, self.observe,
                                         run_id=self.run_id, turn=turn)  # fmt: skip
        if self.emit is not None:
            for call in calls:
                if call.id in settled and call.id not in recorded.outcomes:
                    self.emit(
                        ToolExecutionFinished(turn=turn, call=call, result=settled[call.id][0])
                    )
        return settled

    async def answer_asked(
        self, calls: Sequence[AnyCall], assistant: AssistantMessage, done: Results, turn: int
    ) -> None:
        """Answer the calls the provider asked about (MCP approvals, computer
        and shell calls no tool handles): see :mod:`toolwire.agent._asked`."""
        pending = [call for call in calls if call.id not in done]
        answers = await answer_asked_calls(
            pending,
            assistant,
            self.config.toolbox,
            approve=self.approver(turn),
            granted=self.granted,
            run_id=self.run_id,
            metadata={
                **self.config.metadata,
                "turn": turn,
                "model": self.config.request.model,
            },
        )
        answered = [call for call in pending if call.id in answers]
        await record_answers(self.observe, self.run_id, turn, answered, answers)
        for call in answered:
            result = answers[call.id]
            done[call.id] = (result, False)
            if self.emit is not None:
                self.emit(ToolExecutionFinished(turn=turn, call=call, result=result))

    async def run_tools(
        self, calls: Sequence[AnyCall], done: Results, turn: int
    ) -> list[ToolCallRecord]:
        """Run the calls that have no result yet (run eagerly, or recorded by
        an earlier process) as one batch: every call's record, in call order.

        Raises:
            _Asked: calls asked a question nobody here could answer (nothing
                is fed back: the run suspends on them).
        """
        results = dict(done)
        pending = [call for call in calls if call.id not in done]
        if pending:
            ran = await self.execute(pending, turn)
            results.update((call_id, (result, False)) for call_id, result in ran.items())
        records = []
        for call in calls:
            result, eager = results[call.id]
            records.append(ToolCallRecord(turn=turn, call=call, result=result, eager=eager))
        return records

    async def execute(
        self, calls: Sequence[AnyCall], turn: int, *, eager: bool = False
    ) -> dict[str, ToolResult]:
        """Run calls through the toolbox, which alone decides what is a
        duplicate and asks for approval: every intent is told to the observers
        before anything runs (so a duplicate folded onto another call is never
        run again on resume), and each outcome as soon as it is known."""
        run_id, observe, emit = self.run_id, self.observe, self.emit
        if observe.tools_started:
            # The keys the toolbox derives from the run id and the call ids.
            intents = [(call, idempotency_key(run_id, call.id)) for call in calls]
            for started in observe.tools_started:
                await started(run_id, turn, intents, eager=eager)
        if emit is not None:
            for call in calls:
                emit(ToolExecutionStarted(turn=turn, call=call, eager=eager))
        finished_hooks = observe.tool_finished
        # An eager call cannot suspend the run: a question it asks is declined;
        # it runs while the model streams: a completion it asks is refused.
        questions = None if eager else Questions(answers=self.answers)
        sampler = None if eager else self.sampler
        if questions is not None and observe.question_answered:
            questions.answered = self._answered(calls, turn)
        if sampler is not None:
            sampler.turn = turn

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
        sampling_token = sampling.set(sampler)
        try:
            results = await config.toolbox.execute(
                calls,
                run_id=run_id,
                metadata={**config.metadata, "turn": turn, "model": config.request.model},
                approve=self.approver(turn),
                on_result=finished if finished_hooks or emit is not None else None,
            )
        finally:
            sampling.reset(sampling_token)
            asking.reset(token)
        for failure in self.approval_failures.values():
            raise failure
        if questions is not None and questions.waiting:
            raise _Asked(asked_calls(calls, questions, turn))
        return {call.id: result for call, result in zip(calls, results, strict=True)}

    def _answered(
        self, calls: Sequence[AnyCall], turn: int
    ) -> Callable[[str, Question, QuestionAnswer], Awaitable[None]]:
        """Tells the observers of an answer given in process to a call's question."""
        names = {call.id: call.name for call in calls}

        async def answered(call_id: str, question: Question, answer: QuestionAnswer) -> None:
            self.answers.setdefault(call_id, {})[question.digest] = answer
            for told in self.observe.question_answered:
                await told(self.run_id, turn, call_id, names.get(call_id, ""), question, answer)

        return answered

    async def answered(self, settled: Sequence[tuple[AnyCall, ToolResult]], turn: int) -> None:
        """Tell the observers of calls answered without running anything (a
        typed run's refused final-result calls): intent and outcome, as for a
        call that ran, so the journal holds the turn's every result."""
        run_id, observe = self.run_id, self.observe
        intents = [(call, idempotency_key(run_id, call.id)) for call, _ in settled]
        for started in observe.tools_started:
            await started(run_id, turn, intents, eager=False)
        for call, result in settled:
            for hook in observe.tool_finished:
                await hook(run_id, turn, call, result, eager=False)

    def approver(self, turn: int) -> ApprovalCallback | None:
        """The toolbox's approval callback for this turn (see :func:`run_approver`)."""
        return run_approver(
            self.config.toolbox.approve,
            self.granted,
            self.observe,
            run_id=self.run_id,
            turn=turn,
            failures=self.approval_failures,
        )


def result_message(record: ToolCallRecord) -> ToolResultMessage:
    """The message that feeds a call's result back to the model."""
    call, result = record.call, record.result
    return ToolResultMessage(
        call_id=call.id,
        name=call.name,
        content=result.content,
        is_error=not result.ok,
        parts=result.parts,
    )


def asked_calls(
    calls: Sequence[AnyCall], questions: Questions, turn: int
) -> tuple[PendingCall, ...]:
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
                turn=turn,
                repaired=call.repaired,
                question=question.to_dict(),
            )
        )
    return tuple(waiting)
