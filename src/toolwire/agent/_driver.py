"""Carrying out one agent run: the async side of :mod:`toolwire.agent.loop`'s decisions.

A :class:`RunDriver` lives for one run (or one resumption). It streams each
model turn through the decoder, tells the observers of every step (awaited,
so the journal is written before the step happens), asks
:func:`~toolwire.agent.loop.next_step` what to do, and does it: run the tools as
one batch through the toolbox, retry a broken turn, or finish.

Eager tools: with ``eager=True`` a ``read_only`` tool starts as soon as its
call is provably complete, while the model is still streaming, in a task
group owned by the turn; if the stream then fails, the early work is
cancelled and discarded, exactly as if it had never started.

Its neighbours hold the rest: :mod:`~toolwire.agent._config` what a run
takes from its agent, :mod:`~toolwire.agent._suspend` when a turn waits for
an approval or a result from outside (and the approver of a turn),
:mod:`~toolwire.agent._asked` the calls the provider asks about,
:mod:`~toolwire.agent._tool_steps` how the tools of a turn are run,
:mod:`~toolwire.agent._resumed` what a resumed turn finds already settled.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from decimal import Decimal
from typing import TYPE_CHECKING, Any

import anyio
import anyio.abc
from typing_extensions import assert_never

from toolwire.agent._asked import asked_approvals, asked_kinds, routed_calls
from toolwire.agent._config import RunConfig
from toolwire.agent._resumed import Results
from toolwire.agent._sampling import RunSampler
from toolwire.agent._suspend import waiting_calls
from toolwire.agent._tool_steps import Emit, ToolSteps, _Asked, result_message
from toolwire.agent._typed import Accepted, OutputStream, Refused, judge, refused_result
from toolwire.agent.loop import (
    AnyCall,
    Broken,
    ContinueTurn,
    Fail,
    Finish,
    Replied,
    RetryTurn,
    RunTools,
    next_step,
)
from toolwire.cost import Cost
from toolwire.errors import (
    OutputInvalid,
    ReadError,
    ToolwireError,
    TransportTimeout,
    UsageLimitExceeded,
)
from toolwire.events import Event, StreamFailed, ToolCallReady
from toolwire.messages import AssistantMessage, Message, UserMessage
from toolwire.observe import Observers
from toolwire.providers import HOLD, ProviderStream
from toolwire.run import (
    ModelRetrying,
    Outcome,
    PendingCall,
    RunResult,
    ToolCallRecord,
    TurnFinished,
    TurnStarted,
)
from toolwire.tools import ToolResult
from toolwire.types import ChoiceResult, StreamResult, ToolCall, Usage

_NO_OUTPUT: Any = object()
"""A typed run's output when it ended without one."""

