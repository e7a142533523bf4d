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
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

import anyio
import anyio.abc

from toolwire.agent.loop import (
    Broken,
    Deny,
    Fail,
    Finish,
    Interrupt,
    Replied,
    RetryTurn,
    Reuse,
    RunTools,
    denied_result,
    interrupted_result,
    next_step,
    settle,
)
from toolwire.cost import Cost, RunMeter
from toolwire.errors import ReadError, ToolwireError, TransportTimeout, UsageLimitExceeded
from toolwire.events import Event, StreamFailed, ToolCallReady
from toolwire.messages import AssistantMessage, Message, ToolResultMessage
from toolwire.observe import Observers
from toolwire.run import (
    AgentEvent,
    ModelRetrying,
    RunResult,
    ToolCallRecord,
    ToolExecutionFinished,
    ToolExecutionStarted,
    TurnFinished,
    TurnStarted,
)
from toolwire.stream.decoder import StreamDecoder
from toolwire.tools import (
    Approval,
    ApprovalCallback,
    ApprovalRequest,
    Toolbox,
    ToolResult,
    ask_approval,
    idempotency_key,
)
from toolwire.types import ChoiceResult, InvalidToolCall, StreamResult, ToolCall, Usage

if TYPE_CHECKING:
    from toolwire.http import HttpRequest, Transport
    from toolwire.journal import RecordedTurn, ResumePlan
    from toolwire.providers import Provider

__all__ = ["AgentSettings", "Emit", "RunDriver"]

Emit = Callable[[AgentEvent], None]
AnyCall = ToolCall | InvalidToolCall
Results = dict[str, tuple[ToolResult, bool]]
"""Tool results by call id, each with whether it ran eagerly."""


class AgentSettings(Protocol):
    """What a run needs of its :class:`~toolwire.Agent`.

    The Agent satisfies it as it is; a protocol, because the agent's module
    imports this one."""

    @property
    def provider(self) -> Provider: ...
    @property
    def transport(self) -> Transport | None: ...
    @property
    def toolbox(self) -> Toolbox: ...
    @property
    def model(self) -> str: ...
    @property
    def metadata(self) -> Mapping[str, Any]: ...
    @property
    def eager(self) -> bool: ...
    @property
    def max_turns(self) -> int: ...
    @property
    def stream_retries(self) -> int: ...
    def build_request(self, messages: Sequence[Message], turn: int) -> HttpRequest: ...


