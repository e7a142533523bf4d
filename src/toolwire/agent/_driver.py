"""Carrying out one agent run: the async side of :mod:`toolwire.agent.loop`'s decisions.

A :class:`RunDriver` lives for one run (or one resumption). It streams each
model turn through the decoder, tells the observers of every step (awaited,
so the journal is written before the step happens), asks
:func:`~toolwire.agent.loop.next_step` what to do, and does it: run the tools as
one batch through the toolbox, retry a broken turn, or finish.

Calls that start while the model is still streaming (eager tools, and the
calls the provider marks asynchronous) are :mod:`~toolwire.agent._early`'s.

Its neighbours hold the rest: :mod:`~toolwire.agent._config` what a run
takes from its agent, :mod:`~toolwire.agent._suspend` when a turn waits for
an approval or a result from outside (and the approver of a turn),
:mod:`~toolwire.agent._asked` the calls the provider asks about,
:mod:`~toolwire.agent._tool_steps` how the tools of a turn are run,
:mod:`~toolwire.agent._resumed` what a resumed turn finds already settled.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from typing_extensions import assert_never

from toolwire.agent._asked import asked_approvals, asked_kinds, routed_calls
from toolwire.agent._config import RunConfig
from toolwire.agent._early import EarlyCalls
from toolwire.agent._model_turns import ModelTurns
from toolwire.agent._resumed import Results
from toolwire.agent._sampling import RunSampler
from toolwire.agent._steering import MAX_SUCCESSORS, SteerInbox, owed_answers
from toolwire.agent._suspend import waiting_calls
from toolwire.agent._tool_steps import Emit, ToolSteps, _Asked, result_message
from toolwire.agent._typed import Accepted, Refused, judge, refused_result
from toolwire.agent.loop import (
    AnyCall,
    ContinueTurn,
    Finish,
    Replied,
    RunTools,
    next_step,
)
from toolwire.errors import (
    OutputInvalid,
)
from toolwire.events import Event
from toolwire.messages import AssistantMessage, Message, UserMessage
from toolwire.observe import Observers
from toolwire.run import (
    Outcome,
    PendingCall,
    RunResult,
    Steer,
    SteerHow,
    ToolCallRecord,
    TurnFinished,
    TurnStarted,
    TurnSteered,
)
from toolwire.types import ChoiceResult, Usage

_NO_OUTPUT: Any = object()
"""A typed run's output when it ended without one."""

if TYPE_CHECKING:
    from toolwire.journal import RecordedTurn, ResumePlan, SteerApplied

__all__ = ["Emit", "RunConfig", "RunDriver"]