if TYPE_CHECKING:
    from toolwire.http import HttpRequest
    from toolwire.journal import RecordedTurn, ResumePlan

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
        self.turn_cost: Cost | None = None
        self.tools = ToolSteps(config, run_id, observers, emit)
        """Runs the tools of each turn, and holds the run's approvals."""
        self.tools.sampler = RunSampler(config, self.meter, observers, run_id, self._sampled)
        self.kept_stream: str | None = None
        """A response the provider keeps for the turn to resume: read again
        by the next request instead of asking again."""
        self.refused = 0
        """How many answers of a typed run failed validation."""
        self.output_stream: OutputStream | None = None
        """The typed output of the turn streaming, followed when someone listens."""

    async def drive(self, plan: ResumePlan | None = None) -> RunResult[Any]:
        """Turn after turn until :func:`next_step` says finish."""
        settling = self._resume(plan) if plan is not None else None
        while True:
            recorded, settling = settling, None
            choice, turn_usage, assistant, done = await self._reply(recorded)
            self.messages.append(assistant)
            if self.config.output is not None:
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
        self.kept_stream = plan.streaming if settling is None else None
        return settling

    async def _reply(
        self, recorded: RecordedTurn | None
    ) -> tuple[ChoiceResult, Usage | None, AssistantMessage, Results]:
        """The model's reply of this turn (recorded, or asked for now), its
        usage, the assistant message, and the results of calls that ran while
        it streamed."""
        if recorded is not None:
            self.turn_cost = None  # priced by the process that recorded it
            return recorded.choice(), recorded.usage, recorded.assistant, {}
        self.turn += 1
        if self.emit is not None:
            self.emit(TurnStarted(turn=self.turn))
        await self._refresh_tools()
        result, early = await self._model_turn()
        if result.usage is not None:
            self.usage = self.usage + result.usage
        choice = result.choices[0]
        done: Results = {call_id: (r, True) for call_id, r in early.items()}
        return choice, result.usage, AssistantMessage.from_choice(choice), done

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
        return RunResult(
            output=output,
            outcome=outcome,
            messages=tuple(self.messages),
            usage=self.usage,
            tool_calls=tuple(self.records),
            turns=self.turn,
            run_id=self.run_id,
            cost=self.meter.cost,
        )

    def _suspended(self, waiting: tuple[PendingCall, ...]) -> RunResult[Any]:
        """The run waits for answers from outside: nothing of the turn ran
        (its cost so far is the whole run's, every process counted)."""
        return RunResult(
            output="" if self.config.output is None else None,
            outcome="suspended",
            messages=tuple(self.messages),
            usage=self.usage,
            tool_calls=tuple(self.records),
            turns=self.turn,
            run_id=self.run_id,
            cost=self.meter.cost,
            pending=waiting,
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
                cost=self.turn_cost,
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

    # -- the model ------------------------------------------------------------------

    async def _model_turn(self) -> tuple[StreamResult, dict[str, ToolResult]]:
        """One model request, sent again while a broken stream may be retried.

        Returns the decoded result and the results of tools run eagerly."""
        request = self.config.build_request(self.messages, self.turn)
        observe = self.observe
        turn = self.turn
        attempt = 1
        meter = self.meter
        self.turn_cost = Cost(total=Decimal(0))
        while True:
            # Raises at the request or wall-time limit. The body's size (an
            # estimate of its input) is measured only if an estimate needs it.
            meter.request(lambda: len(request.content()))
            for requested in observe.model_request:
                await requested(self.run_id, turn, attempt, tuple(self.messages))
            started = time.monotonic()
            try:
                left = meter.time_left()
                if left is None:
                    result, early = await self._stream_once(request, attempt)
                else:
                    result, early = await self._stream_timed(request, attempt, left)
            except _TurnBroke as broke:
                # A broken stream is billed too: what it revealed is its
                # usage, priced and counted toward the limits (the next
                # attempt's check may stop the run).
                await self._usage(attempt, meter.in_flight())
                await self._failed(attempt, broke.error, started)
                step = next_step(
                    Broken(broke.error, attempt),
                    max_turns=self.config.max_turns,
                    stream_retries=self.config.stream_retries,
                )
                match step:
                    case Fail(error=error):
                        raise error from None
                    case RetryTurn(attempt=attempt, error=error):  # the next attempt's number
                        if self.emit is not None:
                            self.emit(ModelRetrying(turn=turn, attempt=attempt, error=error))
                        continue
                    case _:
                        assert_never(step)
            except ToolwireError as error:
                if isinstance(error, UsageLimitExceeded):
                    # Cut by a limit: what the stream revealed is its usage.
                    await self._usage(attempt, meter.in_flight())
                await self._failed(attempt, error, started)
                raise
            await self._usage(attempt, result.usage)
            for responded in observe.model_response:
                await responded(self.run_id, turn, attempt, result, time.monotonic() - started)
            meter.check()  # the final usage may cross a limit: no tool runs then
            return result, early

    async def _usage(self, attempt: int, usage: Usage | None) -> None:
        """Price a request's usage (added to the turn's cost) and tell the observers."""
        cost = self.meter.response(usage)
        total = self.turn_cost
        self.turn_cost = None if total is None or cost is None else total + cost
        for used in self.observe.model_usage:
            await used(self.run_id, self.turn, attempt, usage, cost)

    async def _failed(self, attempt: int, error: ToolwireError, started: float) -> None:
        for failed in self.observe.model_failed:
            await failed(self.run_id, self.turn, attempt, error, time.monotonic() - started)

    async def _stream_timed(
        self, request: HttpRequest, attempt: int, left: float
    ) -> tuple[StreamResult, dict[str, ToolResult]]:
        """:meth:`_stream_once` within the run's wall time left (``left``
        seconds): a stream that stalls is cut when it runs out."""
        with anyio.move_on_after(left):
            return await self._stream_once(request, attempt)
        raise self.meter.wall_time_exceeded()

    async def _stream_once(
        self, request: HttpRequest, attempt: int
    ) -> tuple[StreamResult, dict[str, ToolResult]]:
        config = self.config
        meter = self.meter
        kept, self.kept_stream = self.kept_stream, None
        source = config.provider.reader(
            request,
            transport=config.transport,
            # A crossing raises on the read that made it: the stream is closed
            # and none of that read's calls is handed on.
            watch=meter.watch if meter.watching else None,
            kept_stream=kept,
            # When nobody takes the events as they come (no listener, no eager
            # tool, no limit to stop at), the body is decoded in larger pieces.
            hold=0 if self.emit_many is not None or config.eager or meter.checking else HOLD,
        )
        early: dict[str, ToolResult] = {}
        if config.output is not None and self.emit is not None:
            self.output_stream = OutputStream(
                config.output, config.output_mode, self.turn, build=config.partial_output
            )
        if config.eager:
            # Eager tools start while the stream is read, in this task group.
            async with anyio.create_task_group() as tg:
                failed, request_error = await self._read(source, tg, early, attempt)
                if failed is not None or request_error is not None:
                    # Nothing from a failed stream may run: cancel and discard.
                    tg.cancel_scope.cancel()
        else:
            failed, request_error = await self._read(source, None, early, attempt)
        for tried in source.tried:  # a fallback chain's providers, each in turn
            for told in self.observe.model_attempt:
                await told(self.run_id, self.turn, attempt, tried)
        # Raised outside the task group, so callers get the error itself,
        # not an exception group.
        if request_error is not None:
            raise request_error
        if failed is not None:
            raise _TurnBroke(failed)
        return source.decoder.result(), early

    async def _read(
        self,
        source: ProviderStream,
        tg: anyio.abc.TaskGroup | None,
        early: dict[str, ToolResult],
        attempt: int,
    ) -> tuple[ToolwireError | None, ToolwireError | None]:
        """Send the request and decode its stream: why the stream failed, and
        why the request did (each ``None`` when it did not).

        Once the body is being read, a broken stream is a failed turn, which
        may be sent again; errors before (connect, an HTTP status after the
        transport's retries) end the run."""
        # Events go on when someone reads them or eager tools may start.
        listening = self.emit_many is not None or tg is not None
        # Told once per request, of a stream the provider keeps (none else).
        streaming = self.observe.model_streaming if source.resumable else ()
        try:
            async with contextlib.aclosing(source.reads()) as reads:
                async for events in reads:
                    if listening:
                        self._hand_on(events, tg, early)
                    if streaming and (response_id := source.resumable_id) is not None:
                        # Once per request: where a resumed run finds it again.
                        for told in streaming:
                            await told(self.run_id, self.turn, attempt, response_id)
                        streaming = ()
        except (ReadError, TransportTimeout) as exc:
            if not source.reading:
                return None, exc
            if self.emit is not None:
                self.emit(StreamFailed(error=exc))
            return exc, None
        except ToolwireError as exc:
            return None, exc
        return source.decoder.error, None

    def _hand_on(
        self, events: list[Event], tg: anyio.abc.TaskGroup | None, early: dict[str, ToolResult]
    ) -> None:
        """Hand a read's events on (as one batch); start eager tools (in
        ``tg``, given when the agent is eager). A stream that failed ends
        with its :class:`StreamFailed`: no call is ready after it."""
        if self.emit_many is not None:
            self.emit_many(events)
        if self.output_stream is not None and self.emit is not None:
            for delta in self.output_stream.deltas(events):
                self.emit(delta)
        if tg is None:
            return
        for event in events:
            if isinstance(event, ToolCallReady) and event.choice == 0:
                tool = self.config.toolbox.get(event.call.name)
                if tool is not None and tool.read_only:
                    tg.start_soon(self._run_early, event.call, early)

    async def _run_early(self, call: ToolCall, early: dict[str, ToolResult]) -> None:
        ran = await self.tools.execute([call], self.turn, eager=True)
        early[call.id] = ran[call.id]


class _TurnBroke(Exception):
    """Internal: a turn's stream failed after bytes were read."""

    def __init__(self, error: ToolwireError) -> None:
        super().__init__(error.message)
        self.error = error