class RunDriver:
    """One run of an agent: its conversation, records and usage, carried to the end."""

    def __init__(
        self,
        agent: AgentSettings,
        run_id: str,
        messages: list[Message],
        observers: Observers,
        emit: Emit | None,
        emit_many: Callable[[list[Event]], None] | None,
        meter: RunMeter | None = None,
    ) -> None:
        """Prepare the run; :meth:`drive` carries it out. Its events go to
        ``emit`` (one at a time) and ``emit_many`` (a network read's decoded
        events at once); ``None`` when nobody reads them, and then they are
        not made at all. ``meter`` prices the run's requests and stops it at
        its usage limits (see :mod:`toolwire.cost`)."""
        self.agent = agent
        self.run_id = run_id
        self.messages = messages
        self.observe = observers
        self.emit = emit
        self.emit_many = emit_many
        self.records: list[ToolCallRecord] = []
        self.usage = Usage()
        self.turn = 0
        self.meter = meter
        self.turn_cost: Cost | None = None

    async def drive(self, plan: ResumePlan | None = None) -> RunResult:
        """Turn after turn until :func:`next_step` says finish."""
        settling: RecordedTurn | None = None
        if plan is not None:
            self.records = [
                ToolCallRecord(turn=r.turn, call=r.call, result=r.result, eager=r.eager)
                for r in plan.records
            ]
            self.usage = plan.usage
            if self.meter is not None:
                self.meter.resumed(plan.usage, plan.cost)
            settling = plan.response
            # Without a recorded answer, the last turn is requested again.
            self.turn = plan.turn if settling is not None else max(plan.turn - 1, 0)
        while True:
            recorded, settling = settling, None
            done: Results = {}
            if recorded is not None:
                choice, turn_usage = recorded.choice(), recorded.usage
                assistant = recorded.assistant
            else:
                self.turn += 1
                if self.emit is not None:
                    self.emit(TurnStarted(turn=self.turn))
                result, early = await self._model_turn()
                if result.usage is not None:
                    self.usage = self.usage + result.usage
                choice, turn_usage = result.choices[0], result.usage
                assistant = AssistantMessage.from_choice(choice)
                done = {call_id: (r, True) for call_id, r in early.items()}
            self.messages.append(assistant)
            step = next_step(
                Replied(choice, self.turn), max_turns=self.agent.max_turns, stream_retries=0
            )
            if isinstance(step, Finish):
                self._turn_finished(choice, turn_usage, 0)
                return RunResult(
                    output=choice.text if step.outcome == "answered" else "",
                    outcome=step.outcome,
                    messages=tuple(self.messages),
                    usage=self.usage,
                    tool_calls=tuple(self.records),
                    turns=self.turn,
                    run_id=self.run_id,
                    cost=self.meter.cost if self.meter is not None else None,
                )
            assert isinstance(step, RunTools)
            if self.meter is not None and recorded is None:
                self.meter.tools(len(step.calls))  # raises at the tool-call limit
            if recorded is not None:
                done = await self._settle(step.calls, recorded)
            await self._run_tools(step.calls, done)
            self._turn_finished(choice, turn_usage, len(step.calls))

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

    # -- the model ------------------------------------------------------------------

    async def _model_turn(self) -> tuple[StreamResult, dict[str, ToolResult]]:
        """One model request, sent again while a broken stream may be retried.

        Returns the decoded result and the results of tools run eagerly."""
        request = self.agent.build_request(self.messages, self.turn)
        observe = self.observe
        turn = self.turn
        attempt = 1
        meter = self.meter
        while True:
            if meter is not None:  # raises at the request or wall-time limit
                meter.request(len(request.content()) if meter.watching else 0)
            for hook in observe.model_request:
                await hook(self.run_id, turn, attempt, tuple(self.messages))
            started = time.monotonic()
            try:
                result, early = await self._stream_timed(request)
            except _TurnBroke as broke:
                await self._failed(attempt, broke.error, started)
                step = next_step(
                    Broken(broke.error, attempt),
                    max_turns=self.agent.max_turns,
                    stream_retries=self.agent.stream_retries,
                )
                if isinstance(step, Fail):
                    raise step.error from None
                assert isinstance(step, RetryTurn)
                if self.emit is not None:
                    self.emit(ModelRetrying(turn=turn, attempt=step.attempt, error=step.error))
                attempt = step.attempt
                continue
            except ToolwireError as error:
                if meter is not None and isinstance(error, UsageLimitExceeded):
                    # Cut by a limit: what the stream revealed is its usage.
                    await self._usage(attempt, meter.in_flight())
                await self._failed(attempt, error, started)
                raise
            await self._usage(attempt, result.usage)
            for hook in observe.model_response:
                await hook(self.run_id, turn, attempt, result, time.monotonic() - started)
            if meter is not None:
                meter.check()  # the final usage may cross a limit: no tool runs then
            return result, early

    async def _usage(self, attempt: int, usage: Usage | None) -> None:
        """Price a request's usage and tell the observers."""
        if self.meter is None:
            return
        self.turn_cost = cost = self.meter.response(usage)
        for hook in self.observe.model_usage:
            await hook(self.run_id, self.turn, attempt, usage, cost)

    async def _failed(self, attempt: int, error: ToolwireError, started: float) -> None:
        for hook in self.observe.model_failed:
            await hook(self.run_id, self.turn, attempt, error, time.monotonic() - started)

    async def _stream_timed(self, request: Any) -> tuple[StreamResult, dict[str, ToolResult]]:
        """:meth:`_stream_once` within the run's wall time left: a stream that
        stalls is cut when it runs out."""
        left = self.meter.time_left() if self.meter is not None else None
        if left is None:
            return await self._stream_once(request)
        with anyio.move_on_after(left):
            return await self._stream_once(request)
        assert self.meter is not None
        raise self.meter.wall_time_exceeded()

    async def _stream_once(self, request: Any) -> tuple[StreamResult, dict[str, ToolResult]]:
        decoder = StreamDecoder(self.agent.provider.dialect)
        early: dict[str, ToolResult] = {}
        if self.agent.eager:
            # Eager tools start while the stream is read, in this task group.
            async with anyio.create_task_group() as tg:
                failed, request_error = await self._read(request, decoder, tg, early)
                if failed is not None or request_error is not None:
                    # Nothing from a failed stream may run: cancel and discard.
                    tg.cancel_scope.cancel()
        else:
            failed, request_error = await self._read(request, decoder, None, early)
        # Raised outside the task group, so callers get the error itself,
        # not an exception group.
        if request_error is not None:
            raise request_error
        if failed is not None:
            raise _TurnBroke(failed)
        result = decoder.result()
        if result.error is not None:  # pragma: no cover - reported as StreamFailed above
            raise _TurnBroke(result.error)
        return result, early

    async def _read(
        self,
        request: Any,
        decoder: StreamDecoder,
        tg: anyio.abc.TaskGroup | None,
        early: dict[str, ToolResult],
    ) -> tuple[ToolwireError | None, ToolwireError | None]:
        """Send the request and decode its stream: why the stream failed, and
        why the request did (each ``None`` when it did not)."""
        agent = self.agent
        transport = agent.transport or agent.provider.transport
        failed: ToolwireError | None = None
        # Events go on when someone reads them or eager tools may start.
        listening = self.emit_many is not None or tg is not None
        meter = self.meter
        watching = meter is not None and meter.watching
        try:
            stream = transport.stream(request, parse_error=agent.provider.parse_error)
            async with stream as response:
                # From here on, a broken stream is a failed turn, which may be
                # sent again; errors before (connect, an HTTP status after the
                # transport's retries) end the run.
                try:
                    async for chunk in response.aiter_bytes():
                        events = decoder.feed(chunk)
                        if watching and events:
                            # A crossing raises here: the stream is closed and
                            # none of this read's calls is handed on.
                            meter.watch(events)  # type: ignore[union-attr]
                        if events and listening:
                            self._hand_on(events, tg, early)
                        if decoder.error is not None:  # its last event said so
                            failed = decoder.error
                            break
                except (ReadError, TransportTimeout) as exc:
                    failed = exc
                    if self.emit is not None:
                        self.emit(StreamFailed(error=exc))
        except ToolwireError as exc:
            return failed, exc
        if failed is None:
            events = decoder.close()
            if watching and events:
                try:
                    meter.watch(events)  # type: ignore[union-attr]
                except UsageLimitExceeded as exc:
                    return None, exc
            if events and listening:
                self._hand_on(events, tg, early)
            failed = decoder.error
        return failed, None

    def _hand_on(
        self, events: list[Event], tg: anyio.abc.TaskGroup | None, early: dict[str, ToolResult]
    ) -> None:
        """Hand a read's events on (as one batch); start eager tools (in
        ``tg``, given when the agent is eager). A stream that failed ends
        with its :class:`StreamFailed`: no call is ready after it."""
        if self.emit_many is not None:
            self.emit_many(events)
        if tg is None:
            return
        for event in events:
            if isinstance(event, ToolCallReady) and event.choice == 0:
                tool = self.agent.toolbox.get(event.call.name)
                if tool is not None and tool.read_only:
                    tg.start_soon(self._run_early, event.call, early)

    async def _run_early(self, call: ToolCall, early: dict[str, ToolResult]) -> None:
        ran = await self._execute([call], eager=True)
        early[call.id] = ran[call.id]

    # -- the tools ------------------------------------------------------------------

    async def _settle(self, calls: Sequence[AnyCall], recorded: RecordedTurn) -> Results:
        """The results a resumed turn already has: recorded outcomes, recorded
        denials, and interrupted calls that must not run again. The other
        calls (never started, or safe to repeat) are left to run."""
        done: Results = {}
        for call in calls:
            decision = settle(
                call,
                outcomes=recorded.outcomes,
                denied=recorded.denied,
                started=recorded.started,
                approved=recorded.approved,
                tool=self.agent.toolbox.get,
            )
            if isinstance(decision, Reuse):
                done[call.id] = (decision.result, decision.eager)
                continue
            if isinstance(decision, Deny):
                result = denied_result(call, decision.reason)
            elif isinstance(decision, Interrupt):
                result = interrupted_result(call)
            else:
                continue
            for hook in self.observe.tool_interrupted:
                await hook(self.run_id, self.turn, call, result)
            if self.emit is not None:
                self.emit(ToolExecutionFinished(turn=self.turn, call=call, result=result))
            done[call.id] = (result, False)
        return done

    async def _run_tools(self, calls: Sequence[AnyCall], done: Results) -> None:
        """Run the calls that have no result yet (run eagerly, or recorded by
        an earlier process) as one batch; record every result and feed it
        back in call order."""
        results = dict(done)
        pending = [call for call in calls if call.id not in done]
        if pending:
            ran = await self._execute(pending)
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
            for hook in observe.tools_started:
                await hook(run_id, turn, intents, eager=eager)
        if emit is not None:
            for call in calls:
                emit(ToolExecutionStarted(turn=turn, call=call, eager=eager))
        finished_hooks = observe.tool_finished

        async def finished(call: AnyCall, result: ToolResult) -> None:
            for hook in finished_hooks:
                await hook(run_id, turn, call, result, eager=eager)
            if emit is not None:
                emit(ToolExecutionFinished(turn=turn, call=call, result=result, eager=eager))

        agent = self.agent
        results = await agent.toolbox.execute(
            calls,
            run_id=run_id,
            metadata={**agent.metadata, "turn": turn, "model": agent.model},
            approve=self._approver(),
            on_result=finished if finished_hooks or emit is not None else None,
        )
        return {call.id: result for call, result in zip(calls, results, strict=True)}

    def _approver(self) -> ApprovalCallback | None:
        """The toolbox's approval callback, with each decision told to the
        observers (the journal records it) before the toolbox acts on it."""
        inner = self.agent.toolbox.approve
        hooks = self.observe.approval_decided
        if inner is None or not hooks:
            return inner
        run_id, turn = self.run_id, self.turn

        async def approve(request: ApprovalRequest) -> Approval:
            decision = await ask_approval(inner, request)
            for hook in hooks:
                await hook(run_id, turn, request.call_id, request.tool_name, decision)
            return decision

        return approve


class _TurnBroke(Exception):
    """Internal: a turn's stream failed after bytes were read."""

    def __init__(self, error: ToolwireError) -> None:
        super().__init__(error.message)
        self.error = error
