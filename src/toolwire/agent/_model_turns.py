"""A run's model turns: one request, streamed, decoded and sent again while
a broken stream may be retried (a part of
:class:`~toolwire.agent._driver.RunDriver`, holding its own state).

Calls that start while the model is still streaming (eager tools, and the
calls the provider marks asynchronous) are :mod:`~toolwire.agent._early`'s;
a steer that arrives while a turn streams is :mod:`~toolwire.agent._steering`'s.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import AsyncIterator, Callable
from decimal import Decimal
from typing import TYPE_CHECKING, Protocol

import anyio
import anyio.abc
from typing_extensions import assert_never

from toolwire.agent._config import RunConfig
from toolwire.agent._early import EarlyCalls
from toolwire.agent._steering import SteerInbox, safe_point, steered_result
from toolwire.agent._typed import OutputStream
from toolwire.agent.loop import Broken, Fail, RetryTurn, next_step
from toolwire.cost import Cost, RunMeter
from toolwire.errors import ReadError, ToolwireError, TransportTimeout, UsageLimitExceeded
from toolwire.events import Event, StreamFailed
from toolwire.messages import Message
from toolwire.observe import Observers
from toolwire.providers import HOLD, ProviderStream, SocketTransport
from toolwire.run import AgentEvent, ModelRetrying, Steer
from toolwire.tools import ToolResult
from toolwire.types import StreamResult, Usage

if TYPE_CHECKING:
    from toolwire.http import HttpRequest

__all__ = ["ModelTurns", "RunState"]

_STEER_POLL = 0.01
"""Seconds between two tries to send a steer given before the response began."""


class RunState(Protocol):
    """What the model turns read of their run (its driver)."""

    config: RunConfig
    run_id: str
    messages: list[Message]
    observe: Observers
    emit: Callable[[AgentEvent], None] | None
    emit_many: Callable[[list[Event]], None] | None
    turn: int
    meter: RunMeter
    early: EarlyCalls
    inbox: SteerInbox


class ModelTurns:
    """The model requests of a run: a part of its driver, reading the run's
    state (:class:`RunState`) and owning what a request leaves behind."""

    def __init__(self, run: RunState) -> None:
        self.run = run
        self.turn_cost: Cost | None = None
        """What the turn's requests cost so far (``None``: not priced)."""
        self.kept_stream: str | None = None
        """A response the provider keeps for the turn to resume: read again
        by the next request instead of asking again."""
        self.output_stream: OutputStream | None = None
        """The typed output of the turn streaming, followed when someone listens."""
        self.cut = False
        """Whether the last response was ended for a steer (see
        :mod:`~toolwire.agent._steering`)."""
        self.sent: dict[int, tuple[Steer, ...]] = {}
        """Steers sent on the run's socket to the response streaming, by batch."""
        self.committed: tuple[Steer, ...] = ()
        """Steers the provider took for the successor it started itself."""

    @property
    def socket(self) -> SocketTransport | None:
        """The run's WebSocket transport, when it has one."""
        transport = self.run.config.transport
        return transport if isinstance(transport, SocketTransport) else None

    def take_committed(self) -> tuple[Steer, ...]:
        """The steers the provider's own successor carries (each told once)."""
        committed, self.committed = self.committed, ()
        return committed

    async def request(self, *, successor: bool) -> tuple[StreamResult, dict[str, ToolResult]]:
        """One model request, sent again while a broken stream may be retried
        (``successor``: a steered answer's, whose cost adds to its turn's).

        Returns the decoded result and the results of tools run eagerly."""
        request = self.run.config.build_request(self.run.messages, self.run.turn)
        observe = self.run.observe
        turn = self.run.turn
        attempt = 1
        meter = self.run.meter
        self.cut = False
        if not successor:  # a successor's cost adds to its turn's
            self.turn_cost = Cost(total=Decimal(0))
        while True:
            # Raises at the request or wall-time limit. The body's size (an
            # estimate of its input) is measured only if an estimate needs it.
            meter.request(lambda: len(request.content()))
            for requested in observe.model_request:
                await requested(self.run.run_id, turn, attempt, tuple(self.run.messages))
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
                    max_turns=self.run.config.max_turns,
                    stream_retries=self.run.config.stream_retries,
                )
                match step:
                    case Fail(error=error):
                        raise error from None
                    case RetryTurn(attempt=attempt, error=error):  # the next attempt's number
                        if self.run.emit is not None:
                            self.run.emit(ModelRetrying(turn=turn, attempt=attempt, error=error))
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
                await responded(self.run.run_id, turn, attempt, result, time.monotonic() - started)
            meter.check()  # the final usage may cross a limit: no tool runs then
            return result, early

    async def _usage(self, attempt: int, usage: Usage | None) -> None:
        """Price a request's usage (added to the turn's cost) and tell the observers."""
        cost = self.run.meter.response(usage)
        total = self.turn_cost
        self.turn_cost = None if total is None or cost is None else total + cost
        for used in self.run.observe.model_usage:
            await used(self.run.run_id, self.run.turn, attempt, usage, cost)

    async def _failed(self, attempt: int, error: ToolwireError, started: float) -> None:
        for failed in self.run.observe.model_failed:
            await failed(self.run.run_id, self.run.turn, attempt, error, time.monotonic() - started)

    async def _stream_timed(
        self, request: HttpRequest, attempt: int, left: float
    ) -> tuple[StreamResult, dict[str, ToolResult]]:
        """:meth:`_stream_once` within the run's wall time left (``left``
        seconds): a stream that stalls is cut when it runs out."""
        with anyio.move_on_after(left):
            return await self._stream_once(request, attempt)
        raise self.run.meter.wall_time_exceeded()

    async def _stream_once(
        self, request: HttpRequest, attempt: int
    ) -> tuple[StreamResult, dict[str, ToolResult]]:
        config = self.run.config
        meter = self.run.meter
        taken = self.run.emit_many is not None or self.run.early.wanted or meter.checking
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
            hold=0 if taken else HOLD,
        )
        early: dict[str, ToolResult] = {}
        if config.output is not None and self.run.emit is not None:
            self.output_stream = OutputStream(
                config.output, config.output_mode, self.run.turn, build=config.partial_output
            )
        # Asynchronous calls start while the stream is read; a failed stream
        # waits for them, and their outcomes stand for the next attempt.
        async with self.run.early.group() as calls, self._steering():
            if config.eager:
                # Eager tools start while the stream is read, in this task group.
                async with anyio.create_task_group() as tg:
                    failed, request_error = await self._read(source, (tg, calls), early, attempt)
                    if failed is not None or request_error is not None:
                        # Nothing eager from a failed stream may run: cancel and discard.
                        tg.cancel_scope.cancel()
            else:
                failed, request_error = await self._read(source, (None, calls), early, attempt)
        if failed is not None or request_error is not None:
            self.run.early.kept(early)
        for tried in source.tried:  # a fallback chain's providers, each in turn
            for told in self.run.observe.model_attempt:
                await told(self.run.run_id, self.run.turn, attempt, tried)
        # Raised outside the task group, so callers get the error itself,
        # not an exception group.
        if request_error is not None:
            raise request_error
        if failed is not None:
            raise _TurnBroke(failed)
        result = source.decoder.result()
        if self.sent and self._settle_sent() and result.choices[0].finish_reason != "steered":
            result = steered_result(result)  # the provider's successor follows
        if self.run.inbox and result.choices[0].finish_reason != "steered" and safe_point(result):
            # A steer waits, and no call is owed an answer: the response ends
            # here (cut, or ended before the steer could cut it).
            self.cut = True
            result = steered_result(result)
        return result, early

    async def _read(
        self,
        source: ProviderStream,
        groups: tuple[anyio.abc.TaskGroup | None, anyio.abc.TaskGroup | None],
        early: dict[str, ToolResult],
        attempt: int,
    ) -> tuple[ToolwireError | None, ToolwireError | None]:
        """Send the request and decode its stream: why the stream failed, and
        why the request did (each ``None`` when it did not).

        Once the body is being read, a broken stream is a failed turn, which
        may be sent again; errors before (connect, an HTTP status after the
        transport's retries) end the run."""
        # Events go on when someone reads them or calls may start early.
        listening = self.run.emit_many is not None or groups != (None, None)
        # Told once per request, of a stream the provider keeps (none else).
        streaming = self.run.observe.model_streaming if source.resumable else ()
        try:
            async with contextlib.aclosing(source.reads()) as reads:
                async for events in reads:
                    if listening:
                        self._hand_on(events, groups, early)
                    if (
                        self.run.inbox
                        and not self._sends_steers()
                        and safe_point(source.decoder.result())
                    ):
                        break  # cut for the steer: the stream is closed here
                    if streaming and (response_id := source.resumable_id) is not None:
                        # Once per request: where a resumed run finds it again.
                        for told in streaming:
                            await told(self.run.run_id, self.run.turn, attempt, response_id)
                        streaming = ()
        except (ReadError, TransportTimeout) as exc:
            if not source.reading:
                return None, exc
            if self.run.emit is not None:
                self.run.emit(StreamFailed(error=exc))
            return exc, None
        except ToolwireError as exc:
            return None, exc
        return source.decoder.error, None

    @contextlib.asynccontextmanager
    async def _steering(self) -> AsyncIterator[None]:
        """While a response streams on a socket that steers, each steer is
        sent as it is given (not at the stream's next event: a model that
        thinks in silence is steered too)."""
        socket, inbox = self.socket, self.run.inbox
        senders = inbox.senders
        if socket is None or senders is None or not socket.steering:
            yield
            return
        sending: tuple[anyio.CancelScope, anyio.Event] | None = None

        def send() -> None:  # the sender starts with the response's first steer
            nonlocal sending
            if sending is None:
                sending = anyio.CancelScope(), anyio.Event()
                senders.start_soon(self._send_steers, socket, *sending)

        if inbox:
            send()  # given before the response began
        inbox.on_put = send
        try:
            yield
        finally:
            inbox.on_put = None
            if sending is not None:
                scope, finished = sending
                scope.cancel()
                # A steer being written is recorded in :attr:`sent` before the
                # response's fates are read (its write is bounded).
                await finished.wait()

    def _sends_steers(self) -> bool:
        """Whether steers are sent on the run's socket (none is cut for)."""
        socket = self.socket
        return socket is not None and socket.steering

    async def _send_steers(
        self, socket: SocketTransport, scope: anyio.CancelScope, finished: anyio.Event
    ) -> None:
        try:
            with scope:  # cancelled when the response's stream ends
                while socket.steering:
                    await self.run.inbox.arrival()
                    if not await self._steer_socket():
                        await anyio.sleep(_STEER_POLL)  # not yet streaming: soon again
        finally:
            finished.set()

    async def _steer_socket(self) -> bool:
        """Send the waiting steers on the run's socket, when the response
        streams on one that can be steered; ``False`` when they still wait."""
        socket = self.socket
        if socket is None or not socket.steerable:
            return False
        steers = self.run.inbox.take()
        number = await socket.steer([s.text for s in steers])
        if number is None:
            self.run.inbox.waiting[:0] = steers
            return False
        self.sent[number] = steers
        return True

    def _settle_sent(self) -> bool:
        """What became of the steers sent: those the provider's successor
        carries are :attr:`committed`; the others wait in the inbox again,
        first (the provider holds the pending ones: the socket leaves them
        out of the request that answers the calls). Whether any was committed."""
        socket, sent = self.socket, self.sent
        fates = socket.steer_fates() if socket is not None else {}
        self.sent = {}
        committed: list[Steer] = []
        back: list[Steer] = []
        for number in sorted(sent):
            (committed if fates.get(number) == "committed" else back).extend(sent[number])
        self.run.inbox.waiting[:0] = back
        self.committed = tuple(committed)
        return bool(committed)

    def _hand_on(
        self,
        events: list[Event],
        groups: tuple[anyio.abc.TaskGroup | None, anyio.abc.TaskGroup | None],
        early: dict[str, ToolResult],
    ) -> None:
        """Hand a read's events on (as one batch); start the calls they make
        ready (eager tools, asynchronous calls: ``groups``). A stream that
        failed ends with its :class:`StreamFailed`: no call is ready after it."""
        if self.run.emit_many is not None:
            self.run.emit_many(events)
        if self.output_stream is not None and self.run.emit is not None:
            for delta in self.output_stream.deltas(events):
                self.run.emit(delta)
        if groups != (None, None):
            self.run.early.hand_on(events, *groups, early)


class _TurnBroke(Exception):
    """Internal: a turn's stream failed after bytes were read."""

    def __init__(self, error: ToolwireError) -> None:
        super().__init__(error.message)
        self.error = error