class RunDriver:
    """One run of an agent: its conversation, records and usage, carried to the end."""

    def __init__(
        self,
        config: RunConfig,
        run_id: str,
        messages: list[Message],
        observers: Observers,
        emit: Emit | None,
        emit_many: Callable[[list[Event]], None] | None,
        inbox: SteerInbox | None = None,
    ) -> None:
        """Prepare the run; :meth:`drive` carries it out. Its events go to
        ``emit`` (one at a time) and ``emit_many`` (a network read's decoded
        events at once); ``None`` when nobody reads them, and then they are
        not made at all. The run's :class:`~toolwire.cost.RunMeter` prices its
        requests and stops it at its usage limits: it is consulted before each
        request, on each network read, after each answer and before each batch
        of tools."""
        self.config = config
        self.run_id = run_id
        self.messages = messages
        self.observe = observers
        self.emit = emit
        self.emit_many = emit_many
        self.records: list[ToolCallRecord] = []
        self.usage = Usage()
        self.turn = 0
        self.meter = config.meter()
        self.tools = ToolSteps(config, run_id, observers, emit)
        """Runs the tools of each turn, and holds the run's approvals."""
        self.tools.sampler = RunSampler(config, self.meter, observers, run_id, self._sampled)
        self.early = EarlyCalls(config, run_id, observers, self.tools, lambda: self.turn)
        """The calls that start while the model streams."""
        self.seeded = False
        """Whether the turn requested next is a resumed one's, its early calls
        seeded from the journal."""
        self.refused = 0
        """How many answers of a typed run failed validation."""
        self.inbox = inbox if inbox is not None else SteerInbox()
        """The steers given to the run, waiting for a safe point (see
        :mod:`~toolwire.agent._steering`)."""
        self.model = ModelTurns(self)
        """The run's model requests (what they leave behind: the turn's cost,
        a kept stream, whether a steer cut the last response)."""
        self.successor = False
        """Whether the next request is a steered response's successor (the same turn)."""
        self.successors = 0
        """How many successors the turn had."""
        self.replayed: tuple[SteerApplied, ...] = ()
        """Steers a resumed turn's journal holds that no request carried yet."""

    async def drive(self, plan: ResumePlan | None = None) -> RunResult[Any]:
        """Turn after turn until :func:`next_step` says finish."""
        settling = self._resume(plan) if plan is not None else None
        while True:
            recorded, settling = settling, None
            choice, turn_usage, assistant, done = await self._reply(recorded)
            self.messages.append(assistant)
            steered = choice.finish_reason == "steered"
            if self.config.output is not None and not steered:
                verdict = judge(self.config.output, self.config.output_mode, choice)
                if isinstance(verdict, Accepted):
                    self._turn_finished(choice, turn_usage, 0)
                    return self._finished(choice, "answered", verdict.value)
                if isinstance(verdict, Refused):
                    self._refuse(verdict)
                    if not verdict.calls:
                        self._turn_finished(choice, turn_usage, 0)
                        if self.turn >= self.config.max_turns:
                            return self._finished(choice, "max_turns")
                        self.messages.append(UserMessage(verdict.failure.feedback()))
                        continue
                    answered = [(c, refused_result(c, f)) for c, f in verdict.calls]
                    if recorded is None:  # else the journal holds them already
                        await self.tools.answered(answered, self.turn)
                    done = {**done, **{c.id: (r, False) for c, r in answered}}
            step = next_step(
                Replied(choice, self.turn), max_turns=self.config.max_turns, stream_retries=0
            )
            match step:
                case Finish(outcome="answered") if self.inbox or self.replayed:
                    # A steer came after the answer ended: the next turn says it.
                    self._turn_finished(choice, turn_usage, 0)
                    if self.turn >= self.config.max_turns:
                        return self._finished(choice, "max_turns")
                case Finish(outcome=outcome):
                    self._turn_finished(choice, turn_usage, 0)
                    return self._finished(choice, outcome)
                case RunTools(calls=calls):
                    if recorded is not None:
                        done = await self.tools.recorded_results(calls, recorded, self.turn)
                    else:
                        self.meter.tools(len(calls))  # raises at the tool-call limit
                    waiting = await self._tools_turn(calls, assistant, done)
                    self._turn_finished(choice, turn_usage, len(calls))
                    if waiting:
                        return self._suspended(waiting)
                    earlier = [r for r in self.records if r.turn != self.turn]
                    turn_records = [r for r in self.records if r.turn == self.turn]
                    self.messages += owed_answers(assistant, turn_records, earlier)
                case ContinueTurn() if steered:
                    await self._steered(recorded)
                case ContinueTurn():
                    self._turn_finished(choice, turn_usage, 0)
                case _:
                    assert_never(step)

    def _sampled(self, usage: Usage) -> None:
        """A completion a tool asked of the run's model used ``usage``."""
        self.usage = self.usage + usage

    def _resume(self, plan: ResumePlan) -> RecordedTurn | None:
        """Take up a journaled run where it stopped: the recorded answer of
        its last turn, when there is one, to settle first."""
        self.records = [
            ToolCallRecord(turn=r.turn, call=r.call, result=r.result, eager=r.eager)
            for r in plan.records
        ]
        self.usage = plan.usage
        self.meter.resumed(plan.totals)
        settling = plan.response
        # Without a recorded answer, the last turn is requested again
        # (or read again, when the provider keeps the response).
        self.turn = plan.turn if settling is not None else max(plan.turn - 1, 0)
        self.model.kept_stream = plan.streaming if settling is None else None
        if settling is None:  # what the turn's earlier attempts ran asynchronously
            self.early.outcomes.update(plan.asynchronous)
            self.early.started.update(plan.asynchronous_started)
            self.seeded = True
        return settling

    async def _reply(
        self, recorded: RecordedTurn | None
    ) -> tuple[ChoiceResult, Usage | None, AssistantMessage, Results]:
        """The model's reply of this turn (recorded, or asked for now), its
        usage, the assistant message, and the results of calls that ran while
        it streamed."""
        if recorded is not None:
            self.model.turn_cost = None  # priced by the process that recorded it
            self.replayed = recorded.steers
            return recorded.choice(), recorded.usage, recorded.assistant, {}
        if self.successor:
            self.successors += 1
        else:
            await self._pending_steers()
            self.turn += 1
            self.successors = 0
            if self.seeded:  # the first request of a resumed turn
                self.seeded = False
            else:
                self.early.new_turn()
            if self.emit is not None:
                self.emit(TurnStarted(turn=self.turn))
        await self._refresh_tools()
        result, early = await self.model.request(successor=self.successor)
        self.successor = False
        if result.usage is not None:
            self.usage = self.usage + result.usage
        choice = result.choices[0]
        done: Results = {call_id: (r, True) for call_id, r in early.items()}
        return choice, result.usage, AssistantMessage.from_choice(choice), done

    async def _steered(self, recorded: RecordedTurn | None) -> None:
        """A steered response: its successor continues the turn (up to
        ``MAX_SUCCESSORS`` of them), each steer's text said after it."""
        if recorded is not None:  # resumed: the journal holds its steers
            steers, how = self._replayed_steers()
            told = True
        else:
            committed = self.model.take_committed()
            socket = self.model.socket
            if committed or (socket is not None and socket.successor_started):
                # The provider's successor carries what it took; steers given
                # since wait for it to stream.
                steers, how, told = committed, "provider", False
            else:
                steers, how = self.inbox.take(), "cut" if self.model.cut else "provider"
                told = False
        await self._said(TurnSteered(turn=self.turn, steers=steers, how=how), told=told)
        self.successor = self.successors < MAX_SUCCESSORS

    async def _pending_steers(self) -> None:
        """Steers that waited for the last turn's calls: said before the next turn."""
        if self.replayed:
            steers, _ = self._replayed_steers()
            await self._said(TurnSteered(turn=self.turn, steers=steers, how="pending"), told=True)
        elif self.inbox:
            event = TurnSteered(turn=self.turn, steers=self.inbox.take(), how="pending")
            await self._said(event, told=False)

    def _replayed_steers(self) -> tuple[tuple[Steer, ...], SteerHow]:
        records, self.replayed = self.replayed, ()
        steers = tuple(
            Steer(steer_id=r.steer_id or "", text=r.text) for r in records if r.text is not None
        )
        said = "cut" if steers else "provider"  # a record without its "how": as it says
        how = next((r.how for r in records if r.how in ("cut", "provider", "pending")), said)
        return steers, how  # type: ignore[return-value]

    async def _said(self, event: TurnSteered, *, told: bool) -> None:
        """Tell of the steers (the journal first, unless it holds them) and say them."""
        if not told:
            for steered in self.observe.turn_steered:
                await steered(self.run_id, self.turn, event)
        if self.emit is not None:
            self.emit(event)
        self.messages += [UserMessage(s.text) for s in event.steers]

    async def _tools_turn(
        self, calls: tuple[AnyCall, ...], assistant: AssistantMessage, done: Results
    ) -> tuple[PendingCall, ...]:
        """Answer what the provider asks, then run the calls, unless some wait
        for an answer from outside: those (nothing ran)."""
        # Most turns hold no call the provider asks about: nothing to answer.
        asked: frozenset[str] = frozenset()
        if asked_kinds(assistant):
            await self.tools.answer_asked(calls, assistant, done, self.turn)
            asked = asked_approvals(assistant)
            calls = routed_calls(calls, assistant, self.config.toolbox)
        waiting = waiting_calls(
            calls,
            settled=done,
            granted=self.tools.granted,
            toolbox=self.config.toolbox,
            turn=self.turn,
            asked=asked,
        )
        if not waiting:
            try:
                records = await self.tools.run_tools(calls, done, self.turn)
            except _Asked as asked:
                return asked.pending
            self.records += records
            self.messages += map(result_message, records)
        return waiting

    def _refuse(self, verdict: Refused) -> None:
        """Count a refused answer; past ``output_retries``, end the run.

        Raises:
            OutputInvalid: no retry is left.
        """
        self.refused += 1
        if self.refused <= self.config.output_retries:
            return
        failure = verdict.failure
        raise OutputInvalid(
            f"the model's output did not validate after {self.refused} answer(s): "
            + failure.feedback(),
            raw=failure.raw,
            errors=failure.errors,
            attempts=self.refused,
        )

    def _finished(
        self, choice: ChoiceResult, outcome: Outcome, output: Any = _NO_OUTPUT
    ) -> RunResult[Any]:
        if output is _NO_OUTPUT:
            text = self.config.output is None and outcome == "answered"
            output = choice.text if text else "" if self.config.output is None else None
        return self._result(outcome, output)

    def _suspended(self, waiting: tuple[PendingCall, ...]) -> RunResult[Any]:
        """The run waits for answers from outside: nothing of the turn ran
        (its cost so far is the whole run's, every process counted)."""
        output = "" if self.config.output is None else None
        return self._result("suspended", output, waiting)

    def _result(
        self, outcome: Outcome, output: Any, pending: tuple[PendingCall, ...] = ()
    ) -> RunResult[Any]:
        return RunResult(
            output=output,
            outcome=outcome,
            messages=tuple(self.messages),
            usage=self.usage,
            tool_calls=tuple(self.records),
            turns=self.turn,
            run_id=self.run_id,
            cost=self.meter.cost,
            pending=pending,
        )

    def _turn_finished(self, choice: ChoiceResult, usage: Usage | None, calls: int) -> None:
        if self.emit is None:
            return
        self.emit(
            TurnFinished(
                turn=self.turn,
                finish_reason=choice.finish_reason,
                usage=usage,
                tool_calls=calls,
                cost=self.model.turn_cost,
            )
        )

    async def _refresh_tools(self) -> None:
        """Take in the tool lists that changed (an MCP server's), so that this
        turn's request offers the tools as they are now; each change journaled."""
        changes = await self.config.toolbox.refresh()
        if not changes:
            return
        self.config = self.config.with_toolbox_schemas()
        for change in (c for c in changes if c.added or c.removed):
            for told in self.observe.tools_changed:
                await told(self.run_id, self.turn, change)
